//! End-to-end tests: the real binary against a test web on loopback.

use crate::util::{assert_same_set, crawl};
use std::time::Duration;
use testweb::{Graph, GraphSpec, HostSpec, Response, TestWeb};

fn seeds_of(web: &TestWeb, hosts: &[usize]) -> String {
    hosts
        .iter()
        .map(|&h| format!("{}\n", web.url(h, "/")))
        .collect()
}

#[test]
fn every_reachable_page_in_scope_is_fetched_once_and_nothing_else() {
    let graph = Graph::new(GraphSpec {
        hosts: 4,
        pages_per_host: 150,
        children: 3,
        extra_links: 5,
        cross_host_permille: 250,
        page_padding: 200,
        seed: 11,
    });
    // Host 1 forbids /p/1*; host 3 is linked to but not a seed, so out of scope.
    let web = graph
        .start(Duration::ZERO, &|h| {
            (h == 1).then(|| "User-agent: *\nDisallow: /p/1\n".into())
        })
        .unwrap();
    let allowed = |h: usize, p: usize| h < 3 && !(h == 1 && Graph::path(p).starts_with("/p/1"));
    let expected: Vec<(usize, usize)> = graph
        .bfs(&[(0, 0), (1, 0), (2, 0)], &allowed, None)
        .into_keys()
        .collect();

    let run = crawl(
        &seeds_of(&web, &[0, 1, 2]),
        &[
            "-j",
            "8",
            "--delay-factor",
            "0",
            "--buffer-entries",
            "64",
            "--cache-entries",
            "32",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    crate::util::assert_fetched_once(&web, &expected);
    assert!(
        web.log().iter().all(|e| e.host != 3),
        "out-of-scope host 3 was contacted"
    );
    assert_eq!(
        web.log()
            .iter()
            .filter(|e| e.target == "/robots.txt")
            .count(),
        3,
        "one robots.txt per host"
    );

    // The URL log on stdout says the same, one line per fetch.
    assert_eq!(run.pages().len(), expected.len());
    assert!(
        run.pages()
            .iter()
            .all(|r| r.status == 200 && r.content_type.starts_with("text/html"))
    );
    let summary = run.summary();
    assert_eq!(summary["ending"], "complete", "{summary}");
    let blocked = summary["robots_blocked"].as_u64().expect("a count");
    assert!(blocked > 0, "robots.txt blocked nothing: {summary}");
}

#[test]
fn no_host_sees_overlapping_requests_or_gaps_shorter_than_the_delay_rule() {
    let factor = 3.0;
    let graph = Graph::new(GraphSpec {
        hosts: 3,
        pages_per_host: 20,
        extra_links: 3,
        page_padding: 100,
        ..GraphSpec::default()
    });
    let web = graph.start(Duration::from_millis(15), &|_| None).unwrap();
    let run = crawl(
        &seeds_of(&web, &[0, 1, 2]),
        &["-j", "8", "--delay-factor", "3"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.pages().len(), 60);
    // Hosts rest after each response: none hands its own next page on without a rest. A worker
    // that frees a host may still take *another* ready host's page (`host_free_or_next`), which
    // skips no rest, and whether one is ready at that instant depends on the machine's load:
    // so `pages_ahead` is not asserted here; the server's log below is the check.
    let summary = run.summary();
    let (ahead, sent_ahead) = (&summary["pages_ahead"], &summary["requests_ahead"]);
    assert!(ahead.as_u64() >= sent_ahead.as_u64(), "{summary}");

    for (host, requests) in crate::util::requests_by_host(&web) {
        for pair in requests.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(
                b.start >= a.end,
                "host {host}: {} started before {} ended",
                b.target,
                a.target
            );
            // The crawler times a response from before it is sent to after it is read, so its
            // figure is at least the server's: the server-side gap must respect the rule too.
            let gap = b.start - a.end;
            let needed = (a.end - a.start).mul_f64(factor);
            assert!(
                gap >= needed,
                "host {host}: {} came {gap:?} after {} ended, rule needs {needed:?}",
                b.target,
                a.target
            );
        }
    }
}

/// With no rest (`--delay-factor 0`) a host hands its next page to the worker that received
/// its previous one (`Dispatcher::host_free_or_next`): most pages of a single-host crawl go
/// that way, one request at a time, and the crawl is whole.
#[test]
fn a_host_needing_no_rest_hands_its_next_page_to_the_same_worker() {
    let graph = Graph::new(GraphSpec {
        hosts: 1,
        pages_per_host: 200,
        extra_links: 5,
        page_padding: 100,
        ..GraphSpec::default()
    });
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    let run = crawl(&seeds_of(&web, &[0]), &["-j", "4", "--delay-factor", "0"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.pages().len(), 200);
    let summary = run.summary();
    let ahead = summary["pages_ahead"].as_u64().unwrap();
    assert!(ahead >= 100, "{summary}");
    // Each request sent on the connection the previous page came on, before that page's
    // links were read.
    let sent = summary["requests_ahead"].as_u64().unwrap();
    assert!(sent >= 100 && sent <= ahead, "{summary}");
    for requests in crate::util::requests_by_host(&web).values() {
        for pair in requests.windows(2) {
            assert!(
                pair[1].start >= pair[0].end,
                "overlapping requests to one host"
            );
        }
    }
}

#[test]
fn host_connections_bound_the_requests_in_flight_per_host() {
    let graph = Graph::new(GraphSpec {
        hosts: 1,
        pages_per_host: 40,
        extra_links: 3,
        page_padding: 100,
        ..GraphSpec::default()
    });
    let web = graph.start(Duration::from_millis(20), &|_| None).unwrap();
    let run = crawl(
        &seeds_of(&web, &[0]),
        &["-j", "8", "--delay-factor", "0", "--host-connections", "3"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.pages().len(), 40);
    // The most requests the server had in flight at once.
    let mut edges: Vec<(std::time::Instant, i32)> = Vec::new();
    for entry in web.log() {
        edges.push((entry.start, 1));
        edges.push((entry.end, -1));
    }
    edges.sort(); // at equal instants an end (-1) sorts first: it was no overlap
    let (mut now, mut most) = (0, 0);
    for (_, step) in edges {
        now += step;
        most = most.max(now);
    }
    assert!(most <= 3, "{most} requests in flight at once, 3 allowed");
    assert!(
        most >= 2,
        "never more than one request in flight: the option does nothing"
    );
}

#[test]
fn one_worker_fetches_breadth_first() {
    let graph = Graph::new(GraphSpec {
        hosts: 1,
        pages_per_host: 300,
        children: 3,
        extra_links: 6,
        page_padding: 100,
        seed: 5,
        ..GraphSpec::default()
    });
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    let distances = graph.bfs(&[(0, 0)], &|_, _| true, None);
    let run = crawl(
        &seeds_of(&web, &[0]),
        &[
            "-j",
            "1",
            "--delay-factor",
            "0",
            "--buffer-entries",
            "16",
            "--cache-entries",
            "8",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let pages = run.pages();
    assert_eq!(pages.len(), distances.len());
    let depths: Vec<u32> = pages.iter().map(|r| r.depth).collect();
    assert!(
        depths.windows(2).all(|w| w[0] <= w[1]),
        "depths decreased: {depths:?}"
    );
    for row in pages {
        let path = &row.url[web.origin(0).len()..];
        let page = Graph::page_of_path(path).unwrap();
        assert_eq!(
            row.depth,
            distances[&(0, page)],
            "{} logged at the wrong depth",
            row.url
        );
    }
}

#[test]
fn depth_page_and_pattern_limits_hold() {
    let graph = Graph::new(GraphSpec {
        hosts: 1,
        pages_per_host: 200,
        children: 3,
        extra_links: 2,
        page_padding: 50,
        seed: 3,
        ..GraphSpec::default()
    });
    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    let seeds = seeds_of(&web, &[0]);

    // The graph's links include images and stylesheets: page requisites, which go one hop
    // further by default (`requisites.rs`); without them the depth limit is exact.
    let args = [
        "--delay-factor",
        "0",
        "--max-depth",
        "1",
        "--requisites",
        "off",
    ];
    let run = crawl(&seeds, &args);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let within: Vec<String> = graph
        .bfs(&[(0, 0)], &|_, _| true, Some(1))
        .into_keys()
        .map(|(h, p)| web.url(h, &Graph::path(p)))
        .collect();
    let fetched: Vec<String> = run.pages().iter().map(|r| r.url.clone()).collect();
    assert_same_set("--max-depth 1", &within, &fetched);
    let run = crawl(&seeds, &args[..4]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    for row in run.pages() {
        let past = !within.contains(&row.url);
        assert_eq!(past, row.depth == 2, "{row:?}");
        assert_eq!(past, row.note == "requisite", "{row:?}");
    }
    assert!(
        run.pages().len() > within.len(),
        "no requisite past the depth"
    );

    let run = crawl(&seeds, &["--delay-factor", "0", "--max-pages", "10"]);
    assert_eq!(run.code, 4, "a run limit; stderr: {}", run.stderr);
    assert_eq!(run.pages().len(), 10);
    assert_eq!(run.summary()["ending"], "page-limit");

    let run = crawl(
        &seeds,
        &[
            "--delay-factor",
            "0",
            "--exclude",
            "/p/2",
            "--max-depth",
            "3",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!run.pages().is_empty());
    assert!(
        run.pages().iter().all(|r| !r.url.contains("/p/2")),
        "an excluded URL was fetched"
    );
}

#[test]
fn redirect_targets_are_discovered_urls_not_followed_blindly() {
    let web = TestWeb::start_with(2, |origins| {
        let other = origins[1].clone();
        vec![
            HostSpec::new(move |req| match req.target.as_str() {
                "/" => Response::html(r#"<a href="/r1">r</a><a href="/loop">l</a><a href="/out">o</a><a href="/ftp">f</a>"#),
                "/r1" => Response::redirect(301, "/target#frag"),
                "/target" => Response::html(r#"<a href="/r1">back</a><a href="/">home</a>"#),
                "/loop" => Response::redirect(302, "/loop"),
                "/out" => Response::redirect(302, &format!("{other}/")),
                "/ftp" => Response::redirect(302, "ftp://127.0.0.1/file"),
                _ => Response::not_found(),
            }),
            HostSpec::new(|_| Response::html("out of scope")),
        ]
    })
    .unwrap();
    let run = crawl(&seeds_of(&web, &[0]), &["--delay-factor", "0"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let targets: Vec<String> = web
        .log()
        .iter()
        .filter(|e| e.host == 0 && crate::util::is_page_target(&e.target))
        .map(|e| e.target.clone())
        .collect();
    let mut sorted = targets.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["/", "/ftp", "/loop", "/out", "/r1", "/target"],
        "each URL once, loops cut by the DUE"
    );
    assert!(
        web.log().iter().all(|e| e.host != 1),
        "followed a redirect out of scope: {:?}",
        web.log()
    );
    let r1 = run.rows.iter().find(|r| r.url.ends_with("/r1")).unwrap();
    assert_eq!(
        (r1.status, r1.note.as_str()),
        (301, format!("redirect:{}/target", web.origin(0)).as_str())
    );
}

#[test]
fn bad_seed_files_name_the_line_and_crawl_nothing() {
    let run = crawl(
        "http://127.0.0.1:1/\nnot a url\n# fine\nftp://127.0.0.1/x\n",
        &[],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("seeds.txt:2: not a url"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("seeds.txt:4: ftp://127.0.0.1/x: only http and https"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.is_empty() && !run.out.join("seen").exists(),
        "crawled despite bad seeds"
    );

    let run = crawl("# only comments\n\n", &[]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no seed URLs"), "{}", run.stderr);

    let dir = tempfile::tempdir().unwrap();
    let args = ["missing.txt", "--out", "out"].map(String::from);
    let (code, stdout, stderr) = crate::util::run_binary(&args, None, dir.path());
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.contains("missing.txt: cannot read the seed file"),
        "{stderr}"
    );

    let args = ["-", "--out", "out", "--max-body", "ten"].map(String::from);
    let (code, _, stderr) =
        crate::util::run_binary(&args, Some(b"http://127.0.0.1:1/\n"), dir.path());
    assert_eq!(code, 2, "a bad option value is bad usage: {stderr}");
}

#[test]
fn seeds_from_stdin_and_an_unreachable_host_are_data_and_exit_3() {
    // Port 1 on loopback refuses connections: robots.txt is asked 3 times (2 retries), then the
    // host is held unreachable: its seed is noted host-unreachable (not a robots block), and
    // the crawl, in which no seed host answered, ends with 3 and is not complete.
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "-",
        "--out",
        "out",
        "--timeout",
        "5",
        "--retry-wait",
        "10ms",
    ]
    .map(String::from);
    let (code, stdout, stderr) =
        crate::util::run_binary(&args, Some(b"http://127.0.0.1:1/\n"), dir.path());
    assert_eq!(code, 3, "{stderr}");
    let rows = crate::util::parse_log(&stdout);
    let notes: Vec<(u16, &str)> = rows.iter().map(|r| (r.status, r.note.as_str())).collect();
    assert_eq!(
        notes,
        [
            (0, "connect,retry-after:0.01"),
            (0, "connect,retry-after:0.04"),
            (0, "connect,retries-exhausted"),
            (0, "host-unreachable")
        ],
        "{stdout}"
    );
    let summary = crate::util::read_summary(&dir.path().join("out"));
    assert_eq!(summary["robots_blocked"], 0, "{summary}");
    assert_eq!(summary["host_unreachable"], 1, "{summary}");
    assert_eq!(summary["outcome"], "nothing-answered", "{summary}");
    assert!(!dir.path().join("out/complete").exists());
}

#[test]
fn gzip_pages_are_decoded_for_links_and_counted_as_sent() {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(br#"<html><a href="/inner">x</a></html>"#)
        .unwrap();
    let gzipped = encoder.finish().unwrap();
    let sent = gzipped.len() as u64;
    let web = TestWeb::start(vec![HostSpec::new(move |req| match req.target.as_str() {
        "/" => Response::html(gzipped.clone()).with_header("Content-Encoding", "gzip"),
        "/inner" => Response::html("leaf"),
        _ => Response::not_found(),
    })])
    .unwrap();
    let run = crawl(&seeds_of(&web, &[0]), &["--delay-factor", "0"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let urls: Vec<&str> = run.pages().iter().map(|r| r.url.as_str()).collect();
    assert_eq!(urls, [web.url(0, "/"), web.url(0, "/inner")]);
    assert_eq!(
        run.pages()[0].bytes,
        sent,
        "bytes column counts the body as sent"
    );
}

/// With more workers than hosts some worker is always idle; the DUE merges early only when the
/// queued work runs low or a host waits for URLs (spaced by the merges' cost), not each time a
/// worker finds every host busy (which made 112 merges of a 20,000-page crawl over 50 hosts
/// with -j 64).
#[test]
fn idle_workers_do_not_merge_while_hosts_have_work_queued() {
    let graph = Graph::new(GraphSpec {
        hosts: 2,
        pages_per_host: 1000,
        extra_links: 2,
        page_padding: 100,
        ..GraphSpec::default()
    });
    // Slow pages: with the old rule, merges ran back to back for the whole crawl.
    let web = graph.start(Duration::from_millis(2), &|_| None).unwrap();
    let run = crawl(
        &seeds_of(&web, &[0, 1]),
        &["-j", "16", "--delay-factor", "0", "--no-warc"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.pages().len(), 2000);
    let merges = run.summary()["merges"].as_u64().expect("a count");
    // Measured 11-13 on a quiet machine and 26-59 beside other work; merging at every idle
    // moment (the old rule) made 45-48 quiet and 301-384 beside the same work.
    assert!(merges <= 150, "{merges} merges");
}

/// The most requests the server was serving at once, over all hosts (its log's intervals).
fn max_concurrent(web: &TestWeb) -> usize {
    let mut events: Vec<(std::time::Instant, i32)> = Vec::new();
    for entry in web.log() {
        events.push((entry.start, 1));
        events.push((entry.end, -1));
    }
    // An end at the same instant as a start is counted first: the two did not overlap.
    events.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, change) in events {
        now += change;
        most = most.max(now);
    }
    most as usize
}

/// Crawls a web of `hosts` hosts answering after 50 ms, each of 2 pages, with `args`; checks
/// that every page came once and that no host saw overlapping requests or a gap shorter than
/// the delay rule's (factor 1); returns the most requests the server served at once.
fn crawl_slow_web(hosts: usize, args: &[&str]) -> (usize, serde_json::Value) {
    let graph = Graph::new(GraphSpec {
        hosts,
        pages_per_host: 2,
        extra_links: 1,
        page_padding: 100,
        ..GraphSpec::default()
    });
    let web = graph.start(Duration::from_millis(50), &|_| None).unwrap();
    let all: Vec<usize> = (0..hosts).collect();
    let mut args = args.to_vec();
    args.extend(["--delay-factor", "1"]);
    let run = crawl(&seeds_of(&web, &all), &args);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.pages().len(), hosts * 2);
    crate::util::assert_fetched_once(
        &web,
        &all.iter()
            .flat_map(|&h| [(h, 0), (h, 1)])
            .collect::<Vec<_>>(),
    );
    for (host, requests) in crate::util::requests_by_host(&web) {
        for pair in requests.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(
                b.start >= a.end,
                "host {host}: {} overlapped {}",
                b.target,
                a.target
            );
            let (gap, needed) = (b.start - a.end, a.end - a.start);
            assert!(
                gap >= needed,
                "host {host}: {} came {gap:?} after {}",
                b.target,
                a.target
            );
        }
    }
    (max_concurrent(&web), run.summary())
}

/// Without -j the workers follow the work: with 64 hosts ready at once, many more requests
/// are in flight than the 16 workers that were the default, each host still polite.
#[test]
fn without_jobs_the_requests_in_flight_follow_the_ready_hosts() {
    let (most, summary) = crawl_slow_web(64, &[]);
    assert!(most > 16, "at most {most} requests at once");
    assert!(summary["workers"].as_u64().unwrap() > 16, "{summary}");
}

/// `--max-connections` bounds the elastic pool.
#[test]
fn max_connections_bounds_the_requests_in_flight() {
    let (most, summary) = crawl_slow_web(64, &["--max-connections", "24"]);
    assert!(most <= 24, "{most} requests at once");
    assert!(summary["workers"].as_u64().unwrap() <= 24, "{summary}");
    assert_eq!(summary["max_workers"], 24, "{summary}");
}

/// `-j N` is a hard limit: N workers, no more, whatever is ready.
#[test]
fn jobs_bound_the_requests_in_flight() {
    let (most, summary) = crawl_slow_web(64, &["-j", "12"]);
    assert!(most <= 12, "{most} requests at once");
    assert_eq!(summary["workers"], 12, "{summary}");
}

/// With the reactor (`CRAWL_REACTOR=1`) and fewer places in flight than hosts, the crawl does
/// not stall at its cap: a sitemap chained to a page being processed is fetched by a worker,
/// not by the thread that processes answers (those queued behind it would hold their places).
/// The deadline is ten times what the cap allows (every request's latency, -j at once).
#[test]
fn the_reactor_at_its_cap_does_not_stall() {
    let (hosts, pages, jobs, latency) = (200, 4, 50, Duration::from_millis(20));
    let graph = Graph::new(GraphSpec {
        hosts,
        pages_per_host: pages,
        extra_links: 1,
        page_padding: 100,
        ..GraphSpec::default()
    });
    let web = graph.start(latency, &|_| None).unwrap();
    let all: Vec<usize> = (0..hosts).collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), seeds_of(&web, &all)).unwrap();
    let jobs_arg = jobs.to_string();
    let args = ["-j", jobs_arg.as_str(), "--delay-factor", "1", "-q"];
    let env = [("CRAWL_REACTOR", "1".to_owned())];
    let (code, stdout, stderr) = crate::util::crawl_dir(dir.path(), &args, &env, None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let rows = crate::util::parse_log(&stdout);
    assert_eq!(rows.iter().filter(|r| r.is_page()).count(), hosts * pages);
    // robots.txt, the sitemap and the pages of every host, `jobs` at a time.
    let requests = (hosts * (pages + 2)) as u32;
    let deadline = latency * requests / jobs * 10;
    let summary = crate::util::read_summary(&dir.path().join("out"));
    let seconds = summary["seconds"].as_f64().unwrap();
    assert!(
        seconds < deadline.as_secs_f64(),
        "{seconds} s, more than {deadline:?}: {summary}"
    );
}
