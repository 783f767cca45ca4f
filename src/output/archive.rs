//! The WARC writer thread: many workers, one owner of the archive (ARCHITECTURE.md: one owner per
//! output). Workers add owned records to a shared batch (`handoff`: no wake-up while the thread
//! is busy); the thread takes the batch whole, writes each record as a `response` (or, during a
//! recrawl, a `revisit`) record and its `request` record, hands the batch's records to the
//! kernel in one write (`WarcWriter::flush`), then reports the batch's pages done (`archived`,
//! one call per batch): a page counts as done only once its record reached the kernel, so a
//! kill never leaves a done page missing from the archive. The same thread adds each
//! response's and revisit's line to its file's CDXJ index (`cdxj`), after the record: a kill
//! between the two (or before the flush) is repaired by rebuilding that index from the WARC
//! file on the next run.
//!
//! Bodies go back the other way: the thread keeps the bodies it wrote (a few, none large) and
//! each worker that hands over a record takes one for its next response
//! (`fetch::conn::recycle_body`), as a worker without an archive reuses its own; otherwise
//! every page costs a fresh allocation on a worker and a free on this thread, across arenas.

use crate::output::cdxj::{Capture, CdxjWriter};
use crate::output::digest::payload_and_block;
use crate::output::handoff::Handoff;
use crate::output::warc::{RequestResponse, Revisit, WarcStats, WarcWriter, payload_digest};
use crate::state::failpoint;
use anyhow::{Context, Result, anyhow};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

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
    /// The SHA-1 of its `response` record's block (head ‖ body), taken in the same pass as
    /// `payload_digest` (`page_digests`); `None` leaves it to the writer.
    pub block_sha1: Option<[u8; 20]>,
    /// During a recrawl, an unchanged page is archived as a `revisit` record.
    pub revisit: Option<Revisit>,
}

/// A page's payload digest and, when it is archived (`archiving`), the SHA-1 of its
/// `response` record's block, both in one pass over the body (`digest::payload_and_block`).
pub fn page_digests(archiving: bool, head: &[u8], body: &[u8]) -> (String, Option<[u8; 20]>) {
    match archiving {
        true => {
            let (payload, block) = payload_and_block(head, body);
            (payload, Some(block))
        }
        false => (payload_digest(body), None),
    }
}

/// The WARC writer thread: workers queue records, one thread owns the `WarcWriter`.
///
/// At most 8 to 32 records (by the number of workers) wait while the thread writes the batch
/// before them, so a slow disk slows the workers down instead of filling memory with bodies.
pub struct Archive {
    records: Arc<Handoff<Vec<ArchiveRecord>>>,
    /// Bodies written, emptied, for the workers' next responses.
    spare_bodies: Arc<Mutex<Vec<Vec<u8>>>>,
    writer: Option<JoinHandle<Result<WarcStats>>>,
}

/// Spare bodies kept at most, and the largest kept: a batch's worth of small pages, a few
/// MiB at most.
const SPARE_BODIES: usize = 32;
const SPARE_BODY_BYTES: usize = 128 << 10;

/// Records in a batch when the writer is woken, for `workers` workers; a batch holds
/// `ROOM` times as many at most. Each holds a whole body: a deep queue is memory, not speed
/// (one thread drains it). The room between the two matters: a writer woken only once its
/// batch was full found workers blocked on it by the time a core was free for it, each wait
/// a context switch and a wake-up (BENCHMARKS.md, "Session 10").
fn batch_records(workers: usize) -> usize {
    workers.clamp(4, 16) / 2
}

/// How long an idle writer waits for a batch to fill: pages are done this much later at most.
const LINGER: Duration = Duration::from_millis(5);

/// A batch's room: the records it holds at most, in batches that wake the writer. With twice,
/// workers still found the batch full about once every other page; four times halves that, at
/// 32 bodies queued at most (BENCHMARKS.md, "Session 10").
const ROOM: usize = 4;

impl Archive {
    /// Starts the writer thread on an opened archive, after repairing the indexes of its
    /// directory (`CdxjWriter::open`). `archived` is told the checksums of the pages of each
    /// batch once their records are written (handed to the kernel).
    pub fn start(
        mut warc: WarcWriter,
        workers: usize,
        archived: impl Fn(&[u64]) -> Result<()> + Send + 'static,
    ) -> Result<Archive> {
        let batch = batch_records(workers);
        let records = Arc::new(Handoff::new(ROOM * batch, batch, LINGER));
        let batches = Arc::clone(&records);
        let spare_bodies = Arc::new(Mutex::new(Vec::new()));
        let spare = Arc::clone(&spare_bodies);
        let mut index = CdxjWriter::open(warc.dir())?;
        let writer = std::thread::Builder::new()
            .name("warc".into())
            .spawn(move || {
                let result = write_batches(&mut warc, &mut index, &batches, &spare, archived);
                // On an error workers see the writer stop; the file being written stays
                // `.open` and the next run repairs it (and its index).
                if result.is_err() {
                    batches.reader_gone();
                }
                let stats = result.and_then(|()| warc.finish())?;
                index.close()?;
                Ok(stats)
            })
            .context("starting the WARC writer thread")?;
        Ok(Archive {
            records,
            spare_bodies,
            writer: Some(writer),
        })
    }

    /// Queues a record, waiting while the queue is full, and gives the calling thread a body
    /// the writer is done with for its next response.
    pub fn write(&self, record: ArchiveRecord) -> Result<()> {
        let mut record = Some(record);
        self.records
            .push(1, |batch| batch.extend(record.take()))
            .map_err(|_| anyhow!("the WARC writer stopped"))?;
        let spare = self.spare_bodies.lock().unwrap().pop();
        if let Some(body) = spare {
            crate::fetch::conn::recycle_body(body);
        }
        Ok(())
    }

    /// Writes what is queued, closes the last file and returns what was written, or the error
    /// that stopped the writer.
    pub fn finish(mut self) -> Result<WarcStats> {
        self.records.close();
        let writer = self.writer.take().expect("finished once");
        writer
            .join()
            .map_err(|_| anyhow!("the WARC writer panicked"))?
            .context("writing the WARC archive")
    }
}

impl Drop for Archive {
    /// An archive dropped without `finish` (an error path) still lets its thread end.
    fn drop(&mut self) {
        self.records.close();
    }
}

/// The writer thread's loop: each batch written in order, each record then its index line, then
/// the batch's pages reported done.
fn write_batches(
    warc: &mut WarcWriter,
    index: &mut CdxjWriter,
    batches: &Handoff<Vec<ArchiveRecord>>,
    spare_bodies: &Mutex<Vec<Vec<u8>>>,
    archived: impl Fn(&[u64]) -> Result<()>,
) -> Result<()> {
    let (mut done, mut bodies) = (Vec::new(), Vec::new());
    while let Some(batch) = batches.take() {
        done.clear();
        for r in batch {
            let exchange = RequestResponse {
                target_uri: &r.target_uri,
                date: r.date,
                ip: r.ip,
                request_head: &r.request_head,
                response_head: &r.response_head,
                response_body: &r.body,
                truncated: r.truncated,
            };
            // The payload digest the record carries (a not-modified revisit has none).
            let taken_here;
            let (written, digest) = match &r.page {
                None => {
                    let block_sha1;
                    (taken_here, block_sha1) = payload_and_block(&r.response_head, &r.body);
                    (
                        warc.write_response(&exchange, &taken_here, Some(&block_sha1)),
                        Some(taken_here.as_str()),
                    )
                }
                Some(PageRecord {
                    revisit: Some(revisit),
                    ..
                }) => {
                    let digest = match revisit {
                        Revisit::IdenticalPayload { digest, .. } => Some(digest.as_str()),
                        Revisit::NotModified { .. } => None,
                    };
                    (warc.write_revisit(&exchange, revisit), digest)
                }
                Some(page) => (
                    warc.write_response(&exchange, &page.payload_digest, page.block_sha1.as_ref()),
                    Some(page.payload_digest.as_str()),
                ),
            };
            let written = written.with_context(|| format!("archiving {}", r.target_uri))?;
            failpoint::hit("cdxj-line");
            let capture = Capture {
                target_uri: &r.target_uri,
                warc_date: &written.warc_date,
                revisit: matches!(&r.page, Some(p) if p.revisit.is_some()),
                http_head: &r.response_head,
                payload_digest: digest,
                offset: written.offset,
                length: written.length,
                filename: &written.file,
            };
            index
                .add(&capture)
                .with_context(|| format!("indexing {}", r.target_uri))?;
            done.extend(r.page.map(|page| page.key));
            if r.body.capacity() <= SPARE_BODY_BYTES && bodies.len() < SPARE_BODIES {
                bodies.push(r.body);
            }
        }
        warc.flush().context("archiving a batch of records")?;
        if !bodies.is_empty() {
            let mut spare = spare_bodies.lock().unwrap();
            let room = SPARE_BODIES.saturating_sub(spare.len());
            spare.extend(bodies.drain(..).take(room).map(|mut body| {
                body.clear();
                body
            }));
        }
        if !done.is_empty() {
            archived(&done)?;
        }
    }
    Ok(())
}
