//! Helpers for the integration tests: run the real `crawl` binary on seeds and read what it
//! printed, with failures that show expected against actual.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long any one crawl in a test may take before the test fails (it is killed, not waited for).
pub const CRAWL_DEADLINE: Duration = Duration::from_secs(120);

/// One line of the URL log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRow {
    pub status: u16,
    pub depth: u32,
    pub bytes: u64,
    pub millis: u64,
    pub content_type: String,
    pub url: String,
    pub note: String,
}

impl LogRow {
    /// A page's line: not a robots.txt or sitemap fetch (`sitemap`, `sitemap:capped`...).
    pub fn is_page(&self) -> bool {
        self.note != "robots" && !self.note.starts_with("sitemap")
    }
}

/// A request for a page, as the server saw it: not robots.txt, nor the `/sitemap.xml` a
/// crawl asks a seed's host for when its robots.txt names no sitemap (see `sitemaps.rs`).
pub fn is_page_target(target: &str) -> bool {
    target != "/robots.txt" && target != "/sitemap.xml"
}

/// A finished crawl: exit status, parsed stdout, stderr, and its state directory.
pub struct Outcome {
    pub code: i32,
    pub rows: Vec<LogRow>,
    pub stdout: String,
    pub stderr: String,
    pub out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Outcome {
    /// Rows for pages (robots.txt and sitemap fetches left out).
    pub fn pages(&self) -> Vec<&LogRow> {
        self.rows.iter().filter(|r| r.is_page()).collect()
    }

    /// `summary.json`, parsed.
    pub fn summary(&self) -> serde_json::Value {
        read_summary(&self.out)
    }
}

/// `DIR/summary.json`, parsed; a missing file or one that is not JSON fails the test.
pub fn read_summary(out: &Path) -> serde_json::Value {
    let path = out.join("summary.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON ({e}): {text}", path.display()))
}

/// A small test web of `hosts` hosts of `pages` pages each (3 children, 4 extra links of
/// which 30% cross hosts, 100 bytes of padding), started without latency.
pub fn small_web(hosts: usize, pages: usize, seed: u64) -> (testweb::Graph, testweb::TestWeb) {
    let graph = small_graph(hosts, pages, seed);
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    (graph, web)
}

/// `small_web`'s graph, to serve with latency or a handler of the test's own.
pub fn small_graph(hosts: usize, pages: usize, seed: u64) -> testweb::Graph {
    testweb::Graph::new(testweb::GraphSpec {
        hosts,
        pages_per_host: pages,
        children: 3,
        extra_links: 4,
        cross_host_permille: 300,
        page_padding: 100,
        seed,
    })
}

/// (host, page) of every page request the server saw (robots.txt and sitemaps left out).
pub fn page_requests(web: &testweb::TestWeb) -> Vec<(usize, usize)> {
    web.log()
        .iter()
        .filter(|e| is_page_target(&e.target))
        .map(|e| {
            (
                e.host,
                testweb::Graph::page_of_path(&e.target)
                    .unwrap_or_else(|| panic!("request for a non-page {:?}", e.target)),
            )
        })
        .collect()
}

/// The server was asked for exactly the pages `expected`, each once.
pub fn assert_fetched_once(web: &testweb::TestWeb, expected: &[(usize, usize)]) {
    let requested = page_requests(web);
    let twice: Vec<_> = counts(requested.clone())
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    assert!(twice.is_empty(), "pages fetched more than once: {twice:?}");
    assert_same_set("pages fetched", expected, &requested);
}

/// `read()` once it has not changed for `quiet`, polled every 10 ms for at most `limit`.
pub fn settled(read: impl Fn() -> usize, quiet: Duration, limit: Duration) -> usize {
    let deadline = Instant::now() + limit;
    let mut last = (read(), Instant::now());
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        let now = read();
        if now != last.0 {
            last = (now, Instant::now());
        } else if last.1.elapsed() > quiet {
            break;
        }
    }
    last.0
}

/// The server's requests per host, each host's in the order they started.
pub fn requests_by_host(web: &testweb::TestWeb) -> BTreeMap<usize, Vec<testweb::LogEntry>> {
    let mut by_host: BTreeMap<usize, Vec<testweb::LogEntry>> = BTreeMap::new();
    for entry in web.log() {
        by_host.entry(entry.host).or_default().push(entry);
    }
    for requests in by_host.values_mut() {
        requests.sort_by_key(|e| e.start);
    }
    by_host
}

/// Runs `crawl SEEDS --out DIR ARGS…` with `seeds` written to a file, in a fresh directory.
pub fn crawl(seeds: &str, args: &[&str]) -> Outcome {
    let mut outcome = crawl_unparsed(seeds, args);
    outcome.rows = parse_log(&outcome.stdout);
    outcome
}

/// Like [`crawl`], for a stdout that is not the tab-separated URL log (`rows` stays empty).
pub fn crawl_unparsed(seeds: &str, args: &[&str]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
    let (code, stdout, stderr) = crawl_dir(dir.path(), args, &[], None);
    Outcome {
        code: code.unwrap_or(-1),
        rows: Vec::new(),
        stdout,
        stderr,
        out: dir.path().join("out"),
        _dir: dir,
    }
}

/// Runs `crawl DIR/seeds.txt --out DIR/out ARGS…` in `dir` (the seeds file is the caller's),
/// with `env` and `kill_after` as in [`run_binary_with`]: the set-up of crawls that run twice
/// in one directory (resume, kill) or need an environment.
pub fn crawl_dir(
    dir: &Path,
    args: &[&str],
    env: &[(&str, String)],
    kill_after: Option<usize>,
) -> (Option<i32>, String, String) {
    let mut all = vec![
        dir.join("seeds.txt").to_string_lossy().into_owned(),
        "--out".into(),
        dir.join("out").to_string_lossy().into_owned(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    run_binary_with(&all, None, dir, env, kill_after)
}

/// The WARC files (names ending in `extension`) of a crawl, in name order (their CDXJ
/// indexes left out, `archive.rs` checks them); none may be left `.open` after a clean exit.
pub fn warc_files(out: &Path, extension: &str) -> Vec<PathBuf> {
    let dir = out.join("warc");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with(".cdxj"))
        .collect();
    files.sort();
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("crawl-") && name.ends_with(extension),
            "unexpected file {name} in {}",
            dir.display()
        );
    }
    assert!(!files.is_empty(), "no WARC files in {}", dir.display());
    files
}

/// The WARC files of a crawl (names ending in `extension`: `.warc.gz` or `.warc.zst`),
/// decompressed and joined in name order.
pub fn warc_text(out: &Path, extension: &str) -> String {
    let mut text = Vec::new();
    for path in warc_files(out, extension) {
        let file = std::fs::File::open(&path).unwrap();
        let bytes = match extension {
            ".warc.zst" => zstd::decode_all(file),
            _ => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(file), &mut bytes)
                    .map(|_| bytes)
            }
        };
        text.extend(bytes.unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// Runs the binary with `args` (and `stdin` if given), killing it at the deadline.
pub fn run_binary(args: &[String], stdin: Option<&[u8]>, cwd: &Path) -> (i32, String, String) {
    let (code, stdout, stderr) = run_binary_with(args, stdin, cwd, &[], None);
    (code.unwrap_or(-1), stdout, stderr)
}

/// `run_binary` with extra environment variables, and with `kill_after`, SIGKILLs the crawler
/// once its stdout (the URL log) has that many lines, if it gets that far. The exit code is
/// None when a signal ended the process.
pub fn run_binary_with(
    args: &[String],
    stdin: Option<&[u8]>,
    cwd: &Path,
    env: &[(&str, String)],
    kill_after: Option<usize>,
) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawl"))
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting crawl");
    if let Some(bytes) = stdin {
        // A child that exits on a usage error before reading its stdin closes the pipe: that
        // is its answer, not the test's failure.
        match child.stdin.take().unwrap().write_all(bytes) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("writing stdin: {e}"),
            _ => {}
        }
    }
    // Read both pipes on threads so a chatty child never blocks on a full pipe; stdout line by
    // line, counting, for `kill_after`.
    let lines = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&lines);
    let stdout_pipe = child.stdout.take().unwrap();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let mut reader = BufReader::new(stdout_pipe);
        while reader.read_line(&mut text).unwrap_or(0) > 0 {
            counted.fetch_add(1, Ordering::SeqCst);
        }
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr_pipe, &mut s).unwrap();
        s
    });
    let deadline = Instant::now() + CRAWL_DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if kill_after.is_some_and(|k| lines.load(Ordering::SeqCst) >= k) {
            child.kill().unwrap();
            break child.wait().unwrap();
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "crawl {args:?} did not finish within {CRAWL_DEADLINE:?}; stderr:\n{}",
                err_reader.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    (
        status.code(),
        out_reader.join().unwrap(),
        err_reader.join().unwrap(),
    )
}

/// Parses the URL log, failing on any line that is not seven tab-separated columns.
pub fn parse_log(stdout: &str) -> Vec<LogRow> {
    stdout
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 7, "URL log line without 7 columns: {line:?}");
            LogRow {
                status: f[0]
                    .parse()
                    .unwrap_or_else(|_| panic!("status column in {line:?}")),
                depth: f[1]
                    .parse()
                    .unwrap_or_else(|_| panic!("depth column in {line:?}")),
                bytes: f[2]
                    .parse()
                    .unwrap_or_else(|_| panic!("bytes column in {line:?}")),
                millis: f[3]
                    .parse()
                    .unwrap_or_else(|_| panic!("ms column in {line:?}")),
                content_type: f[4].to_owned(),
                url: f[5].to_owned(),
                note: f[6].to_owned(),
            }
        })
        .collect()
}

/// Counts of each key, for "exactly once" checks that name the offenders.
pub fn counts<T: Ord + Clone>(items: impl IntoIterator<Item = T>) -> BTreeMap<T, usize> {
    let mut map = BTreeMap::new();
    for item in items {
        *map.entry(item).or_insert(0) += 1;
    }
    map
}

/// Asserts two sets are equal, listing (a few of) the differences.
pub fn assert_same_set<T: Ord + std::fmt::Debug + Clone>(what: &str, expected: &[T], actual: &[T]) {
    let e: std::collections::BTreeSet<T> = expected.iter().cloned().collect();
    let a: std::collections::BTreeSet<T> = actual.iter().cloned().collect();
    let missing: Vec<_> = e.difference(&a).take(10).collect();
    let extra: Vec<_> = a.difference(&e).take(10).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: {} expected, {} actual\n  missing (first 10): {missing:?}\n  unexpected (first 10): {extra:?}",
        e.len(),
        a.len()
    );
}
