//! Page-level robots directives, `<noscript>` links and per-host budgets, end to end: the real
//! binary against `testweb::directives` (see its module doc for the cases).

use crate::util::{Outcome, crawl, crawl_dir};
use std::collections::BTreeSet;
use testweb::TestWeb;
use testweb::directives::{self, CALENDAR, CASES, SITE};

/// The site's page paths the crawler asked for.
fn requested(web: &TestWeb, host: usize) -> BTreeSet<String> {
    web.log()
        .iter()
        .filter(|e| e.host == host && e.target != "/robots.txt")
        .map(|e| e.target.clone())
        .collect()
}

/// The URL log's note for `path` on the site.
fn note<'a>(run: &'a Outcome, web: &TestWeb, path: &str) -> &'a str {
    let url = web.url(SITE, path);
    let row = run.rows.iter().find(|r| r.url == url);
    &row.unwrap_or_else(|| panic!("no log line for {url}")).note
}

fn crawl_site(web: &TestWeb, extra: &[&str]) -> Outcome {
    let mut args = vec!["--delay-factor", "0"];
    args.extend(extra);
    let run = crawl(&format!("{}\n", web.url(SITE, "/")), &args);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    run
}

#[test]
fn page_robots_directives_keep_links_from_being_followed_and_are_noted() {
    let web = directives::start().unwrap();
    let run = crawl_site(&web, &["--link-graph"]);
    let asked = requested(&web, SITE);
    for row in &run.rows {
        eprintln!("{}\t{}\t{}", row.status, row.url, row.note);
    }
    let nofollow: Vec<&String> = asked
        .iter()
        .filter(|t| t.starts_with("/nofollow-"))
        .collect();
    assert!(
        nofollow.is_empty(),
        "links followed against a directive: {nofollow:?}"
    );
    for (case, follows) in CASES {
        assert!(
            asked.contains(&format!("/{case}")),
            "case page /{case} not fetched"
        );
        let followed = format!("/followed-{case}");
        if *follows && *case != "noscript" {
            assert!(
                asked.contains(&followed),
                "{followed} not fetched: {asked:?}"
            );
        }
    }
    // What the URL log says of each page (noindex pages are fetched, logged and archived).
    let notes = [
        ("/meta-nofollow", "nofollow"),
        ("/meta-none", "noindex,nofollow"),
        ("/meta-token", "noindex,nofollow"),
        ("/meta-other-token", "-"),
        ("/meta-noindex", "noindex"),
        ("/header-nofollow", "nofollow"),
        ("/header-token", "noindex,nofollow"),
        ("/header-other-token", "-"),
        ("/header-noindex", "noindex"),
        ("/rel", "-"),
    ];
    for (path, expected) in notes {
        assert_eq!(note(&run, &web, path), expected, "the note of {path}");
    }
    let summary = run.summary();
    assert_eq!(summary["nofollow_pages"], 5, "{summary}");
    assert_eq!(summary["nofollow_links"], 1, "{summary}");
    assert_eq!(summary["noindex_pages"], 5, "{summary}");
    // links.tsv is the graph of links followed: no nofollow link is in it.
    let links = std::fs::read_to_string(run.out.join("links.tsv")).unwrap();
    assert!(links.contains("/followed-rel"), "{links}");
    assert!(!links.contains("/nofollow-"), "{links}");
}

#[test]
fn noscript_links_are_followed_in_head_and_body() {
    let web = directives::start().unwrap();
    crawl_site(&web, &[]);
    let asked = requested(&web, SITE);
    for path in ["/followed-noscript-head.css", "/followed-noscript-body"] {
        assert!(
            asked.contains(path),
            "{path} (inside <noscript>) not fetched: {asked:?}"
        );
    }
    assert!(
        !asked.contains("/never"),
        "a link written by a script was followed"
    );
}

#[test]
fn ignore_page_robots_follows_every_link_and_still_notes_directives() {
    let web = directives::start().unwrap();
    let run = crawl_site(&web, &["--ignore-page-robots"]);
    let asked = requested(&web, SITE);
    for (case, follows) in CASES {
        if !follows || *case == "rel" {
            let path = format!("/nofollow-{case}");
            assert!(asked.contains(&path), "{path} not fetched: {asked:?}");
        }
    }
    assert_eq!(note(&run, &web, "/meta-none"), "noindex,nofollow");
    let summary = run.summary();
    assert_eq!(summary["nofollow_pages"], 0, "{summary}");
    assert_eq!(summary["nofollow_links"], 0, "{summary}");
    assert_eq!(summary["noindex_pages"], 0, "{summary}");
}

/// The directives web and a crawl directory whose seeds.txt holds the calendar host's root.
fn calendar_crawl_dir() -> (TestWeb, tempfile::TempDir) {
    let web = directives::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seeds = format!("{}\n", web.url(CALENDAR, "/"));
    std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
    (web, dir)
}

/// Pages of the calendar host asked for (not its robots.txt or sitemap).
fn calendar_pages(web: &TestWeb) -> usize {
    web.log()
        .iter()
        .filter(|e| {
            e.host == CALENDAR && !["/robots.txt", "/sitemap.xml"].contains(&e.target.as_str())
        })
        .count()
}

#[test]
fn a_host_budget_ends_an_endless_calendar_and_notes_the_rest() {
    let web = directives::start().unwrap();
    let seeds = format!("{}\n", web.url(CALENDAR, "/"));
    let run = crawl(
        &seeds,
        &["--delay-factor", "0", "--max-pages-per-host", "5"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    for row in &run.rows {
        eprintln!("{}\t{}\t{}\t{}", row.status, row.depth, row.url, row.note);
    }
    // A URL robots.txt forbids takes no place: 2023/12 is dropped, five pages are fetched.
    assert_eq!(calendar_pages(&web), 5, "{:?}", web.log());
    let refused: Vec<&str> = run
        .rows
        .iter()
        .filter(|r| r.note == "host-budget")
        .map(|r| r.url.as_str())
        .collect();
    assert!(
        !refused.is_empty(),
        "no URL noted host-budget: {}",
        run.stdout
    );
    let asked: BTreeSet<String> = requested(&web, CALENDAR);
    for url in &refused {
        let path = url.strip_prefix(&web.origin(CALENDAR)).unwrap();
        assert!(!asked.contains(path), "{url} was refused and fetched");
    }
    let summary = run.summary();
    assert_eq!(summary["ending"], "complete", "{summary}");
    assert_eq!(
        summary["filtered"]["host_budget"],
        refused.len(),
        "{summary}"
    );
    assert_eq!(summary["status"]["2xx"], 5, "{summary}");
    assert_eq!(summary["robots_blocked"], 1, "{summary}");
}

#[test]
fn a_host_budget_survives_a_resume() {
    let (web, dir) = calendar_crawl_dir();
    let run = |extra: &[&str]| {
        let budget = ["--delay-factor", "0", "--max-pages-per-host", "5"];
        let all: Vec<&str> = budget.iter().chain(extra).copied().collect();
        crawl_dir(dir.path(), &all, &[], None)
    };
    let (code, _, stderr) = run(&["--max-pages", "2"]);
    assert_eq!(code, Some(4), "a run limit: {stderr}");
    assert_eq!(calendar_pages(&web), 2);
    let (code, _, stderr) = run(&[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(calendar_pages(&web), 5, "{:?}", web.log());
    let summary = crate::util::read_summary(&dir.path().join("out"));
    assert_eq!(summary["ending"], "complete", "{summary}");
    // The crawl completed: the next run is a recrawl, and each host has its budget again.
    let (code, _, stderr) = run(&[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(calendar_pages(&web), 10, "{:?}", web.log());
}

#[test]
fn a_host_budget_survives_a_kill() {
    let (web, dir) = calendar_crawl_dir();
    let args = [
        "--delay-factor",
        "0",
        "--min-delay",
        "0.1",
        "--max-pages-per-host",
        "5",
    ];
    // A checkpoint after every page, so the kill finds the counts saved.
    let env = [("CRAWL_CHECKPOINT_PAGES", "1".to_string())];
    // Killed once robots.txt and two pages are logged.
    let (code, _, _) = crawl_dir(dir.path(), &args, &env, Some(3));
    assert_eq!(code, None, "the crawl ended before the kill");
    let before = requested(&web, CALENDAR).len();
    assert!((2..5).contains(&before), "{before} pages before the kill");
    let (code, _, stderr) = crawl_dir(dir.path(), &args, &env, None);
    assert_eq!(code, Some(0), "{stderr}");
    // A page done between its done-log line and the next checkpoint is not counted: one more
    // page at most. Without the saved counts the second run would fetch five more.
    let pages = requested(&web, CALENDAR).len();
    assert!(
        (5..=6).contains(&pages),
        "{pages} distinct pages: {:?}",
        web.log()
    );
}
