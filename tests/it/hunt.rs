//! `crawl --find TEXT`: the keyword hunt against a loopback test web whose pages are known, so
//! the page, the line and what the server was asked for can be checked exactly.

use crate::util::crawl_unparsed;
use testweb::{Graph, GraphSpec, HostSpec, Response, TestWeb};

/// Serves `graph` (one host) with `line` inserted after `<body>` on page `planted`. Returns the
/// web and the planted line's number in that page.
fn web_with(graph: &Graph, planted: usize, line: &'static str) -> (TestWeb, usize) {
    let mut line_no = 0;
    let web = TestWeb::start_with(1, |origins| {
        let pages = graph.handler(0, origins, None);
        let plant = move |html: String| html.replacen("<body>", &format!("<body>\n{line}\n"), 1);
        line_no = plant(graph.render(origins, 0, planted))
            .lines()
            .position(|l| l == line)
            .unwrap()
            + 1;
        let target = Graph::path(planted);
        vec![HostSpec::new(move |req| {
            let response = pages(req);
            if req.target != target {
                return response;
            }
            match response.body {
                testweb::Body::Bytes(b) => {
                    Response::html(plant(String::from_utf8(b).unwrap()).into_bytes())
                }
                _ => unreachable!("generated pages are bytes"),
            }
        })]
    })
    .unwrap();
    (web, line_no)
}

/// Pages the server was asked for (robots.txt left out).
fn pages_requested(web: &TestWeb) -> Vec<usize> {
    web.log()
        .iter()
        .filter(|e| crate::util::is_page_target(&e.target))
        .map(|e| Graph::page_of_path(&e.target).unwrap())
        .collect()
}

/// A chain: page p links only to p + 1, so page p is at depth p.
fn chain(pages: usize) -> Graph {
    Graph::new(GraphSpec {
        pages_per_host: pages,
        children: 1,
        extra_links: 0,
        page_padding: 100,
        ..GraphSpec::default()
    })
}

#[test]
fn finds_the_page_and_stops_without_crawling_the_rest() {
    let graph = Graph::new(GraphSpec {
        pages_per_host: 400,
        children: 3,
        extra_links: 2,
        cross_host_permille: 0,
        page_padding: 300,
        seed: 5,
        ..GraphSpec::default()
    });
    let depths = graph.bfs(&[(0, 0)], &|_, _| true, None);
    let (&(_, planted), _) = depths.iter().find(|&(_, &d)| d == 3).unwrap();
    let line = "<p>the answer is Xylophone42, said the page</p>";
    let (web, line_no) = web_with(&graph, planted, line);
    let log = tempfile::NamedTempFile::new().unwrap();
    let run = crawl_unparsed(
        &format!("{}\n", web.url(0, "/")),
        &[
            "--find",
            "Xylophone42",
            "-j",
            "1",
            "--delay-factor",
            "0",
            "--log",
            log.path().to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let url = web.url(0, &Graph::path(planted));
    assert_eq!(run.stdout, format!("{url}\t{line_no}\t{line}\n"));
    assert_eq!(run.summary()["ending"], "found");

    let requested = pages_requested(&web);
    assert!(requested.contains(&planted));
    let deeper: Vec<_> = requested.iter().filter(|p| depths[&(0, **p)] > 3).collect();
    assert!(
        deeper.is_empty(),
        "pages beyond the find's depth: {deeper:?}"
    );
    assert!(
        requested.len() < 400 / 2,
        "{} of 400 pages fetched",
        requested.len()
    );
    // The URL log went to --log, and the pages were archived as in any crawl.
    let logged = std::fs::read_to_string(log.path()).unwrap();
    assert_eq!(
        crate::util::parse_log(&logged)
            .iter()
            .filter(|r| r.is_page())
            .count(),
        requested.len()
    );
    assert!(std::fs::read_dir(run.out.join("warc")).unwrap().count() > 0);
}

#[test]
fn gives_up_at_depth_5_counting_the_start_page_as_1() {
    // The text is on page 5, one hop beyond the default limit.
    let (web, _) = web_with(&chain(10), 5, "<p>Needle</p>");
    let run = crawl_unparsed(
        &format!("{}\n", web.url(0, "/")),
        &["--find", "Needle", "--delay-factor", "0"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "", "stdout carries only a result");
    assert!(
        run.stderr
            .contains("\"Needle\" not found in 5 pages, up to depth 4"),
        "{}",
        run.stderr
    );
    let mut requested = pages_requested(&web);
    requested.sort_unstable();
    assert_eq!(requested, [0, 1, 2, 3, 4]);

    // --max-depth still overrides the default.
    let run = crawl_unparsed(
        &format!("{}\n", web.url(0, "/")),
        &[
            "--find",
            "Needle",
            "--delay-factor",
            "0",
            "--max-depth",
            "5",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stdout.starts_with(&web.url(0, "/p/5.html")),
        "{}",
        run.stdout
    );
}

#[test]
fn ignore_case_finds_what_the_exact_search_does_not() {
    let (web, line_no) = web_with(&chain(4), 2, "<p>a NeedleWord here</p>");
    let seeds = format!("{}\n", web.url(0, "/"));
    let exact = crawl_unparsed(&seeds, &["--find", "needleword", "--delay-factor", "0"]);
    assert_eq!(exact.code, 0, "stderr: {}", exact.stderr);
    assert_eq!(exact.stdout, "");
    assert!(
        exact.stderr.contains("not found in 4 pages"),
        "{}",
        exact.stderr
    );

    let folded = crawl_unparsed(
        &seeds,
        &["--find", "needleword", "-i", "--delay-factor", "0", "-q"],
    );
    assert_eq!(folded.code, 0, "stderr: {}", folded.stderr);
    assert_eq!(
        folded.stdout,
        format!(
            "{}\t{line_no}\t<p>a NeedleWord here</p>\n",
            web.url(0, "/p/2.html")
        )
    );
    assert_eq!(folded.stderr, "", "-q prints nothing but errors");
}

#[test]
fn plain_text_pages_are_searched_and_a_long_text_is_a_usage_error() {
    let web = TestWeb::start(vec![HostSpec::new(|req| match req.target.as_str() {
        "/" => Response::html("<a href=\"/notes.txt\">notes</a>"),
        "/notes.txt" => Response::text(200, "one\ntwo\tneedle\n"),
        _ => Response::not_found(),
    })])
    .unwrap();
    let seeds = format!("{}\n", web.url(0, "/"));
    let run = crawl_unparsed(&seeds, &["--find", "needle", "--delay-factor", "0"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        format!("{}\t2\ttwo\\tneedle\n", web.url(0, "/notes.txt"))
    );

    let requests = web.request_count();
    let too_long = "x".repeat(101);
    let run = crawl_unparsed(&seeds, &["--find", &too_long]);
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("101 characters"), "{}", run.stderr);
    assert_eq!(
        web.request_count(),
        requests,
        "nothing is fetched on bad usage"
    );
}

/// A hunt reads HTML and text only: page requisites (images, stylesheets, fonts) go no further
/// than its links (`--requisites off`) unless `--requisites` asks for them: none past its
/// depth, where any other crawl fetches them one hop (and a stylesheet's a few more).
#[test]
fn a_hunt_fetches_no_page_requisites_unless_asked() {
    let web = TestWeb::start(vec![HostSpec::new(|req| match req.target.as_str() {
        "/" => Response::html(
            "<link rel=stylesheet href=/style.css><img src=/logo.png>\
             <a href=/next>next</a>",
        ),
        "/style.css" => Response::new(
            200,
            "text/css",
            "@font-face { src: url(/font.woff2) } body { background: url(/bg.png) }",
        ),
        "/next" => Response::html("<img src=/photo.jpg><p>no luck</p>"),
        "/robots.txt" => Response::not_found(),
        _ => Response::new(200, "image/png", vec![0u8; 64]),
    })])
    .unwrap();
    let seeds = format!("{}\n", web.url(0, "/"));
    let hunt = [
        "--find",
        "needle",
        "--delay-factor",
        "0",
        "--max-depth",
        "1",
    ];
    let asked = |web: &TestWeb, since: usize| -> Vec<String> {
        let mut targets: Vec<String> = web.log()[since..]
            .iter()
            .filter(|e| e.target != "/robots.txt" && e.target != "/sitemap.xml")
            .map(|e| e.target.clone())
            .collect();
        targets.sort();
        targets
    };
    let run = crawl_unparsed(&seeds, &hunt);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("not found"), "{}", run.stderr);
    // Depth 0 and 1 only: the page at depth 1's image and the stylesheet's font and
    // background (depth 2) are not fetched.
    assert_eq!(asked(&web, 0), ["/", "/logo.png", "/next", "/style.css"]);
    // Asked for, they are fetched as in any crawl.
    let before = web.request_count();
    let run = crawl_unparsed(&seeds, &[&hunt[..], &["--requisites", "scope"]].concat());
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let with = asked(&web, before);
    for requisite in ["/photo.jpg", "/font.woff2", "/bg.png"] {
        assert!(with.iter().any(|t| t == requisite), "{requisite}: {with:?}");
    }
}
