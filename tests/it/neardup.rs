//! Near-duplicates (`--near-duplicates`, `url::simhash`): the fingerprint's precision on a web
//! of known near-duplicate and distinct pages, and a calendar trap that `skip-links` stops.

use crate::util::crawl;
use crawl::internals::{MAX_DISTANCE, distance, page_fingerprint};
use testweb::TestWeb;
use testweb::neardup::{self, CALENDAR, Page, SITE, VARIANTS};

/// Pairs of pages within `k` bits that are not copies of one another (false positives), and
/// copies more than `k` bits from their article (false negatives, by variant).
struct Errors {
    false_positives: usize,
    false_negatives: Vec<usize>,
}

/// The fingerprint of every page of the site, with what it is.
fn fingerprints() -> Vec<(Page, u64)> {
    neardup::pages()
        .into_iter()
        .map(|(path, page)| {
            let html = neardup::render(page);
            let f = page_fingerprint(html.as_bytes(), None).unwrap_or_else(|| panic!("{path}"));
            (page, f)
        })
        .collect()
}

fn article_of(page: Page) -> usize {
    match page {
        Page::Article(i) | Page::Copy(i, _) => i,
    }
}

/// Errors at `k` over every pair of pages: a pair is a near-duplicate pair when both are the
/// same article (or copies of it).
fn errors(pages: &[(Page, u64)], k: u32) -> Errors {
    let mut errors = Errors {
        false_positives: 0,
        false_negatives: vec![0; VARIANTS.len()],
    };
    for (i, &(a, fa)) in pages.iter().enumerate() {
        for &(b, fb) in &pages[i + 1..] {
            let near = distance(fa, fb) <= k;
            if article_of(a) != article_of(b) {
                errors.false_positives += usize::from(near);
            } else if let (Page::Article(_), Page::Copy(_, v)) = (a, b)
                && !near
            {
                errors.false_negatives[v] += 1;
            }
        }
    }
    errors
}

#[test]
fn copies_are_within_the_distance_and_distinct_articles_are_not() {
    let pages = fingerprints();
    let articles = pages.iter().filter(|(p, _)| matches!(p, Page::Article(_)));
    let distinct_pairs = {
        let n = pages.len();
        let per_article = 1 + VARIANTS.len();
        n * (n - 1) / 2 - articles.count() * per_article * (per_article - 1) / 2
    };
    eprintln!(
        "k\tfalse positives (of {distinct_pairs} distinct pairs)\tfalse negatives by variant {VARIANTS:?}"
    );
    for k in 0..=10 {
        let e = errors(&pages, k);
        eprintln!("{k}\t{}\t{:?}", e.false_positives, e.false_negatives);
    }
    // The copies missed at the chosen distance, with their article's length.
    for &(article, fa) in &pages {
        for &(copy, fc) in &pages {
            if let (Page::Article(i), Page::Copy(j, v)) = (article, copy)
                && i == j
                && distance(fa, fc) > MAX_DISTANCE
            {
                let words = neardup::LENGTHS[i % neardup::LENGTHS.len()];
                let bits = distance(fa, fc);
                eprintln!(
                    "missed: article {i} ({words} words), {} copy, {bits} bits",
                    VARIANTS[v]
                );
            }
        }
    }
    let e = errors(&pages, MAX_DISTANCE);
    assert_eq!(e.false_positives, 0);
    // A copy with one word changed (a date stamp, a session id, a view counter) is missed only
    // now and then on pages of a few hundred words (bodies up to 250 words under the
    // template's 80); a changed advertisement block (12 words) often is, up to 500 words.
    let [date, session, views, ad] = [0, 1, 3, 2].map(|v| e.false_negatives[v]);
    assert!(
        date + session + views <= neardup::ARTICLES / 5,
        "{:?}",
        e.false_negatives
    );
    assert!(ad <= neardup::ARTICLES * 2 / 3, "{ad}");
}

/// Pages of the calendar asked for (not robots.txt or a sitemap).
fn calendar_pages(web: &TestWeb) -> usize {
    let log = web.log();
    let days = log.iter().filter(|e| e.host == CALENDAR);
    days.filter(|e| e.target.starts_with("/cal")).count()
}

#[test]
fn skip_links_stops_a_calendar_trap_after_its_first_pages() {
    let web = neardup::start().unwrap();
    let seeds = format!("{}\n", web.url(CALENDAR, "/"));
    let common = ["--delay-factor", "0", "--max-depth", "40"];
    let run = crawl(
        &seeds,
        &[&common[..], &["--near-duplicates", "skip-links"]].concat(),
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // Day 1 is new; day 2 nearly repeats it, and its link to day 3 is not followed.
    assert_eq!(calendar_pages(&web), 2, "{:?}", web.log());
    let noted: Vec<&str> = (run.rows.iter())
        .filter(|r| r.note == "near-duplicate")
        .map(|r| r.url.as_str())
        .collect();
    assert_eq!(noted, [web.url(CALENDAR, "/cal?d=2")], "{}", run.stdout);
    assert_eq!(run.summary()["near_duplicates"], 1);

    // With `note` the depth limit ends the trap; most days after the first are noted (a day
    // whose number flips more bits joins the window as a page of its own).
    let web = neardup::start().unwrap();
    let seeds = format!("{}\n", web.url(CALENDAR, "/"));
    let run = crawl(
        &seeds,
        &[&common[..], &["--near-duplicates", "note", "-v"]].concat(),
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(calendar_pages(&web), 40, "{:?}", web.log());
    let summary = run.summary();
    let noted = summary["near_duplicates"].as_u64().unwrap();
    assert!((30..=39).contains(&noted), "{noted}");
    // stderr's summary (-v: without a terminal) says what summary.json counts: revisits (identical payloads) and
    // near-duplicates.
    let (revisits, saved) = (
        &summary["warc"]["duplicates"],
        &summary["warc"]["duplicate_bytes"],
    );
    let line = format!(
        "duplicates: {revisits} pages with a payload archived before (revisits, {saved} bytes \
         not stored again); {noted} HTML pages near-duplicates of an earlier page \
         (--near-duplicates)\n"
    );
    assert!(run.stderr.contains(&line), "{line} not in {}", run.stderr);
}

#[test]
fn by_default_nothing_is_noted_and_with_note_the_copies_are() {
    let web = neardup::start().unwrap();
    let seeds = format!("{}\n", web.url(SITE, "/"));
    let run = crawl(&seeds, &["--delay-factor", "0"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.rows.iter().all(|r| r.note != "near-duplicate"));
    assert_eq!(run.summary()["near_duplicates"], 0);
    // With `note` the copies are noted, and their links followed like any page's.
    let run = crawl(
        &seeds,
        &["--delay-factor", "0", "--near-duplicates", "note"],
    );
    let noted = run
        .rows
        .iter()
        .filter(|r| r.note == "near-duplicate")
        .count();
    let copies = neardup::ARTICLES * VARIANTS.len();
    assert!(noted >= copies * 3 / 4 && noted <= copies, "{noted}");
    assert_eq!(run.summary()["near_duplicates"], noted as u64);
}
