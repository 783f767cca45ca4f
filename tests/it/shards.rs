//! `--shard K/N --exchange URL`: shards of one crawl, each a real `crawl` process, exchanging
//! URLs through a `redis-server` the test starts (`testweb::redis`), on a loopback test web.
//!
//! The tests: 1 (four shards fetch what one process fetches, each page once, each host
//! in one shard only, no overlapping requests per host), 2 (SIGKILL a shard at random moments
//! and restart it: nothing lost, refetches bounded by its in-flight pages), 4 (a receiver
//! killed at the crash point `shard-received`, between offering a read to its DUE and
//! acknowledging it: the batches are still pending in Redis, come again, and no page is
//! fetched twice beyond those in flight), 5 (a late starter keeps the others from ending; a
//! wrong N and a second process for a shard are refused), 6 (`crawl rank` over the shards'
//! links.tsv, each written with `--link-graph`, together equals a single process's) and 3
//! (SIGKILL `redis-server` with batches in a stream and restart it: nothing lost, nothing
//! fetched twice). Also: `--find` stops every shard, and `crawl shards --status` only reads.

use crate::util::{CRAWL_DEADLINE, counts, parse_log, read_summary, small_graph, small_web};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use testweb::redis::RedisServer;
use testweb::{Graph, TestWeb};

/// A shard's process, its URL log going to `DIR/log-K-RUN.tsv`.
pub(crate) struct ShardRun {
    pub(crate) child: Child,
    pub(crate) log: PathBuf,
    pub(crate) stderr: PathBuf,
}

/// Starts `crawl DIR/seeds.txt --out DIR/shard-K --shard K/N --exchange URL -j 4 …`.
fn spawn(dir: &Path, k: u32, n: u32, exchange: &str, run: usize, extra: &[&str]) -> ShardRun {
    spawn_in(dir, &format!("shard-{k}"), k, n, exchange, run, extra, &[])
}

/// `spawn` with the state directory `DIR/OUT` and environment variables `env` (crash points).
#[allow(clippy::too_many_arguments)]
fn spawn_in(
    dir: &Path,
    out: &str,
    k: u32,
    n: u32,
    exchange: &str,
    run: usize,
    extra: &[&str],
    env: &[(&str, &str)],
) -> ShardRun {
    let mut command = Command::new(env!("CARGO_BIN_EXE_crawl"));
    command.envs(env.iter().copied());
    let spec = ShardSpec {
        dir,
        out,
        k,
        n,
        exchange,
        run,
        extra,
    };
    launch(command, &spec)
}

/// A shard's command line: `DIR/seeds.txt --out DIR/OUT --shard K/N --exchange URL -j 4 …
/// EXTRA`, its URL log and stderr named after K and `run`.
pub(crate) struct ShardSpec<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) out: &'a str,
    pub(crate) k: u32,
    pub(crate) n: u32,
    pub(crate) exchange: &'a str,
    pub(crate) run: usize,
    pub(crate) extra: &'a [&'a str],
}

/// `spec` in the network namespace `netns` (`ip netns exec`, which becomes the crawl: the
/// child is the shard's process), as a shard on a machine of its own.
pub(crate) fn spawn_netns(netns: &str, spec: &ShardSpec) -> ShardRun {
    let mut command = Command::new("ip");
    command.args(["netns", "exec", netns, env!("CARGO_BIN_EXE_crawl")]);
    launch(command, spec)
}

/// Runs `command` with `spec`'s arguments.
fn launch(mut command: Command, spec: &ShardSpec) -> ShardRun {
    let (dir, k) = (spec.dir, spec.k);
    let log = dir.join(format!("log-{k}-{}.tsv", spec.run));
    let stderr = dir.join(format!("err-{k}-{}.txt", spec.run));
    let child = command
        .arg(dir.join("seeds.txt"))
        .arg("--out")
        .arg(dir.join(spec.out))
        .args([
            "--shard",
            &format!("{k}/{}", spec.n),
            "--exchange",
            spec.exchange,
        ])
        .args(["-j", "4", "--delay-factor", "0", "--buffer-entries", "256"])
        .args(spec.extra)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("starting crawl");
    ShardRun { child, log, stderr }
}

/// A test that fails leaves no shard running (one in a namespace would wait for its partners).
impl Drop for ShardRun {
    fn drop(&mut self) {
        if self.still_running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl ShardRun {
    /// Waits for the exit (killing it at the crawl deadline, which fails the test).
    pub(crate) fn wait(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + CRAWL_DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (
                    status.code(),
                    std::fs::read_to_string(&self.stderr).unwrap(),
                );
            }
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                self.child.wait().unwrap();
                panic!(
                    "shard did not finish in {CRAWL_DEADLINE:?}: {}",
                    std::fs::read_to_string(&self.stderr).unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Lines of its URL log so far.
    pub(crate) fn lines(&self) -> usize {
        std::fs::read_to_string(&self.log).map_or(0, |t| t.lines().count())
    }

    pub(crate) fn still_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

/// Seeds: the root of every host (so every host is in scope, as in the 50-host benchmark web).
pub(crate) fn write_seeds(dir: &Path, web: &TestWeb, hosts: usize) {
    let seeds: String = (0..hosts)
        .map(|h| format!("{}\n", web.url(h, "/")))
        .collect();
    std::fs::write(dir.join("seeds.txt"), seeds).unwrap();
}

/// Waits for every shard to exit, each with status 0.
pub(crate) fn wait_all(shards: Vec<ShardRun>) {
    for shard in shards {
        let (code, stderr) = shard.wait();
        assert_eq!(code, Some(0), "{stderr}");
    }
}

/// Every page reachable from the hosts' roots: what a single-process crawl of all of them gets.
pub(crate) fn reachable(graph: &Graph) -> Vec<(usize, usize)> {
    graph
        .bfs(&graph.roots(), &|_, _| true, None)
        .into_keys()
        .collect()
}

/// `host:port` of a URL.
pub(crate) fn host_of(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    rest[..rest.find('/').unwrap_or(rest.len())].to_owned()
}

/// Runs `crawl rank DIR --top 100000` and returns its lines as (kind, score, degree, URL),
/// sorted: the rank column is left out, as pages of equal score may come in either order.
fn ranked(dir: &Path) -> Vec<(String, String, String, String)> {
    let args = [
        "rank".to_owned(),
        dir.to_str().unwrap().to_owned(),
        "--top".into(),
        "100000".into(),
    ];
    let (code, stdout, stderr) = crate::util::run_binary(&args, None, dir);
    assert_eq!(code, 0, "{stderr}");
    let mut lines: Vec<_> = stdout
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].into(), f[2].into(), f[3].into(), f[4].into())
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn four_shards_fetch_each_page_once_and_each_host_from_one_shard() {
    const HOSTS: usize = 50;
    let (graph, web) = small_web(HOSTS, 30, 16);
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let shards: Vec<ShardRun> = (0..4)
        .map(|k| spawn(dir.path(), k, 4, &redis.url(), 0, &["--link-graph"]))
        .collect();
    let logs: Vec<PathBuf> = shards.iter().map(|s| s.log.clone()).collect();
    wait_all(shards);
    let expected = reachable(&graph);
    crate::util::assert_fetched_once(&web, &expected);

    // Each host's URLs are in one shard's URL log only, and every shard had hosts.
    let mut shard_of: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let (mut sent, mut hits) = (0, 0);
    for (k, log) in logs.iter().enumerate() {
        for row in parse_log(&std::fs::read_to_string(log).unwrap()) {
            shard_of.entry(host_of(&row.url)).or_default().insert(k);
        }
        let summary = read_summary(&dir.path().join(format!("shard-{k}")));
        assert_eq!(summary["ending"], "complete", "{summary}");
        assert_eq!(summary["shard"]["index"], k as u64, "{summary}");
        assert_eq!(summary["shard"]["count"], 4, "{summary}");
        assert!(
            summary["shard"]["received"].as_u64().unwrap() > 0,
            "{summary}"
        );
        sent += summary["shard"]["sent"].as_u64().unwrap();
        hits += summary["shard"]["sent_cache_hits"].as_u64().unwrap();
        assert_eq!(
            summary["shard"]["sent"],
            summary["shard"]["sent_cache_misses"]
        );
    }
    // Popular pages are linked from many pages: the sent cache keeps most repeats home.
    assert!(hits > 0, "the sent cache never hit");
    assert_eq!(shard_of.len(), HOSTS);
    let shared: Vec<_> = shard_of.iter().filter(|(_, s)| s.len() > 1).collect();
    assert!(
        shared.is_empty(),
        "hosts crawled by several shards: {shared:?}"
    );
    let per_shard = counts(shard_of.values().map(|s| *s.iter().next().unwrap()));
    assert_eq!(per_shard.len(), 4, "a shard owned no host: {per_shard:?}");
    assert!(sent > 0);

    // No two requests to one host overlapped in time, across all shards.
    for (host, requests) in crate::util::requests_by_host(&web) {
        let overlaps = requests
            .windows(2)
            .filter(|p| p[1].start < p[0].end)
            .count();
        assert_eq!(overlaps, 0, "host {host}: requests overlapped");
    }

    // `crawl shards --status` adds the reports up.
    let (code, stdout, stderr) = status(dir.path(), &redis.url(), 4);
    assert_eq!(code, 0, "{stderr}");
    let total = format!("total\tended\tpages {}\tin transit 0\n", expected.len());
    assert!(stdout.contains(&total), "{stdout}");
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("broker\tused_memory "),
        "{stdout}"
    );

    // Test 6: `crawl rank` over the shards' links.tsv together equals a single process's.
    let single = tempfile::tempdir().unwrap();
    std::fs::copy(
        dir.path().join("seeds.txt"),
        single.path().join("seeds.txt"),
    )
    .unwrap();
    let (code, _, stderr) = crate::util::crawl_dir(
        single.path(),
        &["-j", "8", "--delay-factor", "0", "--link-graph"],
        &[],
        None,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let together = tempfile::tempdir().unwrap();
    let mut links = Vec::new();
    for k in 0..4 {
        links.extend(std::fs::read(dir.path().join(format!("shard-{k}/links.tsv"))).unwrap());
    }
    std::fs::write(together.path().join("links.tsv"), links).unwrap();
    let one = ranked(&single.path().join("out"));
    assert!(one.len() > 100, "{one:?}");
    assert_eq!(ranked(together.path()), one);
}

/// The URL log's line count once it has stopped growing for `quiet` (polled, with a deadline).
fn settled_lines(run: &ShardRun, quiet: Duration) -> usize {
    crate::util::settled(|| run.lines(), quiet, Duration::from_secs(60))
}

#[test]
fn a_shard_killed_at_random_moments_loses_nothing_and_refetches_only_in_flight_pages() {
    const HOSTS: usize = 24;
    const KILLS: usize = 3;
    const JOBS: usize = 4;
    let graph = small_graph(HOSTS, 25, 22);
    // A little latency, so that kills land among pages in flight.
    let web = graph.start(Duration::from_millis(3), &|_| None).unwrap();
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let others: Vec<ShardRun> = [0, 2]
        .into_iter()
        .map(|k| spawn(dir.path(), k, 3, &redis.url(), 0, &[]))
        .collect();
    let mut rng = crawl::SplitMix(16);
    let mut victim_logs = Vec::new();
    for run in 0..=KILLS {
        let mut victim = spawn(dir.path(), 1, 3, &redis.url(), run, &[]);
        victim_logs.push(victim.log.clone());
        if run == KILLS {
            let (code, stderr) = victim.wait();
            assert_eq!(code, Some(0), "{stderr}");
            break;
        }
        // SIGKILL after 5 to 60 more lines of its URL log (or once it ended by itself).
        let at = 5 + rng.below(56) as usize;
        let deadline = Instant::now() + CRAWL_DEADLINE;
        while victim.still_running() && victim.lines() < at && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        victim.child.kill().unwrap();
        let status = victim.child.wait().unwrap();
        // It ended by itself before the kill: its crawl is complete, and starting it again
        // would be a recrawl (the next run), not this one.
        if status.code().is_some() {
            let stderr = std::fs::read_to_string(&victim.stderr).unwrap();
            assert_eq!(status.code(), Some(0), "{stderr}");
            break;
        }
    }
    wait_all(others);
    let expected = reachable(&graph);
    let requested = crate::util::page_requests(&web);
    let unique: BTreeSet<(usize, usize)> = requested.iter().copied().collect();
    crate::util::assert_same_set(
        "pages fetched",
        &expected,
        &unique.into_iter().collect::<Vec<_>>(),
    );
    // Refetches: only the victim's hosts, at most its pages in flight at each kill: being
    // fetched or processed by a worker, its host's next page requested ahead, or queued for the
    // WARC writer (2 × 8 records at 4 jobs) and so not done (the bound of `resume.rs`).
    let mut victim_hosts = BTreeSet::new();
    for log in &victim_logs {
        for row in parse_log(&std::fs::read_to_string(log).unwrap()) {
            victim_hosts.insert(host_of(&row.url));
        }
    }
    let again: Vec<_> = counts(requested)
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    let extra: usize = again.iter().map(|(_, n)| n - 1).sum();
    assert!(
        extra <= KILLS * (6 * JOBS + 1),
        "{extra} refetches after {KILLS} kills: {again:?}"
    );
    for ((host, _), _) in &again {
        let origin = host_of(&web.url(*host, "/"));
        assert!(
            victim_hosts.contains(&origin),
            "host {host} of a shard never killed was fetched twice"
        );
    }
    let summary = read_summary(&dir.path().join("shard-1"));
    assert_eq!(summary["ending"], "complete", "{summary}");
}

#[test]
fn a_late_shard_holds_the_end_and_a_wrong_n_or_a_second_process_is_refused() {
    const HOSTS: usize = 12;
    let (graph, web) = small_web(HOSTS, 15, 5);
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let mut first = spawn(dir.path(), 0, 2, &redis.url(), 0, &[]);
    // Shard 0 runs out of its own work, and waits: shard 1 has never reported.
    settled_lines(&first, Duration::from_millis(1500));
    assert!(
        first.still_running(),
        "shard 0 ended before shard 1 started"
    );

    // A second process for shard 0 (another directory) is refused by the lease.
    let second = spawn_in(dir.path(), "elsewhere", 0, 2, &redis.url(), 9, &[], &[]);
    let (code, stderr) = second.wait();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("already claimed"), "{stderr}");
    // A shard of these seeds with another N is refused by the N the broker holds.
    let wrong = spawn(dir.path(), 1, 3, &redis.url(), 9, &[]);
    let (code, stderr) = wrong.wait();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("runs with 2 shards, not 3"), "{stderr}");
    // --focus is refused with --shard, before anything is built.
    let focused = spawn_in(
        dir.path(),
        "focused",
        1,
        2,
        &redis.url(),
        9,
        &["--focus", "x"],
        &[],
    );
    let (code, stderr) = focused.wait();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--focus cannot be used with --shard 1/2"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("focused").exists(),
        "a refused shard made its directory"
    );
    assert!(first.still_running(), "a refused process ended shard 0");

    let late = spawn(dir.path(), 1, 2, &redis.url(), 0, &[]);
    wait_all(vec![first, late]);
    let expected = reachable(&graph);
    crate::util::assert_fetched_once(&web, &expected);
    // The directory keeps its K/N: resuming shard 1's with 1/3 is refused.
    let again = spawn(dir.path(), 1, 3, &redis.url(), 1, &[]);
    let (code, stderr) = again.wait();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("holds shard 1/2"), "{stderr}");
}

#[test]
fn a_receiver_killed_between_offering_and_acknowledging_gets_the_batches_again() {
    const HOSTS: usize = 16;
    const JOBS: usize = 4;
    let (graph, web) = small_web(HOSTS, 20, 9);
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let other = spawn(dir.path(), 0, 2, &redis.url(), 0, &[]);
    // Shard 1 kills itself after offering its 3rd read to its DUE, before acknowledging it.
    let crash = [("CRAWL_FAILPOINT", "shard-received:3")];
    let killed = spawn_in(dir.path(), "shard-1", 1, 2, &redis.url(), 0, &[], &crash);
    let (code, stderr) = killed.wait();
    assert_eq!(code, None, "not killed at the crash point: {stderr}");
    // Its stream holds batches read and never acknowledged.
    let namespace = namespace(&web, HOSTS);
    let pending = redis
        .command(&["XPENDING", &format!("{namespace}:r1:stream:1"), "crawl"])
        .unwrap();
    let count = pending
        .lines()
        .next()
        .and_then(|l| l.trim().strip_prefix(':'));
    let count: u64 = count.and_then(|n| n.parse().ok()).expect(&pending);
    assert!(count > 0, "nothing pending: {pending:?}");
    let before = crate::util::page_requests(&web).len();
    let again = spawn(dir.path(), 1, 2, &redis.url(), 1, &[]);
    wait_all(vec![other, again]);
    let requested = crate::util::page_requests(&web);
    let unique: BTreeSet<(usize, usize)> = requested.iter().copied().collect();
    let expected = reachable(&graph);
    crate::util::assert_same_set(
        "pages fetched",
        &expected,
        &unique.into_iter().collect::<Vec<_>>(),
    );
    // The batches came again and their URLs were already in the DUE: refetched pages are only
    // those in flight at the kill (the bound of `resume.rs`).
    let extra = requested.len() - expected.len();
    assert!(
        extra <= 6 * JOBS + 1,
        "{extra} pages fetched twice ({before} before the restart)"
    );
    let summary = read_summary(&dir.path().join("shard-1"));
    assert!(
        summary["shard"]["received"].as_u64().unwrap() > 0,
        "{summary}"
    );
}

#[test]
fn a_find_by_one_shard_stops_every_shard() {
    const HOSTS: usize = 12;
    let graph = small_graph(HOSTS, 80, 31);
    // The text on host 0's root, a seed and so its first page: how soon it is found does not
    // depend on where one link falls in host 0's queue (one link deep, the shards fetched 42 to
    // 698 pages in all before they stopped, from run to run; here 21 to 112). Latency, so that
    // the whole web takes far longer than the find and the stop mark's round.
    let depths = graph.bfs(&graph.roots(), &|_, _| true, None);
    let (&(_, planted), _) = depths
        .iter()
        .filter(|&(&(h, _), &d)| h == 0 && d == 0)
        .min()
        .unwrap();
    let line = "<p>the answer is Xylophone42</p>";
    let target = Graph::path(planted);
    let web = TestWeb::start_with(HOSTS, |origins| {
        (0..HOSTS)
            .map(|h| {
                let pages = graph.handler(h, origins, None);
                let target = target.clone();
                testweb::HostSpec {
                    handler: std::sync::Arc::new(move |req: &testweb::Request| {
                        let response = pages(req);
                        if h != 0 || req.target != target {
                            return response;
                        }
                        let testweb::Body::Bytes(body) = response.body else {
                            unreachable!("generated pages are bytes")
                        };
                        let html = String::from_utf8(body).unwrap();
                        testweb::Response::html(
                            html.replacen("<body>", &format!("<body>\n{line}\n"), 1)
                                .into_bytes(),
                        )
                    }),
                    latency: Duration::from_millis(40),
                }
            })
            .collect()
    })
    .unwrap();
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let find = ["--find", "Xylophone42", "--max-depth", "50"];
    let shards: Vec<ShardRun> = (0..3)
        .map(|k| spawn(dir.path(), k, 3, &redis.url(), 0, &find))
        .collect();
    let logs: Vec<PathBuf> = shards.iter().map(|s| s.log.clone()).collect();
    let stderrs: Vec<String> = shards
        .into_iter()
        .map(|s| {
            let (code, stderr) = s.wait();
            assert_eq!(code, Some(0), "{stderr}");
            stderr
        })
        .collect();
    // One shard found it and printed it; the others printed nothing on stdout.
    let url = web.url(0, &target);
    let stdouts: Vec<String> = logs
        .iter()
        .map(|log| std::fs::read_to_string(log).unwrap())
        .collect();
    let finders: Vec<usize> = (0..3).filter(|&k| !stdouts[k].is_empty()).collect();
    assert_eq!(finders.len(), 1, "{stdouts:?}");
    let finder = finders[0];
    assert!(
        stdouts[finder].starts_with(&format!("{url}\t")),
        "{stdouts:?}"
    );
    let by = format!("shard {finder}/3 at {url}");
    let mut pages = 0;
    for (k, stderr) in stderrs.iter().enumerate() {
        let summary = read_summary(&dir.path().join(format!("shard-{k}")));
        assert_eq!(summary["ending"], "found", "shard {k}: {summary}");
        assert_eq!(summary["shard"]["found_by"], by.as_str(), "{summary}");
        pages += summary["pages"].as_u64().unwrap();
        if k != finder {
            assert!(
                stderr.contains(&format!("\"Xylophone42\" found by {by}")),
                "{stderr}"
            );
        }
    }
    // Every shard stopped early: together they fetched a part of the web (54-102 of 960 pages
    // at 15 ms a page on a quiet machine, 698 in a loaded CI run; hence 40 ms and a half). A
    // shard that never read the stop mark would not end at all: the finder no longer reads
    // its stream, so the sums of published and acknowledged batches never meet.
    let whole = reachable(&graph).len();
    assert_eq!(
        pages as usize,
        crate::util::page_requests(&web).len(),
        "summaries and server disagree"
    );
    assert!(pages * 2 < whole as u64, "{pages} of {whole} pages fetched");
}

/// Runs `crawl shards --exchange URL --seeds DIR/seeds.txt --count N --status`.
fn status(dir: &Path, exchange: &str, count: u32) -> (i32, String, String) {
    let args = [
        "shards",
        "--exchange",
        exchange,
        "--seeds",
        dir.join("seeds.txt").to_str().unwrap(),
        "--count",
        &count.to_string(),
        "--status",
    ]
    .map(String::from);
    crate::util::run_binary(&args, None, dir)
}

#[test]
fn status_only_reads_the_broker_and_shows_the_run() {
    let (_, web) = small_web(4, 5, 3);
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, 4);
    let dbsize = || redis.command(&["DBSIZE"]).unwrap();
    assert_eq!(dbsize().trim(), ":0");
    let (code, stdout, stderr) = status(dir.path(), &redis.url(), 2);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("total\tnot started\t"), "{stdout}");
    assert_eq!(dbsize().trim(), ":0", "status wrote to the broker");

    // Once the crawl has run, a status with another N is refused, still writing nothing.
    wait_all(
        (0..2)
            .map(|k| spawn(dir.path(), k, 2, &redis.url(), 0, &[]))
            .collect(),
    );
    let before = dbsize();
    let (code, _, stderr) = status(dir.path(), &redis.url(), 3);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("runs with 2 shards, not 3"), "{stderr}");
    assert_eq!(dbsize(), before);
    let (code, stdout, stderr) = status(dir.path(), &redis.url(), 2);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("run\t1\n"), "{stdout}");
    assert!(stdout.contains("total\tended\t"), "{stdout}");
}

/// Polls (10 s at most) until every thread of process `pid` is stopped (state `T`).
fn until_stopped(pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let states = || -> Vec<u8> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
        tasks
            .flatten()
            .filter_map(|task| {
                let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
                // The state follows the command name's closing parenthesis.
                stat.rsplit_once(") ").map(|(_, rest)| rest.as_bytes()[0])
            })
            .collect()
    };
    loop {
        let states = states();
        // A process that has exited (a zombie its parent has not reaped) never stops.
        assert!(
            !states.iter().any(|s| matches!(s, b'Z' | b'X')),
            "process {pid} exited before it was stopped"
        );
        if states.iter().all(|s| matches!(s, b'T' | b't')) {
            return;
        }
        assert!(Instant::now() < deadline, "process {pid} never stopped");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn redis_killed_and_restarted_mid_crawl_loses_nothing() {
    // Hosts go to shards by a hash of `host:port`, and the ports are the system's: with 32
    // hosts, a shard owning fewer than the two the wait below needs (40 lines, 32 a host) has
    // odds of 1 in 65 million; with 16 hosts they were 1 in 2,000.
    const HOSTS: usize = 32;
    let graph = small_graph(HOSTS, 30, 41);
    // A little latency, so that the crawl is under way when the broker dies.
    let web = graph.start(Duration::from_millis(3), &|_| None).unwrap();
    let mut redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let mut shards: Vec<ShardRun> = (0..2)
        .map(|k| spawn(dir.path(), k, 2, &redis.url(), 0, &[]))
        .collect();
    // Once both shards have logged 40 pages (polled, with a deadline): SIGKILL redis-server
    // with batches in a stream, and start it again on the same port and directory.
    let deadline = Instant::now() + CRAWL_DEADLINE;
    while shards.iter_mut().all(|s| s.still_running())
        && shards.iter().any(|s| s.lines() < 40)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(2));
    }
    for (k, shard) in shards.iter_mut().enumerate() {
        assert!(
            shard.still_running() && shard.lines() >= 40,
            "shard {k} ended or stalled at {} lines before the broker was killed: {}",
            shard.lines(),
            std::fs::read_to_string(&shard.stderr).unwrap()
        );
    }
    // Batches the shards had published: URLs had crossed through the broker before the kill.
    let batches: u64 = (0..2)
        .map(|k| {
            let report = format!("{}:r1:report:{k}", namespace(&web, HOSTS));
            let reply = redis.command(&["HGET", &report, "published"]).unwrap();
            reply.trim().parse::<u64>().unwrap_or(0)
        })
        .sum();
    // Shard 1 frozen (SIGSTOP), so that shard 0's batches wait in its stream when Redis dies.
    let frozen = shards[1].child.id() as i32;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(frozen, libc::SIGSTOP) };
    // `kill` returns before every thread has stopped: one may still send an acknowledgement
    // that deletes batches from the stream. Once all are stopped, nothing leaves the stream.
    until_stopped(frozen);
    let stream = format!("{}:r1:stream:1", namespace(&web, HOSTS));
    let waiting = || {
        let reply = redis.command(&["XLEN", &stream]).unwrap();
        reply.trim().trim_start_matches(':').parse::<u64>().unwrap()
    };
    // Two readings in a row: a command the frozen shard sent just before it stopped is
    // answered by Redis before our second one.
    let deadline = Instant::now() + CRAWL_DEADLINE;
    let mut in_stream = 0;
    while (in_stream < 2 || waiting() < 2) && Instant::now() < deadline {
        in_stream = waiting();
        std::thread::sleep(Duration::from_millis(2));
    }
    let in_stream = in_stream.min(waiting());
    redis.kill();
    let fetched = crate::util::page_requests(&web).len();
    let expected = reachable(&graph);
    assert!(
        shards[0].still_running(),
        "shard 0 ended before the broker was killed"
    );
    assert!(batches > 0, "no URL had crossed before the kill");
    assert!(
        fetched < expected.len(),
        "{fetched} of {} pages",
        expected.len()
    );
    assert!(
        in_stream >= 2,
        "{in_stream} batches in shard 1's stream at the kill"
    );
    redis.restart().unwrap();
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(frozen, libc::SIGCONT) };
    wait_all(shards);
    crate::util::assert_fetched_once(&web, &expected);
    // Every URL one shard sent reached the other (at least once: a publish retried across the
    // restart may come twice), those in the stream at the kill included. Pages are linked from
    // many others, so a lost batch need not show in the pages fetched; it shows here.
    let summaries: Vec<_> = (0..2)
        .map(|k| read_summary(&dir.path().join(format!("shard-{k}"))))
        .collect();
    for (k, summary) in summaries.iter().enumerate() {
        assert_eq!(summary["ending"], "complete", "{summary}");
        let sent = summary["shard"]["sent"].as_u64().unwrap();
        let received = summaries[1 - k]["shard"]["received"].as_u64().unwrap();
        assert!(
            received >= sent,
            "shard {k} sent {sent} URLs, the other received {received}"
        );
    }
}

/// The broker namespace of the crawl of every host's root (`shard::namespace`).
pub(crate) fn namespace(web: &TestWeb, hosts: usize) -> String {
    let mut seeds: Vec<String> = (0..hosts).map(|h| web.url(h, "/")).collect();
    seeds.sort();
    format!(
        "crawl:{:016x}",
        crawl::checksum(seeds.join("\n").as_bytes())
    )
}

/// `graph` served with validators: every page's `ETag` names its body (a 304 answers it in
/// `If-None-Match`), except pages with `(host + page) % 5 == 1`, which have none (a recrawl
/// compares their payload digest). From `version` 1 on, pages with `(host + page) % 3 == 0`
/// say so in their text: they have changed. Each answer waits `latency` first.
pub(crate) fn validating_web(
    graph: &Graph,
    version: Arc<AtomicUsize>,
    latency: Duration,
) -> TestWeb {
    let hosts = graph.spec().hosts;
    TestWeb::start_with_engine(hosts, testweb::Engine::Reactor, |origins| {
        let origins: Arc<[String]> = origins.into();
        (0..hosts)
            .map(|h| {
                let page = graph.handler_shared(h, origins.clone(), None);
                let version = Arc::clone(&version);
                testweb::HostSpec::new(move |req: &testweb::Request| {
                    let mut answer = page(req);
                    let Some(p) = Graph::page_of_path(&req.target) else {
                        return answer;
                    };
                    let testweb::Body::Bytes(body) = &mut answer.body else {
                        return answer;
                    };
                    let v = version.load(Ordering::SeqCst);
                    if answer.status == 200 && v > 0 && (h + p) % 3 == 0 {
                        body.extend_from_slice(format!("<!-- version {v} -->\n").as_bytes());
                    }
                    if answer.status != 200 || (h + p) % 5 == 1 {
                        return answer;
                    }
                    let etag = format!("\"{:016x}\"", crawl::checksum(body));
                    if req.header("if-none-match") == Some(etag.as_str()) {
                        return testweb::Response::new(304, "text/html", "")
                            .with_header("ETag", etag);
                    }
                    answer.with_header("ETag", etag)
                })
                .with_latency(latency)
            })
            .collect()
    })
    .unwrap()
}

/// One run of the four shards (`run` names their logs): every shard exits 0, each page of
/// `expected` is requested once within the run; returns each page URL's note, over all shards.
fn sharded_run(
    dir: &Path,
    web: &TestWeb,
    redis: &RedisServer,
    run: usize,
    expected: &[(usize, usize)],
) -> BTreeMap<String, String> {
    let start = web.request_count();
    let shards: Vec<ShardRun> = (0..4)
        .map(|k| spawn(dir, k, 4, &redis.url(), run, &[]))
        .collect();
    let logs: Vec<PathBuf> = shards.iter().map(|s| s.log.clone()).collect();
    wait_all(shards);
    assert_requested_once(web, start, expected, &format!("sharded run {run}"));
    let mut notes = BTreeMap::new();
    for log in logs {
        for row in parse_log(&std::fs::read_to_string(log).unwrap()) {
            if row.is_page() {
                assert!(
                    notes.insert(row.url.clone(), row.note).is_none(),
                    "{}",
                    row.url
                );
            }
        }
    }
    notes
}

/// The pages requested since request `start`: `expected`, each once (0 lost, 0 twice).
fn assert_requested_once(web: &TestWeb, start: usize, expected: &[(usize, usize)], what: &str) {
    let requested: Vec<(usize, usize)> = web.log()[start..]
        .iter()
        .filter(|e| crate::util::is_page_target(&e.target))
        .map(|e| (e.host, Graph::page_of_path(&e.target).unwrap()))
        .collect();
    let twice: Vec<_> = counts(requested.clone())
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    assert!(twice.is_empty(), "{what}: pages fetched twice: {twice:?}");
    crate::util::assert_same_set(what, expected, &requested);
}

/// The URLs of `expected` that [`validating_web`] changed at version 1, after checking that
/// `notes` (each page's note in a recrawl after the change) says `changed` of each of them and
/// `unchanged` of every other page.
pub(crate) fn assert_changes_captured(
    web: &TestWeb,
    expected: &[(usize, usize)],
    notes: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let changed: BTreeSet<String> = expected
        .iter()
        .filter(|(h, p)| (h + p) % 3 == 0)
        .map(|(h, p)| web.url(*h, &Graph::path(*p)))
        .collect();
    for (url, note) in notes {
        let want = if changed.contains(url) {
            "changed"
        } else {
            "unchanged"
        };
        assert_eq!(note, want, "{url}");
    }
    changed
}

/// One run of a single process on the same web, in `single/out`: each page's note.
pub(crate) fn single_run(
    single: &Path,
    web: &TestWeb,
    expected: &[(usize, usize)],
    run: usize,
) -> BTreeMap<String, String> {
    let start = web.request_count();
    let (code, stdout, stderr) =
        crate::util::crawl_dir(single, &["-j", "8", "--delay-factor", "0"], &[], None);
    assert_eq!(code, Some(0), "{stderr}");
    assert_requested_once(web, start, expected, &format!("single run {run}"));
    parse_log(&stdout)
        .into_iter()
        .filter(|r| r.is_page())
        .map(|r| (r.url, r.note))
        .collect()
}

#[test]
fn a_sharded_crawl_is_recrawled_twice_like_one_process_and_each_run_is_kept_apart() {
    const HOSTS: usize = 12;
    let graph = small_graph(HOSTS, 20, 46);
    let version = Arc::new(AtomicUsize::new(0));
    let web = validating_web(&graph, Arc::clone(&version), Duration::ZERO);
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let single = tempfile::tempdir().unwrap();
    write_seeds(single.path(), &web, HOSTS);
    let expected = reachable(&graph);
    let summaries = |run: u64| -> Vec<serde_json::Value> {
        (0..4)
            .map(|k| {
                let summary = read_summary(&dir.path().join(format!("shard-{k}")));
                assert_eq!(summary["ending"], "complete", "{summary}");
                assert_eq!(summary["shard"]["run"], run, "{summary}");
                summary
            })
            .collect()
    };
    let total = |summaries: &[serde_json::Value], key: &str| -> u64 {
        summaries
            .iter()
            .map(|s| s["recrawl"][key].as_u64().unwrap())
            .sum()
    };

    // Run 1: the first crawl; then the same web by one process.
    let first = sharded_run(dir.path(), &web, &redis, 10, &expected);
    assert_eq!(first, single_run(single.path(), &web, &expected, 1));
    assert_eq!(
        counts(first.values()),
        BTreeMap::from([(&"-".to_owned(), expected.len())])
    );
    summaries(1);

    // Run 2: nothing changed, so every page is a revisit (a 304, or the same payload digest).
    let start = web.request_count();
    let second = sharded_run(dir.path(), &web, &redis, 11, &expected);
    let not_modified = web.log()[start..]
        .iter()
        .filter(|e| e.status == 304)
        .count();
    assert_eq!(second, single_run(single.path(), &web, &expected, 2));
    assert_eq!(
        counts(second.values()),
        BTreeMap::from([(&"unchanged".to_owned(), expected.len())])
    );
    let s = summaries(2);
    assert_eq!(total(&s, "unchanged"), expected.len() as u64);
    assert_eq!(total(&s, "new") + total(&s, "changed"), 0);
    let with_etag = expected.iter().filter(|(h, p)| (h + p) % 5 != 1).count();
    assert_eq!(not_modified, with_etag, "conditional requests");
    let (code, stdout, stderr) = status(dir.path(), &redis.url(), 4);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("run\t2\n"), "{stdout}");
    let pages = format!("total\tended\tpages {}\tin transit 0\n", expected.len());
    assert!(stdout.contains(&pages), "run 2's reports alone: {stdout}");

    // Run 3: a third of the pages changed; the shards capture each change, as one process does.
    version.store(1, Ordering::SeqCst);
    let third = sharded_run(dir.path(), &web, &redis, 12, &expected);
    assert_eq!(third, single_run(single.path(), &web, &expected, 3));
    let changed = assert_changes_captured(&web, &expected, &third);
    let s = summaries(3);
    assert_eq!(total(&s, "changed"), changed.len() as u64);
    // Each unchanged page is a revisit record in its shard's archive. A shard may own none of
    // the 12 hosts (hosts go by a hash of `host:port`, the ports the system's: odds (3/4)^12,
    // 1 in 32) and then has no WARC file.
    let revisits: usize = (0..4)
        .map(|k| {
            let out = dir.path().join(format!("shard-{k}"));
            let has_warc = std::fs::read_dir(out.join("warc")).is_ok_and(|files| {
                files
                    .flatten()
                    .any(|f| f.file_name().to_string_lossy().ends_with(".warc.zst"))
            });
            if !has_warc {
                return 0;
            }
            crate::util::warc_text(&out, ".warc.zst")
                .matches("WARC-Type: revisit")
                .count()
        })
        .sum();
    assert_eq!(revisits, 2 * expected.len() - changed.len(), "runs 2 and 3");

    // The finished runs' keys expire in the broker; the current run's stay.
    let ns = namespace(&web, HOSTS);
    for run in [1, 2] {
        let ttl = redis
            .command(&["TTL", &format!("{ns}:r{run}:report:0")])
            .unwrap();
        assert!(
            ttl.trim_start_matches(':').parse::<i64>().unwrap() > 0,
            "run {run}: {ttl}"
        );
    }
    assert_eq!(
        redis
            .command(&["TTL", &format!("{ns}:r3:report:0")])
            .unwrap(),
        ":-1"
    );

    // A shard of a finished run's directory, resumed for that run, is refused naming both.
    let copy = dir.path().join("stale");
    std::fs::create_dir_all(copy.join("shard")).unwrap();
    std::fs::copy(dir.path().join("shard-0/shard/id"), copy.join("shard/id")).unwrap();
    std::fs::write(copy.join("shard/run"), "2\n").unwrap();
    let (code, stderr) = spawn_in(dir.path(), "stale", 0, 4, &redis.url(), 13, &[], &[]).wait();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("run 2") && stderr.contains("at run 3"),
        "{stderr}"
    );

    // Run 4 with --recrawl-budget 8: each shard asks for at most 8 of its previous pages and
    // carries the others over (deferred); nothing is asked for twice.
    let start = web.request_count();
    wait_all(
        (0..4)
            .map(|k| {
                spawn(
                    dir.path(),
                    k,
                    4,
                    &redis.url(),
                    14,
                    &["--recrawl-budget", "8"],
                )
            })
            .collect(),
    );
    let asked = web.log()[start..]
        .iter()
        .filter(|e| crate::util::is_page_target(&e.target))
        .map(|e| (e.host, e.target.clone()))
        .collect::<Vec<_>>();
    assert!(asked.len() <= 4 * 8, "{} pages asked for", asked.len());
    assert_eq!(counts(asked.iter()).values().max(), Some(&1), "{asked:?}");
    let s = summaries(4);
    for summary in &s {
        let recrawl = &summary["recrawl"];
        let asked = ["changed", "unchanged", "new", "gone"].map(|k| recrawl[k].as_u64().unwrap());
        assert!(asked.iter().sum::<u64>() <= 8, "{summary}");
    }
    assert_eq!(
        total(&s, "deferred") as usize + asked.len(),
        expected.len(),
        "every page asked for or carried over"
    );

    // --restart: every shard forgets its previous fetches; run 5 fetches each page anew.
    let start = web.request_count();
    let shards: Vec<ShardRun> = (0..4)
        .map(|k| spawn(dir.path(), k, 4, &redis.url(), 15, &["--restart"]))
        .collect();
    wait_all(shards);
    assert_requested_once(&web, start, &expected, "run 5, restarted");
    assert!(web.log()[start..].iter().all(|e| e.status != 304));
    for summary in summaries(5) {
        assert!(summary["recrawl"].is_null(), "{summary}");
    }
}

/// Issue 46, item 3: `crawl wacz` of the four shards' directories writes one WACZ that
/// `wacz validate` accepts: every shard's WARC files (named after their shard) and one sorted
/// index of every capture; pywb, serving its files, replays a page of every shard.
#[test]
fn one_wacz_of_every_shard_validates_and_pywb_replays_a_page_of_each() {
    use crate::archive::{get, parse_line, pywb_serving};
    use testweb::warc_readers::{PIP_HINT, run};
    // 32 hosts: every shard owns some (odds 1 in 2,500 otherwise).
    const HOSTS: usize = 32;
    let (_graph, web) = small_web(HOSTS, 4, 3);
    let redis = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let shards: Vec<ShardRun> = (0..4)
        .map(|k| spawn(dir.path(), k, 4, &redis.url(), 0, &[]))
        .collect();
    let logs: Vec<PathBuf> = shards.iter().map(|s| s.log.clone()).collect();
    wait_all(shards);

    let file = dir.path().join("all.wacz");
    let mut args = vec!["wacz".to_owned()];
    args.extend((0..4).map(|k| format!("shard-{k}")));
    args.extend(["-o".into(), file.to_string_lossy().into_owned()]);
    let (code, _, stderr) = crate::util::run_binary(&args, None, dir.path());
    assert_eq!(code, 0, "{stderr}");
    let (ok, report) = run(
        Command::new("wacz").args(["validate", "-f"]).arg(&file),
        None,
    );
    eprintln!("wacz validate -f all.wacz:{report}");
    assert!(
        ok && report.contains("Validation succeeded"),
        "{report}\n{PIP_HINT}"
    );

    // Every shard's WARC files, under names of their shard's; one sorted index of them all.
    let unpacked = dir.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut warcs = Vec::new();
    let mut index = String::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let name = entry.name().unwrap().into_owned();
        if let Some(warc) = name.strip_prefix("archive/") {
            let path = unpacked.join(warc);
            std::io::copy(&mut entry, &mut std::fs::File::create(&path).unwrap()).unwrap();
            warcs.push(path);
        } else if name == "indexes/index.cdx" {
            std::io::Read::read_to_string(&mut entry, &mut index).unwrap();
        }
    }
    let names: Vec<String> = warcs
        .iter()
        .map(|w| w.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for k in 0..4 {
        let own = format!("shard-{k}-crawl-");
        assert!(names.iter().any(|n| n.starts_with(&own)), "{names:?}");
        let expected = crate::util::warc_files(&dir.path().join(format!("shard-{k}")), ".warc.zst");
        let packed = names.iter().filter(|n| n.starts_with(&own)).count();
        assert_eq!(packed, expected.len(), "shard {k}'s files: {names:?}");
    }
    let lines: Vec<&str> = index.lines().collect();
    assert!(
        lines.windows(2).all(|w| w[0] <= w[1]),
        "the index is sorted"
    );
    let captures: usize = (0..4)
        .map(|k| {
            let out = dir.path().join(format!("shard-{k}"));
            crate::util::warc_text(&out, ".warc.zst")
                .matches("WARC-Type: response")
                .count()
        })
        .sum();
    assert_eq!(lines.len(), captures, "every shard's captures");
    for (_, _, fields) in lines.iter().map(|l| parse_line(l)) {
        assert!(
            names.contains(&fields["filename"]),
            "{}",
            fields["filename"]
        );
    }

    // pywb replays a page of every shard.
    let (_server, port) = pywb_serving(&dir.path().join("pywb"), &warcs, &index);
    for (k, log) in logs.iter().enumerate() {
        let rows = parse_log(&std::fs::read_to_string(log).unwrap());
        let row = rows.iter().find(|r| r.status == 200).expect("a page");
        let (_, ts, _) = lines
            .iter()
            .map(|l| parse_line(l))
            .find(|(_, _, f)| f["url"] == row.url)
            .unwrap_or_else(|| panic!("{} not in the index", row.url));
        let (status, _, body) = get(port, &format!("/crawl/{ts}mp_/{}", row.url)).unwrap();
        let page = String::from_utf8_lossy(&body);
        assert_eq!(status, 200, "shard {k}: {}: {page}", row.url);
        assert!(page.contains("<title>host "), "shard {k}: {page}");
    }
}
