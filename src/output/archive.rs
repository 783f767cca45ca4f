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
//! With `--text`, the same thread writes each page's text right after its record, as a
//! `conversion` record of a WET file (`WarcWriter::open_wet`) that refers to it
//! (`WARC-Refers-To`, the record's ID), and hands the batch's WET records to the kernel with its
//! WARC records, before the pages are reported done: a done page's text is in a WET file. A
//! kill leaves the WET file `.open`, repaired like a WARC file on the next run.
//!
//! Payload dedupe (`seen::digests`, on unless `--no-payload-dedupe`): a worker asks
//! `duplicate_of` before it logs a page; a whole 2xx payload archived before (this crawl, an
//! earlier generation, or a crawl named by `--dedupe-against`) makes the page a `revisit` of that
//! first capture (profile identical-payload-digest, with its URI and date), and the first page
//! with a payload claims it. The thread confirms a claim when it writes the claim's `response`
//! record, and appends the originals' lines to the store's log after the batch's flush, before
//! the pages are reported done. A revisit whose original is claimed but not yet written waits
//! here (`waiting`) and is written right after it: a WARC file never holds a revisit before the
//! record it refers to.
//!
//! Bodies go back the other way: the thread keeps the bodies it wrote (a few, none large) and
//! each worker that hands over a record takes one for its next response
//! (`fetch::conn::recycle_body`), as a worker without an archive reuses its own; otherwise
//! every page costs a fresh allocation on a worker and a free on this thread, across arenas.

use crate::output::cdxj::{Capture, CdxjWriter};
use crate::output::digest::page_digests;
use crate::output::handoff::Handoff;
use crate::output::warc::{self, Conversion, RequestResponse, Revisit, WarcStats, WarcWriter};
use crate::seen::digests::DigestStore;
use crate::state::failpoint;
use anyhow::{Context, Result, anyhow};
use std::collections::VecDeque;
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
    /// `payload_digest` (`digest::page_digests`); `None` leaves it to the writer, which takes
    /// it only when response records carry block digests (the default; `--no-warc-block-digest`).
    pub block_sha1: Option<[u8; 20]>,
    /// During a recrawl, an unchanged page is archived as a `revisit` record.
    pub revisit: Option<Revisit>,
    /// `--text`: the page's text, written after its record as a WET `conversion` record that
    /// refers to it.
    pub text: Option<String>,
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
    /// Payload dedupe's store; `None` with `--no-payload-dedupe`.
    digests: Option<Arc<DigestStore>>,
    /// Whether response records carry a block digest (`WarcConfig::response_block_digests`).
    block_digests: bool,
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
        mut wet: Option<WarcWriter>,
        workers: usize,
        archived: impl Fn(&[u64]) -> Result<()> + Send + 'static,
    ) -> Result<Archive> {
        let batch = batch_records(workers);
        let records = Arc::new(Handoff::new(ROOM * batch, batch, LINGER));
        let batches = Arc::clone(&records);
        let spare_bodies = Arc::new(Mutex::new(Vec::new()));
        let spare = Arc::clone(&spare_bodies);
        let mut index = CdxjWriter::open(warc.dir())?;
        let digests = open_digests(&warc)?;
        let store = digests.clone();
        let block_digests = warc.response_block_digests();
        let writer = std::thread::Builder::new()
            .name("warc".into())
            .spawn(move || {
                let mut out = Written {
                    warc: &mut warc,
                    wet: wet.as_mut(),
                    index: &mut index,
                    digests: store.as_deref(),
                };
                let result = write_batches(&mut out, &batches, &spare, archived);
                // On an error workers see the writer stop; the file being written stays
                // `.open` and the next run repairs it (and its index).
                if result.is_err() {
                    batches.reader_gone();
                }
                result?;
                // The index is sorted (and synced) on a thread of its own while the WARC file
                // is synced and renamed; it takes its final name only after the WARC file.
                let (closed, sorted) = std::thread::scope(|scope| {
                    let sorting = std::thread::Builder::new()
                        .name("cdxj-sort".into())
                        .spawn_scoped(scope, || index.sort())
                        .context("starting the CDXJ sort's thread")?;
                    let closed = warc.finish().and_then(|stats| {
                        wet.map_or(Ok(()), |wet| wet.finish().map(drop))?;
                        Ok(stats)
                    });
                    let sorted = (sorting.join()).map_err(|_| anyhow!("the CDXJ sort panicked"))?;
                    anyhow::Ok((closed, sorted))
                })?;
                let stats = closed?;
                if let Some(sorted) = sorted? {
                    sorted.commit()?;
                }
                Ok(stats)
            })
            .context("starting the WARC writer thread")?;
        Ok(Archive {
            records,
            spare_bodies,
            writer: Some(writer),
            digests,
            block_digests,
        })
    }

    /// Whether response records carry a block digest: if so, a worker takes the block's
    /// SHA-1 in the same pass as the payload digest (`digest::page_digests`).
    pub fn block_digests(&self) -> bool {
        self.block_digests
    }

    /// Payload dedupe's answer for a page about to be archived with payload `digest`: the
    /// revisit to write instead of a response when the payload was archived before (the caller
    /// notes the page `duplicate`). `whole_2xx`: a 2xx whose non-empty body was read whole;
    /// nothing else is deduplicated. With `claim`, a page whose payload is new becomes its first
    /// capture and must be archived as a `response` (a recrawl's unchanged page, archived as a
    /// revisit of itself, does not claim).
    pub fn duplicate_of(
        &self,
        uri: &str,
        date: SystemTime,
        digest: &str,
        whole_2xx: bool,
        claim: bool,
    ) -> Result<Option<Revisit>> {
        let Some(digests) = self.digests.as_deref().filter(|_| whole_2xx) else {
            return Ok(None);
        };
        let found = digests.first_capture(digest, uri, || warc::warc_date(date), claim)?;
        Ok(found.map(|original| Revisit::Duplicate {
            digest: original.digest,
            refers_to_uri: original.uri,
            refers_to_date: original.date,
        }))
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

/// Opens payload dedupe's store (if on) and reads the CDXJ indexes it is to know: those of the
/// crawls named by `--dedupe-against`, and this directory's own when the store is new (an
/// archive written before payload dedupe existed, or with it off).
fn open_digests(warc: &WarcWriter) -> Result<Option<Arc<DigestStore>>> {
    let Some(dedupe) = warc.dedupe() else {
        return Ok(None);
    };
    let store = DigestStore::open(&dedupe.store)
        .with_context(|| format!("opening the digest store {}", dedupe.store.display()))?;
    if store.is_empty() {
        store.import_own_cdxj(warc.dir())?;
    }
    for dir in &dedupe.against {
        store.import_cdxj(dir)?;
    }
    Ok(Some(Arc::new(store)))
}

/// What the writer thread writes to.
struct Written<'a> {
    warc: &'a mut WarcWriter,
    /// `--text`: the WET files' writer (`WarcWriter::open_wet`).
    wet: Option<&'a mut WarcWriter>,
    index: &'a mut CdxjWriter,
    digests: Option<&'a DigestStore>,
}

/// The writer thread's loop: each batch written in order, each record then its index line, then
/// the batch's pages reported done. A revisit whose original is not yet written waits for it.
fn write_batches(
    out: &mut Written,
    batches: &Handoff<Vec<ArchiveRecord>>,
    spare_bodies: &Mutex<Vec<Vec<u8>>>,
    archived: impl Fn(&[u64]) -> Result<()>,
) -> Result<()> {
    let (mut done, mut bodies) = (Vec::new(), Vec::new());
    let mut waiting: Vec<ArchiveRecord> = Vec::new();
    while let Some(batch) = batches.take() {
        done.clear();
        let mut queue = VecDeque::from(batch);
        while let Some(r) = queue.pop_front() {
            if let (Some(digests), Some(digest)) = (out.digests, duplicate_digest(&r))
                && digests.original_unwritten(digest)
            {
                waiting.push(r);
                continue;
            }
            if let Some(original) = write_record(out, &r)? {
                // Its revisits that waited go right after it.
                let (now, later): (Vec<_>, Vec<_>) = waiting
                    .drain(..)
                    .partition(|w| duplicate_digest(w) == Some(original.as_str()));
                waiting = later;
                for w in Vec::into_iter(now).rev() {
                    queue.push_front(w);
                }
            }
            done.extend(r.page.map(|page| page.key));
            if r.body.capacity() <= SPARE_BODY_BYTES && bodies.len() < SPARE_BODIES {
                bodies.push(r.body);
            }
        }
        out.warc.flush().context("archiving a batch of records")?;
        if let Some(wet) = out.wet.as_deref_mut() {
            wet.flush()
                .context("writing a batch of texts to a WET file")?;
        }
        if let Some(digests) = out.digests {
            digests.archived().context("recording archived payloads")?;
        }
        failpoint::hit("digest-done");
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
    // Revisits still waiting refer to originals never handed over (the crawl stopped on an
    // error): not written, their pages are not done, and a resumed crawl fetches them again.
    Ok(())
}

/// The payload digest of a payload-dedupe revisit.
fn duplicate_digest(r: &ArchiveRecord) -> Option<&str> {
    match &r.page {
        Some(PageRecord {
            revisit: Some(Revisit::Duplicate { digest, .. }),
            ..
        }) => Some(digest),
        _ => None,
    }
}

/// Writes one record and its index line; returns the payload digest of a page that became the
/// first capture of its payload (payload dedupe).
fn write_record(out: &mut Written, r: &ArchiveRecord) -> Result<Option<String>> {
    let exchange = RequestResponse {
        target_uri: &r.target_uri,
        date: r.date,
        ip: r.ip,
        request_head: &r.request_head,
        response_head: &r.response_head,
        response_body: &r.body,
        truncated: r.truncated,
    };
    let warc = &mut *out.warc;
    // The payload digest the record carries (a not-modified revisit has none).
    let taken_here;
    let (written, digest) = match &r.page {
        None => {
            let block_sha1;
            (taken_here, block_sha1) =
                page_digests(warc.response_block_digests(), &r.response_head, &r.body);
            (
                warc.write_response(&exchange, &taken_here, block_sha1.as_ref()),
                Some(taken_here.as_str()),
            )
        }
        Some(PageRecord {
            revisit: Some(revisit),
            ..
        }) => {
            let digest = match revisit {
                Revisit::IdenticalPayload { digest, .. } | Revisit::Duplicate { digest, .. } => {
                    Some(digest.as_str())
                }
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
    let revisit = matches!(&r.page, Some(p) if p.revisit.is_some());
    let capture = Capture {
        target_uri: &r.target_uri,
        warc_date: &written.warc_date,
        revisit,
        http_head: &r.response_head,
        payload_digest: digest,
        offset: written.offset,
        length: written.length,
        filename: &written.file,
    };
    out.index
        .add(&capture)
        .with_context(|| format!("indexing {}", r.target_uri))?;
    if let (Some(wet), Some(text)) = (
        out.wet.as_deref_mut(),
        r.page.as_ref().and_then(|p| p.text.as_deref()),
    ) {
        let conversion = Conversion {
            target_uri: &r.target_uri,
            date: r.date,
            refers_to: written.record_id.as_str(),
            text,
        };
        (wet.write_conversion(&conversion))
            .with_context(|| format!("writing the text of {} to a WET file", r.target_uri))?;
    }
    let original = match (&r.page, out.digests) {
        (Some(page), Some(digests)) if !revisit => {
            let digest = &page.payload_digest;
            (digests.written(digest, &r.target_uri, &written.warc_date)).then(|| digest.clone())
        }
        _ => None,
    };
    Ok(original)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::cdxj::for_each_record;
    use crate::output::warc::{Compression, DedupeConfig, WarcConfig, payload_digest};

    fn record(uri: &str, body: &[u8], page: PageRecord) -> ArchiveRecord {
        ArchiveRecord {
            target_uri: uri.into(),
            date: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            ip: None,
            request_head: b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            response_head: b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n".to_vec(),
            body: body.to_vec(),
            truncated: None,
            page: Some(page),
        }
    }

    /// A copy handed to the writer before the first capture it refers to waits for it: the
    /// archive holds the original first, and both pages are done once written.
    #[test]
    fn a_revisit_is_written_after_its_original_whatever_the_order_handed_over() {
        let dir = tempfile::tempdir().unwrap();
        let warc = WarcWriter::open(WarcConfig {
            dir: dir.path().join("warc"),
            compression: Compression::Gzip,
            zstd_level: warc::DEFAULT_ZSTD_LEVEL,
            max_file_bytes: 1 << 30,
            prefix: "crawl".into(),
            software: "test".into(),
            dedupe: Some(DedupeConfig {
                store: dir.path().join("digests"),
                against: Vec::new(),
            }),
            response_block_digests: true,
        })
        .unwrap();
        let done = Arc::new(Mutex::new(Vec::new()));
        let reported = Arc::clone(&done);
        let archive = Archive::start(warc, None, 4, move |keys| {
            reported.lock().unwrap().extend_from_slice(keys);
            Ok(())
        })
        .unwrap();
        let body = b"<p>the same page</p>";
        let digest = payload_digest(body);
        let date = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let first = archive.duplicate_of("http://a/", date, &digest, true, true);
        assert!(
            first.unwrap().is_none(),
            "the first page claims the payload"
        );
        let copy = archive.duplicate_of("http://b/", date, &digest, true, true);
        let revisit = copy.unwrap().expect("a copy of a claimed payload");
        let page = |key, revisit| PageRecord {
            key,
            payload_digest: digest.clone(),
            block_sha1: None,
            revisit,
            text: None,
        };
        archive
            .write(record("http://b/", body, page(2, Some(revisit))))
            .unwrap();
        archive
            .write(record("http://a/", body, page(1, None)))
            .unwrap();
        let stats = archive.finish().unwrap();
        assert_eq!(
            (stats.duplicates, stats.duplicate_bytes),
            (1, body.len() as u64)
        );
        let mut done = done.lock().unwrap().clone();
        done.sort();
        assert_eq!(done, [1, 2]);
        let file = std::fs::read_dir(dir.path().join("warc"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".warc.gz"))
            .unwrap();
        let mut order = Vec::new();
        for_each_record(&file, Compression::Gzip, |r| {
            let kind = r.header("WARC-Type").unwrap_or_default().to_owned();
            if kind == "response" || kind == "revisit" {
                let uri = r.header("WARC-Target-URI").unwrap_or_default();
                let refers = r.header("WARC-Refers-To-Target-URI").unwrap_or_default();
                order.push(format!("{kind} {uri} {refers}"));
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(
            order,
            ["response http://a/ ", "revisit http://b/ http://a/"]
        );
    }
}
