//! Sitemaps (sitemaps.org protocol 0.9): the URLs a site lists for crawlers.
//!
//! Three forms are read: an XML `urlset` (pages, each with an optional `lastmod`), an XML
//! `sitemapindex` (more sitemaps), and a plain-text sitemap (one URL a line). A body is
//! gzip-compressed when it starts with the gzip magic, whatever its name or Content-Type (a
//! `.xml.gz` file served as `application/octet-stream` is the common case).
//!
//! Invariants:
//! - Streaming: the body is read through a decoder bounded at `MAX_BYTES` of uncompressed
//!   text, one XML event (or one line) at a time; each URL is handed to the caller as it is
//!   read, so neither the uncompressed file nor its URL list is ever held whole. Memory is one
//!   event or line (bounded by the decoder's cap) plus one URL (`MAX_URL_LEN`).
//! - The protocol's limits bound time: at most `MAX_URLS` entries and `MAX_BYTES` uncompressed
//!   bytes are read from one file; past either the rest is skipped and `Read::capped` says so.
//! - A broken file is never an error: what was read before the damage is kept and
//!   `Read::malformed` says so.

use quick_xml::Reader;
use quick_xml::events::Event;
use std::io::{BufRead, BufReader};

/// Entries read from one sitemap at most (the protocol's limit per file).
pub const MAX_URLS: usize = 50_000;
/// Uncompressed bytes read from one sitemap at most (the protocol's 50 MB, as 50 MiB).
pub const MAX_BYTES: u64 = 50 * 1024 * 1024;
/// A `loc` longer than this is skipped (the protocol allows under 2,048 characters).
pub const MAX_URL_LEN: usize = 4096;

/// What kind of sitemap a file turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `<urlset>`: pages.
    UrlSet,
    /// `<sitemapindex>`: more sitemaps.
    Index,
    /// One URL a line.
    Text,
}

/// One entry of a sitemap: a `loc`, and its `lastmod` as written (W3C datetime), if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The URL as written (trimmed, entities decoded).
    pub loc: String,
    /// When the page last changed, as written (`2024-01-02`, `2024-01-02T10:00:00+00:00`).
    pub lastmod: Option<String>,
}

/// How reading one sitemap went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// `None` when the file is none of the three forms (an HTML page, another XML root).
    pub kind: Option<Kind>,
    /// Entries handed to the caller.
    pub entries: usize,
    /// The file had more than `MAX_URLS` entries or `MAX_BYTES` bytes: the rest was skipped.
    pub capped: bool,
    /// The XML (or the gzip stream) broke off; the entries before the damage were kept.
    pub malformed: bool,
}

/// Reads a sitemap body (as received, gzip or not), handing each entry to `found` as it is
/// read. `found` gets the file's kind with each entry.
///
/// Never inlined: its gzip decoders take ~52 KiB of stack frame, which a function entered
/// touches in full (stack probes); inlined into the worker's loop, every worker of thousands
/// would hold that much more resident stack, sitemap or not.
#[inline(never)]
pub fn read(body: &[u8], found: &mut dyn FnMut(Kind, Found)) -> Read {
    if !body.starts_with(&GZIP) {
        return read_plain(body, found);
    }
    // A `.xml.gz` file sent with `Content-Encoding: gzip` is gzipped twice.
    let mut once = BufReader::new(flate2::read::MultiGzDecoder::new(body));
    match once.fill_buf() {
        Ok(head) if head.starts_with(&GZIP) => {
            read_plain(flate2::read::MultiGzDecoder::new(once), found)
        }
        _ => read_plain(once, found),
    }
}

/// The first two bytes of a gzip stream.
const GZIP: [u8; 2] = [0x1f, 0x8b];

/// Reads an uncompressed sitemap from `input`, at most `MAX_BYTES` of it.
pub fn read_plain(input: impl std::io::Read, found: &mut dyn FnMut(Kind, Found)) -> Read {
    let mut input = Bounded {
        inner: input,
        left: MAX_BYTES,
        over: false,
        failed: false,
    };
    let mut result = Read::default();
    {
        let mut buffered = BufReader::with_capacity(64 * 1024, &mut input);
        match first_byte(&mut buffered) {
            Some(b'<') => read_xml(&mut buffered, &mut result, found),
            _ => read_text(&mut buffered, &mut result, found),
        }
    }
    result.capped |= input.over;
    // A document cut by the cap is not broken (its end is simply not read).
    result.malformed = (result.malformed && !input.over) || input.failed;
    result
}

/// The first byte after a byte-order mark and white space, left unread.
fn first_byte(input: &mut impl BufRead) -> Option<u8> {
    loop {
        let buf = input.fill_buf().ok()?;
        if buf.is_empty() {
            return None;
        }
        if buf.starts_with(&[0xef, 0xbb, 0xbf]) {
            input.consume(3);
            continue;
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let b = buf[i];
                input.consume(i);
                return Some(b);
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// Which text element the parser is inside.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Other,
    Loc,
    Lastmod,
}

fn read_xml(input: impl BufRead, result: &mut Read, found: &mut dyn FnMut(Kind, Found)) {
    let mut reader = Reader::from_reader(input);
    reader.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut field = Field::Other;
    let mut loc = String::new();
    let mut lastmod = String::new();
    let mut in_entry = false;
    loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(_) => {
                result.malformed = true;
                return;
            }
        };
        match event {
            Event::Start(e) => {
                depth += 1;
                let name = e.local_name();
                let name = name.as_ref();
                if depth == 1 {
                    result.kind = match name {
                        b"urlset" => Some(Kind::UrlSet),
                        b"sitemapindex" => Some(Kind::Index),
                        _ => return,
                    };
                } else if depth == 2 && matches!(name, b"url" | b"sitemap") {
                    in_entry = true;
                    loc.clear();
                    lastmod.clear();
                } else if depth == 3 && in_entry {
                    field = match name {
                        b"loc" => Field::Loc,
                        b"lastmod" => Field::Lastmod,
                        _ => Field::Other,
                    };
                }
            }
            Event::Empty(e) if depth == 0 => {
                // `<urlset/>`: a sitemap with nothing in it.
                result.kind = match e.local_name().as_ref() {
                    b"urlset" => Some(Kind::UrlSet),
                    b"sitemapindex" => Some(Kind::Index),
                    _ => None,
                };
                return;
            }
            Event::End(_) => {
                if depth == 3 {
                    field = Field::Other;
                } else if depth == 2 && in_entry {
                    in_entry = false;
                    let url = loc.trim();
                    if !url.is_empty() && url.len() <= MAX_URL_LEN {
                        if result.entries == MAX_URLS {
                            result.capped = true;
                            return;
                        }
                        result.entries += 1;
                        let lastmod = lastmod.trim();
                        let entry = Found {
                            loc: url.to_owned(),
                            lastmod: (!lastmod.is_empty()).then(|| lastmod.to_owned()),
                        };
                        found(result.kind.expect("set at the root"), entry);
                    }
                }
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return;
                }
            }
            Event::Text(t) => push(
                field,
                &mut loc,
                &mut lastmod,
                &t.decode().unwrap_or_default(),
            ),
            Event::CData(t) => {
                push(
                    field,
                    &mut loc,
                    &mut lastmod,
                    &t.decode().unwrap_or_default(),
                );
            }
            Event::GeneralRef(r) => {
                let text = match r.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    _ => r
                        .decode()
                        .ok()
                        .and_then(|name| quick_xml::escape::resolve_predefined_entity(&name))
                        .unwrap_or("")
                        .to_owned(),
                };
                push(field, &mut loc, &mut lastmod, &text);
            }
            Event::Eof => {
                // Ended inside the root element: the file was cut.
                result.malformed |= depth > 0;
                return;
            }
            _ => {}
        }
    }
}

/// Appends element text to the field being read; a field past `MAX_URL_LEN` stops growing
/// (its entry is then skipped as too long).
fn push(field: Field, loc: &mut String, lastmod: &mut String, text: &str) {
    let target = match field {
        Field::Loc => loc,
        Field::Lastmod => lastmod,
        Field::Other => return,
    };
    if target.len() <= MAX_URL_LEN {
        target.push_str(text);
    }
}

/// A text sitemap: each line that is an absolute http(s) URL is an entry. A line is read only
/// up to `MAX_URL_LEN` bytes kept; longer lines are skipped.
fn read_text(mut input: impl BufRead, result: &mut Read, found: &mut dyn FnMut(Kind, Found)) {
    result.kind = Some(Kind::Text);
    let mut line = Vec::new();
    loop {
        line.clear();
        let long = match read_line_bounded(&mut input, &mut line) {
            None => return,
            Some(long) => long,
        };
        if long {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            continue;
        };
        let text = text.trim();
        let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            continue;
        }
        if result.entries == MAX_URLS {
            result.capped = true;
            return;
        }
        result.entries += 1;
        found(
            Kind::Text,
            Found {
                loc: text.to_owned(),
                lastmod: None,
            },
        );
    }
}

/// Reads one line into `line`, keeping at most `MAX_URL_LEN` bytes. `None` at the end of the
/// input; `Some(true)` when the line was longer than that.
fn read_line_bounded(input: &mut impl BufRead, line: &mut Vec<u8>) -> Option<bool> {
    let mut long = false;
    let mut any = false;
    loop {
        let buf = input.fill_buf().ok()?;
        if buf.is_empty() {
            return any.then_some(long);
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1),
            None => (buf, buf.len()),
        };
        if line.len() + chunk.len() <= MAX_URL_LEN {
            line.extend_from_slice(chunk);
        } else {
            long = true;
        }
        let newline = done > chunk.len();
        input.consume(done);
        if newline {
            return Some(long);
        }
    }
}

/// The decoder's bound: at most `left` bytes pass; `over` records that more were there, and
/// `failed` that the input itself broke (a corrupt gzip stream), which reads as an end.
struct Bounded<R> {
    inner: R,
    left: u64,
    over: bool,
    failed: bool,
}

impl<R: std::io::Read> std::io::Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            if !self.over && !self.failed {
                // One probe byte says whether the file went on past the cap.
                let mut probe = [0u8; 1];
                self.over = matches!(self.inner.read(&mut probe), Ok(n) if n > 0);
            }
            return Ok(0);
        }
        let max = buf.len().min(self.left as usize);
        match self.inner.read(&mut buf[..max]) {
            Ok(n) => {
                self.left -= n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Err(e),
            Err(_) => {
                self.failed = true;
                Ok(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn all(body: &[u8]) -> (Read, Vec<(Kind, Found)>) {
        let mut got = Vec::new();
        let read = read(body, &mut |kind, found| got.push((kind, found)));
        (read, got)
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(data).unwrap();
        gz.finish().unwrap()
    }

    const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://a.test/one</loc><lastmod>2024-01-02</lastmod></url>
  <url><loc> http://a.test/two?x=1&amp;y=2 </loc><changefreq>daily</changefreq></url>
  <url><lastmod>2024-01-02</lastmod></url>
  <url><loc><![CDATA[http://a.test/three]]></loc></url>
</urlset>"#;

    #[test]
    fn urlset_entries_with_lastmod_and_entities() {
        let (read, got) = all(URLSET.as_bytes());
        assert_eq!(read.kind, Some(Kind::UrlSet));
        assert_eq!(read.entries, 3);
        assert!(!read.capped && !read.malformed);
        let locs: Vec<_> = got.iter().map(|(_, f)| f.loc.as_str()).collect();
        assert_eq!(
            locs,
            [
                "http://a.test/one",
                "http://a.test/two?x=1&y=2",
                "http://a.test/three"
            ]
        );
        assert_eq!(got[0].1.lastmod.as_deref(), Some("2024-01-02"));
        assert_eq!(got[1].1.lastmod, None);
    }

    #[test]
    fn index_of_sitemaps() {
        let body = "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
            <sitemap><loc>http://a.test/s1.xml.gz</loc><lastmod>2024-05-01T10:00:00Z</lastmod></sitemap>\
            <sitemap><loc>http://a.test/s2.txt</loc></sitemap></sitemapindex>";
        let (read, got) = all(body.as_bytes());
        assert_eq!(read.kind, Some(Kind::Index));
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|(k, _)| *k == Kind::Index));
        assert_eq!(got[1].1.loc, "http://a.test/s2.txt");
    }

    #[test]
    fn gzip_is_recognised_by_its_magic() {
        let (read, got) = all(&gzip(URLSET.as_bytes()));
        assert_eq!(read.kind, Some(Kind::UrlSet));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn gzip_twice_is_read() {
        let (read, got) = all(&gzip(&gzip(URLSET.as_bytes())));
        assert_eq!(read.kind, Some(Kind::UrlSet));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn text_sitemap_keeps_only_absolute_http_lines() {
        let body = "\u{feff}http://a.test/x\r\n\nnot a url\nftp://a.test/f\nHTTPS://a.test/y\n";
        let (read, got) = all(body.as_bytes());
        assert_eq!(read.kind, Some(Kind::Text));
        let locs: Vec<_> = got.iter().map(|(_, f)| f.loc.as_str()).collect();
        assert_eq!(locs, ["http://a.test/x", "HTTPS://a.test/y"]);
    }

    #[test]
    fn over_the_url_limit_is_capped_not_an_error() {
        let mut body = String::from("<urlset>");
        for i in 0..MAX_URLS + 10 {
            body.push_str(&format!("<url><loc>http://a.test/{i}</loc></url>"));
        }
        body.push_str("</urlset>");
        let (read, got) = all(&gzip(body.as_bytes()));
        assert_eq!(got.len(), MAX_URLS);
        assert!(read.capped);
        assert!(!read.malformed);
        let text: String = (0..MAX_URLS + 1)
            .map(|i| format!("http://a.test/{i}\n"))
            .collect();
        let (read, got) = all(text.as_bytes());
        assert_eq!((got.len(), read.capped), (MAX_URLS, true));
    }

    #[test]
    fn over_the_byte_limit_is_capped() {
        // Few entries, but a comment pushes the file past MAX_BYTES.
        let mut body = b"<urlset><url><loc>http://a.test/first</loc></url><!--".to_vec();
        body.resize(MAX_BYTES as usize + 100, b'x');
        body.extend_from_slice(b"--><url><loc>http://a.test/late</loc></url></urlset>");
        let (read, got) = all(&gzip(&body));
        assert_eq!(got.len(), 1);
        assert!(read.capped);
        assert!(!read.malformed, "cut by the cap, not broken");
    }

    #[test]
    fn malformed_xml_keeps_what_came_before() {
        let body = "<urlset><url><loc>http://a.test/ok</loc></url><url><loc>http://a.test/cut";
        let (read, got) = all(body.as_bytes());
        assert_eq!(got.len(), 1);
        assert!(read.malformed);
        let (read, got) = all(b"<urlset><url><loc>http://a.test/a</loc></url><url </urlset>");
        assert_eq!(got.len(), 1);
        assert!(read.malformed);
        // A gzip stream cut in the middle.
        let gz = gzip(URLSET.as_bytes());
        let (read, _) = all(&gz[..gz.len() / 2]);
        assert!(read.malformed);
    }

    #[test]
    fn another_document_is_no_sitemap() {
        let (read, got) = all(b"<!DOCTYPE html><html><body><a href=\"/x\">x</a></body></html>");
        assert_eq!(read.kind, None);
        assert!(got.is_empty());
        let (read, _) = all(b"");
        assert_eq!(read.kind, Some(Kind::Text));
        assert_eq!(read.entries, 0);
    }

    #[test]
    fn a_huge_loc_is_skipped() {
        let body = format!(
            "<urlset><url><loc>http://a.test/{}</loc></url><url><loc>http://a.test/ok</loc></url></urlset>",
            "a".repeat(MAX_URL_LEN * 3)
        );
        let (_, got) = all(body.as_bytes());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1.loc, "http://a.test/ok");
    }
}
