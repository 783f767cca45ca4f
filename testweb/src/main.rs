//! `testweb`: serves a generated web on loopback for benchmarks, then reports what was fetched.
//!
//! Writes the seed URLs (every host's `/`) to `--seeds-out` (via a `.tmp` file and a rename, so
//! a script can poll for it), serves until stdin reaches EOF or `--max-seconds` pass, then prints
//! one JSON line: requests, distinct and duplicate (host, target) requests (robots.txt excluded),
//! robots.txt requests, pages reachable from the seeds, and pairs of same-host requests whose
//! [start, end] intervals overlap (0 for a polite crawler).
//!
//! `--zipf-pages TOTAL` sizes the hosts like the web instead of `--pages-per-host` each: host h
//! (0-based) gets `round(C / (h+1)^S)` pages, at least 1, `S` from `--zipf-exponent` (default
//! 1.0) and `C` such that the total is about TOTAL (`testweb::graph::zipf_sizes`). Host 0 is the
//! largest; with S = 1, 1,000 hosts and 5,000 pages it has 663 of 5,002 (13%); 10,000 hosts
//! and 50,000 pages: 4,968 of 50,001 (10%). Links, seeds and reachability are as in the
//! uniform web (every page is reachable from its host's `/`). `--largest-late` makes host 0's
//! pages reachable only deep: its `/` links to none of them, and only pages of other hosts two
//! or more levels below their `/` link to it (`Graph::with_largest_late`); `reachable` counts
//! what the seeds reach then. `--ring` links the hosts so that pages and hosts are found only
//! as pages are fetched (`Graph::with_ring`): its seeds file holds host 0's `/` alone.
//!
//! `--check-delay-factor F` checks the server's own log against the politeness rule "the next
//! request to a host comes no sooner than F × the previous response's service time after it",
//! where a request's service time is [start, end] of its log entry (head read → last write
//! began; the client sees at least that) and its gap is from the previous entry's end to its
//! start. robots.txt requests count like any other. The JSON line then also has:
//!
//! - `delay_factor`: F.
//! - `short_gaps`: consecutive same-host request pairs whose gap is shorter than the rule allows,
//!   beyond a tolerance: gap < 0.98 × F × service − 1 ms (overlapping pairs count too).
//! - `largest_pages`: pages of host 0 (the largest host of a Zipf web).
//! - `largest_requests`: requests host 0 served (robots.txt included).
//! - `largest_span_s`: seconds from host 0's first request's start to its last one's end.
//! - `largest_idle_s`: seconds host 0 sat with no request in flight beyond what the rule
//!   required ("ready but not fetched", as the server sees it): the sum over its consecutive
//!   requests of max(0, gap − F × previous service time).
//!
//! `--hosts-by-address --bind ADDR:PORT` serves every host of the generated web on one listener
//! bound to ADDR:PORT, host i at `127.A.B.C` (`testweb::host_address`: 127.0.0.1, 127.0.0.2,
//! …, skipping .0 and .255) on that port, told apart by the address a connection arrived on; the
//! seeds and the links name those addresses, and the log still names hosts by index. It needs
//! one descriptor where the default needs one per host. Binding 0.0.0.0 (to receive all of
//! 127/8) is refused while an interface other than `lo` exists: run it in a network namespace
//! of your own (`unshare --net`, `ip link set lo up`), with the crawler.
//!
//! `--dns-bind ADDR:PORT` (with `--hosts-by-address`) names the hosts instead: host i is
//! `h{i}.web.test` (`testweb::dns::host_name`) in the seeds and the links, and a DNS server on
//! ADDR:PORT (UDP) answers that name with host i's address, `--dns-delay-ms D` (default 0)
//! after each question (`--dns-slow-every N --dns-slow-ms S`: hosts N, 2N, ... after S ms
//! instead). `--dns-log-out FILE` writes its questions as `host TAB t_us TAB qtype
//! TAB name` (host -1 for a name of no host; t_us on the request log's clock, so negative
//! before the first request), and the JSON line counts them (`dns_queries`).
//!
//! With `--fixtures DIR` it serves that directory as one host instead (see
//! `testweb::fixtures`); the JSON line then has requests, distinct, duplicates, robots, 404s
//! (`not_found`) and overlaps.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::fmt::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use testweb::graph::zipf_sizes;
use testweb::{
    Engine, Graph, GraphSpec, HostSpec, LogEntry, TestWeb, dns, hostile, serve_dir, sitemaps,
};

const USAGE: &str =
    "usage: testweb --seeds-out FILE [--hosts N] [--pages-per-host N] [--children N] \
[--extra-links N] [--cross-permille N] [--padding N] [--seed N] [--latency-ms N] [--latency-max-ms N] [--max-seconds N]
         [--latency-spread-ms MIN:MAX] [--zipf-pages TOTAL [--zipf-exponent S]] [--largest-late] [--ring]
         [--check-delay-factor F] [--log-out FILE] [--hosts-by-address --bind ADDR:PORT
         [--dns-bind ADDR:PORT [--dns-delay-ms D] [--dns-slow-every N --dns-slow-ms S]
         [--dns-log-out FILE]]]
       testweb --fixtures DIR --seeds-out FILE [--latency-ms N] [--max-seconds N]
       testweb --hostile --seeds-out FILE [--max-seconds N]
       testweb --sitemaps --seeds-out FILE [--max-seconds N]
       testweb --changing PAGES --seeds-out FILE [--seed N] [--min-rate R] [--max-rate R] [--skew S]
Serves until stdin reaches EOF or --max-seconds (default 3600) pass, then prints one JSON line.
--fixtures serves the files under DIR as one host instead of a generated web.
--zipf-pages sizes hosts by Zipf's law (host h: C/(h+1)^S pages, total about TOTAL) instead of
--pages-per-host; --largest-late links host 0's pages only from other hosts' deeper pages;
--ring: each page links its host's next page, two random pages of it and two of other hosts,
each `/` the next host's `/` (a ring); one seed, host 0's `/`: pages are found as fetched.
--check-delay-factor adds short_gaps and host 0's idle time to the JSON line, and ideal_s: when
the ideal polite crawler (the rule, unlimited concurrency, no delay of its own) would end.
--latency-spread-ms gives each host its own latency, log-uniform in [MIN, MAX] (by --seed).
--log-out writes every request as `host TAB start_us TAB end_us TAB status TAB target`.
--hosts-by-address serves every host on one listener at --bind (e.g. 0.0.0.0:0, only inside a
network namespace with lo alone: unshare --net), host i at 127.0.0.1 + i (skipping .0, .255).
--dns-bind names host i h{i}.web.test in seeds and links and answers DNS for those names on
ADDR:PORT (UDP), --dns-delay-ms after each question; --dns-slow-every N --dns-slow-ms S answer
the names of hosts N, 2N, 3N, ... after S ms instead; --dns-log-out logs the questions.
--hostile serves testweb::hostile's cases; the seeds file then has NAME<TAB>URL lines.
--sitemaps serves testweb::sitemaps (seeds: its two seed hosts).
--changing serves testweb::changing: PAGES pages changing at rates per simulated day, its clock
moved by GET /_sim/clock?t=SECONDS, the truth at GET /_sim/report (first argument only).";

struct Args {
    spec: GraphSpec,
    fixtures: Option<PathBuf>,
    seeds_out: String,
    hostile: bool,
    /// `--sitemaps`: serve `testweb::sitemaps`.
    sitemaps: bool,
    latency: Duration,
    /// When set, host h's latency runs linearly from `latency` (host 0) to this (last host).
    latency_max: Option<Duration>,
    /// `--latency-spread-ms MIN:MAX`: each host's latency drawn log-uniformly (by the seed).
    latency_spread: Option<(Duration, Duration)>,
    /// `--log-out`: where the request log is written as TSV once serving ends.
    log_out: Option<PathBuf>,
    max_seconds: u64,
    /// `--zipf-pages`: the total pages of Zipf-sized hosts, and their exponent.
    zipf: Option<(usize, f64)>,
    /// `--largest-late`: host 0's pages are found only deep (`Graph::with_largest_late`).
    largest_late: bool,
    /// `--ring`: pages and hosts found only as pages are fetched (`Graph::with_ring`).
    ring: bool,
    /// `--check-delay-factor`: the delay rule's factor the log is checked against.
    check_delay_factor: Option<f64>,
    /// `--hosts-by-address --bind ADDR:PORT`: one listener for every host, by local address.
    by_address: Option<SocketAddr>,
    /// `--dns-bind`: hosts named, and the DNS server that answers for them.
    dns: Option<DnsArgs>,
}

/// `--dns-bind ADDR:PORT [--dns-delay-ms D] [--dns-log-out FILE]`.
struct DnsArgs {
    bind: SocketAddr,
    delay: Duration,
    /// Hosts N, 2N, 3N, ... (`--dns-slow-every N`) answered after this delay instead.
    slow: Option<(usize, Duration)>,
    log_out: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut spec = GraphSpec::default();
    let (mut seeds_out, mut latency_ms, mut max_seconds) = (None, 0u64, 3600u64);
    let (mut fixtures, mut generated) = (None, false);
    let mut latency_max_ms = None;
    let (mut latency_spread, mut log_out) = (None, None);
    let (mut hostile, mut sitemaps, mut largest_late, mut ring) = (false, false, false, false);
    let (mut zipf_pages, mut zipf_exponent, mut check_delay_factor) = (None, None, None);
    let (mut hosts_by_address, mut bind) = (false, None);
    let (mut dns_bind, mut dns_delay_ms, mut dns_log_out) = (None, None, None);
    let (mut dns_slow_every, mut dns_slow_ms) = (None, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        if flag == "--hostile" {
            hostile = true;
            continue;
        }
        if flag == "--largest-late" {
            largest_late = true;
            generated = true;
            continue;
        }
        if flag == "--ring" {
            ring = true;
            generated = true;
            continue;
        }
        if flag == "--sitemaps" {
            sitemaps = true;
            continue;
        }
        if flag == "--hosts-by-address" {
            hosts_by_address = true;
            continue;
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: not a number: {value:?}"))
        };
        let real = || match value.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            _ => Err(format!("{flag}: not a non-negative number: {value:?}")),
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
            "--latency-spread-ms" => latency_spread = Some(parse_spread(value)?),
            "--log-out" => log_out = Some(PathBuf::from(value)),
            "--max-seconds" => max_seconds = num()?,
            "--seeds-out" => seeds_out = Some(value.clone()),
            "--fixtures" => fixtures = Some(PathBuf::from(value)),
            "--zipf-pages" => zipf_pages = Some(num()? as usize),
            "--zipf-exponent" => zipf_exponent = Some(real()?),
            "--check-delay-factor" => check_delay_factor = Some(real()?),
            "--dns-bind" => {
                dns_bind = Some(value.parse::<SocketAddr>().map_err(|_| {
                    format!("--dns-bind: want ADDR:PORT such as 127.0.0.53:53, got {value:?}")
                })?)
            }
            "--dns-delay-ms" => dns_delay_ms = Some(num()?),
            "--dns-slow-every" => dns_slow_every = Some(num()?.max(1) as usize),
            "--dns-slow-ms" => dns_slow_ms = Some(num()?),
            "--dns-log-out" => dns_log_out = Some(PathBuf::from(value)),
            "--bind" => {
                bind = Some(value.parse::<SocketAddr>().map_err(|_| {
                    format!("--bind: want an IPv4 ADDR:PORT such as 0.0.0.0:0, got {value:?}")
                })?)
            }
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
                | "--zipf-pages"
                | "--zipf-exponent"
        );
    }
    if (hostile || sitemaps) && (fixtures.is_some() || generated) {
        return Err(
            "--hostile and --sitemaps serve their own webs; they take no web options".into(),
        );
    }
    if fixtures.is_some() && generated {
        return Err(
            "--fixtures serves a directory; the generated web's options do not apply".into(),
        );
    }
    if spec.hosts == 0 || spec.pages_per_host == 0 {
        return Err("--hosts and --pages-per-host must be at least 1".into());
    }
    if ring && largest_late {
        return Err("--ring and --largest-late each link the web their own way: give one".into());
    }
    if latency_spread.is_some() && latency_max_ms.is_some() {
        return Err(
            "--latency-spread-ms and --latency-max-ms both set the hosts' latencies: give one"
                .into(),
        );
    }
    let zipf = match (zipf_pages, zipf_exponent) {
        (Some(total), s) => Some((total, s.unwrap_or(1.0))),
        (None, Some(_)) => return Err("--zipf-exponent needs --zipf-pages".into()),
        (None, None) => None,
    };
    if zipf.is_some() && args.iter().any(|a| a == "--pages-per-host") {
        return Err("--zipf-pages sizes the hosts; --pages-per-host does not apply".into());
    }
    let by_address = match (hosts_by_address, bind) {
        (true, Some(addr)) if addr.is_ipv4() => Some(addr),
        (true, Some(addr)) => return Err(format!("--bind: want an IPv4 address, got {addr}")),
        (true, None) => {
            return Err(
                "--hosts-by-address needs --bind ADDR:PORT (0.0.0.0:0 inside a network \
                 namespace of your own, where lo is the only interface)"
                    .into(),
            );
        }
        (false, Some(_)) => return Err("--bind needs --hosts-by-address".into()),
        (false, None) => None,
    };
    if by_address.is_some() && (hostile || sitemaps || fixtures.is_some()) {
        return Err("--hosts-by-address serves the generated web only".into());
    }
    let dns = match dns_bind {
        Some(_) if by_address.is_none() => {
            return Err("--dns-bind names hosts by address: it needs --hosts-by-address".into());
        }
        Some(bind) => Some(DnsArgs {
            bind,
            delay: Duration::from_millis(dns_delay_ms.unwrap_or(0)),
            slow: match (dns_slow_every, dns_slow_ms) {
                (Some(every), Some(ms)) => Some((every, Duration::from_millis(ms))),
                (None, None) => None,
                _ => return Err("--dns-slow-every and --dns-slow-ms go together".into()),
            },
            log_out: dns_log_out,
        }),
        None if dns_delay_ms.is_some()
            || dns_log_out.is_some()
            || dns_slow_every.is_some()
            || dns_slow_ms.is_some() =>
        {
            return Err("--dns-delay-ms, --dns-slow-* and --dns-log-out need --dns-bind".into());
        }
        None => None,
    };
    let seeds_out = seeds_out.ok_or("--seeds-out FILE is required")?;
    Ok(Args {
        spec,
        fixtures,
        seeds_out,
        hostile,
        sitemaps,
        latency: Duration::from_millis(latency_ms),
        latency_max: latency_max_ms.map(Duration::from_millis),
        latency_spread,
        log_out,
        max_seconds,
        zipf,
        largest_late,
        ring,
        check_delay_factor,
        by_address,
        dns,
    })
}

/// Refuses to bind the unspecified address while this network namespace has an interface other
/// than `lo` (its addresses would be served too). /proc/self/net/dev lists the interfaces of the
/// caller's own namespace (/sys/class/net may show another's).
fn check_bind(addr: SocketAddr) -> Result<(), String> {
    if !addr.ip().is_unspecified() {
        return Ok(());
    }
    let dev = std::fs::read_to_string("/proc/self/net/dev").map_err(|e| {
        format!("--bind {addr}: cannot list the interfaces (/proc/self/net/dev: {e})")
    })?;
    let others: Vec<&str> = dev
        .lines()
        .filter_map(|l| l.split_once(':').map(|(name, _)| name.trim()))
        .filter(|&name| name != "lo")
        .collect();
    if others.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "--bind {addr} would serve on {} too: run in a network namespace of your own \
             (unshare --net, then ip link set lo up) or bind 127.0.0.1",
            others.join(", ")
        ))
    }
}

/// `MIN:MAX` in milliseconds, 1 <= MIN <= MAX.
fn parse_spread(value: &str) -> Result<(Duration, Duration), String> {
    let bad =
        || format!("--latency-spread-ms: want MIN:MAX in ms (1 <= MIN <= MAX), got {value:?}");
    let (min, max) = value.split_once(':').ok_or_else(bad)?;
    let (min, max) = (
        min.parse::<u64>().map_err(|_| bad())?,
        max.parse::<u64>().map_err(|_| bad())?,
    );
    if min == 0 || min > max {
        return Err(bad());
    }
    Ok((Duration::from_millis(min), Duration::from_millis(max)))
}

/// Host `host`'s latency under `--latency-spread-ms`: log-uniform in [min, max], a function of
/// the seed and the host only, so a benchmark's bound is the same on every run.
fn spread_latency(seed: u64, host: usize, (min, max): (Duration, Duration)) -> Duration {
    let u =
        (testweb::graph::mix(seed ^ 0x1a7e_0c1e ^ host as u64) >> 11) as f64 / (1u64 << 53) as f64;
    let (lo, hi) = (min.as_secs_f64().ln(), max.as_secs_f64().ln());
    Duration::from_secs_f64((lo + u * (hi - lo)).exp())
}

/// Writes the request log as TSV: host, start and end in µs since the first request's start,
/// status, target (what a benchmark needs to judge politeness and idle time per host).
fn write_log(path: &Path, log: &[LogEntry]) -> Result<(), String> {
    let Some(t0) = log.iter().map(|e| e.start).min() else {
        return std::fs::write(path, "")
            .map_err(|e| format!("cannot write {}: {e}", path.display()));
    };
    let mut out = String::with_capacity(log.len() * 40);
    for e in log {
        let us = |t: Instant| t.saturating_duration_since(t0).as_micros();
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}",
            e.host,
            us(e.start),
            us(e.end),
            e.status,
            e.target
        );
    }
    std::fs::write(path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))
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

/// What the server's log says of the delay rule with `factor` (see the module doc).
#[derive(Debug, Default, PartialEq)]
struct DelayCheck {
    short_gaps: u64,
    largest_requests: usize,
    largest_span: Duration,
    largest_idle: Duration,
}

fn delay_check(log: &[LogEntry], hosts: usize, factor: f64) -> DelayCheck {
    let mut by_host: Vec<Vec<(Instant, Instant)>> = vec![Vec::new(); hosts];
    for e in log {
        if let Some(v) = by_host.get_mut(e.host) {
            v.push((e.start, e.end));
        }
    }
    let mut check = DelayCheck::default();
    for (h, spans) in by_host.iter_mut().enumerate() {
        spans.sort();
        for pair in spans.windows(2) {
            let ((start0, end0), (start1, _)) = (pair[0], pair[1]);
            let required = end0.saturating_duration_since(start0).mul_f64(factor);
            let gap = start1.saturating_duration_since(end0);
            let allowed = required
                .mul_f64(0.98)
                .saturating_sub(Duration::from_millis(1));
            if start1 < end0 || gap < allowed {
                check.short_gaps += 1;
            }
            if h == 0 {
                check.largest_idle += gap.saturating_sub(required);
            }
        }
        if h == 0 && !spans.is_empty() {
            check.largest_requests = spans.len();
            let last_end = spans.iter().map(|s| s.1).max().unwrap_or(spans[0].0);
            check.largest_span = last_end.saturating_duration_since(spans[0].0);
        }
    }
    check
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
    if args.sitemaps {
        return run_sitemaps(&args);
    }
    let graph = match args.zipf {
        Some((total, exponent)) => {
            let sizes = zipf_sizes(args.spec.hosts, total, exponent);
            Graph::with_host_pages(args.spec, sizes)
        }
        None => Graph::new(args.spec),
    };
    let graph = if args.largest_late {
        graph.with_largest_late()
    } else {
        graph
    };
    let graph = match args.ring {
        true => graph.with_ring(),
        false => graph,
    };
    let hosts = graph.spec().hosts;
    let seed = graph.spec().seed;
    let latency_of = |h: usize| match args.latency_max {
        _ if args.latency_spread.is_some() => {
            spread_latency(seed, h, args.latency_spread.unwrap_or_default())
        }
        Some(max) if hosts > 1 => {
            args.latency + (max.saturating_sub(args.latency)).mul_f64(h as f64 / (hosts - 1) as f64)
        }
        _ => args.latency,
    };
    let named = args.dns.is_some();
    let make = |origins: &[String]| {
        let origins: std::sync::Arc<[String]> = match named {
            true => (origins.iter().enumerate())
                .map(|(h, o)| named_origin(o, h))
                .collect(),
            false => origins.into(),
        };
        (0..hosts)
            .map(|h| HostSpec {
                handler: graph.handler_shared(h, origins.clone(), None),
                latency: latency_of(h),
            })
            .collect()
    };
    let web = match args.by_address {
        Some(addr) => {
            check_bind(addr)?;
            TestWeb::start_by_address(hosts, addr, Engine::Reactor, make)
        }
        None => TestWeb::start_with_engine(hosts, Engine::Reactor, make),
    }
    .map_err(|e| format!("cannot start: {e}"))?;
    let dns = match &args.dns {
        Some(dns) => {
            let answer: dns::Answer = Box::new(move |name| {
                dns::host_of_name(name)
                    .filter(|&h| h < hosts)
                    .and_then(testweb::host_address)
            });
            let (normal, slow) = (dns.delay, dns.slow);
            let delay: dns::Delay = Box::new(move |name| match (slow, dns::host_of_name(name)) {
                (Some((every, late)), Some(h)) if h > 0 && h % every == 0 => late,
                _ => normal,
            });
            let server = dns::DnsServer::start_with(dns.bind, delay, answer)
                .map_err(|e| format!("--dns-bind {}: {e}", dns.bind))?;
            Some(server)
        }
        None => None,
    };
    let origin = |h: usize| match named {
        true => named_origin(&web.origin(h), h),
        false => web.origin(h),
    };
    write_atomically(
        &args.seeds_out,
        &(graph.roots().iter())
            .map(|&(h, _)| format!("{}/\n", origin(h)))
            .collect::<String>(),
    )?;
    serve_until_eof(args.max_seconds);

    let log = web.log();
    web.shutdown();
    let queries = dns.map(dns::DnsServer::shutdown);
    if let Some(path) = &args.log_out {
        write_log(path, &log)?;
    }
    if let (Some(queries), Some(path)) =
        (&queries, args.dns.as_ref().and_then(|d| d.log_out.as_ref()))
    {
        write_dns_log(path, queries, &log)?;
    }
    let (requests, distinct, duplicates, robots) = counts(&log);
    let reachable = graph.bfs(&graph.roots(), &|_, _| true, None).len();
    let mut line = format!(
        "{{\"requests\":{requests},\"distinct\":{distinct},\"duplicates\":{duplicates},\"robots\":{robots},\"reachable\":{reachable},\"overlaps\":{}",
        overlaps(&log, graph.spec().hosts),
    );
    if let Some(factor) = args.check_delay_factor {
        let c = delay_check(&log, hosts, factor);
        let _ = write!(
            line,
            ",\"delay_factor\":{factor},\"short_gaps\":{},\"largest_pages\":{},\"largest_requests\":{},\"largest_span_s\":{:.3},\"largest_idle_s\":{:.3}",
            c.short_gaps,
            graph.pages(0),
            c.largest_requests,
            c.largest_span.as_secs_f64(),
            c.largest_idle.as_secs_f64(),
        );
        let ideal = graph.ideal(&graph.roots(), &latency_of, factor);
        let _ = write!(
            line,
            ",\"ideal_s\":{:.3},\"ideal_requests\":{}",
            ideal.seconds, ideal.requests
        );
    }
    if let Some(queries) = &queries {
        let _ = write!(line, ",\"dns_queries\":{}", queries.len());
    }
    line.push('}');
    Ok(line)
}

/// `http://h{h}.web.test:PORT` for host `h` by address at `origin` (`http://127.A.B.C:PORT`).
fn named_origin(origin: &str, h: usize) -> String {
    let port = origin.rsplit_once(':').map_or("", |(_, port)| port);
    format!("http://{}:{port}", dns::host_name(h))
}

/// Writes the DNS questions as TSV: host index (-1 for a name of no host), µs relative to the
/// request log's first request (negative before it), record type, name.
fn write_dns_log(path: &Path, queries: &[dns::Query], log: &[LogEntry]) -> Result<(), String> {
    let t0 = log.iter().map(|e| e.start).min();
    let t0 = t0.or(queries.first().map(|q| q.at));
    let mut out = String::with_capacity(queries.len() * 40);
    for q in queries {
        let t0 = t0.unwrap_or(q.at);
        let us = match q.at.checked_duration_since(t0) {
            Some(d) => d.as_micros() as i128,
            None => -(t0.duration_since(q.at).as_micros() as i128),
        };
        let host = dns::host_of_name(&q.name).map_or(-1, |h| h as i64);
        let _ = writeln!(out, "{host}\t{us}\t{}\t{}", q.qtype, q.name);
    }
    std::fs::write(path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))
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
    serve_fixed_web(args, web, &seeds, ("outside", hostile::OUTSIDE))
}

fn run_sitemaps(args: &Args) -> Result<String, String> {
    let web = sitemaps::start().map_err(|e| format!("cannot start: {e}"))?;
    let seeds = format!(
        "{}\n{}\n",
        web.url(sitemaps::SITE, "/"),
        web.url(sitemaps::FALLBACK, "/")
    );
    serve_fixed_web(args, web, &seeds, ("elsewhere", sitemaps::ELSEWHERE))
}

/// Serves a web with its own seeds until stdin's EOF; reports its requests, and those of the
/// host no request should reach (`forbidden`: its JSON key and index).
fn serve_fixed_web(
    args: &Args,
    web: TestWeb,
    seeds: &str,
    forbidden: (&str, usize),
) -> Result<String, String> {
    write_atomically(&args.seeds_out, seeds)?;
    serve_until_eof(args.max_seconds);
    let log = web.log();
    web.shutdown();
    if let Some(path) = &args.log_out {
        write_log(path, &log)?;
    }
    let (key, host) = forbidden;
    let reached = log.iter().filter(|e| e.host == host).count();
    Ok(format!(
        "{{\"requests\":{},\"{key}\":{reached}}}",
        log.len()
    ))
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = match argv.first().map(String::as_str) {
        Some("--changing") => testweb::changing::main(&argv),
        _ => parse_args(&argv).and_then(run),
    };
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

    /// A logged GET of `/` on `host` from `a` to `b` milliseconds after `t`.
    fn entry(t: Instant, host: usize, a: u64, b: u64) -> LogEntry {
        LogEntry {
            host,
            method: "GET".into(),
            target: "/".into(),
            status: 200,
            start: t + Duration::from_millis(a),
            end: t + Duration::from_millis(b),
        }
    }

    #[test]
    fn latency_spread_is_log_uniform_and_fixed_by_the_seed() {
        let range = parse_spread("20:1000").unwrap();
        assert_eq!(
            range,
            (Duration::from_millis(20), Duration::from_millis(1000))
        );
        assert!(
            parse_spread("0:5").is_err()
                && parse_spread("9:5").is_err()
                && parse_spread("9").is_err()
        );
        let lat: Vec<Duration> = (0..10_000).map(|h| spread_latency(7, h, range)).collect();
        assert!(lat.iter().all(|l| range.0 <= *l && *l <= range.1));
        assert_eq!(lat[42], spread_latency(7, 42, range));
        assert_ne!(lat[42], spread_latency(8, 42, range));
        // Log-uniform: about half of the hosts below the geometric mean (~141 ms).
        let below = lat.iter().filter(|l| l.as_millis() < 141).count();
        assert!((4_700..5_300).contains(&below), "{below}");
    }

    #[test]
    fn overlap_pairs() {
        let t = Instant::now();
        let e = |host, a, b| entry(t, host, a, b);
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

    #[test]
    fn delay_rule_check() {
        let t = Instant::now();
        let e = |host, a, b| entry(t, host, a, b);
        // Factor 10. Host 0: served 10 ms, waits 100 (exactly the rule), served 10 ms, waits 150
        // (50 idle beyond the rule), served 20 ms, waits 150 (short of 200), served 10 ms.
        // Host 1: served 10 ms, next starts 1 ms before the rule allows (within the tolerance),
        // then overlaps.
        let log = [
            e(0, 0, 10),
            e(0, 110, 120),
            e(0, 270, 290),
            e(0, 440, 450),
            e(1, 0, 10),
            e(1, 109, 120),
            e(1, 115, 130),
        ];
        let c = delay_check(&log, 2, 10.0);
        assert_eq!(c.short_gaps, 2);
        assert_eq!(c.largest_requests, 4);
        assert_eq!(c.largest_span, Duration::from_millis(450));
        assert_eq!(c.largest_idle, Duration::from_millis(50));
    }
}
