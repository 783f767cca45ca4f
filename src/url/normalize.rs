//! URL normalization and the scope filter: which URLs the crawl wants, in one canonical spelling.
//!
//! Every URL (seed, link, redirect target) is parsed with the `url` crate, which already
//! lower-cases scheme and host, drops default ports, resolves dot segments, percent-encodes,
//! and turns an empty path into `/`. On top of that we drop the fragment, a trailing dot in
//! the host and an empty query (`/a?`), decode percent-escapes of unreserved characters
//! (`/%7Ea` is `/~a`, RFC 3986 §6.2.2.2) and upper-case the hex of the others (`%2f` is
//! `%2F`), and drop session IDs ([`SESSION_PARAMS`]), a crawler trap that spells every page
//! anew on every visit. The canonical string is what the checksum is taken of, so two spellings
//! of a page are one URL to the DUE. The filter then decides, with a reason, whether the URL is
//! wanted.

use crate::url::search::{each_byte, find_byte, find_either};
use regex::Regex;
use std::collections::HashSet;
use url::Url;

/// How far from the seeds' hosts the crawl may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// Only the seeds' hosts (host and port).
    Host,
    /// The seeds' registrable domains (example.com covers www.example.com), any port.
    Domain,
    /// Anywhere.
    Any,
}

/// Which page requisites are fetched past the limits of hyperlinks (`--requisites`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Requisites {
    /// One hop past `--max-depth`, on the hosts of the scope.
    Scope,
    /// One hop past `--max-depth`, on any host; their own links are not followed.
    Any,
    /// No further than hyperlinks go.
    Off,
}

/// What a link is to the response it was found in, which says how far past the scope and
/// `--max-depth` it may go (`Filter::requisites`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinkKind {
    /// A hyperlink, a form, a refresh, a redirect, a sitemap's page: within the limits.
    #[default]
    Hyperlink,
    /// What a page needs to render: one hop past `--max-depth`.
    Requisite,
    /// A stylesheet's `@import`s and `url()`s (or the redirect of a URL fetched as a
    /// requisite): requisites of the page that led to it, `STYLESHEET_HOPS` more hops allowed.
    Stylesheet,
}

/// Hops a stylesheet's links may go past the page requisite that led to them: a chain of
/// imports (Sphinx: `default.css`, `classic.css`, `basic.css`) and the fonts and images at its
/// end, bounded so that a stylesheet that makes a new URL of every import ends.
pub const STYLESHEET_HOPS: u32 = 4;

/// Why a URL was not wanted; counted in the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rejection {
    Scheme,
    Scope,
    Depth,
    Pattern,
    TooLong,
    PathTooDeep,
    RepeatedSegment,
}

impl Rejection {
    pub const ALL: [Rejection; 7] = [
        Rejection::Scheme,
        Rejection::Scope,
        Rejection::Depth,
        Rejection::Pattern,
        Rejection::TooLong,
        Rejection::PathTooDeep,
        Rejection::RepeatedSegment,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rejection::Scheme => "scheme",
            Rejection::Scope => "scope",
            Rejection::Depth => "depth",
            Rejection::Pattern => "pattern",
            Rejection::TooLong => "url-too-long",
            Rejection::PathTooDeep => "path-too-deep",
            Rejection::RepeatedSegment => "repeated-segment",
        }
    }
}

/// Puts a parsed URL in canonical form (see the module doc).
pub fn canonicalize(mut url: Url) -> Url {
    url.set_fragment(None);
    if let Some(host) = url.host_str().filter(|h| h.ends_with('.') && h.len() > 1) {
        let trimmed = host.trim_end_matches('.').to_owned();
        if !trimmed.is_empty() {
            let _ = url.set_host(Some(&trimmed));
        }
    }
    if !matches!(url.scheme(), "http" | "https") {
        return url;
    }
    // Fast paths: most URLs have no escape, no `;` parameter and no session-like name, and
    // for them the work below changes nothing (it halved `crawl dedupe`'s URL rate).
    let path_plain = !url.path().contains(['%', ';']);
    let query_plain = url.query().is_none_or(|q| {
        !q.is_empty()
            && !q.contains('%')
            && !contains_ignore_case(q, "sid")
            && !contains_ignore_case(q, "session")
    });
    if path_plain && query_plain {
        return url;
    }
    rewrite_escapes_and_sessions(url)
}

/// The part of `canonicalize` that the fast path skips: escapes, `;` parameters, session IDs,
/// an empty query.
fn rewrite_escapes_and_sessions(mut url: Url) -> Url {
    let path = normalize_escapes(url.path());
    let path = path
        .split('/')
        .map(|segment| {
            let mut parts = segment.split(';');
            let first = parts.next().unwrap_or("");
            parts
                .filter(|param| !is_session_param(param))
                .fold(first.to_owned(), |kept, param| kept + ";" + param)
        })
        .collect::<Vec<_>>()
        .join("/");
    if path != url.path() {
        url.set_path(&path);
    }
    if let Some(query) = url.query() {
        // Escapes first, so that `sid=%41…` is judged as `sid=A…` (a fixed point, says fuzz/).
        let kept: Vec<String> = query
            .split('&')
            .map(normalize_escapes)
            .filter(|param| !is_session_param(param))
            .collect();
        let kept = kept.join("&");
        if kept != query {
            url.set_query(Some(&kept).filter(|q| !q.is_empty()).map(|q| q.as_str()));
        }
    }
    if url.query() == Some("") {
        url.set_query(None);
    }
    url
}

/// A URL found in a page or a header, resolved against its base: parsed, or — for the plain
/// shapes most links have — its text, already canonical, built without a parse ([`join_into`]).
/// Either way its text is what `Url::join` gives, less the fragment: the canonical form has
/// none, so no consumer keeps it, and a link's fragment (`#section`, two in five links of a
/// documentation tree) then costs no parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    Parsed(Url),
    /// Text that `canonicalize` would leave unchanged (`is_canonical`).
    Canonical(String),
}

impl Found {
    /// The URL's text, as `Url::join` serializes it, without a fragment.
    pub fn as_str(&self) -> &str {
        match self {
            Found::Parsed(url) => url.as_str(),
            Found::Canonical(text) => text,
        }
    }

    /// The URL's scheme.
    pub fn scheme(&self) -> &str {
        match self {
            Found::Parsed(url) => url.scheme(),
            Found::Canonical(text) => &text[..text.find(':').unwrap_or(0)],
        }
    }

    /// The canonical text of the URL if `filter` wants it at `depth`.
    pub fn accept(self, filter: &Filter, depth: u32) -> Result<String, Rejection> {
        self.accept_as(filter, depth, LinkKind::Hyperlink)
    }

    /// `accept`, for a link of `kind`.
    pub fn accept_as(
        self,
        filter: &Filter,
        depth: u32,
        kind: LinkKind,
    ) -> Result<String, Rejection> {
        match self {
            Found::Parsed(url) => {
                let url = canonicalize(url);
                filter.check_as(&url, depth, kind)?;
                Ok(url.into())
            }
            Found::Canonical(text) => {
                filter.check_canonical_as(&text, depth, kind)?;
                Ok(text)
            }
        }
    }
}

impl From<Found> for String {
    fn from(found: Found) -> String {
        match found {
            Found::Parsed(url) => url.into(),
            Found::Canonical(text) => text,
        }
    }
}

/// The base links are joined to ([`join_into`]): its URL, and whether its origin and path are
/// canonical text, checked once a page instead of once a link.
pub struct Base {
    url: Url,
    /// `is_canonical(origin + path)`: then every directory of the path is canonical too, and
    /// the fast join checks only a link's own bytes (`is_canonical_path`).
    canonical_path: bool,
    /// `is_canonical(origin + path + query)`: a bare `#fragment` link, which is the base
    /// itself (a third of a documentation page's links), is then its text as it is.
    canonical_query: bool,
    /// Where each `/` of the path is, as an offset in the path (the first is 0 for a path
    /// that starts with one): a relative link's directory, and each `../` step up from it,
    /// without a search per link.
    slashes: Vec<usize>,
}

impl Base {
    pub fn new(url: Url) -> Base {
        let canonical_path = is_canonical(&url[..url::Position::AfterPath]);
        let canonical_query = is_canonical(&url[..url::Position::AfterQuery]);
        let slashes = url
            .path()
            .bytes()
            .enumerate()
            .filter_map(|(i, b)| (b == b'/').then_some(i))
            .collect();
        Base {
            url,
            canonical_path,
            canonical_query,
            slashes,
        }
    }
}

/// `base.join(value)` less its fragment, without the parse for the plain shapes most links
/// have: an absolute `http(s)://` URL, an absolute path, a relative path (after leading `./`
/// and `../` segments), a query or a bare fragment, whose
/// result `is_canonical` says is canonical. The text is then the base's origin, directory or
/// path followed by `value`, which the URL parser would leave as it is (only `pchar`s, no dot
/// segment, no tab or newline: `is_canonical` scans for that). Anything else is parsed.
/// Differential tests hold this to `canonicalize(base.join(value))` byte for byte.
///
/// The canonical text is appended to `text`, and `None` returned; else `text` is left as it
/// was and the parsed URL returned. The link extractor joins every link onto the end of its
/// page's text and keeps it there only at its first occurrence (`extract::PageLinks`).
pub fn join_into(
    base: &Base,
    value: &str,
    text: &mut String,
) -> Result<Option<Url>, url::ParseError> {
    if join_plain(base, value, text) {
        return Ok(None);
    }
    base.url.join(value).map(|mut url| {
        url.set_fragment(None);
        Some(url)
    })
}

/// Appends the text of `base.join(value)` to `text` when it is one of `join_into`'s plain
/// shapes and canonical; false, with `text` left as it was, otherwise.
fn join_plain(base: &Base, mut value: &str, text: &mut String) -> bool {
    let (canonical_path, canonical_query) = (base.canonical_path, base.canonical_query);
    let slashes = &base.slashes;
    let base = &base.url;
    if !matches!(base.scheme(), "http" | "https") {
        return false;
    }
    // The fragment goes (everything after the first `#`; a tab or newline before it, which
    // the parser would remove, makes `is_canonical` refuse the text). A bare `#section` is
    // the base itself, less its own fragment.
    // Byte searches (`url::search`): `str::find` with a `char` or a set of them costs more per
    // link than the rest of the join.
    if let Some(hash) = find_byte(b'#', value.as_bytes()) {
        value = &value[..hash];
        if value.is_empty() {
            if canonical_query {
                text.push_str(&base[..url::Position::AfterQuery]);
            }
            return canonical_query;
        }
    }
    if value.starts_with("http://") || value.starts_with("https://") {
        let canonical = is_canonical(value);
        if canonical {
            text.push_str(value);
        }
        return canonical;
    }
    let bytes = value.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    // The text's beginning taken from the base, and whether the whole is canonical: with a
    // canonical base path, what `value` adds decides (`is_canonical_path`).
    let (prefix, canonical) = match first {
        // `//host` takes the base's scheme only (`/\`, the same for http(s), has a byte
        // `is_canonical` rejects).
        b'/' if bytes.get(1) == Some(&b'/') => return false,
        b'/' => (
            &base[..url::Position::BeforePath],
            canonical_path.then(|| is_canonical_path(bytes, 1)),
        ),
        b'?' => (&base[..url::Position::AfterPath], None),
        _ => {
            // A scheme ends at a `:` before any `/` or `?`: such a value is absolute.
            let end = find_either(b'/', b'?', value.as_bytes()).unwrap_or(value.len());
            if find_byte(b':', &value.as_bytes()[..end]).is_some() {
                return false;
            }
            // Leading `./` and `../` segments (documentation trees link `../../std/`)
            // step within the base's directory, never above its root, as the parser
            // would; a dot segment anywhere else is left to the parser (`is_canonical`
            // refuses it).
            let mut up = 0;
            loop {
                if let Some(rest) = value.strip_prefix("../") {
                    up += 1;
                    value = rest;
                } else if let Some(rest) = value.strip_prefix("./") {
                    value = rest;
                } else {
                    break;
                }
            }
            if value.starts_with('/') {
                return false;
            }
            let path_start = base[..url::Position::BeforePath].len();
            // The directory ends after the path's last `/`; each `../` ends it after the one
            // before, and the root's `/` is as far up as it goes.
            let Some(last) = slashes.len().checked_sub(1) else {
                return false;
            };
            let directory = slashes[last.saturating_sub(up)] + 1;
            (
                &base.as_str()[..path_start + directory],
                canonical_path.then(|| is_canonical_path(value.as_bytes(), 0)),
            )
        }
    };
    if canonical == Some(false) {
        return false;
    }
    let start = text.len();
    text.push_str(prefix);
    text.push_str(value);
    if canonical.is_none() && !is_canonical(&text[start..]) {
        text.truncate(start);
        return false;
    }
    true
}

/// Whether `text` is certainly already in the canonical form `canonicalize(Url::parse(text))`
/// would give, decided by a scan of the text without parsing it (about a tenth of the cost).
///
/// Conservative: true only for the plain shape most URLs have, `http[s]://host[:port]/path[?query]`
/// with a lower-case ASCII host of letters, digits, `-` and inner dots whose last label starts
/// with a letter (not IDNA: no `xn--` label) or a dotted-decimal IPv4 address as the url crate
/// writes it, a port only if it is not the default,
/// a path of RFC 3986 `pchar`s without dot segments, a non-empty query without `'`, escapes
/// only as `canonicalize` keeps them (upper-case hex of a byte other than an unreserved
/// character), no fragment and no session-ID parameter. Everything else, canonical or not, is
/// false, and the caller parses.
pub fn is_canonical(text: &str) -> bool {
    is_canonical_bytes(text.as_bytes())
}

/// [`is_canonical`] on bytes (false for anything not ASCII).
pub fn is_canonical_bytes(text: &[u8]) -> bool {
    let (rest, default_port) = if let Some(rest) = text.strip_prefix(b"http://") {
        (rest, &b"80"[..])
    } else if let Some(rest) = text.strip_prefix(b"https://") {
        (rest, &b"443"[..])
    } else {
        return false;
    };
    // Host: labels of [a-z0-9-], no empty label, the last one starting with a letter.
    let host_end = rest
        .iter()
        .position(|&b| !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.'))
        .unwrap_or(rest.len());
    let host = &rest[..host_end];
    let labels_ok = host
        .split(|&b| b == b'.')
        .all(|label| !label.is_empty() && !label.starts_with(b"xn--"));
    let last_label = host.rsplit(|&b| b == b'.').next().unwrap_or(b"");
    let ipv4 = || {
        host.split(|&b| b == b'.').count() == 4
            && host.split(|&b| b == b'.').all(|label| {
                label.iter().all(u8::is_ascii_digit)
                    && label.len() <= 3
                    && (label == b"0" || label[0] != b'0')
                    && std::str::from_utf8(label)
                        .ok()
                        .and_then(|l| l.parse::<u32>().ok())
                        .is_some_and(|v| v <= 255)
            })
    };
    if !labels_ok || !(last_label.first().is_some_and(u8::is_ascii_lowercase) || ipv4()) {
        return false;
    }
    let mut rest = &rest[host_end..];
    if let Some(after) = rest.strip_prefix(b":") {
        let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
        let port = &after[..digits];
        let value = std::str::from_utf8(port)
            .ok()
            .and_then(|p| p.parse::<u32>().ok());
        if !(1..=5).contains(&digits)
            || port[0] == b'0'
            || port == default_port
            || value.is_none_or(|v| v > 65535)
        {
            return false;
        }
        rest = &after[digits..];
    }
    // Path: starts with `/`, RFC 3986 pchars and `/`, no `.` or `..` segment, kept escapes
    // only, no session-ID `;` parameter. Then an optional query: non-empty, pchars, `/` and `?`
    // but not `'` (the url crate escapes it), kept escapes only, no session-ID parameter. One
    // pass over the bytes; the rare `;` and `s` send the part to a second look.
    rest.first() == Some(&b'/') && is_canonical_path(rest, 1)
}

/// `is_canonical`'s check of what follows the authority: `rest[from..]`, where a path segment
/// starts (`rest` is a path and an optional query). A canonical directory followed by a link
/// that passes with `from == 0` is canonical as a whole: each check is local to a segment, an
/// escape or the query, so the fast join scans only the link's own bytes.
fn is_canonical_path(rest: &[u8], from: usize) -> bool {
    let mut in_query = false;
    let mut segment_start = from;
    let mut semicolon = false;
    let mut query_start = rest.len();
    let mut i = from;
    loop {
        // Most bytes are plain: a loop of their own, without the `match`'s jump, eight at a
        // time without a branch each while it can.
        while let Some(chunk) = rest.get(i..i + 8)
            && chunk
                .iter()
                .fold(true, |all, &b| all & (SCAN_CLASS[b as usize] == PLAIN))
        {
            i += 8;
        }
        while rest
            .get(i)
            .is_some_and(|&b| SCAN_CLASS[b as usize] == PLAIN)
        {
            i += 1;
        }
        let Some(&b) = rest.get(i) else {
            break;
        };
        match SCAN_CLASS[b as usize] {
            SLASH if !in_query => {
                if is_dot_segment(&rest[segment_start..i]) {
                    return false;
                }
                segment_start = i + 1;
            }
            SLASH => {}
            PERCENT => {
                if !is_kept_escape(rest.get(i + 1..i + 3)) {
                    return false;
                }
                i += 2;
            }
            SEMICOLON => semicolon |= !in_query,
            QUESTION if !in_query => {
                if is_dot_segment(&rest[segment_start..i]) {
                    return false;
                }
                in_query = true;
                query_start = i + 1;
            }
            QUESTION => {}
            QUOTE if !in_query => {}
            _ => return false,
        }
        i += 1;
    }
    if !in_query && is_dot_segment(&rest[segment_start..]) {
        return false;
    }
    let path = if in_query {
        &rest[..query_start - 1]
    } else {
        rest
    };
    if semicolon
        && path
            .split(|&b| b == b'/')
            .any(|segment| segment.split(|&b| b == b';').skip(1).any(is_session_bytes))
    {
        return false;
    }
    if !in_query {
        return true;
    }
    let query = &rest[query_start..];
    let session_id =
        || mentions_session(query) && query.split(|&b| b == b'&').any(is_session_bytes);
    !query.is_empty() && !session_id()
}

/// Byte classes of [`is_canonical`]'s scan: `PLAIN` bytes (RFC 3986 unreserved and
/// sub-delims but `'` and `;`, `:` and `@`) never change anything; 0 is a byte it gives up on.
const PLAIN: u8 = 1;
const SLASH: u8 = 2;
const PERCENT: u8 = 3;
const SEMICOLON: u8 = 4;
const QUESTION: u8 = 5;
const QUOTE: u8 = 6;
const SCAN_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        table[b] = if c.is_ascii_alphanumeric() {
            PLAIN
        } else {
            match c {
                b'-' | b'.' | b'_' | b'~' | b'!' | b'$' | b'&' | b'(' | b')' | b'*' | b'+'
                | b',' | b'=' | b':' | b'@' => PLAIN,
                b'/' => SLASH,
                b'%' => PERCENT,
                b';' => SEMICOLON,
                b'?' => QUESTION,
                b'\'' => QUOTE,
                _ => 0,
            }
        };
        b += 1;
    }
    table
};

/// Whether a path segment is `.` or `..`, which the url crate resolves away.
fn is_dot_segment(segment: &[u8]) -> bool {
    segment == b"." || segment == b".."
}

/// Whether the two bytes after a `%` make an escape that `normalize_escapes` keeps unchanged:
/// upper-case hex of a byte that is not an unreserved character.
fn is_kept_escape(hex: Option<&[u8]>) -> bool {
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    };
    let Some(&[high, low]) = hex else {
        return false;
    };
    match (digit(high), digit(low)) {
        (Some(h), Some(l)) => {
            let value = h << 4 | l;
            !(value.is_ascii_alphanumeric() || b"-._~".contains(&value))
        }
        _ => false,
    }
}

/// Whether `text` contains `sid` or `session`, ignoring ASCII case: one search for their `s`
/// (a long query, such as a playground link's code, costs a look at each `s`, not a
/// comparison at every byte).
fn mentions_session(text: &[u8]) -> bool {
    let mut at = 0;
    while let Some(i) = find_either(b's', b'S', &text[at..]) {
        at += i + 1;
        let follows = |word: &[u8]| {
            (text.get(at..at + word.len())).is_some_and(|w| w.eq_ignore_ascii_case(word))
        };
        if follows(b"id") || follows(b"ession") {
            return true;
        }
    }
    false
}

/// [`is_session_param`] on ASCII bytes (non-ASCII bytes never reach it).
fn is_session_bytes(param: &[u8]) -> bool {
    std::str::from_utf8(param).is_ok_and(is_session_param)
}

/// Whether `text` contains `needle` (lower-case ASCII), ignoring ASCII case.
fn contains_ignore_case(text: &str, needle: &str) -> bool {
    text.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Query or path parameters that carry a session ID, compared case-insensitively; any name
/// starting with `aspsessionid` counts too. `sid` counts only with a value of 16 or more
/// letters and digits, since short `sid`s are often content IDs.
pub const SESSION_PARAMS: [&str; 5] = ["jsessionid", "phpsessid", "sessionid", "session_id", "sid"];

/// Whether `param` (`name=value`) is a session ID (see [`SESSION_PARAMS`]).
fn is_session_param(param: &str) -> bool {
    let Some((name, value)) = param.split_once('=') else {
        return false;
    };
    let name = name.to_ascii_lowercase();
    if name == "sid" {
        return value.len() >= 16 && value.bytes().all(|b| b.is_ascii_alphanumeric());
    }
    name.starts_with("aspsessionid") || SESSION_PARAMS.contains(&name.as_str())
}

/// Decodes `%XX` escapes of unreserved characters (letters, digits, `-._~`) and upper-cases
/// the hex digits of the other escapes; anything else is kept as is.
fn normalize_escapes(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
        match (bytes[i], hex) {
            (b'%', Some(h)) => {
                let value = u8::from_str_radix(std::str::from_utf8(h).unwrap_or("0"), 16);
                match value {
                    Ok(v)
                        if (v.is_ascii_alphanumeric() || b"-._~".contains(&v))
                            && !(v.is_ascii_hexdigit() && ends_in_partial_escape(&out)) =>
                    {
                        out.push(v as char)
                    }
                    _ => {
                        out.push('%');
                        out.push_str(&std::str::from_utf8(h).unwrap_or("").to_ascii_uppercase());
                    }
                }
                i += 3;
            }
            _ => {
                let len = utf8_len(bytes[i]);
                out.push_str(text.get(i..i + len).unwrap_or(""));
                i += len;
            }
        }
    }
    out
}

/// Whether `out` ends in `%` or `%` and one hex digit: a decoded hex digit appended there
/// would make a new escape, and the result would change again on the next pass (`%a%41`).
fn ends_in_partial_escape(out: &str) -> bool {
    let b = out.as_bytes();
    b.ends_with(b"%")
        || (b.len() >= 2 && b[b.len() - 2] == b'%' && b[b.len() - 1].is_ascii_hexdigit())
}

/// Length of the UTF-8 sequence a lead byte starts (1 for ASCII and stray bytes).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// The politeness unit: host and port ("127.0.0.1:8080"; distinct ports are distinct hosts).
pub fn host_key(url: &Url) -> String {
    match (url.host_str(), url.port_or_known_default()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        _ => String::new(),
    }
}

/// `scheme://host[:port]` and `host:port` of a canonical http(s) URL, read off the text
/// (the frontier's URLs are canonical, so no parse is needed on this per-URL path).
pub fn origin_and_key(url: &str) -> Option<(&str, String)> {
    let (origin, authority, default_port) = origin_parts(url)?;
    let mut key = String::with_capacity(authority.len() + 4);
    push_host_key(authority, default_port, &mut key);
    Some((origin, key))
}

/// `origin_and_key`'s key lent to `f` from a buffer of this thread's instead of a new String:
/// for the per-link callers that only look it up (the scope filter, the shard owner).
pub fn with_host_key<T>(url: &str, f: impl FnOnce(&str) -> T) -> Option<T> {
    let (_, authority, default_port) = origin_parts(url)?;
    Some(with_key_of(authority, default_port, f))
}

/// The `host:port` key of `authority` lent to `f` from this thread's buffer.
fn with_key_of<T>(authority: &str, default_port: &str, f: impl FnOnce(&str) -> T) -> T {
    thread_local! {
        static KEY: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    KEY.with_borrow_mut(|key| {
        key.clear();
        push_host_key(authority, default_port, key);
        f(key)
    })
}

/// The origin, the authority and the scheme's default port of a canonical http(s) URL's text.
fn origin_parts(url: &str) -> Option<(&str, &str, &'static str)> {
    // Prefixes, not a search for "://" (this runs for every link and every URL taken).
    let (rest, default_port) = if let Some(rest) = url.strip_prefix("http://") {
        (rest, "80")
    } else {
        (url.strip_prefix("https://")?, "443")
    };
    let end = rest
        .bytes()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    Some((
        &url[..url.len() - rest.len() + end],
        authority,
        default_port,
    ))
}

/// `authority` as a `host:port` key: the scheme's default port added when it names none.
fn push_host_key(authority: &str, default_port: &str, key: &mut String) {
    key.push_str(authority);
    if !has_port(authority) {
        key.push(':');
        key.push_str(default_port);
    }
}

/// Whether an authority names its port (a `:` after any IPv6 literal's `]`).
fn has_port(authority: &str) -> bool {
    authority
        .rfind(':')
        .is_some_and(|i| !authority[i..].contains(']'))
}

/// Whether `key` is the key `push_host_key` makes of `authority`, without making it.
fn is_host_key_of(key: &str, authority: &str, default_port: &str) -> bool {
    match key.strip_prefix(authority) {
        Some("") => has_port(authority),
        Some(rest) => rest.strip_prefix(':') == Some(default_port) && !has_port(authority),
        None => false,
    }
}

/// Link hops from a seed followed when `--max-depth` is not given. Deep enough for real sites
/// (Heritrix's default is 20 hops), and it ends the traps that make a new URL of every link,
/// such as a calendar whose every month links to the next: they cost at most this many pages
/// per direction.
pub const DEFAULT_MAX_DEPTH: u32 = 100;

/// Seed hosts `Filter::check_canonical` compares one by one rather than through the hash set.
const FEW_HOSTS: usize = 4;

/// The rules that decide which canonical URLs the crawl wants.
pub struct Filter {
    /// Which hosts are in scope: the seeds' hosts, their domains, or any.
    pub scope: Scope,
    /// Host keys (Scope::Host) or registrable domains (Scope::Domain) of the seeds.
    allowed: HashSet<String>,
    /// Link hops from a seed beyond which URLs are dropped (`--max-depth`).
    pub max_depth: Option<u32>,
    /// How far past the scope and `max_depth` page requisites go (`--requisites`).
    pub requisites: Requisites,
    /// When not empty, a URL must match one of these (`--include`).
    pub include: Vec<Regex>,
    /// A URL matching one of these is dropped (`--exclude`).
    pub exclude: Vec<Regex>,
    /// Longer URLs are dropped (a trap guard).
    pub max_url_len: usize,
    /// URLs with more path segments are dropped (a trap guard).
    pub max_path_segments: usize,
    /// URLs repeating one path segment more often are dropped (the `a/b/a/b` trap guard).
    pub max_segment_repeats: usize,
}

impl Filter {
    /// A filter of `scope` around `seeds`, with the default trap guards and no depth limit.
    pub fn new(scope: Scope, seeds: &[Url]) -> Filter {
        let allowed = seeds
            .iter()
            .map(|url| match scope {
                Scope::Domain => registrable_domain(url),
                _ => host_key(url),
            })
            .collect();
        Filter {
            scope,
            allowed,
            max_depth: None,
            requisites: Requisites::Scope,
            include: Vec::new(),
            exclude: Vec::new(),
            max_url_len: 2048,
            max_path_segments: 32,
            max_segment_repeats: 3,
        }
    }

    /// Checks a canonical URL found at `depth`. Seeds pass through the same rules, except scope
    /// (they define it).
    pub fn check(&self, url: &Url, depth: u32) -> Result<(), Rejection> {
        self.check_as(url, depth, LinkKind::Hyperlink)
    }

    /// `check` for a link of `kind`: a requisite may go past `max_depth`, and with
    /// `Requisites::Any` outside the scope.
    pub fn check_as(&self, url: &Url, depth: u32, kind: LinkKind) -> Result<(), Rejection> {
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(Rejection::Scheme);
        }
        if !self.anywhere(kind) && !self.in_scope(url) {
            return Err(Rejection::Scope);
        }
        self.check_rules(
            url.as_str(),
            self.path_of(url),
            depth,
            self.past_depth(kind),
        )
    }

    /// Whether `url` (http(s), with a host) is on a host of the scope.
    pub fn in_scope(&self, url: &Url) -> bool {
        match self.scope {
            Scope::Any => true,
            Scope::Host => self.allowed.contains(&host_key(url)),
            Scope::Domain => self.allowed.contains(&registrable_domain(url)),
        }
    }

    /// Whether `url`, found at `depth`, can only have been wanted as a page requisite (past
    /// `max_depth`, or outside the scope): its links are not followed, except a stylesheet's.
    pub fn fetched_as_requisite(&self, url: &Url, depth: u32) -> bool {
        self.requisites != Requisites::Off
            && (self.max_depth.is_some_and(|max| depth > max)
                || self.requisites == Requisites::Any && !self.in_scope(url))
    }

    /// Links of `kind` are wanted on any host (`--requisites any`).
    fn anywhere(&self, kind: LinkKind) -> bool {
        self.requisites == Requisites::Any && kind != LinkKind::Hyperlink
    }

    /// The hops past `max_depth` links of `kind` may go.
    fn past_depth(&self, kind: LinkKind) -> u32 {
        match (self.requisites, kind) {
            (Requisites::Off, _) | (_, LinkKind::Hyperlink) => 0,
            (_, LinkKind::Requisite) => 1,
            (_, LinkKind::Stylesheet) => 1 + STYLESHEET_HOPS,
        }
    }

    /// `check` for the text of a URL that `is_canonical` accepted (http(s), a host of
    /// `[a-z0-9.-]` or IPv4, no user info), read off the text without a parse.
    pub fn check_canonical(&self, text: &str, depth: u32) -> Result<(), Rejection> {
        self.check_canonical_as(text, depth, LinkKind::Hyperlink)
    }

    /// `check_canonical` for a link of `kind` (`check_as`).
    pub fn check_canonical_as(
        &self,
        text: &str,
        depth: u32,
        kind: LinkKind,
    ) -> Result<(), Rejection> {
        let (origin, authority, default_port) = origin_parts(text).ok_or(Rejection::Scheme)?;
        let in_scope = self.authority_in_scope(authority, default_port);
        self.check_past_origin(text, origin.len(), in_scope, depth, kind)
    }

    /// Whether a canonical URL's authority (`origin_parts`) is on a host of the scope.
    fn authority_in_scope(&self, authority: &str, default_port: &str) -> bool {
        match self.scope {
            Scope::Any => true,
            // A few seed hosts (the usual case) are compared with the link's authority as
            // they are: no key built, no hash per link.
            Scope::Host if self.allowed.len() <= FEW_HOSTS => self
                .allowed
                .iter()
                .any(|key| is_host_key_of(key, authority, default_port)),
            Scope::Host => with_key_of(authority, default_port, |key| self.allowed.contains(key)),
            Scope::Domain => {
                let host = &authority[..authority.find(':').unwrap_or(authority.len())];
                // `is_canonical`'s hosts: a name whose last label starts with a letter, or IPv4.
                let ipv4 = host
                    .rsplit('.')
                    .next()
                    .is_some_and(|l| l.starts_with(|c: char| c.is_ascii_digit()));
                let domain = match ipv4 {
                    true => host,
                    false => psl::domain_str(host).unwrap_or(host),
                };
                self.allowed.contains(domain)
            }
        }
    }

    /// `check_canonical_as` once the scope of `text`'s origin (its first `origin_len` bytes)
    /// is known.
    fn check_past_origin(
        &self,
        text: &str,
        origin_len: usize,
        in_scope: bool,
        depth: u32,
        kind: LinkKind,
    ) -> Result<(), Rejection> {
        if !in_scope && !self.anywhere(kind) {
            return Err(Rejection::Scope);
        }
        let rest = &text[origin_len..];
        let path = &rest[..memchr::memchr(b'?', rest.as_bytes()).unwrap_or(rest.len())];
        self.check_rules(text, Some(path), depth, self.past_depth(kind))
    }

    /// The rules that apply to seeds too: depth, patterns and trap guards.
    pub fn check_url_rules(&self, url: &Url, depth: u32) -> Result<(), Rejection> {
        self.check_rules(url.as_str(), self.path_of(url), depth, 0)
    }

    fn path_of<'u>(&self, url: &'u Url) -> Option<&'u str> {
        (!url.cannot_be_a_base()).then(|| url.path())
    }

    /// `check_url_rules` over a URL's text and its path (`None` for a URL without one), for a
    /// link allowed `past_depth` hops past `max_depth`.
    fn check_rules(
        &self,
        text: &str,
        path: Option<&str>,
        depth: u32,
        past_depth: u32,
    ) -> Result<(), Rejection> {
        if (self.max_depth).is_some_and(|max| depth > max.saturating_add(past_depth)) {
            return Err(Rejection::Depth);
        }
        if text.len() > self.max_url_len {
            return Err(Rejection::TooLong);
        }
        // What `Url::path_segments` gives, empty ones left out: the path after its leading
        // `/`, split at `/`. Counted with their lengths in one pass, eight bytes at a time
        // (`segment_lengths`): a segment can repeat too often only if its length does, and
        // only then are the segments compared.
        let path = path.unwrap_or("").as_bytes();
        let segments = || {
            let p = path.strip_prefix(b"/").unwrap_or(path);
            p.split(|&b| b == b'/').filter(|s| !s.is_empty())
        };
        let (mut count, mut by_length, mut crowded) = (0, [0u32; 64], false);
        segment_lengths(path, |length| {
            count += 1;
            let same_length = &mut by_length[length.min(63)];
            *same_length = same_length.saturating_add(1);
            crowded |= *same_length as usize > self.max_segment_repeats;
        });
        if count > self.max_path_segments {
            return Err(Rejection::PathTooDeep);
        }
        if crowded && has_repeated_segment(segments(), count, self.max_segment_repeats) {
            return Err(Rejection::RepeatedSegment);
        }
        if !self.include.is_empty() && !self.include.iter().any(|r| r.is_match(text)) {
            return Err(Rejection::Pattern);
        }
        if self.exclude.iter().any(|r| r.is_match(text)) {
            return Err(Rejection::Pattern);
        }
        Ok(())
    }
}

/// `Filter::check_canonical_as` for the links of one page, one after another: most of them
/// share an origin (the page's), so the scope answer of the last origin read is kept, and a
/// link that starts with that origin (followed by its path, query or end) gets it without
/// its authority being read again.
pub struct LinkFilter<'f, 't> {
    filter: &'f Filter,
    /// The origin (`origin_parts`) of the last link read, and whether it is in the scope.
    last: Option<(&'t str, bool)>,
}

impl<'f, 't> LinkFilter<'f, 't> {
    pub fn new(filter: &'f Filter) -> LinkFilter<'f, 't> {
        LinkFilter { filter, last: None }
    }

    /// The filter it reads.
    pub fn filter(&self) -> &'f Filter {
        self.filter
    }

    /// `Filter::check_canonical_as`: the same answer.
    pub fn check_canonical_as(
        &mut self,
        text: &'t str,
        depth: u32,
        kind: LinkKind,
    ) -> Result<(), Rejection> {
        let (origin_len, in_scope) = match self.last {
            Some((origin, in_scope)) if has_origin(text, origin) => (origin.len(), in_scope),
            _ => {
                let (origin, authority, port) = origin_parts(text).ok_or(Rejection::Scheme)?;
                let in_scope = self.filter.authority_in_scope(authority, port);
                self.last = Some((origin, in_scope));
                (origin.len(), in_scope)
            }
        };
        (self.filter).check_past_origin(text, origin_len, in_scope, depth, kind)
    }
}

/// Whether `origin_parts(text)` would give `origin` (itself one it gave): `text` starts with
/// it, and its authority ends there.
fn has_origin(text: &str, origin: &str) -> bool {
    text.starts_with(origin)
        && (text.as_bytes().get(origin.len())).is_none_or(|b| matches!(b, b'/' | b'?' | b'#'))
}

/// Calls `each` with the length of every non-empty `/`-separated segment of `path`, in order
/// (the slashes found by `search::each_byte`: this runs for most links).
fn segment_lengths(path: &[u8], mut each: impl FnMut(usize)) {
    let mut start = 0;
    let mut slash_at = |at: usize| {
        if at > start {
            each(at - start);
        }
        start = at + 1;
    };
    each_byte(b'/', path, &mut slash_at);
    slash_at(path.len());
}

/// True when some path segment occurs more than `max` times (`/a/b/a/b/a/b/a/b`): the shape of
/// relative-link traps. The `count` segments are sorted on the stack when they fit (the
/// default `max_path_segments` does): this runs for most links, and allocates nothing then.
fn has_repeated_segment<'a>(
    segments: impl Iterator<Item = &'a [u8]>,
    count: usize,
    max: usize,
) -> bool {
    const ON_STACK: usize = 32;
    if count <= max {
        return false;
    }
    let mut on_stack: [&[u8]; ON_STACK] = [&[]; ON_STACK];
    let mut on_heap = Vec::new();
    let sorted: &mut [&[u8]] = if count <= ON_STACK {
        let mut n = 0;
        for (slot, segment) in on_stack.iter_mut().zip(segments) {
            *slot = segment;
            n += 1;
        }
        &mut on_stack[..n]
    } else {
        on_heap.extend(segments);
        &mut on_heap
    };
    sorted.sort_unstable();
    sorted.chunk_by(|a, b| a == b).any(|run| run.len() > max)
}

fn registrable_domain(url: &Url) -> String {
    match url.host() {
        Some(url::Host::Domain(host)) => psl::domain_str(host)
            .map(str::to_owned)
            .unwrap_or_else(|| host.to_owned()),
        Some(host) => host.to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `join_into` against a base given as a URL (its canonical path checked at each call),
    /// onto a buffer that already holds an earlier link, which it must leave as it was.
    fn join_url(base: &Url, value: &str) -> Result<Found, url::ParseError> {
        const EARLIER: &str = "left from an earlier link";
        let mut text = String::from(EARLIER);
        let joined = join_into(&Base::new(base.clone()), value, &mut text);
        let (earlier, appended) = text.split_at(EARLIER.len());
        assert_eq!(earlier, EARLIER, "{value:?} against {base}");
        if let Ok(None) = joined {
            return Ok(Found::Canonical(appended.to_owned()));
        }
        assert_eq!(
            appended, "",
            "{value:?} against {base}: not joined as text, yet appended"
        );
        joined.map(|url| Found::Parsed(url.expect("not None")))
    }
    use proptest::prelude::*;

    fn canon(s: &str) -> String {
        canonicalize(Url::parse(s).unwrap()).to_string()
    }

    #[test]
    fn spellings_of_one_page_share_a_canonical_form() {
        let expected = "http://example.com/a/b?x=1";
        for spelling in [
            "http://example.com/a/b?x=1",
            "HTTP://EXAMPLE.COM/a/b?x=1",
            "http://example.com:80/a/b?x=1",
            "http://example.com/a/./c/../b?x=1#frag",
            "http://example.com./a/b?x=1",
        ] {
            assert_eq!(canon(spelling), expected, "{spelling}");
        }
        assert_eq!(canon("https://example.com"), "https://example.com/");
        assert_eq!(
            canon("http://example.com/%7Euser"),
            "http://example.com/~user"
        );
    }

    #[test]
    fn escapes_of_unreserved_characters_are_decoded_others_upper_cased() {
        for (spelling, expected) in [
            ("http://h/%73pell%69ngs", "http://h/spellings"),
            (
                "http://h/a%2fb%3F?q=%7e%2b&r=%41",
                "http://h/a%2Fb%3F?q=~%2B&r=A",
            ),
            ("http://h/%zz%4", "http://h/%zz%4"),
            ("http://h/caf%C3%A9", "http://h/caf%C3%A9"),
            ("http://h/caf\u{e9}", "http://h/caf%C3%A9"),
            ("http://h/x?", "http://h/x"),
            ("http://h/a/%2E%2E/b", "http://h/b"),
            ("ftp://h/%7E", "ftp://h/%7E"),
            // Found by tests/it/fuzz.rs: decoding must not complete a dangling `%` into an escape.
            ("http://h/%a%41", "http://h/%a%41"),
            ("http://h/%%34%31", "http://h/%%341"),
            ("http://h/%%341", "http://h/%%341"),
        ] {
            assert_eq!(canon(spelling), expected, "{spelling}");
            assert_eq!(canon(expected), expected, "idempotent: {expected}");
        }
    }

    /// `mentions_session` is "contains `sid` or `session` without case", wherever they are
    /// (at either end, overlapping another `s`, cut short at the end).
    #[test]
    fn mentions_session_finds_sid_and_session_in_any_case() {
        let naive = |text: &str| {
            let text = text.to_ascii_lowercase();
            text.contains("sid") || text.contains("session")
        };
        for text in [
            "",
            "s",
            "si",
            "sid",
            "SId",
            "xsSid",
            "a=1&sessio",
            "Session",
            "ssession",
            "x=sIdy",
            "s=1&s=2",
            "sesSION=1",
            "is",
            "id&s",
            "sessi0n",
            "sssssi",
            "session_id=3",
        ] {
            assert_eq!(mentions_session(text.as_bytes()), naive(text), "{text}");
        }
    }

    #[test]
    fn session_ids_are_dropped() {
        for (spelling, expected) in [
            (
                "http://h/shop?item=1&sid=0123456789abcdef",
                "http://h/shop?item=1",
            ),
            ("http://h/shop?sid=42&item=1", "http://h/shop?sid=42&item=1"),
            (
                "http://h/shop;jsessionid=A1B2?item=1",
                "http://h/shop?item=1",
            ),
            ("http://h/shop;v=2;JSESSIONID=A1?x", "http://h/shop;v=2?x"),
            ("http://h/shop?PHPSESSID=ab&item=1", "http://h/shop?item=1"),
            (
                "http://h/s?ASPSESSIONIDQQ=x&sessionid=1&session_id=2",
                "http://h/s",
            ),
            (
                "http://h/s?session=1&sessionid",
                "http://h/s?session=1&sessionid",
            ),
            // Found by fuzz/ (normalize): escapes are decoded before the session-ID test.
            ("http://h/x?sid=01%3457Eb0abc7Eb0abcdf", "http://h/x"),
            (
                "http://h/x?%73id=0123456789abcdef&%4Asessionid=1",
                "http://h/x",
            ),
        ] {
            assert_eq!(canon(spelling), expected, "{spelling}");
        }
    }

    #[test]
    fn scope_host_keeps_port_distinct() {
        let seeds = [Url::parse("http://127.0.0.1:8000/").unwrap()];
        let filter = Filter::new(Scope::Host, &seeds);
        assert!(
            filter
                .check(&Url::parse("http://127.0.0.1:8000/x").unwrap(), 1)
                .is_ok()
        );
        assert_eq!(
            filter.check(&Url::parse("http://127.0.0.1:8001/x").unwrap(), 1),
            Err(Rejection::Scope)
        );
        assert_eq!(
            filter.check(&Url::parse("ftp://127.0.0.1:8000/x").unwrap(), 1),
            Err(Rejection::Scheme)
        );
    }

    #[test]
    fn scope_domain_covers_subdomains() {
        let seeds = [Url::parse("https://www.example.co.uk/").unwrap()];
        let filter = Filter::new(Scope::Domain, &seeds);
        assert!(
            filter
                .check(&Url::parse("http://shop.example.co.uk:81/").unwrap(), 1)
                .is_ok()
        );
        assert_eq!(
            filter.check(&Url::parse("http://other.co.uk/").unwrap(), 1),
            Err(Rejection::Scope)
        );
    }

    /// Requisites go one hop past `max_depth`, a stylesheet's links `STYLESHEET_HOPS` more;
    /// with `any` on any host; with `off` no further than hyperlinks. The parsed and the
    /// canonical checks agree.
    #[test]
    fn requisites_go_past_the_depth_and_with_any_the_scope() {
        let seeds = [Url::parse("http://h/").unwrap()];
        let mut filter = Filter::new(Scope::Host, &seeds);
        filter.max_depth = Some(2);
        let check = |filter: &Filter, url: &str, depth, kind| {
            let parsed = filter.check_as(&Url::parse(url).unwrap(), depth, kind);
            assert_eq!(parsed, filter.check_canonical_as(url, depth, kind), "{url}");
            parsed
        };
        let (link, requisite, sheet) = (
            LinkKind::Hyperlink,
            LinkKind::Requisite,
            LinkKind::Stylesheet,
        );
        let last = 3 + STYLESHEET_HOPS;
        for (requisites, cdn) in [
            (Requisites::Scope, Err(Rejection::Scope)),
            (Requisites::Any, Ok(())),
        ] {
            filter.requisites = requisites;
            assert_eq!(check(&filter, "http://h/a", 3, link), Err(Rejection::Depth));
            assert_eq!(check(&filter, "http://h/a.png", 3, requisite), Ok(()));
            assert_eq!(
                check(&filter, "http://h/a.png", 4, requisite),
                Err(Rejection::Depth)
            );
            assert_eq!(check(&filter, "http://h/f.woff", last, sheet), Ok(()));
            let past = check(&filter, "http://h/f.woff", last + 1, sheet);
            assert_eq!(past, Err(Rejection::Depth));
            assert_eq!(check(&filter, "http://cdn/a.png", 3, requisite), cdn);
            assert_eq!(check(&filter, "http://cdn/f.woff", 4, sheet), cdn);
            assert_eq!(
                check(&filter, "http://cdn/", 1, link),
                Err(Rejection::Scope)
            );
            let h = Url::parse("http://h/a.png").unwrap();
            let cdn_url = Url::parse("http://cdn/a.png").unwrap();
            assert!(!filter.fetched_as_requisite(&h, 2));
            assert!(filter.fetched_as_requisite(&h, 3));
            let any = requisites == Requisites::Any;
            assert_eq!(filter.fetched_as_requisite(&cdn_url, 1), any);
        }
        filter.requisites = Requisites::Off;
        for kind in [link, requisite, sheet] {
            assert_eq!(
                check(&filter, "http://h/a.png", 3, kind),
                Err(Rejection::Depth)
            );
            let cdn = check(&filter, "http://cdn/a.png", 1, kind);
            assert_eq!(cdn, Err(Rejection::Scope));
        }
        assert!(!filter.fetched_as_requisite(&Url::parse("http://h/a").unwrap(), 3));
    }

    #[test]
    fn depth_patterns_and_traps() {
        let seeds = [Url::parse("http://h/").unwrap()];
        let mut filter = Filter::new(Scope::Any, &seeds);
        filter.max_depth = Some(2);
        filter.exclude.push(Regex::new(r"\.pdf$").unwrap());
        let check = |s: &str, depth| filter.check(&Url::parse(s).unwrap(), depth);
        assert_eq!(check("http://h/x", 3), Err(Rejection::Depth));
        assert_eq!(check("http://h/x.pdf", 1), Err(Rejection::Pattern));
        assert_eq!(
            check("http://h/a/b/a/b/a/b/a/b", 1),
            Err(Rejection::RepeatedSegment)
        );
        assert!(check("http://h/2024/01/01/x", 1).is_ok());
        let deep = format!(
            "http://h{}",
            "/d".repeat(40)
                .chars()
                .enumerate()
                .map(|(i, c)| if c == 'd' {
                    char::from(b'a' + (i % 26) as u8)
                } else {
                    c
                })
                .collect::<String>()
        );
        assert_eq!(check(&deep, 1), Err(Rejection::PathTooDeep));
        // More segments than fit on the stack when the limit allows them: the same answers.
        let mut lenient = Filter::new(Scope::Any, &seeds);
        lenient.max_path_segments = 64;
        let lenient = |s: &str| lenient.check(&Url::parse(s).unwrap(), 1);
        let distinct: String = (0..40).map(|i| format!("/s{i}")).collect();
        assert!(lenient(&format!("http://h{distinct}")).is_ok());
        assert_eq!(
            lenient(&format!("http://h{distinct}/s7/s7/s7")),
            Err(Rejection::RepeatedSegment)
        );
        assert_eq!(
            lenient(&format!("http://h/s7/s7/s7{distinct}")),
            Err(Rejection::RepeatedSegment)
        );
        assert_eq!(
            check(&format!("http://h/{}", "x".repeat(3000)), 1),
            Err(Rejection::TooLong)
        );
    }

    /// The fast path in `canonicalize` only skips work that would change nothing.
    #[test]
    fn the_fast_path_skips_only_no_ops() {
        for plain in [
            "http://a.test/",
            "http://a.test/p/1.html",
            "https://a.test/search?q=crawler&page=2",
            "http://a.test/x?s=1&id=7",
            "http://a.test/caf\u{e9}",
        ] {
            let url = Url::parse(plain).unwrap();
            assert_eq!(rewrite_escapes_and_sessions(url.clone()), url, "{plain}");
            assert_eq!(canonicalize(url.clone()), url, "{plain}");
        }
        // And does not skip what it must not.
        let c = |u: &str| canonicalize(Url::parse(u).unwrap()).to_string();
        assert_eq!(c("http://a.test/%7Ea?"), "http://a.test/~a");
        assert_eq!(
            c("http://a.test/x?SID=0123456789abcdef01"),
            "http://a.test/x"
        );
        assert_eq!(c("http://a.test/x;jsessionid=12"), "http://a.test/x");
    }

    /// The scanner accepts plain canonical URLs and nothing `canonicalize` would change.
    #[test]
    fn is_canonical_accepts_only_fixed_points() {
        for canonical in [
            "http://a.test/",
            "https://www.example.com/p/1.html",
            "http://site7.example/articles/3/page-7.html?x=1&y=a/b?c",
            "http://127.0.0.1:8080/p/1.html",
            "http://a-b.test:81/a%2Fb%C3%A9;v=2/~x",
            "https://a.test/s?sid=42&session=1",
            "http://a.test//x/.a/..b/",
        ] {
            assert!(is_canonical(canonical), "{canonical}");
            assert_eq!(canon(canonical), canonical, "{canonical}");
        }
        for other in [
            "HTTP://a.test/",
            "http://A.test/",
            "http://a.test",
            "http://a.test./",
            "http://a.test:80/",
            "https://a.test:443/",
            "http://a.test:080/",
            "http://a.test:99999/",
            "http://u@a.test/",
            "http://a.test/a/../b",
            "http://a.test/a/./b",
            "http://a.test/a/..",
            "http://a.test/%7Ea",
            "http://a.test/%2f",
            "http://a.test/%zz",
            "http://a.test/x?",
            "http://a.test/x#f",
            "http://a.test/x?q='",
            "http://a.test/x;jsessionid=1",
            "http://a.test/x?PHPSESSID=1",
            "http://a.test/x?sid=0123456789abcdef",
            "http://a.test/caf\u{e9}",
            "http://a.test/a b",
            "http://a.test/a\\b",
            "http://xn--nxasmq6b.test/",
            "http://a..test/",
            "http://1.2.3/",
            "http://01.2.3.4/",
            "http://256.1.1.1/",
            "http://0x7f.0.0.1/",
            "http://[::1]/",
            "ftp://a.test/",
            " http://a.test/",
        ] {
            assert!(!is_canonical(other), "{other}");
        }
    }

    #[test]
    fn origin_and_key_read_canonical_urls() {
        assert_eq!(
            origin_and_key("http://a.test/x?y"),
            Some(("http://a.test", "a.test:80".to_owned()))
        );
        assert_eq!(
            origin_and_key("https://a.test:8443"),
            Some(("https://a.test:8443", "a.test:8443".to_owned()))
        );
        assert_eq!(
            origin_and_key("http://[::1]/"),
            Some(("http://[::1]", "[::1]:80".to_owned()))
        );
        assert_eq!(
            origin_and_key("http://[::1]:81/"),
            Some(("http://[::1]:81", "[::1]:81".to_owned()))
        );
        assert_eq!(origin_and_key("ftp://a.test/"), None);
        assert_eq!(origin_and_key("http:///x"), None);
    }

    /// A page's links read through `LinkFilter` get `Filter::check_canonical_as`'s answers,
    /// in any order: links of the last origin, of origins that start as it does (a longer
    /// name, another port, user info), other schemes, and past the depth as requisites.
    #[test]
    fn a_page_filter_answers_as_the_filter() {
        let links = [
            "http://127.0.0.1:8080/a/b.html",
            "http://127.0.0.1:8080",
            "http://127.0.0.1:8080?q=1",
            "http://127.0.0.1:8080/a/a/a/a/b",
            "http://127.0.0.1:80801/a",
            "http://127.0.0.1:8080.x/a",
            "http://127.0.0.1:8080/c",
            "http://127.0.0.1:8080@evil.test/",
            "http://127.0.0.1:8080/d",
            "https://127.0.0.1:8080/e",
            "http://127.0.0.1:8081/f",
            "ftp://127.0.0.1:8080/g",
            "http://127.0.0.1:8080/h?x-y",
            "http://www.example.co.uk/i",
            "http://www.example.co.uk.evil/j",
            "http://shop.example.co.uk/k",
            "http://www.example.co.uk:81/l",
        ];
        let seeds = [
            Url::parse("http://127.0.0.1:8080/").unwrap(),
            Url::parse("https://www.example.co.uk/").unwrap(),
        ];
        let mut filters = join_filters();
        for scope in [Scope::Host, Scope::Domain] {
            filters.push(Filter {
                max_depth: Some(1),
                requisites: Requisites::Any,
                ..Filter::new(scope, &seeds)
            });
        }
        // More seed hosts than `FEW_HOSTS`: the key is looked up in the set.
        let many: Vec<Url> = (0..=FEW_HOSTS)
            .map(|i| Url::parse(&format!("http://127.0.0.1:808{i}/")).unwrap())
            .collect();
        filters.push(Filter::new(Scope::Host, &many));
        let kinds = [LinkKind::Hyperlink, LinkKind::Requisite];
        for filter in &filters {
            for reversed in [false, true] {
                let mut page = LinkFilter::new(filter);
                let order: Vec<&str> = match reversed {
                    false => links.to_vec(),
                    true => links.iter().rev().copied().collect(),
                };
                for (i, link) in order.iter().enumerate() {
                    let (depth, kind) = (i as u32 % 3, kinds[i % 2]);
                    assert_eq!(
                        page.check_canonical_as(link, depth, kind),
                        filter.check_canonical_as(link, depth, kind),
                        "{link} ({:?}, {kind:?} at {depth})",
                        filter.scope
                    );
                }
            }
        }
    }

    proptest! {
        /// The lengths `segment_lengths` finds eight bytes at a time are those of a split.
        #[test]
        fn segment_lengths_are_a_splits(path in "[a/é]{0,40}") {
            let mut got = Vec::new();
            segment_lengths(path.as_bytes(), |length| got.push(length));
            let split: Vec<usize> = (path.as_bytes().split(|&b| b == b'/'))
                .filter(|s| !s.is_empty())
                .map(<[u8]>::len)
                .collect();
            prop_assert_eq!(got, split);
        }
    }

    /// The path rules read the segments' lengths first; their answer is that of counting the
    /// segments and comparing them all.
    #[test]
    fn segment_rules_answer_as_comparing_every_segment() {
        let seeds = [Url::parse("http://h/").unwrap()];
        let paths = [
            "/",
            "/a/b/c/d",
            "/a/b/a/b/a/b/a/b",
            "/a/b/a/b/a/b/a",
            "/ab/cd/ef/gh/ij/kl",
            "/ab/cd/ab/ab/x/ab",
            "//a//a//a//a//",
            "/a/a/a",
            "/a/a/a/a",
        ];
        let long = "x".repeat(70);
        let longer = "y".repeat(80);
        let long_ones = format!("/{long}/{longer}/{long}/{longer}/{long}/{long}");
        for (segments, repeats) in [(32, 3), (6, 3), (6, 1), (3, 0), (40, 2)] {
            let filter = Filter {
                max_path_segments: segments,
                max_segment_repeats: repeats,
                ..Filter::new(Scope::Host, &seeds)
            };
            for path in paths.iter().copied().chain([long_ones.as_str()]) {
                let all: Vec<&[u8]> = (path.as_bytes()[1..].split(|&b| b == b'/'))
                    .filter(|s| !s.is_empty())
                    .collect();
                let want = if all.len() > segments {
                    Err(Rejection::PathTooDeep)
                } else if has_repeated_segment(all.iter().copied(), all.len(), repeats) {
                    Err(Rejection::RepeatedSegment)
                } else {
                    Ok(())
                };
                let text = format!("http://h{path}");
                assert_eq!(filter.check_rules(&text, Some(path), 0, 0), want, "{path}");
            }
        }
    }

    /// Bases for the join tests: canonical ones, and ones the fast path must see through (user
    /// info, a trailing dot, upper-case escapes, a session parameter, IPv4, IDNA, a query).
    const JOIN_BASES: [&str; 12] = [
        "http://example.com/dir/page.html",
        "http://example.com/",
        "https://a.example.co.uk:8443/x/y/?q=1",
        "http://127.0.0.1:8080/site/index.html",
        "http://user:pw@example.com/a/b",
        "http://example.com./a/",
        "http://example.com/a%2fb/c%7e/d",
        "http://example.com/a;jsessionid=1/b",
        "http://xn--bcher-kva.example/dir/",
        "http://example.com/dir/page?x=1#frag",
        "https://example.com:443/p",
        "http://10.0.0.1/a/b/c",
    ];

    /// Pieces of link values, plain and hostile.
    fn join_piece() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "http://",
                "https://",
                "HTTP://",
                "//",
                "/",
                "\\",
                "./",
                "../",
                ".",
                "..",
                "?",
                "#",
                "%",
                "%2e",
                "%2E",
                "%41",
                "%7e",
                "%zz",
                ":",
                "@",
                ";",
                ";sid=1",
                "sid=2",
                "session",
                "a",
                "b.html",
                "x-y_z~",
                "example.com",
                "127.0.0.1",
                "Example.COM",
                ":8080",
                ":80",
                ":0",
                "\t",
                "\n",
                " ",
                "'",
                "\"",
                "<",
                "é",
                "\u{0}",
                "&",
                "=",
                "mailto:",
                "javascript:",
                "xn--bcher-kva",
                "[::1]",
                "&amp;",
                "a:b",
            ])
            .prop_map(str::to_owned),
            "[a-z0-9/.?=&]{1,8}",
        ]
    }

    /// A link value: up to 8 pieces.
    fn join_value() -> impl Strategy<Value = String> {
        prop::collection::vec(join_piece(), 1..8).prop_map(|pieces| pieces.concat())
    }

    /// Filters of every scope, with trap guards that some of the values reach.
    fn join_filters() -> Vec<Filter> {
        let seeds = [
            Url::parse("http://example.com/").unwrap(),
            Url::parse("http://127.0.0.1:8080/").unwrap(),
            Url::parse("https://www.example.co.uk/").unwrap(),
        ];
        [Scope::Any, Scope::Host, Scope::Domain]
            .into_iter()
            .map(|scope| Filter {
                max_depth: Some(3),
                max_path_segments: 4,
                max_segment_repeats: 1,
                max_url_len: 60,
                exclude: vec![Regex::new("x-y").unwrap()],
                ..Filter::new(scope, &seeds)
            })
            .collect()
    }

    /// The fast join against the url crate: the same text byte for byte, and the same verdict
    /// of every filter; `fast` counts the values that took the fast path.
    fn check_join(base: &Url, value: &str, filters: &[Filter], fast: &mut usize) {
        let parsed = base.join(value);
        match join_url(base, value) {
            Ok(Found::Canonical(text)) => {
                *fast += 1;
                let mut parsed = parsed.expect("the url crate parses what the fast path took");
                parsed.set_fragment(None);
                assert_eq!(parsed.as_str(), text, "join of {value:?} on {base}");
                let canonical = canonicalize(parsed);
                assert_eq!(canonical.as_str(), text, "canonical {value:?} on {base}");
                for filter in filters {
                    for depth in [0, 5] {
                        assert_eq!(
                            filter.check_canonical(&text, depth),
                            filter.check(&canonical, depth),
                            "filter of {text} ({:?})",
                            filter.scope
                        );
                        let found = Found::Canonical(text.clone());
                        let slow = Found::Parsed(canonical.clone());
                        assert_eq!(found.accept(filter, depth), slow.accept(filter, depth));
                    }
                }
            }
            Ok(Found::Parsed(url)) => assert_eq!(
                Ok(url),
                parsed.map(|mut parsed| {
                    parsed.set_fragment(None);
                    parsed
                })
            ),
            Err(e) => assert_eq!(Err(e), parsed),
        }
    }

    #[test]
    fn fast_join_agrees_with_the_url_crate_on_plain_links() {
        let filters = join_filters();
        let values = [
            "page2.html",
            "/abs/path?q=1",
            "?only=query",
            "http://example.com/x",
            "sub/dir/",
            "https://other.org:444/a",
            "../up",
            "./here",
            "../../std/index.html",
            "./../x.html",
            ".././../y/",
            "../",
            "./",
            "../../../../../../too/far",
            "..",
            ".",
            "../?q=1",
            "..//x",
            "../.hidden",
            "..%2fx",
            "%2e%2e/x",
            "../..",
            "a b",
            "#frag",
            "x#frag",
            "#",
            "../../std/fmt/trait.Debug.html#tymethod.fmt",
            "?q=2#f",
            "http://example.com/x#y#z",
            "a\tb#c",
            "a#b\tc",
            "a#b c",
            " #x",
            "//cdn.x/y",
            "/\\evil.com/",
            "a:b/c",
            "a/b:c",
            "p?",
            "http://EXAMPLE.com/",
            "http://example.com",
            "http://a.test/%7e",
            "http://a.test/%7E",
            "x?sid=1",
            "/a;jsessionid=2",
            "é.html",
            "/x/x/x/x/x",
            "http://127.0.0.1:8080/y",
            "http://127.0.0.1:80/y",
            "http://a.b2/",
        ];
        let mut fast = 0;
        for base in JOIN_BASES {
            let base = Url::parse(base).unwrap();
            for value in values {
                check_join(&base, value, &filters, &mut fast);
            }
        }
        assert!(fast >= 60, "{fast} values took the fast path");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn fast_join_agrees_with_the_url_crate(
            base in prop::sample::select(JOIN_BASES.to_vec()),
            value in join_value(),
        ) {
            let filters = join_filters();
            let mut fast = 0;
            check_join(&Url::parse(base).unwrap(), &value, &filters, &mut fast);
        }
    }

    /// The shapes of a documentation tree's links take the fast path: dot segments up front, a
    /// fragment, or both (rust-doc: two in five links have a fragment, half start with `../`).
    #[test]
    fn dot_segments_and_fragments_take_the_fast_path() {
        let base = Url::parse("http://127.0.0.1:8080/std/fmt/index.html").unwrap();
        for (value, want) in [
            (
                "../../core/index.html",
                "http://127.0.0.1:8080/core/index.html",
            ),
            (
                "./trait.Debug.html",
                "http://127.0.0.1:8080/std/fmt/trait.Debug.html",
            ),
            ("../../../../up.html", "http://127.0.0.1:8080/up.html"),
            ("#method.fmt", "http://127.0.0.1:8080/std/fmt/index.html"),
            (
                "trait.Debug.html#tymethod.fmt",
                "http://127.0.0.1:8080/std/fmt/trait.Debug.html",
            ),
            ("../#x", "http://127.0.0.1:8080/std/"),
        ] {
            assert_eq!(
                join_url(&base, value),
                Ok(Found::Canonical(want.to_owned())),
                "{value}"
            );
        }
    }

    /// A check that the generated values reach the fast path often enough for the property to
    /// mean something.
    #[test]
    fn generated_join_values_often_take_the_fast_path() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let filters = join_filters();
        let mut fast = 0;
        for i in 0..1000 {
            let value = join_value().new_tree(&mut runner).unwrap().current();
            let base = Url::parse(JOIN_BASES[i % JOIN_BASES.len()]).unwrap();
            check_join(&base, &value, &filters, &mut fast);
        }
        assert!(fast >= 100, "{fast} of 1,000 took the fast path");
    }
}
