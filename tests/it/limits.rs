//! Run limits and rates: `--max-time` and `--max-bytes` stop a crawl resumably (exit status
//! 4, and the same command continues it with every page once), `--rate` spaces a host's
//! requests, `--max-rate` all requests, and `--host-rules` gives one host more connections
//! (or another budget) than the polite default. Gaps and overlaps are read from the test
//! server's own request log; speed is never asserted.

use crate::util::{assert_fetched_once, crawl, crawl_dir, parse_log, read_summary};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use testweb::{Graph, LogEntry, TestWeb};

/// Seeds of every host's first page.
fn seeds(web: &TestWeb) -> String {
    (0..web.hosts()).map(|h| web.url(h, "/") + "\n").collect()
}

/// Every page of `graph` a crawl from all its hosts' first pages reaches.
fn every_page(graph: &Graph) -> Vec<(usize, usize)> {
    graph
        .bfs(&graph.roots(), &|_, _| true, None)
        .into_keys()
        .collect()
}

/// Runs `crawl DIR/seeds.txt --out DIR/out ARGS` in `dir` until it exits 0 (at most `runs`
/// times): every run before the last must have stopped at `ending` with exit status 4,
/// leaving the crawl unmarked complete. Returns the URL logs' page rows, all runs together.
fn run_until_done(dir: &Path, args: &[&str], ending: &str, runs: usize) -> (usize, Vec<String>) {
    let mut urls = Vec::new();
    for run in 1..=runs {
        let (code, stdout, stderr) = crawl_dir(dir, args, &[], None);
        urls.extend(
            parse_log(&stdout)
                .into_iter()
                .filter(|r| r.is_page())
                .map(|r| r.url),
        );
        let summary = read_summary(&dir.join("out"));
        if code == Some(0) {
            assert_eq!(summary["ending"], "complete", "run {run}: {summary}");
            return (run, urls);
        }
        assert_eq!(code, Some(4), "run {run}: stderr: {stderr}");
        assert_eq!(summary["ending"], ending, "run {run}: {summary}");
        assert!(
            !dir.join("out/complete").exists(),
            "run {run} marked complete"
        );
    }
    panic!("not done after {runs} runs");
}

/// No URL twice in `urls`.
fn assert_distinct(urls: &[String]) {
    let mut counts = BTreeMap::new();
    for url in urls {
        *counts.entry(url).or_insert(0) += 1;
    }
    let twice: Vec<_> = counts.into_iter().filter(|(_, n)| *n > 1).collect();
    assert!(
        twice.is_empty(),
        "URLs logged by more than one run: {twice:?}"
    );
}

#[test]
fn max_time_stops_resumably_and_the_same_command_finishes_with_every_page_once() {
    // 3 hosts of 40 pages at 50 ms a response, one request at a time each: about 2 s.
    let graph = crate::util::small_graph(3, 40, 30);
    let web = graph.start(Duration::from_millis(50), &|_| None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), seeds(&web)).unwrap();
    let args = ["-j", "3", "--delay-factor", "0", "--max-time", "0.7s"];
    let (runs, urls) = run_until_done(dir.path(), &args, "time-limit", 20);
    assert!(runs >= 2, "the crawl never reached --max-time");
    let expected = every_page(&graph);
    assert_distinct(&urls);
    assert_eq!(
        urls.len(),
        expected.len(),
        "pages logged, all runs together"
    );
    assert_fetched_once(&web, &expected);
}

#[test]
fn max_bytes_stops_resumably_and_a_run_without_it_finishes() {
    let graph = crate::util::small_graph(1, 40, 31);
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), seeds(&web)).unwrap();
    let limit = 4096;
    let stopped = ["-j", "1", "--delay-factor", "0", "--max-bytes", "4K"];
    let (code, first, stderr) = crawl_dir(dir.path(), &stopped, &[], None);
    assert_eq!(code, Some(4), "stderr: {stderr}");
    let summary = read_summary(&dir.path().join("out"));
    assert_eq!(summary["ending"], "byte-limit", "{summary}");
    let bytes = summary["bytes"].as_u64().unwrap();
    let pages = summary["pages"].as_u64().unwrap();
    assert!(bytes >= limit, "{summary}");
    assert!(pages < 40, "stopped before the end: {summary}");
    let (code, last, stderr) =
        crawl_dir(dir.path(), &["-j", "1", "--delay-factor", "0"], &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let urls: Vec<String> = [first, last]
        .iter()
        .flat_map(|out| parse_log(out))
        .filter(|r| r.is_page())
        .map(|r| r.url)
        .collect();
    assert_distinct(&urls);
    assert_fetched_once(&web, &every_page(&graph));
}

#[test]
fn a_run_limit_reached_by_the_last_page_is_a_complete_crawl() {
    let (_graph, web) = crate::util::small_web(1, 1, 36);
    let args = ["--no-sitemaps", "--delay-factor", "0", "--max-bytes", "1"];
    let run = crawl(&seeds(&web), &args);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.summary()["ending"], "complete");
    assert!(run.out.join("complete").exists());
}

/// The server's requests per host, in the order they started.
fn by_host(web: &TestWeb) -> BTreeMap<usize, Vec<LogEntry>> {
    crate::util::requests_by_host(web)
}

#[test]
fn rate_keeps_each_hosts_requests_apart() {
    let graph = crate::util::small_graph(2, 5, 32);
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    let run = crawl(&seeds(&web), &["--delay-factor", "0", "--rate", "2"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let gap = Duration::from_millis(500);
    let tolerance = Duration::from_millis(5);
    for (host, requests) in by_host(&web) {
        assert!(
            requests.len() >= 5,
            "host {host}: {} requests",
            requests.len()
        );
        for pair in requests.windows(2) {
            let between = pair[1].start - pair[0].start;
            assert!(
                between + tolerance >= gap,
                "host {host}: {} then {} only {between:?} apart",
                pair[0].target,
                pair[1].target
            );
        }
    }
}

#[test]
fn max_rate_bounds_requests_per_second_across_hosts() {
    let graph = crate::util::small_graph(6, 3, 33);
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    let run = crawl(
        &seeds(&web),
        &["-j", "8", "--delay-factor", "0", "--max-rate", "10"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let mut starts: Vec<_> = web.log().iter().map(|e| e.start).collect();
    starts.sort();
    assert!(starts.len() >= 20, "{} requests", starts.len());
    for (i, &from) in starts.iter().enumerate() {
        let within = starts[i..]
            .iter()
            .take_while(|&&t| t - from < Duration::from_secs(1))
            .count();
        assert!(within <= 11, "{within} requests within 1 s of request {i}");
    }
}

/// Whether two of `requests` (sorted by start) were being served at once.
fn overlapping(requests: &[LogEntry]) -> bool {
    requests.windows(2).any(|pair| pair[1].start < pair[0].end)
}

#[test]
fn host_rules_give_one_host_eight_connections_and_another_a_budget() {
    let graph = crate::util::small_graph(3, 30, 34);
    let web = graph.start(Duration::from_millis(100), &|_| None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.txt");
    let host = |h: usize| web.origin(h)["http://".len()..].to_owned();
    let text = format!(
        "# our own server\n{}  connections=8 rate=none\n\n{} pages=5 # a budget\n",
        host(0),
        host(1)
    );
    std::fs::write(&rules, text).unwrap();
    let run = crawl(
        &seeds(&web),
        &[
            "-j",
            "16",
            "--delay-factor",
            "1",
            "--host-rules",
            rules.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = by_host(&web);
    assert!(
        overlapping(&requests[&0]),
        "host 0 never had two requests at once"
    );
    for h in [1, 2] {
        assert!(
            !overlapping(&requests[&h]),
            "host {h} had two requests at once"
        );
    }
    let pages_of_1 = requests[&1]
        .iter()
        .filter(|e| crate::util::is_page_target(&e.target))
        .count();
    assert_eq!(pages_of_1, 5, "host 1's budget");
    assert!(run.rows.iter().any(|r| r.note == "host-budget"));
}

#[test]
fn a_malformed_host_rules_line_is_bad_input_naming_file_and_line() {
    let (_graph, web) = crate::util::small_web(1, 2, 35);
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.txt");
    std::fs::write(
        &rules,
        "# fine\nexample.org rate=2\nexample.net rate=fast\n",
    )
    .unwrap();
    let run = crawl(&seeds(&web), &["--host-rules", rules.to_str().unwrap()]);
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    let at = format!("{}:3: rate=fast", rules.display());
    assert!(run.stderr.contains(&at), "{}", run.stderr);
    assert_eq!(web.request_count(), 0, "nothing crawled");
}
