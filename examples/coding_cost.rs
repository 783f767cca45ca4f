//! What a content coding costs per page: the bytes on the wire and the CPU to decode them for
//! link extraction, decoded as the crawler decodes (`Response::decoded_body`): gzip through
//! flate2's `MultiGzDecoder`, brotli through `brotli_decompressor::Decompressor` with a 16 KiB
//! buffer, each read through `take(cap)` into a new buffer.
//!
//! Usage: `coding_cost DIR...`. Each file in a DIR is one page as a server sends it, decoded by
//! its name's ending: `.gz` gzip, `.br` brotli, anything else identity (counted, not decoded).
//! Make the DIRs from one corpus with the servers' tools, for example
//! `gzip -6 -c P.html > gzip6/P.html.gz` and `brotli -q 5 -c P.html > br5/P.html.br`.
//! Prints one line per DIR: pages, bytes on the wire, bytes decoded, wire bytes per page,
//! CPU µs per page to decode (this thread's CPU time over as many rounds as fill about a
//! second, the median of 3 such passes) and MB decoded per CPU second.

#[path = "common/cpu.rs"]
mod cpu;

use cpu::thread_cpu_seconds;
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

/// The decoding cap, as a crawl's default `--max-body` (10 MiB).
const CAP: u64 = 10 << 20;

fn main() {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    assert!(!dirs.is_empty(), "usage: coding_cost DIR...");
    for dir in dirs {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_file())
            .collect();
        files.sort();
        let pages: Vec<(Coding, Vec<u8>)> = files
            .iter()
            .map(|path| (Coding::of(path), std::fs::read(path).unwrap()))
            .collect();
        let wire: usize = pages.iter().map(|(_, bytes)| bytes.len()).sum();
        let decoded: usize = pages.iter().map(|(c, bytes)| c.decode(bytes).len()).sum();
        let mut passes: Vec<f64> = (0..3).map(|_| cpu_per_page(&pages)).collect();
        passes.sort_by(f64::total_cmp);
        let per_page = passes[1];
        let n = pages.len();
        println!(
            "{dir}: {n} pages, {wire} bytes on the wire ({} per page), {decoded} decoded, \
             {:.1} CPU µs/page to decode, {:.0} MB/CPU-s",
            wire / n.max(1),
            per_page * 1e6,
            decoded as f64 / n.max(1) as f64 / per_page / 1e6
        );
    }
}

/// CPU seconds per page to decode every page, over rounds that fill about a second.
fn cpu_per_page(pages: &[(Coding, Vec<u8>)]) -> f64 {
    let (start, cpu) = (Instant::now(), thread_cpu_seconds());
    let mut rounds = 0u32;
    while start.elapsed() < Duration::from_secs(1) || rounds < 2 {
        for (coding, bytes) in pages {
            std::hint::black_box(coding.decode(std::hint::black_box(bytes)));
        }
        rounds += 1;
    }
    (thread_cpu_seconds() - cpu) / f64::from(rounds) / pages.len().max(1) as f64
}

/// A page's content coding, by its file name.
#[derive(Clone, Copy)]
enum Coding {
    Identity,
    Gzip,
    Brotli,
}

impl Coding {
    fn of(path: &Path) -> Coding {
        match path.extension().and_then(|e| e.to_str()) {
            Some("gz") => Coding::Gzip,
            Some("br") => Coding::Brotli,
            _ => Coding::Identity,
        }
    }

    /// The page decoded as the crawler decodes it for link extraction.
    fn decode(self, bytes: &[u8]) -> Cow<'_, [u8]> {
        let reader: Box<dyn Read + '_> = match self {
            Coding::Identity => return Cow::Borrowed(bytes),
            Coding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(bytes)),
            Coding::Brotli => Box::new(brotli_decompressor::Decompressor::new(bytes, 16 * 1024)),
        };
        let mut out = Vec::new();
        reader
            .take(CAP)
            .read_to_end(&mut out)
            .expect("a well-formed stream");
        Cow::Owned(out)
    }
}
