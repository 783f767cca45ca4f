//! The URL log: one line per fetch attempt, for pipes (`| cut -f1,6`) or `jq`.
//!
//! `tsv` (the default) columns (stable; new ones are only ever appended):
//! 1 status (HTTP status, 0 when no response), 2 depth, 3 bytes (body as received),
//! 4 milliseconds, 5 content type (`-` if none), 6 URL, 7 note (`-`, an error kind such as
//! `timeout`, `truncated`, or `redirect:<target>`).
//!
//! `jsonl`: one JSON object per line with the same fields, named `status`, `depth`, `bytes`,
//! `ms`, `content_type` (`null` if none), `url`, `note` (`null` if none), plus `error`: the
//! error kind when there was no response (status 0), else `null`.
//!
//! Many workers, one owner: lines go through a bounded channel to one writer thread, which
//! flushes whenever it has nothing more waiting, so `| head` sees lines promptly. A closed pipe
//! stops the crawl cleanly instead of killing it.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
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
}

impl LogLine<'_> {
    pub fn format(&self) -> String {
        let field = |s: &str| {
            if s.is_empty() {
                "-".to_owned()
            } else {
                sanitize(s)
            }
        };
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            self.status,
            self.depth,
            self.bytes,
            self.millis,
            field(self.content_type.unwrap_or("")),
            sanitize(self.url),
            field(self.note)
        )
    }

    /// The line as one JSON object (control characters and non-ASCII escaped).
    pub fn format_json(&self) -> String {
        let opt = |s: Option<&str>| match s {
            Some(s) if !s.is_empty() => json_string(s),
            _ => "null".to_owned(),
        };
        let error = (self.status == 0).then_some(self.note);
        format!(
            "{{\"status\":{},\"depth\":{},\"bytes\":{},\"ms\":{},\"content_type\":{},\"url\":{},\"note\":{},\"error\":{}}}\n",
            self.status,
            self.depth,
            self.bytes,
            self.millis,
            opt(self.content_type),
            json_string(self.url),
            opt(Some(self.note)),
            opt(error),
        )
    }

    pub fn format_as(&self, format: LogFormat) -> String {
        match format {
            LogFormat::Tsv => self.format(),
            LogFormat::Jsonl => self.format_json(),
        }
    }
}

/// `text` as a JSON string literal: quotes, backslashes, control characters and everything
/// outside ASCII escaped (`\uXXXX`, surrogate pairs above the BMP), so any reader accepts it.
pub fn json_string(text: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
    out
}

/// Escapes control characters (tabs and newlines included) so a hostile header or URL can
/// neither break the columns nor drive a terminal.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The writer thread's handle.
pub struct UrlLog {
    format: LogFormat,
    sender: Option<SyncSender<String>>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
    closed: Arc<AtomicBool>,
}

impl UrlLog {
    /// Starts a writer thread that owns `out`.
    pub fn start(out: Box<dyn Write + Send>, format: LogFormat) -> UrlLog {
        let (sender, lines) = sync_channel(4096);
        let closed = Arc::new(AtomicBool::new(false));
        let writer_closed = Arc::clone(&closed);
        let writer = std::thread::Builder::new()
            .name("url-log".into())
            .spawn(move || write_lines(out, lines, &writer_closed))
            .expect("spawning the URL log writer");
        UrlLog {
            format,
            sender: Some(sender),
            writer: Some(writer),
            closed,
        }
    }

    /// Queues a line; dropped silently once the reader has gone away (see `is_closed`).
    pub fn write(&self, line: &LogLine) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(line.format_as(self.format));
        }
    }

    /// True once the output was closed by its reader (`| head`).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Flushes and stops the writer; a broken pipe is not an error.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.sender.take();
        match self.writer.take().map(|w| w.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the URL log writer panicked")),
            None => Ok(()),
        }
    }
}

fn write_lines(
    mut out: Box<dyn Write + Send>,
    lines: Receiver<String>,
    closed: &AtomicBool,
) -> std::io::Result<()> {
    let mut pending = false;
    loop {
        let line = match lines.try_recv() {
            Ok(line) => line,
            Err(TryRecvError::Empty) => {
                if pending && let Err(e) = out.flush() {
                    return broken_pipe_is_fine(e, closed, &lines);
                }
                match lines.recv() {
                    Ok(line) => line,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        if let Err(e) = out.write_all(line.as_bytes()) {
            return broken_pipe_is_fine(e, closed, &lines);
        }
        pending = true;
    }
    match out.flush() {
        Err(e) => broken_pipe_is_fine(e, closed, &lines),
        Ok(()) => Ok(()),
    }
}

fn broken_pipe_is_fine(
    e: std::io::Error,
    closed: &AtomicBool,
    lines: &Receiver<String>,
) -> std::io::Result<()> {
    closed.store(true, Ordering::Relaxed);
    // Keep draining so senders never block on a full channel.
    for _ in lines.iter() {}
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
        };
        assert_eq!(
            line.format(),
            "200\t1\t10\t5\ttext/html\thttp://h/a\\tb\t-\n"
        );
    }

    #[test]
    fn json_lines_escape_everything_a_reader_could_choke_on() {
        let line = LogLine {
            status: 0,
            depth: 2,
            bytes: 0,
            millis: 7,
            content_type: None,
            url: "http://h/\"q\"\\\u{1}\u{e9}\u{1f600}",
            note: "timeout",
        };
        assert_eq!(
            line.format_json(),
            concat!(
                r#"{"status":0,"depth":2,"bytes":0,"ms":7,"content_type":null,"#,
                r#""url":"http://h/\"q\"\\\u0001\u00e9\ud83d\ude00","note":"timeout","error":"timeout"}"#,
                "\n"
            )
        );
        let ok = LogLine {
            status: 200,
            note: "",
            content_type: Some("text/html"),
            ..line
        };
        assert!(ok.format_json().contains(r#""note":null,"error":null}"#));
    }
}
