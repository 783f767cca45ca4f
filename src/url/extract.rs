//! Link extraction: every URL-bearing attribute of an HTML body, made absolute.
//!
//! This module owns reading URLs out of HTML — `a/area/link[href]`, the `src` of embedded
//! resources, `srcset`, `video[poster]`, `object[data]`, `form[action]`,
//! `meta[http-equiv=refresh]` — and resolving them against the page's effective base
//! (`<base href>`), as Mercator did: every reference is a candidate, not only anchors. It does
//! not normalize, filter by scope, or deduplicate: the URLs come back in document order with
//! duplicates kept, for the normalizer, the filter and the DUE downstream (`page_links` keeps
//! a repeated text once, with the document order as indices, so a repeat costs no `String`).
//! A reference of the plain shapes most links have comes back as text, joined without the URL
//! parser (`normalize::join_into`, whose fast path takes only text already canonical); the
//! rest parsed.
//!
//! Choices worth knowing:
//! - The body is read by `url::html`, a tokenizer that finds start tags and the text of
//!   elements whose content is not markup in one pass, copying nothing (wget2 also scans tags
//!   instead of parsing a tree). It replaced `lol_html`, whose rewriter cost a build per
//!   page; `lol_html` remains the oracle of the tests (`oracle`), which demand the
//!   same links, bases and directives. A huge or malformed body costs time linear in its size
//!   and no memory beyond the links, and is never an error.
//! - `javascript:`, `mailto:`, `data:` and `tel:` references are dropped here because they are
//!   never fetchable and `data:` URLs can be large; any other scheme that parses is returned and
//!   left to the filter.
//! - The document's base URL is its first `<base href>` outside a `<template>`, for every link,
//!   those before it too (HTML standard); the `<base href>` value itself is not returned as a
//!   link. Links are resolved as they are found; a base after some of them has the part of
//!   the body before it read again (`scan`).
//! - Attribute values are read as the standard's tokenizer reads them (`html::attribute_value`):
//!   character references decoded with the rule for attributes (a legacy name such as `&copy`
//!   without `;` is decoded unless `=` or an alphanumeric follows, so a query parameter such as
//!   `&copy=2` stays literal, as in browsers), numeric ones with their U+FFFD and Windows-1252
//!   replacements, NUL as U+FFFD (which the URL is then given percent-encoded, as browsers
//!   do). An HTML `<image>` is an `<img>`.
//! - `<meta http-equiv=refresh>`: the keyword matched without case and without trimming, the
//!   `content` read by the standard's refresh parser (`refresh_url`), and only the first
//!   refresh it accepts taken.
//! - The document's charset decodes attribute values: the `Content-Type` header's, else the
//!   first `<meta charset>` (or `http-equiv=content-type`) from the tag after it on, else
//!   UTF-8. Queries are percent-encoded as UTF-8 (the WHATWG URL standard would use the
//!   document's encoding). A non-UTF-8 page with non-ASCII query strings thus yields URLs a
//!   browser would encode differently; such pages are rare and the URL is still well-formed.
//! - Pages are read as a browser with scripts off reads them: the content of `<noscript>` is
//!   markup, read once with the rest, and ends at its end tag only (not at a `</noscript>`
//!   inside an attribute value or a comment). `lol_html` reads it as text, which the oracle
//!   parses again; where the two differ (`html`'s module doc) the oracle tests leave the
//!   document out, as they do for `<image>` and a `<base>` in a template.
//! - The tree builder is not modelled beyond what the tokenizer needs (its namespaces, the
//!   template for `<base>`, `<image>`): elements it would drop are still read, such as a
//!   `<frame>` outside a frameset (or in one the tree builder ignores), a nested `<form>`'s
//!   `action`; links in a `<template>`'s content (inert in a browser until used) are read too.
//!   That costs a few extra URLs, never a missed one. A `<base>` in SVG or MathML is not
//!   HTML's and is ignored.
//! - CSS in HTML: the text of an HTML `<style>` and the `style` attribute of any element are
//!   read by `url::css` (`url()`, `@import`, `image-set()`), resolved against the base like
//!   the rest; a `style` value without a `(` is not parsed (it can hold no URL). A stylesheet
//!   of its own is read by `stylesheet_links`, against its own URL.
//! - Each URL is marked a requisite (`PageLinks::requisite`) when the page needs it to render:
//!   `img`/`source` `src` and `srcset`, `script`, `iframe`, `frame`, `embed`, `object`,
//!   `audio`, `video` and its `poster`, `track`, `input` (an image button), a `<link>` whose
//!   `rel` says stylesheet, icon, preload or manifest, and what CSS references. Anchors,
//!   forms and refreshes are not. The crawl fetches requisites past its depth (`--requisites`).
//! - Page-level robots directives are read here, not obeyed: `<meta name="robots">` (and
//!   `<meta name="TOKEN">`, the crawler's own robots token) give `Directives`, and each link
//!   carries whether its `rel` says `nofollow` (`a`, `area`, `link`, `form`). The worker decides
//!   what to follow (`--ignore-page-robots`). `url::directives` reads the header form.

use crate::seen::checksum::checksum;
use crate::seen::neardup::Signature;
use crate::url::css::css_urls;
use crate::url::directives::Directives;
use crate::url::html::{Namespace, Token, Tokenizer, attribute_value};
use crate::url::minhash::Shingler;
use crate::url::normalize::{Base, Found, join_into};
use crate::url::search::is_ascii;
use encoding_rs::{Encoding, UTF_8};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::ops::Range;
use url::Url;

#[cfg(any(test, feature = "oracle"))]
pub mod oracle;

/// Schemes never worth returning (see the module doc).
const DROPPED_SCHEMES: [&str; 4] = ["javascript", "mailto", "data", "tel"];
/// Links a page is given room for before its first one is found (it grows past them).
const MAX_EXPECTED_LINKS: usize = 1024;
/// Bytes of text a page's expected links are given room for (rust-doc's are ~70 bytes).
const LINK_TEXT: usize = 64;

/// The links of one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// Absolute URLs in document order, duplicates kept; those of the plain shapes most links
    /// have are joined without a parse (`normalize::join_into`), the others parsed.
    pub links: Vec<Found>,
    /// For each of `links`, whether its element said `rel="nofollow"`.
    pub rel_nofollow: Vec<bool>,
    /// For each of `links`, whether its URL is a requisite of the page (`PageLinks::requisite`);
    /// empty when none is.
    pub requisite: Vec<bool>,
    /// What `<meta name="robots">` (or the crawler's token) said about the whole page.
    pub directives: Directives,
    /// More than `max_links` links were found; the rest were dropped.
    pub truncated: bool,
}

/// The links of one page as the crawler reads them: each distinct URL once, and the page's
/// links as indices into those. Half the links of a documentation page repeat one before them
/// (rust-doc: 78 links a page, 39 distinct); no link costs a `String` of its own: canonical
/// text is written once into `text`, which the distinct URLs point into.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// The canonical text of the distinct URLs joined without a parse, one after another.
    pub text: String,
    /// The URLs in the order first found: canonical text once each, parsed ones as found.
    pub distinct: Vec<PageLink>,
    /// The page's links in document order, repeats included: indices into `distinct`.
    pub order: Vec<u32>,
    /// For each of `order`, whether its element said `rel="nofollow"`.
    pub rel_nofollow: Vec<bool>,
    /// For each of `distinct`, whether the page needs it to render: some link to it is an
    /// image, script, stylesheet, icon, frame, media or CSS `url()`. Empty when none is (no
    /// allocation for a page of hyperlinks only).
    pub requisite: Vec<bool>,
    /// What `<meta name="robots">` (or the crawler's token) said about the whole page.
    pub directives: Directives,
    /// More than `max_links` links were found; the rest were dropped.
    pub truncated: bool,
    /// The MinHash signature of the page's visible text (`url::minhash`), when asked for
    /// (`page_links_fingerprinted`) and the page has enough words.
    pub fingerprint: Option<Signature>,
}

/// One of `PageLinks::distinct`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageLink {
    /// Canonical text (`Found::Canonical`): where it is in `PageLinks::text`, and its checksum
    /// (the page's key for it, and the DUE's: `crawl::offer` takes it as it is).
    Canonical {
        at: Range<usize>,
        key: u64,
    },
    Parsed(Url),
}

impl PageLinks {
    /// The links one by one, each its own `Found` (`Extracted`).
    pub fn into_extracted(self) -> Extracted {
        let found = |link| match link {
            PageLink::Canonical { at, .. } => Found::Canonical(self.text[at].to_owned()),
            PageLink::Parsed(url) => Found::Parsed(url),
        };
        let requisite = match self.requisite.is_empty() {
            true => Vec::new(),
            false => (self.order.iter().map(|&i| self.requisite[i as usize])).collect(),
        };
        if self.order.len() == self.distinct.len() {
            // No repeat: the order is 0, 1, 2, ...
            return Extracted {
                links: self.distinct.into_iter().map(found).collect(),
                rel_nofollow: self.rel_nofollow,
                requisite,
                directives: self.directives,
                truncated: self.truncated,
            };
        }
        // Each distinct URL moves to its first place; a repeat is a clone of that.
        let mut first = vec![u32::MAX; self.distinct.len()];
        let mut distinct: Vec<Option<PageLink>> = self.distinct.into_iter().map(Some).collect();
        let mut links: Vec<Found> = Vec::with_capacity(self.order.len());
        for &i in &self.order {
            let i = i as usize;
            match distinct[i].take() {
                Some(link) => {
                    first[i] = links.len() as u32;
                    links.push(found(link));
                }
                None => links.push(links[first[i] as usize].clone()),
            }
        }
        Extracted {
            links,
            rel_nofollow: self.rel_nofollow,
            requisite,
            directives: self.directives,
            truncated: self.truncated,
        }
    }
}

/// Extracts the links of an HTML `body` fetched from `page_url`, reading the robots
/// directives of `<meta name="robots">` only; `extract_page` also reads the crawler's own token.
///
/// `charset` is the label from the `Content-Type` header, if any; without a usable one the
/// document's `<meta charset>` is honoured, else UTF-8 is assumed. At most `max_links` links are
/// returned. Never fails: unparseable values are skipped.
pub fn extract_links(
    body: &[u8],
    page_url: &Url,
    charset: Option<&str>,
    max_links: usize,
) -> Extracted {
    extract_page(body, page_url, charset, max_links, "robots")
}

/// `extract_links`, with `<meta name="TOKEN">` read as robots directives as well as
/// `<meta name="robots">` (`token` is the user agent's robots token, matched without case).
pub fn extract_page(
    body: &[u8],
    page_url: &Url,
    charset: Option<&str>,
    max_links: usize,
    token: &str,
) -> Extracted {
    page_links(body, page_url, charset, max_links, token).into_extracted()
}

/// `extract_page`, each distinct URL once (`PageLinks`): what the crawler takes.
pub fn page_links(
    body: &[u8],
    page_url: &Url,
    charset: Option<&str>,
    max_links: usize,
    token: &str,
) -> PageLinks {
    page_links_fingerprinted(body, page_url, charset, max_links, token, false)
}

/// `page_links`, with the MinHash signature of the page's visible text read in the same pass when
/// `fingerprint` (`PageLinks::fingerprint`, `url::minhash`).
pub fn page_links_fingerprinted(
    body: &[u8],
    page_url: &Url,
    charset: Option<&str>,
    max_links: usize,
    token: &str,
    fingerprint: bool,
) -> PageLinks {
    // Only encodings in which ASCII bytes mean ASCII can be tokenized as bytes.
    let header_encoding = charset
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
        .filter(|encoding| encoding.is_ascii_compatible());
    let mut state = State::new(page_url, max_links, token, body.len());
    state.text = fingerprint.then(Shingler::new);
    // The header's charset wins over `<meta>` (HTML encoding sniffing).
    let encoding = header_encoding.unwrap_or(UTF_8);
    scan(body, encoding, header_encoding.is_none(), &mut state);
    state.out.fingerprint = state.text.and_then(Shingler::finish);
    state.out
}

/// The links of a stylesheet `body` fetched from `sheet_url` (`url::css`), each distinct URL
/// once, every one a requisite: the same shape as a page's (`page_links`), resolved against
/// the stylesheet's own URL. The text is read in `charset` (the `Content-Type`'s, if it is
/// one whose ASCII bytes mean ASCII), else UTF-8; bytes that are not are replaced. At most
/// `max_links` links.
pub fn stylesheet_links(
    body: &[u8],
    sheet_url: &Url,
    charset: Option<&str>,
    max_links: usize,
) -> PageLinks {
    let encoding = charset
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
        .filter(|encoding| encoding.is_ascii_compatible())
        .unwrap_or(UTF_8);
    let mut state = State::new(sheet_url, max_links, "", body.len());
    state.css(&encoding.decode(body).0);
    state.out
}

/// Tokenizes `body`, recording into `state`. Stops at the link limit once the base is known.
///
/// The first `<base href>` outside a template sets the base of every link, those before it
/// too: links are resolved as they are found, against the page URL until that base, and if
/// some were, the links are dropped and the part of the body before the base is read again
/// (rare: the base is almost always before the first link, and that part is in the head).
/// At the link limit with no base yet, the rest is read for a base only.
fn scan(
    body: &[u8],
    start_encoding: &'static Encoding,
    start_adjust_charset: bool,
    state: &mut State<'_>,
) {
    let (mut encoding, mut adjust_charset) = (start_encoding, start_adjust_charset);
    let values = Values::new(body);
    let mut tokens = Tokenizer::new(body);
    tokens.collect_text(state.text.is_some());
    // The attributes of elements read for links only; any element's `style` is noted anyway.
    tokens.keep_attributes_of(|name| interesting(name, Namespace::Html));
    // The link limit was reached before a base: only a base is looked for.
    let mut full = false;
    // The last start tag was an HTML `<style>`: its text, the next token, is CSS.
    let mut style = false;
    while let Some(token) = tokens.next_token() {
        if let Some(text) = &mut state.text
            && tokens.has_text_runs()
        {
            hash_text(&mut tokens, body, encoding, text);
        }
        let (name, ns) = match token {
            Token::Start { name, ns, .. } => (name, ns),
            Token::Text(text) if std::mem::take(&mut style) => {
                if !full && state.css(&encoding.decode_without_bom_handling(&body[text]).0) {
                    if state.base_seen {
                        return;
                    }
                    full = true;
                }
                continue;
            }
            Token::Text(_) | Token::End(_) => continue,
        };
        let tag_start = name.start - 1;
        let name = &body[name];
        style = ns == Namespace::Html && name.eq_ignore_ascii_case(b"style");
        // `interesting` was asked already, in HTML; attributes not kept: it refused.
        let found = match tokens.kept_as() {
            Some(name) => Some(name),
            None => tokens
                .attributes_kept()
                .then(|| interesting(name, ns))
                .flatten(),
        };
        // Any element's `style` attribute, read before its other attributes; not a `<base>`'s,
        // which the reading again from a base (below) would lose (the oracle skips it too).
        if !full
            && found != Some("base")
            && let Some(value) = tokens.style_range()
            && memchr::memchr(b'(', &body[value.clone()]).is_some()
            && state.style_attribute(&values.text(encoding, value))
        {
            if state.base_seen {
                return;
            }
            full = true;
        }
        #[cfg(any(test, feature = "oracle"))]
        if tokens.unlike_lol_html || ns != Namespace::Html && name.eq_ignore_ascii_case(b"noscript")
        {
            state.unlike_lol_html = true;
        }
        let Some(name) = found else {
            continue;
        };
        #[cfg(any(test, feature = "oracle"))]
        if name == "img" && body.get(tag_start + 4).is_some_and(u8::is_ascii_alphabetic) {
            // `<image>`: `lol_html` does not read it as `<img>`.
            state.unlike_lol_html = true;
        }
        let tag = ScannedTag {
            tokens: &tokens,
            values: &values,
            encoding,
        };
        if name == "base" {
            if state.base_seen {
                continue;
            }
            let Some(href) = tag.get("href") else {
                continue;
            };
            if tokens.in_template() || ns != Namespace::Html {
                // Not the document's: a template's content is not in it, and a `<base>` in
                // SVG or MathML is no HTML base.
                #[cfg(any(test, feature = "oracle"))]
                {
                    state.unlike_lol_html = true;
                }
                continue;
            }
            if state.set_base(&href) {
                state.clear_links();
                // The text before the base was hashed already.
                let text = state.text.take();
                scan(
                    &body[..tag_start],
                    start_encoding,
                    start_adjust_charset,
                    state,
                );
                state.text = text;
            }
            if full {
                return;
            }
            continue;
        }
        if !full && state.element(name, &tag) {
            if state.base_seen {
                return;
            }
            full = true;
        }
        if adjust_charset
            && name == "meta"
            && let Some(charset) = meta_charset(&tag)
        {
            // Only the first one counts; it applies from the next tag on.
            encoding = charset;
            adjust_charset = false;
            #[cfg(any(test, feature = "oracle"))]
            if tokens.in_noscript_for_oracle() {
                // The oracle parses `<noscript>` text without looking for a charset.
                state.unlike_lol_html = true;
            }
        }
    }
    if let Some(text) = &mut state.text {
        hash_text(&mut tokens, body, encoding, text);
    }
    #[cfg(any(test, feature = "oracle"))]
    if tokens.unlike_lol_html {
        state.unlike_lol_html = true;
    }
}

/// Gives the text runs the tokenizer found since the last call to `text`, decoded from
/// `encoding` with their character references (read in place when the encoding is UTF-8:
/// `Shingler::html_text`); stops the tokenizer collecting once `text` has had its fill
/// (`minhash::MAX_TEXT_BYTES`).
fn hash_text(
    tokens: &mut Tokenizer<'_>,
    body: &[u8],
    encoding: &'static Encoding,
    text: &mut Shingler,
) {
    for run in tokens.take_text_runs() {
        if !text.wants_more() {
            break;
        }
        // White space between tags (most runs) holds no word, and a run's end ends one:
        // `html_text` passes over it, `encoded_text` is not asked.
        if encoding == UTF_8 {
            text.html_text(&body[run]);
        } else if !body[run.clone()].iter().all(u8::is_ascii_whitespace) {
            text.encoded_text(&body[run], encoding);
        }
    }
    if !text.wants_more() {
        tokens.collect_text(false);
    }
}

/// The lower-case name of an element `State::element` reads (or `base`), or `None`. An HTML
/// `<image>` is an `img`, as the tree builder makes it.
fn interesting(name: &[u8], ns: Namespace) -> Option<&'static str> {
    // One word per name, then one `match` on it (lower-casing into a buffer and matching
    // slices cost more, at every tag).
    const A: u64 = key(b"a");
    const AREA: u64 = key(b"area");
    const LINK: u64 = key(b"link");
    const IMG: u64 = key(b"img");
    const SCRIPT: u64 = key(b"script");
    const IFRAME: u64 = key(b"iframe");
    const FRAME: u64 = key(b"frame");
    const EMBED: u64 = key(b"embed");
    const SOURCE: u64 = key(b"source");
    const AUDIO: u64 = key(b"audio");
    const VIDEO: u64 = key(b"video");
    const TRACK: u64 = key(b"track");
    const INPUT: u64 = key(b"input");
    const OBJECT: u64 = key(b"object");
    const FORM: u64 = key(b"form");
    const META: u64 = key(b"meta");
    const BASE: u64 = key(b"base");
    const IMAGE: u64 = key(b"image");
    // The (length, first letter) pairs of those names, a bit per letter: most other tags
    // (`span`, `div`, `code`, `p`, `li`, `section`) are refused on these alone.
    const FIRST_LETTERS: [u32; 7] = {
        let names: [&[u8]; 18] = [
            b"a", b"area", b"link", b"img", b"script", b"iframe", b"frame", b"embed", b"source",
            b"audio", b"video", b"track", b"input", b"object", b"form", b"meta", b"base", b"image",
        ];
        let mut table = [0u32; 7];
        let mut i = 0;
        while i < names.len() {
            table[names[i].len()] |= 1 << (names[i][0] - b'a');
            i += 1;
        }
        table
    };
    let &first = name.first()?;
    // A byte that is no letter may pass (the bit of another), never a name's first letter
    // fail.
    let letter = (first | 0x20).wrapping_sub(b'a') & 31;
    if FIRST_LETTERS
        .get(name.len())
        .is_none_or(|bits| bits & 1 << letter == 0)
    {
        return None;
    }
    Some(match key(name) {
        A => "a",
        AREA => "area",
        LINK => "link",
        IMG => "img",
        SCRIPT => "script",
        IFRAME => "iframe",
        FRAME => "frame",
        EMBED => "embed",
        SOURCE => "source",
        AUDIO => "audio",
        VIDEO => "video",
        TRACK => "track",
        INPUT => "input",
        OBJECT => "object",
        FORM => "form",
        META => "meta",
        BASE => "base",
        IMAGE if ns == Namespace::Html => "img",
        _ => return None,
    })
}

/// A name of at most seven bytes as a word: its bytes with bit 5 set, which makes a letter
/// lower case and no other byte a letter (so two names of letters have the same key exactly
/// when they are equal without case; `interesting`'s are), its length in the top byte.
const fn key(name: &[u8]) -> u64 {
    let mut word = (name.len() as u64) << 56;
    let mut i = 0;
    while i < name.len() {
        word |= ((name[i] | 0x20) as u64) << (i * 8);
        i += 1;
    }
    word
}

/// The encoding a `<meta>` declares, if it is one the tokenizer can read: `charset=`, or
/// `http-equiv="Content-Type"` with a `content` whose media type has a `charset` parameter.
fn meta_charset(tag: &ScannedTag<'_, '_>) -> Option<&'static Encoding> {
    let ascii = |encoding: &'static Encoding| encoding.is_ascii_compatible().then_some(encoding);
    if let Some(encoding) = tag
        .get("charset")
        .and_then(|label| Encoding::for_label_no_replacement(label.as_bytes()))
        .and_then(ascii)
    {
        return Some(encoding);
    }
    if !tag
        .get("http-equiv")
        .is_some_and(|v| v.eq_ignore_ascii_case("Content-Type"))
    {
        return None;
    }
    let content: mime::Mime = tag.get("content")?.parse().ok()?;
    let charset = content.get_param("charset")?;
    Encoding::for_label_no_replacement(charset.as_str().as_bytes()).and_then(ascii)
}

/// What `State::element` reads of a start tag: its attributes, decoded.
trait StartTag {
    /// The value of the first attribute called `name` (lower case), in the document's
    /// encoding, character references not decoded.
    fn get(&self, name: &str) -> Option<Cow<'_, str>>;
}

/// The tokenizer's last start tag.
struct ScannedTag<'t, 'a> {
    tokens: &'t Tokenizer<'a>,
    values: &'t Values<'a>,
    encoding: &'static Encoding,
}

impl StartTag for ScannedTag<'_, '_> {
    fn get(&self, name: &str) -> Option<Cow<'_, str>> {
        let raw = self.tokens.attr_range(name.as_bytes())?;
        Some(self.values.text(self.encoding, raw))
    }
}

/// The body attribute values are read from. Only the values read are checked, each on its
/// own: most tags' are not (`Tokenizer::keep_attributes_of`), and a whole body's check would
/// cost more than the few a page has.
struct Values<'a> {
    body: &'a [u8],
}

impl<'a> Values<'a> {
    fn new(body: &'a [u8]) -> Self {
        Values { body }
    }

    /// The text of the value at `at` in `encoding`, as `encoding.decode` gives it (which
    /// `lol_html` applied to attribute values), borrowed when that is the bytes as they are:
    /// ASCII in any encoding the tokenizer reads (each maps ASCII to itself, and no ASCII byte
    /// starts a byte order mark), or valid UTF-8 in UTF-8 that does not start with a byte order
    /// mark's first byte (`decode` obeys a mark).
    fn text(&self, encoding: &'static Encoding, at: Range<usize>) -> Cow<'a, str> {
        let raw = &self.body[at];
        if is_ascii(raw) {
            // SAFETY: ASCII bytes are valid UTF-8.
            return Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(raw) });
        }
        if encoding == UTF_8
            && !matches!(raw.first(), Some(0xEF | 0xFE | 0xFF))
            && let Ok(text) = std::str::from_utf8(raw)
        {
            return Cow::Borrowed(text);
        }
        encoding.decode(raw).0
    }
}

/// What the element handler accumulates while the document is read.
struct State<'a> {
    page_url: &'a Url,
    /// The base links are resolved against: the page URL until the first `<base href>`.
    base: Base,
    base_seen: bool,
    /// A `<meta http-equiv=refresh>` was taken: the standard takes only the first.
    refresh_seen: bool,
    max_links: usize,
    /// The robots token whose `<meta name>` is read besides `robots`.
    token: &'a str,
    out: PageLinks,
    /// The first of `out.distinct` with each canonical text, by the text's checksum.
    first: FxHashMap<u64, u32>,
    /// The visible text's fingerprint so far, when one is asked for.
    text: Option<Shingler>,
    /// The page is one `lol_html` reads differently (a `<noscript>` whose content was markup,
    /// see the module doc, or `url::html`'s exception); for the oracle tests.
    #[cfg(any(test, feature = "oracle"))]
    unlike_lol_html: bool,
}

impl<'a> State<'a> {
    /// A page's state, with room for the links a page of `body_len` bytes usually has.
    fn new(page_url: &'a Url, max_links: usize, token: &'a str, body_len: usize) -> Self {
        // Documentation pages have a link every ~250 bytes; room for one every 256 spares
        // most of the growing (a reallocation and a copy of every link each time).
        let expected = (body_len / 256).min(max_links).min(MAX_EXPECTED_LINKS);
        let out = PageLinks {
            text: String::with_capacity(expected * LINK_TEXT),
            distinct: Vec::with_capacity(expected),
            order: Vec::with_capacity(expected),
            rel_nofollow: Vec::with_capacity(expected),
            ..PageLinks::default()
        };
        State {
            page_url,
            base: Base::new(page_url.clone()),
            base_seen: false,
            refresh_seen: false,
            max_links,
            token,
            out,
            first: FxHashMap::with_capacity_and_hasher(expected, Default::default()),
            text: None,
            #[cfg(any(test, feature = "oracle"))]
            unlike_lol_html: false,
        }
    }
}

impl State<'_> {
    /// Reads the URL-bearing attributes of one element `name` (lower case). Returns whether the
    /// link limit was exceeded, which ends the reading. `<base>` is not read here (`set_base`).
    fn element(&mut self, name: &str, el: &impl StartTag) -> bool {
        match name {
            "a" | "area" => self.attr_rel(el, "href", false),
            "link" => {
                let requisite = el.get("rel").is_some_and(|rel| {
                    let rel = attribute_value(&rel);
                    rel.split(is_ascii_ws).any(is_requisite_rel)
                });
                self.attr_rel(el, "href", requisite);
            }
            "img" | "source" => {
                self.attr(el, "src", true);
                if let Some(srcset) = el.get("srcset") {
                    let srcset = attribute_value(&srcset);
                    for candidate in srcset_urls(&srcset) {
                        self.push(candidate, true);
                    }
                }
            }
            "video" => {
                self.attr(el, "src", true);
                self.attr(el, "poster", true);
            }
            "script" | "iframe" | "frame" | "embed" | "audio" | "track" | "input" => {
                self.attr(el, "src", true);
            }
            "object" => self.attr(el, "data", true),
            "form" => self.attr_rel(el, "action", false),
            "meta" => {
                self.meta_robots(el);
                self.meta_refresh(el);
            }
            _ => {}
        }
        self.out.truncated
    }

    /// `<meta http-equiv=refresh content=...>`: the `http-equiv` value is a keyword (any case,
    /// no spaces around it), and only the first refresh the standard's parser accepts counts.
    fn meta_refresh(&mut self, el: &impl StartTag) {
        if self.refresh_seen
            || !el
                .get("http-equiv")
                .is_some_and(|v| attribute_value(&v).eq_ignore_ascii_case("refresh"))
        {
            return;
        }
        let Some(content) = el.get("content") else {
            return;
        };
        let content = attribute_value(&content);
        let Some(url) = refresh_url(&content) else {
            return;
        };
        let javascript = |url: &str| {
            let url = url.trim_start_matches(|c: char| c <= ' ');
            url.get(..11)
                .is_some_and(|s| s.eq_ignore_ascii_case("javascript:"))
        };
        if url.is_some_and(javascript) {
            // The standard refuses a `javascript:` refresh and takes a later one.
            return;
        }
        self.refresh_seen = true;
        if let Some(url) = url {
            self.push(url, false);
        }
    }

    /// The first `<base href>` outside a template: its value, resolved against the page URL,
    /// becomes the base of every link; a value that does not parse or cannot serve as a base
    /// leaves the page URL (the standard's fallback). Returns whether links were already
    /// resolved (against the page URL): they are to be read again (`clear_links`).
    fn set_base(&mut self, href: &str) -> bool {
        self.base_seen = true;
        let href = attribute_value(href);
        if let Ok(base) = self.page_url.join(href.trim_matches(is_ascii_ws))
            && !base.cannot_be_a_base()
            && !matches!(base.scheme(), "data" | "javascript")
            && base != *self.page_url
        {
            self.base = Base::new(base);
            return !self.out.order.is_empty();
        }
        false
    }

    /// Forgets the links found (and the refresh taken), keeping the directives, which only
    /// add up, and the room.
    fn clear_links(&mut self) {
        self.out.text.clear();
        self.out.distinct.clear();
        self.out.order.clear();
        self.out.rel_nofollow.clear();
        self.out.requisite.clear();
        self.first.clear();
        self.out.truncated = false;
        self.refresh_seen = false;
    }

    /// The attribute `name` of `el` as a link (`requisite`: one the page needs to render).
    fn attr(&mut self, el: &impl StartTag, name: &str, requisite: bool) {
        if let Some(value) = el.get(name) {
            self.push(&attribute_value(&value), requisite);
        }
    }

    /// `attr`, marking the link `nofollow` when the element's `rel` has that keyword.
    fn attr_rel(&mut self, el: &impl StartTag, name: &str, requisite: bool) {
        let before = self.out.order.len();
        self.attr(el, name, requisite);
        if self.out.order.len() > before
            && let Some(rel) = el.get("rel")
            && attribute_value(&rel)
                .split(is_ascii_ws)
                .any(|kw| kw.eq_ignore_ascii_case("nofollow"))
        {
            *self.out.rel_nofollow.last_mut().expect("a link was pushed") = true;
        }
    }

    /// `<meta name="robots" content="...">`, or with the crawler's own token as the name.
    fn meta_robots(&mut self, el: &impl StartTag) {
        let Some(name) = el.get("name") else {
            return;
        };
        let name = name.trim_matches(is_ascii_ws);
        if !(name.eq_ignore_ascii_case("robots") || name.eq_ignore_ascii_case(self.token)) {
            return;
        }
        if let Some(content) = el.get("content") {
            self.out.directives.read_list(&content);
        }
    }

    /// The URLs of CSS (a `<style>`'s text, a `style` attribute's value, decoded; or a
    /// stylesheet), each a requisite. Returns whether the link limit was exceeded.
    fn css(&mut self, css: &str) -> bool {
        css_urls(css, &mut |url| {
            self.push(url, true);
            !self.out.truncated
        });
        self.out.truncated
    }

    /// A `style` attribute's value (character references not yet decoded): its `url()`s, if
    /// it may have any (a `(`; most have none). Returns whether the link limit was exceeded.
    fn style_attribute(&mut self, value: &str) -> bool {
        if !value.contains('(') {
            return self.out.truncated;
        }
        self.css(&attribute_value(value))
    }

    /// Resolves one raw (entity-decoded) value and records it (`requisite`: the page needs it
    /// to render), or sets `truncated`.
    fn push(&mut self, raw: &str, requisite: bool) {
        // `trim_ascii`'s white space is HTML's (`is_ascii_ws`), a byte at a time.
        let value = raw.trim_ascii();
        if value.is_empty() || self.out.truncated || has_dropped_scheme(value) {
            return;
        }
        // `join_into` also strips embedded tabs and newlines, as the URL standard says (its
        // fast path takes no value that has them). Canonical text goes onto the end of the
        // page's text, kept there if it is the URL's first occurrence.
        let start = self.out.text.len();
        let Ok(parsed) = join_into(&self.base, value, &mut self.out.text) else {
            return;
        };
        // Text joined without a parse is http(s) (`join_into`'s fast path takes no other
        // scheme).
        if let Some(parsed) = &parsed
            && DROPPED_SCHEMES.contains(&parsed.scheme())
        {
            return;
        }
        if self.out.order.len() >= self.max_links {
            self.out.text.truncate(start);
            self.out.truncated = true;
            return;
        }
        let PageLinks {
            text,
            distinct,
            requisite: requisites,
            ..
        } = &mut self.out;
        let index = match parsed {
            Some(url) => {
                distinct.push(PageLink::Parsed(url));
                mark(requisites, distinct.len() - 1, distinct.len(), requisite);
                distinct.len() - 1
            }
            None => {
                let at = start..text.len();
                let key = checksum(text[at.clone()].as_bytes());
                // The same text, not only the same checksum.
                let same = |i: &&u32| match &distinct[**i as usize] {
                    PageLink::Canonical { at: first, .. } => text[first.clone()] == text[start..],
                    PageLink::Parsed(_) => false,
                };
                // One look-up: a first occurrence is recorded through the same entry.
                match self.first.entry(key) {
                    Entry::Occupied(first) if same(&first.get()) => {
                        let i = *first.get() as usize;
                        text.truncate(start);
                        mark(requisites, i, distinct.len(), requisite);
                        i
                    }
                    entry => {
                        distinct.push(PageLink::Canonical { at, key });
                        let i = distinct.len() - 1;
                        mark(requisites, i, distinct.len(), requisite);
                        entry.or_insert(i as u32);
                        i
                    }
                }
            }
        };
        self.out.order.push(index as u32);
        self.out.rel_nofollow.push(false);
    }
}

/// Marks URL `i` of `distinct` (that many) a requisite if `requisite`; the marks stay empty
/// until one is (`PageLinks::requisite`), then one for each URL.
fn mark(marks: &mut Vec<bool>, i: usize, distinct: usize, requisite: bool) {
    if requisite || !marks.is_empty() {
        marks.resize(distinct, false);
    }
    if requisite {
        marks[i] = true;
    }
}

/// Whether a `<link rel>` keyword names something the page needs to render: a stylesheet
/// (`alternate stylesheet` too), an icon (`icon`, `shortcut icon`, Apple's and Safari's), or a
/// resource the page asks to be loaded early (`preload`, `modulepreload`), or its manifest.
fn is_requisite_rel(keyword: &str) -> bool {
    const KEYWORDS: [&str; 8] = [
        "stylesheet",
        "icon",
        "apple-touch-icon",
        "apple-touch-icon-precomposed",
        "mask-icon",
        "preload",
        "modulepreload",
        "manifest",
    ];
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(keyword))
}

fn is_ascii_ws(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ')
}

/// A cheap check before parsing, mainly so large `data:` URLs are never parsed.
fn has_dropped_scheme(value: &str) -> bool {
    DROPPED_SCHEMES.iter().any(|scheme| {
        value.len() > scheme.len()
            && value.as_bytes()[scheme.len()] == b':'
            && value.as_bytes()[..scheme.len()].eq_ignore_ascii_case(scheme.as_bytes())
    })
}

/// The URLs of a `srcset` value: comma-separated candidates `URL [descriptors]`.
///
/// Follows the HTML standard's tokenizer closely: a URL runs to the next whitespace, so it may
/// contain commas, except that trailing commas end the candidate; descriptors run to the next
/// comma outside parentheses. Descriptors are skipped, not validated, so a candidate with
/// invalid descriptors is still returned (a browser would drop it).
fn srcset_urls(srcset: &str) -> Vec<&str> {
    let mut urls = Vec::new();
    let mut rest = srcset;
    loop {
        rest = rest.trim_start_matches(|c| is_ascii_ws(c) || c == ',');
        if rest.is_empty() {
            return urls;
        }
        let end = rest.find(is_ascii_ws).unwrap_or(rest.len());
        let (url, after) = rest.split_at(end);
        rest = after;
        let trimmed = url.trim_end_matches(',');
        urls.push(trimmed);
        if trimmed.len() < url.len() {
            continue; // The commas ended the candidate: no descriptors.
        }
        let mut depth = 0usize;
        let end = rest
            .char_indices()
            .find(|&(_, c)| match c {
                '(' => {
                    depth += 1;
                    false
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    false
                }
                ',' => depth == 0,
                _ => false,
            })
            .map_or(rest.len(), |(i, _)| i);
        rest = &rest[end..];
    }
}

/// A `<meta http-equiv=refresh>` `content` value such as `5; url=/x`, `0;URL='/x'` or `3, /x`
/// read by the HTML standard's "shared declarative refresh steps" (§4.2.5.3, steps 2–11.10):
/// `None` if it is no refresh (`5x; url=/r`, `url=/r`), `Some(None)` for a delay without a URL
/// (a reload), else the URL string, not yet parsed. An empty URL string, which the standard
/// resolves to the page itself, is no URL here, as an empty `href` is none.
fn refresh_url(content: &str) -> Option<Option<&str>> {
    let skip_ws =
        |s: &str, at: usize| at + (s.len() - at - s[at..].trim_start_matches(is_ascii_ws).len());
    let bytes = content.as_bytes();
    let at_is = |at: usize, set: &[u8]| bytes.get(at).is_some_and(|c| set.contains(c));
    let mut at = skip_ws(content, 0);
    let digits = bytes[at..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 && !at_is(at, b".") {
        return None;
    }
    at += bytes[at..]
        .iter()
        .take_while(|c| c.is_ascii_digit() || **c == b'.')
        .count();
    if at < bytes.len() {
        if !at_is(at, b";, \t\n\x0c\r") {
            return None;
        }
        at = skip_ws(content, at);
        if at_is(at, b";,") {
            at += 1;
        }
        at = skip_ws(content, at);
    }
    if at >= bytes.len() {
        return Some(None);
    }
    let mut url = &content[at..];
    // `url`, spaces, `=`, spaces, then the value, perhaps quoted; without the `=` the whole
    // rest is the URL (`0; urlish`).
    let mut quoted_at = Some(at);
    if at_is(at, b"Uu") {
        quoted_at = None;
        let mut p = at + 1;
        if at_is(p, b"Rr") && at_is(p + 1, b"Ll") {
            p = skip_ws(content, p + 2);
            if at_is(p, b"=") {
                quoted_at = Some(skip_ws(content, p + 1));
            }
        }
    }
    if let Some(p) = quoted_at {
        url = &content[p..];
        if let Some(quote) = url.chars().next().filter(|&c| c == '"' || c == '\'') {
            url = &url[1..];
            url = url.find(quote).map_or(url, |end| &url[..end]);
        }
    }
    Some((!url.trim_matches(is_ascii_ws).is_empty()).then_some(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "http://example.com/dir/page.html";

    /// The path and query of a found URL (after its origin).
    fn path(found: &Found) -> &str {
        let text = found.as_str();
        let after = &text[text.find("://").unwrap() + 3..];
        &after[after.find('/').unwrap()..]
    }

    fn links_with(body: &[u8], charset: Option<&str>) -> Vec<String> {
        let page = Url::parse(PAGE).unwrap();
        let out = extract_links(body, &page, charset, 1000);
        assert!(!out.truncated);
        out.links.into_iter().map(String::from).collect()
    }

    fn links(body: &str) -> Vec<String> {
        links_with(body.as_bytes(), None)
    }

    /// The URL a refresh `content` names, if it is a refresh and names one.
    fn refresh_target(content: &str) -> Option<&str> {
        refresh_url(content).flatten()
    }

    /// `page_links` keeps each canonical text once and the document order as indices (a
    /// parsed URL once per link); expanded, it is `extract_links`' list, repeats and
    /// `rel=nofollow` flags where the page has them; the limit counts repeats.
    #[test]
    fn repeated_links_are_kept_once_with_their_order() {
        let page = Url::parse(PAGE).unwrap();
        let body = r#"<a href="/a">1</a><a href="b#x">2</a><a href="/a#top" rel=nofollow>3</a>
            <a href="HTTP://Example.com/c">4</a><a href="/dir/b">5</a><a href="HTTP://Example.com/c">6</a>"#;
        let got = page_links(body.as_bytes(), &page, None, 1000, "robots");
        let distinct: Vec<&str> = (got.distinct.iter())
            .map(|link| match link {
                PageLink::Canonical { at, key } => {
                    assert_eq!(*key, checksum(got.text[at.clone()].as_bytes()));
                    &got.text[at.clone()]
                }
                PageLink::Parsed(url) => url.as_str(),
            })
            .collect();
        let c = "http://example.com/c";
        assert_eq!(
            distinct,
            ["http://example.com/a", "http://example.com/dir/b", c, c]
        );
        assert_eq!(got.text, "http://example.com/ahttp://example.com/dir/b");
        assert!(matches!(got.distinct[2], PageLink::Parsed(_)));
        assert_eq!(got.order, [0, 1, 0, 2, 1, 3]);
        assert_eq!(got.rel_nofollow, [false, false, true, false, false, false]);
        let expanded = got.clone().into_extracted();
        let links: Vec<&str> = expanded.links.iter().map(path).collect();
        assert_eq!(links, ["/a", "/dir/b", "/a", "/c", "/dir/b", "/c"]);
        assert_eq!(expanded.rel_nofollow, got.rel_nofollow);
        let cut = page_links(body.as_bytes(), &page, None, 3, "robots");
        assert_eq!((cut.order, cut.truncated), (vec![0, 1, 0], true));
    }

    /// `Values::text`'s slice of a valid UTF-8 body gives what `encoding_rs` gives: byte order
    /// marks (which `decode` obeys, UTF-16 too), invalid and partial sequences (the body then
    /// invalid), other encodings.
    #[test]
    fn attribute_values_decode_as_encoding_rs_decodes_them() {
        let values: [&[u8]; 10] = [
            b"",
            b"/a b",
            b"\xEF\xBB\xBF/a",
            b"\xFE\xFF\x00/\x00a",
            b"\xFF\xFE/\x00a\x00",
            b"/caf\xC3\xA9",
            b"\xC3\xA9t\xC3\xA9",
            b"/bad\xC3",
            b"\xFF/x",
            b"/\xE9t\xE9",
        ];
        for encoding in [UTF_8, encoding_rs::WINDOWS_1252, encoding_rs::SHIFT_JIS] {
            for value in values {
                for after in [&b"'>"[..], b"'>\xC3"] {
                    let body = [b"<a href='", value, after].concat();
                    let at = 9..9 + value.len();
                    let text = Values::new(&body).text(encoding, at);
                    assert_eq!(text, encoding.decode(value).0, "{value:?} {after:?}");
                }
            }
        }
    }

    /// `interesting` names the elements `State::element` reads in any case, `<image>` in
    /// HTML only, and nothing else (prefixes and extensions of the names neither).
    #[test]
    fn interesting_elements_in_any_case() {
        let names = [
            "a", "area", "link", "img", "script", "iframe", "frame", "embed", "source", "audio",
            "video", "track", "input", "object", "form", "meta", "base",
        ];
        for name in names {
            for written in [
                name.to_owned(),
                name.to_uppercase(),
                name[..1].to_uppercase() + &name[1..],
            ] {
                for ns in [Namespace::Html, Namespace::Svg] {
                    assert_eq!(interesting(written.as_bytes(), ns), Some(name), "{written}");
                }
                assert_eq!(
                    interesting(format!("{written}s").as_bytes(), Namespace::Html),
                    None
                );
                let shorter = &written.as_bytes()[..written.len() - 1];
                assert_ne!(interesting(shorter, Namespace::Html), Some(name));
            }
        }
        assert_eq!(interesting(b"ImAgE", Namespace::Html), Some("img"));
        assert_eq!(interesting(b"image", Namespace::MathMl), None);
        for other in [
            "", "b", "div", "images", "scripts", "noscript", "\u{e9}", "a\0", "meta-x",
        ] {
            assert_eq!(
                interesting(other.as_bytes(), Namespace::Html),
                None,
                "{other}"
            );
        }
    }

    /// Each link's URL path and whether it is a requisite of the page.
    fn kinds(body: &str) -> Vec<(String, bool)> {
        let page = Url::parse(PAGE).unwrap();
        let out = extract_links(body.as_bytes(), &page, None, 1000);
        let requisite = |i| out.requisite.get(i).copied().unwrap_or(false);
        let paths = out.links.iter().map(|l| path(l).to_owned());
        paths.enumerate().map(|(i, p)| (p, requisite(i))).collect()
    }

    /// What a page needs to render is marked a requisite; hyperlinks, forms and refreshes are
    /// not; a URL both linked and embedded is a requisite wherever it occurs.
    #[test]
    fn requisites_are_what_the_page_needs_to_render() {
        let body = r#"<a href=/a>a</a><link rel=stylesheet href=/s.css><link rel="Shortcut Icon" href=/i.ico>
            <link rel=alternate href=/feed><link rel=next href=/2><link rel=preload href=/p.woff2>
            <img src=/img.png srcset="/1x.png 1x, /2x.png 2x"><script src=/s.js></script>
            <video src=/v.mp4 poster=/poster.jpg><source src=/v.webm><track src=/t.vtt></video>
            <audio src=/a.ogg></audio><iframe src=/frame></iframe><embed src=/e.swf><object data=/o.svg></object>
            <input type=image src=/button.png><form action=/search></form>
            <meta http-equiv=refresh content="0; url=/moved"><a href=/img.png>big</a>"#;
        let want = [
            ("/a", false),
            ("/s.css", true),
            ("/i.ico", true),
            ("/feed", false),
            ("/2", false),
            ("/p.woff2", true),
            ("/img.png", true),
            ("/1x.png", true),
            ("/2x.png", true),
            ("/s.js", true),
            ("/v.mp4", true),
            ("/poster.jpg", true),
            ("/v.webm", true),
            ("/t.vtt", true),
            ("/a.ogg", true),
            ("/frame", true),
            ("/e.swf", true),
            ("/o.svg", true),
            ("/button.png", true),
            ("/search", false),
            ("/moved", false),
            ("/img.png", true),
        ];
        let want: Vec<(String, bool)> = want.iter().map(|&(p, r)| (p.to_owned(), r)).collect();
        assert_eq!(kinds(body), want);
    }

    /// `<style>` text and `style` attributes are CSS: their `url()`s and `@import`s are
    /// requisites, resolved against the page's base; a `<style>` in SVG, a `<style>` inside a
    /// comment or a script, and a `url(` in a CSS comment or string are not read.
    #[test]
    fn style_elements_and_attributes_are_read_as_css() {
        let body = r#"<head><base href="http://example.com/b/"><style>
            @import "print.css" print; @import url(/reset.css);
            /* url(/comment.png) */ body { background: url('bg.png'); content: "url(/string.png)" }
            @font-face { font-family: X; src: url(&quot;font.woff2&quot;) }
            </style></head><body style="background-image: url(&quot;/attr.png&quot;)">
            <div style='background: image-set("/a1x.png" 1x, "/a2x.png" 2x)'>x</div>
            <p style="color: red">no parenthesis</p><p style="background: url(data:image/png;base64,AAAA)">
            <svg><style>rect { fill: url(/svg.png) }</style></svg>
            <script>var s = "<style>a { background: url(/script.png) }</style>";</script>
            <!-- <style>a { background: url(/comment2.png) }</style> -->
            <img src=/after.png style="border-image: url(/border.png)"></body>"#;
        let got = kinds(body);
        let want = [
            "/b/print.css",
            "/reset.css",
            "/b/bg.png",
            // `&quot;` stays itself in `<style>` text (raw text: no character references).
            "/b/&quot;font.woff2&quot;",
            "/attr.png",
            "/a1x.png",
            "/a2x.png",
            "/border.png",
            "/after.png",
        ];
        let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, want);
        assert!(got.iter().all(|(_, requisite)| *requisite));
    }

    /// A stylesheet's links resolve against its own URL, each a requisite, each distinct URL
    /// once; the link limit holds; its charset is the header's.
    #[test]
    fn stylesheet_links_resolve_against_the_sheet() {
        let sheet = Url::parse("http://cdn.test/css/site.css").unwrap();
        let css = "@import 'base.css'; a { background: url(../img/a.png) } b { background: url(../img/a.png) }
                   @font-face { src: url(/fonts/f.woff2) } c { background: url(data:image/gif;base64,R0lG) }";
        let got = stylesheet_links(css.as_bytes(), &sheet, None, 100).into_extracted();
        let urls: Vec<&str> = got.links.iter().map(Found::as_str).collect();
        assert_eq!(
            urls,
            [
                "http://cdn.test/css/base.css",
                "http://cdn.test/img/a.png",
                "http://cdn.test/img/a.png",
                "http://cdn.test/fonts/f.woff2",
            ]
        );
        assert_eq!(got.requisite, [true; 4]);
        let cut = stylesheet_links(css.as_bytes(), &sheet, None, 2);
        assert_eq!((cut.order.len(), cut.truncated), (2, true));
        let latin1: &[u8] = b"a { background: url(/caf\\e9.png) url(/caf\xe9.png) }";
        let latin1 = stylesheet_links(latin1, &sheet, Some("iso-8859-1"), 10);
        let urls: Vec<Found> = latin1.into_extracted().links;
        assert_eq!(
            urls.iter().map(path).collect::<Vec<_>>(),
            ["/caf%C3%A9.png"; 2]
        );
    }

    #[test]
    fn every_attribute_kind() {
        let body = r#"<html><head>
            <link rel=stylesheet href="/style.css">
            <script src="/app.js"></script>
            <meta http-equiv="refresh" content="5; url=/refreshed">
            </head><body>
            <a href="/a">a</a>
            <map><area href="/area"></map>
            <img src="/img.png" srcset="/small.png 1x, /big.png 2x">
            <picture><source src="/source.webm" srcset="/s1.jpg 480w"></picture>
            <iframe src="/iframe"></iframe>
            <frameset><frame src="/frame"></frameset>
            <embed src="/embed">
            <audio src="/audio.ogg"></audio>
            <video src="/video.mp4" poster="/poster.jpg"><track src="/subs.vtt"></video>
            <object data="/object.swf"></object>
            <form action="/search"><input type=image src="/button.png"></form>
            </body></html>"#;
        let expected: Vec<String> = [
            "/style.css",
            "/app.js",
            "/refreshed",
            "/a",
            "/area",
            "/img.png",
            "/small.png",
            "/big.png",
            "/source.webm",
            "/s1.jpg",
            "/iframe",
            "/frame",
            "/embed",
            "/audio.ogg",
            "/video.mp4",
            "/poster.jpg",
            "/subs.vtt",
            "/object.swf",
            "/search",
            "/button.png",
        ]
        .iter()
        .map(|path| format!("http://example.com{path}"))
        .collect();
        assert_eq!(links(body), expected);
    }

    #[test]
    fn elements_without_url_attributes_yield_nothing() {
        let body = r#"<a name="x">x</a><img alt="y"><form method=post>
            <meta name=x content="5; url=/no">"#;
        assert!(links(body).is_empty());
    }

    #[test]
    fn duplicates_are_kept_in_document_order() {
        assert_eq!(
            links(r#"<a href="/b"></a><a href="/a"></a><a href="/b"></a>"#),
            [
                "http://example.com/b",
                "http://example.com/a",
                "http://example.com/b"
            ]
        );
    }

    #[test]
    fn entities_are_decoded_before_joining() {
        assert_eq!(
            links(r#"<a href="a?x=1&amp;y=2">x</a><a href="&#x2F;b&#47;c">y</a>"#),
            ["http://example.com/dir/a?x=1&y=2", "http://example.com/b/c"]
        );
    }

    #[test]
    fn entities_without_semicolon_stay_literal() {
        // Browsers also leave `&copy=` alone in attributes; `html_escape` decodes only
        // references that end in `;`, so query parameters named like entities survive.
        assert_eq!(
            links(r#"<a href="?a=1&copy=2&not=3&amp;times=4">x</a>"#),
            ["http://example.com/dir/page.html?a=1&copy=2&not=3&times=4"]
        );
    }

    /// Character references as the standard's tokenizer reads them in attribute values
    /// (`html::charref` has the rules case by case).
    #[test]
    fn character_references_follow_the_standard() {
        let e = |path: &str| format!("http://example.com{path}");
        // `;` is optional after a numeric reference.
        assert_eq!(links(r#"<a href="/a?x=1&#38b=2">"#), [e("/a?x=1&b=2")]);
        // 0, surrogates and values past U+10FFFF are U+FFFD; 0x80–0x9F are Windows-1252.
        assert_eq!(
            links(r#"<a href="/n&#0;x"><a href="/s&#xD800;x"><a href="/b&#x110000;x">"#),
            [e("/n%EF%BF%BDx"), e("/s%EF%BF%BDx"), e("/b%EF%BF%BDx")]
        );
        assert_eq!(
            links(r#"<a href="/e&#128;&#x9C;">"#),
            [e("/e%E2%82%AC%C5%93")]
        );
        // Legacy names without `;`: decoded unless `=` or an alphanumeric follows.
        assert_eq!(links(r#"<a href="/p?v=&gt x&lt">"#), [e("/p?v=%3E%20x%3C")]);
        assert_eq!(
            links(
                r#"<a href="/p?id=&pound_id"><a href="/p?a=1&copy=2"><a href="/p?n=&not_x&notit;">"#
            ),
            [
                e("/p?id=%C2%A3_id"),
                e("/p?a=1&copy=2"),
                e("/p?n=%C2%AC_x&notit;")
            ]
        );
        // The same in `srcset`, a refresh's `content` and `rel`.
        assert_eq!(
            links(
                r#"<img srcset="/s&#49;.png 1x,/s&#x32.png 2x"><a href=/nf rel="&#110;ofollow">
                <meta http-equiv="&#x72;efresh" content="0;url=/r&amp;x">"#
            ),
            [e("/s1.png"), e("/s2.png"), e("/nf"), e("/r&x")]
        );
    }

    #[test]
    fn nul_in_an_attribute_value_is_the_replacement_character() {
        assert_eq!(
            links_with(b"<a href=\"/x\0y\">", None),
            ["http://example.com/x%EF%BF%BDy"]
        );
    }

    #[test]
    fn image_is_read_as_img_in_html_only() {
        assert_eq!(
            links(r#"<IMAGE src="/i.png" srcset="/j.png 2x"><svg><image src="/svg.png"></svg>"#),
            ["http://example.com/i.png", "http://example.com/j.png"]
        );
    }

    #[test]
    fn a_base_in_a_template_is_not_the_documents() {
        assert_eq!(
            links(
                r#"<template><base href="http://t.test/"><a href="x"></template>
                <base href="http://b.test/"><a href="y">"#
            ),
            ["http://b.test/x", "http://b.test/y"]
        );
        // Nested templates; a template in SVG is not one.
        assert_eq!(
            links(
                r#"<template><template></template><base href="http://t.test/"></template>
                <a href="x">"#
            ),
            ["http://example.com/dir/x"]
        );
        assert_eq!(
            links(r#"<svg><template></template></svg><base href="http://b.test/"><a href="x">"#),
            ["http://b.test/x"]
        );
        assert_eq!(
            links(
                r#"<svg><base href="http://s.test/"></svg><base href="http://b.test/"><a href="x">"#
            ),
            ["http://b.test/x"]
        );
    }

    #[test]
    fn links_before_the_base_are_read_again_against_it() {
        let page = Url::parse(PAGE).unwrap();
        let body = r#"<link rel=nofollow href="a.css"><meta name=robots content=noindex>
            <meta http-equiv=refresh content="0;url=r"><a href="a.css"></a>
            <base href="http://b.test/d/"><a href="after"></a><a href="a.css"></a>"#;
        let got = page_links(body.as_bytes(), &page, None, 100, "crawl");
        assert!(got.directives.noindex);
        let out = got.into_extracted();
        let urls: Vec<&str> = out.links.iter().map(|l| l.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://b.test/d/a.css",
                "http://b.test/d/r",
                "http://b.test/d/a.css",
                "http://b.test/d/after",
                "http://b.test/d/a.css"
            ]
        );
        assert_eq!(out.rel_nofollow, [true, false, false, false, false]);
        // At the link limit before the base, the base is still looked for.
        let body =
            r#"<a href="1"><a href="2"><a href="3"><base href="http://b.test/"><a href="4">"#;
        let out = extract_links(body.as_bytes(), &page, None, 2);
        let urls: Vec<&str> = out.links.iter().map(|l| l.as_str()).collect();
        assert_eq!(urls, ["http://b.test/1", "http://b.test/2"]);
        assert!(out.truncated);
    }

    #[test]
    fn noscript_ends_at_its_end_tag_not_inside_an_attribute_or_a_comment() {
        assert_eq!(
            links(
                r#"<noscript><a title="</noscript>" href="/ns">x</a><!-- </noscript> -->
                <a href="/ns2"></noscript><a href="/after">"#
            ),
            [
                "http://example.com/ns",
                "http://example.com/ns2",
                "http://example.com/after"
            ]
        );
    }

    #[test]
    fn only_refreshes_the_standard_accepts_and_only_the_first() {
        let e = |path: &str| format!("http://example.com{path}");
        let refresh = |http_equiv: &str, content: &str| {
            links(&format!(
                r#"<meta http-equiv="{http_equiv}" content="{content}"><a href=/a>"#
            ))
        };
        assert_eq!(refresh("refresh", "5x; url=/r"), [e("/a")]);
        assert_eq!(refresh(" refresh", "0; url=/r"), [e("/a")]);
        assert_eq!(refresh("refresh ", "0; url=/r"), [e("/a")]);
        assert_eq!(refresh("REFRESH", "0; url=/r"), [e("/r"), e("/a")]);
        assert_eq!(refresh("refresh", ".5 url=/r"), [e("/r"), e("/a")]);
        assert_eq!(
            links(
                r#"<meta http-equiv=refresh content="x"><meta http-equiv=refresh content="0;url='javascript:x'">
                <meta http-equiv=refresh content="0; url=/r3"><meta http-equiv=refresh content="0; url=/r4">"#
            ),
            [e("/r3")]
        );
        // A refresh without a URL is the first one too.
        assert!(
            links(
                r#"<meta http-equiv=refresh content=5><meta http-equiv=refresh content="0;url=/r">"#
            )
            .is_empty()
        );
    }

    #[test]
    fn the_first_base_applies_to_every_link_and_only_it_counts() {
        let body = r#"<a href="before"></a>
            <base target="_blank">
            <base href="http://other.org/base/">
            <a href="after"></a>
            <base href="http://third.net/">
            <a href="/rooted"></a>"#;
        assert_eq!(
            links(body),
            [
                "http://other.org/base/before",
                "http://other.org/base/after",
                "http://other.org/rooted",
            ]
        );
    }

    #[test]
    fn relative_base_is_joined_against_the_page_url() {
        assert_eq!(
            links(r#"<base href="../sub/"><a href="x">x</a>"#),
            ["http://example.com/sub/x"]
        );
    }

    #[test]
    fn unusable_base_is_ignored() {
        assert_eq!(
            links(r#"<base href="javascript:void(0)"><a href="x">x</a>"#),
            ["http://example.com/dir/x"]
        );
    }

    #[test]
    fn relative_references() {
        let body = r##"<a href="../up"></a><a href="./same"></a><a href="?q=1"></a>
            <a href="//cdn.example.net/lib.js"></a><a href="#frag"></a>
            <a href="HTTPS://Example.COM:443/x"></a>"##;
        assert_eq!(
            links(body),
            [
                "http://example.com/up",
                "http://example.com/dir/same",
                "http://example.com/dir/page.html?q=1",
                "http://cdn.example.net/lib.js",
                "http://example.com/dir/page.html",
                "https://example.com/x",
            ]
        );
    }

    #[test]
    fn whitespace_is_trimmed_and_empty_values_skipped() {
        assert_eq!(
            links(
                "<a href=\"  /x\n\">x</a><a href=\"/a\tb\"></a>\
                 <a href=\"\"></a><a href=\"  \"></a><a href></a>"
            ),
            ["http://example.com/x", "http://example.com/ab"]
        );
    }

    #[test]
    fn unfetchable_schemes_are_dropped_but_others_kept() {
        let body = r#"<a href="javascript:go()"></a><a href="MAILTO:a@b.c"></a>
            <img src="data:image/png;base64,AAAA"><a href="tel:+123"></a>
            <a href="java&#x09;script:x()"></a>
            <a href="ftp://files.example.com/f"></a><a href="http://[bad"></a>"#;
        assert_eq!(links(body), ["ftp://files.example.com/f"]);
    }

    #[test]
    fn srcset_parsing() {
        assert_eq!(
            srcset_urls("a.jpg 1x, b.jpg 2x,c.jpg, d.jpg 100w"),
            ["a.jpg", "b.jpg", "c.jpg", "d.jpg"]
        );
        // A comma inside a URL is kept; only trailing commas end a candidate.
        assert_eq!(
            srcset_urls("/img?w=1,h=2 1x,/x.jpg,, /y.jpg"),
            ["/img?w=1,h=2", "/x.jpg", "/y.jpg"]
        );
        // Commas inside parenthesised descriptors do not split.
        assert_eq!(srcset_urls("a.jpg (foo, bar), b.jpg"), ["a.jpg", "b.jpg"]);
        assert_eq!(srcset_urls("  \n , "), Vec::<&str>::new());
        assert_eq!(srcset_urls("single.png"), ["single.png"]);
    }

    #[test]
    fn meta_refresh_variants() {
        assert_eq!(refresh_target("5; url=/x"), Some("/x"));
        assert_eq!(refresh_target("0;URL='/x'"), Some("/x"));
        assert_eq!(refresh_target("0; Url = \"/x y\" trailing"), Some("/x y"));
        assert_eq!(refresh_target("3, /plain"), Some("/plain"));
        assert_eq!(refresh_target("1.5;url=/dec"), Some("/dec"));
        assert_eq!(refresh_target("0; urlish"), Some("urlish"));
        assert_eq!(
            refresh_target("0;url='/unterminated"),
            Some("/unterminated")
        );
        assert_eq!(refresh_target("5"), None);
        assert_eq!(refresh_target("5; "), None);
        assert_eq!(refresh_target("url=/no-delay"), None);
        // Not refreshes at all, or refreshes of the page itself.
        assert_eq!(refresh_url("5x; url=/r"), None);
        assert_eq!(refresh_url("url=/r"), None);
        assert_eq!(refresh_url(""), None);
        assert_eq!(refresh_url(" 5 "), Some(None));
        assert_eq!(refresh_url("5;url="), Some(None));
        assert_eq!(refresh_url("5 ; , /x"), Some(Some(", /x")));
        assert_eq!(refresh_url("0;URL  =  '/q' x"), Some(Some("/q")));
        assert_eq!(refresh_url("0;ur=/x"), Some(Some("ur=/x")));
        assert_eq!(
            links(r#"<META HTTP-EQUIV="Refresh" CONTENT="0;URL='/moved?a=1&amp;b=2'">"#),
            ["http://example.com/moved?a=1&b=2"]
        );
    }

    #[test]
    fn malformed_markup() {
        let body = "<div><p>unclosed <a href=/one>one<a href=two.html>two\
                    <img src=three.png alt=x y z><b <a href='/four'> 1 < 2 <<a href=\"/five\"\
                    </table></td><a href=/six";
        // As in a browser: `<b <a href='/four'>` is a `b` element with an attribute named `<a`,
        // and the tag left open at the end of the input is dropped.
        assert_eq!(
            links(body),
            [
                "http://example.com/one",
                "http://example.com/dir/two.html",
                "http://example.com/dir/three.png",
                "http://example.com/five",
            ]
        );
    }

    #[test]
    fn markup_inside_text_comments_and_scripts_is_not_a_link() {
        let body = "<textarea><a href=/no></textarea>\
                    <script>document.write('<a href=/js>')</script>\
                    <!-- <a href=/comment> --><title><a href=/t></title><a href=/yes>";
        assert_eq!(links(body), ["http://example.com/yes"]);
    }

    #[test]
    fn invalid_utf8_does_not_stop_extraction() {
        let body = b"<p>\xff\xfe\xc3</p><a href=\"/ok\">\x80</a><a href=\"/bad\xffbyte\">";
        assert_eq!(
            links_with(body, None),
            [
                "http://example.com/ok",
                "http://example.com/bad%EF%BF%BDbyte"
            ]
        );
    }

    #[test]
    fn latin1_header_charset_decodes_hrefs() {
        let body = b"<a href=\"/caf\xe9\">caf\xe9</a>";
        assert_eq!(
            links_with(body, Some("ISO-8859-1")),
            ["http://example.com/caf%C3%A9"]
        );
    }

    #[test]
    fn meta_charset_is_honoured_without_a_header_charset() {
        let body = b"<meta charset=\"windows-1252\"><a href=\"/caf\xe9\">x</a>";
        assert_eq!(links_with(body, None), ["http://example.com/caf%C3%A9"]);
        // The header wins over the meta tag.
        let body = "<meta charset=\"windows-1252\"><a href=\"/café\">x</a>";
        assert_eq!(
            links_with(body.as_bytes(), Some("utf-8")),
            ["http://example.com/caf%C3%A9"]
        );
    }

    #[test]
    fn unknown_or_non_ascii_compatible_charset_falls_back_to_utf8() {
        let body = "<a href=\"/café\">x</a>";
        let expected = ["http://example.com/caf%C3%A9"];
        assert_eq!(
            links_with(body.as_bytes(), Some("no-such-charset")),
            expected
        );
        assert_eq!(links_with(body.as_bytes(), Some("utf-16le")), expected);
    }

    #[test]
    fn truncation_at_max_links() {
        let page = Url::parse(PAGE).unwrap();
        let body: String = (0..10).map(|i| format!("<a href=\"/{i}\">")).collect();
        let out = extract_links(body.as_bytes(), &page, None, 3);
        assert!(out.truncated);
        let got: Vec<_> = out.links.iter().map(path).collect();
        assert_eq!(got, ["/0", "/1", "/2"]);

        let exact = extract_links(body.as_bytes(), &page, None, 10);
        assert!(!exact.truncated);
        assert_eq!(exact.links.len(), 10);

        let none = extract_links(body.as_bytes(), &page, None, 0);
        assert!(none.truncated);
        assert!(none.links.is_empty());
    }

    #[test]
    fn deeply_nested_markup_does_not_blow_the_stack() {
        let mut body = "<div>".repeat(10_000);
        body.push_str("<a href=\"/deep\">deep</a>");
        body.push_str(&"</div>".repeat(10_000));
        assert_eq!(links(&body), ["http://example.com/deep"]);
    }

    #[test]
    fn large_body_is_read_whole() {
        // 5 MB of markup (more than lol_html's 4 MiB memory cap): every link is read.
        let filler = "x".repeat(997);
        let body: String = (0..5_000)
            .map(|i| format!("<p>{filler}</p><a href=\"/{i}\">"))
            .collect();
        let page = Url::parse(PAGE).unwrap();
        let out = extract_links(body.as_bytes(), &page, None, usize::MAX);
        assert_eq!(out.links.len(), 5_000);
        assert_eq!(path(&out.links[4_999]), "/4999");
    }

    #[test]
    fn a_huge_tag_costs_no_copy_and_links_after_it_count() {
        // lol_html buffered a start tag whole and gave up past 4 MiB; the tokenizer keeps ranges.
        let mut body = String::from("<a href=\"/first\"></a><a title=\"");
        body.push_str(&"y".repeat(8 << 20));
        body.push_str("\" href=\"/huge\"><a href=\"/after\">");
        assert_eq!(
            links(&body),
            [
                "http://example.com/first",
                "http://example.com/huge",
                "http://example.com/after"
            ]
        );
    }

    #[test]
    fn empty_body() {
        assert!(links("").is_empty());
    }

    #[test]
    fn unclosed_elements_do_not_stop_extraction() {
        // lol_html's stack of open elements hit its cap here ("links-cut"); the tokenizer keeps
        // no such stack.
        let page = Url::parse("http://a.test/").unwrap();
        let mut html = String::from("<a href=/first>f</a>");
        html.push_str(&"<div>".repeat(200_000));
        html.push_str("<a href=/deep>d</a>");
        let got = extract_links(html.as_bytes(), &page, None, 100);
        assert!(!got.truncated);
        let urls: Vec<&str> = got.links.iter().map(path).collect();
        assert_eq!(urls, ["/first", "/deep"]);
        let capped = extract_links(b"<a href=/x>x</a><a href=/y>y</a>", &page, None, 1);
        assert!(capped.truncated);
    }

    #[test]
    fn rel_nofollow_marks_links() {
        let page = Url::parse(PAGE).unwrap();
        let body = r#"<a href="/a">a</a><a rel="external NOFOLLOW" href="/b">b</a>
            <link rel=nofollow href="/c"><area href="/d" rel="noopener">
            <form rel="nofollow" action="/e"></form><img rel=nofollow src="/f">
            <a rel=nofollow>no href</a><a href="/g">g</a>"#;
        let out = extract_links(body.as_bytes(), &page, None, 100);
        let got: Vec<(&str, bool)> = out
            .links
            .iter()
            .map(path)
            .zip(out.rel_nofollow.iter().copied())
            .collect();
        assert_eq!(
            got,
            [
                ("/a", false),
                ("/b", true),
                ("/c", true),
                ("/d", false),
                ("/e", true),
                ("/f", false), // `rel` is not an attribute of `img`
                ("/g", false),
            ]
        );
    }

    #[test]
    fn meta_robots_and_the_crawlers_own_token() {
        let page = Url::parse(PAGE).unwrap();
        let read = |body: &str, token: &str| {
            extract_page(body.as_bytes(), &page, None, 100, token).directives
        };
        let both = Directives {
            nofollow: true,
            noindex: true,
        };
        assert_eq!(
            read(
                r#"<meta name="robots" content="noindex,nofollow">"#,
                "crawl"
            ),
            both
        );
        assert_eq!(
            read(r#"<META NAME=" Robots " CONTENT="none">"#, "crawl"),
            both
        );
        assert!(read(r#"<meta name="crawl" content="nofollow">"#, "Crawl").nofollow);
        assert_eq!(
            read(r#"<meta name="otherbot" content="nofollow">"#, "crawl"),
            Directives::default()
        );
        // `extract_links` reads only `robots`.
        let own = r#"<meta name="crawl" content="noindex">"#;
        assert_eq!(
            extract_links(own.as_bytes(), &page, None, 100).directives,
            Directives::default()
        );
        // A meta tag in the body, or after the links, still counts for the whole page.
        let late = r#"<a href="/x">x</a><meta name=robots content=noindex>"#;
        assert!(read(late, "crawl").noindex);
        assert_eq!(
            read(r#"<meta name="description" content="nofollow">"#, "crawl"),
            Directives::default()
        );
    }

    #[test]
    fn noscript_content_is_read_as_markup_in_head_and_body() {
        let body = r#"<html><head><noscript><link rel=stylesheet href="/ns.css"></noscript>
            <link rel=stylesheet href="/main.css"></head>
            <body><a href="/before">b</a>
            <noscript><p>Enable JS or <a href="/static&amp;plain">go here</a>
            <img src="pixel.gif"></noscript>
            <a href="/after">a</a></body></html>"#;
        assert_eq!(
            links(body),
            [
                "http://example.com/ns.css",
                "http://example.com/main.css",
                "http://example.com/before",
                "http://example.com/static&plain",
                "http://example.com/dir/pixel.gif",
                "http://example.com/after",
            ]
        );
    }

    #[test]
    fn noscript_uses_the_base_in_effect_and_can_set_it() {
        let body = r#"<base href="http://other.org/b/"><noscript><a href="x">x</a></noscript>
            <a href="y">y</a>"#;
        assert_eq!(
            links(body),
            ["http://other.org/b/x", "http://other.org/b/y"]
        );
        let body = r#"<noscript><base href="http://other.org/"><a rel=nofollow href="x">x</a>
            <meta name=robots content=nofollow></noscript><a href="y">y</a>"#;
        let page = Url::parse(PAGE).unwrap();
        let out = extract_links(body.as_bytes(), &page, None, 100);
        let urls: Vec<String> = out.links.iter().map(|l| l.as_str().to_owned()).collect();
        assert_eq!(urls, ["http://other.org/x", "http://other.org/y"]);
        assert_eq!(out.rel_nofollow, [true, false]);
        assert!(out.directives.nofollow);
    }

    #[test]
    fn noscript_content_is_markup_at_any_depth_and_length() {
        // Read once, as markup (scripts off): neither nesting nor length costs a second
        // reading, so neither is cut.
        let mut body = "<noscript>".repeat(3);
        body.push_str("<a href=/deep>d</a>");
        assert_eq!(links(&body), ["http://example.com/deep"]);
        let body = "<noscript><noscript><a href=/two>t</a></noscript></noscript>";
        assert_eq!(links(body), ["http://example.com/two"]);
        let filler = "x".repeat(2 << 20);
        let body = format!(
            "<noscript><a href=/kept>k</a>{filler}<a href=/far>l</a></noscript><a href=/out>o</a>"
        );
        assert_eq!(
            links(&body),
            [
                "http://example.com/kept",
                "http://example.com/far",
                "http://example.com/out"
            ]
        );
        // The link limit counts noscript links too.
        let page = Url::parse(PAGE).unwrap();
        let body =
            "<a href=/1>1</a><noscript><a href=/2>2</a><a href=/3>3</a></noscript><a href=/4>";
        let out = extract_links(body.as_bytes(), &page, None, 2);
        assert!(out.truncated);
        assert_eq!(out.links.len(), 2);
        // Markup inside a script in noscript stays text.
        assert!(links("<noscript><script>'<a href=/js>'</script></noscript>").is_empty());
    }
}
