//! Page requisites (`--requisites`): what a page at the last depth needs to render is fetched
//! one hop past `--max-depth` (a stylesheet's imports and `url()`s too, a few hops further),
//! on the scope's hosts, or with `any` on others; their own links are not followed; the URL
//! log notes `requisite`. CSS links are read from stylesheets, `<style>` and `style=`.

use crate::util::{crawl, crawl_dir, is_page_target, parse_log};
use std::collections::BTreeSet;
use testweb::{HostSpec, Response, TestWeb};

/// A site whose page `/deep`, at depth 1, has requisites on its own host (an image, a
/// stylesheet importing another that names a font, a frame, a `style` attribute's image, a
/// `<style>`'s import) and on a second, CDN-like host (an image, a stylesheet with an image, a
/// frame with an image of its own).
fn site() -> TestWeb {
    TestWeb::start_with(2, |origins| {
        let cdn = origins[1].clone();
        let deep = format!(
            r#"<html><head><link rel=stylesheet href=/main.css><link rel=stylesheet href="{cdn}/cdn.css">
            <style>@import url("/inline.css"); /* url(/commented.png) */</style></head>
            <body><a href=/beyond>next</a><img src=/img.png alt=""><img src="{cdn}/cdn.png" alt="">
            <div style="background: url('/styled.png')">x</div>
            <iframe src=/frame.html></iframe><iframe src="{cdn}/embed.html"></iframe></body></html>"#
        );
        let home = move |req: &testweb::Request| match req.target.as_str() {
            "/" => Response::html(r#"<a href="/deep">deep</a>"#),
            "/deep" => Response::html(deep.clone()),
            "/main.css" => css(r#"@import "more.css"; body { background: url(/bg.png) }"#),
            "/more.css" => css(
                r#"@font-face { font-family: F; src: url("fonts/f.woff2") format("woff2") }
                a { background: url(data:image/png;base64,AAAA); content: "url(/string.png)" }"#,
            ),
            "/inline.css" => css("b { background: url(inline.png) }"),
            "/frame.html" => Response::html(r#"<a href=/from-frame>x</a><img src=/frame-img.png>"#),
            "/img.png" | "/bg.png" | "/styled.png" | "/inline.png" => image(),
            "/fonts/f.woff2" => Response::new(200, "font/woff2", b"wOF2".to_vec()),
            _ => Response::not_found(),
        };
        let cdn_host = |req: &testweb::Request| match req.target.as_str() {
            "/cdn.css" => css("a { background: url(/cdn-bg.png) }"),
            "/embed.html" => Response::html(r#"<img src=/embed-img.png><a href=/embed-link>x</a>"#),
            "/cdn.png" | "/cdn-bg.png" => image(),
            _ => Response::not_found(),
        };
        vec![HostSpec::new(home), HostSpec::new(cdn_host)]
    })
    .unwrap()
}

fn css(text: &str) -> Response {
    Response::new(200, "text/css; charset=utf-8", text.as_bytes().to_vec())
}

fn image() -> Response {
    Response::new(200, "image/png", b"\x89PNG".to_vec())
}

/// The pages each host was asked for.
fn asked(web: &TestWeb, host: usize) -> BTreeSet<String> {
    (web.log().into_iter())
        .filter(|e| e.host == host && is_page_target(&e.target))
        .map(|e| e.target)
        .collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|p| p.to_string()).collect()
}

/// What a crawl of the site asked of each host, and its URL log's path, depth and note
/// for the first host's pages.
type Crawled = (
    BTreeSet<String>,
    BTreeSet<String>,
    Vec<(String, u32, String)>,
);

/// Crawls the site with `args` (and `--max-depth 1` unless they say otherwise).
fn crawl_site(args: &[&str]) -> Crawled {
    let web = site();
    let mut all = vec!["--delay-factor", "0"];
    if !args.contains(&"--max-depth") {
        all.extend(["--max-depth", "1"]);
    }
    all.extend(args);
    let run = crawl(&format!("{}\n", web.url(0, "/")), &all);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let origin = web.origin(0);
    let rows = (run.pages().into_iter())
        .filter_map(|r| {
            let path = r.url.strip_prefix(&origin)?;
            Some((path.to_owned(), r.depth, r.note.clone()))
        })
        .collect();
    let asked = (asked(&web, 0), asked(&web, 1));
    web.shutdown();
    (asked.0, asked.1, rows)
}

/// Everything `/deep` needs on its own host, and what its stylesheets import and name.
const REQUISITES: [&str; 9] = [
    "/main.css",
    "/more.css",
    "/fonts/f.woff2",
    "/bg.png",
    "/inline.css",
    "/inline.png",
    "/img.png",
    "/styled.png",
    "/frame.html",
];

#[test]
fn requisites_of_the_last_depth_are_fetched_and_their_links_are_not_followed() {
    let (home, cdn, rows) = crawl_site(&[]);
    let mut want = set(&["/", "/deep"]);
    want.extend(set(&REQUISITES));
    assert_eq!(
        home, want,
        "not /beyond, nor the frame's links, nor a commented url()"
    );
    assert!(cdn.is_empty(), "another host is out of --scope: {cdn:?}");
    for (path, depth, note) in &rows {
        let requisite = REQUISITES.contains(&path.as_str());
        assert_eq!(
            note == "requisite",
            requisite,
            "{path} at depth {depth}: {note:?}"
        );
        assert!(*depth <= 4, "{path} at depth {depth}");
    }
    let depth = |p: &str| rows.iter().find(|r| r.0 == p).map(|r| r.1);
    assert_eq!(
        (
            depth("/img.png"),
            depth("/more.css"),
            depth("/fonts/f.woff2")
        ),
        (Some(2), Some(3), Some(4))
    );
}

#[test]
fn requisites_off_is_the_depth_limit_of_links() {
    let (home, cdn, rows) = crawl_site(&["--requisites", "off"]);
    assert_eq!(home, set(&["/", "/deep"]));
    assert!(cdn.is_empty());
    assert!(rows.iter().all(|(_, _, note)| note != "requisite"));
}

#[test]
fn requisites_any_fetches_other_hosts_without_following_their_pages_links() {
    let (home, cdn, _) = crawl_site(&["--requisites", "any"]);
    let mut want = set(&["/", "/deep"]);
    want.extend(set(&REQUISITES));
    assert_eq!(home, want);
    assert_eq!(
        cdn,
        set(&["/cdn.css", "/cdn-bg.png", "/cdn.png", "/embed.html"]),
        "a stylesheet's links are followed; the embedded page's are not"
    );
}

/// A stylesheet found within the depth is read like any: its links are requisites.
#[test]
fn a_stylesheet_within_the_depth_leads_to_its_urls() {
    let (home, _, rows) = crawl_site(&["--max-depth", "5"]);
    for path in ["/beyond", "/from-frame", "/frame-img.png", "/fonts/f.woff2"] {
        let row = rows.iter().find(|r| r.0 == path);
        assert!(home.contains(path), "{path} not asked for: {row:?}");
    }
    assert!(rows.iter().all(|(_, _, note)| note != "requisite"));
}

/// A recrawl asks for the requisites the last crawl fetched as known URLs (not dropped as past
/// the depth and found again as new): their outcome is noted, `unchanged` here.
#[test]
fn a_recrawl_asks_again_for_the_requisites_it_fetched() {
    let web = site();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), web.url(0, "/") + "\n").unwrap();
    let args = ["--max-depth", "1", "--delay-factor", "0"];
    let (code, first, stderr) = crawl_dir(dir.path(), &args, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let (code, second, stderr) = crawl_dir(dir.path(), &args, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let note = |log: &str, path: &str| {
        let url = web.url(0, path);
        let rows = parse_log(log);
        rows.into_iter().find(|r| r.url == url).map(|r| r.note)
    };
    for path in ["/img.png", "/fonts/f.woff2"] {
        assert_eq!(note(&first, path).as_deref(), Some("requisite"), "{path}");
        assert_eq!(note(&second, path).as_deref(), Some("unchanged"), "{path}");
    }
    web.shutdown();
}
