//! Property fuzzing of the parts that read hostile text: the URL normalizer and filter, the
//! link extractor, robots.txt, and the seed parser. Inputs are generated from grammars of the
//! nasty cases (percent-escapes, odd hosts, session IDs, broken tags, entities, charsets,
//! wildcards, garbage bytes) mixed with arbitrary bytes. Each property checks: no panic,
//! results that keep their promises (canonical forms are fixed points, link caps hold), and
//! bounded allocation: a counting allocator measures each call's peak heap against a budget
//! proportional to its input.
//!
//! CI runs `FUZZ_CASES` cases per property (default 200, seconds). For a long run:
//! `FUZZ_CASES=200000 cargo test --release --test it fuzz::` (BENCHMARKS.md has the figures).
//! cargo-fuzz targets over the same functions are in `fuzz/` (nightly only).

use crawl::RobotsRules;
use crawl::extract_links;
use crawl::{Filter, Scope, canonicalize, is_canonical};
use proptest::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use url::Url;

/// Counts live and peak heap bytes, and allocations, per thread (the functions under test are
/// single-threaded).
struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|live| {
            live.set(live.get() + layout.size());
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
        });
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(layout.size())));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the peak heap bytes it added.
fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, PEAK.with(Cell::get) - base)
}

/// Runs `f` and returns its result with the number of allocations it made on this thread.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = ALLOCATIONS.with(Cell::get);
    let out = f();
    (out, ALLOCATIONS.with(Cell::get) - base)
}

/// One loopback fetch of a page with `extra_headers` more headers and a body of `body_len`
/// bytes (framed by its Content-Length), and the allocations it made on this thread.
fn fetch_allocations(fetcher: &crawl::Fetcher, extra_headers: usize, body_len: usize) -> usize {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/page", listener.local_addr().unwrap());
    let mut response = format!("HTTP/1.1 200 OK\r\nContent-Length: {body_len}\r\n");
    for i in 0..extra_headers {
        response += &format!("X-Header-{i}: value number {i}\r\n");
    }
    response += "Connection: close\r\n\r\n";
    let body = "x".repeat(body_len);
    let server = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).unwrap();
        socket.write_all(response.as_bytes()).unwrap();
        socket.write_all(body.as_bytes()).unwrap();
    });
    let (fetched, n) = allocations(|| fetcher.get(&url).unwrap());
    server.join().unwrap();
    assert_eq!(fetched.headers.len(), 2 + extra_headers);
    assert_eq!(fetched.body.len(), body_len);
    n
}

/// A response's headers are kept in one string and one vector (`fetch::conn::Headers`): a
/// fetch allocates as much for 40 headers as for 2 (it was two Strings per header).
#[test]
fn a_fetch_allocates_the_same_for_many_headers_as_for_few() {
    use crawl::{FetchConfig, Fetcher};
    let fetcher = Fetcher::new(&FetchConfig::loopback("crawl-test"));
    fetch_allocations(&fetcher, 0, 5); // the first fetch sets up what later ones reuse
    let few = fetch_allocations(&fetcher, 0, 5);
    let many = fetch_allocations(&fetcher, 40, 5);
    assert!(
        many <= few + 2,
        "{few} allocations with 2 headers, {many} with 42"
    );
}

/// A body with a Content-Length is read into room reserved for all of it
/// (`fetch::conn::read_body`): as many allocations for 300 KB as for 5 bytes (growing it as
/// read took one more, and one copy, per doubling).
#[test]
fn a_body_of_known_length_is_read_into_one_allocation() {
    use crawl::{FetchConfig, Fetcher};
    let fetcher = Fetcher::new(&FetchConfig::loopback("crawl-test"));
    fetch_allocations(&fetcher, 0, 5);
    let small = fetch_allocations(&fetcher, 0, 5);
    let large = fetch_allocations(&fetcher, 0, 300_000);
    assert!(
        large <= small + 1,
        "{small} allocations for 5 bytes, {large} for 300,000"
    );
}

/// The scope and trap checks of a canonical link (`Filter::check_canonical`, run for every
/// link) allocate nothing, a path deep enough for the repeated-segment guard included.
#[test]
fn checking_a_canonical_link_allocates_nothing() {
    use crawl::{Filter, Scope};
    let seed = Url::parse("http://127.0.0.1:8080/").unwrap();
    for scope in [Scope::Any, Scope::Host] {
        let filter = Filter::new(scope, std::slice::from_ref(&seed));
        let link = "http://127.0.0.1:8080/std/collections/hash_map/struct.HashMap.html?x=1";
        assert_eq!(filter.check_canonical(link, 3), Ok(()));
        let (result, n) = allocations(|| filter.check_canonical(link, 3));
        assert_eq!((result, n), (Ok(()), 0), "{scope:?}");
        let trap = "http://127.0.0.1:8080/a/b/a/b/a/b/a/b/a/b";
        let (result, n) = allocations(|| filter.check_canonical(trap, 3));
        assert_eq!(n, 0, "{scope:?}");
        assert!(result.is_err(), "{scope:?}");
    }
}

/// A documentation-like page of `links` distinct links, about 250 bytes a link.
fn page_of_links(links: usize) -> String {
    let mut body = String::from("<!doctype html><html><head><title>t</title></head><body>");
    for i in 0..links {
        body += &format!(
            "<p class=\"docblock item-table\">Some words about the item, then its link: \
             <a href=\"../../std/module{i}/struct.Item{i}.html#method.name\">Item{i}</a></p>\n"
        );
    }
    body + "</body></html>"
}

/// A page's links are gathered into room sized from the page (`url::extract`): one String per
/// link (`extract_links` copies each out of the page's text, where the crawler reads them in
/// place) and a few allocations per page (among them that text, the order of the links and the
/// map of texts found), not a reallocation and a copy of every link found so far each time the
/// list doubles.
#[test]
fn extracting_links_allocates_once_per_link_and_a_few_times_per_page() {
    let page = Url::parse("http://127.0.0.1:8080/std/collections/index.html").unwrap();
    let links = 200;
    let body = page_of_links(links);
    let (extracted, n) = allocations(|| crawl::extract_links(body.as_bytes(), &page, None, 20_000));
    assert_eq!(extracted.links.len(), links);
    assert!(
        n <= links + 13,
        "{n} allocations for {links} links ({} bytes)",
        body.len()
    );
}

/// The crawler reads a page's links (`page_links`) with none allocated per link: canonical text
/// is joined onto the end of one buffer sized from the page, so 200 links cost no more
/// allocations than 20.
#[test]
fn the_crawler_reads_a_pages_links_in_the_same_few_allocations_whatever_their_number() {
    use crawl::internals::page_links;
    let page = Url::parse("http://127.0.0.1:8080/std/collections/index.html").unwrap();
    let read = |links| {
        let body = page_of_links(links);
        let (got, n) = allocations(|| page_links(body.as_bytes(), &page, None, 20_000, "crawl"));
        assert_eq!(got.order.len(), links);
        n
    };
    let (few, many) = (read(20), read(200));
    assert!(
        many <= few,
        "{few} allocations for 20 links, {many} for 200"
    );
    assert!(many <= 13, "{many} allocations for a page of 200 links");
}

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Pieces of URLs, hostile ones included.
fn url_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "http://",
            "https://",
            "HTTP://",
            "ftp://",
            "javascript:",
            "//",
            "/",
            "./",
            "../",
            "?",
            "#",
            "&",
            "=",
            ";",
            ":",
            "@",
            "%",
            "%2e",
            "%2E%2e",
            "%7E",
            "%zz",
            "%41",
            "%00",
            "%C3%A9",
            "é",
            "ß",
            "\u{202e}",
            "xn--",
            "127.0.0.1",
            "0x7f.1",
            "2130706433",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "example.com.",
            "EXAMPLE.com",
            ":80",
            ":443",
            ":0",
            ":99999",
            "jsessionid=",
            "PHPSESSID=",
            "sid=0123456789abcdef",
            "ASPSESSIONIDX=",
            "\\",
            " ",
            "\t",
            "\n",
            "a",
            "b",
            "..",
            ".",
            "~",
            "*",
            "$",
        ])
        .prop_map(str::to_owned),
        "[a-z0-9%./?=&;#]{0,12}",
        any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ]
}

fn url_text() -> impl Strategy<Value = String> {
    prop::collection::vec(url_piece(), 0..24).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn normalizer(text in url_text(), relative in url_text()) {
        let base = Url::parse("http://h.test/a/b?q").unwrap();
        let filter = Filter::new(Scope::Host, std::slice::from_ref(&base));
        for input in [Url::parse(&text), base.join(&relative), base.join(&text)] {
            let Ok(url) = input else { continue };
            let len = url.as_str().len();
            let (canonical, heap) = peak_heap(|| canonicalize(url));
            prop_assert!(heap <= 16 * len + 4096, "{heap} bytes for {len}");
            let _ = filter.check(&canonical, 3);
            // Not for other schemes: the url crate does not re-read some `file:` URLs as
            // written (fuzz/ found `file://b1..m-t/e://E` → `file:///e://E`); they are filtered.
            if matches!(canonical.scheme(), "http" | "https") {
                let again = canonicalize(Url::parse(canonical.as_str()).unwrap());
                prop_assert_eq!(again.as_str(), canonical.as_str(), "not a fixed point");
            }
        }
    }

    #[test]
    fn extractor(html in html_text(), charset in prop::option::of(prop::sample::select(
        vec!["utf-8", "iso-8859-1", "windows-1251", "shift_jis", "utf-16", "bogus", ""],
    ))) {
        let page = Url::parse("http://h.test/dir/page.html").unwrap();
        let (out, heap) = peak_heap(|| extract_links(&html, &page, charset, 50));
        prop_assert!(out.links.len() <= 50);
        prop_assert!(heap <= 8 * html.len() + (6 << 20), "{heap} bytes for {}", html.len());
    }

    #[test]
    fn stylesheet(css in css_text(), charset in prop::option::of(prop::sample::select(
        vec!["utf-8", "iso-8859-1", "utf-16", "bogus"],
    ))) {
        use crawl::internals::stylesheet_links;
        let sheet = Url::parse("http://h.test/css/site.css").unwrap();
        let (out, heap) = peak_heap(|| stylesheet_links(&css, &sheet, charset, 50));
        prop_assert!(out.order.len() <= 50);
        prop_assert_eq!(out.requisite.len(), out.distinct.len());
        prop_assert!(heap <= 8 * css.len() + (1 << 20), "{heap} bytes for {}", css.len());
    }

    #[test]
    fn robots(text in robots_text(), status in prop::sample::select(vec![200u16, 301, 404, 503]),
              paths in prop::collection::vec(url_text(), 1..8)) {
        let (rules, heap) = peak_heap(|| RobotsRules::from_response("crawl", status, &text));
        prop_assert!(heap <= 64 * text.len() + (1 << 20), "{heap} bytes for {}", text.len());
        prop_assert!(rules.is_allowed("/robots.txt"));
        for path in paths {
            let path = format!("/{path}");
            let (_, heap) = peak_heap(|| rules.is_allowed(&path));
            prop_assert!(heap <= 64 * path.len() + 65536, "{heap} bytes for {path:?}");
        }
        let _ = rules.crawl_delay();
    }

    #[test]
    fn seeds(text in prop::collection::vec(prop_oneof![
        url_text().prop_map(String::into_bytes),
        any::<Vec<u8>>(),
        Just(b"\r\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
    ], 0..12)) {
        let bytes = text.join(&b"\n"[..]);
        match crawl::parse_seeds("s.txt", &bytes) {
            Ok(seeds) => prop_assert!(seeds.iter().all(|u| u.scheme().starts_with("http"))),
            Err(e) => prop_assert!(e.to_string().contains("s.txt")),
        }
    }
}

/// HTML made of URL-bearing tags, broken markup, entities, charsets and raw bytes.
fn html_text() -> impl Strategy<Value = Vec<u8>> {
    let attr = (
        prop::sample::select(vec![
            "href", "src", "srcset", "action", "content", "poster", "data", "rel", "name", "style",
        ]),
        url_text(),
    )
        .prop_map(|(name, value)| format!(" {name}=\"{value}\""));
    let tag = (
        prop::sample::select(vec![
            "a", "area", "link", "img", "source", "script", "iframe", "form", "meta", "base",
            "video", "object", "div", "svg", "template", "noscript", "textarea", "!--", "?xml",
        ]),
        prop::collection::vec(attr, 0..4),
    )
        .prop_map(|(name, attrs)| format!("<{name}{}>", attrs.concat()).into_bytes());
    let piece = prop_oneof![
        4 => tag,
        1 => prop::sample::select(vec![
            "</a>", "</div>", "<", ">", "&amp;", "&#x0;", "&#99999999;", "&", "<![CDATA[",
            "<meta charset=windows-1251>", "<meta http-equiv=refresh content='0; url=/r'>",
            "<script>", "</script>", "<style>", "</noscript>", "-->", "\"", "'", "<a href=/x", "\u{0}",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => any::<Vec<u8>>(),
        1 => (0usize..300).prop_map(|n| b"<div>".repeat(n)),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}

/// CSS made of `url()`s, `@import`s, `image-set()`s, strings, comments, escapes, blocks
/// nested deep and raw bytes.
fn css_text() -> impl Strategy<Value = Vec<u8>> {
    let url = url_text().prop_flat_map(|u| {
        prop::sample::select(vec![
            format!("url({u})"),
            format!("url(\"{u}\")"),
            format!("url( '{u}' )"),
            format!("@import \"{u}\";"),
            format!("@import url({u}) screen;"),
            format!("image-set(\"{u}\" 1x, url({u}) 2x)"),
            format!("@namespace url({u});"),
        ])
    });
    let piece = prop_oneof![
        4 => url.prop_map(String::into_bytes),
        1 => prop::sample::select(vec![
            "a { background: ", "}", "{", "(", ")", "[", "]", ";", "/*", "*/", "\"", "'", "\\",
            "\\75 rl(", "u\\72l(x)", "url(", "@media screen {", "\n", "\u{0}", "\u{FEFF}",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => any::<Vec<u8>>(),
        1 => (0usize..300).prop_map(|n| b"{(".repeat(n)),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}

/// robots.txt made of real directives with odd values, odd lines and raw bytes.
fn robots_text() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        (
            prop::sample::select(vec![
                "User-agent",
                "user-AGENT",
                "Allow",
                "Disallow",
                "Crawl-delay",
                "Sitemap",
                "Host",
                "Noindex",
                "",
                "Disallow ",
            ]),
            prop::sample::select(vec![":", " : ", "", "::"]),
            prop_oneof![
                url_text(),
                prop::sample::select(vec![
                    "*",
                    "crawl",
                    "/",
                    "/*",
                    "*$",
                    "$",
                    "/a*b*c*d*e*f*g$",
                    "1e400",
                    "-1",
                    "NaN",
                    "0.5",
                    "18446744073709551616",
                    "/%2F",
                    "/%",
                    "/é",
                ])
                .prop_map(str::to_owned),
            ],
        )
            .prop_map(|(k, sep, v)| format!("{k}{sep}{v}").into_bytes()),
        any::<Vec<u8>>(),
        Just(b"# comment".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
    ];
    (
        prop::collection::vec(line, 0..40),
        prop::sample::select(vec!["\n", "\r\n", "\r"]),
    )
        .prop_map(|(lines, end)| lines.join(end.as_bytes()))
}

/// Web-like URLs: plain hosts (names or IPv4), ports, paths with escapes and `;` parameters,
/// queries, fragments; some spelled non-canonically (upper case, default ports, dot segments).
fn web_url() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["http://", "https://", "HTTP://"]),
        prop_oneof![
            "[a-z][a-z0-9-]{0,8}(\\.[a-z0-9-]{1,8}){0,2}\\.[a-z]{2,5}\\.?",
            "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
            "[A-Za-z]{1,8}\\.[A-Za-z]{2,4}",
        ],
        prop_oneof![
            Just(String::new()),
            Just(":80".to_owned()),
            Just(":443".to_owned()),
            "[:][1-9][0-9]{0,4}",
        ],
        prop::collection::vec(
            prop_oneof![
                "[a-zA-Z0-9._~!$&()*+,=:@-]{0,10}",
                Just(".".to_owned()),
                Just("..".to_owned()),
                "%[0-9A-Fa-f]{2}",
                Just(";jsessionid=12".to_owned()),
                Just(";v=2".to_owned()),
            ],
            0..6,
        ),
        prop_oneof![
            Just(String::new()),
            Just("?".to_owned()),
            "[?]([a-z0-9=&/?'-]|%[0-9A-Fa-f]{2}){1,12}",
            Just("?sid=0123456789abcdef&x=1".to_owned()),
        ],
        prop_oneof![Just(String::new()), "#[a-z]{0,4}"],
    )
        .prop_map(|(scheme, host, port, segments, query, fragment)| {
            format!(
                "{scheme}{host}{port}/{}{query}{fragment}",
                segments.join("/")
            )
        })
}

/// `is_canonical(s)` promises that `canonicalize` would give `s` back, so `crawl dedupe` may
/// take the checksum of the line as it is.
fn check_is_canonical(text: &str) -> Result<(), TestCaseError> {
    if is_canonical(text) {
        let url = Url::parse(text.trim());
        prop_assert!(url.is_ok(), "accepted but not a URL: {:?}", text);
        let canonical = canonicalize(url.unwrap());
        prop_assert_eq!(canonical.as_str(), text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn is_canonical_implies_a_fixed_point(text in url_text()) {
        check_is_canonical(&text)?;
    }

    #[test]
    fn is_canonical_implies_a_fixed_point_on_arbitrary_text(text in any::<String>()) {
        check_is_canonical(&text)?;
    }

    /// Sound on web-like spellings, and complete on their canonical forms but for the shapes
    /// it leaves to the parser by design (IDNA, IPv6, port 0, a bare `%`; not generated here).
    #[test]
    fn is_canonical_on_web_like_urls(text in web_url()) {
        check_is_canonical(&text)?;
        if let Ok(url) = Url::parse(&text) {
            let canonical = canonicalize(url);
            check_is_canonical(canonical.as_str())?;
            prop_assert!(is_canonical(canonical.as_str()), "canonical form not recognised: {}", canonical);
        }
    }
}
