//! The URL log: one line per fetch attempt, for pipes (`| cut -f1,6`) or `jq`.
//!
//! `tsv` (the default) columns (stable; new ones are only ever appended):
//! 1 status (HTTP status, 0 when no response), 2 depth, 3 bytes (body as received),
//! 4 milliseconds, 5 content type (`-` if none), 6 URL, 7 note (`-`, an error kind such as
//! `timeout`, `truncated`, or `redirect:<target>`).
//!
//! `jsonl`: one JSON object per line with the same fields, named `status`, `depth`, `bytes`,
//! `ms`, `content_type` (`null` if none), `url`, `note` (`null` if none), plus `error`: the
//! error kind when there was no response (status 0: the note up to its first comma, without
//! a retry's `,retry-after:SECS` or `,retries-exhausted`), else `null`. serde_json writes it, and
//! strings stay ASCII: everything else is `\uXXXX` (docs/url-log.md promises it).
//!
//! Many workers, one owner: lines are added to a shared batch that one writer thread takes
//! whole (`handoff`: one wake-up per batch, not per line); it flushes whenever it has nothing
//! more waiting, so `| head` sees lines promptly. A closed pipe
//! stops the crawl cleanly instead of killing it: the writer calls the `on_closed` it was
//! started with (the crawl's stop, `Reason::LogClosed`).
//!
//! A page is done (`frontier`) only once its line has reached the kernel (`Written::wait`,
//! before the dispatcher records it done): a kill then never leaves a done page unlogged,
//! which no resumed run would log.

use crate::content::metadata::Metadata;
use crate::output::handoff::{Handoff, with_line_buffer};
use crate::url::escape::push_sanitized;
use serde::Serialize;
use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// How the log is written (`--log-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Tab-separated columns.
    #[default]
    Tsv,
    /// One JSON object per line.
    Jsonl,
}

/// One fetch attempt, as the log shows it.
pub struct LogLine<'a> {
    pub status: u16,
    pub depth: u32,
    pub bytes: u64,
    pub millis: u128,
    pub content_type: Option<&'a str>,
    pub url: &'a str,
    pub note: &'a str,
    /// `--text`: the page's text (`jsonl` only).
    pub text: Option<&'a str>,
    /// `--text`, an HTML page: its metadata (`jsonl` only).
    pub meta: Option<&'a Metadata>,
    /// `--markdown`, an HTML page: its main content as Markdown (`jsonl` only).
    pub markdown: Option<&'a str>,
}

impl LogLine<'_> {
    /// The `tsv` line, newline included.
    #[cfg(test)]
    pub fn format(&self) -> String {
        let mut out = Vec::new();
        self.write_tsv(&mut out);
        String::from_utf8(out).expect("UTF-8 in, UTF-8 out")
    }

    /// Appends the `tsv` line and a newline to `out`: empty text columns as `-`, control
    /// characters escaped (`sanitize`).
    pub fn write_tsv(&self, out: &mut Vec<u8>) {
        let text = |out: &mut Vec<u8>, s: &str, empty: &str| {
            if s.is_empty() {
                out.extend_from_slice(empty.as_bytes());
            } else {
                push_sanitized(out, s);
            }
            out.push(b'\t');
        };
        let numbers = (self.status, self.depth, self.bytes, self.millis);
        let _ = write!(
            out,
            "{}\t{}\t{}\t{}\t",
            numbers.0, numbers.1, numbers.2, numbers.3
        );
        text(out, self.content_type.unwrap_or(""), "-");
        text(out, self.url, "");
        text(out, self.note, "-");
        *out.last_mut().expect("a column was written") = b'\n';
    }

    /// Appends the line as one JSON object and a newline to `out`: quotes, backslashes and
    /// control characters escaped by serde_json, and everything outside printable ASCII as
    /// `\uXXXX` (see `AsciiOnly`).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let view = JsonLine {
            status: self.status,
            depth: self.depth,
            bytes: self.bytes,
            ms: self.millis,
            content_type: self.content_type.and_then(nonempty),
            url: self.url,
            note: nonempty(self.note),
            error: (self.status == 0)
                .then(|| self.note.split(',').next().unwrap_or_default())
                .and_then(nonempty),
            text: self.text,
            meta: self.meta,
            markdown: self.markdown,
        };
        let mut serializer = serde_json::Serializer::with_formatter(&mut *out, AsciiOnly);
        view.serialize(&mut serializer)
            .expect("numbers and strings serialize into a Vec");
        out.push(b'\n');
    }

    /// Appends the line in `format`, newline included: the bytes the writer thread writes.
    pub fn write_as(&self, format: LogFormat, out: &mut Vec<u8>) {
        match format {
            LogFormat::Tsv => self.write_tsv(out),
            LogFormat::Jsonl => self.write_json(out),
        }
    }
}

/// `None` for "", which the log shows as `null`.
fn nonempty(text: &str) -> Option<&str> {
    Some(text).filter(|text| !text.is_empty())
}

/// The `jsonl` object: `LogLine` with the documented key names and order, `null`s for absent
/// values. Keys are only ever appended.
#[derive(Serialize)]
struct JsonLine<'a> {
    status: u16,
    depth: u32,
    bytes: u64,
    ms: u128,
    content_type: Option<&'a str>,
    url: &'a str,
    note: Option<&'a str>,
    /// The error kind when there was no response (status 0).
    error: Option<&'a str>,
    /// `--text`: the page's text; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    /// `--text`, an HTML page's metadata (`content::metadata`), its keys at this level, each
    /// absent when the page does not say it.
    #[serde(flatten)]
    meta: Option<&'a Metadata>,
    /// `--markdown`, an HTML page's main content as Markdown; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    markdown: Option<&'a str>,
}

/// A field of the URL log: its `tsv` column (1 for the first) and `jsonl` key, its JSON type and
/// what it means. The one place the log's format is described: docs/url-log.md is rendered from
/// `FIELDS` (`cargo run --example manual`), and `every_field_written_is_documented` holds it to
/// the columns `write_tsv` and the keys `write_json` write, in their order.
pub struct Field {
    /// `None`: only in `jsonl`.
    pub column: Option<u8>,
    /// The `jsonl` key.
    pub key: &'static str,
    /// `string` or `integer`, with ` or null` when it may be `null`.
    pub kind: &'static str,
    /// What it means, for scripts: one or two sentences of Markdown.
    pub meaning: &'static str,
}

/// Every field of the URL log, in the order written.
pub const FIELDS: &[Field] = &[
    Field {
        column: Some(1),
        key: "status",
        kind: "integer",
        meaning: "The HTTP status; 0 when there was no response (or the URL was not asked for).",
    },
    Field {
        column: Some(2),
        key: "depth",
        kind: "integer",
        meaning: "Link hops from a seed (seeds, robots.txt and sitemaps are 0).",
    },
    Field {
        column: Some(3),
        key: "bytes",
        kind: "integer",
        meaning: "Body bytes as received (before decoding a content coding).",
    },
    Field {
        column: Some(4),
        key: "ms",
        kind: "integer",
        meaning: "Response time in milliseconds.",
    },
    Field {
        column: Some(5),
        key: "content_type",
        kind: "string or null",
        meaning: "The Content-Type header as sent; `-` in tsv (`null`) when there is none.",
    },
    Field {
        column: Some(6),
        key: "url",
        kind: "string",
        meaning: "The URL, in canonical form.",
    },
    Field {
        column: Some(7),
        key: "note",
        kind: "string or null",
        meaning: "What else to know of this fetch, `-` in tsv (`null`) when nothing: an error \
                  kind (`timeout`), `redirect:TARGET`, `robots`, `sitemap...`, `truncated`, \
                  `retry-after:SECS`, a recrawl's `new`/`changed`/`unchanged`/`gone`, ... \
                  (every note: [crawling.md](crawling.md#notes-in-the-url-log)).",
    },
    Field {
        column: None,
        key: "error",
        kind: "string or null",
        meaning: "With status 0: the note up to its first comma (without a retry's \
                  `,retry-after:SECS` or `,retries-exhausted`), the error kind of a fetch \
                  without a response or why the URL was not asked for (`host-budget`, ...); \
                  else `null`.",
    },
    Field {
        column: None,
        key: "text",
        kind: "string",
        meaning: "With `--text`, on HTML and plain-text pages: the page's text (`main` or \
                  `full`), lines joined by `\\n`; the key is absent otherwise.",
    },
    Field {
        column: None,
        key: "title",
        kind: "string",
        meaning: "With `--text` or `--markdown`, on HTML pages: the `<title>` (else `og:title`); absent when \
                  the page has none, as are the four keys after it.",
    },
    Field {
        column: None,
        key: "lang",
        kind: "string",
        meaning: "With `--text`: the `lang` attribute of `<html>`.",
    },
    Field {
        column: None,
        key: "canonical",
        kind: "string",
        meaning: "With `--text`: the `<link rel=canonical>` URL, made absolute.",
    },
    Field {
        column: None,
        key: "description",
        kind: "string",
        meaning: "With `--text`: `<meta name=description>` (else `og:description`).",
    },
    Field {
        column: None,
        key: "published",
        kind: "string",
        meaning: "With `--text`: the publication date as the page writes it (JSON-LD \
                  `datePublished`, else `article:published_time`).",
    },
    Field {
        column: None,
        key: "lang_detected",
        kind: "string",
        meaning: "With `--text` or `--markdown`, on HTML pages without a `lang` attribute: \
                  the language of the page's text (`--text`'s, else the Markdown) as whatlang \
                  detects it, an ISO 639-3 code (`eng`, `deu`); absent where the guess is \
                  unreliable and wherever `lang` is present.",
    },
    Field {
        column: None,
        key: "markdown",
        kind: "string",
        meaning: "With `--markdown`, on HTML pages: the main content (what `--text main` keeps, \
                  links and images too) as Markdown: ATX headings, lists, emphasis, absolute \
                  links and images, fenced code with its language, GFM tables, blockquotes; \
                  absent otherwise. The metadata keys above are written with it.",
    },
];

/// serde_json's compact output, except that string contents outside printable ASCII (DEL,
/// C1 controls, bidi overrides, any non-ASCII) are written `\uXXXX`, surrogate pairs above the
/// BMP: the log stays ASCII, so it cannot drive a terminal and any reader accepts it
/// (docs/url-log.md).
/// serde_json itself escapes `"`, `\` and C0 controls before a fragment gets here.
struct AsciiOnly;

impl serde_json::ser::Formatter for AsciiOnly {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut plain = 0;
        for (i, c) in fragment.char_indices() {
            if (' '..='~').contains(&c) {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[plain..i])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            plain = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[plain..])
    }
}

/// Bytes of formatted lines waiting for the writer at most (workers wait beyond it).
const PENDING_BYTES: usize = 256 * 1024;
/// An idle writer is woken for this many bytes of lines, or after `LINGER`: a reader of the
/// log sees a line 10 ms after it is written at most.
const WAKE_BYTES: usize = 16 * 1024;
const LINGER: std::time::Duration = std::time::Duration::from_millis(10);

/// The writer thread's handle.
pub struct UrlLog {
    format: LogFormat,
    lines: Arc<Handoff<Vec<u8>>>,
    progress: Arc<Progress>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
}

/// How far the writer has got.
#[derive(Default)]
struct Progress {
    /// Bytes of lines queued so far, counted as they join the batch (in the batches' order).
    queued: AtomicU64,
    /// Bytes of them handed to the kernel (written and flushed); `u64::MAX` once the writer
    /// has stopped (nothing queued is waited for then).
    written: Mutex<u64>,
    advanced: Condvar,
    /// Threads in `Written::wait`: the writer flushes after each batch while there are any.
    waiting: AtomicUsize,
}

impl Progress {
    fn set_written(&self, bytes: u64) {
        *self.written.lock().unwrap() = bytes;
        self.advanced.notify_all();
    }
}

/// Waits for the URL log's lines queued so far to reach the kernel (see the module doc).
#[derive(Clone)]
pub struct Written {
    lines: Arc<Handoff<Vec<u8>>>,
    progress: Arc<Progress>,
}

impl Written {
    /// Returns once every line queued before the call is written (or the writer has stopped).
    pub fn wait(&self) {
        let target = self.progress.queued.load(Ordering::SeqCst);
        let mut written = self.progress.written.lock().unwrap();
        if *written >= target {
            return;
        }
        self.progress.waiting.fetch_add(1, Ordering::SeqCst);
        self.lines.hurry();
        while *written < target {
            written = self.progress.advanced.wait(written).unwrap();
        }
        self.progress.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Called once by the writer thread when the log's reader has gone away.
pub type OnClosed = Box<dyn FnOnce() + Send>;

impl UrlLog {
    /// Starts a writer thread that owns `out`; it calls `on_closed` if `out`'s reader goes away.
    pub fn start(out: Box<dyn Write + Send>, format: LogFormat, on_closed: OnClosed) -> UrlLog {
        let lines = Arc::new(Handoff::new(PENDING_BYTES, WAKE_BYTES, LINGER));
        let progress = Arc::new(Progress::default());
        let (writer_lines, writer_progress) = (Arc::clone(&lines), Arc::clone(&progress));
        let writer = std::thread::Builder::new()
            .name("url-log".into())
            .spawn(move || {
                let result = write_lines(out, &writer_lines, &writer_progress, on_closed);
                writer_progress.set_written(u64::MAX);
                result
            })
            .expect("spawning the URL log writer");
        UrlLog {
            format,
            lines,
            progress,
            writer: Some(writer),
        }
    }

    /// A handle that waits for the lines queued so far to be written.
    pub fn written(&self) -> Written {
        Written {
            lines: Arc::clone(&self.lines),
            progress: Arc::clone(&self.progress),
        }
    }

    /// Queues a line; dropped silently once the reader has gone away (`on_closed`).
    pub fn write(&self, line: &LogLine) {
        with_line_buffer(
            |out| line.write_as(self.format, out),
            |bytes| {
                let _ = self.lines.push(bytes.len(), |batch| {
                    batch.extend_from_slice(bytes);
                    let queued = &self.progress.queued;
                    queued.fetch_add(bytes.len() as u64, Ordering::SeqCst);
                });
            },
        );
    }

    /// Flushes and stops the writer; a broken pipe is not an error.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.lines.close();
        match self.writer.take().map(|w| w.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the URL log writer panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for UrlLog {
    /// A log dropped without `finish` (an error path) still lets its writer thread end.
    fn drop(&mut self) {
        self.lines.close();
    }
}

/// The writer thread: writes each batch of lines as it comes, and flushes whenever nothing
/// more is waiting or someone waits for the lines (`Written`).
fn write_lines(
    mut out: Box<dyn Write + Send>,
    lines: &Handoff<Vec<u8>>,
    progress: &Progress,
    on_closed: OnClosed,
) -> std::io::Result<()> {
    let (mut pending, mut taken) = (false, 0u64);
    loop {
        let batch = match lines.try_take() {
            Some(batch) => batch,
            None => {
                if pending {
                    if let Err(e) = out.flush() {
                        return broken_pipe_is_fine(e, on_closed, lines);
                    }
                    progress.set_written(taken);
                }
                match lines.take() {
                    Some(batch) => batch,
                    None => break,
                }
            }
        };
        if let Err(e) = out.write_all(&batch) {
            return broken_pipe_is_fine(e, on_closed, lines);
        }
        taken += batch.len() as u64;
        pending = true;
        if progress.waiting.load(Ordering::SeqCst) > 0 {
            if let Err(e) = out.flush() {
                return broken_pipe_is_fine(e, on_closed, lines);
            }
            progress.set_written(taken);
            pending = false;
        }
    }
    match out.flush() {
        Err(e) => broken_pipe_is_fine(e, on_closed, lines),
        Ok(()) => Ok(()),
    }
}

fn broken_pipe_is_fine(
    e: std::io::Error,
    on_closed: OnClosed,
    lines: &Handoff<Vec<u8>>,
) -> std::io::Result<()> {
    on_closed();
    // Later lines are dropped, so workers never wait for a writer that has gone.
    lines.reader_gone();
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_tab_separated_and_escaped() {
        let line = LogLine {
            status: 200,
            depth: 1,
            bytes: 10,
            millis: 5,
            content_type: Some("text/html"),
            url: "http://h/a\tb",
            note: "",
            text: None,
            meta: None,
            markdown: None,
        };
        assert_eq!(
            line.format(),
            "200\t1\t10\t5\ttext/html\thttp://h/a\\tb\t-\n"
        );
    }

    /// A buffered output, as `--log FILE` is: bytes reach `out` only when flushed.
    struct Buffered {
        buffer: Vec<u8>,
        out: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Buffered {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.buffer.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.out.lock().unwrap().append(&mut self.buffer);
            Ok(())
        }
    }

    #[test]
    fn written_returns_once_the_lines_queued_before_it_are_flushed() {
        let out = Arc::new(Mutex::new(Vec::new()));
        let buffered = Buffered {
            buffer: Vec::new(),
            out: Arc::clone(&out),
        };
        let log = UrlLog::start(Box::new(buffered), LogFormat::Tsv, Box::new(|| {}));
        let written = log.written();
        for i in 1..=200 {
            let url = format!("http://h/{i}");
            log.write(&LogLine {
                status: 200,
                depth: 1,
                bytes: 10,
                millis: 5,
                content_type: None,
                url: &url,
                note: "",
                text: None,
                meta: None,
                markdown: None,
            });
            if i % 7 == 0 {
                written.wait();
                let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
                assert_eq!(text.lines().count(), i, "lines out after {i} queued");
                assert!(text.ends_with(&format!("{url}\t-\n")), "{text}");
            }
        }
        log.finish().unwrap();
        written.wait(); // a stopped writer keeps nobody waiting
        assert_eq!(
            String::from_utf8_lossy(&out.lock().unwrap())
                .lines()
                .count(),
            200
        );
    }

    fn json(line: &LogLine) -> serde_json::Value {
        let mut bytes = Vec::new();
        line.write_as(LogFormat::Jsonl, &mut bytes);
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(
            text.ends_with('\n') && text.matches('\n').count() == 1,
            "{text:?}"
        );
        assert!(
            text.bytes()
                .all(|b| (b' '..=b'~').contains(&b) || b == b'\n'),
            "{text:?}"
        );
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
    }

    /// docs/url-log.md is rendered from `FIELDS`: a column or key added without a line there
    /// (or documented but gone, or moved) fails here.
    #[test]
    fn every_field_written_is_documented() {
        let some = |text: &str| Some(text.to_owned());
        let meta = Metadata {
            title: some("A title"),
            lang: some("en"),
            canonical: some("http://a.test/"),
            description: some("About a."),
            published: some("2026-12-07"),
            lang_detected: some("eng"),
        };
        let line = LogLine {
            status: 0,
            depth: 1,
            bytes: 2,
            millis: 3,
            content_type: Some("text/html"),
            url: "http://a.test/",
            note: "timeout,retries-exhausted",
            text: Some("A title\nThe page's text."),
            meta: Some(&meta),
            markdown: Some("# A title\n\nThe page's *text*."),
        };
        let mut tsv = Vec::new();
        line.write_tsv(&mut tsv);
        let columns = String::from_utf8(tsv).unwrap().split('\t').count();
        let documented: Vec<u8> = FIELDS.iter().filter_map(|f| f.column).collect();
        assert_eq!(
            documented,
            (1..=columns as u8).collect::<Vec<_>>(),
            "tsv columns"
        );
        let mut jsonl = Vec::new();
        line.write_json(&mut jsonl);
        let text = String::from_utf8(jsonl).unwrap();
        let value = json(&line);
        let map = value.as_object().unwrap();
        assert_eq!(map.len(), FIELDS.len(), "{text}");
        let mut last = 0;
        for field in FIELDS {
            let at = text.find(&format!("\"{}\":", field.key));
            let at = at.unwrap_or_else(|| panic!("{} is not written: {text}", field.key));
            assert!(at > last, "{} out of order: {text}", field.key);
            last = at;
            let kind = match &map[field.key] {
                serde_json::Value::String(_) => "string",
                serde_json::Value::Number(_) => "integer",
                other => panic!("{}: {other}", field.key),
            };
            assert_eq!(
                field.kind.trim_end_matches(" or null"),
                kind,
                "{}",
                field.key
            );
        }
    }

    #[test]
    fn json_lines_escape_everything_a_reader_could_choke_on() {
        // Quotes, a backslash, C0 and C1 controls, DEL, a tab and a newline, a bidi override,
        // non-ASCII in and above the BMP, and the replacement character an invalid UTF-8 byte
        // in a header becomes (headers are decoded lossily before they get here).
        let url = "http://h/\"q\"\\\u{1}\u{8}\u{1b}[2J\u{7f}\u{9b}\t\n\u{202e}\u{e9}\u{1f600}";
        let content_type = String::from_utf8_lossy(b"text/\xffhtml");
        let line = LogLine {
            status: 0,
            depth: 2,
            bytes: 0,
            millis: 7,
            content_type: None,
            url,
            note: "timeout",
            text: None,
            meta: None,
            markdown: None,
        };
        let value = json(&line);
        // The documented key order (serde_json::Value sorts its keys, so look at the text).
        let mut bytes = Vec::new();
        line.write_as(LogFormat::Jsonl, &mut bytes);
        let text = String::from_utf8(bytes).unwrap();
        let keys = [
            "status",
            "depth",
            "bytes",
            "ms",
            "content_type",
            "url",
            "note",
            "error",
        ];
        let at: Vec<usize> = keys
            .iter()
            .map(|k| text.find(&format!("\"{k}\":")).unwrap())
            .collect();
        assert!(at.is_sorted(), "{text}");
        assert_eq!(value.as_object().unwrap().len(), keys.len(), "{text}");
        assert_eq!(
            value,
            serde_json::json!({
                "status": 0, "depth": 2, "bytes": 0, "ms": 7, "content_type": null,
                "url": url, "note": "timeout", "error": "timeout",
            })
        );
        // Escaped as JSON readers expect: the astral character as a surrogate pair.
        assert!(text.contains(r#"\"q\"\\\u0001"#), "{text}");
        assert!(text.contains(r"\u00e9\ud83d\ude00"), "{text}");

        let ok = LogLine {
            status: 200,
            note: "",
            content_type: Some(&content_type),
            ..line
        };
        let value = json(&ok);
        assert_eq!(value["content_type"], "text/\u{fffd}html");
        assert_eq!(value["note"], serde_json::Value::Null);
        assert_eq!(value["error"], serde_json::Value::Null);
        // An empty content type is absent, as the TSV's `-`; a status-0 line without a note
        // has no error kind.
        let bare = LogLine {
            status: 0,
            content_type: Some(""),
            note: "",
            ..ok
        };
        let value = json(&bare);
        assert_eq!(value["content_type"], serde_json::Value::Null);
        assert_eq!(value["error"], serde_json::Value::Null);
    }
}
