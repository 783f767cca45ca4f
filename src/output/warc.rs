//! WARC/1.1 archive writer: owns the archive format and its files under the WARC directory.
//!
//! Every fetch becomes a `response` (or `revisit`) record and the `request` that produced it,
//! holding the bytes as the server sent them (content encoding kept, transfer encoding removed by
//! the caller), with `sha1:` base32 digests that independent readers verify: a response's
//! payload digest, and every record's block digest. A response record's block digest (a second
//! SHA-1 over its head and body, the one digest that covers the HTTP head) can be left out
//! (`WarcConfig::response_block_digests` false, `--no-warc-block-digest`); the record's
//! compressed unit still carries a checksum of every byte of the record (zstd's XXH64, gzip's
//! CRC-32) that every reader checks as it decompresses. The two digests can come from the
//! caller, taken in one pass (`digest::payload_and_block`).
//! This module does not fetch, decode or choose what to archive; it only writes what it is given.
//!
//! Each record is its own compressed unit — one zstd frame with content size and checksum
//! (`.warc.zst`, the warc-zstd convention, no dictionary) or one gzip member (`.warc.gz`).
//! Units are appended whole: they wait in memory (up to `PENDING_BYTES`) until
//! [`WarcWriter::flush`], which hands them to the kernel in one `write_all` — the writer thread
//! flushes once per batch of records, before it reports their pages done, instead of two
//! write(2) calls per page; every `WRITEBACK_BYTES` the kernel is asked to start writing them
//! to disk, so that closing the file's fsync waits for little. A file being written carries an
//! extra `.open` suffix; a crash leaves at most one torn unit at its end, which
//! [`WarcWriter::open`] cuts off before giving the file its final name, so every flushed record
//! survives a crash.
//!
//! Per record, nothing is allocated: the record is framed in a buffer kept from one record to
//! the next, compressed with a zstd context set up once (level, checksum and content-size
//! flags), and record ids and dates are fixed-size values.
//!
//! zstd is most of the archive's CPU: on pages of ~20 KB its level 1 costs more than the rest
//! of the archive (digests, framing, write, index) together. The level is the archive owner's
//! trade (`--zstd-level`): zstd's negative levels take less CPU for more bytes, and every zstd
//! reader reads every level.
//!
//! A record under `SMALL_RECORD` bytes (a request, a short redirect) is stored in its zstd frame
//! uncompressed (raw blocks, with the same content size and checksum a compressed frame has):
//! zstd's fixed cost per frame (its match tables, its entropy tables) is most of what it spends
//! on such a record, for a sixth of its bytes at best (BENCHMARKS.md, "The archive's CPU").
//! Every reader of zstd frames reads raw blocks.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, ensure};
use sha1::{Digest, Sha1};
use zstd::zstd_safe::CParameter;

use crate::output::digest;
use crate::output::names;
use crate::splitmix::SplitMix;
use crate::state::durable;

/// zstd's fastest regular level, the default: a record of a few KB is mostly headers and HTML,
/// where higher levels save little space for much more CPU, and the archive writer is one
/// thread (BENCHMARKS.md, "Speed at the web's shape"). zstd's negative ("fast") levels trade
/// archive bytes for CPU (`--zstd-level`; BENCHMARKS.md, "The archive's zstd level").
pub const DEFAULT_ZSTD_LEVEL: i32 = 1;
/// The levels `--zstd-level` takes: zstd's fast levels down to -7 (past it each step saves
/// less CPU for more bytes), its regular levels up to 19 (20 to 22 need large windows).
pub const ZSTD_LEVELS: std::ops::RangeInclusive<i32> = -7..=19;
/// Records shorter than this are stored in their frames uncompressed (see the module doc).
const SMALL_RECORD: usize = 1024;

/// A zstd context of `level` writing frames with content size and checksum.
fn zstd_context(level: i32) -> Result<zstd::bulk::Compressor<'static>> {
    ensure!(
        ZSTD_LEVELS.contains(&level),
        "zstd level {level} is outside {}..={}",
        ZSTD_LEVELS.start(),
        ZSTD_LEVELS.end()
    );
    let mut c = zstd::bulk::Compressor::new(level)?;
    c.set_parameter(CParameter::ChecksumFlag(true))?;
    c.set_parameter(CParameter::ContentSizeFlag(true))?;
    Ok(c)
}

/// Appends `record` to `out` as one zstd frame of raw blocks (RFC 8878 §3.1): a single-segment
/// frame with its content size and checksum (XXH64's low 32 bits), as zstd writes them.
fn stored_frame(record: &[u8], out: &mut Vec<u8>) {
    /// The largest block a frame may hold (RFC 8878 §3.1.1.2.4).
    const MAX_BLOCK: usize = 128 << 10;
    /// The frame header's descriptor: single segment (the window is the content), checksum;
    /// the content size field's width goes in the two highest bits.
    const SINGLE_SEGMENT_CHECKSUM: u8 = 0b0010_0100;
    out.extend_from_slice(&ZSTD_MAGIC);
    let len = record.len();
    // The content size in 1, 2 (less 256), 4 or 8 bytes, little-endian.
    if len < 256 {
        out.extend_from_slice(&[SINGLE_SEGMENT_CHECKSUM, len as u8]);
    } else if len < 256 + (1 << 16) {
        out.push(1 << 6 | SINGLE_SEGMENT_CHECKSUM);
        out.extend_from_slice(&((len - 256) as u16).to_le_bytes());
    } else if let Ok(len) = u32::try_from(len) {
        out.push(2 << 6 | SINGLE_SEGMENT_CHECKSUM);
        out.extend_from_slice(&len.to_le_bytes());
    } else {
        out.push(3 << 6 | SINGLE_SEGMENT_CHECKSUM);
        out.extend_from_slice(&(len as u64).to_le_bytes());
    }
    // Each block's 3-byte header: last-block bit, type 0 (raw), size.
    let block_header = |size: usize, last: bool| (size as u32) << 3 | u32::from(last);
    if record.is_empty() {
        out.extend_from_slice(&block_header(0, true).to_le_bytes()[..3]);
    }
    let mut blocks = record.chunks(MAX_BLOCK).peekable();
    while let Some(block) = blocks.next() {
        let last = blocks.peek().is_none();
        out.extend_from_slice(&block_header(block.len(), last).to_le_bytes()[..3]);
        out.extend_from_slice(block);
    }
    let checksum = xxhash_rust::xxh64::xxh64(record, 0) as u32;
    out.extend_from_slice(&checksum.to_le_bytes());
}

/// The first bytes of every zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

pub use crate::output::names::Compression;

/// Where and how the archive is written.
#[derive(Clone, Debug)]
pub struct WarcConfig {
    /// The directory holding the WARC files; nothing is written outside it.
    pub dir: PathBuf,
    /// How each record is compressed (and so the files' extension).
    pub compression: Compression,
    /// The zstd level of `Compression::Zstd` (`ZSTD_LEVELS`; `DEFAULT_ZSTD_LEVEL` unless
    /// `--zstd-level`); gzip members are always deflate's default level.
    pub zstd_level: i32,
    /// A file at or past this size is closed before the next fetch is written.
    pub max_file_bytes: u64,
    /// File name prefix, e.g. `crawl`: letters, digits, `-`, `_` and `.` only.
    pub prefix: String,
    /// Software name and version, for each file's `warcinfo` record.
    pub software: String,
    /// Payload dedupe (`output::archive`): a page whose payload was archived before becomes a
    /// revisit of its first capture. `None` with `--no-payload-dedupe`.
    pub dedupe: Option<DedupeConfig>,
    /// Whether `response` records carry a `WARC-Block-Digest` beside their payload digest (true
    /// unless `--no-warc-block-digest`); every other record always does (see the module doc).
    pub response_block_digests: bool,
}

/// A record's `WARC-Block-Digest`: the SHA-1 of its block, given by the caller (taken in one
/// pass with the payload digest), taken here, or left out.
#[derive(Clone, Copy, Debug)]
enum BlockDigest<'a> {
    /// The SHA-1 the caller took of the record's block parts.
    Given(&'a [u8; 20]),
    /// Taken here, over the block's parts.
    Take,
    /// No `WARC-Block-Digest` field.
    Omit,
}

/// Where payload dedupe keeps its store, and the other crawls it reads.
#[derive(Clone, Debug)]
pub struct DedupeConfig {
    /// The store's directory (`seen::digests`): `--out`'s `digests/`.
    pub store: PathBuf,
    /// `--dedupe-against`: other crawls' `--out` directories, whose CDXJ indexes are read.
    pub against: Vec<PathBuf>,
}

/// One HTTP request and its response, as sent and as received: what a `request` record and
/// its `response` (or `revisit`) record hold.
#[derive(Clone, Debug)]
pub struct RequestResponse<'a> {
    /// The URL fetched (`WARC-Target-URI`).
    pub target_uri: &'a str,
    /// When the request was sent.
    pub date: SystemTime,
    /// The server's address, when known (`WARC-IP-Address`).
    pub ip: Option<IpAddr>,
    /// The request line and headers as sent, ending with the empty line.
    pub request_head: &'a [u8],
    /// The status line and headers, ending with the empty line; `Transfer-Encoding` renamed.
    pub response_head: &'a [u8],
    /// The body as received: content encoding kept, transfer encoding removed.
    pub response_body: &'a [u8],
    /// `Some("length")` when the body was cut at the size cap (becomes `WARC-Truncated`).
    pub truncated: Option<&'a str>,
}

/// Where a `response` or `revisit` record landed: what its index line needs (`output::cdxj`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The WARC file's final name (no directory), shared by every record of the file.
    pub file: Arc<str>,
    /// The offset of the record's compressed unit in the file, and the unit's length.
    pub offset: u64,
    pub length: u64,
    /// The record's `WARC-Date`.
    pub warc_date: String,
    /// The record's `WARC-Record-ID`: what a `conversion` record of its page refers to.
    pub record_id: RecordId,
}

/// A page's text, as a WET file's `conversion` record holds it (`WarcWriter::write_conversion`).
#[derive(Clone, Debug)]
pub struct Conversion<'a> {
    /// The page's URL (`WARC-Target-URI`), as its response record has it.
    pub target_uri: &'a str,
    /// The page's fetch time: its response record's `WARC-Date` (as Common Crawl's WET files
    /// date the text by its capture).
    pub date: SystemTime,
    /// The response (or revisit) record the text was read from (`WARC-Refers-To`):
    /// `Written::record_id` of it.
    pub refers_to: &'a str,
    /// The text (`content::text`), UTF-8.
    pub text: &'a str,
}

/// What a writer wrote, returned by [`WarcWriter::finish`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarcStats {
    pub files: u64,
    pub records: u64,
    /// Compressed bytes written.
    pub bytes: u64,
    /// Pages archived as `revisit` records of a payload archived before (payload dedupe).
    pub duplicates: u64,
    /// Their payload bytes, not stored again.
    pub duplicate_bytes: u64,
}

const REVISIT_PROFILE: &str = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
const IDENTICAL_PROFILE: &str = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// Why a recrawled page is archived as a `revisit` record, and the previous capture's date.
#[derive(Clone, Debug)]
pub enum Revisit {
    /// The server answered 304 Not Modified.
    NotModified { refers_to_date: SystemTime },
    /// The server sent the same payload again (its digest is given).
    IdenticalPayload {
        digest: String,
        refers_to_date: SystemTime,
    },
    /// The payload was archived before, under this URI or another (payload dedupe): the
    /// revisit names that first capture (`WARC-Date` as written there).
    Duplicate {
        digest: String,
        refers_to_uri: String,
        refers_to_date: String,
    },
}

/// The WARC payload digest of a body (`sha1:` and base32), as the records carry it.
pub fn payload_digest(body: &[u8]) -> String {
    digest::sha1_base32(body)
}
/// Compressed units that wait for one write at most; past it they are written at once (a
/// batch of large bodies does not pile up in memory).
const PENDING_BYTES: usize = 1 << 20;

/// Each time this many bytes have been written to a WARC file, the kernel is asked to start
/// writing them to disk (`sys::start_writeback`). Closing a file fsyncs it; without this, the
/// fsync finds most of the file still only in memory and writes it then, while the records
/// behind it wait (at a rotation) or the crawl's end waits. The kernel writes as the crawl
/// goes, and the fsync waits for the last few MiB.
const WRITEBACK_BYTES: u64 = 8 << 20;
/// A record buffer grown past this by a large body is given back after the record.
const KEEP_RECORD_BYTES: usize = 1 << 20;

/// Writes records into rotating WARC files; one owner (the WARC writer thread) per directory.
///
/// Dropping it without [`finish`](Self::finish) leaves the current file `.open`; the next
/// [`open`](Self::open) repairs and renames it.
pub struct WarcWriter {
    config: WarcConfig,
    /// The files' extension (`names::extension`): a WARC file's, or a sidecar's such as a WET
    /// file's; a writer repairs only its own kind's `.open` files.
    extension: String,
    current: Option<OpenWarc>,
    next_serial: u64,
    ids: RecordIds,
    /// The zstd context, for records of `SMALL_RECORD` bytes and more.
    zstd: Option<zstd::bulk::Compressor<'static>>,
    gzip: GzipMembers,
    stats: WarcStats,
    /// The record being framed: kept from one record to the next.
    record: Vec<u8>,
    /// Complete units of the current file not yet written (see `flush`).
    pending: Vec<u8>,
    /// The last server address written, as text: consecutive records mostly share a server.
    last_ip: Option<(IpAddr, String)>,
}

struct OpenWarc {
    file: File,
    open_path: PathBuf,
    final_path: PathBuf,
    /// The final file name, as index lines name the file.
    name: Arc<str>,
    /// The file's length once the pending units are written: where the next unit starts (the
    /// bytes in the file are this less the pending ones).
    bytes: u64,
    /// Where the bytes the kernel has not yet been asked to write to disk start (see `flush`).
    writeback_from: u64,
    warcinfo_id: RecordId,
}

impl WarcWriter {
    /// Creates the directory if needed, repairs the `.open` files a crash left behind, and
    /// starts a new file lazily on the first record.
    pub fn open(config: WarcConfig) -> Result<WarcWriter> {
        WarcWriter::open_files(config, None)
    }

    /// `open` for WET files (`.warc.wet.zst`, `.warc.wet.gz`), which hold `conversion` records
    /// (`write_conversion`) and may share the WARC files' directory and prefix: each writer
    /// repairs only its own kind's `.open` files, and neither's files end as the other's
    /// (nor as `output::cdxj` looks for WARC files).
    pub fn open_wet(config: WarcConfig) -> Result<WarcWriter> {
        WarcWriter::open_files(config, Some("wet"))
    }

    /// `open` for WARC files (`sidecar` `None`) or a sidecar kind's files.
    fn open_files(config: WarcConfig, sidecar: Option<&'static str>) -> Result<WarcWriter> {
        let valid = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
        ensure!(
            !config.prefix.is_empty()
                && !config.prefix.starts_with('.')
                && config.prefix.chars().all(valid),
            "WARC file prefix {:?} must be letters, digits, '-', '_' or '.', not starting with '.'",
            config.prefix
        );
        fs::create_dir_all(&config.dir)
            .with_context(|| format!("creating {}", config.dir.display()))?;
        let mut next_serial = 0;
        for (path, name) in list_dir(&config.dir)? {
            let open_kind = names::open_compression(&name, sidecar);
            if let Some(compression) = open_kind
                && fs::symlink_metadata(&path)?.is_file()
            {
                repair(&path, compression)
                    .with_context(|| format!("repairing {}", path.display()))?;
            }
            let serial = names::serial_of(&name, &config.prefix, sidecar);
            next_serial = next_serial.max(serial.map_or(0, |s| s + 1));
        }
        let zstd = match config.compression {
            Compression::Gzip => None,
            Compression::Zstd => Some(zstd_context(config.zstd_level)?),
        };
        Ok(WarcWriter {
            extension: names::extension(config.compression, sidecar),
            config,
            current: None,
            next_serial,
            ids: RecordIds::new(),
            zstd,
            gzip: GzipMembers::new(),
            stats: WarcStats::default(),
            record: Vec::new(),
            pending: Vec::new(),
            last_ip: None,
        })
    }

    /// Writes a `response` record and its `request` record, linked by `WARC-Concurrent-To`.
    /// Rotates to a new file first if the current one has reached `max_file_bytes`.
    pub fn write_exchange(&mut self, ex: &RequestResponse) -> Result<Written> {
        let (payload, block_sha1) = digest::page_digests(
            self.config.response_block_digests,
            ex.response_head,
            ex.response_body,
        );
        self.write_response(ex, &payload, block_sha1.as_ref())
    }

    /// Whether `response` records carry a block digest (`WarcConfig::response_block_digests`):
    /// if so, a caller that takes the payload digest takes the block's SHA-1 in the same pass.
    pub fn response_block_digests(&self) -> bool {
        self.config.response_block_digests
    }

    /// `write_exchange` with the payload digest already computed (`payload_digest` of the
    /// body), and the SHA-1 of the response record's block (head ‖ body) if it was too
    /// (`digest::payload_and_block`, one pass for both): the crawler takes the payload digest
    /// for `fetched.tsv` anyway, so the body is hashed once. Without
    /// `response_block_digests` the record has no block digest, given or not.
    pub fn write_response(
        &mut self,
        ex: &RequestResponse,
        payload_digest: &str,
        block_sha1: Option<&[u8; 20]>,
    ) -> Result<Written> {
        let fields = [
            ("WARC-Payload-Digest", payload_digest),
            ("WARC-Truncated", ex.truncated.unwrap_or("")),
        ];
        let block = match (self.config.response_block_digests, block_sha1) {
            (false, _) => BlockDigest::Omit,
            (true, Some(sha1)) => BlockDigest::Given(sha1),
            (true, None) => BlockDigest::Take,
        };
        self.write_pair(ex, "response", &fields, block)
    }

    /// Writes a `revisit` record that refers to an earlier capture (during a recrawl: the page
    /// is unchanged, the previous capture of the same URI; with payload dedupe: the first
    /// capture of the payload, of any URI), and its `request` record. With the identical-payload
    /// profile the record holds the response head only; the payload digest says what it was.
    pub fn write_revisit(&mut self, ex: &RequestResponse, revisit: &Revisit) -> Result<Written> {
        let (profile, digest, uri, date) = match revisit {
            Revisit::NotModified { refers_to_date } => (
                REVISIT_PROFILE,
                None,
                ex.target_uri,
                warc_date(*refers_to_date),
            ),
            Revisit::IdenticalPayload {
                digest,
                refers_to_date,
            } => (
                IDENTICAL_PROFILE,
                Some(digest.as_str()),
                ex.target_uri,
                warc_date(*refers_to_date),
            ),
            Revisit::Duplicate {
                digest,
                refers_to_uri,
                refers_to_date,
            } => (
                IDENTICAL_PROFILE,
                Some(digest.as_str()),
                refers_to_uri.as_str(),
                refers_to_date.clone(),
            ),
        };
        let fields = [
            ("WARC-Profile", profile),
            ("WARC-Refers-To-Target-URI", uri),
            ("WARC-Refers-To-Date", date.as_str()),
            ("WARC-Payload-Digest", digest.unwrap_or("")),
        ];
        let payload_len = ex.response_body.len() as u64;
        let ex = RequestResponse {
            response_body: if digest.is_some() {
                b""
            } else {
                ex.response_body
            },
            ..*ex
        };
        let written = self.write_pair(&ex, "revisit", &fields, BlockDigest::Take)?;
        if let Revisit::Duplicate { .. } = revisit {
            self.stats.duplicates += 1;
            self.stats.duplicate_bytes += payload_len;
        }
        Ok(written)
    }

    /// Writes a page's text as a `conversion` record (a WET file's record, `open_wet`) that
    /// refers to the record it was read from, with the text's payload and block digests (the
    /// block is the text: they are the same SHA-1). Rotates first, as `write_exchange` does.
    pub fn write_conversion(&mut self, conversion: &Conversion) -> Result<Written> {
        self.rotate_if_full()?;
        let warcinfo_id = self.current.as_ref().map(|c| c.warcinfo_id);
        let record_id = self.ids.next();
        let date = warc_date(conversion.date);
        let text = conversion.text.as_bytes();
        let sha1: [u8; 20] = Sha1::digest(text).into();
        let payload = digest::warc_digest(&sha1);
        let fields = [
            ("WARC-Type", "conversion"),
            ("WARC-Record-ID", record_id.as_str()),
            ("WARC-Date", date.as_str()),
            ("WARC-Target-URI", conversion.target_uri),
            ("WARC-Refers-To", conversion.refers_to),
            (
                "WARC-Warcinfo-ID",
                warcinfo_id.as_ref().map_or("", RecordId::as_str),
            ),
            ("WARC-Payload-Digest", payload.as_str()),
            ("Content-Type", "text/plain; charset=utf-8"),
        ];
        let (offset, length) = self.write_record(&[&fields], &[text], BlockDigest::Given(&sha1))?;
        Ok(self.written((offset, length), date, record_id))
    }

    /// The directory the WARC files are written to.
    pub fn dir(&self) -> &Path {
        &self.config.dir
    }

    /// Payload dedupe's configuration, if on.
    pub fn dedupe(&self) -> Option<&DedupeConfig> {
        self.config.dedupe.as_ref()
    }

    /// Syncs and closes the current file under its final name.
    pub fn finish(mut self) -> Result<WarcStats> {
        self.close_current()?;
        Ok(self.stats)
    }

    /// Hands the records written since the last flush to the kernel, in one write: from here a
    /// kill of the process loses none of them. A failed write is cut off the file, so later
    /// records still follow a complete unit.
    pub fn flush(&mut self) -> Result<()> {
        let Some(cur) = self.current.as_mut() else {
            return Ok(());
        };
        if self.pending.is_empty() {
            return Ok(());
        }
        let result = cur.file.write_all(&self.pending);
        let written = cur.bytes - self.pending.len() as u64;
        self.pending.clear();
        if self.pending.capacity() > 2 * PENDING_BYTES {
            self.pending = Vec::new();
        }
        if let Err(e) = result {
            let _ = cur.file.set_len(written);
            cur.bytes = written;
            return Err(e).with_context(|| format!("writing {}", cur.open_path.display()));
        }
        if cur.bytes - cur.writeback_from >= WRITEBACK_BYTES {
            crate::sys::start_writeback(
                &cur.file,
                cur.writeback_from,
                cur.bytes - cur.writeback_from,
            );
            cur.writeback_from = cur.bytes;
        }
        Ok(())
    }

    /// Writes the `kind` record of `ex` (response or revisit; its block digest as `block`)
    /// and its `request` record; returns where the first one landed.
    fn write_pair(
        &mut self,
        ex: &RequestResponse,
        kind: &str,
        extra: &[(&str, &str)],
        block: BlockDigest,
    ) -> Result<Written> {
        self.rotate_if_full()?;
        let warcinfo_id = self.current.as_ref().map(|c| c.warcinfo_id);
        let (response_id, request_id) = (self.ids.next(), self.ids.next());
        let date = warc_date(ex.date);
        let mut ip_text = [0u8; 64];
        let ip = match ex.ip {
            Some(ip) => {
                if self.last_ip.as_ref().is_none_or(|(last, _)| *last != ip) {
                    self.last_ip = Some((ip, ip.to_string()));
                }
                let text = self.last_ip.as_ref().map_or("", |(_, text)| text);
                ip_text[..text.len()].copy_from_slice(text.as_bytes());
                std::str::from_utf8(&ip_text[..text.len()])?
            }
            None => "",
        };
        let warcinfo_id = warcinfo_id.as_ref().map_or("", RecordId::as_str);
        let record_id = response_id;
        let (response_id, request_id) = (response_id.as_str(), request_id.as_str());
        let common = |kind, id, concurrent_to| {
            [
                ("WARC-Type", kind),
                ("WARC-Record-ID", id),
                ("WARC-Date", date.as_str()),
                ("WARC-Target-URI", ex.target_uri),
                ("WARC-IP-Address", ip),
                ("WARC-Concurrent-To", concurrent_to),
                ("WARC-Warcinfo-ID", warcinfo_id),
            ]
        };
        let response = common(kind, response_id, request_id);
        let content_type = [("Content-Type", "application/http;msgtype=response")];
        let (offset, length) = self.write_record(
            &[&response, extra, &content_type],
            &[ex.response_head, ex.response_body],
            block,
        )?;
        let request = common("request", request_id, response_id);
        let content_type = [("Content-Type", "application/http;msgtype=request")];
        self.write_record(
            &[&request, &content_type],
            &[ex.request_head],
            BlockDigest::Take,
        )?;
        Ok(self.written((offset, length), date, record_id))
    }

    /// Closes the current file if it has reached `max_file_bytes`, and starts one if none is
    /// open: before each page's records.
    fn rotate_if_full(&mut self) -> Result<()> {
        if let Some(cur) = &self.current
            && cur.bytes >= self.config.max_file_bytes
        {
            self.close_current()?;
        }
        if self.current.is_none() {
            self.start_file()?;
        }
        Ok(())
    }

    /// Where the record `record_id` of `warc_date` landed in the current file: the unit at
    /// `offset` of `length` bytes.
    fn written(
        &self,
        (offset, length): (u64, u64),
        warc_date: String,
        record_id: RecordId,
    ) -> Written {
        let file = self.current.as_ref().map(|c| Arc::clone(&c.name));
        Written {
            file: file.unwrap_or_else(|| Arc::from("")),
            offset,
            length,
            warc_date,
            record_id,
        }
    }

    fn start_file(&mut self) -> Result<()> {
        let now = SystemTime::now();
        let date = civil(now);
        let name = names::file_name(&self.config.prefix, date, self.next_serial, &self.extension);
        self.next_serial += 1;
        let final_path = self.config.dir.join(&name);
        let open_path = self.config.dir.join(format!("{name}{}", names::OPEN));
        // `append` keeps writes at the end even after a failed write is cut off with `set_len`.
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&open_path)
            .with_context(|| format!("creating {}", open_path.display()))?;
        let warcinfo_id = self.ids.next();
        self.current = Some(OpenWarc {
            file,
            open_path,
            final_path,
            name: Arc::from(name.as_str()),
            bytes: 0,
            writeback_from: 0,
            warcinfo_id,
        });
        let info = format!(
            "software: {}\r\nformat: WARC File Format 1.1\r\n\
             conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
             isPartOf: {}\r\n",
            self.config.software, self.config.prefix
        );
        let fields = [
            ("WARC-Type", "warcinfo"),
            ("WARC-Record-ID", warcinfo_id.as_str()),
            ("WARC-Date", &warc_date(now)),
            ("WARC-Filename", &name),
            ("Content-Type", "application/warc-fields"),
        ];
        self.write_record(&[&fields], &[info.as_bytes()], BlockDigest::Take)?;
        Ok(())
    }

    /// Frames one record (headers, digest, length, block) and queues it as one compressed unit
    /// (written by `flush`, or at once past `PENDING_BYTES`). Fields with an empty value are
    /// left out. The block's digest is `digest`: the SHA-1 of the parts of `block` given by
    /// the caller, taken here, or none. Returns the unit's offset and length.
    fn write_record(
        &mut self,
        fields: &[&[(&str, &str)]],
        block: &[&[u8]],
        digest: BlockDigest,
    ) -> Result<(u64, u64)> {
        let len: usize = block.iter().map(|b| b.len()).sum();
        let sha1: Option<[u8; 20]> = match digest {
            BlockDigest::Given(sha1) => Some(*sha1),
            BlockDigest::Take => {
                let mut sha = Sha1::new();
                block.iter().for_each(|b| sha.update(b));
                Some(sha.finalize().into())
            }
            BlockDigest::Omit => None,
        };
        let record = &mut self.record;
        record.clear();
        record.reserve(len + 1024);
        record.extend_from_slice(b"WARC/1.1\r\n");
        for &(name, value) in fields.iter().flat_map(|f| f.iter()) {
            if value.is_empty() {
                continue;
            }
            ensure!(
                !value.bytes().any(|b| b == b'\r' || b == b'\n'),
                "WARC header {name} would contain a line break: {value:?}"
            );
            for part in [name, ": ", value, "\r\n"] {
                record.extend_from_slice(part.as_bytes());
            }
        }
        if let Some(sha1) = sha1 {
            let mut digest = [0u8; 32];
            data_encoding::BASE32.encode_mut(&sha1, &mut digest);
            record.extend_from_slice(b"WARC-Block-Digest: sha1:");
            record.extend_from_slice(&digest);
            record.extend_from_slice(b"\r\n");
        }
        record.extend_from_slice(b"Content-Length: ");
        push_decimal(record, len);
        record.extend_from_slice(b"\r\n\r\n");
        block.iter().for_each(|b| record.extend_from_slice(b));
        record.extend_from_slice(b"\r\n\r\n");

        // The unit is compressed straight onto the end of `pending`; a failed one is cut off.
        let cur = self.current.as_mut().context("no open WARC file")?;
        let start = self.pending.len();
        let compressed = match &mut self.zstd {
            Some(_) if record.len() < SMALL_RECORD => {
                stored_frame(record, &mut self.pending);
                Ok(())
            }
            Some(compressor) => {
                let pending = &mut self.pending;
                pending.reserve(zstd::zstd_safe::compress_bound(record.len()));
                let mut end = io::Cursor::new(pending);
                end.set_position(start as u64);
                compressor
                    .compress_to_buffer(record.as_slice(), &mut end)
                    .map(drop)
            }
            None => self.gzip.member(record, &mut self.pending),
        };
        if record.capacity() > KEEP_RECORD_BYTES {
            *record = Vec::new();
        }
        if compressed.is_err() {
            self.pending.truncate(start);
        }
        compressed?;
        let unit_len = (self.pending.len() - start) as u64;
        let offset = cur.bytes;
        cur.bytes += unit_len;
        self.stats.records += 1;
        self.stats.bytes += unit_len;
        if self.pending.len() >= PENDING_BYTES {
            self.flush()?;
        }
        Ok((offset, unit_len))
    }

    fn close_current(&mut self) -> Result<()> {
        self.flush()?;
        if let Some(cur) = self.current.take() {
            cur.file
                .sync_all()
                .with_context(|| format!("syncing {}", cur.open_path.display()))?;
            drop(cur.file);
            durable::commit(&cur.open_path, &cur.final_path)
                .with_context(|| format!("renaming {}", cur.open_path.display()))?;
            self.stats.files += 1;
        }
        Ok(())
    }
}

/// gzip members from one deflate state, reset for each record: a new `GzEncoder` per record
/// allocates and clears its tables every time. The bytes are `GzEncoder`'s at the default
/// level (the test `gzip_members_are_gz_encoders_bytes` holds them to it).
struct GzipMembers(flate2::Compress);

impl GzipMembers {
    fn new() -> GzipMembers {
        GzipMembers(flate2::Compress::new(flate2::Compression::default(), false))
    }

    /// Appends `input` to `out` as one gzip member.
    fn member(&mut self, input: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        // `GzBuilder`'s header: no name or comment, no mtime, default level, OS unknown.
        out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        let deflate = &mut self.0;
        deflate.reset();
        loop {
            out.reserve(input.len() / 4 + 64);
            let consumed = deflate.total_in() as usize;
            let status = deflate
                .compress_vec(&input[consumed..], out, flate2::FlushCompress::Finish)
                .map_err(io::Error::other)?;
            if status == flate2::Status::StreamEnd {
                break;
            }
        }
        let mut crc = flate2::Crc::new();
        crc.update(input);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        // ISIZE: the length modulo 2^32 (RFC 1952).
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
        Ok(())
    }
}

/// The entries of `dir` whose names are UTF-8, sorted by name.
fn list_dir(dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        if let Ok(name) = entry.file_name().into_string() {
            out.push((entry.path(), name));
        }
    }
    out.sort();
    Ok(out)
}

/// Keeps the complete records of a file a crash left `.open`, syncs it and gives it its final
/// name; a file without one complete record is removed.
fn repair(open_path: &Path, compression: Compression) -> Result<()> {
    let good = complete_len(open_path, compression)?;
    let final_path = open_path.with_extension("");
    ensure!(
        !final_path.exists(),
        "both {} and {} exist; move one of them out of the WARC directory",
        open_path.display(),
        final_path.display()
    );
    if good == 0 {
        fs::remove_file(open_path)?;
        return Ok(durable::sync_dir(
            open_path.parent().unwrap_or(Path::new(".")),
        )?);
    }
    let file = OpenOptions::new().write(true).open(open_path)?;
    file.set_len(good)?;
    file.sync_all()?;
    drop(file);
    Ok(durable::commit(open_path, &final_path)?)
}

/// The length of the longest prefix of `path` made of complete, checksum-valid units (zstd
/// frames or gzip members): each is decoded, and the offset after it is recorded.
fn complete_len(path: &Path, compression: Compression) -> Result<u64> {
    let mut input = BufReader::new(File::open(path)?);
    let mut end = 0;
    while !input.fill_buf()?.is_empty() {
        let decoded = match compression {
            Compression::Zstd => match zstd::stream::read::Decoder::with_buffer(&mut input) {
                Ok(d) => io::copy(&mut d.single_frame(), &mut io::sink()),
                Err(e) => Err(e),
            },
            Compression::Gzip => io::copy(
                &mut flate2::bufread::GzDecoder::new(&mut input),
                &mut io::sink(),
            ),
        };
        if decoded.is_err() {
            break;
        }
        end = input.stream_position()?;
    }
    Ok(end)
}

/// A WARC-Date: UTC, `YYYY-MM-DDThh:mm:ssZ`.
pub fn warc_date(t: SystemTime) -> String {
    let [y, mo, d, h, mi, s] = civil(t);
    if y > 9999 {
        return format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z");
    }
    // Digits put in place: this runs for every record, `format!` costs several times more.
    let mut date = *b"0000-00-00T00:00:00Z";
    for (at, width, n) in [
        (0, 4, y),
        (5, 2, mo),
        (8, 2, d),
        (11, 2, h),
        (14, 2, mi),
        (17, 2, s),
    ] {
        put_digits(&mut date[at..at + width], n);
    }
    String::from_utf8(date.to_vec()).expect("ASCII by construction")
}

/// Writes `n` into `slot` in decimal, right-aligned with leading zeros (the high digits of a
/// number too large for the slot are dropped).
fn put_digits(slot: &mut [u8], mut n: u64) {
    for digit in slot.iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// Appends `n` in decimal, without `fmt`'s machinery.
fn push_decimal(out: &mut Vec<u8>, n: usize) {
    let mut digits = [0u8; 20];
    let len = (n.checked_ilog10().unwrap_or(0) + 1) as usize;
    put_digits(&mut digits[..len], n as u64);
    out.extend_from_slice(&digits[..len]);
}

/// Year, month, day, hour, minute, second (UTC) of `t`; times before 1970 count as 1970.
fn civil(t: SystemTime) -> [u64; 6] {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's `civil_from_days`, for days since 1970-01-01 (never negative here).
    let z = days + 719_468;
    let (era, doe) = (z / 146_097, z % 146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + u64::from(month <= 2);
    [year, month, day, rem / 3600, rem % 3600 / 60, rem % 60]
}

/// Random (version 4) UUIDs for record ids, from SplitMix64 seeded by time, pid and a counter.
struct RecordIds(SplitMix);

impl RecordIds {
    fn new() -> Self {
        static INSTANCES: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let instance = INSTANCES.fetch_add(1, Ordering::Relaxed);
        RecordIds(SplitMix(
            nanos
                ^ u64::from(std::process::id()).rotate_left(32)
                ^ instance.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ))
    }

    /// `<urn:uuid:…>` with the version (4) and variant (10xx) bits set.
    fn next(&mut self) -> RecordId {
        let a = (self.0.next_u64() & !0xF000) | 0x4000;
        let b = (self.0.next_u64() & !(0b11 << 62)) | (0b10 << 62);
        let mut id = *b"<urn:uuid:00000000-0000-0000-0000-000000000000>";
        // The hex digits of a then b, most significant first, around the dashes.
        let digits = (0..16).rev().map(|i| (a >> (4 * i)) & 0xF);
        let digits = digits.chain((0..16).rev().map(|i| (b >> (4 * i)) & 0xF));
        let slots = (10..46).filter(|i| ![18, 23, 28, 33].contains(i));
        for (slot, digit) in slots.zip(digits) {
            id[slot] = b"0123456789abcdef"[digit as usize];
        }
        RecordId(id)
    }
}

/// A record id, `<urn:uuid:…>`: a fixed-size value, copied rather than allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordId([u8; 47]);

impl RecordId {
    /// The id as the record's `WARC-Record-ID` field has it, angle brackets included.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("ASCII by construction")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::Duration;

    use testweb::warc_readers::{check_with, run};

    fn config(dir: &Path, compression: Compression, max_file_bytes: u64) -> WarcConfig {
        let software = "crawl-test/0.1".to_string();
        WarcConfig {
            dir: dir.to_path_buf(),
            compression,
            zstd_level: DEFAULT_ZSTD_LEVEL,
            max_file_bytes,
            prefix: "crawl".into(),
            software,
            dedupe: None,
            response_block_digests: true,
        }
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn gzip_members_are_gz_encoders_bytes() {
        let mut members = GzipMembers::new();
        let mut noise = SplitMix(5);
        let random: Vec<u8> = (0..300_000).map(|_| noise.next_u64() as u8).collect();
        let text = b"<p>a record of a web page</p>".repeat(5000);
        for input in [&b""[..], b"x", &text, &random, &text[..1000]] {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(input).unwrap();
            let expected = gz.finish().unwrap();
            let mut unit = b"before".to_vec();
            members.member(input, &mut unit).unwrap();
            assert_eq!(&unit[..6], b"before", "appended");
            assert!(unit[6..] == expected[..], "{} bytes", input.len());
        }
    }

    /// Three fetches: plain HTML, a gzip-encoded page (kept encoded), a truncated binary body.
    fn bodies() -> Vec<(String, Vec<u8>, Vec<u8>)> {
        let html = b"<html><a href=/b>b</a></html>".to_vec();
        let encoded = gzip(&b"<p>hello hello hello</p>".repeat(50));
        let binary: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let head = |ty: &str, extra: &str, len: usize| {
            format!("HTTP/1.1 200 OK\r\nContent-Type: {ty}\r\n{extra}Content-Length: {len}\r\n\r\n")
                .into_bytes()
        };
        vec![
            (
                "http://a.test/".into(),
                head("text/html", "", html.len()),
                html,
            ),
            (
                "http://a.test/b".into(),
                head("text/html", "Content-Encoding: gzip\r\n", encoded.len()),
                encoded,
            ),
            (
                "http://b.test/x.bin".into(),
                head("application/octet-stream", "", 9000),
                binary,
            ),
        ]
    }

    fn write_all(w: &mut WarcWriter) {
        for (i, (uri, head, body)) in bodies().iter().enumerate() {
            let request = format!("GET / HTTP/1.1\r\nHost: {}\r\n\r\n", &uri[7..13]);
            let ex = RequestResponse {
                target_uri: uri,
                date: UNIX_EPOCH + Duration::from_secs(1_700_000_000 + i as u64),
                ip: Some("127.0.0.1".parse().unwrap()),
                request_head: request.as_bytes(),
                response_head: head,
                response_body: body,
                truncated: (i == 2).then_some("length"),
            };
            w.write_exchange(&ex).unwrap();
        }
    }

    /// Where a zstd frame's first block header starts, past the frame header (RFC 8878 §3.1.1).
    fn first_block(frame: &[u8]) -> usize {
        assert_eq!(frame[..4], [0x28, 0xb5, 0x2f, 0xfd], "zstd magic");
        let descriptor = frame[4];
        let single_segment = descriptor & 0x20 != 0;
        let content_size = match descriptor >> 6 {
            0 => usize::from(single_segment),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let dict_id = [0, 1, 2, 4][usize::from(descriptor & 3)];
        5 + usize::from(!single_segment) + dict_id + content_size
    }

    /// The type of a zstd frame's first block: 0 raw, 1 RLE, 2 compressed.
    fn first_block_type(frame: &[u8]) -> u8 {
        (frame[first_block(frame)] >> 1) & 3
    }

    /// The literals type of a zstd frame's first block (0 raw, 1 RLE, 2 Huffman-compressed,
    /// 3 treeless), read from the frame and block headers; the block must be a compressed one.
    fn first_literals_type(frame: &[u8]) -> u8 {
        assert_eq!(first_block_type(frame), 2, "the first block is compressed");
        frame[first_block(frame) + 3] & 3
    }

    /// A stored frame is a zstd frame like any other: zstd decodes it, checks its checksum
    /// (a changed byte is refused) and reads its content size, at every width of that field
    /// and across the 128 KiB block limit.
    #[test]
    fn stored_frames_are_zstd_frames() {
        let mut noise = SplitMix(11);
        for len in [
            0, 1, 255, 256, 257, 65_791, 65_792, 131_072, 131_073, 300_000,
        ] {
            let record: Vec<u8> = (0..len).map(|_| noise.next_u64() as u8).collect();
            let mut frame = b"before".to_vec();
            stored_frame(&record, &mut frame);
            assert_eq!(&frame[..6], b"before", "appended");
            let frame = &frame[6..];
            let content_size = zstd::zstd_safe::get_frame_content_size(frame);
            assert_eq!(content_size.ok(), Some(Some(len as u64)));
            assert_eq!(
                zstd::zstd_safe::find_frame_compressed_size(frame),
                Ok(frame.len())
            );
            assert_eq!(first_block_type(frame), 0, "a raw block");
            assert_eq!(zstd::bulk::decompress(frame, len).unwrap(), record, "{len}");
            let mut bad = frame.to_vec();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            assert!(
                zstd::bulk::decompress(&bad, len).is_err(),
                "checksum of {len}"
            );
        }
    }

    #[test]
    fn small_records_are_stored_and_large_ones_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(config(dir.path(), Compression::Zstd, 1 << 30)).unwrap();
        let request = "GET /docs/section/page-0123.html HTTP/1.1\r\nHost: a.test:8080\r\n\
            User-Agent: crawl-test/0.1 (+https://example.org/bot)\r\nAccept: text/html,\
            application/xhtml+xml;q=0.9,*/*;q=0.8\r\nAccept-Encoding: gzip\r\n\r\n";
        let words = [
            "crawler",
            "frontier",
            "politeness",
            "archive",
            "record",
            "host",
            "page",
        ];
        let mut noise = SplitMix(9);
        let mut body = String::from("<html><body>");
        while body.len() < 3000 {
            let word = words[(noise.next_u64() % words.len() as u64) as usize];
            body += &format!("<p>{word} {}</p>\n", noise.next_u64() % 1000);
        }
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        w.write_exchange(&RequestResponse {
            target_uri: "http://a.test:8080/docs/section/page-0123.html",
            date: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            ip: Some("127.0.0.1".parse().unwrap()),
            request_head: request.as_bytes(),
            response_head: head.as_bytes(),
            response_body: body.as_bytes(),
            truncated: None,
        })
        .unwrap();
        w.finish().unwrap();
        let units = units(&warc_files(dir.path())[0], Compression::Zstd);
        let [_, (response, large), (request, small)] = &units[..] else {
            panic!("{} units", units.len());
        };
        assert!(small.len() < SMALL_RECORD && large.len() >= SMALL_RECORD);
        assert_eq!(first_block_type(request), 0, "a small record is stored raw");
        // The frame header (with a 2-byte content size), the block's header, the checksum.
        assert_eq!(request.len(), 7 + 3 + small.len() + 4);
        assert_eq!(
            first_literals_type(response),
            2,
            "a large record's are compressed"
        );
    }

    /// The finished WARC files in `dir`, in name order.
    fn warc_files(dir: &Path) -> Vec<PathBuf> {
        list_dir(dir)
            .unwrap()
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| !p.to_string_lossy().ends_with(".open"))
            .collect()
    }

    /// Each compressed unit of a file, raw and decoded (the test's own reader).
    fn units(path: &Path, compression: Compression) -> Vec<(Vec<u8>, Vec<u8>)> {
        let raw = fs::read(path).unwrap();
        let mut input = &raw[..];
        let mut out = Vec::new();
        while !input.is_empty() {
            let before = input.len();
            let mut record = Vec::new();
            match compression {
                Compression::Zstd => {
                    let mut d = zstd::stream::read::Decoder::with_buffer(&mut input)
                        .unwrap()
                        .single_frame();
                    io::copy(&mut d, &mut record).unwrap();
                }
                Compression::Gzip => {
                    io::copy(
                        &mut flate2::bufread::GzDecoder::new(&mut input),
                        &mut record,
                    )
                    .unwrap();
                }
            }
            let start = raw.len() - before;
            out.push((raw[start..raw.len() - input.len()].to_vec(), record));
        }
        out
    }

    /// Parses one record, checks its framing, length and block digest; returns headers and block.
    fn parse(record: &[u8]) -> (Vec<(String, String)>, Vec<u8>) {
        let (headers, block) = parse_framing(record);
        assert_eq!(
            get(&headers, "WARC-Block-Digest"),
            Some(&*digest::sha1_base32(&block))
        );
        (headers, block)
    }

    /// `parse` but for the block digest, which the record may lack.
    fn parse_framing(record: &[u8]) -> (Vec<(String, String)>, Vec<u8>) {
        let split = record.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = std::str::from_utf8(&record[..split]).unwrap();
        let mut lines = head.split("\r\n");
        assert_eq!(lines.next(), Some("WARC/1.1"));
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                l.split_once(": ")
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .unwrap()
            })
            .collect();
        let len: usize = get(&headers, "Content-Length").unwrap().parse().unwrap();
        let block = record[split + 4..split + 4 + len].to_vec();
        assert_eq!(&record[split + 4 + len..], b"\r\n\r\n");
        (headers, block)
    }

    fn get<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Checks a file's records: warcinfo first, then response/request pairs with valid links and
    /// payload digests over the body as received; returns the record types.
    fn check_file(path: &Path, compression: Compression) -> Vec<String> {
        let mut types = Vec::new();
        let mut warcinfo_id = String::new();
        let mut last_response = None;
        for (raw, record) in units(path, compression) {
            if compression == Compression::Zstd {
                let size = zstd::zstd_safe::get_frame_content_size(&raw).unwrap();
                assert_eq!(
                    size,
                    Some(record.len() as u64),
                    "frame must carry its content size"
                );
                assert_ne!(raw[4] & 0b100, 0, "frame must carry a checksum");
            }
            let (h, block) = parse(&record);
            let kind = get(&h, "WARC-Type").unwrap().to_string();
            let id = get(&h, "WARC-Record-ID").unwrap().to_string();
            assert!(id.starts_with("<urn:uuid:") && id.len() == 47, "{id}");
            match kind.as_str() {
                "warcinfo" => {
                    assert!(types.is_empty(), "warcinfo must come first");
                    let name = path.file_name().unwrap().to_str().unwrap();
                    assert_eq!(get(&h, "WARC-Filename"), Some(name));
                    assert!(
                        String::from_utf8(block)
                            .unwrap()
                            .contains("isPartOf: crawl\r\n")
                    );
                    warcinfo_id = id;
                }
                "response" => {
                    let body_at = block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    assert_eq!(
                        get(&h, "WARC-Payload-Digest").unwrap(),
                        digest::sha1_base32(&block[body_at..])
                    );
                    assert_eq!(
                        get(&h, "Content-Type"),
                        Some("application/http;msgtype=response")
                    );
                    assert_eq!(get(&h, "WARC-IP-Address"), Some("127.0.0.1"));
                    last_response = Some((id, get(&h, "WARC-Concurrent-To").unwrap().to_string()));
                }
                "request" => {
                    let (response_id, request_id) = last_response.take().unwrap();
                    assert_eq!(get(&h, "WARC-Concurrent-To"), Some(response_id.as_str()));
                    assert_eq!(request_id, id);
                    assert!(block.starts_with(b"GET / HTTP/1.1\r\n"));
                }
                "revisit" => {
                    last_response = Some((id, get(&h, "WARC-Concurrent-To").unwrap().to_string()))
                }
                other => panic!("unexpected record type {other}"),
            }
            if kind != "warcinfo" {
                assert_eq!(get(&h, "WARC-Warcinfo-ID"), Some(warcinfo_id.as_str()));
            }
            types.push(kind);
        }
        types
    }

    #[test]
    fn round_trip_keeps_bytes_and_digests_verify() {
        for compression in [Compression::Zstd, Compression::Gzip] {
            let dir = tempfile::tempdir().unwrap();
            let mut w = WarcWriter::open(config(dir.path(), compression, 1 << 30)).unwrap();
            write_all(&mut w);
            let stats = w.finish().unwrap();
            let files = warc_files(dir.path());
            assert_eq!(files.len(), 1);
            let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
            assert!(
                name.starts_with("crawl-")
                    && name.ends_with(&format!("-00000.{}", compression.extension()))
            );
            let types = check_file(&files[0], compression);
            assert_eq!(
                types,
                [
                    "warcinfo", "response", "request", "response", "request", "response", "request"
                ]
            );
            assert_eq!(
                stats,
                WarcStats {
                    files: 1,
                    records: 7,
                    bytes: fs::metadata(&files[0]).unwrap().len(),
                    ..WarcStats::default()
                }
            );
            let (_, record) = &units(&files[0], compression)[5];
            let (h, block) = parse(record);
            assert_eq!(get(&h, "WARC-Truncated"), Some("length"));
            assert_eq!(get(&h, "WARC-Date"), Some("2023-11-14T22:13:22Z"));
            assert!(
                block.ends_with(&bodies()[2].2),
                "the body is stored as received"
            );
        }
    }

    #[test]
    fn every_zstd_level_writes_records_that_read_back() {
        for level in [*ZSTD_LEVELS.start(), -1, 3, *ZSTD_LEVELS.end()] {
            let dir = tempfile::tempdir().unwrap();
            let c = WarcConfig {
                zstd_level: level,
                ..config(dir.path(), Compression::Zstd, 1 << 30)
            };
            let mut w = WarcWriter::open(c).unwrap();
            write_all(&mut w);
            w.finish().unwrap();
            let files = warc_files(dir.path());
            let types = check_file(&files[0], Compression::Zstd);
            assert_eq!(types.len(), 7, "level {level}: {types:?}");
        }
        for level in [*ZSTD_LEVELS.start() - 1, *ZSTD_LEVELS.end() + 1] {
            let dir = tempfile::tempdir().unwrap();
            let c = WarcConfig {
                zstd_level: level,
                ..config(dir.path(), Compression::Zstd, 1 << 30)
            };
            assert!(WarcWriter::open(c).is_err(), "level {level}");
        }
    }

    /// The kernel is asked to write a growing file out every `WRITEBACK_BYTES`, from where it
    /// was last asked, and the records read back whole.
    #[test]
    fn writeback_follows_the_file_as_it_grows() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(config(dir.path(), Compression::Zstd, 1 << 30)).unwrap();
        let mut noise = SplitMix(9);
        let body: Vec<u8> = (0..300_000).map(|_| noise.next_u64() as u8).collect();
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        let mut marks = Vec::new();
        for i in 0..70u64 {
            let ex = RequestResponse {
                target_uri: "http://a.test/r",
                date: UNIX_EPOCH + Duration::from_secs(1_700_000_000 + i),
                ip: Some("127.0.0.1".parse().unwrap()),
                request_head: b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
                response_head: head.as_bytes(),
                response_body: &body,
                truncated: None,
            };
            w.write_exchange(&ex).unwrap();
            w.flush().unwrap();
            let cur = w.current.as_ref().unwrap();
            assert!(cur.writeback_from <= cur.bytes);
            assert!(
                cur.bytes - cur.writeback_from < WRITEBACK_BYTES,
                "record {i}"
            );
            marks.push(cur.writeback_from);
        }
        marks.dedup();
        // 70 incompressible records of 300 KB: 21 MB, two write-backs of 8 MiB and more.
        assert_eq!(marks.len(), 3, "{marks:?}");
        assert!(marks[1] >= WRITEBACK_BYTES && marks[2] - marks[1] >= WRITEBACK_BYTES);
        w.finish().unwrap();
        let types = check_file(&warc_files(dir.path())[0], Compression::Zstd);
        assert_eq!(types.len(), 1 + 2 * 70);
    }

    #[test]
    fn rotation_starts_every_file_with_warcinfo() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(config(dir.path(), Compression::Zstd, 1)).unwrap();
        write_all(&mut w);
        assert_eq!(w.finish().unwrap().files, 3);
        let files = warc_files(dir.path());
        assert_eq!(files.len(), 3);
        for (i, file) in files.iter().enumerate() {
            assert!(
                file.to_str()
                    .unwrap()
                    .ends_with(&format!("-{i:05}.warc.zst"))
            );
            assert_eq!(
                check_file(file, Compression::Zstd),
                ["warcinfo", "response", "request"]
            );
        }
        // A later run continues the serial numbers instead of reusing them.
        let mut w = WarcWriter::open(config(dir.path(), Compression::Zstd, 1)).unwrap();
        write_all(&mut w);
        w.finish().unwrap();
        assert!(
            warc_files(dir.path())[5]
                .to_str()
                .unwrap()
                .ends_with("-00005.warc.zst")
        );
    }

    #[test]
    fn torn_tail_is_cut_off_and_complete_records_survive() {
        for compression in [Compression::Zstd, Compression::Gzip] {
            let dir = tempfile::tempdir().unwrap();
            let mut w = WarcWriter::open(config(dir.path(), compression, 1 << 30)).unwrap();
            write_all(&mut w);
            w.flush().unwrap();
            drop(w); // a crash: no finish, the file stays `.open`
            let (open_path, _) = list_dir(dir.path()).unwrap().pop().unwrap();
            assert!(open_path.to_str().unwrap().ends_with(".open"));
            let whole = fs::read(&open_path).unwrap();
            let first_unit = units(&open_path, compression)[1].0.clone();
            let mut f = OpenOptions::new().append(true).open(&open_path).unwrap();
            f.write_all(&first_unit[..first_unit.len() / 2]).unwrap();
            drop(f);

            let w = WarcWriter::open(config(dir.path(), compression, 1 << 30)).unwrap();
            assert_eq!(w.finish().unwrap(), WarcStats::default());
            let files = warc_files(dir.path());
            assert_eq!(files.len(), 1, "the .open file was renamed: {files:?}");
            assert_eq!(fs::read(&files[0]).unwrap(), whole);
            assert_eq!(check_file(&files[0], compression).len(), 7);
        }
    }

    /// Records wait in memory until `flush` hands them to the kernel in one write (a batch of
    /// pages costs one write(2), not two per page), at the offsets `Written` promised; a unit
    /// that alone passes `PENDING_BYTES` is written at once.
    #[test]
    fn records_reach_the_file_at_flush_at_the_promised_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(config(dir.path(), Compression::Zstd, 1 << 30)).unwrap();
        let mut written = Vec::new();
        for (uri, head, body) in bodies() {
            let ex = RequestResponse {
                target_uri: &uri,
                date: UNIX_EPOCH,
                ip: None,
                request_head: b"GET / HTTP/1.1\r\n\r\n",
                response_head: &head,
                response_body: &body,
                truncated: None,
            };
            written.push(w.write_exchange(&ex).unwrap());
        }
        let (open_path, _) = list_dir(dir.path()).unwrap().pop().unwrap();
        assert_eq!(
            fs::metadata(&open_path).unwrap().len(),
            0,
            "written before flush"
        );
        w.flush().unwrap();
        let units = units(&open_path, Compression::Zstd);
        let whole = fs::read(&open_path).unwrap();
        assert_eq!(units.len(), 7, "warcinfo and three pairs");
        for (i, at) in written.iter().enumerate() {
            let (raw, _) = &units[1 + 2 * i];
            let start = at.offset as usize;
            assert_eq!(at.length as usize, raw.len());
            assert_eq!(&whole[start..start + raw.len()], &raw[..]);
        }

        // A body too large to wait: its unit is written without a flush.
        let mut noise = SplitMix(3);
        let body: Vec<u8> = (0..2 * PENDING_BYTES)
            .map(|_| noise.next_u64() as u8)
            .collect();
        let ex = RequestResponse {
            target_uri: "http://a.test/big",
            date: UNIX_EPOCH,
            ip: None,
            request_head: b"GET /big HTTP/1.1\r\n\r\n",
            response_head: b"HTTP/1.1 200 OK\r\n\r\n",
            response_body: &body,
            truncated: None,
        };
        let big = w.write_exchange(&ex).unwrap();
        let len = fs::metadata(&open_path).unwrap().len();
        assert!(len >= big.offset + big.length, "{len} {big:?}");
        w.finish().unwrap();
    }

    #[test]
    fn open_file_without_a_complete_record_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("crawl-20240101000000-00000.warc.zst.open"),
            b"\x28\xb5\x2f",
        )
        .unwrap();
        WarcWriter::open(config(dir.path(), Compression::Zstd, 1)).unwrap();
        assert!(list_dir(dir.path()).unwrap().is_empty());
    }

    #[test]
    fn revisit_refers_to_the_original_capture() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(config(dir.path(), Compression::Zstd, 1 << 30)).unwrap();
        let ex = RequestResponse {
            target_uri: "http://a.test/",
            date: SystemTime::now(),
            ip: None,
            request_head: b"GET / HTTP/1.1\r\nHost: a.test\r\nIf-None-Match: \"x\"\r\n\r\n",
            response_head: b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
            response_body: b"",
            truncated: None,
        };
        w.write_revisit(
            &ex,
            &Revisit::NotModified {
                refers_to_date: UNIX_EPOCH,
            },
        )
        .unwrap();
        w.finish().unwrap();
        let file = &warc_files(dir.path())[0];
        let (h, _) = parse(&units(file, Compression::Zstd)[1].1);
        assert_eq!(get(&h, "WARC-Type"), Some("revisit"));
        assert_eq!(get(&h, "WARC-Profile"), Some(REVISIT_PROFILE));
        assert_eq!(get(&h, "WARC-Refers-To-Date"), Some("1970-01-01T00:00:00Z"));
        assert_eq!(get(&h, "WARC-IP-Address"), None);
    }

    /// A recrawled page whose payload did not change: the record keeps the response head, and
    /// its payload digest is the original payload's (WARC 1.1 §6.7.2), not the empty block's.
    /// FastWARC's `--verify-payloads` checks it against the empty payload and reports it, so
    /// only its block digest is checked with FastWARC here.
    #[test]
    fn identical_payload_revisit_keeps_the_head_and_the_original_digest() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(config(dir.path(), Compression::Zstd, 1 << 30)).unwrap();
        let head: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n";
        let ex = RequestResponse {
            target_uri: "http://a.test/",
            date: SystemTime::now(),
            ip: None,
            request_head: b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
            response_head: head,
            response_body: b"same as before",
            truncated: None,
        };
        let revisit = Revisit::IdenticalPayload {
            digest: payload_digest(b"same as before"),
            refers_to_date: UNIX_EPOCH,
        };
        w.write_revisit(&ex, &revisit).unwrap();
        w.finish().unwrap();
        let file = &warc_files(dir.path())[0];
        let (h, block) = parse(&units(file, Compression::Zstd)[1].1);
        assert_eq!(get(&h, "WARC-Type"), Some("revisit"));
        assert_eq!(get(&h, "WARC-Profile"), Some(IDENTICAL_PROFILE));
        assert_eq!(
            get(&h, "WARC-Payload-Digest"),
            Some(payload_digest(b"same as before").as_str())
        );
        assert_eq!(block, head, "the body is not stored again");
        let (ok, report) = run(Command::new("fastwarc").arg("check").arg(file), None);
        assert!(ok && report.contains("3 records were verified"), "{report}");
    }

    #[test]
    fn hostile_values_and_prefixes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for prefix in ["", "../x", "a/b", ".hidden"] {
            let c = WarcConfig {
                prefix: prefix.into(),
                ..config(dir.path(), Compression::Gzip, 1)
            };
            assert!(WarcWriter::open(c).is_err(), "{prefix:?}");
        }
        let mut w = WarcWriter::open(config(dir.path(), Compression::Gzip, 1)).unwrap();
        let ex = RequestResponse {
            target_uri: "http://a.test/\r\nWARC-Type: x",
            date: SystemTime::now(),
            ip: None,
            request_head: b"",
            response_head: b"",
            response_body: b"",
            truncated: None,
        };
        assert!(w.write_exchange(&ex).is_err());
    }

    #[test]
    fn dates_are_utc_civil_time() {
        let at = |s| warc_date(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(at(253_402_300_799), "9999-12-31T23:59:59Z");
        assert_eq!(at(253_402_300_800), "10000-01-01T00:00:00Z");
        for n in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX] {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}").into_bytes());
        }
    }

    #[test]
    fn record_ids_are_distinct_version_4_uuids() {
        let mut ids = RecordIds::new();
        let all: std::collections::HashSet<String> =
            (0..1000).map(|_| ids.next().as_str().to_owned()).collect();
        assert_eq!(all.len(), 1000);
        assert!(
            all.iter()
                .all(|id| id.as_bytes()[24] == b'4' && b"89ab".contains(&id.as_bytes()[29]))
        );
        assert_ne!(RecordIds::new().next(), RecordIds::new().next());
        // The digits are the generator's, in the order `format!` would print them.
        let (mut ids, mut same) = (RecordIds(SplitMix(42)), SplitMix(42));
        for _ in 0..100 {
            let a = (same.next_u64() & !0xF000) | 0x4000;
            let b = (same.next_u64() & !(0b11 << 62)) | (0b10 << 62);
            let expected = format!(
                "<urn:uuid:{:08x}-{:04x}-{:04x}-{:04x}-{:012x}>",
                a >> 32,
                (a >> 16) & 0xFFFF,
                a & 0xFFFF,
                b >> 48,
                b & 0xFFFF_FFFF_FFFF
            );
            assert_eq!(ids.next().as_str(), expected);
        }
    }

    /// Writes the sample exchanges plus a revisit, finished, and returns the one file.
    fn sample_file(dir: &Path, compression: Compression) -> PathBuf {
        let mut w = WarcWriter::open(config(dir, compression, 1 << 30)).unwrap();
        write_all(&mut w);
        let (uri, _, _) = &bodies()[0];
        let ex = RequestResponse {
            target_uri: uri,
            date: SystemTime::now(),
            ip: None,
            request_head: b"GET / HTTP/1.1\r\nHost: a.test\r\nIf-None-Match: \"x\"\r\n\r\n",
            response_head: b"HTTP/1.1 304 Not Modified\r\n\r\n",
            response_body: b"",
            truncated: None,
        };
        w.write_revisit(
            &ex,
            &Revisit::NotModified {
                refers_to_date: UNIX_EPOCH,
            },
        )
        .unwrap();
        w.finish().unwrap();
        warc_files(dir).pop().unwrap()
    }

    #[test]
    fn warcio_verifies_every_digest_of_gzip_and_zstd_files() {
        for compression in [Compression::Gzip, Compression::Zstd] {
            let dir = tempfile::tempdir().unwrap();
            let file = sample_file(dir.path(), compression);
            let report = check_with("warcio", &["check", "-v"], &file);
            // warcinfo, 3 responses, 4 requests; warcio does not check revisit records.
            assert_eq!(report.matches("digest pass").count(), 8, "{report}");
            assert_eq!(
                report.matches("not checked (revisit)").count(),
                1,
                "{report}"
            );
            assert!(
                !report.contains("fail") && !report.contains("no digest"),
                "{report}"
            );
            let index = check_with("warcio", &["index", "-f", "warc-type"], &file);
            assert_eq!(index.lines().count(), 9, "{index}");
        }
    }

    /// With `--no-warc-block-digest` a response record has its payload digest and no block
    /// digest, even one the caller took; every other record keeps its block digest, and the
    /// independent readers verify what is there.
    #[test]
    fn response_records_leave_the_block_digest_out_only_when_told() {
        for compression in [Compression::Gzip, Compression::Zstd] {
            let dir = tempfile::tempdir().unwrap();
            let config = WarcConfig {
                response_block_digests: false,
                ..config(dir.path(), compression, 1 << 30)
            };
            let mut w = WarcWriter::open(config).unwrap();
            assert!(!w.response_block_digests());
            write_all(&mut w);
            let (uri, head, body) = &bodies()[1];
            let ex = RequestResponse {
                target_uri: uri,
                date: SystemTime::now(),
                ip: None,
                request_head: b"GET / HTTP/1.1\r\n\r\n",
                response_head: head,
                response_body: body,
                truncated: None,
            };
            let (payload, block) = digest::payload_and_block(head, body);
            w.write_response(&ex, &payload, Some(&block)).unwrap();
            w.finish().unwrap();
            let file = warc_files(dir.path()).pop().unwrap();
            let mut kinds = Vec::new();
            for (_, record) in units(&file, compression) {
                let (h, block) = parse_framing(&record);
                let kind = get(&h, "WARC-Type").unwrap();
                if kind == "response" {
                    assert_eq!(get(&h, "WARC-Block-Digest"), None, "{h:?}");
                    let http = block.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
                    let digest = payload_digest(&block[http + 4..]);
                    assert_eq!(get(&h, "WARC-Payload-Digest"), Some(digest.as_str()));
                } else {
                    // Its block digest is there and right.
                    parse(&record);
                }
                kinds.push(kind.to_string());
            }
            assert_eq!(kinds.len(), 9, "{kinds:?}");
            assert_eq!(kinds.iter().filter(|k| *k == "response").count(), 4);
            let report = check_with("warcio", &["check", "-v"], &file);
            assert_eq!(report.matches("digest pass").count(), 9, "{report}");
            assert!(
                !report.contains("fail") && !report.contains("no digest"),
                "{report}"
            );
        }
    }

    /// A WET file beside the WARC file: its `conversion` record refers to the response's id,
    /// holds the text with its digests, and warcio and FastWARC read and verify it.
    #[test]
    fn conversion_records_refer_to_their_response_and_readers_verify_them() {
        let text = "Ein Titel\nDer Text der Seite, in UTF-8: äöü — ✓";
        for compression in [Compression::Gzip, Compression::Zstd] {
            let dir = tempfile::tempdir().unwrap();
            let mut warc = WarcWriter::open(config(dir.path(), compression, 1 << 30)).unwrap();
            let mut wet = WarcWriter::open_wet(config(dir.path(), compression, 1 << 30)).unwrap();
            let (uri, head, body) = &bodies()[0];
            let date = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
            let ex = RequestResponse {
                target_uri: uri,
                date,
                ip: None,
                request_head: b"GET / HTTP/1.1\r\n\r\n",
                response_head: head,
                response_body: body,
                truncated: None,
            };
            let response = warc.write_exchange(&ex).unwrap();
            let conversion = Conversion {
                target_uri: uri,
                date,
                refers_to: response.record_id.as_str(),
                text,
            };
            let written = wet.write_conversion(&conversion).unwrap();
            assert_ne!(written.record_id, response.record_id);
            assert_eq!(written.warc_date, response.warc_date);
            warc.finish().unwrap();
            wet.finish().unwrap();
            let files = warc_files(dir.path());
            let wet_file = files
                .iter()
                .find(|f| {
                    f.to_string_lossy()
                        .ends_with(&names::extension(compression, Some("wet")))
                })
                .unwrap();
            assert_eq!(&*written.file, wet_file.file_name().unwrap());
            assert_eq!(files.len(), 2, "{files:?}");
            // The CDXJ index and `crawl wacz` take it for no WARC file of theirs.
            assert_eq!(names::compression_of(&written.file), None);

            let records = units(wet_file, compression);
            assert_eq!(records.len(), 2, "warcinfo and the conversion");
            let (h, block) = parse(&records[1].1);
            assert_eq!(block, text.as_bytes());
            for (name, value) in [
                ("WARC-Type", "conversion"),
                ("WARC-Refers-To", response.record_id.as_str()),
                ("WARC-Record-ID", written.record_id.as_str()),
                ("WARC-Target-URI", uri.as_str()),
                ("WARC-Date", "2023-11-14T22:13:20Z"),
                ("Content-Type", "text/plain; charset=utf-8"),
                ("WARC-Payload-Digest", &digest::sha1_base32(text.as_bytes())),
            ] {
                assert_eq!(get(&h, name), Some(value), "{name} in {h:?}");
            }

            let report = check_with("warcio", &["check", "-v"], wet_file);
            assert!(!report.contains("fail"), "{report}");
            let fields = "warc-type,warc-refers-to,warc-target-uri";
            let index = check_with("warcio", &["index", "-f", fields], wet_file);
            let line = index.lines().nth(1).unwrap_or_default();
            assert!(
                line.contains("conversion") && line.contains(response.record_id.as_str()),
                "{index}"
            );
            // FastWARC checks block digests; its `--verify-payloads` is of HTTP payloads only
            // (it fails warcio's own conversion records too).
            let (ok, report) = run(Command::new("fastwarc").arg("check").arg(wet_file), None);
            assert!(
                ok && report.contains("2 records were verified successfully"),
                "{report}"
            );
            let (ok, index) = run(Command::new("fastwarc").arg("index").arg(wet_file), None);
            assert!(ok && index.contains("conversion"), "{index}");
        }
    }

    #[test]
    fn fastwarc_verifies_every_digest_of_gzip_and_zstd_files() {
        for compression in [Compression::Gzip, Compression::Zstd] {
            let dir = tempfile::tempdir().unwrap();
            let file = sample_file(dir.path(), compression);
            let (ok, report) = run(
                Command::new("fastwarc")
                    .args(["check", "--verify-payloads"])
                    .arg(&file),
                None,
            );
            assert!(
                ok && report.contains("9 records were verified successfully"),
                "{report}"
            );
            let (ok, index) = run(Command::new("fastwarc").arg("index").arg(&file), None);
            assert!(ok && index.lines().count() == 9, "{index}");
        }
    }

    #[test]
    fn independent_readers_do_check_payload_digests() {
        let dir = tempfile::tempdir().unwrap();
        let mut plain = Vec::new();
        for (_, record) in units(
            &sample_file(dir.path(), Compression::Gzip),
            Compression::Gzip,
        ) {
            plain.extend(record);
        }
        let at = plain
            .windows(26)
            .position(|w| w == b"WARC-Payload-Digest: sha1:")
            .unwrap()
            + 26;
        plain[at] = if plain[at] == b'A' { b'B' } else { b'A' };
        let bad = dir.path().join("bad.warc");
        fs::write(&bad, plain).unwrap();
        let (ok, report) = run(Command::new("warcio").arg("check").arg(&bad), None);
        assert!(!ok && report.contains("payload digest failed"), "{report}");
        let (ok, report) = run(
            Command::new("fastwarc")
                .args(["check", "-q", "--verify-payloads"])
                .arg(&bad),
            None,
        );
        assert!(!ok, "{report}");
    }
}
