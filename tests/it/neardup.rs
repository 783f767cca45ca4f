//! Near-duplicates (`--near-duplicates`, `url::minhash`, `seen::neardup`): the signatures
//! against the exact resemblance on a web of known near-duplicate and distinct pages, a copy
//! found thousands of pages from its original on another host and named, the index across a
//! resume, a recrawl and another crawl named by `--dedupe-against`, the threshold's parsing,
//! and a calendar trap that `skip-links` stops.

use crate::util::{crawl, crawl_dir, parse_log, read_summary};
use crawl::internals::page_signature;
use std::collections::HashSet;
use testweb::TestWeb;
use testweb::neardup::{self, CALENDAR, FAR, FAR_ARTICLE, FAR_PAGES, SITE};

/// The visible text of a page of the test web (its markup is simple): no title, style or
/// script, tags and references as word breaks.
fn visible_text(html: &str) -> String {
    let mut text = html.to_owned();
    for element in ["title", "style", "script"] {
        while let Some(start) = text.find(&format!("<{element}")) {
            let close = format!("</{element}>");
            let end = text[start..]
                .find(&close)
                .map_or(text.len(), |e| start + e + close.len());
            text.replace_range(start..end, " ");
        }
    }
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&middot;", " ").replace("&copy;", " ")
}

/// The exact measure: a page's set of 5-word shingles.
fn shingles(html: &str) -> HashSet<String> {
    let text = visible_text(html).to_lowercase();
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(5).map(|w| w.join(" ")).collect()
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    a.intersection(b).count() as f64 / a.union(b).count() as f64
}

#[test]
fn the_estimated_resemblance_agrees_with_the_exact_one_on_the_template_copies() {
    let pages: Vec<_> = neardup::pages()
        .into_iter()
        .map(|(path, page)| {
            let html = neardup::render(page);
            let signature =
                page_signature(html.as_bytes(), None).unwrap_or_else(|| panic!("{path}"));
            (path, shingles(&html), signature)
        })
        .collect();
    // Every pair, near by the measure or by the estimate (at 0.9).
    let (mut both, mut only_exact, mut only_estimate, mut worst) = (0, 0, 0, 0f64);
    for (i, (pa, sa, ga)) in pages.iter().enumerate() {
        for (pb, sb, gb) in &pages[i + 1..] {
            let (exact, estimate) = (jaccard(sa, sb), ga.resemblance(gb));
            worst = worst.max((exact - estimate).abs());
            match (exact >= 0.9, estimate >= 0.9) {
                (true, true) => both += 1,
                (true, false) => {
                    only_exact += 1;
                    eprintln!("missed: {pa} {pb}: exact {exact:.3}, estimate {estimate:.3}");
                }
                (false, true) => {
                    only_estimate += 1;
                    eprintln!("false: {pa} {pb}: exact {exact:.3}, estimate {estimate:.3}");
                }
                _ => {}
            }
        }
    }
    eprintln!(
        "pairs near by both {both}, by the measure only {only_exact}, by the estimate only \
         {only_estimate}; largest error {worst:.3}"
    );
    assert!(both >= 100, "{both}");
    assert!(
        only_exact + only_estimate <= both / 10,
        "{only_exact} {only_estimate}"
    );
    assert!(worst < 0.15, "{worst}");
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
    let noted: Vec<(&str, &str)> = (run.rows.iter())
        .filter(|r| r.note.starts_with("near-duplicate"))
        .map(|r| (r.url.as_str(), r.note.as_str()))
        .collect();
    let day = |d: u32| web.url(CALENDAR, &format!("/cal?d={d}"));
    let note = format!("near-duplicate:{}", day(1));
    assert_eq!(noted, [(day(2).as_str(), note.as_str())], "{}", run.stdout);
    assert_eq!(run.summary()["near_duplicates"], 1);

    // With `note` the depth limit ends the trap; every day after the first is noted.
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
    assert_eq!(noted, 39);
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
    assert!(
        run.rows
            .iter()
            .all(|r| !r.note.starts_with("near-duplicate"))
    );
    assert_eq!(run.summary()["near_duplicates"], 0);
    assert!(!run.out.join("neardup").exists());
    // With `note` the copies are noted, and their links followed like any page's; the exact
    // measure says which are near-duplicates of a page crawled before them.
    let run = crawl(
        &seeds,
        &["--delay-factor", "0", "--near-duplicates", "note"],
    );
    let pages: Vec<_> = neardup::pages()
        .into_iter()
        .map(|(path, page)| (web.url(SITE, &path), shingles(&neardup::render(page))))
        .collect();
    let order: Vec<&str> = run.rows.iter().map(|r| r.url.as_str()).collect();
    let at = |url: &str| order.iter().position(|&u| u == url).expect("crawled");
    let truth: HashSet<&str> = (pages.iter())
        .filter(|(url, s)| {
            (pages.iter()).any(|(other, t)| at(other) < at(url) && jaccard(s, t) >= 0.9)
        })
        .map(|(url, _)| url.as_str())
        .collect();
    let noted: HashSet<&str> = (run.rows.iter())
        .filter(|r| r.note.starts_with("near-duplicate:"))
        .map(|r| r.url.as_str())
        .collect();
    let right = truth.intersection(&noted).count();
    eprintln!(
        "{} true near-duplicates, {} noted, {right} both",
        truth.len(),
        noted.len()
    );
    assert!(
        right * 10 >= truth.len() * 9,
        "recall {right} of {}",
        truth.len()
    );
    assert!(
        right * 10 >= noted.len() * 9,
        "precision {right} of {}",
        noted.len()
    );
    assert_eq!(run.summary()["near_duplicates"], noted.len() as u64);
}

#[test]
fn a_copy_thousands_of_pages_from_its_original_on_another_host_is_found_and_named() {
    let web = neardup::start().unwrap();
    let original = web.url(SITE, &format!("/article/{FAR_ARTICLE}"));
    let copy = web.url(FAR, "/copy");
    let seeds = format!("{original}\n{}\n", web.url(FAR, "/"));
    // Depth 1: the article's links lead to the rest of its site.
    let args = ["--delay-factor", "0", "--max-depth", "1"];
    let run = crawl(
        &seeds,
        &[&args[..], &["--near-duplicates", "note"]].concat(),
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let order: Vec<&str> = run.rows.iter().map(|r| r.url.as_str()).collect();
    let at = |url: &str| order.iter().position(|&u| u == url).expect("crawled");
    assert!(
        at(&copy) > at(&original) + FAR_PAGES,
        "{} {}",
        at(&copy),
        at(&original)
    );
    let row = run.rows.iter().find(|r| r.url == copy).unwrap();
    assert_eq!(row.note, format!("near-duplicate:{original}"));
    assert_eq!(run.summary()["near_duplicates"], 1, "{}", run.stdout);
    // The cluster file and `crawl neardups` name the first page.
    let clusters = std::fs::read_to_string(run.out.join("neardups.tsv")).unwrap();
    assert!(
        clusters.starts_with(&format!("{original}\t{copy}\t")),
        "{clusters}"
    );
    let args = [
        "neardups".to_owned(),
        run.out.to_string_lossy().into_owned(),
    ];
    let (code, stdout, stderr) = crate::util::run_binary(&args, None, &run.out);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], format!("{original}\t1"), "{stdout}");
    assert!(
        lines[1].ends_with(&format!("\t{copy}\t{original}")),
        "{stdout}"
    );
    assert!(
        stderr.contains("1 clusters, 1 near-duplicate pages"),
        "{stderr}"
    );
}

#[test]
fn a_resumed_crawl_compares_with_the_pages_of_the_run_before() {
    let web = neardup::start().unwrap();
    let original = web.url(SITE, &format!("/article/{FAR_ARTICLE}"));
    let copy = web.url(FAR, "/copy");
    let dir = tempfile::tempdir().unwrap();
    let seeds = format!("{original}\n{}\n", web.url(FAR, "/"));
    std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
    let args = [
        "-j",
        "1",
        "--delay-factor",
        "0",
        "--max-depth",
        "1",
        "--near-duplicates",
        "note",
    ];
    let stopped: Vec<&str> = args.iter().copied().chain(["--max-pages", "30"]).collect();
    let (code, stdout, stderr) = crawl_dir(dir.path(), &stopped, &[], None);
    assert_eq!(code, Some(4), "a run limit; stderr: {stderr}");
    assert!(
        parse_log(&stdout).iter().any(|r| r.url == original),
        "{stdout}"
    );
    let (code, stdout, stderr) = crawl_dir(dir.path(), &args, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let rows = parse_log(&stdout);
    assert!(rows.iter().all(|r| r.url != original));
    let row = rows.iter().find(|r| r.url == copy).unwrap();
    assert_eq!(row.note, format!("near-duplicate:{original}"));
    let summary = read_summary(&dir.path().join("out"));
    assert_eq!(summary["ending"], "complete", "{summary}");
}

#[test]
fn the_threshold_is_a_resemblance_above_0_and_at_most_1() {
    for bad in ["0", "1.5", "-0.2", "ninety", "90%"] {
        let option = format!("--near-duplicates-threshold={bad}");
        let run = crawl("http://127.0.0.1:9/\n", &[&option]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("expected a resemblance above 0 and at most 1 such as 0.9"),
            "{}",
            run.stderr
        );
    }
    // 1 notes only pages whose shingles are all an earlier page's: a calendar day is not.
    let web = neardup::start().unwrap();
    let seeds = format!("{}\n", web.url(CALENDAR, "/"));
    let args = [
        "--delay-factor",
        "0",
        "--max-depth",
        "5",
        "--near-duplicates",
        "note",
    ];
    let run = crawl(
        &seeds,
        &[&args[..], &["--near-duplicates-threshold", "1"]].concat(),
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.summary()["near_duplicates"], 0);
    let run = crawl(
        &seeds,
        &[&args[..], &["--near-duplicates-threshold", "0.5"]].concat(),
    );
    assert_eq!(run.summary()["near_duplicates"], 4);
}

/// The seeds alone, near-duplicates noted.
const SEEDS_ONLY_NOTED: [&str; 6] = [
    "--delay-factor",
    "0",
    "--max-depth",
    "0",
    "--near-duplicates",
    "note",
];

#[test]
fn a_recrawl_compares_with_the_previous_crawls_pages_and_restart_forgets_them() {
    let web = neardup::start().unwrap();
    let original = web.url(SITE, &format!("/article/{FAR_ARTICLE}"));
    let copy = web.url(FAR, "/copy");
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    let args = SEEDS_ONLY_NOTED;
    std::fs::write(&seeds, format!("{original}\n")).unwrap();
    let (code, _, stderr) = crawl_dir(dir.path(), &args, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    // The recrawl fetches the original again (not its own near-duplicate) and the new copy.
    std::fs::write(&seeds, format!("{copy}\n{original}\n")).unwrap();
    let (code, stdout, stderr) = crawl_dir(dir.path(), &args, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let rows = parse_log(&stdout);
    let note = |url: &str| rows.iter().find(|r| r.url == url).unwrap().note.clone();
    assert!(!note(&original).starts_with("near-duplicate"), "{stdout}");
    assert_eq!(
        note(&copy),
        format!("near-duplicate:{original}"),
        "{stdout}"
    );
    // --restart forgets the index: the copy, crawled first, is new.
    std::fs::write(&seeds, format!("{copy}\n")).unwrap();
    let restart: Vec<&str> = args.iter().copied().chain(["--restart"]).collect();
    let (code, stdout, stderr) = crawl_dir(dir.path(), &restart, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let rows = parse_log(&stdout);
    assert!(
        rows.iter().all(|r| !r.note.starts_with("near-duplicate")),
        "{stdout}"
    );
    assert!(
        !dir.path().join("out/neardups.tsv").exists() || {
            let clusters = std::fs::read_to_string(dir.path().join("out/neardups.tsv")).unwrap();
            clusters.is_empty()
        }
    );
}

#[test]
fn dedupe_against_compares_with_the_other_crawls_pages() {
    let web = neardup::start().unwrap();
    let original = web.url(SITE, &format!("/article/{FAR_ARTICLE}"));
    let copy = web.url(FAR, "/copy");
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = SEEDS_ONLY_NOTED;
    std::fs::write(first.path().join("seeds.txt"), format!("{original}\n")).unwrap();
    let (code, _, stderr) = crawl_dir(first.path(), &args, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    // Another --out: the copy is a near-duplicate of the first crawl's page, and the original
    // fetched again is its own earlier capture there, no near-duplicate.
    std::fs::write(
        second.path().join("seeds.txt"),
        format!("{copy}\n{original}\n"),
    )
    .unwrap();
    let against = first.path().join("out").to_string_lossy().into_owned();
    let with: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--dedupe-against", &against])
        .collect();
    let (code, stdout, stderr) = crawl_dir(second.path(), &with, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let rows = parse_log(&stdout);
    let note = |url: &str| rows.iter().find(|r| r.url == url).unwrap().note.clone();
    assert_eq!(
        note(&copy),
        format!("near-duplicate:{original}"),
        "{stdout}"
    );
    assert!(!note(&original).starts_with("near-duplicate"), "{stdout}");
    let clusters = std::fs::read_to_string(second.path().join("out/neardups.tsv")).unwrap();
    assert!(
        clusters.starts_with(&format!("{original}\t{copy}\t")),
        "{clusters}"
    );
    // The first crawl's index is read, not written.
    let first_pages = first.path().join("out/neardup/pages");
    assert_eq!(std::fs::metadata(&first_pages).unwrap().len(), 528);
    // Without --dedupe-against the copy is new (the second crawl's own index has it now, so
    // a third --out).
    let third = tempfile::tempdir().unwrap();
    std::fs::write(third.path().join("seeds.txt"), format!("{copy}\n")).unwrap();
    let (code, stdout, stderr) = crawl_dir(third.path(), &args, &[], None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(
        parse_log(&stdout)
            .iter()
            .all(|r| !r.note.starts_with("near-duplicate")),
        "{stdout}"
    );
}
