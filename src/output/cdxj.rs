//! CDXJ indexes beside the WARC files: `NAME.warc.gz.cdxj` (or `.warc.zst.cdxj`) lists each
//! `response` and `revisit` record of `NAME.warc.gz` as one line, `SURT-key timestamp {json}`,
//! exactly as pywb's `cdxj-indexer` writes it (same key, same fields in the same order, same
//! JSON spacing), sorted by line. Replay tools (pywb, replayweb.page) find a capture through it.
//!
//! The line is built as the record is written (the writer knows its offset and compressed
//! length), appended to `NAME.cdxj.open`; when the WARC file is closed, the open index is sorted
//! (in memory, or in sorted runs merged from disk past `CRAWL_CDXJ_SORT_BYTES`, 8 MiB) into
//! `NAME.cdxj` through `state::durable`, and the `.open` file is removed.
//!
//! Crash safety. `NAME.cdxj` exists only complete and sorted (renamed into place). A kill can
//! leave a `.cdxj.open` (lines lost in a buffer, or a record written and its line not), or a
//! finished WARC file without its index. [`CdxjWriter::open`], run after the WARC writer has
//! repaired its torn files, removes every `.cdxj.open` and rebuilds the index of each WARC file
//! that has none by reading the WARC file itself ([`index_warc`]): the WARC file is the truth.
//!
//! The key is the SURT form of the `surt` Python package's defaults (what `cdxj-indexer` uses):
//! scheme dropped, host lower-cased with a leading `www.` (or `www2.`…) dropped and its labels
//! reversed (IPv4 addresses too: `1,0,0,127:8080)/`), default port dropped, path and query
//! lower-cased, a trailing slash dropped, query arguments sorted, session ids removed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};

use crate::output::names::{self, WarcDirFile, index_path};
use crate::output::warc::Compression;
use crate::state::{durable, failpoint};

/// One `response` or `revisit` record, as its index line needs it.
#[derive(Clone, Debug)]
pub struct Capture<'a> {
    /// The record's `WARC-Target-URI`.
    pub target_uri: &'a str,
    /// The record's `WARC-Date` (`YYYY-MM-DDThh:mm:ssZ`).
    pub warc_date: &'a str,
    /// A `revisit` record (its line's `mime` is `warc/revisit`), else a `response`.
    pub revisit: bool,
    /// The HTTP status line and headers (the start of the record's block).
    pub http_head: &'a [u8],
    /// The record's `WARC-Payload-Digest`. A revisit of the server-not-modified profile has
    /// none, and its line has no `digest` (as cdxj-indexer writes it).
    pub payload_digest: Option<&'a str>,
    /// Where the record's compressed unit starts in its file.
    pub offset: u64,
    /// The compressed unit's length.
    pub length: u64,
    /// The WARC file's name (no directory).
    pub filename: &'a str,
}

/// The index line of a capture, without its newline.
pub fn line(c: &Capture) -> String {
    let mut out = String::with_capacity(256);
    push_line(&mut out, c);
    out
}

/// Appends the index line of a capture, without its newline, to `out`: built in place, with no
/// allocation of its own when the URL takes `surt`'s common path and the head is UTF-8.
fn push_line(out: &mut String, c: &Capture) {
    // Valid UTF-8 (nearly every head) is checked at `from_utf8`'s speed, not `from_utf8_lossy`'s.
    let head = match std::str::from_utf8(c.http_head) {
        Ok(head) => std::borrow::Cow::Borrowed(head),
        Err(_) => String::from_utf8_lossy(c.http_head),
    };
    let (status, content_type) = http_status_and_type(&head);
    let mime = if c.revisit {
        Some("warc/revisit")
    } else {
        // cdxj-indexer: the Content-Type up to the first `;` or white space.
        content_type.map(|t| {
            t.split(|ch: char| ch == ';' || ch.is_whitespace())
                .next()
                .unwrap_or("")
                .trim()
        })
    };
    push_surt(out, c.target_uri);
    out.push(' ');
    push_timestamp(out, c.warc_date);
    out.push_str(" {");
    let fields = [
        ("url", Some(c.target_uri)),
        ("mime", mime),
        ("status", status),
        ("digest", c.payload_digest),
    ];
    for (name, value) in fields {
        let Some(value) = value else { continue };
        json_string(out, name);
        out.push_str(": ");
        json_string(out, value);
        out.push_str(", ");
    }
    // Numbers are strings in cdxj-indexer's lines; digits need no escaping.
    let _ = write!(
        out,
        "\"length\": \"{}\", \"offset\": \"{}\", ",
        c.length, c.offset
    );
    json_string(out, "filename");
    out.push_str(": ");
    json_string(out, c.filename);
    out.push('}');
}

/// `2023-11-14T22:13:22Z` → `20231114221322`, appended to `out`: the first 14 digits, padded
/// with `0` to 14, as `iso_date_to_timestamp` does.
fn push_timestamp(out: &mut String, warc_date: &str) {
    let digits = warc_date.chars().filter(char::is_ascii_digit).take(14);
    let mut n = 0;
    for digit in digits {
        out.push(digit);
        n += 1;
    }
    out.extend(std::iter::repeat_n('0', 14 - n));
}

/// A JSON string as Python's `json.dumps` writes it (`ensure_ascii`: non-ASCII as `\uXXXX`).
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    // The printable ASCII before the first character to escape (if any) goes in as it is.
    let plain = s
        .bytes()
        .position(|b| !matches!(b, b' '..=b'~') || b == b'"' || b == b'\\')
        .unwrap_or(s.len());
    out.push_str(&s[..plain]);
    for ch in s[plain..].chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(ch),
            _ => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// The status code and the first `Content-Type` of an HTTP response head (decoded), if it has
/// them.
fn http_status_and_type(text: &str) -> (Option<&str>, Option<&str>) {
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .filter(|s| !s.is_empty());
    let content_type = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| value.trim());
    (status, content_type)
}

/// The SURT key of a URL, as the `surt` package's `surt(url)` makes it (see the module doc).
#[cfg(test)]
fn surt(url: &str) -> String {
    let mut out = String::new();
    push_surt(&mut out, url);
    out
}

/// `surt`, appended to `out`.
fn push_surt(out: &mut String, url: &str) {
    if !push_common_surt(out, url) {
        out.push_str(&surt_of_any(url));
    }
}

/// `surt` of the common URL, written straight into `out`: `http://` or `https://`, printable
/// ASCII without `%`, `#`, `@`, `[`, `]` or `\`, a host without empty labels, a numeric port,
/// and a path without `.`, `..` or empty segments (a trailing slash aside) and without `)/`.
/// Every step of `surt_of_any` leaves such a URL's host and path as they are but for case, so
/// it is lower-cased, its host labels reversed, and its query (if any) canonicalized as there.
/// Returns false, having written nothing, for any other URL (`surt_of_any` then takes it).
fn push_common_surt(out: &mut String, url: &str) -> bool {
    let (rest, default_port) = if let Some(rest) = url.strip_prefix("http://") {
        (rest, 80)
    } else if let Some(rest) = url.strip_prefix("https://") {
        (rest, 443)
    } else {
        return false;
    };
    let plain = |b: u8| b > b' ' && b <= b'~' && !b"%#@[]\\".contains(&b);
    if !rest.bytes().all(plain) {
        return false;
    }
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path_query) = rest.split_at(authority_end);
    let (path, query) = match path_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_query, None),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => {
            if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
                return false;
            }
            match port.parse::<u32>() {
                Ok(port) => (host, Some(port).filter(|&p| p != default_port)),
                Err(_) => return false,
            }
        }
        None => (authority, None),
    };
    if host.is_empty() || host.contains(':') || host.split('.').any(str::is_empty) {
        return false;
    }
    let mut segments = path.split('/').skip(1).peekable();
    while let Some(segment) = segments.next() {
        let last = segments.peek().is_none();
        if segment == "." || segment == ".." || (segment.is_empty() && !last) {
            return false;
        }
    }
    if path.contains(")/") {
        return false;
    }
    let host = &host[www_prefix_len(host)..];
    for (i, label) in host.rsplit('.').enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.extend(label.chars().map(|c| c.to_ascii_lowercase()));
    }
    if let Some(port) = port {
        let _ = write!(out, ":{port}");
    }
    out.push(')');
    let path = match path {
        "" => "/",
        p if p.len() > 1 => p.strip_suffix('/').unwrap_or(p),
        p => p,
    };
    out.extend(path.chars().map(|c| c.to_ascii_lowercase()));
    if let Some(query) = query.and_then(canonical_query) {
        out.push('?');
        out.push_str(&query);
    }
    true
}

/// The length of a leading `www.`, `www2.`, … (any case), or 0 (surt's `massageHost`).
fn www_prefix_len(host: &str) -> usize {
    let bytes = host.as_bytes();
    if bytes.len() < 3 || !bytes[..3].eq_ignore_ascii_case(b"www") {
        return 0;
    }
    let digits = bytes[3..].iter().take_while(|b| b.is_ascii_digit()).count();
    match bytes.get(3 + digits) {
        Some(b'.') => 4 + digits,
        _ => 0,
    }
}

/// A query as surt canonicalizes it: unescaped, escaped once, session ids removed,
/// lower-cased, arguments sorted; `None` when nothing is left.
fn canonical_query(query: &str) -> Option<String> {
    let query = escape_once(&unescape_repeatedly(query.as_bytes()));
    Some(alpha_reorder(
        &strip_query_session_id(&query).to_lowercase(),
    ))
    .filter(|q| !q.is_empty())
}

/// `surt` of any URL: every step of the `surt` package, one after the other.
fn surt_of_any(url: &str) -> String {
    let url = url.trim();
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r))
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (s, r)
        }
        _ => ("http", url),
    };
    let rest = rest.split('#').next().unwrap_or("");
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path_query) = rest.split_at(authority_end);
    let (path, query) = match path_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_query, None),
    };
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let (host, port) = split_port(host_port);
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();

    // GoogleURLCanonicalizer.
    let mut host = String::from_utf8_lossy(&unescape_repeatedly(host.as_bytes())).into_owned();
    while host.contains("..") {
        host = host.replace("..", ".");
    }
    let host = escape_once(host.trim_matches('.').to_ascii_lowercase().as_bytes());
    let path = escape_once(&normalize_path(&unescape_repeatedly(path.as_bytes())));

    // IAURLCanonicalizer.
    let host = strip_www(&host);
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    let port = port.filter(|p| Some(*p) != default_port);
    let mut path = strip_path_session_id(&path.to_lowercase());
    if path.len() > 1 && path.ends_with('/') {
        path.pop();
    }
    let query = query.and_then(canonical_query);

    let mut key: Vec<&str> = host.split('.').collect();
    key.reverse();
    let mut out = key.join(",");
    if let Some(port) = port {
        out.push_str(&format!(":{port}"));
    }
    out.push(')');
    if !path.is_empty() {
        out.push_str(&path);
    } else if query.is_some() {
        out.push('/');
    }
    if let Some(q) = query {
        out.push('?');
        out.push_str(&q);
    }
    out
}

/// `host:port` → host and port (a port that is not a number is dropped, as urllib drops it).
fn split_port(host_port: &str) -> (&str, Option<u32>) {
    let colon = if host_port.starts_with('[') {
        host_port.find("]:").map(|i| i + 1)
    } else {
        host_port.rfind(':')
    };
    match colon {
        Some(i) => (&host_port[..i], host_port[i + 1..].parse().ok()),
        None => (host_port, None),
    }
}

/// Percent-decodes until nothing changes (`%2541` → `A`).
fn unescape_repeatedly(input: &[u8]) -> Vec<u8> {
    let mut current = input.to_vec();
    loop {
        let mut out = Vec::with_capacity(current.len());
        let mut i = 0;
        let input = &current;
        while i < input.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if input[i] == b'%'
                && i + 2 < input.len()
                && let (Some(h), Some(l)) = (hex(input[i + 1]), hex(input[i + 2]))
            {
                out.push((h * 16 + l) as u8);
                i += 3;
            } else {
                out.push(input[i]);
                i += 1;
            }
        }
        if out == current {
            return out;
        }
        current = out;
    }
}

/// Percent-encodes what Python's `quote` with surt's safe set encodes: controls, space, `#`,
/// `%` and every byte past `~`.
fn escape_once(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len());
    for &b in input {
        if b > b' ' && b <= b'~' && b != b'#' && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// surt's `normalizePath`: `.` and `..` segments resolved, empty segments dropped (but a
/// trailing slash kept), an empty path made `/`.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for segment in path.split(|&b| b == b'/').skip(1) {
        match segment {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(segment);
                }
            }
            _ => kept.push(segment),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, init)) = kept.split_last() {
        for segment in init.iter().filter(|s| !s.is_empty()) {
            out.extend_from_slice(segment);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

/// Drops a leading `www.`, `www2.`, … (surt's `massageHost`; the host is lower-case here).
fn strip_www(host: &str) -> String {
    host[www_prefix_len(host)..].to_owned()
}

fn session_patterns() -> &'static [regex::bytes::Regex; 7] {
    static PATTERNS: OnceLock<[regex::bytes::Regex; 7]> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let re = |p: &str| regex::bytes::Regex::new(p).expect("a valid pattern");
        [
            re(r"(?i-u)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$"),
            re(r"(?i-u)^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$"),
            re(r"(?i-u)^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$"),
            re(r"(?i-u)^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$"),
            re(r"(?i-u)^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$"),
            re(r"(?i-u)^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$"),
            re(r"(?i-u)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$"),
        ]
    })
}

fn strip_path_session_id(path: &str) -> String {
    // Both patterns need a `(…)/` segment before an `.aspx` page: most paths have neither.
    if !path.contains(".aspx") || !path.contains(")/") {
        return path.to_owned();
    }
    let mut path = path.as_bytes().to_vec();
    for pattern in &session_patterns()[..2] {
        if let Some(m) = pattern.captures(&path) {
            path = [&m[1], &m[3]].concat();
        }
    }
    String::from_utf8_lossy(&path).into_owned()
}

fn strip_query_session_id(query: &str) -> String {
    // Every pattern holds `sessionid` (jsessionid, aspsessionid), `sid` (phpsessid, sid) or
    // `cftoken`.
    let lower = query.to_ascii_lowercase();
    if !["sessionid", "sid", "cftoken"]
        .iter()
        .any(|s| lower.contains(s))
    {
        return query.to_owned();
    }
    let mut query = query.as_bytes().to_vec();
    for pattern in &session_patterns()[2..] {
        if let Some(m) = pattern.captures(&query) {
            query = match m.get(2).filter(|g| !g.is_empty()) {
                Some(rest) => [&m[1], rest.as_bytes()].concat(),
                None => m[1].to_vec(),
            };
        }
    }
    String::from_utf8_lossy(&query).into_owned()
}

/// surt's `alphaReorderQuery`: arguments sorted as (name, value) pairs, a bare name first.
fn alpha_reorder(query: &str) -> String {
    if query.len() <= 1 {
        return query.to_owned();
    }
    let mut args: Vec<(&str, Option<&str>)> = query
        .split('&')
        .map(|a| match a.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (a, None),
        })
        .collect();
    args.sort();
    args.iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{k}={v}"),
            None => (*k).to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn open_path(index: &Path) -> PathBuf {
    names::with_suffix(index, names::OPEN)
}

/// Writes the index of each WARC file as its records are written (one owner: the WARC writer
/// thread).
pub struct CdxjWriter {
    dir: PathBuf,
    current: Option<OpenIndex>,
    /// Lines sorted in memory at most; more are sorted in runs on disk and merged.
    sort_budget: u64,
    /// The line being built, kept from one line to the next.
    line: String,
}

struct OpenIndex {
    warc_name: String,
    index: PathBuf,
    lines: BufWriter<File>,
}

/// A WARC file's index sorted and synced under its temporary name (`CdxjWriter::sort`).
#[must_use = "an index is under its final name only once committed"]
pub struct SortedIndex {
    tmp: PathBuf,
    index: PathBuf,
    /// The open index it was sorted from, removed once the sorted one is in place.
    open: PathBuf,
}

impl SortedIndex {
    /// Renames the index into place (durably), then removes the open index it came from.
    pub fn commit(self) -> Result<()> {
        durable::commit(&self.tmp, &self.index)
            .with_context(|| format!("renaming {}", self.tmp.display()))?;
        fs::remove_file(&self.open).with_context(|| format!("removing {}", self.open.display()))
    }
}

impl CdxjWriter {
    /// Removes the open indexes a kill left in `dir` and rebuilds the index of every finished
    /// WARC file without one. Call it after the WARC writer's own repair.
    pub fn open(dir: &Path) -> Result<CdxjWriter> {
        static SORT_BYTES: OnceLock<u64> = OnceLock::new();
        let mut writer = CdxjWriter {
            dir: dir.to_path_buf(),
            current: None,
            sort_budget: failpoint::knob(&SORT_BYTES, "CRAWL_CDXJ_SORT_BYTES", 8 << 20),
            line: String::new(),
        };
        let mut names: Vec<String> = fs::read_dir(dir)
            .with_context(|| format!("listing {}", dir.display()))?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in &names {
            if names::classify(name) == WarcDirFile::UnfinishedIndex {
                durable::remove_if_present(&dir.join(name))?;
            }
        }
        for name in &names {
            let path = dir.join(name);
            let warc = matches!(names::classify(name), WarcDirFile::Warc(_));
            if warc && !index_path(&path).exists() {
                writer
                    .rebuild(&path)
                    .with_context(|| format!("indexing {}", path.display()))?;
            }
        }
        Ok(writer)
    }

    /// Adds a capture's line to its file's index. A capture in a new file closes (sorts) the
    /// index of the file before: the WARC writer never goes back to a file.
    pub fn add(&mut self, capture: &Capture) -> Result<()> {
        if self
            .current
            .as_ref()
            .is_some_and(|c| c.warc_name != capture.filename)
        {
            self.close()?;
        }
        if self.current.is_none() {
            let index = index_path(&self.dir.join(capture.filename));
            let file = File::create(open_path(&index))
                .with_context(|| format!("creating {}", open_path(&index).display()))?;
            self.current = Some(OpenIndex {
                warc_name: capture.filename.to_owned(),
                index,
                lines: BufWriter::new(file),
            });
        }
        let current = self.current.as_mut().expect("opened above");
        self.line.clear();
        push_line(&mut self.line, capture);
        self.line.push('\n');
        current
            .lines
            .write_all(self.line.as_bytes())
            .with_context(|| format!("writing {}", open_path(&current.index).display()))
    }

    /// Sorts the open index into its final name (after its WARC file was closed).
    pub fn close(&mut self) -> Result<()> {
        self.sort()?.map_or(Ok(()), SortedIndex::commit)
    }

    /// Sorts the open index into a synced temporary file, not yet under its final name, so
    /// that the WARC file's own close (its fsync) can run meanwhile; `SortedIndex::commit`,
    /// called once the WARC file is under its final name, renames the index into place. None
    /// when no index is open.
    pub fn sort(&mut self) -> Result<Option<SortedIndex>> {
        let Some(current) = self.current.take() else {
            return Ok(None);
        };
        let open = open_path(&current.index);
        current
            .lines
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("writing {}", open.display()))?;
        failpoint::hit("cdxj-sort");
        let tmp = sort_to_temp(&open, &current.index, self.sort_budget)
            .with_context(|| format!("sorting {}", open.display()))?;
        Ok(Some(SortedIndex {
            tmp,
            index: current.index,
            open,
        }))
    }

    /// Indexes a finished WARC file from its records.
    fn rebuild(&mut self, warc: &Path) -> Result<()> {
        let name = warc
            .file_name()
            .and_then(|n| n.to_str())
            .context("a WARC file name")?
            .to_owned();
        let compression = names::compression_of(&name).context("a WARC file name")?;
        self.close()?;
        for_each_capture(warc, compression, |capture| self.add(capture))?;
        if self.current.is_none() {
            // A file without captures (only robots.txt answers cut short, or only warcinfo).
            durable::replace(&index_path(warc), b"")?;
        }
        self.close()
    }
}

/// Bytes read and written at a time by the sort: a crawl's index of 20,000 lines is 5 MB, which
/// 8 KiB buffers read and wrote in some 1,300 system calls on the crawl's last path.
const SORT_IO: usize = 1 << 20;

/// Sorts the lines of `src` into `dst`'s temporary file (`durable::temp_path`), synced, and
/// returns its path, holding at most `budget` bytes of lines in memory: past that, sorted runs
/// go to `dst.run-N` files, merged, then removed.
fn sort_to_temp(src: &Path, dst: &Path, budget: u64) -> Result<PathBuf> {
    let mut input = BufReader::with_capacity(SORT_IO, File::open(src)?);
    let mut runs = Vec::new();
    let mut chunk: Vec<String> = Vec::new();
    let mut held = 0u64;
    let run_path = |n: usize| {
        let mut name = dst.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".run-{n}"));
        dst.with_file_name(name)
    };
    loop {
        let mut line = String::new();
        let eof = input.read_line(&mut line)? == 0;
        if !eof {
            if !line.ends_with('\n') {
                line.push('\n');
            }
            held += line.len() as u64;
            chunk.push(line);
        }
        if (eof && !runs.is_empty() && !chunk.is_empty()) || held > budget {
            chunk.sort_unstable();
            let path = run_path(runs.len());
            let mut out = BufWriter::new(File::create(&path)?);
            chunk
                .drain(..)
                .try_for_each(|l| out.write_all(l.as_bytes()))?;
            out.into_inner().map_err(|e| e.into_error())?;
            runs.push(path);
            held = 0;
        }
        if eof {
            break;
        }
    }
    let tmp = durable::temp_path(dst);
    let mut out = BufWriter::with_capacity(SORT_IO, File::create(&tmp)?);
    if runs.is_empty() {
        chunk.sort_unstable();
        chunk.iter().try_for_each(|l| out.write_all(l.as_bytes()))?;
    } else {
        merge_sorted(&runs, &mut out)?;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    drop(file);
    runs.iter().try_for_each(fs::remove_file)?;
    Ok(tmp)
}

/// Merges files of sorted lines into `out` (a k-way merge); returns the line count.
pub fn merge_sorted(inputs: &[PathBuf], out: &mut impl Write) -> Result<u64> {
    let mut readers: Vec<_> = inputs
        .iter()
        .map(|p| {
            File::open(p)
                .map(|f| BufReader::new(f).lines())
                .with_context(|| format!("reading {}", p.display()))
        })
        .collect::<Result<_>>()?;
    let mut heap = BinaryHeap::new();
    for (i, r) in readers.iter_mut().enumerate() {
        if let Some(l) = r.next() {
            heap.push(Reverse((l?, i)));
        }
    }
    let mut count = 0;
    while let Some(Reverse((l, i))) = heap.pop() {
        out.write_all(l.as_bytes())?;
        out.write_all(b"\n")?;
        count += 1;
        if let Some(next) = readers[i].next() {
            heap.push(Reverse((next?, i)));
        }
    }
    Ok(count)
}

/// One record of a WARC file, decompressed: its headers (name, value), its block, and where
/// its compressed unit lies in the file.
pub struct Record {
    pub headers: Vec<(String, String)>,
    pub block: Vec<u8>,
    pub offset: u64,
    pub length: u64,
}

impl Record {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The block's HTTP head (through the empty line) and payload, for response and revisit
    /// records; the whole block is payload when it has no head.
    pub fn http_parts(&self) -> (&[u8], &[u8]) {
        match self.block.windows(4).position(|w| w == b"\r\n\r\n") {
            Some(i) => self.block.split_at(i + 4),
            None => (&[], &self.block),
        }
    }
}

/// A WARC file that is not what the crawl writes: a unit that does not decode, or a record
/// that does not parse (named by file and offset). Bad input, not a failure of the machine.
#[derive(Debug)]
pub struct BadWarc(pub String);

impl std::fmt::Display for BadWarc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadWarc {}

/// Reads every record of a WARC file written one record per compressed unit (ours), in order.
/// A unit that is not a WARC record is an error naming the file and offset.
pub fn for_each_record(
    path: &Path,
    compression: Compression,
    mut each: impl FnMut(Record) -> Result<()>,
) -> Result<()> {
    for_each_unit(path, compression, |raw, offset, length| {
        let record = parse_record(raw, offset, length).map_err(|e| {
            BadWarc(format!(
                "{}: record at offset {offset}: {e:#}",
                path.display()
            ))
        })?;
        each(record)
    })
}

/// Decodes every compressed unit (zstd frame or gzip member) of a file in order: its bytes,
/// and its offset and compressed length in the file.
pub fn for_each_unit(
    path: &Path,
    compression: Compression,
    mut each: impl FnMut(Vec<u8>, u64, u64) -> Result<()>,
) -> Result<()> {
    let mut input =
        BufReader::new(File::open(path).with_context(|| format!("opening {}", path.display()))?);
    let mut offset = 0;
    while !input.fill_buf()?.is_empty() {
        let mut raw = Vec::new();
        let decoded = match compression {
            Compression::Zstd => zstd::stream::read::Decoder::with_buffer(&mut input)
                .and_then(|d| d.single_frame().read_to_end(&mut raw)),
            Compression::Gzip => flate2::bufread::GzDecoder::new(&mut input).read_to_end(&mut raw),
        };
        if let Err(e) = decoded {
            let at = path.display();
            return Err(BadWarc(format!(
                "{at}: bad compressed record at offset {offset}: {e}"
            ))
            .into());
        }
        let end = input.stream_position()?;
        each(raw, offset, end - offset)?;
        offset = end;
    }
    Ok(())
}

fn parse_record(raw: Vec<u8>, offset: u64, length: u64) -> Result<Record> {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        bail!("no end of the WARC headers");
    };
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    if !lines.next().is_some_and(|l| l.starts_with("WARC/")) {
        bail!("not a WARC record");
    }
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("Content-Length"))
        .and_then(|(_, v)| v.parse().ok())
        .context("no Content-Length")?;
    let block = raw
        .get(split + 4..split + 4 + len)
        .context("a block shorter than its Content-Length")?
        .to_vec();
    Ok(Record {
        headers,
        block,
        offset,
        length,
    })
}

/// Calls `each` with the capture of every response and revisit record of a WARC file.
pub fn for_each_capture(
    path: &Path,
    compression: Compression,
    mut each: impl FnMut(&Capture) -> Result<()>,
) -> Result<()> {
    let filename = path
        .file_name()
        .and_then(|n| n.to_str())
        .context("a WARC file name")?
        .to_owned();
    for_each_record(path, compression, |record| {
        let kind = record.header("WARC-Type").unwrap_or("");
        if kind != "response" && kind != "revisit" {
            return Ok(());
        }
        let (http_head, _) = record.http_parts();
        each(&Capture {
            target_uri: record.header("WARC-Target-URI").unwrap_or(""),
            warc_date: record.header("WARC-Date").unwrap_or(""),
            revisit: kind == "revisit",
            http_head,
            payload_digest: record.header("WARC-Payload-Digest"),
            offset: record.offset,
            length: record.length,
            filename: &filename,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorts the lines of `src` into `dst` (replaced durably): `sort_to_temp`, then the rename.
    fn sort_into(src: &Path, dst: &Path, budget: u64) -> Result<()> {
        let tmp = sort_to_temp(src, dst, budget)?;
        Ok(durable::commit(&tmp, dst)?)
    }

    #[test]
    fn surt_keys_follow_the_surt_package() {
        let cases = [
            ("http://www.Example.com/", "com,example)/"),
            (
                "https://www2.example.com:443/A/B/?b=2&a=1",
                "com,example)/a/b?a=1&b=2",
            ),
            ("http://127.0.0.1:8080/x/", "1,0,0,127:8080)/x"),
            ("http://a.test/a//b/./c/../d", "test,a)/a/b/d"),
            (
                "http://a.test/%7Euser/a%20b?q=%41",
                "test,a)/~user/a%20b?q=a",
            ),
            ("http://a.test?x", "test,a)/?x"),
            ("http://a.test/?", "test,a)/"),
            ("http://a.test/p#frag", "test,a)/p"),
            (
                "http://a.test/?a=1&jsessionid=0123456789abcdef0123456789abcdef",
                "test,a)/?&a=1",
            ),
            ("http://a.test/?b&a=2&a", "test,a)/?a&a=2&b"),
            ("http://wwwx.test/", "test,wwwx)/"),
            ("http://a.test:80/", "test,a)/"),
            ("http://a.test/caf%C3%A9", "test,a)/caf%c3%a9"),
            ("http://a.test/a%2fb%25", "test,a)/a/b%25"),
            ("http://[::1]:8080/A", "::1:8080)/a"),
            ("http://a.test/..", "test,a)/.."),
            (
                "http://a.test/x?ASPSESSIONIDabcdefgh=abcdefghijklmnopqrstuvwx&b=1",
                "test,a)/x?b=1",
            ),
            (
                "http://a.test/(a(0123456789abcdef01234567))/p.aspx?x",
                "test,a)/p.aspx?x",
            ),
        ];
        for (url, key) in cases {
            assert_eq!(surt(url), key, "{url}");
        }
    }

    /// The common path gives every URL it takes the key the full sequence of steps gives:
    /// URLs made of the characters and pieces that trip those steps (case, `%`, `.` and `..`
    /// segments, empty labels and segments, ports, `www`, session ids, `.aspx`, userinfo,
    /// fragments, IPv6), and enough plain ones that the common path is taken.
    #[test]
    fn the_common_path_agrees_with_every_step() {
        let pieces = [
            "a",
            "B",
            "www",
            "www2",
            "wWw",
            ".",
            "..",
            "/",
            "//",
            "?",
            "&",
            "=",
            ":",
            ":80",
            ":443",
            ":8080",
            ":x",
            "%41",
            "%2f",
            "%",
            "#f",
            "@",
            "[",
            "]",
            "(",
            ")/",
            ".aspx",
            "jsessionid=0123456789abcdef0123456789abcdef",
            "sid",
            "~",
            "-",
            "_",
            " ",
            "\\",
            "\u{e9}",
            "x1",
            "Index.HTML",
            "q=1",
        ];
        let mut rng = crate::splitmix::SplitMix(12);
        let (mut taken, mut total) = (0, 0);
        for _ in 0..20_000 {
            let scheme =
                ["http://", "https://", "HTTP://", "ftp://", ""][rng.next_u64() as usize % 5];
            let mut url = scheme.to_owned();
            let n = 1 + rng.next_u64() % 8;
            for _ in 0..n {
                url.push_str(pieces[rng.next_u64() as usize % pieces.len()]);
            }
            let mut common = String::new();
            total += 1;
            if push_common_surt(&mut common, &url) {
                taken += 1;
                assert_eq!(common, surt_of_any(&url), "{url:?}");
            } else {
                assert!(common.is_empty(), "{url:?} left {common:?}");
            }
        }
        assert!(taken >= 500, "the common path took {taken} of {total}");
        for url in [
            "http://www.Example.com:8080/A/b/",
            "https://a.b.test",
            "http://h/p?B=2&a=1",
        ] {
            let mut common = String::new();
            assert!(push_common_surt(&mut common, url), "{url}");
            assert_eq!(common, surt_of_any(url), "{url}");
        }
    }

    #[test]
    fn lines_carry_the_fields_in_cdxj_indexer_order() {
        let capture = Capture {
            target_uri: "http://a.test/x",
            warc_date: "2023-11-14T22:13:20Z",
            revisit: false,
            http_head: b"HTTP/1.1 301 Moved\r\nContent-Type: Text/HTML; charset=utf-8\r\n\r\n",
            payload_digest: Some("sha1:AAAA"),
            offset: 123,
            length: 45,
            filename: "crawl-1.warc.gz",
        };
        assert_eq!(
            line(&capture),
            "test,a)/x 20231114221320 {\"url\": \"http://a.test/x\", \"mime\": \"Text/HTML\", \
             \"status\": \"301\", \"digest\": \"sha1:AAAA\", \"length\": \"45\", \"offset\": \
             \"123\", \"filename\": \"crawl-1.warc.gz\"}"
        );
        let revisit = Capture {
            revisit: true,
            http_head: b"HTTP/1.1 304 Not Modified\r\n\r\n",
            ..capture.clone()
        };
        assert!(line(&revisit).contains("\"mime\": \"warc/revisit\", \"status\": \"304\""));
        let no_type = Capture {
            http_head: b"HTTP/1.1 200 OK\r\n\r\n",
            ..capture
        };
        assert!(line(&no_type).contains("\"url\": \"http://a.test/x\", \"status\": \"200\""));
        let mut s = String::new();
        json_string(&mut s, "é\"\\\u{1}😀");
        assert_eq!(s, "\"\\u00e9\\\"\\\\\\u0001\\ud83d\\ude00\"");
        // Plain ASCII before the first character to escape, and after it.
        for (plain, json) in [
            ("", "\"\""),
            ("a b~", "\"a b~\""),
            ("ab\"c\td", "\"ab\\\"c\\td\""),
            ("x/é", "\"x/\\u00e9\""),
        ] {
            s.clear();
            json_string(&mut s, plain);
            assert_eq!(s, json, "{plain:?}");
        }
    }

    #[test]
    fn sorting_past_the_budget_merges_runs_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("in");
        let lines: Vec<String> = (0..500u64)
            .map(|i| {
                format!(
                    "k{:04} {}\n",
                    (i * 7919) % 500,
                    "x".repeat((i % 13) as usize)
                )
            })
            .collect();
        fs::write(&src, lines.concat()).unwrap();
        let mut expected = lines.clone();
        expected.sort();
        for budget in [1 << 30, 100, 1] {
            let dst = dir.path().join(format!("out-{budget}"));
            sort_into(&src, &dst, budget).unwrap();
            assert_eq!(
                fs::read_to_string(&dst).unwrap(),
                expected.concat(),
                "{budget}"
            );
        }
        let mut merged = Vec::new();
        let parts = [dir.path().join("out-1"), dir.path().join("out-100")];
        assert_eq!(merge_sorted(&parts, &mut merged).unwrap(), 1000);
        let mut twice = [expected.clone(), expected].concat();
        twice.sort();
        assert_eq!(String::from_utf8(merged).unwrap(), twice.concat());
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 4, "no runs or temp files left: {left:?}");
    }
}
