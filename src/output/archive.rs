//! The WARC writer thread: many workers, one owner of the archive (ARCHITECTURE.md: one owner per
//! output). Workers queue owned records over a bounded channel; the thread writes each as a
//! `response` (or, during a recrawl, a `revisit`) record and its `request` record, then reports
//! the page done (`archived`): a page counts as done only once its record reached the kernel,
//! so a kill never leaves a done page missing from the archive. The same thread adds each
//! response's and revisit's line to its file's CDXJ index (`cdxj`), after the record: a kill
//! between the two is repaired by rebuilding that index from the WARC file on the next run.

use crate::output::cdxj::{Capture, CdxjWriter};
use crate::output::warc::{Exchange, Revisit, WarcStats, WarcWriter, payload_digest};
use crate::state::failpoint;
use anyhow::{Context, Result, anyhow};
use std::net::IpAddr;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::SystemTime;

/// One exchange for the archive, owned so that it can cross to the writer thread.
pub struct ArchiveRecord {
    pub target_uri: String,
    pub date: SystemTime,
    pub ip: Option<IpAddr>,
    pub request_head: Vec<u8>,
    pub response_head: Vec<u8>,
    pub body: Vec<u8>,
    /// The `WARC-Truncated` reason when the body is not whole (`length`, `unspecified`).
    pub truncated: Option<&'static str>,
    /// For a page (not robots.txt, not a response to ask again): what its record also needs.
    pub page: Option<PageRecord>,
}

/// What a page's record carries beyond the exchange.
pub struct PageRecord {
    /// The page's checksum: it is done once its record is written.
    pub key: u64,
    /// The body's payload digest, taken once by the worker (it goes to `fetched.tsv` too).
    pub payload_digest: String,
    /// During a recrawl, an unchanged page is archived as a `revisit` record.
    pub revisit: Option<Revisit>,
}

/// The WARC writer thread: workers queue records, one thread owns the `WarcWriter`.
///
/// The queue holds at most one record per worker (at least 4, at most 256), so a slow disk
/// slows the workers down instead of filling memory with bodies: at most about twice the
/// bodies the workers hold anyway.
pub struct Archive {
    sender: SyncSender<ArchiveRecord>,
    writer: JoinHandle<Result<WarcStats>>,
}

impl Archive {
    /// Starts the writer thread on an opened archive, after repairing the indexes of its
    /// directory (`CdxjWriter::open`). `archived` is told each page's checksum once its record
    /// is written (handed to the kernel).
    pub fn start(
        mut warc: WarcWriter,
        workers: usize,
        archived: impl Fn(u64) -> Result<()> + Send + 'static,
    ) -> Result<Archive> {
        // Each queued record holds a whole body: a deep queue is memory, not speed (one thread
        // drains it), so it is not one slot per worker (BENCHMARKS.md, "Speed at the web's shape").
        let (sender, records) = sync_channel::<ArchiveRecord>(workers.clamp(4, 16));
        let mut index = CdxjWriter::open(warc.dir())?;
        let writer = std::thread::Builder::new()
            .name("warc".into())
            .spawn(move || {
                // On an error the receiver is dropped, so workers see the writer stop; the
                // file being written stays `.open` and the next run repairs it.
                for r in records {
                    let exchange = Exchange {
                        target_uri: &r.target_uri,
                        date: r.date,
                        ip: r.ip,
                        request_head: &r.request_head,
                        response_head: &r.response_head,
                        response_body: &r.body,
                        truncated: r.truncated,
                    };
                    // The payload digest the record carries (a not-modified revisit has none).
                    let (written, digest) = match &r.page {
                        None => (
                            warc.write_exchange(&exchange),
                            Some(payload_digest(&r.body)),
                        ),
                        Some(PageRecord {
                            revisit: Some(revisit),
                            ..
                        }) => {
                            let digest = match revisit {
                                Revisit::IdenticalPayload { digest, .. } => Some(digest.clone()),
                                Revisit::NotModified { .. } => None,
                            };
                            (warc.write_revisit(&exchange, revisit), digest)
                        }
                        Some(page) => (
                            warc.write_response(&exchange, &page.payload_digest),
                            Some(page.payload_digest.clone()),
                        ),
                    };
                    let written = written.with_context(|| format!("archiving {}", r.target_uri))?;
                    failpoint::hit("cdxj-line");
                    let http_head: &[u8] = &r.response_head;
                    index
                        .add(&Capture {
                            target_uri: &r.target_uri,
                            warc_date: &written.warc_date,
                            revisit: matches!(&r.page, Some(p) if p.revisit.is_some()),
                            http_head,
                            payload_digest: digest.as_deref(),
                            offset: written.offset,
                            length: written.length,
                            filename: &written.file,
                        })
                        .with_context(|| format!("indexing {}", r.target_uri))?;
                    if let Some(page) = &r.page {
                        archived(page.key)?;
                    }
                }
                let stats = warc.finish()?;
                index.close()?;
                Ok(stats)
            })
            .context("starting the WARC writer thread")?;
        Ok(Archive { sender, writer })
    }

    /// Queues a record, waiting while the queue is full.
    pub fn write(&self, record: ArchiveRecord) -> Result<()> {
        self.sender
            .send(record)
            .map_err(|_| anyhow!("the WARC writer stopped"))
    }

    /// Writes what is queued, closes the last file and returns what was written, or the error
    /// that stopped the writer.
    pub fn finish(self) -> Result<WarcStats> {
        drop(self.sender);
        self.writer
            .join()
            .map_err(|_| anyhow!("the WARC writer panicked"))?
            .context("writing the WARC archive")
    }
}
