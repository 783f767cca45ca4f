//! Sitemaps (`crawl::sitemaps`, `url::sitemap`) on `testweb::sitemaps`: robots.txt `Sitemap:`
//! lines, a seed host's `/sitemap.xml`, an index of gzip, text, over-limit, broken and endlessly
//! nested sitemaps; `--no-sitemaps`; a stopped crawl with sitemaps queued, resumed.

use crate::util::{
    LogRow, Outcome, counts, crawl, crawl_dir, parse_log, read_summary, run_binary, warc_text,
};
use std::collections::BTreeMap;
use testweb::TestWeb;
use testweb::sitemaps::{self, ELSEWHERE, FALLBACK, NEVER, SITE, SITEMAP_ONLY};

const ARGS: [&str; 6] = [
    "--delay-factor",
    "0",
    "-j",
    "2",
    "--warc-compression",
    "gzip",
];

fn seeds(web: &TestWeb) -> String {
    format!("{}\n{}\n", web.url(SITE, "/"), web.url(FALLBACK, "/"))
}

/// Requests each host got, by path.
fn requests(web: &TestWeb, host: usize) -> BTreeMap<String, usize> {
    counts(
        web.log()
            .into_iter()
            .filter(|e| e.host == host)
            .map(|e| e.target),
    )
}

/// URL → note of every sitemap fetch in the URL log.
fn sitemap_notes(rows: &[LogRow]) -> BTreeMap<String, String> {
    rows.iter()
        .filter(|r| r.note.starts_with("sitemap"))
        .map(|r| (r.url.clone(), r.note.clone()))
        .collect()
}

/// Every WARC-Target-URI in the crawl's gzip WARC files.
fn warc_targets(out: &std::path::Path) -> Vec<String> {
    warc_text(out, ".warc.gz")
        .lines()
        .filter_map(|l| l.strip_prefix("WARC-Target-URI: "))
        .map(|l| l.trim().to_owned())
        .collect()
}

#[test]
fn pages_only_a_sitemap_lists_are_crawled_at_depth_1() {
    let web = sitemaps::start().unwrap();
    let outcome: Outcome = crawl(&seeds(&web), &ARGS);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let by_url: BTreeMap<&str, &LogRow> = outcome
        .rows
        .iter()
        .filter(|r| !r.note.starts_with("sitemap") && r.note != "robots")
        .map(|r| (r.url.as_str(), r))
        .collect();
    for &(host, path) in SITEMAP_ONLY {
        let url = web.url(host, path);
        let row = by_url.get(url.as_str()).unwrap_or_else(|| {
            panic!(
                "{url} (listed only by a sitemap) was not crawled:\n{}",
                outcome.stdout
            )
        });
        assert_eq!((row.status, row.depth), (200, 1), "{row:?}");
    }
    for &(host, path) in NEVER {
        assert!(
            !requests(&web, host).contains_key(path),
            "{path} was asked for"
        );
    }
    assert!(
        requests(&web, ELSEWHERE).is_empty(),
        "the out-of-scope host got requests: {:?}",
        requests(&web, ELSEWHERE)
    );

    let site = |path: &str| web.url(SITE, path);
    let expected: BTreeMap<String, String> = [
        (site("/sitemap_index.xml"), "sitemap"),
        (site("/news.txt"), "sitemap"),
        (site("/sitemaps/pages.xml.gz"), "sitemap"),
        (site("/sitemaps/plain.txt"), "sitemap"),
        (site("/sitemaps/big.xml.gz"), "sitemap:capped"),
        (site("/sitemaps/broken.xml"), "sitemap:malformed"),
        (site("/sitemaps/chain/0.xml"), "sitemap"),
        (site("/sitemaps/chain/1.xml"), "sitemap"),
        (site("/sitemaps/chain/page-0.xml"), "sitemap"),
        (site("/sitemaps/chain/2.xml"), "sitemap:too-deep"),
        (web.url(FALLBACK, "/sitemap.xml"), "sitemap"),
    ]
    .into_iter()
    .map(|(u, n)| (u, n.to_owned()))
    .collect();
    assert_eq!(sitemap_notes(&outcome.rows), expected, "{}", outcome.stdout);
    // Each sitemap once; the site whose robots.txt names sitemaps is not asked for /sitemap.xml.
    let site_requests = requests(&web, SITE);
    assert!(site_requests.values().all(|&n| n == 1), "{site_requests:?}");
    assert!(!site_requests.contains_key("/sitemap.xml"));

    let summary = outcome.summary();
    let s = &summary["sitemaps"];
    assert_eq!(s["fetched"], expected.len() as u64, "{summary}");
    // pages.xml.gz 3, plain.txt 1, news.txt 1, big 50,000, broken 1, page-0 1, fallback 1.
    assert_eq!(s["urls"], 50_008, "{summary}");
    assert_eq!(
        (&s["capped"], &s["malformed"], &s["too_deep"]),
        (&1.into(), &1.into(), &2.into()),
        "{summary}"
    );
    assert!(
        summary["filtered"]["scope"].as_u64().unwrap() >= 49_997,
        "{summary}"
    );
    // Sitemaps are not pages.
    let pages = outcome
        .rows
        .iter()
        .filter(|r| r.note != "robots" && !r.note.starts_with("sitemap"))
        .count();
    assert_eq!(summary["pages"], pages as u64, "{summary}");

    let targets = warc_targets(&outcome.out);
    for url in expected.keys() {
        assert!(targets.contains(url), "{url} is not in the WARC archive");
    }
    web.shutdown();
}

#[test]
fn no_sitemaps_reads_none() {
    let web = sitemaps::start().unwrap();
    let mut args = ARGS.to_vec();
    args.push("--no-sitemaps");
    let outcome = crawl(&seeds(&web), &args);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let mut asked: Vec<String> = web
        .log()
        .into_iter()
        .map(|e| format!("{} {}", e.host, e.target))
        .collect();
    asked.sort();
    assert_eq!(
        asked,
        ["0 /", "0 /linked", "0 /robots.txt", "1 /", "1 /robots.txt"]
    );
    assert_eq!(outcome.summary()["sitemaps"]["fetched"], 0);
    web.shutdown();
}

#[test]
fn a_crawl_stopped_with_sitemaps_queued_resumes_them() {
    let web = sitemaps::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), seeds(&web)).unwrap();
    let run = |extra: &[&str]| {
        let one_worker = ["--delay-factor", "0", "-j", "1", "--no-warc"];
        let args: Vec<&str> = one_worker.iter().chain(extra).copied().collect();
        crawl_dir(dir.path(), &args, &[], None)
    };
    // The first run stops after one page: the robots.txt fetches have queued the sitemaps.
    let (code, first, stderr) = run(&["--max-pages", "1"]);
    assert_eq!(code, Some(4), "a run limit: {stderr}");
    let first = parse_log(&first);
    assert!(sitemap_notes(&first).is_empty(), "{first:?}");
    let (code, second, stderr) = run(&[]);
    assert_eq!(code, Some(0), "{stderr}");
    let second = parse_log(&second);
    let crawled: Vec<&str> = second.iter().map(|r| r.url.as_str()).collect();
    for &(host, path) in SITEMAP_ONLY {
        assert!(
            crawled.contains(&web.url(host, path).as_str()),
            "{path} after the resume"
        );
    }
    assert_eq!(sitemap_notes(&second).len(), 11, "{second:?}");
    // Nothing was asked for twice across the two runs (robots.txt aside: a new run reads it
    // again only when its answer was not saved).
    for host in [SITE, FALLBACK] {
        let twice: Vec<_> = requests(&web, host)
            .into_iter()
            .filter(|(path, n)| *n > 1 && path != "/robots.txt")
            .collect();
        assert!(twice.is_empty(), "asked twice: {twice:?}");
    }
    assert_eq!(read_summary(&dir.path().join("out"))["ending"], "complete");
    web.shutdown();
}

/// A recrawl does not ask again for a page its sitemap's `lastmod` dates before the previous
/// fetch (`recrawl::Lastmods`): one host whose `/sitemap.xml` gives `/old` a `lastmod`
/// long past, and `/new` one in the past for the first crawl and after it for the recrawl.
#[test]
fn a_recrawl_skips_pages_whose_lastmod_is_older_than_the_previous_fetch() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use testweb::{HostSpec, Response};
    let changed = Arc::new(AtomicBool::new(false));
    let web = {
        let changed = Arc::clone(&changed);
        TestWeb::start_with(1, move |origins| {
            let origin = origins[0].clone();
            vec![HostSpec::new(move |r| match r.target.as_str() {
                "/" => Response::html(
                    "<!DOCTYPE html><html><body><a href=\"/old\">o</a> <a href=\"/new\">n</a>\
                     <a href=\"/unlisted\">u</a></body></html>",
                ),
                "/old" | "/new" | "/unlisted" => Response::html(format!(
                    "<!DOCTYPE html><html><body><p>{}</p></body></html>",
                    r.target
                )),
                "/sitemap.xml" => {
                    let new = match changed.load(Ordering::SeqCst) {
                        true => "2100-01-01T00:00:00Z",
                        false => "2001-01-01",
                    };
                    Response::new(
                        200,
                        "application/xml",
                        format!(
                            "<?xml version=\"1.0\"?>\n\
                             <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
                             <url><loc>{origin}/old</loc><lastmod>2001-01-01</lastmod></url>\n\
                             <url><loc>{origin}/new</loc><lastmod>{new}</lastmod></url>\n\
                             </urlset>\n"
                        ),
                    )
                }
                _ => Response::not_found(),
            })]
        })
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let seeds_path = dir.path().join("seeds.txt");
    std::fs::write(&seeds_path, format!("{}\n", web.url(0, "/"))).unwrap();
    let out = dir.path().join("out");
    let run = || {
        let mut args = vec![
            seeds_path.to_string_lossy().into_owned(),
            "--out".into(),
            out.to_string_lossy().into_owned(),
        ];
        args.extend(ARGS.iter().map(|s| s.to_string()));
        let (code, stdout, stderr) = run_binary(&args, None, dir.path());
        assert_eq!(code, 0, "{stderr}");
        parse_log(&stdout)
    };
    let asked = |from: usize| counts(web.log()[from..].iter().map(|e| e.target.clone()));
    let old = web.url(0, "/old");
    let old_records = || warc_targets(&out).iter().filter(|t| **t == old).count();

    let first = run();
    assert_eq!(asked(0).get("/old"), Some(&1), "{first:?}");
    let records = old_records();
    assert!(records > 0);

    changed.store(true, Ordering::SeqCst);
    for generation in ["recrawl", "recrawl again"] {
        let start = web.request_count();
        let rows = run();
        let asked = asked(start);
        assert_eq!(
            asked.get("/sitemap.xml"),
            Some(&1),
            "{generation}: {asked:?}"
        );
        assert_eq!(asked.get("/old"), None, "{generation}: /old asked again");
        assert_eq!(asked.get("/new"), Some(&1), "{generation}: {asked:?}");
        assert_eq!(asked.get("/unlisted"), Some(&1), "{generation}: {asked:?}");
        let row = rows.iter().find(|r| r.url == old).expect("a URL-log line");
        assert_eq!(
            (row.status, row.note.as_str()),
            (0, "lastmod"),
            "{generation}"
        );
        let recrawl = &read_summary(&out)["recrawl"];
        assert_eq!(recrawl["lastmod"], 1, "{generation}: {recrawl}");
        assert_eq!(recrawl["unchanged"], 3, "{generation}: {recrawl}");
        // Not fetched, not archived; kept for the next generation (the second recrawl shows it).
        assert_eq!(old_records(), records, "{generation}");
    }
    web.shutdown();
}
