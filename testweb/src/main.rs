//! `testweb`: serves a generated web on loopback for benchmarks, then reports what was fetched.
//!
//! Writes the seed URLs (every host's `/`) to `--seeds-out` (via a `.tmp` file and a rename, so
//! a script can poll for it), serves until stdin reaches EOF or `--max-seconds` pass, then prints
//! one JSON line: requests, distinct and duplicate (host, target) requests (robots.txt excluded),
//! robots.txt requests, pages reachable from the seeds, and pairs of same-host requests whose
//! [start, end] intervals overlap (0 for a polite crawler).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use testweb::LogEntry;
use testweb::{Graph, GraphSpec};

const USAGE: &str =
    "usage: testweb --seeds-out FILE [--hosts N] [--pages-per-host N] [--children N] \
[--extra-links N] [--cross-permille N] [--padding N] [--seed N] [--latency-ms N] [--max-seconds N]
Serves until stdin reaches EOF or --max-seconds (default 3600) pass, then prints one JSON line.";

struct Args {
    spec: GraphSpec,
    seeds_out: String,
    latency: Duration,
    max_seconds: u64,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut spec = GraphSpec::default();
    let (mut seeds_out, mut latency_ms, mut max_seconds) = (None, 0u64, 3600u64);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: not a number: {value:?}"))
        };
        match flag.as_str() {
            "--hosts" => spec.hosts = num()? as usize,
            "--pages-per-host" => spec.pages_per_host = num()? as usize,
            "--children" => spec.children = num()? as usize,
            "--extra-links" => spec.extra_links = num()? as usize,
            "--cross-permille" => spec.cross_host_permille = num()?.min(1000) as u32,
            "--padding" => spec.page_padding = num()? as usize,
            "--seed" => spec.seed = num()?,
            "--latency-ms" => latency_ms = num()?,
            "--max-seconds" => max_seconds = num()?,
            "--seeds-out" => seeds_out = Some(value.clone()),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    if spec.hosts == 0 || spec.pages_per_host == 0 {
        return Err("--hosts and --pages-per-host must be at least 1".into());
    }
    let seeds_out = seeds_out.ok_or("--seeds-out FILE is required")?;
    Ok(Args {
        spec,
        seeds_out,
        latency: Duration::from_millis(latency_ms),
        max_seconds,
    })
}

/// Pairs of requests to the same host whose [start, end] intervals overlap.
fn overlaps(log: &[LogEntry], hosts: usize) -> u64 {
    let mut total = 0;
    for h in 0..hosts {
        let mut spans: Vec<(Instant, Instant)> = log
            .iter()
            .filter(|e| e.host == h)
            .map(|e| (e.start, e.end))
            .collect();
        spans.sort();
        let mut open: BinaryHeap<Reverse<Instant>> = BinaryHeap::new();
        for (start, end) in spans {
            while open.peek().is_some_and(|Reverse(e)| *e <= start) {
                open.pop();
            }
            total += open.len() as u64;
            open.push(Reverse(end));
        }
    }
    total
}

fn run(args: Args) -> Result<String, String> {
    let graph = Graph::new(args.spec);
    let web = graph
        .start(args.latency, &|_| None)
        .map_err(|e| format!("cannot start: {e}"))?;
    let seeds: String = (0..web.hosts())
        .map(|h| format!("{}/\n", web.origin(h)))
        .collect();
    let tmp = format!("{}.tmp", args.seeds_out);
    std::fs::write(&tmp, seeds)
        .and_then(|_| std::fs::rename(&tmp, &args.seeds_out))
        .map_err(|e| format!("cannot write {}: {e}", args.seeds_out))?;

    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    let _ = rx.recv_timeout(Duration::from_secs(args.max_seconds));

    let log = web.log();
    web.shutdown();
    let robots = log.iter().filter(|e| e.target == "/robots.txt").count();
    let distinct: HashSet<(usize, &str)> = log
        .iter()
        .filter(|e| e.target != "/robots.txt")
        .map(|e| (e.host, e.target.as_str()))
        .collect();
    let reachable = graph.bfs(&graph.roots(), &|_, _| true, None).len();
    Ok(format!(
        "{{\"requests\":{},\"distinct\":{},\"duplicates\":{},\"robots\":{},\"reachable\":{},\"overlaps\":{}}}",
        log.len(),
        distinct.len(),
        log.len() - robots - distinct.len(),
        robots,
        reachable,
        overlaps(&log, graph.spec().hosts),
    ))
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = parse_args(&argv).and_then(run);
    match result {
        Ok(line) => println!("{line}"),
        Err(e) if e.is_empty() => println!("{USAGE}"),
        Err(e) => {
            eprintln!("testweb: {e}\n{USAGE}");
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_pairs() {
        let t = Instant::now();
        let ms = |n| t + Duration::from_millis(n);
        let e = |host, a, b| LogEntry {
            host,
            method: "GET".into(),
            target: "/".into(),
            status: 200,
            start: ms(a),
            end: ms(b),
        };
        // Host 0: [0,10] overlaps [5,15] and [9,20]; [5,15] overlaps [9,20]; [20,30] touches only.
        let log = [
            e(0, 0, 10),
            e(0, 5, 15),
            e(0, 9, 20),
            e(0, 20, 30),
            e(1, 0, 100),
        ];
        assert_eq!(overlaps(&log, 2), 3);
    }
}
