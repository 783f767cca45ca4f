//! The link graph: `DIR/links.tsv`, one `from_url TAB to_url` line per link extracted from a
//! page that passed the filter (canonical URLs; duplicates within a page kept, as the page
//! has them). Redirects are not links; they are in the URL log's note column.
//!
//! Written only with `--link-graph` (the crawl starts no `LinkLog` without it, and no line is
//! made); appended to by every run given it. Many workers, one owner: each page's lines are
//! added to a shared batch that one writer thread takes whole (`handoff`); a write error stops
//! the writer, and the next worker to add lines turns it into a fatal error of the crawl.

use crate::output::handoff::Handoff;
use anyhow::{Context, Result, anyhow};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The file name under the state directory.
pub const FILE_NAME: &str = "links.tsv";

/// The writer thread's handle.
pub struct LinkLog {
    lines: Arc<Handoff<Vec<u8>>>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
    path: PathBuf,
}

impl LinkLog {
    /// Opens (creating or appending to) `DIR/links.tsv` and starts the writer thread; `queue`
    /// bytes of lines wait for it at most, and it takes them an eighth of that at a time (or
    /// after 20 ms).
    pub fn start(dir: &Path, queue: usize) -> Result<LinkLog> {
        let path = dir.join(FILE_NAME);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let lines = Arc::new(Handoff::<Vec<u8>>::new(
            queue,
            queue / 8,
            Duration::from_millis(20),
        ));
        let batches = Arc::clone(&lines);
        let writer = std::thread::Builder::new()
            .name("links".into())
            .spawn(move || {
                let mut out = BufWriter::with_capacity(1 << 16, file);
                let mut written = || {
                    while let Some(mut batch) = batches.take() {
                        out.write_all(&batch)?;
                        // Its room is the next batch's: no batch grows from nothing.
                        batch.clear();
                        batches.give_back(batch);
                    }
                    out.flush()
                };
                let result = written();
                if result.is_err() {
                    batches.reader_gone();
                }
                result
            })
            .context("starting the link writer thread")?;
        Ok(LinkLog {
            lines,
            writer: Some(writer),
            path,
        })
    }

    /// Queues the links of one page, waiting while the queue is full. The lines are made in
    /// the shared batch, under its lock: they are copies of the URLs' bytes, as a copy from a
    /// buffer of the worker's would be, and so are copied once, not twice.
    pub fn write<T: AsRef<str>>(
        &self,
        from: &str,
        to: impl IntoIterator<Item = T, IntoIter: Clone>,
    ) -> Result<()> {
        let to = to.into_iter();
        let size: usize = to.clone().map(|t| from.len() + t.as_ref().len() + 2).sum();
        if size == 0 {
            return Ok(());
        }
        self.lines
            .push(size, |lines| push_lines(lines, size, from, to))
            .map_err(|_| anyhow!("the link writer stopped"))
    }

    /// Writes what is queued and returns the writer's error, if it had one.
    pub fn finish(mut self) -> Result<()> {
        self.lines.close();
        let writer = self.writer.take().expect("finished once");
        writer
            .join()
            .map_err(|_| anyhow!("the link writer panicked"))?
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

/// Appends a `from TAB to` line per target to `lines`, `size` bytes in all.
fn push_lines<T: AsRef<str>>(
    lines: &mut Vec<u8>,
    size: usize,
    from: &str,
    to: impl Iterator<Item = T>,
) {
    // Reserved at once: a page with thousands of links would otherwise grow the batch a copy
    // at a time.
    lines.reserve(size);
    for target in to {
        lines.extend_from_slice(from.as_bytes());
        lines.push(b'\t');
        lines.extend_from_slice(target.as_ref().as_bytes());
        lines.push(b'\n');
    }
}

impl Drop for LinkLog {
    /// A log dropped without `finish` (an error path) still lets its writer thread end.
    fn drop(&mut self) {
        self.lines.close();
    }
}
