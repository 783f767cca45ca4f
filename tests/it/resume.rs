//! Kill it, resume it: crash-safe resume, clean stops and recrawls, on a loopback test web.
//!
//! The kill test crashes the crawler again and again in one state directory: by SIGKILL from
//! the test after some lines of the URL log, and from inside at named crash points (during a
//! merge, between a frontier append and its commit, at a done record, at a checkpoint; see
//! `src/failpoint.rs`). The server's own request log then shows whether any URL was lost and
//! which pages were fetched again.

use crate::util::{assert_same_set, parse_log};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use testweb::{Graph, GraphSpec, HostSpec, Request, Response, TestWeb};

/// One run of the binary in a state directory that outlives it.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `crawl seeds --out out ARGS` in `dir` with `env`; with `kill_after`, SIGKILLs it once
/// its URL log has that many lines (if it gets that far).
fn run(dir: &Path, args: &[&str], env: &[(&str, String)], kill_after: Option<usize>) -> Run {
    let (code, stdout, stderr) = crate::util::crawl_dir(dir, args, env, kill_after);
    Run {
        code,
        stdout,
        stderr,
    }
}

/// (host, page) of every page request in `log[from..]`, robots.txt left out.
fn pages_requested(web: &TestWeb, from: usize) -> Vec<(usize, usize)> {
    web.log()[from..]
        .iter()
        .filter(|e| crate::util::is_page_target(&e.target))
        .map(|e| (e.host, Graph::page_of_path(&e.target).expect("a page")))
        .collect()
}

/// The server's request count once it has stopped changing (requests a killed crawler sent
/// are still being read and answered for a moment), polled with a deadline.
fn settled_count(web: &TestWeb) -> usize {
    crate::util::settled(
        || web.request_count(),
        Duration::from_millis(300),
        Duration::from_secs(5),
    )
}

/// A directory for a crawl whose seed file (`seeds.txt`) holds `seed`.
fn seeded_with(seed: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), format!("{seed}\n")).unwrap();
    dir
}

/// The number of checksums in a seen-set file (its header's count).
fn seen_count(out: &Path) -> u64 {
    let bytes = std::fs::read(out.join("seen")).unwrap();
    u64::from_le_bytes(bytes[16..24].try_into().unwrap())
}

#[test]
fn killed_at_any_moment_the_crawl_resumes_without_losing_or_refetching() {
    // Where each run dies: the test's SIGKILL after N URL-log lines, or a crash point passed
    // for the N-th time.
    // Every crash point comes early in the list, so each is hit whatever the machine's speed.
    // Batches grow with the seen set (see `due`), so merges get rarer as the crawl goes on:
    // merge points are counted in few passes.
    let kills: Vec<(Option<&str>, usize)> = vec![
        (None, 60),
        (Some("merge-staged"), 3),
        (Some("merge-delivering"), 3),
        (Some("frontier-append"), 300),
        (Some("merge-delivered"), 3),
        (Some("merge-committed"), 2),
        (Some("done"), 70),
        (Some("checkpoint"), 2),
        (None, 80),
        (Some("merge-delivering"), 2),
        (Some("frontier-append"), 200),
        (None, 90),
        (Some("merge-staged"), 2),
        (Some("done"), 60),
        (Some("merge-committed"), 3),
        (Some("checkpoint"), 1),
    ];
    killed_again_and_again(&[], &kills);
}

/// The same with host queues spilling to disk after 2 URLs and 2 host slots for 3 hosts, so
/// URLs wait in spill files and in the deferred FIFO at every kill, including between a spill
/// append and the checkpoint that names it (`spill`).
#[test]
fn killed_with_spilled_host_queues_the_crawl_resumes_without_losing_or_refetching() {
    let kills: Vec<(Option<&str>, usize)> = vec![
        (Some("spill"), 20),
        (None, 60),
        (Some("checkpoint"), 2),
        (Some("spill"), 80),
        (Some("merge-delivered"), 3),
        (Some("done"), 70),
        (None, 80),
        (Some("spill"), 60),
        (Some("checkpoint"), 3),
        (Some("spill"), 100),
        (None, 90),
        (Some("done"), 60),
        (Some("spill"), 40),
        (None, 50),
    ];
    let env = [
        ("CRAWL_SPILL_AT", "2".to_string()),
        ("CRAWL_HOST_SLOTS", "2".to_string()),
    ];
    killed_again_and_again(&env, &kills);
}

/// `--max-pages-per-host` with host queues spilling after 2 URLs and 2 host slots for 6 hosts
/// (URLs of 4 hosts wait in the deferred FIFO, holding no budget place), stopped by
/// `--max-pages` and resumed: each host gets exactly its budget of pages, none twice, and
/// every URL refused is noted `host-budget` and never fetched.
#[test]
fn a_host_budget_holds_with_spilled_queues_and_deferred_hosts_across_a_resume() {
    const HOSTS: usize = 6;
    const BUDGET: usize = 12;
    let graph = Graph::new(GraphSpec {
        hosts: HOSTS,
        pages_per_host: 200,
        children: 3,
        extra_links: 3,
        cross_host_permille: 250,
        page_padding: 100,
        seed: 11,
    });
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seeds: String = (0..HOSTS)
        .map(|h| format!("{}\n", web.url(h, "/")))
        .collect();
    std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
    let env = [
        ("CRAWL_SPILL_AT", "2".to_string()),
        ("CRAWL_HOST_SLOTS", "2".to_string()),
    ];
    let budget = BUDGET.to_string();
    let args = [
        "-j",
        "2",
        "--delay-factor",
        "0",
        "--max-pages-per-host",
        &budget,
    ];
    let stopped: Vec<&str> = args.iter().copied().chain(["--max-pages", "20"]).collect();
    let first = run(dir.path(), &stopped, &env, None);
    assert_eq!(first.code, Some(4), "a run limit; stderr: {}", first.stderr);
    let between = pages_requested(&web, 0).len();
    assert!(
        between < HOSTS * BUDGET,
        "{between} pages before the resume"
    );
    let last = run(dir.path(), &args, &env, None);
    assert_eq!(last.code, Some(0), "stderr: {}", last.stderr);
    let summary = crate::util::read_summary(&dir.path().join("out"));
    assert_eq!(summary["ending"], "complete", "{summary}");
    let pages = pages_requested(&web, 0);
    let distinct: BTreeSet<(usize, usize)> = pages.iter().copied().collect();
    assert_eq!(distinct.len(), pages.len(), "a page fetched twice");
    for host in 0..HOSTS {
        let of_host = pages.iter().filter(|(h, _)| *h == host).count();
        assert_eq!(of_host, BUDGET, "host {host}'s pages");
    }
    let refused: Vec<String> = [&first.stdout, &last.stdout]
        .into_iter()
        .flat_map(|out| parse_log(out))
        .filter(|row| row.note == "host-budget")
        .map(|row| row.url)
        .collect();
    assert!(!refused.is_empty(), "no URL noted host-budget");
    for url in &refused {
        let (host, path) = (0..HOSTS)
            .find_map(|h| Some((h, url.strip_prefix(&web.origin(h))?)))
            .unwrap_or_else(|| panic!("{url} is on no host"));
        let page = Graph::page_of_path(path).expect("a page");
        assert!(
            !distinct.contains(&(host, page)),
            "{url} refused and fetched"
        );
    }
}

/// Crawls a 3,000-page web of 3 hosts in one state directory, killed at each of `kills` in
/// turn (with `env` set), then run to its end: no URL lost, and only pages in flight at a
/// kill fetched again.
fn killed_again_and_again(env: &[(&str, String)], kills: &[(Option<&str>, usize)]) {
    let graph = Graph::new(GraphSpec {
        hosts: 3,
        pages_per_host: 1000,
        children: 3,
        extra_links: 5,
        cross_host_permille: 250,
        page_padding: 100,
        seed: 5,
    });
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    let roots = [(0, 0), (1, 0), (2, 0)];
    let expected: BTreeSet<(usize, usize)> =
        graph.bfs(&roots, &|_, _| true, None).into_keys().collect();
    let dir = tempfile::tempdir().unwrap();
    let seeds: String = (0..3).map(|h| format!("{}\n", web.url(h, "/"))).collect();
    std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
    const JOBS: usize = 4;
    // Small batches and segments, so merges and segment rolls happen all the time.
    let args = [
        "-j",
        "4",
        "--delay-factor",
        "0",
        "--buffer-entries",
        "16",
        "--cache-entries",
        "64",
    ];
    let segments = ("CRAWL_SEGMENT_BYTES", "3000".to_string());
    let checkpoints = ("CRAWL_CHECKPOINT_PAGES", "50".to_string());
    let mut killed_runs = Vec::new(); // (request log start, end) of each killed run
    let mut finished = false;
    for (point, n) in kills {
        let start = web.request_count();
        let mut env: Vec<(&str, String)> = env.to_vec();
        env.extend([segments.clone(), checkpoints.clone()]);
        let kill_after = match point {
            Some(point) => {
                env.push(("CRAWL_FAILPOINT", format!("{point}:{n}")));
                None
            }
            None => Some(*n),
        };
        let r = run(dir.path(), &args, &env, kill_after);
        eprintln!(
            "{point:?}:{n}: {} pages, exit {:?}",
            pages_requested(&web, start).len(),
            r.code
        );
        if r.code == Some(0) {
            finished = true; // the crawl ended before this crash point was reached
            break;
        }
        assert_eq!(r.code, None, "killed, not an error exit: {}", r.stderr);
        // The server may still be answering requests the killed process sent: count them
        // with its run, not the next.
        killed_runs.push((start, settled_count(&web)));
    }
    assert!(killed_runs.len() >= 12, "only {} kills", killed_runs.len());
    if !finished {
        let mut env: Vec<(&str, String)> = env.to_vec();
        env.extend([segments, checkpoints]);
        let last = run(dir.path(), &args, &env, None);
        assert_eq!(last.code, Some(0), "stderr: {}", last.stderr);
    }

    // Nothing lost: every reachable page was fetched, nothing else.
    let all = pages_requested(&web, 0);
    let expected_list: Vec<(usize, usize)> = expected.iter().copied().collect();
    assert_same_set("pages fetched over all runs", &expected_list, &all);

    // Refetched: a page a killed run requested that a later run requested again. Only pages
    // in flight at the kill may be: being fetched or processed by a worker, its host's next
    // page requested ahead by the same worker (`Fetcher::send_ahead`), or queued for the WARC
    // writer and so not yet done (the batch being written and the one filling: 2 × 8 records
    // at 4 jobs, `output::archive::batch_records` and `ROOM`).
    let log = web.log();
    let mut per_kill = Vec::new();
    for (i, &(from, to)) in killed_runs.iter().enumerate() {
        let here: BTreeSet<(usize, usize)> = log[from..to]
            .iter()
            .filter(|e| crate::util::is_page_target(&e.target))
            .map(|e| (e.host, Graph::page_of_path(&e.target).expect("a page")))
            .collect();
        let later: BTreeSet<(usize, usize)> = pages_requested(&web, to).into_iter().collect();
        let again = here.intersection(&later).count();
        per_kill.push(again);
        assert!(
            again <= 6 * JOBS + 1,
            "kill {i} ({:?}): {again} pages fetched again, more than were in flight",
            kills[i]
        );
    }
    // Over all runs, every fetch beyond the first was in flight at some kill.
    let counts: BTreeMap<(usize, usize), usize> = crate::util::counts(all.iter().copied());
    let twice: usize = counts.values().map(|c| c - 1).sum();
    assert!(
        twice <= killed_runs.len() * (6 * JOBS + 1),
        "{twice} second fetches over {} kills",
        killed_runs.len()
    );
    let most = counts.values().max().copied().unwrap_or(0);
    assert!(most <= killed_runs.len() + 1, "a page fetched {most} times");
    eprintln!(
        "{} kills; pages refetched per kill: {per_kill:?} (max {}); {} pages, {} requests; URLs lost: 0",
        killed_runs.len(),
        per_kill.iter().max().unwrap(),
        expected.len(),
        all.len()
    );

    // The seen set and the frontier agree: every admitted URL was fetched, none is left.
    let out = dir.path().join("out");
    // (and one sitemap for each seed's host: its /sitemap.xml, a 404)
    assert_eq!(seen_count(&out), expected.len() as u64 + 3);
    let summary = crate::util::read_summary(&out);
    assert_eq!(summary["ending"], "complete", "{summary}");
    assert_eq!(summary["frontier_left"], 0, "{summary}");
    assert!(!out.join("due").exists() || std::fs::read_dir(out.join("due")).unwrap().count() == 0);
}

#[test]
fn sigterm_stops_cleanly_with_130_and_the_rerun_refetches_nothing() {
    let graph = Graph::new(GraphSpec {
        hosts: 2,
        pages_per_host: 120,
        children: 3,
        extra_links: 4,
        cross_host_permille: 200,
        page_padding: 100,
        seed: 9,
    });
    let web = graph.start(Duration::from_millis(2), &|_| None).unwrap();
    let expected = graph.bfs(&[(0, 0), (1, 0)], &|_, _| true, None);
    let dir = tempfile::tempdir().unwrap();
    let seeds = format!("{}\n{}\n", web.url(0, "/"), web.url(1, "/"));
    std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
    let args = ["-j", "4", "--delay-factor", "1"];

    let mut child = Command::new(env!("CARGO_BIN_EXE_crawl"))
        .arg(dir.path().join("seeds.txt"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..40 {
        lines.next().expect("40 lines of URL log").unwrap();
    }
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let drain = std::thread::spawn(move || lines.count());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(5));
    };
    drain.join().unwrap();
    assert_eq!(status.code(), Some(130), "interrupted, resumable");
    let first = pages_requested(&web, 0);
    assert!(first.len() < expected.len(), "stopped before the end");

    let start = web.request_count();
    let rerun = run(dir.path(), &args, &[], None);
    assert_eq!(rerun.code, Some(0), "{}", rerun.stderr);
    let second = pages_requested(&web, start);
    let again: Vec<_> = second.iter().filter(|p| first.contains(p)).collect();
    assert!(
        again.is_empty(),
        "a clean stop refetches nothing: {again:?}"
    );
    let all: Vec<(usize, usize)> = first.into_iter().chain(second).collect();
    let expected: Vec<(usize, usize)> = expected.into_keys().collect();
    assert_same_set("pages over both runs", &expected, &all);
    // robots.txt was kept: asked once per host over both runs.
    let robots = web
        .log()
        .iter()
        .filter(|e| e.target == "/robots.txt")
        .count();
    assert_eq!(robots, 2);
}

/// A small site whose pages change between runs: `version` selects the content.
fn changing_site(version: Arc<AtomicUsize>) -> TestWeb {
    TestWeb::start(vec![HostSpec::new(move |req: &Request| {
        let v = version.load(Ordering::SeqCst);
        let page = |links: &str, text: &str| {
            Response::html(format!("<html><body>{text} {links}</body></html>"))
                .with_header("ETag", format!("\"{}\"", text.len()))
        };
        let if_none_match = req.header("if-none-match").map(str::to_owned);
        let answer = match (req.target.as_str(), v) {
            ("/robots.txt", _) => return Response::not_found(),
            ("/", 0) => page("<a href=/a>a</a><a href=/b>b</a><a href=/c>c</a>", "home"),
            ("/", _) => page(
                "<a href=/a>a</a><a href=/b>b</a><a href=/d>d</a>",
                "home, v2",
            ),
            ("/a", _) => page("", "unchanged a"),
            // Same payload, but the server has no ETag support for it: compared by digest.
            ("/b", _) => Response::html("<html><body>plain b</body></html>"),
            ("/c", 0) => page("", "c"),
            ("/c", _) => return Response::new(410, "text/plain", "gone"),
            ("/d", _) => page("", "new d"),
            _ => return Response::not_found(),
        };
        let etag = answer
            .headers
            .iter()
            .find(|(k, _)| k == "ETag")
            .map(|(_, v)| v.clone());
        if let Some(etag) = etag.filter(|e| Some(e) == if_none_match.as_ref()) {
            return Response::new(304, "text/html", "").with_header("ETag", etag);
        }
        answer
    })])
    .unwrap()
}

#[test]
fn a_completed_crawl_is_recrawled_with_conditional_requests() {
    let version = Arc::new(AtomicUsize::new(0));
    let web = changing_site(Arc::clone(&version));
    let dir = seeded_with(&web.url(0, "/"));
    let args = ["--delay-factor", "0"];
    let first = run(dir.path(), &args, &[], None);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    assert_eq!(
        web.log()
            .iter()
            .filter(|e| crate::util::is_page_target(&e.target))
            .count(),
        4
    );

    version.store(1, Ordering::SeqCst);
    let start = web.request_count();
    let second = run(dir.path(), &args, &[], None);
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    let notes: BTreeMap<String, String> = parse_log(&second.stdout)
        .into_iter()
        .filter(|r| r.is_page())
        .map(|r| (r.url.rsplit('/').next().unwrap().to_owned(), r.note))
        .collect();
    let expected: BTreeMap<String, String> = [
        ("", "changed"),
        ("a", "unchanged"),
        ("b", "unchanged"),
        ("c", "gone"),
        ("d", "new"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(notes, expected);
    // The pages the first crawl saw were asked for conditionally where they had an ETag.
    let requests = &web.log()[start..];
    assert_eq!(requests.iter().filter(|e| e.status == 304).count(), 1, "/a");
    let summary = crate::util::read_summary(&dir.path().join("out"));
    let expected = serde_json::json!({"new": 1, "changed": 1, "unchanged": 2, "gone": 1, "lastmod": 0, "deferred": 0});
    assert_eq!(summary["recrawl"], expected, "{summary}");
    // Unchanged pages are revisit records in the archive.
    let warc = std::fs::read_dir(dir.path().join("out/warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.zst"))
        .map(|p| zstd::decode_all(std::fs::File::open(p).unwrap()).unwrap())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect::<String>();
    assert_eq!(warc.matches("WARC-Type: revisit").count(), 2, "a and b");
    assert_eq!(warc.matches("revisit/server-not-modified").count(), 1);
    assert_eq!(warc.matches("revisit/identical-payload-digest").count(), 1);

    // --restart forgets it all: every page is new again, fetched unconditionally.
    let start = web.request_count();
    let third = run(dir.path(), &["--delay-factor", "0", "--restart"], &[], None);
    assert_eq!(third.code, Some(0), "{}", third.stderr);
    assert!(web.log()[start..].iter().all(|e| e.status != 304));
    let summary = crate::util::read_summary(&dir.path().join("out"));
    assert!(summary["recrawl"].is_null(), "{summary}");
}

#[test]
fn a_second_crawl_on_a_directory_in_use_is_refused() {
    let web = changing_site(Arc::new(AtomicUsize::new(0)));
    let dir = seeded_with(&web.url(0, "/"));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // Hold the directory's lock the way a running crawl does.
    let lock = std::fs::File::create(out.join("lock")).unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) },
        0
    );
    let refused = run(dir.path(), &[], &[], None);
    assert_eq!(refused.code, Some(2));
    assert!(
        refused.stderr.contains("another crawl"),
        "{}",
        refused.stderr
    );
    drop(lock);
    let ok = run(dir.path(), &["--delay-factor", "0"], &[], None);
    assert_eq!(
        ok.code,
        Some(0),
        "a released lock does not block: {}",
        ok.stderr
    );
}

/// A focused crawl keeps URLs in its priority window, taken from the frontier but not done: a
/// kill must lose none of them.
#[test]
fn a_killed_focused_crawl_loses_nothing_from_its_window() {
    use testweb::community::{Community, CommunitySpec};
    let web = Community::new(CommunitySpec {
        bulk: 600,
        members: 40,
        ..CommunitySpec::default()
    });
    let server = web.start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("seeds.txt"),
        format!("{}/\n", server.origin(0)),
    )
    .unwrap();
    let args = [
        "--focus",
        "orchid",
        "--delay-factor",
        "0",
        "--no-warc",
        "-j",
        "2",
    ];
    let env = [("CRAWL_CHECKPOINT_PAGES", "40".to_string())];
    let mut kills = 0;
    // One kill, when the window holds many URLs (checked: without the window in the
    // checkpoint, this loses about 70 pages).
    for after in [150] {
        let r = run(dir.path(), &args, &env, Some(after));
        if r.code == Some(0) {
            break;
        }
        kills += 1;
        settled_count(&server);
    }
    assert_eq!(kills, 1);
    let last = run(dir.path(), &args, &env, None);
    assert_eq!(last.code, Some(0), "{}", last.stderr);
    let fetched: BTreeSet<String> = server
        .log()
        .iter()
        .filter(|e| crate::util::is_page_target(&e.target))
        .map(|e| e.target.clone())
        .collect();
    let reachable: BTreeSet<String> = server
        .log()
        .iter()
        .filter(|e| crate::util::is_page_target(&e.target) && e.status == 200)
        .map(|e| e.target.clone())
        .collect();
    assert_eq!(fetched, reachable, "every request was for a real page");
    let total = web.spec().bulk + web.spec().members;
    assert_eq!(
        fetched.len(),
        total,
        "every page of the web fetched over the runs"
    );
}

#[test]
fn a_stop_abandons_a_fetch_that_would_not_end_and_exits_130() {
    // /slow sends its head, then nothing for a minute: far longer than the stop's grace.
    let asked = Arc::new(AtomicUsize::new(0));
    let asked_in_handler = Arc::clone(&asked);
    let web = TestWeb::start(vec![HostSpec::new(move |req: &Request| {
        match req.target.as_str() {
            "/" => Response::html("<a href=/slow>slow</a>"),
            "/slow" => {
                asked_in_handler.fetch_add(1, Ordering::SeqCst);
                Response::raw(
                    200,
                    vec![
                        (
                            Duration::ZERO,
                            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".to_vec(),
                        ),
                        (Duration::from_secs(60), b"0123456789".to_vec()),
                    ],
                )
            }
            _ => Response::not_found(),
        }
    })])
    .unwrap();
    let dir = seeded_with(&web.url(0, "/"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawl"))
        .arg(dir.path().join("seeds.txt"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .args(["--delay-factor", "0", "--timeout", "120"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while asked.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "/slow never requested");
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped = Instant::now();
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        // The grace is 5 s; a minute would mean the fetch was waited out.
        assert!(
            stopped.elapsed() < Duration::from_secs(40),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("1 fetches still in flight were abandoned"),
        "{stderr}"
    );
    // The abandoned page is still to do: the frontier's head lists it.
    let head = std::fs::read_to_string(dir.path().join("out/frontier/head")).unwrap();
    assert!(head.contains("/slow"), "{head}");
}

#[test]
fn a_new_generation_asks_again_for_a_robots_txt_that_was_unreachable() {
    // robots.txt answers 503 ("unreachable": every page blocked) while `down` is set.
    let down = Arc::new(AtomicUsize::new(1));
    let state = Arc::clone(&down);
    let web = TestWeb::start(vec![HostSpec::new(move |req: &Request| {
        match (req.target.as_str(), state.load(Ordering::SeqCst)) {
            ("/robots.txt", 1) => Response::new(503, "text/plain", "down"),
            ("/robots.txt", _) => Response::not_found(),
            ("/", _) => Response::html("<a href=/a>a</a>"),
            ("/a", _) => Response::html("a"),
            _ => Response::not_found(),
        }
    })])
    .unwrap();
    let dir = seeded_with(&web.url(0, "/"));
    // No retries: each run asks for robots.txt once.
    let args = ["--delay-factor", "0", "--no-sitemaps", "--retries", "0"];
    let pages = |from: usize| -> Vec<String> {
        web.log()[from..]
            .iter()
            .filter(|e| e.target != "/robots.txt")
            .map(|e| e.target.clone())
            .collect()
    };
    let mut runs = Vec::new();
    // (restart, robots.txt down, the pages the run should fetch), each run asking for
    // robots.txt once: a first crawl blocked by an unreachable robots.txt (its seed given up,
    // exit 3, not complete), then --restart as soon as it answers; --restart again (which
    // forgets even a good answer), blocked; then a plain run as soon as it answers (a resume
    // of the blocked crawl, which forgets the unreachable answer only and asks for the seed it
    // gave up).
    for (restart, is_down, fetched) in [
        (false, 1, &[][..]),
        (true, 0, &["/", "/a"][..]),
        (true, 1, &[][..]),
        (false, 0, &["/", "/a"][..]),
    ] {
        down.store(is_down, Ordering::SeqCst);
        let start = web.request_count();
        let mut all = args.to_vec();
        if restart {
            all.push("--restart");
        }
        let r = run(dir.path(), &all, &[], None);
        let status = if is_down == 1 { 3 } else { 0 };
        assert_eq!(r.code, Some(status), "{}", r.stderr);
        let robots = web.log()[start..]
            .iter()
            .filter(|e| e.target == "/robots.txt")
            .count();
        assert_eq!(robots, 1, "run {}: robots.txt asked for once", runs.len());
        assert_eq!(pages(start), fetched, "run {}: {}", runs.len(), r.stdout);
        runs.push(r);
    }
}

/// On the mirrored web of `payload_dedupe` (the home page links a section of its host and a
/// mirror of it on a second host), a `--scope any -j 2` crawl killed when its N-th CDXJ line
/// is due (checkpointing at every done batch), then resumed, fetches and logs every page: a
/// page done before the kill had its URL-log line written, and every other URL the seen set
/// admitted is fetched by the resume, whatever N. Payload dedupe is on at odd N.
#[test]
fn killed_while_archiving_a_two_host_crawl_loses_no_url() {
    use crate::payload_dedupe::{SECTION_PAGES, mirrored_web};
    for pass in (1..=12).chain([16, 20, 24, 30, 36]) {
        let web = mirrored_web();
        let home = web.url(0, "/");
        let mut expected = BTreeSet::from([home.clone()]);
        for section in [web.url(0, "/a/"), web.url(0, "/b/"), web.url(1, "/a/")] {
            expected.insert(section.clone());
            for page in 1..=SECTION_PAGES {
                expected.insert(format!("{section}p{page}"));
                expected.insert(format!("{section}p{page}/more"));
            }
        }
        let dir = seeded_with(&home);
        let mut args = vec!["--delay-factor", "0", "--scope", "any", "-j", "2"];
        args.extend(["--warc-compression", "gzip"]);
        if pass % 2 == 0 {
            args.push("--no-payload-dedupe");
        }
        let env = [
            ("CRAWL_FAILPOINT", format!("cdxj-line:{pass}")),
            ("CRAWL_CHECKPOINT_PAGES", "1".to_string()),
        ];
        let killed = run(dir.path(), &args, &env, None);
        assert_eq!(killed.code, None, "cdxj-line:{pass}: {}", killed.stderr);
        let resumed = run(dir.path(), &args, &[], None);
        assert_eq!(
            resumed.code,
            Some(0),
            "cdxj-line:{pass}: {}",
            resumed.stderr
        );
        let fetched: BTreeSet<String> = web
            .log()
            .iter()
            .filter(|e| crate::util::is_page_target(&e.target))
            .map(|e| web.url(e.host, &e.target))
            .collect();
        let logged: BTreeSet<String> = [&killed.stdout, &resumed.stdout]
            .into_iter()
            .flat_map(|out| parse_log(out))
            .filter(|row| row.is_page())
            .map(|row| row.url)
            .collect();
        let runs = format!("killed:\n{}resumed:\n{}", killed.stdout, resumed.stdout);
        assert_eq!(fetched, expected, "cdxj-line:{pass}: pages fetched\n{runs}");
        assert_eq!(logged, expected, "cdxj-line:{pass}: pages logged\n{runs}");
        let summary = crate::util::read_summary(&dir.path().join("out"));
        assert_eq!(summary["ending"], "complete", "cdxj-line:{pass}: {summary}");
        assert_eq!(summary["frontier_left"], 0, "cdxj-line:{pass}: {summary}");
    }
}
