//! robots.txt as site owners write it, end to end: the real binary against a loopback host.

use crate::util::{assert_same_set, crawl, warc_text};
use testweb::{HostSpec, Response, TestWeb};

#[test]
fn a_user_agent_line_with_extra_words_still_heads_our_group() {
    // `crawl extra words` is no RFC 9309 product token, but it names us (the default User-Agent
    // is `crawl/VERSION`, so the token is `crawl`): the group must apply, not fall away.
    let web = TestWeb::start(vec![HostSpec::new(|req| match req.target.as_str() {
        "/robots.txt" => Response::text(200, "User-agent: crawl extra words\nDisallow: /private/\n"),
        "/" => Response::html(
            r#"<a href="/private/a">a</a><a href="/private/">dir</a><a href="/public">p</a><a href="/privateer">q</a>"#,
        ),
        "/public" => Response::html(r#"<a href="/private/b">b</a><a href="/">home</a>"#),
        "/privateer" => Response::html("not under /private/"),
        _ => Response::html("a page robots.txt should have kept us from"),
    })])
    .unwrap();
    let run = crawl(&format!("{}\n", web.url(0, "/")), &["--delay-factor", "0"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    let requested: Vec<String> = web.log().iter().map(|e| e.target.clone()).collect();
    let private: Vec<&String> = requested
        .iter()
        .filter(|t| t.starts_with("/private/"))
        .collect();
    assert!(
        private.is_empty(),
        "disallowed pages requested: {private:?}"
    );
    assert_same_set(
        "requests",
        // robots.txt names no sitemap, so the seed's host is asked for /sitemap.xml.
        &["/robots.txt", "/sitemap.xml", "/", "/public", "/privateer"].map(String::from),
        &requested,
    );
    assert_eq!(run.summary()["robots_blocked"], 3, "{}", run.summary());
}

/// A robots.txt that moved is read where it moved to, through up to five redirects (RFC 9309
/// §2.3.1.2), alike on the event loop (the default) and on blocking workers (`-j`); a sixth
/// redirect is one not followed, which allows everything.
#[test]
fn a_moved_robots_txt_is_followed_five_redirects_deep_on_the_loop_and_on_workers() {
    // Where the robots.txt is after `n` redirects.
    let hop = |n: usize| match n {
        0 => "/robots.txt".to_owned(),
        n => format!("/moved/{n}/robots.txt"),
    };
    for (hops, obeyed) in [(2, true), (5, true), (6, false)] {
        let web = TestWeb::start(vec![HostSpec::new(move |req| {
            let target = req.target.as_str();
            match (0..hops).find(|&n| hop(n) == target) {
                Some(n) => return Response::redirect(301, &hop(n + 1)),
                None if target == hop(hops) => {
                    return Response::text(200, "User-agent: *\nDisallow: /private/\n");
                }
                None => {}
            }
            match target {
                "/" => Response::html(r#"<a href="/private/a">a</a><a href="/public">p</a>"#),
                _ => Response::html("a page"),
            }
        })])
        .unwrap();
        for jobs in [None, Some("2")] {
            let mut args = vec!["--delay-factor", "0", "--no-sitemaps"];
            args.extend(jobs.iter().flat_map(|j| ["-j", j]));
            let before = web.log().len();
            let run = crawl(&format!("{}\n", web.url(0, "/")), &args);
            assert_eq!(run.code, 0, "stderr: {}", run.stderr);
            let log = web.log();
            let requested: Vec<String> = log[before..].iter().map(|e| e.target.clone()).collect();
            let private = requested.iter().any(|t| t.starts_with("/private/"));
            assert_eq!(!private, obeyed, "{hops} hops, -j {jobs:?}: {requested:?}");
            let hops_asked = requested
                .iter()
                .filter(|t| t.ends_with("robots.txt"))
                .count();
            assert_eq!(
                hops_asked,
                hops.min(5) + 1,
                "{hops} hops, -j {jobs:?}: {requested:?}"
            );
            // The robots.txt that answered is archived under the URL that answered it, the
            // last one asked for (the moved one, or the sixth redirect's 301).
            let warc = warc_text(&run.out, ".warc.zst");
            let answered = web.url(0, &hop(hops.min(5)));
            let record = warc
                .split("WARC/1.1\r\n")
                .find(|r| r.contains("WARC-Type: response") && r.contains("robots.txt"))
                .unwrap_or_else(|| panic!("no robots.txt response record: {warc}"));
            assert!(
                record.contains(&format!("WARC-Target-URI: {answered}\r\n")),
                "{hops} hops, -j {jobs:?}: {record}"
            );
            assert_eq!(
                record.contains("Disallow: /private/"),
                obeyed,
                "{hops} hops, -j {jobs:?}: {record}"
            );
        }
    }
}
