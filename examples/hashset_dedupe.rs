//! The ceiling for `crawl dedupe`: the same line reading and checksum, but an in-memory hash
//! set of 64-bit checksums instead of the disk-based DUE. Memory grows with the input; this
//! exists only to measure what the DUE's disk costs (benches/dedupe.sh).
//!
//! Usage: `hashset_dedupe < lines > new-lines`

use rustc_hash::FxHashSet;
use std::io::{BufRead, Write};

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(1 << 16, stdin.lock());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut seen = FxHashSet::default();
    let mut line = Vec::new();
    while input.read_until(b'\n', &mut line)? > 0 {
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if seen.insert(crawl::checksum(&line)) {
            out.write_all(&line)?;
            out.write_all(b"\n")?;
        }
        line.clear();
    }
    out.flush()
}
