//! The link graph: `DIR/links.tsv`, one `from_url TAB to_url` line per link extracted from a
//! page that passed the filter (canonical URLs; duplicates within a page kept, as the page
//! has them). Redirects are not links; they are in the URL log's note column.
//!
//! Appended across resumed runs. Many workers, one owner: each page's lines go as one string
//! through a bounded channel to one writer thread; a write error stops the writer, and the
//! next worker to send turns it into a fatal error of the crawl.

use anyhow::{Context, Result, anyhow};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

/// The file name under the state directory.
pub const FILE_NAME: &str = "links.tsv";

/// The writer thread's handle.
pub struct LinkLog {
    sender: SyncSender<String>,
    writer: JoinHandle<std::io::Result<()>>,
    path: PathBuf,
}

impl LinkLog {
    /// Opens (creating or appending to) `DIR/links.tsv` and starts the writer thread.
    pub fn start(dir: &Path, queue: usize) -> Result<LinkLog> {
        let path = dir.join(FILE_NAME);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let (sender, pages) = sync_channel::<String>(queue);
        let writer = std::thread::Builder::new()
            .name("links".into())
            .spawn(move || {
                let mut out = BufWriter::with_capacity(1 << 16, file);
                for lines in pages {
                    out.write_all(lines.as_bytes())?;
                }
                out.flush()
            })
            .context("starting the link writer thread")?;
        Ok(LinkLog {
            sender,
            writer,
            path,
        })
    }

    /// Queues the links of one page, waiting while the queue is full.
    pub fn write(&self, from: &str, to: impl IntoIterator<Item = impl AsRef<str>>) -> Result<()> {
        let mut lines = String::new();
        for target in to {
            lines.push_str(from);
            lines.push('\t');
            lines.push_str(target.as_ref());
            lines.push('\n');
        }
        if lines.is_empty() {
            return Ok(());
        }
        self.sender
            .send(lines)
            .map_err(|_| anyhow!("the link writer stopped"))
    }

    /// Writes what is queued and returns the writer's error, if it had one.
    pub fn finish(self) -> Result<()> {
        drop(self.sender);
        self.writer
            .join()
            .map_err(|_| anyhow!("the link writer panicked"))?
            .with_context(|| format!("writing {}", self.path.display()))
    }
}
