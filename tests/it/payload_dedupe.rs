//! Payload dedupe (issue 32): on a web with mirrored sections (one section under two paths of a
//! host and on a mirror host), each payload is archived once and every other copy is a
//! `revisit` of its first capture that pywb replays as the original's bytes; the links of the
//! copies are still followed; `--dedupe-against` reads another state directory's indexes; a kill
//! around the digest log's append neither loses nor repeats a digest line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::archive::{compare_with_reference, get, merged_index, parse_line, pywb_serving};
use crate::util::{LogRow, crawl_dir, parse_log, read_summary, warc_text};
use testweb::warc_readers::check_with;
use testweb::{HostSpec, Request, Response, TestWeb};

/// Pages in the mirrored section (its index page aside).
pub(crate) const SECTION_PAGES: usize = 6;

/// The section's pages, the same bytes wherever served (links are relative): `/` is its
/// index, `/pN` its pages, and `/pN/more` a page reached only through `pN`, which says where it
/// is (`place`), so a copy's links must be read to reach it.
fn section(place: &str, rest: &str) -> Option<String> {
    // Text that compresses about as little as prose, the same on every copy.
    let mut x = rest.len() as u64 + 0x9e37_79b9;
    let padding: String = (0..300)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("w{:x} ", x % 0xfffff)
        })
        .collect();
    Some(match rest {
        "/" => {
            let links: String = (1..=SECTION_PAGES)
                .map(|i| format!("<a href=\"p{i}\">page {i}</a> "))
                .collect();
            format!("<html><body><h1>Section</h1>{links}<p>{padding}</p></body></html>")
        }
        _ => {
            let page = rest.strip_prefix("/p")?;
            match page.split_once('/') {
                None => format!(
                    "<html><body><h1>Page {page}</h1><a href=\"p{page}/more\">more</a>\
                     <p>{padding}</p></body></html>"
                ),
                Some((_, "more")) => format!("<html><body>only at {place}{rest}</body></html>"),
                Some(_) => return None,
            }
        }
    })
}

/// Host 0 serves the section at `/a/` and `/b/` and links to the mirror's copy; host 1 (the
/// mirror) serves it at `/a/`.
pub(crate) fn mirrored_web() -> TestWeb {
    let mirror_url = Arc::new(OnceLock::<String>::new());
    let link = Arc::clone(&mirror_url);
    let serve = |place: &str, path: &str, prefixes: &[&str]| {
        prefixes
            .iter()
            .find_map(|p| {
                let rest = path.strip_prefix(p).filter(|r| r.starts_with('/'))?;
                section(&format!("{place}{p}"), rest)
            })
            .map_or_else(Response::not_found, Response::html)
    };
    let web = TestWeb::start(vec![
        HostSpec::new(move |req: &Request| match req.target.as_str() {
            "/" => Response::html(format!(
                "<html><body><a href=/a/>a</a> <a href=/b/>b</a> <a href={}>mirror</a></body></html>",
                link.get().map_or("/", String::as_str)
            )),
            path => serve("host", path, &["/a", "/b"]),
        }),
        HostSpec::new(move |req: &Request| serve("mirror", &req.target, &["/a"])),
    ])
    .unwrap();
    mirror_url.set(web.url(1, "/a/")).unwrap();
    web
}

/// Pages of the web: the home page and three copies of the section.
const PAGES: usize = 1 + 3 * (1 + 2 * SECTION_PAGES);

/// Crawls `web` from its home page in `dir` with `args`; returns the URL log's rows.
fn crawl(dir: &Path, web: &TestWeb, args: &[&str]) -> Vec<LogRow> {
    std::fs::write(dir.join("seeds.txt"), format!("{}\n", web.url(0, "/"))).unwrap();
    let mut all = vec![
        "--delay-factor",
        "0",
        "--warc-compression",
        "gzip",
        "--scope",
        "any",
    ];
    all.extend(args);
    let (code, stdout, stderr) = crawl_dir(dir, &all, &[], None);
    assert_eq!(code, Some(0), "{stderr}");
    parse_log(&stdout)
}

/// The page rows of a URL log (robots.txt left out), by URL.
fn pages(rows: &[LogRow]) -> BTreeMap<String, &LogRow> {
    rows.iter()
        .filter(|r| r.is_page())
        .map(|r| (r.url.clone(), r))
        .collect()
}

/// One WARC record's header fields (the first occurrence of each), from the decompressed text,
/// with `HTTP-Status`: the status of the HTTP response it holds, if any.
fn records(text: &str) -> Vec<BTreeMap<String, String>> {
    text.split("WARC/1.1\r\n")
        .skip(1)
        .map(|record| {
            let mut parts = record.split("\r\n\r\n");
            let head = parts.next().unwrap();
            let mut fields = BTreeMap::new();
            for line in head.lines() {
                if let Some((k, v)) = line.split_once(": ") {
                    fields
                        .entry(k.to_owned())
                        .or_insert_with(|| v.trim().to_owned());
                }
            }
            let status = parts.next().and_then(|block| {
                let rest = block.strip_prefix("HTTP/1.1 ")?;
                Some(rest.get(..3)?.to_owned())
            });
            fields.extend(status.map(|s| ("HTTP-Status".to_owned(), s)));
            fields
        })
        .collect()
}

/// The digest store's log: (digest, date, URI) lines.
fn digest_log(out: &Path) -> Vec<(String, String, String)> {
    std::fs::read_to_string(out.join("digests/log"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut f = l.splitn(3, '\t').map(str::to_owned);
            (f.next().unwrap(), f.next().unwrap(), f.next().unwrap())
        })
        .collect()
}

/// Every revisit of the identical-payload profile names a `response` record of the archive with
/// its digest, at its URI and date, written before it; returns how many there are.
fn revisits_resolve(out: &Path) -> usize {
    let mut responses = BTreeSet::new();
    let mut revisits = 0;
    for r in records(&warc_text(out, ".warc.gz")) {
        let field = |name: &str| r.get(name).cloned().unwrap_or_default();
        match r["WARC-Type"].as_str() {
            "response" => {
                let uri = field("WARC-Target-URI");
                responses.insert((uri, field("WARC-Date"), field("WARC-Payload-Digest")));
            }
            "revisit" => {
                revisits += 1;
                assert_eq!(
                    r["WARC-Profile"],
                    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
                );
                let original = (
                    field("WARC-Refers-To-Target-URI"),
                    field("WARC-Refers-To-Date"),
                    field("WARC-Payload-Digest"),
                );
                assert!(
                    responses.contains(&original),
                    "{r:?} refers to no response before it"
                );
            }
            _ => {}
        }
    }
    revisits
}

/// The mirrored web crawled with payload dedupe (the default) and without: the same pages
/// fetched (the copies' own links followed), every copy but the first of each payload a
/// revisit noted `duplicate`, fewer bytes; readers accept the files, the indexes equal
/// cdxj-indexer's, and pywb replays a copy as its original's bytes.
#[test]
fn mirrored_sections_are_archived_once_and_replay_as_the_original() {
    let web = mirrored_web();
    let (on, off) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let rows_on = crawl(on.path(), &web, &[]);
    let rows_off = crawl(off.path(), &web, &["--no-payload-dedupe"]);
    let (pages_on, pages_off) = (pages(&rows_on), pages(&rows_off));
    assert_eq!(pages_on.len(), PAGES, "{pages_on:#?}");
    assert_eq!(
        pages_on.keys().collect::<Vec<_>>(),
        pages_off.keys().collect::<Vec<_>>()
    );
    assert!(pages_on.values().all(|r| r.status == 200), "{pages_on:#?}");
    // Each copy's `more` pages differ (they say where they are); everything else is a copy.
    let duplicates: Vec<&str> = (pages_on.values())
        .filter(|r| r.note == "duplicate")
        .map(|r| r.url.as_str())
        .collect();
    assert_eq!(duplicates.len(), 2 * (1 + SECTION_PAGES), "{duplicates:#?}");
    assert!(duplicates.iter().all(|u| !u.ends_with("/more")));
    assert!(pages_off.values().all(|r| r.note != "duplicate"));

    let (out_on, out_off) = (on.path().join("out"), off.path().join("out"));
    let (s_on, s_off) = (read_summary(&out_on), read_summary(&out_off));
    let (w_on, w_off) = (&s_on["warc"], &s_off["warc"]);
    eprintln!("payload dedupe on: {w_on}\npayload dedupe off: {w_off}");
    assert_eq!(w_on["duplicates"], duplicates.len());
    assert_eq!(w_off["duplicates"], 0);
    assert_eq!(
        w_on["records"], w_off["records"],
        "a revisit for a response"
    );
    assert!(w_on["bytes"].as_u64() < w_off["bytes"].as_u64());
    assert!(w_on["duplicate_bytes"].as_u64().unwrap() > 2000 * duplicates.len() as u64);
    assert_eq!(revisits_resolve(&out_on), duplicates.len());
    // One digest line per distinct payload archived.
    let log = digest_log(&out_on);
    let distinct: BTreeSet<&String> = log.iter().map(|(d, _, _)| d).collect();
    assert_eq!(distinct.len(), log.len());
    assert_eq!(log.len(), PAGES - duplicates.len());

    for warc in crate::util::warc_files(&out_on, ".warc.gz") {
        let report = check_with("warcio", &["check", "-v"], &warc);
        assert!(!report.contains("fail"), "{report}");
    }
    let lines = compare_with_reference(&out_on);
    let revisit_lines = lines.iter().filter(|f| f["mime"] == "warc/revisit").count();
    assert_eq!(revisit_lines, duplicates.len());

    // pywb serves a copy at its revisit's timestamp with its original's bytes.
    let index = merged_index(&out_on);
    let warcs = crate::util::warc_files(&out_on, ".warc.gz");
    let (_server, port) = pywb_serving(&on.path().join("pywb"), &warcs, &index);
    // A copy of page 3 (which of the three copies came first depends on the workers).
    let (_, ts, fields) = index
        .lines()
        .map(parse_line)
        .find(|(_, _, f)| f["url"].ends_with("/p3") && f["mime"] == "warc/revisit")
        .expect("a revisit of page 3");
    let copy = fields["url"].clone();
    let (code, head, replayed) = get(port, &format!("/crawl/{ts}id_/{copy}")).unwrap();
    assert_eq!(code, 200, "{head}");
    let original = section("host/a", "/p3").unwrap();
    assert_eq!(String::from_utf8_lossy(&replayed), original, "{head}");
    eprintln!(
        "pywb /crawl/{ts}id_/{copy} (a revisit) -> {code}, {} bytes equal to the original",
        replayed.len()
    );
}

/// A crawl of the mirror alone with `--dedupe-against` the state directory of a crawl of host
/// 0: every page of the mirror whose payload that crawl archived is a revisit of its capture
/// there; the state directory named must hold indexes.
#[test]
fn dedupe_against_another_state_directory() {
    let web = mirrored_web();
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        first.path().join("seeds.txt"),
        format!("{}\n", web.url(0, "/a/")),
    )
    .unwrap();
    let args = ["--delay-factor", "0", "--warc-compression", "gzip"];
    let (code, _, stderr) = crawl_dir(first.path(), &args, &[], None);
    assert_eq!(code, Some(0), "{stderr}");
    let first_out = first.path().join("out");
    let first_log = digest_log(&first_out);

    std::fs::write(
        second.path().join("seeds.txt"),
        format!("{}\n", web.url(1, "/a/")),
    )
    .unwrap();
    let against = first_out.to_string_lossy().into_owned();
    let mut with = args.to_vec();
    with.extend(["--dedupe-against", &against]);
    let (code, stdout, stderr) = crawl_dir(second.path(), &with, &[], None);
    assert_eq!(code, Some(0), "{stderr}");
    let rows = parse_log(&stdout);
    let pages = pages(&rows);
    let summary = read_summary(&second.path().join("out"));
    eprintln!("--dedupe-against: {}", summary["warc"]);
    let duplicates: Vec<_> = pages.values().filter(|r| r.note == "duplicate").collect();
    assert_eq!(duplicates.len(), 1 + SECTION_PAGES, "{pages:#?}");
    let text = warc_text(&second.path().join("out"), ".warc.gz");
    let host0 = web.url(0, "/a/");
    for r in records(&text)
        .iter()
        .filter(|r| r["WARC-Type"] == "revisit")
    {
        let (uri, date) = (&r["WARC-Refers-To-Target-URI"], &r["WARC-Refers-To-Date"]);
        assert!(uri.starts_with(&host0), "{r:?}");
        assert!(
            first_log.iter().any(|(_, d, u)| u == uri && d == date),
            "{uri} {date} is a capture of the first crawl"
        );
    }

    // A directory without indexes is refused, naming it.
    let empty = tempfile::tempdir().unwrap();
    let name = empty.path().to_string_lossy().into_owned();
    let mut bad = args.to_vec();
    bad.extend(["--dedupe-against", &name]);
    let (code, _, stderr) = crawl_dir(second.path(), &bad, &[], None);
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains(&name) && stderr.contains("CDXJ"),
        "{stderr}"
    );
}

/// A kill after a batch's records reached the WARC file and before their digest lines did
/// (`digest-log`), or after the lines and before the pages were done (`digest-done`): the
/// resumed crawl ends with one digest line per payload archived whole, and every revisit names
/// a response of the archive. (One host: the section at `/a/` and `/b/`.)
#[test]
fn a_kill_around_the_digest_log_loses_and_repeats_no_line() {
    for (point, pass) in [("digest-log", "3"), ("digest-done", "4")] {
        let web = mirrored_web();
        let dir = tempfile::tempdir().unwrap();
        let seeds = format!("{}\n", web.url(0, "/"));
        std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
        let args = [
            "--delay-factor",
            "0",
            "--warc-compression",
            "gzip",
            "-j",
            "2",
        ];
        let env = [("CRAWL_FAILPOINT", format!("{point}:{pass}"))];
        let (code, _, stderr) = crawl_dir(dir.path(), &args, &env, None);
        assert_eq!(code, None, "killed at {point}: {stderr}");
        let (code, _, stderr) = crawl_dir(dir.path(), &args, &[], None);
        assert_eq!(code, Some(0), "{point}: {stderr}");
        let out = dir.path().join("out");
        let log = digest_log(&out);
        let distinct: BTreeSet<&String> = log.iter().map(|(d, _, _)| d).collect();
        assert_eq!(
            distinct.len(),
            log.len(),
            "{point}: a digest twice: {log:#?}"
        );
        // Every payload archived whole has its line, and only those.
        let text = warc_text(&out, ".warc.gz");
        let archived: BTreeSet<String> = records(&text)
            .iter()
            .filter(|r| r["WARC-Type"] == "response" && r["HTTP-Status"] == "200")
            .map(|r| r["WARC-Payload-Digest"].clone())
            .collect();
        let logged: BTreeSet<String> = distinct.into_iter().cloned().collect();
        assert_eq!(logged, archived, "{point}");
        // The home page, the section's 7 pages and its 2 × 6 `more` pages.
        assert_eq!(
            log.len(),
            1 + (1 + SECTION_PAGES) + 2 * SECTION_PAGES,
            "{point}"
        );
        revisits_resolve(&out);
    }
}
