//! The WARC files of real crawls, checked by independent readers from PyPI (`warcio`,
//! `fastwarc`), not by the project's own code. `.ci/run` installs them; a missing tool fails
//! the test (with the install command), it never skips it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::util::{Outcome, assert_same_set, crawl, warc_files};
use std::time::Duration;
use testweb::warc_readers::{check_with, run_on};
use testweb::{Graph, GraphSpec, HostSpec, Response, TestWeb};

/// Runs `warcio args… FILE` (through zstdcat for `.warc.zst`); the test fails unless it succeeds.
fn warcio(args: &[&str], file: &Path) -> String {
    check_with("warcio", args, file)
}

/// One record as `warcio index` lists it: its WARC header fields that were asked for.
type IndexRow = BTreeMap<String, String>;

/// `warcio index` of a file, parsed (its JSON lines hold only flat string fields).
fn index(file: &Path) -> Vec<IndexRow> {
    let fields = concat!(
        "warc-type,warc-target-uri,warc-ip-address,warc-truncated,",
        "warc-block-digest,warc-payload-digest"
    );
    warcio(&["index", "-f", fields], file)
        .lines()
        .map(|line| {
            let inner = line
                .trim()
                .strip_prefix("{\"")
                .and_then(|l| l.strip_suffix("\"}"))
                .unwrap_or_else(|| panic!("unexpected warcio index line {line:?}"));
            inner
                .split("\", \"")
                .map(|pair| {
                    let (k, v) = pair
                        .split_once("\": \"")
                        .expect("a \"key\": \"value\" pair");
                    (k.to_owned(), v.to_owned())
                })
                .collect()
        })
        .collect()
}

/// What the independent readers found in one file.
struct Checked {
    records: usize,
    rows: Vec<IndexRow>,
}

/// Checks one file with both readers, digests included; panics with their report otherwise.
fn check(file: &Path) -> Checked {
    let (ok, report) = run_on("fastwarc", &["check", "--verify-payloads"], file);
    let verified = report
        .lines()
        .find_map(|l| l.strip_suffix(" records were verified successfully."))
        .and_then(|n| n.trim().parse::<usize>().ok());
    assert!(
        ok && verified.is_some(),
        "fastwarc check --verify-payloads {}:\n{report}",
        file.display()
    );

    let report = warcio(&["check", "-v"], file);
    assert!(
        !report.contains("fail") && !report.contains("no digest"),
        "warcio check -v {}:\n{report}",
        file.display()
    );
    let rows = index(file);
    assert_eq!(
        report.matches("digest pass").count(),
        rows.len(),
        "warcio must verify a digest of every record of {}:\n{report}",
        file.display()
    );
    assert_eq!(verified, Some(rows.len()), "fastwarc and warcio disagree");
    assert_eq!(
        rows.first().map(|r| r["warc-type"].as_str()),
        Some("warcinfo"),
        "{} must start with a warcinfo record",
        file.display()
    );
    Checked {
        records: rows.len(),
        rows,
    }
}

/// Checks every file of a crawl and holds the archive to the URL log: one response (and one
/// request) record per logged response, of the same URLs, with the peer address.
fn check_crawl(run: &Outcome, extension: &str) -> (Vec<PathBuf>, Vec<IndexRow>) {
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let files = warc_files(&run.out, extension);
    let mut all = Vec::new();
    let mut records = 0;
    for file in &files {
        let checked = check(file);
        records += checked.records;
        all.extend(checked.rows);
    }
    let of_type =
        |t: &str| -> Vec<&IndexRow> { all.iter().filter(|r| r["warc-type"] == t).collect() };
    let responses = of_type("response");
    let answered: Vec<String> = run
        .rows
        .iter()
        .filter(|r| r.status > 0)
        .map(|r| r.url.clone())
        .collect();
    assert_eq!(
        responses.len(),
        answered.len(),
        "one response record per URL-log row with a status"
    );
    assert_eq!(of_type("request").len(), answered.len());
    assert_eq!(of_type("warcinfo").len(), files.len());
    let archived: Vec<String> = responses
        .iter()
        .map(|r| r["warc-target-uri"].clone())
        .collect();
    assert_same_set("URLs archived", &answered, &archived);
    for r in &responses {
        assert_eq!(
            r.get("warc-ip-address").map(String::as_str),
            Some("127.0.0.1"),
            "{r:?}"
        );
    }
    let summary = run.summary();
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    // No two pages of these webs share a payload: payload dedupe writes no revisit.
    let expected = serde_json::json!({"files": files.len(), "records": records, "bytes": bytes,
        "duplicates": 0, "duplicate_bytes": 0});
    assert_eq!(summary["warc"], expected, "{summary}");
    (files, all)
}

/// A host whose pages cover what an archive must get right: a gzip-encoded page (kept
/// encoded), a chunked one (framing removed), one cut at --max-body, a redirect and a 404.
fn awkward_host() -> TestWeb {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&b"<p>zipped <a href=/leaf>leaf</a></p>".repeat(20))
        .unwrap();
    let gzipped = gz.finish().unwrap();
    TestWeb::start(vec![HostSpec::new(move |req| match req.target.as_str() {
        "/" => Response::html(
            "<a href=/gz>gz</a> <a href=/chunked>c</a> <a href=/big>big</a> \
             <a href=/moved>m</a> <a href=/missing>x</a>",
        ),
        "/gz" => Response::html(gzipped.clone()).with_header("Content-Encoding", "gzip"),
        "/chunked" => Response::raw(
            200,
            vec![(
                Duration::ZERO,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\
                  Connection: close\r\n\r\n6\r\n<a hre\r\n10\r\nf=/leaf>leaf</a>\r\n0\r\n\r\n"
                    .to_vec(),
            )],
        ),
        "/big" => Response::text(200, vec![b'x'; 300_000]),
        "/moved" => Response::redirect(301, "/leaf"),
        "/leaf" => Response::html("leaf"),
        _ => Response::not_found(),
    })])
    .unwrap()
}

fn graph_web(pages_per_host: usize) -> TestWeb {
    Graph::new(GraphSpec {
        hosts: 2,
        pages_per_host,
        cross_host_permille: 100,
        page_padding: 1500,
        seed: 7,
        ..GraphSpec::default()
    })
    .start(Duration::ZERO, &|h| {
        (h == 1).then(|| "User-agent: *\nDisallow: /p/1\n".into())
    })
    .unwrap()
}

#[test]
fn zstd_warc_of_a_crawl_verifies_with_independent_readers() {
    let web = graph_web(80);
    let odd = awkward_host();
    let seeds = format!(
        "{}\n{}\n{}\n",
        web.url(0, "/"),
        web.url(1, "/"),
        odd.url(0, "/")
    );
    let run = crawl(
        &seeds,
        &["-j", "4", "--delay-factor", "0", "--max-body", "100K"],
    );
    let (files, rows) = check_crawl(&run, ".warc.zst");
    assert_eq!(files.len(), 1, "{files:?}");
    // The log covers robots.txt (200 on host 1, 404 elsewhere), a 3xx, a 404 and the odd pages.
    let statuses: Vec<u16> = run.rows.iter().map(|r| r.status).collect();
    for status in [200, 301, 404] {
        assert!(statuses.contains(&status), "no {status} in {statuses:?}");
    }
    let big = odd.url(0, "/big");
    let truncated: Vec<&IndexRow> = rows
        .iter()
        .filter(|r| r.contains_key("warc-truncated"))
        .collect();
    assert_eq!(truncated.len(), 1, "{truncated:?}");
    assert_eq!(truncated[0]["warc-target-uri"], big);
    assert_eq!(truncated[0]["warc-truncated"], "length");
    // By default every response record carries both digests (and `check` had warcio and
    // fastwarc verify every record); `--no-warc-block-digest` leaves the block digest out.
    let responses = |rows: &[IndexRow]| -> Vec<(bool, bool)> {
        rows.iter()
            .filter(|r| r["warc-type"] == "response")
            .map(|r| {
                let has = |k: &str| r.get(k).is_some_and(|v| v.starts_with("sha1:"));
                (has("warc-payload-digest"), has("warc-block-digest"))
            })
            .collect()
    };
    let default = responses(&rows);
    assert!(default.len() > 80, "{}", default.len());
    assert!(default.iter().all(|&d| d == (true, true)), "{default:?}");
    let without = crawl(
        &seeds,
        &[
            "-j",
            "4",
            "--delay-factor",
            "0",
            "--max-body",
            "100K",
            "--no-warc-block-digest",
        ],
    );
    let (_, rows) = check_crawl(&without, ".warc.zst");
    let told = responses(&rows);
    assert_eq!(told.len(), default.len());
    assert!(told.iter().all(|&d| d == (true, false)), "{told:?}");
}

#[test]
fn gzip_warc_verifies_with_warcio_directly() {
    let web = graph_web(40);
    let odd = awkward_host();
    let seeds = format!("{}\n{}\n", web.url(0, "/"), odd.url(0, "/"));
    let run = crawl(
        &seeds,
        &[
            "--delay-factor",
            "0",
            "--warc-compression",
            "gzip",
            "--max-body",
            "100K",
        ],
    );
    let (files, _) = check_crawl(&run, ".warc.gz");
    // gzip files need no zstdcat: warcio reads them as pywb and replayweb.page would.
    let (ok, report) = run_on("warcio", &["check"], &files[0]);
    assert!(ok, "{report}");
}

#[test]
fn rotation_makes_several_files_that_each_verify() {
    let web = graph_web(100);
    let seeds = format!("{}\n{}\n", web.url(0, "/"), web.url(1, "/"));
    let run = crawl(
        &seeds,
        &["-j", "4", "--delay-factor", "0", "--warc-max-size", "20K"],
    );
    let (files, _) = check_crawl(&run, ".warc.zst");
    assert!(files.len() >= 3, "expected several files: {files:?}");
    for (i, file) in files.iter().enumerate() {
        let name = file.to_string_lossy();
        assert!(
            name.ends_with(&format!("-{i:05}.warc.zst")),
            "serial numbers run 0, 1, 2, … in name order: {files:?}"
        );
    }
    // Every file but the last reached the limit before it was closed, by at most one exchange.
    for file in &files[..files.len() - 1] {
        let len = std::fs::metadata(file).unwrap().len();
        assert!(
            (20 << 10..200 << 10).contains(&len),
            "{}: {len} bytes",
            file.display()
        );
    }
}

#[test]
fn no_warc_writes_no_archive() {
    let web = graph_web(10);
    let run = crawl(
        &format!("{}\n", web.url(0, "/")),
        &["--delay-factor", "0", "--no-warc", "-v"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!run.out.join("warc").exists());
    let summary = run.summary();
    assert!(summary["warc"].is_null(), "{summary}");
    assert!(run.stderr.contains("WARC off"), "{}", run.stderr);
}

#[test]
fn an_unwritable_warc_directory_is_fatal() {
    let web = graph_web(10);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("warc"), b"not a directory").unwrap();
    std::fs::write(
        dir.path().join("seeds.txt"),
        format!("{}\n", web.url(0, "/")),
    )
    .unwrap();
    let args = ["seeds.txt", "--out", "out", "--delay-factor", "0"].map(String::from);
    let (code, stdout, stderr) = crate::util::run_binary(&args, None, dir.path());
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stderr.starts_with("crawl: ") && stderr.contains("WARC"),
        "the error names the archive: {stderr}"
    );
    assert!(stdout.is_empty(), "nothing was fetched: {stdout}");
}
