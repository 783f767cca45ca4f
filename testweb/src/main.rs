//! `testweb`: serves a generated web on loopback for benchmarks, then reports what was fetched.
//!
//! Writes the seed URLs (every host's `/`) to `--seeds-out` (via a `.tmp` file and a rename, so
//! a script can poll for it), serves until stdin reaches EOF or `--max-seconds` pass, then prints
//! one JSON line: requests, distinct and duplicate (host, target) requests (robots.txt excluded),
//! robots.txt requests, pages reachable from the seeds, and pairs of same-host requests whose
//! [start, end] intervals overlap (0 for a polite crawler).
//!
//! With `--fixtures DIR` it serves that directory as one host instead (see
//! `testweb::fixtures`); the JSON line then has requests, distinct, duplicates, robots, 404s
//! (`not_found`) and overlaps.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use testweb::{Graph, GraphSpec, HostSpec, LogEntry, TestWeb, hostile, serve_dir};

const USAGE: &str =
    "usage: testweb --seeds-out FILE [--hosts N] [--pages-per-host N] [--children N] \
[--extra-links N] [--cross-permille N] [--padding N] [--seed N] [--latency-ms N] [--latency-max-ms N] [--max-seconds N]
       testweb --fixtures DIR --seeds-out FILE [--latency-ms N] [--max-seconds N]
       testweb --hostile --seeds-out FILE [--max-seconds N]
Serves until stdin reaches EOF or --max-seconds (default 3600) pass, then prints one JSON line.
--fixtures serves the files under DIR as one host instead of a generated web.
--hostile serves testweb::hostile's cases; the seeds file then has NAME<TAB>URL lines.";

struct Args {
    spec: GraphSpec,
    fixtures: Option<PathBuf>,
    seeds_out: String,
    hostile: bool,
    latency: Duration,
    /// When set, host h's latency runs linearly from `latency` (host 0) to this (last host).
    latency_max: Option<Duration>,
    max_seconds: u64,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut spec = GraphSpec::default();
    let (mut seeds_out, mut latency_ms, mut max_seconds) = (None, 0u64, 3600u64);
    let (mut fixtures, mut generated) = (None, false);
    let mut latency_max_ms = None;
    let mut hostile = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        if flag == "--hostile" {
            hostile = true;
            continue;
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
            "--latency-max-ms" => latency_max_ms = Some(num()?),
            "--max-seconds" => max_seconds = num()?,
            "--seeds-out" => seeds_out = Some(value.clone()),
            "--fixtures" => fixtures = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
        generated |= matches!(
            flag.as_str(),
            "--hosts"
                | "--pages-per-host"
                | "--children"
                | "--extra-links"
                | "--cross-permille"
                | "--padding"
                | "--seed"
        );
    }
    if hostile && (fixtures.is_some() || generated) {
        return Err("--hostile serves its own cases; it takes no web options".into());
    }
    if fixtures.is_some() && generated {
        return Err(
            "--fixtures serves a directory; the generated web's options do not apply".into(),
        );
    }
    if spec.hosts == 0 || spec.pages_per_host == 0 {
        return Err("--hosts and --pages-per-host must be at least 1".into());
    }
    let seeds_out = seeds_out.ok_or("--seeds-out FILE is required")?;
    Ok(Args {
        spec,
        fixtures,
        seeds_out,
        hostile,
        latency: Duration::from_millis(latency_ms),
        latency_max: latency_max_ms.map(Duration::from_millis),
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

/// Writes every host's `/` to `path`, via a temporary file and a rename (pollers never see a
/// partial file).
fn write_seeds(web: &TestWeb, path: &str) -> Result<(), String> {
    let seeds: String = (0..web.hosts())
        .map(|h| format!("{}/\n", web.origin(h)))
        .collect();
    write_atomically(path, &seeds)
}

fn write_atomically(path: &str, seeds: &str) -> Result<(), String> {
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, seeds)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {path}: {e}"))
}

/// Blocks until stdin reaches EOF or `max_seconds` pass.
fn serve_until_eof(max_seconds: u64) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    let _ = rx.recv_timeout(Duration::from_secs(max_seconds));
}

/// (requests, distinct, duplicates, robots) of a log: robots.txt counts apart.
fn counts(log: &[LogEntry]) -> (usize, usize, usize, usize) {
    let robots = log.iter().filter(|e| e.target == "/robots.txt").count();
    let distinct: HashSet<(usize, &str)> = log
        .iter()
        .filter(|e| e.target != "/robots.txt")
        .map(|e| (e.host, e.target.as_str()))
        .collect();
    let distinct = distinct.len();
    (log.len(), distinct, log.len() - robots - distinct, robots)
}

fn run(args: Args) -> Result<String, String> {
    if let Some(dir) = &args.fixtures {
        return run_fixtures(dir, &args);
    }
    if args.hostile {
        return run_hostile(&args);
    }
    let graph = Graph::new(args.spec);
    let hosts = graph.spec().hosts;
    let latency_of = |h: usize| match args.latency_max {
        Some(max) if hosts > 1 => {
            args.latency + (max.saturating_sub(args.latency)).mul_f64(h as f64 / (hosts - 1) as f64)
        }
        _ => args.latency,
    };
    let web = TestWeb::start_with(hosts, |origins| {
        (0..hosts)
            .map(|h| HostSpec {
                handler: graph.handler(h, origins, None),
                latency: latency_of(h),
            })
            .collect()
    })
    .map_err(|e| format!("cannot start: {e}"))?;
    write_seeds(&web, &args.seeds_out)?;
    serve_until_eof(args.max_seconds);

    let log = web.log();
    web.shutdown();
    let (requests, distinct, duplicates, robots) = counts(&log);
    let reachable = graph.bfs(&graph.roots(), &|_, _| true, None).len();
    Ok(format!(
        "{{\"requests\":{requests},\"distinct\":{distinct},\"duplicates\":{duplicates},\"robots\":{robots},\"reachable\":{reachable},\"overlaps\":{}}}",
        overlaps(&log, graph.spec().hosts),
    ))
}

fn run_fixtures(dir: &Path, args: &Args) -> Result<String, String> {
    let host = serve_dir(dir)
        .map_err(|e| format!("--fixtures {}: {e}", dir.display()))?
        .with_latency(args.latency);
    let web = TestWeb::start(vec![host]).map_err(|e| format!("cannot start: {e}"))?;
    write_seeds(&web, &args.seeds_out)?;
    serve_until_eof(args.max_seconds);

    let log = web.log();
    web.shutdown();
    let (requests, distinct, duplicates, robots) = counts(&log);
    let not_found = log.iter().filter(|e| e.status == 404).count();
    Ok(format!(
        "{{\"requests\":{requests},\"distinct\":{distinct},\"duplicates\":{duplicates},\"robots\":{robots},\"not_found\":{not_found},\"overlaps\":{}}}",
        overlaps(&log, 1),
    ))
}

fn run_hostile(args: &Args) -> Result<String, String> {
    let web = hostile::start().map_err(|e| format!("cannot start: {e}"))?;
    let mut seeds: String = hostile::CASES
        .iter()
        .map(|c| format!("{}\t{}\n", c.name, web.url(hostile::MAIN, c.path)))
        .collect();
    for (i, name) in hostile::ROBOTS.iter().enumerate() {
        let url = web.url(hostile::ROBOTS_FIRST + i, "/");
        seeds.push_str(&format!("robots-{name}\t{url}\n"));
    }
    write_atomically(&args.seeds_out, &seeds)?;
    serve_until_eof(args.max_seconds);
    let log = web.log();
    web.shutdown();
    let outside = log.iter().filter(|e| e.host == hostile::OUTSIDE).count();
    Ok(format!(
        "{{\"requests\":{},\"outside\":{outside}}}",
        log.len()
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
