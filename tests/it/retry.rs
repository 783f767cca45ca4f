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
