//! 429 and 503: the host is given the rest it asks for (Retry-After), and the page is asked for
//! again a bounded number of times.

use crate::util::crawl;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use testweb::{HostSpec, Request, Response, TestWeb};

#[test]
fn a_busy_host_is_left_alone_for_retry_after_then_asked_again() {
    let busy = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&busy);
    let web = TestWeb::start(vec![HostSpec::new(move |req: &Request| {
        match req.target.as_str() {
            "/" => Response::html("<a href=/busy>busy</a> <a href=/down>down</a>"),
            // Busy twice, then fine.
            "/busy" if counter.fetch_add(1, Ordering::SeqCst) < 2 => {
                Response::new(429, "text/plain", "slow down").with_header("Retry-After", "1")
            }
            "/busy" => Response::html("<p>at last</p>"),
            // Never comes back: asked 1 + MAX_RETRIES times, then given up.
            "/down" => Response::new(503, "text/plain", "down").with_header("Retry-After", "0"),
            _ => Response::not_found(),
        }
    })])
    .unwrap();
    let run = crawl(&format!("{}\n", web.url(0, "/")), &["--delay-factor", "0"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    let log = web.log();
    let busy: Vec<_> = log.iter().filter(|e| e.target == "/busy").collect();
    assert_eq!(
        busy.iter().map(|e| e.status).collect::<Vec<_>>(),
        [429, 429, 200]
    );
    for pair in busy.windows(2) {
        let rested = pair[1].start.duration_since(pair[0].end);
        assert!(
            rested >= Duration::from_millis(990),
            "asked again after {rested:?}"
        );
    }
    let down = log.iter().filter(|e| e.target == "/down").count();
    assert_eq!(down, 1 + crawl::MAX_RETRIES as usize);

    let notes: Vec<(u16, &str)> = run
        .pages()
        .iter()
        .filter(|r| r.url.ends_with("/busy"))
        .map(|r| (r.status, r.note.as_str()))
        .collect();
    assert_eq!(
        notes,
        [(429, "retry-after:1"), (429, "retry-after:1"), (200, "-")]
    );
    let last_down = run
        .pages()
        .into_iter()
        .rfind(|r| r.url.ends_with("/down"))
        .unwrap();
    assert_eq!(last_down.note, "retries-exhausted");
    // Each URL counts once in the summary's seen set, and the crawl completed.
    assert_eq!(run.summary()["ending"], "complete");
}

/// A response the server never sends: the connection is closed before any byte of an answer
/// (the crawler's `closed`, a transient failure).
fn hang_up() -> Response {
    Response::raw(0, Vec::new())
}

/// `response` on a connection closed after it: a host that hangs up on some requests answers
/// the others so, or a hang-up on a kept connection would be one more request (the crawler
/// asks again at once on a fresh connection when a kept one fails before answering).
fn closing(response: Response) -> Response {
    response.with_header("Connection", "close")
}

/// The URL log's (status, note) of every line whose URL ends with `path`, in order.
fn lines_of<'a>(run: &'a crate::util::Outcome, path: &str) -> Vec<(u16, &'a str)> {
    run.rows
        .iter()
        .filter(|r| r.url.ends_with(path))
        .map(|r| (r.status, r.note.as_str()))
        .collect()
}

/// Short waits: 50 ms, then 200 ms (and 800 ms for a parked host).
const SHORT_WAITS: [&str; 4] = ["--retry-wait", "50ms", "--delay-factor", "0"];

#[test]
fn a_page_that_fails_at_first_is_asked_again_after_the_waits() {
    let closes = Arc::new(AtomicUsize::new(0));
    let gateway = Arc::new(AtomicUsize::new(0));
    let (c, g) = (Arc::clone(&closes), Arc::clone(&gateway));
    let web = TestWeb::start(vec![HostSpec::new(move |req: &Request| {
        match req.target.as_str() {
            "/" => closing(Response::html(
                "<a href=/flaky>f</a> <a href=/gw>g</a> <a href=/broken>b</a>",
            )),
            // Hangs up twice, then answers.
            "/flaky" if c.fetch_add(1, Ordering::SeqCst) < 2 => hang_up(),
            "/flaky" => closing(Response::html("<p>back</p>")),
            // A gateway that fails once.
            "/gw" if g.fetch_add(1, Ordering::SeqCst) < 1 => {
                closing(Response::text(502, "bad gateway"))
            }
            "/gw" => closing(Response::html("<p>through</p>")),
            // The server's own error: not asked again.
            "/broken" => closing(Response::text(500, "oops")),
            _ => closing(Response::not_found()),
        }
    })])
    .unwrap();
    let run = crawl(&format!("{}\n", web.url(0, "/")), &SHORT_WAITS);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        lines_of(&run, "/flaky"),
        [
            (0, "closed,retry-after:0.05"),
            (0, "closed,retry-after:0.2"),
            (200, "-")
        ]
    );
    assert_eq!(
        lines_of(&run, "/gw"),
        [(502, "retry-after:0.05"), (200, "-")]
    );
    assert_eq!(lines_of(&run, "/broken"), [(500, "-")]);
    // The page waited each wait before it was asked again (the host served the others).
    let log = web.log();
    let flaky: Vec<_> = log.iter().filter(|e| e.target == "/flaky").collect();
    assert_eq!(flaky.len(), 3);
    for (pair, wait) in flaky.windows(2).zip([50, 200]) {
        let rested = pair[1].start.duration_since(pair[0].start);
        assert!(
            rested >= Duration::from_millis(wait),
            "asked again after {rested:?}"
        );
    }
    // Each page counts once, however often it was asked.
    let summary = run.summary();
    assert_eq!(summary["pages"], 4, "{summary}");
    assert_eq!(summary["retried"], 3, "{summary}");
    assert_eq!(summary["status"]["none"], 0, "{summary}");
    assert_eq!(summary["outcome"], "complete");
    assert!(run.out.join("complete").exists());
}

#[test]
fn a_page_that_never_answers_is_noted_retries_exhausted() {
    let web = TestWeb::start(vec![HostSpec::new(|req: &Request| {
        match req.target.as_str() {
            "/" => closing(Response::html(
                "<a href=/a>a</a> <a href=/b>b</a> <a href=/c>c</a> <a href=/down>d</a>",
            )),
            "/down" => hang_up(),
            "/robots.txt" => closing(Response::not_found()),
            _ => closing(Response::html("<p>fine</p>")),
        }
    })])
    .unwrap();
    let run = crawl(&format!("{}\n", web.url(0, "/")), &SHORT_WAITS);
    assert_eq!(run.code, 0, "one failure in five: stderr: {}", run.stderr);
    assert_eq!(
        lines_of(&run, "/down"),
        [
            (0, "closed,retry-after:0.05"),
            (0, "closed,retry-after:0.2"),
            (0, "closed,retries-exhausted")
        ]
    );
    let summary = run.summary();
    assert_eq!(
        (summary["pages"].as_u64(), summary["failed"].as_u64()),
        (Some(5), Some(1))
    );
    assert_eq!(summary["status"]["none"], 1, "counted once: {summary}");
}

#[test]
fn a_crawl_in_which_most_fetches_fail_exits_3_and_is_not_complete() {
    let web = TestWeb::start(vec![HostSpec::new(|req: &Request| {
        match req.target.as_str() {
            "/" => closing(Response::html(
                "<a href=/a>a</a> <a href=/b>b</a> <a href=/c>c</a>",
            )),
            "/robots.txt" => closing(Response::not_found()),
            _ => hang_up(),
        }
    })])
    .unwrap();
    let seeds = format!("{}\n", web.url(0, "/"));
    let run = crawl(&seeds, &["--retries", "0", "--delay-factor", "0"]);
    assert_eq!(run.code, 3, "3 of 4 failed: stderr: {}", run.stderr);
    assert!(run.stderr.contains("most fetches failed"), "{}", run.stderr);
    let summary = run.summary();
    assert_eq!(summary["outcome"], "mostly-failed");
    assert_eq!(summary["ending"], "complete");
    assert!(
        !run.out.join("complete").exists(),
        "not complete: the next run resumes"
    );
    // The same crawl with the ratio off is a complete one.
    let lenient = crawl(
        &seeds,
        &[
            "--retries",
            "0",
            "--delay-factor",
            "0",
            "--max-error-ratio",
            "1",
        ],
    );
    assert_eq!(lenient.code, 0, "stderr: {}", lenient.stderr);
    assert_eq!(lenient.summary()["outcome"], "complete");
}

#[test]
fn a_site_down_for_the_whole_run_exits_3_and_the_next_run_resumes_it() {
    let up = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let is_up = Arc::clone(&up);
    let web = TestWeb::start(vec![HostSpec::new(move |req: &Request| {
        if !is_up.load(Ordering::SeqCst) {
            return hang_up();
        }
        match req.target.as_str() {
            "/" => Response::html("<a href=/a>a</a> <a href=/b>b</a>"),
            "/robots.txt" => Response::not_found(),
            _ => Response::html("<p>page</p>"),
        }
    })])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("seeds.txt"),
        format!("{}\n", web.url(0, "/")),
    )
    .unwrap();
    let args = ["--retry-wait", "50ms"];
    let (code, stdout, stderr) = crate::util::crawl_dir(dir.path(), &args, &[], None);
    assert_eq!(code, Some(3), "stderr: {stderr}");
    assert!(stderr.contains("no seed host answered"), "{stderr}");
    let rows = crate::util::parse_log(&stdout);
    let notes: Vec<&str> = rows.iter().map(|r| r.note.as_str()).collect();
    assert_eq!(
        notes,
        [
            "closed,retry-after:0.05",
            "closed,retry-after:0.2",
            "closed,retries-exhausted",
            "host-unreachable"
        ],
        "robots.txt asked 3 times, then the seed given up"
    );
    let out = dir.path().join("out");
    let summary = crate::util::read_summary(&out);
    assert_eq!(summary["outcome"], "nothing-answered", "{summary}");
    assert_eq!(summary["host_unreachable"], 1);
    assert_eq!(summary["robots_blocked"], 0, "not a robots block");
    assert!(!out.join("complete").exists());

    // The site is back: the same command resumes and fetches the pages.
    up.store(true, Ordering::SeqCst);
    let (code, stdout, stderr) = crate::util::crawl_dir(dir.path(), &args, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let pages: Vec<(u16, String)> = crate::util::parse_log(&stdout)
        .into_iter()
        .filter(|r| r.is_page())
        .map(|r| (r.status, r.url))
        .collect();
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert!(pages.iter().all(|(status, _)| *status == 200), "{pages:?}");
    assert_eq!(crate::util::read_summary(&out)["outcome"], "complete");
    assert!(out.join("complete").exists());
}

#[test]
fn a_robots_txt_that_fails_is_asked_again_and_one_that_never_answers_gives_its_host_up() {
    let fails = Arc::new(AtomicUsize::new(0));
    let f = Arc::clone(&fails);
    let web = TestWeb::start_with(2, |origins| {
        // 4 links to the host whose robots.txt never answers, 6 more pages here.
        let links: String = (0..4)
            .map(|i| format!("<a href={}/p{i}>x</a>", origins[1]))
            .chain((0..6).map(|i| format!("<a href=/q{i}>q</a>")))
            .collect();
        vec![
            HostSpec::new(move |req: &Request| match req.target.as_str() {
                "/robots.txt" if f.fetch_add(1, Ordering::SeqCst) < 1 => {
                    Response::text(500, "busy")
                }
                "/robots.txt" => Response::text(200, "User-agent: *\nDisallow: /private\n"),
                "/" => Response::html(format!("<a href=/private>p</a> <a href=/ok>ok</a> {links}")),
                // Bodies of their own: with one body, whichever page reached the archive first
                // would be the original and the others `duplicate`, varying from run to run.
                other => Response::html(format!("<p>page {other}</p>")),
            }),
            // Its robots.txt never answers but with errors: its pages are never asked for.
            HostSpec::new(|req: &Request| match req.target.as_str() {
                "/robots.txt" => Response::text(503, "down"),
                _ => Response::html("<p>never asked</p>"),
            }),
        ]
    })
    .unwrap();
    let run = crawl(
        &format!("{}\n", web.url(0, "/")),
        &[&SHORT_WAITS[..], &["--scope", "any"]].concat(),
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let robots: Vec<(u16, &str)> = run
        .rows
        .iter()
        .filter(|r| r.url == web.url(0, "/robots.txt"))
        .map(|r| (r.status, r.note.as_str()))
        .collect();
    assert_eq!(robots, [(500, "robots,retry-after:0.05"), (200, "robots")]);
    assert_eq!(lines_of(&run, "/ok"), [(200, "-")]);
    assert!(lines_of(&run, "/private").is_empty(), "robots.txt obeyed");
    let other: Vec<(u16, &str)> = run
        .rows
        .iter()
        .filter(|r| r.url.starts_with(&web.origin(1)))
        .map(|r| (r.status, r.note.as_str()))
        .collect();
    assert_eq!(
        other,
        [
            (503, "robots,retry-after:0.05"),
            (503, "robots,retry-after:0.2"),
            (503, "robots,retries-exhausted"),
            (0, "host-unreachable"),
            (0, "host-unreachable"),
            (0, "host-unreachable"),
            (0, "host-unreachable"),
        ]
    );
    let asked = web
        .log()
        .iter()
        .filter(|e| e.host == 1 && e.target != "/robots.txt")
        .count();
    assert_eq!(asked, 0);
    let summary = run.summary();
    assert_eq!(summary["host_unreachable"], 4, "{summary}");
    assert_eq!(summary["robots_blocked"], 1, "/private only: {summary}");
}

#[test]
fn a_dead_host_among_live_ones_is_parked_then_given_up_without_a_request_per_url() {
    const DEAD_URLS: usize = 12;
    let web = TestWeb::start_with(3, |origins| {
        let dead: String = (0..DEAD_URLS)
            .map(|i| format!("<a href={}/d{i}>d</a>", origins[2]))
            .collect();
        let live = |host: usize| {
            let dead = dead.clone();
            HostSpec::new(move |req: &Request| match req.target.as_str() {
                "/" if host == 0 => Response::html(format!(
                    "{dead} {}",
                    (0..20)
                        .map(|i| format!("<a href=/p{i}>p</a>"))
                        .collect::<String>()
                )),
                "/robots.txt" => Response::not_found(),
                _ => Response::html("<p>live</p>"),
            })
        };
        vec![
            live(0),
            live(1),
            // Answers robots.txt, then hangs up on every page: dead from its pages on.
            HostSpec::new(|req: &Request| match req.target.as_str() {
                "/robots.txt" => closing(Response::not_found()),
                _ => hang_up(),
            }),
        ]
    })
    .unwrap();
    let seeds = format!("{}\n{}\n", web.url(0, "/"), web.url(1, "/"));
    let run = crawl(&seeds, &[&SHORT_WAITS[..], &["--scope", "any"]].concat());
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // 5 failures in a row park it; the attempt after the park fails too: given up.
    let dead = web.origin(2);
    let asked = web
        .log()
        .iter()
        .filter(|e| e.host == 2 && e.target != "/robots.txt")
        .count();
    assert_eq!(asked, 6, "few requests, not one per URL");
    let unreachable = run
        .rows
        .iter()
        .filter(|r| r.url.starts_with(&dead) && r.note == "host-unreachable")
        .count();
    assert_eq!(
        unreachable,
        DEAD_URLS - 1,
        "all but the page that used its retries"
    );
    // The live hosts are unaffected.
    let live_ok = run
        .pages()
        .iter()
        .filter(|r| !r.url.starts_with(&dead) && r.status == 200)
        .count();
    assert_eq!(live_ok, 22);
    let summary = run.summary();
    assert_eq!(
        summary["host_unreachable"],
        DEAD_URLS as u64 - 1,
        "{summary}"
    );
    assert_eq!(summary["outcome"], "complete");
    // Complete: the next recrawl asks for every dead URL again (status 0 in fetched.tsv).
    let fetched = std::fs::read_to_string(run.out.join("fetched.tsv")).unwrap();
    let recorded = fetched.lines().filter(|l| l.contains(&dead)).count();
    assert_eq!(recorded, DEAD_URLS, "{fetched}");
}

/// One host, 20 good pages and the hostile ones among them (`testweb::hostile::MIXED`): a page
/// that keeps failing waits on its own, and its host serves the others meanwhile. Each failing
/// page is asked for the configured number of times (the server's own log says so), every
/// good page is fetched, and between two attempts of a failing page the host answered others.
#[test]
fn a_page_that_keeps_failing_waits_on_its_own_while_its_host_serves_the_others() {
    use testweb::hostile;
    let web = hostile::start().unwrap();
    let seed = format!("{}\n", web.url(hostile::MAIN, hostile::MIXED));
    let args = [
        "--retry-wait",
        "1s",
        "--timeout",
        "1",
        "--max-body",
        "1M",
        "--max-error-ratio",
        "1",
        "--delay-factor",
        "0",
    ];
    let run = crawl(&seed, &args);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The server logs a trickle when it notices the client gone (its next byte, a second
    // later): polled until the three attempts are there, or 10 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let trickles =
        |log: &[testweb::LogEntry]| log.iter().filter(|e| e.target == "/slow-loris").count();
    while trickles(&web.log()) < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut log = web.log();
    log.retain(|e| e.host == hostile::MAIN);
    log.sort_by_key(|e| e.start);
    let asked = |target: &str| -> Vec<usize> {
        (log.iter().enumerate())
            .filter(|(_, e)| e.target == target)
            .map(|(i, _)| i)
            .collect()
    };
    let good: Vec<usize> = (0..hostile::MIXED_GOOD)
        .flat_map(|i| asked(&format!("/good/{i}")))
        .collect();
    assert_eq!(good.len(), hostile::MIXED_GOOD, "each good page once");
    let good_ok = run
        .pages()
        .iter()
        .filter(|r| r.url.contains("/good/") && r.status == 200)
        .count();
    assert_eq!(good_ok, hostile::MIXED_GOOD);
    // A trickle that times out and a reset mid-body: transient, asked 1 + --retries (2) times.
    for (failing, kind) in [("/slow-loris", "timeout"), ("/reset", "reset")] {
        let attempts = asked(failing);
        assert_eq!(attempts.len(), 3, "{failing}: {attempts:?}");
        // Between its first two attempts the host served other pages, not just rested.
        assert!(
            attempts[1] - attempts[0] > 1,
            "{failing} asked again before any other page: {attempts:?}"
        );
        // Every good page was fetched before its last attempt.
        let last_good = good.iter().max().unwrap();
        assert!(
            last_good < &attempts[2],
            "{failing}: good pages at {good:?}, attempts at {attempts:?}"
        );
        // Each line notes the page's own wait: 1 s, then 4 s.
        let notes: Vec<(u16, &str)> = lines_of(&run, failing);
        let expected = ["retry-after:1", "retry-after:4", "retries-exhausted"]
            .map(|what| format!("{kind},{what}"));
        let expected: Vec<(u16, &str)> = expected.iter().map(|n| (0, n.as_str())).collect();
        assert_eq!(notes, expected);
    }
    // The others answered (cut, lying, looping, deep): asked once each, not retried.
    for answered in [
        "/endless-chunked",
        "/cl-long",
        "/gzip-bomb",
        "/loop/a",
        "/trap/",
    ] {
        assert_eq!(asked(answered).len(), 1, "{answered}");
    }
    assert_eq!(run.summary()["outcome"], "complete");
}
