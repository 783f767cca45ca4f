//! The fetched page as a value: built once per answered page (`WorkerContext::after_fetch`),
//! read by the link sources and by every page sink (`crawl::sinks`), then moved into the
//! archive, whose record of it is the last step of the page.
//!
//! Invariants:
//! - The body is decoded at most once: its content codings are undone on the first `body()`
//!   (capped at `--max-body`, so a bomb costs no more than a large page), its charset on the
//!   first `text()`; a page nobody reads is never decoded.
//! - The response's bytes are never copied: the archive takes them by move (`into_archived`).
//! - Everything the crawl decided of the page (its note, digests, recrawl outcome, the revisit
//!   it is archived as) is set before the sinks see it; the sinks only read.

use crate::content;
use crate::content::metadata::Metadata;
use crate::content::text::TextMode;
use crate::crawl::note::Note;
use crate::fetch::client::Response;
use crate::frontier::Entry;
use crate::output::warc::Revisit;
use crate::recrawl::Outcome;
use encoding_rs::{Encoding, UTF_8};
use std::sync::OnceLock;
use url::Url;

/// One answered page (not a sitemap, not robots.txt, not an answer to ask again).
pub struct Page<'e> {
    /// What the frontier handed out: the URL as asked for, its depth and previous capture.
    pub entry: &'e Entry,
    /// `entry`'s URL, parsed once for the fetch and the links.
    pub url: Url,
    pub response: Response,
    /// Fetched only as a requisite of another page (`Filter::fetched_as_requisite`).
    pub requisite: bool,
    /// The URL log's note: everything noticed of the page, merged.
    pub note: Note,
    /// The body's payload digest (`sha1:` and base32), for the archive, payload dedupe and
    /// `fetched.tsv`.
    pub digest: String,
    /// The SHA-1 of its response record's block, taken with `digest` when records carry one.
    pub block_sha1: Option<[u8; 20]>,
    /// During a recrawl, how this capture compares with the last one.
    pub outcome: Option<Outcome>,
    /// Archived as a revisit of an earlier capture (unchanged in a recrawl, or a payload
    /// archived before), not whole.
    pub revisit: Option<Revisit>,
    /// `--text`: the page's text (`content::text`), for the URL log and its WET record.
    pub text_kept: Option<String>,
    /// `--text`, an HTML page: its title, language, canonical link, description and
    /// publication date (`content::metadata`), for the URL log.
    pub meta_kept: Option<Metadata>,
    /// `--markdown`, an HTML page: its main content as Markdown (`content::markdown`), for
    /// the URL log and `--save markdown`.
    pub markdown_kept: Option<String>,
    /// `--max-body`: decoding stops there.
    max_body: u64,
    /// The body with its content codings undone; `None` inside: it had none.
    decoded: OnceLock<Option<Vec<u8>>>,
    /// The decoded body as text (its charset's, else a `<meta charset>`'s, else UTF-8).
    text: OnceLock<String>,
}

impl<'e> Page<'e> {
    /// The page of `entry`, answered by `response`, with nothing noted or decided yet.
    pub fn new(entry: &'e Entry, url: Url, response: Response, max_body: u64) -> Page<'e> {
        Page {
            entry,
            url,
            response,
            requisite: false,
            note: Note::None,
            digest: String::new(),
            block_sha1: None,
            outcome: None,
            revisit: None,
            text_kept: None,
            meta_kept: None,
            markdown_kept: None,
            max_body,
            decoded: OnceLock::new(),
            text: OnceLock::new(),
        }
    }

    /// The body with its content codings (gzip, deflate, br, zstd) undone, decoded on the
    /// first call.
    pub fn body(&self) -> &[u8] {
        let decoded =
            self.decoded
                .get_or_init(|| match self.response.decoded_body(self.max_body) {
                    std::borrow::Cow::Owned(decoded) => Some(decoded),
                    std::borrow::Cow::Borrowed(_) => None,
                });
        decoded.as_deref().unwrap_or(&self.response.body)
    }

    /// The body as text: decoded from the Content-Type's charset, else (HTML) a `<meta
    /// charset>` near the top, else UTF-8; malformed bytes become U+FFFD. Decoded on the first
    /// call.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let html = self.response.is_html();
            decode(self.body(), self.response.charset(), html)
        })
    }

    /// Reads what `--text` (`text`) and `--markdown` ask of a page with text to read
    /// (`is_text`): its text, an HTML page's Markdown, and with either an HTML page's metadata
    /// (`content`). The crawl's worker and `crawl extract` call it alike.
    pub fn keep_content(&mut self, text: Option<TextMode>, markdown: bool) {
        if !self.is_text() {
            return;
        }
        let html = self.response.is_html();
        // The metadata first: its titles tell the main text which first line to drop.
        let (meta, titles) = if html && (text.is_some() || markdown) {
            let (meta, titles) = content::metadata::metadata_and_titles(self.text(), &self.url);
            (Some(meta), titles)
        } else {
            (None, Vec::new())
        };
        if let Some(mode) = text {
            let kept = content::text::text_of(mode, self.text(), html, &self.url, &titles);
            self.text_kept = Some(kept);
        }
        if html && markdown {
            self.markdown_kept = Some(content::markdown::main_markdown(self.text(), &self.url));
        }
        if let Some(mut meta) = meta {
            if meta.lang.is_none() {
                let read = self.text_kept.as_deref().or(self.markdown_kept.as_deref());
                meta.lang_detected = read.and_then(content::metadata::detect_language);
            }
            self.meta_kept = Some(meta);
        }
    }

    /// A 2xx answer of HTML or plain text: a page with text to read.
    pub fn is_text(&self) -> bool {
        (200..300).contains(&self.response.status)
            && self.response.skipped.is_none()
            && (self.response.is_html()
                || self.response.media_type().as_deref() == Some("text/plain"))
    }
}

/// `body` decoded from `charset`, else (HTML) the label of a `<meta charset>` near the top,
/// else UTF-8.
fn decode(body: &[u8], charset: Option<&str>, html: bool) -> String {
    let label = charset
        .map(|c| c.as_bytes().to_vec())
        .or_else(|| html.then(|| meta_charset(body)).flatten());
    let encoding = label
        .and_then(|l| Encoding::for_label(l.trim_ascii()))
        .unwrap_or(UTF_8);
    encoding.decode(body).0.into_owned()
}

/// The label of `charset=` in the first 1024 bytes (a prescan, as browsers do).
fn meta_charset(body: &[u8]) -> Option<Vec<u8>> {
    let head = body[..body.len().min(1024)].to_ascii_lowercase();
    let at = head.windows(8).position(|w| w == b"charset=")? + 8;
    let label: Vec<u8> = head[at..]
        .iter()
        .skip_while(|&&b| b == b'"' || b == b'\'')
        .take_while(|&&b| {
            !matches!(b, b'"' | b'\'' | b';' | b'>' | b'/') && !b.is_ascii_whitespace()
        })
        .copied()
        .collect();
    (!label.is_empty()).then_some(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_decoded_by_their_charset() {
        let latin1 = b"<meta charset=\"iso-8859-1\">\n<p>caf\xe9</p>";
        assert!(decode(latin1, None, true).contains("café"));
        assert!(decode(b"<p>caf\xe9</p>", Some("windows-1252"), true).contains("café"));
        assert!(decode("café".as_bytes(), None, false).contains("café"));
    }
}
