//! `--recrawl-budget`: recrawls of a web whose pages change on a simulated clock
//! (`testweb::changing`), the crawler's clock injected (`CRAWL_CLOCK`), so a day passes between
//! runs without waiting.

use crate::util::{crawl_dir, read_summary};
use std::path::Path;
use testweb::changing::ChangingWeb;

const DAY: u64 = 86_400;
const EPOCH: u64 = 1_700_000_000;
/// Pages 0..FAST change many times a day; the others never.
const FAST: usize = 4;
const PAGES: usize = 20;

/// One run at simulated day `day` (the web's clock and the crawler's); the page paths asked
/// (`/` and `/p/N`: robots.txt aside).
fn run_on_day(web: &ChangingWeb, dir: &Path, day: u64, args: &[&str]) -> Vec<String> {
    web.set_clock(day * DAY);
    let from = web.web().log().len();
    let mut all = vec!["--no-warc", "--no-sitemaps", "--delay-factor", "0"];
    all.extend(args);
    let clock = [("CRAWL_CLOCK", (EPOCH + day * DAY).to_string())];
    let (code, _, stderr) = crawl_dir(dir, &all, &clock, None);
    assert_eq!(code, Some(0), "day {day}: {stderr}");
    web.web().log()[from..]
        .iter()
        .map(|e| e.target.clone())
        .filter(|t| t == "/" || t.starts_with("/p/"))
        .collect()
}

#[test]
fn a_budgeted_recrawl_asks_for_the_pages_that_change_and_keeps_the_others() {
    let rates = (0..PAGES)
        .map(|i| if i < FAST { 1000.0 } else { 0.0 })
        .collect();
    let web = ChangingWeb::with_rates(rates, 9).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), format!("{}/\n", web.origin())).unwrap();
    let out = dir.path().join("out");

    // Day 0 crawls every page and `/`; day 1 recrawls them all (each has an interval now).
    assert_eq!(run_on_day(&web, dir.path(), 0, &[]).len(), PAGES + 1);
    assert_eq!(run_on_day(&web, dir.path(), 1, &[]).len(), PAGES + 1);
    let recrawl = &read_summary(&out)["recrawl"];
    assert_eq!(recrawl["changed"], FAST, "{recrawl}");

    // Day 2, five pages: the four that changed every day, and one more. `/` never changed
    // either, so the fifth is `/` or a slow page: ties go by URL checksum, and the port is the
    // system's (counting `/p/` pages alone failed 1 run in 17).
    let asked = run_on_day(&web, dir.path(), 2, &["--recrawl-budget", "5"]);
    assert_eq!(asked.len(), 5, "{asked:?}");
    for i in 0..FAST {
        assert!(asked.contains(&format!("/p/{i}")), "{asked:?}");
    }
    let recrawl = &read_summary(&out)["recrawl"];
    assert_eq!(recrawl["changed"], FAST, "{recrawl}");
    // `/` and the pages not asked for are deferred, carried into fetched.tsv.
    assert_eq!(recrawl["deferred"], PAGES + 1 - 5, "{recrawl}");
    assert_eq!(web.truth().captured, 2 * FAST as u64);

    // fetched.tsv, format 2: every page kept, with its history.
    let fetched = std::fs::read_to_string(out.join("fetched.tsv")).unwrap();
    let mut lines = fetched.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("# crawl fetched.tsv format 2")
    );
    let history = |i: usize| -> Vec<u64> {
        let url = web.page_url(i);
        let line = fetched
            .lines()
            .find(|l| l.split('\t').nth(2) == Some(url.as_str()))
            .unwrap_or_else(|| panic!("{url} not in {fetched}"));
        // visits, changes, first visit, last visit, last change.
        let fields: Vec<&str> = line.split('\t').collect();
        fields[8..].iter().map(|f| f.parse().unwrap()).collect()
    };
    assert_eq!(
        history(0),
        vec![3, 2, EPOCH, EPOCH + 2 * DAY, EPOCH + 2 * DAY]
    );
    let slow: Vec<Vec<u64>> = (FAST..PAGES).map(history).collect();
    let deferred = vec![2, 0, EPOCH, EPOCH + DAY, 0];
    assert!(
        slow.iter().filter(|h| **h == deferred).count() >= PAGES - FAST - 1,
        "{slow:?}"
    );
    assert_eq!(lines.count(), PAGES + 1, "{fetched}");

    // Without a budget a recrawl asks for every page again.
    assert_eq!(run_on_day(&web, dir.path(), 3, &[]).len(), PAGES + 1);
    web.shutdown();
}
