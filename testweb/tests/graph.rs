//! The generated web: determinism, reachability, and that served pages link where `links` says.

mod common;

use std::collections::HashSet;
use std::time::Duration;
use testweb::TestWeb;
use testweb::{Graph, GraphSpec};

fn spec(hosts: usize, pages: usize, extra: usize, permille: u32) -> GraphSpec {
    GraphSpec {
        hosts,
        pages_per_host: pages,
        children: 3,
        extra_links: extra,
        cross_host_permille: permille,
        page_padding: 300,
        seed: 7,
    }
}

#[test]
fn paths_round_trip() {
    for p in [0, 1, 9, 10, 12345] {
        assert_eq!(Graph::page_of_path(&Graph::path(p)), Some(p));
    }
    assert_eq!(Graph::path(5), "/p/5.html");
    for bad in [
        "",
        "/p/0.html",
        "/p/05.html",
        "/p/.html",
        "/p/5.htm",
        "/p/5.html?x",
        "/p/5.html/",
        "/index.html",
    ] {
        assert_eq!(Graph::page_of_path(bad), None, "{bad}");
    }
}

#[test]
fn deterministic_from_seed() {
    let a = Graph::new(spec(4, 200, 6, 300));
    let b = Graph::new(spec(4, 200, 6, 300));
    let c = Graph::new(GraphSpec {
        seed: 8,
        ..spec(4, 200, 6, 300)
    });
    let origins: Vec<String> = (0..4)
        .map(|h| format!("http://127.0.0.1:{}", 4000 + h))
        .collect();
    let mut differ = false;
    for p in 0..200 {
        assert_eq!(a.links(2, p), b.links(2, p));
        assert_eq!(a.render(&origins, 2, p), b.render(&origins, 2, p));
        differ |= a.links(2, p) != c.links(2, p);
        let l = a.links(2, p);
        assert_eq!(l.len(), (1..=3).filter(|c| p * 3 + c < 200).count() + 6);
        assert!(l.iter().all(|&(h, q)| h < 4 && q < 200));
    }
    assert!(differ, "another seed gives another web");
    assert!(
        a.render(&origins, 1, 7)
            .starts_with("<!doctype html><html><head><title>host 1 page 7</title>")
    );
}

#[test]
fn bfs_reaches_everything() {
    // Tree only: all of one host's pages, nothing else; depth d holds 3^d pages.
    let tree = Graph::new(spec(3, 40, 0, 0));
    let all = |_: usize, _: usize| true;
    let r = tree.bfs(&[(1, 0)], &all, None);
    assert_eq!(r.len(), 40);
    assert!(r.keys().all(|&(h, _)| h == 1));
    assert_eq!(r.values().filter(|&&d| d == 2).count(), 9);
    assert_eq!(tree.bfs(&[(1, 0)], &all, Some(1)).len(), 4);
    assert_eq!(tree.bfs(&[(1, 0)], &all, Some(0)).len(), 1);
    // With cross links, one seed reaches the whole web.
    let web = Graph::new(spec(5, 60, 4, 300));
    assert_eq!(web.bfs(&[(0, 0)], &all, None).len(), 300);
    // Disallowed pages are neither counted nor expanded.
    let no_host_3 = |h: usize, _: usize| h != 3;
    let r = web.bfs(&web.roots(), &no_host_3, None);
    assert_eq!(r.len(), 240);
    let tree_no_1 = tree.bfs(&[(0, 0)], &|_, p| p != 1, None);
    assert_eq!(
        tree_no_1.len(),
        40 - 13,
        "page 1 and its subtree (1, 4-6, 13-21) are cut off"
    );
}

/// Resolves the URL spellings the generator uses (a deliberately small RFC 3986 subset).
fn resolve(web: &TestWeb, host: usize, base: &str, href: &str) -> (usize, usize) {
    let href = href.split('#').next().unwrap();
    let lower = href.to_ascii_lowercase();
    let (host, path) =
        if let Some(rest) = lower.strip_prefix("http://").or(lower.strip_prefix("//")) {
            let (hp, path) = rest.split_at(rest.find('/').unwrap());
            let port: u16 = hp.strip_prefix("127.0.0.1:").unwrap().parse().unwrap();
            (web.host_of_port(port).unwrap(), path.to_string())
        } else if href.starts_with('/') {
            (host, href.to_string())
        } else {
            let dir = &base[..=base.rfind('/').unwrap()];
            let joined = format!("{dir}{href}");
            let mut segs: Vec<&str> = Vec::new();
            for s in joined.split('/').skip(1) {
                match s {
                    ".." => drop(segs.pop()),
                    "." => {}
                    s => segs.push(s),
                }
            }
            (host, format!("/{}", segs.join("/")))
        };
    (
        host,
        Graph::page_of_path(&path).unwrap_or_else(|| panic!("{href} -> {path}")),
    )
}

/// URLs in attributes href/src/srcset, in document order.
fn extract(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("=") {
        let name = rest[..i].rsplit(' ').next().unwrap();
        let after = &rest[i + 1..];
        let q = after.chars().next().unwrap();
        if ["href", "src", "srcset"].contains(&name) && (q == '"' || q == '\'') {
            let val = &after[1..after[1..].find(q).unwrap() + 1];
            if name == "srcset" {
                out.extend(
                    val.split(',')
                        .map(|c| c.split_whitespace().next().unwrap().to_string()),
                );
            } else {
                out.push(val.to_string());
            }
        }
        rest = after;
    }
    out
}

#[test]
fn served_pages_link_where_links_says() {
    let graph = Graph::new(spec(3, 30, 6, 300));
    let robots = |h: usize| (h == 2).then(|| "User-agent: *\nDisallow: /p/\n".to_string());
    let web = graph.start(Duration::ZERO, &robots).unwrap();
    let mut spellings = HashSet::new();
    for h in 0..3 {
        let mut c = common::Conn::open(web.port(h));
        for p in 0..30 {
            let path = Graph::path(p);
            let r = c.get(&path);
            assert_eq!(r.status, 200);
            let html = r.text();
            assert!(html.contains(&format!("<title>host {h} page {p}</title>")));
            let urls = extract(&html);
            let got: Vec<(usize, usize)> =
                urls.iter().map(|u| resolve(&web, h, &path, u)).collect();
            assert_eq!(got, graph.links(h, p), "host {h} page {p}:\n{html}");
            for u in &urls {
                let kind = match u.as_bytes() {
                    [b'H', ..] => "HTTP://",
                    [b'h', ..] => "http://",
                    [b'/', b'/', ..] => "//",
                    [b'/', ..] => "/",
                    [b'.', b'.', ..] => "..",
                    [b'.', ..] => ".",
                    _ => "relative",
                };
                spellings.insert(kind);
                if u.contains('#') {
                    spellings.insert("#");
                }
            }
            for tag in [
                "<a href",
                "<link rel=stylesheet href",
                "<img alt=\"\" src",
                "<iframe src",
                "srcset",
            ] {
                if html.contains(tag) {
                    spellings.insert(tag);
                }
            }
        }
        assert_eq!(c.get("/p/30.html").status, 404);
        assert_eq!(c.get("/p/0.html").status, 404);
        assert_eq!(c.get("/robots.txt").status, if h == 2 { 200 } else { 404 });
    }
    assert_eq!(
        common::get(web.port(2), "/robots.txt").text(),
        "User-agent: *\nDisallow: /p/\n"
    );
    assert_eq!(
        spellings.len(),
        13,
        "every spelling and element appears: {spellings:?}"
    );
    assert_eq!(web.request_count(), 3 * 33 + 1);
}

/// The ideal polite crawler on a web whose every host is a seed and whose pages are found long
/// before their host may be asked again: each host's chain, robots.txt and its pages, each
/// 100 ms and a 1 s rest between (the closed form 11 × 0.1 + 10 × 1.0 = 11.1 s for 10 pages).
/// A host answering slower ends later, and a factor of 0 leaves only the responses.
#[test]
fn the_ideal_crawler_of_a_seeded_web_is_each_hosts_chain() {
    let graph = Graph::new(spec(3, 10, 2, 0));
    let ms = Duration::from_millis;
    let ideal = graph.ideal(&graph.roots(), &|_| ms(100), 10.0);
    assert!((ideal.seconds - 11.1).abs() < 1e-6, "{ideal:?}");
    assert_eq!(ideal.requests, 3 * 11);
    let slow_host_2 = |h: usize| if h == 2 { ms(200) } else { ms(100) };
    let ideal = graph.ideal(&graph.roots(), &slow_host_2, 10.0);
    assert!((ideal.seconds - 22.2).abs() < 1e-6, "{ideal:?}");
    let ideal = graph.ideal(&graph.roots(), &|_| ms(100), 0.0);
    assert!((ideal.seconds - 1.1).abs() < 1e-6, "{ideal:?}");
}

/// A ring web: one seed; every page links its host's next page, two of its own and two of
/// other hosts', and each `/` the next host's `/`. Every page is reachable; the ideal crawler
/// meets each host only as pages are answered, so it ends later than the closed form, and
/// never before the last host's chain could have begun.
#[test]
fn a_ring_web_is_found_as_it_is_fetched() {
    let graph = Graph::new(spec(50, 10, 0, 0)).with_ring();
    assert_eq!(graph.roots(), vec![(0, 0)]);
    let links = graph.links(3, 0);
    assert_eq!(links.len(), 6, "{links:?}");
    assert_eq!((links[0], links[5]), ((3, 1), (4, 0)));
    assert!(links[1..3].iter().all(|&(h, _)| h == 3), "{links:?}");
    assert!(links[3..5].iter().all(|&(h, _)| h != 3), "{links:?}");
    assert_eq!(graph.links(3, 9).len(), 4, "the last page has no next");
    let reached = graph.bfs(&graph.roots(), &|_, _| true, None);
    assert_eq!(reached.len(), 500);
    let ideal = graph.ideal(&graph.roots(), &|_| Duration::from_millis(100), 10.0);
    assert_eq!(ideal.requests, 550);
    assert!(ideal.seconds > 11.1 + 0.2, "found late: {ideal:?}");
}
