//! `crawl dedupe`: the crawler's duplicate eliminator as a line filter.
//!
//! Lines on stdin, only the never-seen ones on stdout, in input order; "seen" spans this run and
//! every earlier run with the same `--state` directory. It is the same `Due` the crawler uses
//! (CLOCK cache, spooled batches, sorted checksum file), so the two cannot drift apart. By
//! default lines are URLs and two spellings of one URL are one line (the first spelling is
//! printed); `--raw` compares lines byte for byte.
//!
//! Output appears as batches merge: at least at every merge, and whenever input pauses (a slow
//! producer) the pending batch is merged early so its lines come out.

use crate::exit::Failure;
use crate::seen::checksum::checksum;
use crate::seen::due::{Due, DueConfig};
use crate::url::normalize::{canonicalize, is_canonical_bytes};
use anyhow::{Context, Result};
use clap::Parser;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::mpsc::{RecvTimeoutError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Print each line of stdin the first time it is ever seen (this run or earlier ones).
///
/// Memory stays bounded whatever the input size: seen lines live on disk under --state as
/// sorted 64-bit checksums. Two different lines share a checksum with probability about
/// N²/2⁶⁵ over N distinct lines (≈2.7% that any one line is wrongly dropped at 10⁹).
#[derive(Parser, Debug)]
#[command(version, max_term_width = 100)]
pub struct DedupeArgs {
    /// Directory holding the seen set; created if missing, reused across runs.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,

    /// Compare lines byte for byte instead of as URLs.
    ///
    /// Without it, each line is parsed as a URL and put in canonical form (case of scheme and
    /// host, default port, fragment, dot segments) before comparison; lines that are not URLs
    /// are compared raw, with a warning.
    #[arg(long)]
    pub raw: bool,

    /// Entries in the CLOCK cache of recently seen checksums.
    #[arg(long, value_name = "N", default_value_t = 65536, value_parser = clap::value_parser!(u64).range(1..=1 << 31))]
    pub cache_entries: u64,

    /// Misses held in memory before they are sorted and spilled to disk.
    #[arg(long, value_name = "N", default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..=1 << 28))]
    pub buffer_entries: u64,

    /// Print nothing on stderr but errors (no summary).
    #[arg(short, long)]
    pub quiet: bool,
}

/// How long input may pause before the pending batch is merged for a slow producer.
const IDLE_FLUSH: Duration = Duration::from_millis(300);
/// Lines handed from the reader thread at a time.
const CHUNK_LINES: usize = 4096;

/// Runs `crawl dedupe`. A state directory in use by another process is bad input (exit
/// status 2); everything else that stops it is a failure of the machine.
pub fn run(args: DedupeArgs) -> Result<(), Failure> {
    std::fs::create_dir_all(&args.state).with_context(|| {
        format!(
            "--state {}: cannot create the directory",
            args.state.display()
        )
    })?;
    let _lock = crate::state::statedir::open(&args.state).map_err(Failure::bad_input)?;
    let started = Instant::now();
    let out = Arc::new(Mutex::new(Output {
        writer: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout()),
        closed: false,
        lines: 0,
        bytes: 0,
    }));
    let sink_out = Arc::clone(&out);
    let config = DueConfig {
        cache_entries: args.cache_entries as usize,
        buffer_entries: args.buffer_entries as usize,
    };
    let due: Due<Vec<u8>> = Due::open(
        &args.state,
        config,
        Box::new(move |novel| sink_out.lock().unwrap().write(novel)),
    )?;

    // Reader → key workers (round robin) → this thread (the same round robin, so chunks come
    // back in input order). Each channel holds at most two chunks: memory stays bounded.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 4));
    let mut to_workers = Vec::with_capacity(workers);
    let mut from_workers = Vec::with_capacity(workers);
    let mut worker_threads = Vec::with_capacity(workers);
    for i in 0..workers {
        let (send_lines, receive_lines) = sync_channel::<Lines>(2);
        let (send_keyed, receive_keyed) = sync_channel::<Keyed>(2);
        let raw = args.raw;
        worker_threads.push(std::thread::Builder::new().name(format!("keys{i}")).spawn(
            move || {
                for lines in receive_lines {
                    if send_keyed.send(Keyed::of(lines, raw)).is_err() {
                        return;
                    }
                }
            },
        )?);
        to_workers.push(send_lines);
        from_workers.push(receive_keyed);
    }
    let reader = std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || read_lines(to_workers))?;
    let mut line_no = 0u64;
    let mut not_urls = 0u64;
    let mut turn = 0;
    loop {
        let chunk = match from_workers[turn % workers].recv_timeout(IDLE_FLUSH) {
            Ok(chunk) => {
                turn += 1;
                chunk
            }
            Err(RecvTimeoutError::Timeout) => {
                due.flush()?;
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        if out.lock().unwrap().closed {
            break; // the reader of stdout went away (`| head`)
        }
        for &index in &chunk.not_urls {
            not_urls += 1;
            if not_urls <= 10 {
                let line = chunk.lines.get(index);
                let shown = crate::url::escape::sanitize(&String::from_utf8_lossy(
                    &line[..line.len().min(100)],
                ));
                eprintln!(
                    "crawl dedupe: stdin:{}: {shown}: not a URL; compared as a raw line",
                    line_no + index as u64 + 1
                );
            }
        }
        line_no += chunk.keys.len() as u64;
        due.offer_encoded(chunk.keys.iter().copied().zip(chunk.lines.iter()))?;
    }
    drop(from_workers); // unblocks the workers and the reader if we stopped early
    for worker in worker_threads {
        worker
            .join()
            .map_err(|_| anyhow::anyhow!("a key worker panicked"))?;
    }
    let read_result = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the stdin reader panicked"))?;
    let stats = due.finish()?;
    let mut out = out.lock().unwrap();
    out.flush()?;
    read_result.context("reading stdin")?;
    if !args.quiet {
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "crawl dedupe: {line_no} lines in {secs:.1}s ({:.0}/s), {} new, {} seen in total; CLOCK hit rate {:.1}%; \
             {} merges{}; {} bytes written to disk; peak RSS {:.1} MiB",
            line_no as f64 / secs.max(1e-9),
            out.lines,
            stats.stored,
            stats.hit_rate() * 100.0,
            stats.merges,
            if not_urls > 0 {
                format!("; {not_urls} lines were not URLs (compared raw)")
            } else {
                String::new()
            },
            crate::sys::bytes_written()
                .unwrap_or(0)
                .saturating_sub(out.bytes),
            crate::sys::peak_rss().unwrap_or(0) as f64 / (1 << 20) as f64,
        );
    }
    Ok(())
}

/// The checksum of a line as a URL (its canonical form), or `None` if it is not a URL. Lines
/// already in canonical form, most of them in a crawl's own logs, are recognised without a parse.
fn url_key(line: &[u8]) -> Option<u64> {
    if is_canonical_bytes(line) {
        return Some(checksum(line));
    }
    let url = url::Url::parse(std::str::from_utf8(line).ok()?.trim()).ok()?;
    Some(checksum(canonicalize(url).as_str().as_bytes()))
}

/// A chunk of lines with their keys, computed on a worker thread.
struct Keyed {
    lines: Lines,
    keys: Vec<u64>,
    /// Indices in `lines` of the lines that are not URLs (keyed raw).
    not_urls: Vec<usize>,
}

impl Keyed {
    fn of(lines: Lines, raw: bool) -> Keyed {
        let mut keys = Vec::with_capacity(lines.ends.len());
        let mut not_urls = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let key = if raw { None } else { url_key(line) };
            keys.push(key.unwrap_or_else(|| {
                if !raw {
                    not_urls.push(index);
                }
                checksum(line)
            }));
        }
        Keyed {
            lines,
            keys,
            not_urls,
        }
    }
}

/// A chunk of input lines in one buffer (no allocation per line).
struct Lines {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Lines {
    fn new() -> Lines {
        Lines {
            data: Vec::with_capacity(CHUNK_LINES * 64),
            ends: Vec::with_capacity(CHUNK_LINES),
        }
    }

    fn get(&self, index: usize) -> &[u8] {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        &self.data[start..self.ends[index]]
    }

    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter())
            .map(|(start, &end)| &self.data[start..end])
    }
}

/// Reads stdin into chunks of lines (without their `\n` or `\r\n`), sending a chunk when it is
/// full or when no more input is buffered, so a slow producer's lines are not held back. Chunks
/// go to the workers in turn.
fn read_lines(workers: Vec<std::sync::mpsc::SyncSender<Lines>>) -> std::io::Result<()> {
    let mut turn = 0;
    let mut send = |chunk: Lines| {
        let sent = workers[turn % workers.len()].send(chunk);
        turn += 1;
        sent
    };
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(1 << 16, stdin.lock());
    let mut chunk = Lines::new();
    loop {
        let start = chunk.data.len();
        if input.read_until(b'\n', &mut chunk.data)? == 0 {
            break;
        }
        if chunk.data.last() == Some(&b'\n') {
            chunk.data.pop();
            if chunk.data.len() > start && chunk.data.last() == Some(&b'\r') {
                chunk.data.pop();
            }
        }
        chunk.ends.push(chunk.data.len());
        let full = chunk.ends.len() >= CHUNK_LINES || input.buffer().is_empty();
        if full && send(std::mem::replace(&mut chunk, Lines::new())).is_err() {
            return Ok(());
        }
    }
    if !chunk.ends.is_empty() {
        let _ = send(chunk);
    }
    Ok(())
}

/// Stdout, written by the merge thread; a closed pipe ends the run quietly.
struct Output {
    writer: std::io::BufWriter<std::io::Stdout>,
    closed: bool,
    lines: u64,
    bytes: u64,
}

impl Output {
    fn write(&mut self, novel: Vec<Vec<u8>>) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = novel.iter().try_for_each(|line| {
            self.writer.write_all(line)?;
            self.writer.write_all(b"\n")
        });
        self.lines += novel.len() as u64;
        self.bytes += novel.iter().map(|l| l.len() as u64 + 1).sum::<u64>();
        match result.and_then(|()| self.writer.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other.context("writing stdout"),
        }
    }

    fn flush(&mut self) -> Result<()> {
        self.write(Vec::new())
    }
}
