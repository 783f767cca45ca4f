//! robots.txt as site owners write it, end to end: the real binary against a loopback host.

use crate::util::{assert_same_set, crawl};
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
