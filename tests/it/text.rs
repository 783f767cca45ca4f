//! `--text`: each page's text in WET files beside the WARC files and in the JSON-lines URL log,
//! checked by the independent readers (warcio, FastWARC) and against the WARC files' own record
//! IDs; the CDXJ indexes and `crawl wacz` take no WET file for a WARC file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::crawl_unparsed;
use testweb::warc_readers::{check_with, run_on};
use testweb::{HostSpec, Response, TestWeb};

/// An article page between navigation and a footer, a page of a few lines, plain text, an
/// image and a missing page.
fn site() -> TestWeb {
    let article = "<!doctype html><html lang=en><head><title>On crawling</title></head><body>\
        <nav><a href=/>Home</a> <a href=/short>Short</a> <a href=/notes.txt>Notes</a> \
        <a href=/pic.png>Picture</a> <a href=/gone>Gone</a></nav>\
        <article><h1>On crawling</h1>\
        <p>A polite crawler asks one host for one page at a time, and waits ten times as long \
        as the host took to answer before it asks again.</p>\
        <p>Its seen set lives on disk as a sorted file of checksums, so its memory stays flat \
        however large the crawl grows.</p>\
        <p>Every byte it fetched is archived under the URL that asked for it.</p></article>\
        <footer>Copyright the authors. All rights reserved.</footer></body></html>";
    TestWeb::start(vec![HostSpec::new(move |req| match req.target.as_str() {
        "/" => Response::html(article),
        "/short" => Response::html("<p>One line.</p><p>Another <b>line</b>.</p>"),
        "/notes.txt" => Response::text(200, b"first note\r\nsecond note\r\n".to_vec()),
        "/pic.png" => Response::new(200, "image/png", vec![0x89, b'P', b'N', b'G']),
        _ => Response::not_found(),
    })])
    .unwrap()
}

/// `warcio index` of `file` with `fields`, one map per record.
fn index(file: &Path, fields: &str) -> Vec<BTreeMap<String, String>> {
    check_with("warcio", &["index", "-f", fields], file)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The files of `out/warc` whose names end with `suffix`.
fn files(out: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(out.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    found.sort();
    found
}

#[test]
fn text_goes_to_wet_records_that_refer_to_their_responses_and_to_the_json_log() {
    let web = site();
    let seeds = format!("{}\n", web.url(0, "/"));
    let args = [
        "--delay-factor",
        "0",
        "--text",
        "--warc-compression",
        "gzip",
        "--log-format",
        "jsonl",
    ];
    let run = crawl_unparsed(&seeds, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);

    // The URL log: the text of the HTML and plain-text pages, nothing for the others.
    let lines: Vec<serde_json::Value> = (run.stdout.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let text_of = |path: &str| {
        let url = web.url(0, path);
        let line = lines.iter().find(|l| l["url"] == url.as_str());
        let line = line.unwrap_or_else(|| panic!("{url} not logged: {}", run.stdout));
        line.get("text").map(|t| t.as_str().unwrap().to_owned())
    };
    let main = text_of("/").expect("the article's text");
    assert!(main.contains("waits ten times as long"), "{main}");
    assert!(main.contains("Every byte it fetched"), "{main}");
    assert!(
        !main.contains("Copyright"),
        "the footer is boilerplate: {main}"
    );
    assert!(
        !main.contains("Picture"),
        "the navigation is boilerplate: {main}"
    );
    assert_eq!(
        text_of("/notes.txt").as_deref(),
        Some("first note\nsecond note\n")
    );
    assert_eq!(text_of("/pic.png"), None);
    assert_eq!(text_of("/gone"), None);
    assert_eq!(text_of("/robots.txt"), None);
    // The article's metadata, on its line; none for plain text.
    let line_of = |path: &str| {
        let url = web.url(0, path);
        lines
            .iter()
            .find(|l| l["url"] == url.as_str())
            .unwrap()
            .clone()
    };
    assert_eq!(line_of("/")["title"], "On crawling");
    assert_eq!(line_of("/")["lang"], "en");
    assert!(line_of("/").get("description").is_none());
    assert!(line_of("/notes.txt").get("title").is_none());

    // The WARC files' response records, by ID.
    let warcs = files(&run.out, ".warc.gz");
    let wets = files(&run.out, ".warc.wet.gz");
    assert!(!warcs.is_empty() && !wets.is_empty(), "{warcs:?} {wets:?}");
    let mut responses = BTreeMap::new();
    for file in &warcs {
        for record in index(file, "warc-type,warc-record-id,warc-target-uri") {
            if record["warc-type"] == "response" {
                responses.insert(
                    record["warc-record-id"].clone(),
                    record["warc-target-uri"].clone(),
                );
            }
        }
    }
    // Every conversion record refers to the response of its own URL, and both readers verify
    // every record's digests.
    let mut converted = BTreeSet::new();
    for file in &wets {
        // FastWARC checks block digests; its `--verify-payloads` is of HTTP payloads only (it
        // fails warcio's own conversion records too).
        let (ok, report) = run_on("fastwarc", &["check"], file);
        assert!(ok, "fastwarc check {}:\n{report}", file.display());
        let report = check_with("warcio", &["check", "-v"], file);
        assert!(!report.contains("fail"), "warcio check -v:\n{report}");
        let fields = "warc-type,warc-refers-to,warc-target-uri,content-type";
        for record in index(file, fields) {
            if record["warc-type"] == "warcinfo" {
                continue;
            }
            assert_eq!(record["warc-type"], "conversion", "{record:?}");
            assert_eq!(record["content-type"], "text/plain; charset=utf-8");
            let uri = &record["warc-target-uri"];
            assert_eq!(
                responses.get(&record["warc-refers-to"]),
                Some(uri),
                "{record:?}"
            );
            assert!(converted.insert(uri.clone()), "{uri} converted twice");
        }
    }
    let expected: BTreeSet<String> = ["/", "/short", "/notes.txt"]
        .iter()
        .map(|p| web.url(0, p))
        .collect();
    assert_eq!(converted, expected);

    // The indexes cover the WARC files only, and `crawl wacz` packages them alone.
    let indexes = files(&run.out, ".cdxj");
    assert_eq!(indexes.len(), warcs.len(), "{indexes:?}");
    let wacz = run.out.join("crawl.wacz");
    let args = [
        "wacz",
        run.out.to_str().unwrap(),
        "-o",
        wacz.to_str().unwrap(),
    ];
    let (code, _, stderr) =
        crate::util::run_binary_with(&args.map(String::from), None, &run.out, &[], None);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("{} WARC files", warcs.len())),
        "{stderr}"
    );
}
