//! `crawl cachesim TRACE`: the cache experiment of Broder, Najork and Wiener (2003, §5).
//!
//! A trace of URLs (one per line, e.g. `cut -f2 DIR/links.tsv`) is replayed through RANDOM,
//! STATIC, LRU, CLOCK, MIN and INFINITE caches of several sizes, and the miss rates are printed
//! as a table (and optionally drawn as an SVG plot). Each line is reduced to its 64-bit checksum
//! (`checksum`) and then to a dense id, so memory grows with the number of requests (8 bytes
//! each, for MIN's next-request times) and distinct URLs, never with URL length. This module
//! reads the trace and prints; the policies live in `policy`, the plot in `svg`.

pub mod policy;
mod svg;

use crate::exit::Failure;
use crate::seen::checksum::checksum;
use anyhow::{Context, Result, bail};
use clap::Parser;
use policy::{Policy, Simulator, Trace, TraceBuilder};
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;

/// A trace line longer than this is an error (a URL log line never is; a binary file is).
const MAX_LINE: u64 = 1 << 20;

/// Replay a URL trace through the paper's cache policies and print miss rates by cache size.
///
/// Policies: RANDOM (evict a random entry; seeded), STATIC (the SIZE most requested URLs of the
/// whole trace, known in advance), LRU, CLOCK (the crawler's own cache), MIN (Belady's
/// clairvoyant optimum) and INFINITE (only first requests miss). Every first request of a URL
/// is a miss for every policy, STATIC included. Output: a tab-separated table on stdout, a
/// header line `size RANDOM STATIC LRU CLOCK MIN INFINITE` and one row per cache size; the
/// number of requests and distinct URLs on stderr.
#[derive(Parser, Debug)]
#[command(version, max_term_width = 100)]
pub struct CachesimArgs {
    /// File of URLs, one per line (`-` for stdin); blank lines are skipped.
    ///
    /// Lines are compared as given (no canonicalization): the crawl's own logs already hold
    /// canonical URLs. For the link trace of a crawl (run with --link-graph):
    /// `cut -f2 DIR/links.tsv`.
    #[arg(value_name = "TRACE")]
    pub trace: String,

    /// Cache sizes to simulate, comma-separated; `2^N` is allowed.
    ///
    /// The default is every power of two from 2^5 to 2^20.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = size)]
    pub sizes: Vec<u64>,

    /// Print miss counts instead of miss rates.
    #[arg(long)]
    pub counts: bool,

    /// Also draw the miss rates as an SVG plot into FILE (replaced atomically).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Seed of RANDOM's evictions (the same seed gives the same table).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
}

/// The default sizes: 2^5 ..= 2^20, as in the paper's figures.
pub fn default_sizes() -> Vec<u64> {
    (5..=20).map(|e| 1u64 << e).collect()
}

/// A cache size: a positive integer or `2^N` (N at most 40).
fn size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let value = match t.split_once('^') {
        Some(("2", e)) => e
            .parse::<u32>()
            .ok()
            .filter(|&e| e <= 40)
            .map(|e| 1u64 << e),
        Some(_) => None,
        None => t.parse::<u64>().ok().filter(|&n| n > 0),
    };
    value.ok_or_else(|| format!("expected a cache size such as 1024 or 2^10, found {text:?}"))
}

/// Runs `crawl cachesim`. An unreadable or empty trace is bad input (exit status 2).
pub fn run(mut args: CachesimArgs) -> Result<(), Failure> {
    if args.sizes.is_empty() {
        args.sizes = default_sizes();
    }
    let trace = if args.trace == "-" {
        read_trace(std::io::stdin().lock(), "stdin")
    } else {
        std::fs::File::open(&args.trace)
            .with_context(|| format!("cannot open the trace {}", args.trace))
            .and_then(|f| read_trace(std::io::BufReader::new(f), &args.trace))
    }
    .map_err(Failure::bad_input)?;
    if trace.is_empty() {
        return Err(Failure::bad_input(anyhow::anyhow!(
            "the trace {} holds no URLs",
            args.trace
        )));
    }
    eprintln!(
        "crawl cachesim: {} requests, {} distinct URLs",
        trace.len(),
        trace.distinct()
    );
    let table = simulate(&trace, &args.sizes, args.seed);
    print_table(&table, trace.len() as u64, args.counts)?;
    if let Some(path) = &args.svg {
        let plot = svg::plot(&table, trace.len() as u64);
        crate::state::durable::replace(path, plot.as_bytes())
            .with_context(|| format!("writing the plot {}", path.display()))?;
    }
    Ok(())
}

/// Reads a trace: one URL per line, each reduced to a dense id of its checksum. `name` is
/// used in errors (`NAME:LINE: …`).
pub fn read_trace(mut input: impl BufRead, name: &str) -> Result<Trace> {
    let mut trace = TraceBuilder::default();
    let mut line = Vec::new();
    for number in 1u64.. {
        line.clear();
        let read = (&mut input)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .with_context(|| format!("reading the trace {name}"))?;
        if read == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        } else if line.len() as u64 > MAX_LINE {
            bail!("{name}:{number}: line longer than {MAX_LINE} bytes; is this a URL trace?");
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if trace.len() as u64 >= u64::from(u32::MAX) {
            bail!("{name}:{number}: traces of more than 2^32-1 requests are not supported");
        }
        trace.push(checksum(&line));
    }
    Ok(trace.finish())
}

/// Miss counts: one row per size, one column per policy (in [`Policy::ALL`] order).
pub struct Table {
    pub sizes: Vec<u64>,
    pub misses: Vec<[u64; Policy::ALL.len()]>,
}

/// Runs every policy at every size, spreading the simulations over the available cores.
pub fn simulate(trace: &Trace, sizes: &[u64], seed: u64) -> Table {
    let simulator = Simulator::new(trace, seed);
    let jobs: Vec<(usize, usize)> = (0..sizes.len())
        .flat_map(|s| (0..Policy::ALL.len()).map(move |p| (s, p)))
        .collect();
    let next_job = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results: Vec<Vec<(usize, usize, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.min(jobs.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let j = next_job.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(s, p)) = jobs.get(j) else {
                            return done;
                        };
                        done.push((s, p, simulator.misses(Policy::ALL[p], sizes[s])));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a simulation panicked"))
            .collect()
    });
    let mut misses = vec![[0; Policy::ALL.len()]; sizes.len()];
    for (s, p, m) in results.into_iter().flatten() {
        misses[s][p] = m;
    }
    Table {
        sizes: sizes.to_vec(),
        misses,
    }
}

fn print_table(table: &Table, requests: u64, counts: bool) -> Result<()> {
    let mut out = String::from("size");
    for policy in Policy::ALL {
        out.push('\t');
        out.push_str(policy.name());
    }
    out.push('\n');
    for (size, row) in table.sizes.iter().zip(&table.misses) {
        out.push_str(&size.to_string());
        for &m in row {
            if counts {
                out.push_str(&format!("\t{m}"));
            } else {
                out.push_str(&format!("\t{:.6}", m as f64 / requests as f64));
            }
        }
        out.push('\n');
    }
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing the table"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_or_fail_loudly() {
        assert_eq!(size("1024"), Ok(1024));
        assert_eq!(size("2^10"), Ok(1024));
        assert!(size("0").is_err() && size("3^2").is_err() && size("2^41").is_err());
        assert!(size("many").is_err());
        assert_eq!(default_sizes().len(), 16);
    }

    #[test]
    fn trace_lines_become_dense_ids() {
        let text = "http://a/\nhttp://b/\r\n\nhttp://a/\nhttp://c/";
        let trace = read_trace(text.as_bytes(), "t").unwrap();
        assert_eq!(trace.ids, [0, 1, 0, 2]);
        assert_eq!(trace.keys[0], checksum(b"http://a/"));
        assert_eq!(trace.keys[1], checksum(b"http://b/"));
    }

    #[test]
    fn an_overlong_line_is_an_error_naming_it() {
        let mut text = b"http://a/\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE as usize + 2));
        let error = read_trace(&text[..], "big.txt").unwrap_err();
        assert!(
            format!("{error}").starts_with("big.txt:2: line longer"),
            "{error}"
        );
    }
}
