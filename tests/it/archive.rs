//! Replayable archives (issue 15): the CDXJ index the crawl writes beside each WARC file equals
//! what pywb's `cdxj-indexer` makes of that file, a kill between a record and its index line is
//! repaired, `crawl wacz` makes a package `wacz validate` accepts, and pywb replays the crawl
//! from our index. The Python tools come from PyPI (`.ci/run` installs them); a missing one
//! fails the test with the install hint, it never skips it.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::util::{crawl_dir, run_binary_with};
use testweb::warc_readers::{PIP_HINT, run};
use testweb::{Graph, GraphSpec, HostSpec, Request, Response, TestWeb};

/// A site with what an index must get right: a gzip-encoded page, a page cut at --max-body, a
/// redirect, a 404, a query, and (from `version` 1 on) pages that are unchanged on a recrawl:
/// `/a` answers 304 (a server-not-modified revisit), `/b` the same bytes again (an
/// identical-payload revisit), `/` changes.
fn site(version: Arc<AtomicUsize>) -> TestWeb {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&b"<p>zipped</p>".repeat(20)).unwrap();
    let gzipped = gz.finish().unwrap();
    TestWeb::start(vec![HostSpec::new(move |req: &Request| {
        let v = version.load(Ordering::SeqCst);
        match req.target.as_str() {
            "/robots.txt" => Response::not_found(),
            "/" => Response::html(format!(
                "<html><head><title>Home v{v}</title></head><body>home page \
                 <a href=/a>a</a> <a href=/b>b</a> <a href=/gz>gz</a> <a href=/big>big</a> \
                 <a href=/moved>moved</a> <a href=/missing>x</a> <a href=/Q?b=2&amp;a=1>q</a>\
                 </body></html>"
            )),
            "/a" => {
                if req.header("if-none-match") == Some("\"a1\"") {
                    Response::new(304, "text/html", "").with_header("ETag", "\"a1\"")
                } else {
                    Response::html("<html><title>A</title><body>archived a</body></html>")
                        .with_header("ETag", "\"a1\"")
                }
            }
            "/b" => Response::html("<html><body>plain b <a href=/>home</a></body></html>"),
            "/gz" => Response::html(gzipped.clone()).with_header("Content-Encoding", "gzip"),
            "/big" => Response::text(200, vec![b'x'; 300_000]),
            "/moved" => Response::redirect(301, "/leaf"),
            "/leaf" => Response::html("leaf"),
            "/Q?b=2&a=1" => Response::new(200, "text/html; charset=utf-8", "query"),
            _ => Response::not_found(),
        }
    })])
    .unwrap()
}

/// A state directory with the seeds file of `web`'s home page.
fn seeded(web: &TestWeb) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("seeds.txt"),
        format!("{}\n", web.url(0, "/")),
    )
    .unwrap();
    dir
}

/// Runs `crawl DIR/seeds.txt --out DIR/out ARGS…`; returns the exit code and stderr.
fn crawl_in(dir: &Path, args: &[&str], env: &[(&str, String)]) -> (Option<i32>, String) {
    let all: Vec<&str> = ["--delay-factor", "0", "--max-body", "100K"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    let (code, _, stderr) = crawl_dir(dir, &all, env, None);
    (code, stderr)
}

/// Waits (polling the clock, bounded) until the UTC second is past `t`'s, so that a recrawl's
/// captures get timestamps of their own.
fn next_second(t: SystemTime) {
    let second = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_secs();
    let deadline = Instant::now() + Duration::from_secs(3);
    while second(SystemTime::now()) <= second(t) {
        assert!(Instant::now() < deadline, "the clock stopped");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A crawl of `site` and its recrawl (with revisits) in `compression`.
fn crawled_twice(compression: &str) -> (TestWeb, tempfile::TempDir) {
    let version = Arc::new(AtomicUsize::new(0));
    let web = site(Arc::clone(&version));
    let dir = seeded(&web);
    let args = ["--warc-compression", compression];
    let (code, stderr) = crawl_in(dir.path(), &args, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    next_second(SystemTime::now());
    version.store(1, Ordering::SeqCst);
    let (code, stderr) = crawl_in(dir.path(), &args, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    (web, dir)
}

/// The WARC files of a state directory and, for each, its index; nothing may be left `.open`.
pub(crate) fn warcs_and_indexes(out: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with(".open") || n.contains(".run-") || n.ends_with(".tmp")),
        "{names:?}"
    );
    let warcs: Vec<PathBuf> = names
        .iter()
        .filter(|n| n.ends_with(".warc.gz") || n.ends_with(".warc.zst"))
        .map(|n| out.join("warc").join(n))
        .collect();
    assert!(!warcs.is_empty(), "{names:?}");
    // Other files (a sidecar such as a WET file) may stand beside them.
    let indexes = names.iter().filter(|n| n.ends_with(".cdxj")).count();
    assert_eq!(indexes, warcs.len(), "one index per WARC file: {names:?}");
    warcs
        .into_iter()
        .map(|w| {
            let index = PathBuf::from(format!("{}.cdxj", w.display()));
            assert!(index.exists(), "{} has no index", w.display());
            (w, index)
        })
        .collect()
}

/// One index line: its key and timestamp, and its JSON fields.
pub(crate) fn parse_line(line: &str) -> (String, String, BTreeMap<String, String>) {
    let mut parts = line.splitn(3, ' ');
    let key = parts.next().unwrap().to_owned();
    let ts = parts.next().unwrap().to_owned();
    let json: BTreeMap<String, String> =
        serde_json::from_str(parts.next().unwrap()).unwrap_or_else(|e| panic!("{line}: {e}"));
    (key, ts, json)
}

/// `cdxj-indexer --sort` of a WARC file (a `.warc.zst` decompressed first, as the tool reads
/// no zstd), as lines.
fn reference_index(warc: &Path, scratch: &Path) -> Vec<String> {
    let input = if warc.to_string_lossy().ends_with(".zst") {
        let plain = scratch.join(
            warc.file_name()
                .unwrap()
                .to_string_lossy()
                .replace(".zst", ""),
        );
        let (ok, text) = run(
            Command::new("zstd")
                .args(["-d", "-q", "-f", "-o"])
                .arg(&plain)
                .arg(warc),
            None,
        );
        assert!(ok, "zstd -d {}: {text}", warc.display());
        plain
    } else {
        warc.to_path_buf()
    };
    let (ok, text) = run(Command::new("cdxj-indexer").arg("--sort").arg(&input), None);
    assert!(ok, "cdxj-indexer {}: {text}", input.display());
    text.lines().map(str::to_owned).collect()
}

/// Compares the crawl's index of every WARC file with cdxj-indexer's, line by line for gzip
/// files. For zstd files `offset` and `length` are positions in the compressed file (the
/// reference indexes the decompressed one), so they are checked by decoding that frame: it must
/// be the record of that URL. Returns the JSON fields of every line compared.
pub(crate) fn compare_with_reference(out: &Path) -> Vec<BTreeMap<String, String>> {
    let scratch = tempfile::tempdir().unwrap();
    let mut compared = Vec::new();
    for (warc, index) in warcs_and_indexes(out) {
        let ours: Vec<String> = std::fs::read_to_string(&index)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let reference = reference_index(&warc, scratch.path());
        assert_eq!(
            ours.len(),
            reference.len(),
            "{}:\n{ours:#?}\n{reference:#?}",
            warc.display()
        );
        let zstd = warc.to_string_lossy().ends_with(".zst");
        let raw = std::fs::read(&warc).unwrap();
        let name = warc.file_name().unwrap().to_str().unwrap();
        for (line, expected) in ours.iter().zip(&reference) {
            let (key, ts, fields) = parse_line(line);
            compared.push(fields.clone());
            if !zstd {
                assert_eq!(line, expected, "{}", warc.display());
                continue;
            }
            let (ref_key, ref_ts, mut ref_fields) = parse_line(expected);
            assert_eq!((&key, &ts), (&ref_key, &ref_ts));
            let mut without_place = fields.clone();
            for f in ["offset", "length", "filename"] {
                without_place.remove(f);
                ref_fields.remove(f);
            }
            assert_eq!(without_place, ref_fields, "{line}");
            assert_eq!(fields["filename"], name);
            let at: usize = fields["offset"].parse().unwrap();
            let len: usize = fields["length"].parse().unwrap();
            let frame = zstd::decode_all(&raw[at..at + len]).unwrap();
            let text = String::from_utf8_lossy(&frame);
            assert!(text.starts_with("WARC/1.1\r\n"), "{line}");
            assert!(
                text.contains(&format!("WARC-Target-URI: {}\r\n", fields["url"])),
                "{line}"
            );
        }
    }
    compared
}

#[test]
fn the_index_equals_cdxj_indexer_for_gzip_and_zstd() {
    for compression in ["gzip", "zstd"] {
        let (_web, dir) = crawled_twice(compression);
        let lines = compare_with_reference(&dir.path().join("out"));
        let count = |mime: &str, status: &str| {
            lines
                .iter()
                .filter(|f| {
                    f.get("mime").map(String::as_str) == Some(mime) && f["status"] == status
                })
                .count()
        };
        // Both revisit profiles (304 for /a, the same payload for the others), the redirect,
        // the 404s (robots.txt, the seed host's /sitemap.xml, /missing); the gzip-encoded and the
        // truncated page are there too.
        assert_eq!(count("warc/revisit", "304"), 1, "{lines:#?}");
        assert!(count("warc/revisit", "200") >= 2, "{lines:#?}");
        assert_eq!(count("text/plain", "301"), 1, "{lines:#?}");
        assert_eq!(count("warc/revisit", "301"), 1, "{lines:#?}");
        assert_eq!(count("text/plain", "404"), 3, "{lines:#?}");
        let revisit_304 = lines.iter().find(|f| f["status"] == "304").unwrap();
        assert!(
            !revisit_304.contains_key("digest"),
            "a not-modified revisit has no digest"
        );
        eprintln!(
            "{compression}: {} lines equal to cdxj-indexer's",
            lines.len()
        );
    }
}

/// A fast zstd level changes the bytes, not the archive: readers verify every digest and the
/// index still equals cdxj-indexer's, record for record. The level is refused for gzip.
#[test]
fn a_fast_zstd_level_keeps_the_archive_verified_and_indexed() {
    let web = site(Arc::new(AtomicUsize::new(0)));
    let dir = seeded(&web);
    let (code, stderr) = crawl_in(dir.path(), &["--zstd-level=-5"], &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let out = dir.path().join("out");
    let lines = compare_with_reference(&out);
    assert!(lines.len() >= 8, "{lines:#?}");
    for warc in crate::util::warc_files(&out, "warc.zst") {
        let (ok, report) = run(
            Command::new("fastwarc")
                .args(["check", "--verify-payloads"])
                .arg(&warc),
            None,
        );
        assert!(ok && report.contains("verified successfully"), "{report}");
    }
    let dir = seeded(&web);
    let args = ["--warc-compression", "gzip", "--zstd-level", "3"];
    let (code, stderr) = crawl_in(dir.path(), &args, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--zstd-level 3 applies to --warc-compression zstd"),
        "{stderr}"
    );
}

fn graph_web() -> TestWeb {
    Graph::new(GraphSpec {
        hosts: 2,
        pages_per_host: 40,
        cross_host_permille: 100,
        page_padding: 500,
        seed: 11,
        ..GraphSpec::default()
    })
    .start(Duration::ZERO, &|_| None)
    .unwrap()
}

/// A kill after a record was written and before its index line (and one between closing a WARC
/// file and sorting its index), with small files that rotate: the next run rebuilds each index
/// from its WARC file, and every index equals cdxj-indexer's (indexes of more than 600 bytes of lines
/// sorted through runs on disk).
#[test]
fn a_kill_between_record_and_index_line_is_repaired() {
    for (point, pass) in [("cdxj-line", "7"), ("cdxj-sort", "2")] {
        let web = graph_web();
        let dir = seeded(&web);
        let args = [
            "--warc-compression",
            "gzip",
            "--warc-max-size",
            "8K",
            "-j",
            "2",
        ];
        let env = [("CRAWL_FAILPOINT", format!("{point}:{pass}"))];
        let (code, stderr) = crawl_in(dir.path(), &args, &env);
        assert_eq!(code, None, "killed at {point}: {stderr}");
        let leftovers: Vec<String> = std::fs::read_dir(dir.path().join("out/warc"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".cdxj.open"))
            .collect();
        assert!(!leftovers.is_empty(), "the kill left an open index");
        // Indexes sorted through runs on disk (past 600 bytes of lines) on the way.
        let sort_bytes = [("CRAWL_CDXJ_SORT_BYTES", "600".to_owned())];
        let (code, stderr) = crawl_in(dir.path(), &args, &sort_bytes);
        assert_eq!(code, Some(0), "{stderr}");
        let lines = compare_with_reference(&dir.path().join("out"));
        assert!(lines.len() >= 40, "{point}: {} lines", lines.len());
    }
}

/// Runs `crawl wacz OUT -o FILE`; returns the exit code and stderr.
fn wacz(out: &Path, file: &Path) -> (Option<i32>, String) {
    let args = [
        "wacz".to_owned(),
        out.to_string_lossy().into_owned(),
        "-o".into(),
        file.to_string_lossy().into_owned(),
    ];
    let (code, _, stderr) = run_binary_with(&args, None, out, &[], None);
    (code, stderr)
}

/// Every line of the crawl's indexes, sorted: what one merged index holds.
pub(crate) fn merged_index(out: &Path) -> String {
    let mut lines: Vec<String> = warcs_and_indexes(out)
        .iter()
        .flat_map(|(_, index)| {
            let text = std::fs::read_to_string(index).unwrap();
            text.lines().map(|l| format!("{l}\n")).collect::<Vec<_>>()
        })
        .collect();
    lines.sort();
    lines.concat()
}

#[test]
fn wacz_packages_a_gzip_crawl_that_wacz_validate_accepts() {
    let (web, dir) = crawled_twice("gzip");
    let out = dir.path().join("out");
    // A WARC file's sidecar (`output::names`: a WET file, say) is neither packaged nor indexed.
    let first = warcs_and_indexes(&out)[0].0.to_string_lossy().into_owned();
    let sidecar = first.replace(".warc.gz", ".warc.wet.gz");
    std::fs::write(&sidecar, b"derived records, no file of the archive's").unwrap();
    let file = dir.path().join("crawl.wacz");
    let (code, stderr) = wacz(&out, &file);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("2 WARC files (0 converted from zstd), 20 captures, 7 pages"),
        "{stderr}"
    );

    let (ok, report) = run(
        Command::new("wacz").args(["validate", "-f"]).arg(&file),
        None,
    );
    eprintln!("wacz validate -f crawl.wacz:{report}");
    assert!(
        ok && report.contains("Validation succeeded"),
        "{report}\n{PIP_HINT}"
    );

    let mut zip = zip::ZipArchive::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    names.sort();
    let warcs: Vec<String> = warcs_and_indexes(&out)
        .iter()
        .map(|(w, _)| format!("archive/{}", w.file_name().unwrap().to_string_lossy()))
        .collect();
    let mut expected = warcs.clone();
    expected.extend(
        [
            "datapackage-digest.json",
            "datapackage.json",
            "indexes/index.cdx",
            "pages/pages.jsonl",
        ]
        .map(String::from),
    );
    expected.sort();
    assert_eq!(names, expected);
    let mut read = |name: &str| {
        let mut entry = zip.by_name(name).unwrap();
        assert_eq!(
            entry.compression(),
            zip::CompressionMethod::Stored,
            "{name}"
        );
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        text
    };
    assert_eq!(read("indexes/index.cdx"), merged_index(&out));
    let pages = read("pages/pages.jsonl");
    let pages: Vec<serde_json::Value> = pages
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(pages[0]["format"], "json-pages-1.0");
    let titled = |url: &str| {
        pages[1..]
            .iter()
            .filter(|p| p["url"] == url)
            .map(|p| p["title"].as_str().unwrap_or("").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(titled(&web.url(0, "/")), ["Home v0", "Home v1"]);
    assert_eq!(titled(&web.url(0, "/a")), ["A"]);
    assert_eq!(
        titled(&web.url(0, "/gz")),
        [""],
        "encoded: no title looked for"
    );
}

/// A zstd crawl (the default) is packaged with its records gzipped again: the WACZ validates,
/// and its index equals what cdxj-indexer makes of the converted file. A directory without WARC
/// files, or a file that is not a WARC file, is bad input.
#[test]
fn wacz_converts_a_zstd_crawl_and_refuses_a_directory_without_warc_files() {
    let web = site(Arc::new(AtomicUsize::new(0)));
    let dir = seeded(&web);
    let (code, stderr) = crawl_in(dir.path(), &[], &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let out = dir.path().join("out");
    let zst = &warcs_and_indexes(&out)[0].0;
    assert!(zst.to_string_lossy().ends_with(".warc.zst"));
    let file = dir.path().join("crawl.wacz");
    let (code, stderr) = wacz(&out, &file);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("1 WARC files (1 converted from zstd), 11 captures"),
        "{stderr}"
    );
    let (ok, report) = run(
        Command::new("wacz").args(["validate", "-f"]).arg(&file),
        None,
    );
    assert!(
        ok && report.contains("Validation succeeded"),
        "{report}\n{PIP_HINT}"
    );

    let mut zip = zip::ZipArchive::new(std::fs::File::open(&file).unwrap()).unwrap();
    let gz_name = zst
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace(".warc.zst", ".warc.gz");
    let converted = dir.path().join(&gz_name);
    let mut entry = zip.by_name(&format!("archive/{gz_name}")).unwrap();
    std::io::copy(&mut entry, &mut std::fs::File::create(&converted).unwrap()).unwrap();
    drop(entry);
    let mut index = String::new();
    zip.by_name("indexes/index.cdx")
        .unwrap()
        .read_to_string(&mut index)
        .unwrap();
    let reference = reference_index(&converted, dir.path());
    assert_eq!(index.lines().collect::<Vec<_>>(), reference);
    // The same records: the converted file decompresses to the zstd file's bytes.
    let (ok, text) = run(
        Command::new("warcio").args(["check", "-v"]).arg(&converted),
        None,
    );
    assert!(ok && !text.contains("fail"), "{text}");
    let plain = |path: &Path| {
        let mut bytes = Vec::new();
        if path.to_string_lossy().ends_with(".zst") {
            bytes = zstd::decode_all(std::fs::File::open(path).unwrap()).unwrap();
        } else {
            flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
                .read_to_end(&mut bytes)
                .unwrap();
        }
        bytes
    };
    assert!(
        plain(&converted) == plain(zst),
        "records differ after conversion"
    );

    let (code, stderr) = wacz(dir.path(), &dir.path().join("none.wacz"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no WARC directory"), "{stderr}");
    // A file that is not a WARC file of ours, named like one: bad input, named with its offset.
    let bad = out.join("warc/crawl-20260101000000-00009.warc.gz");
    std::fs::write(&bad, b"not gzip").unwrap();
    let (code, stderr) = wacz(&out, &dir.path().join("bad.wacz"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("crawl-20260101000000-00009.warc.gz: bad compressed record at offset 0"),
        "{stderr}"
    );
    assert!(!dir.path().join("bad.wacz").exists());
}

/// A `wayback` (pywb) server on a loopback port, killed when dropped.
pub(crate) struct Wayback(Child);

impl Drop for Wayback {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A GET on loopback with `Connection: close`: status, head and body (bounded in time).
pub(crate) fn get(port: u16, path: &str) -> std::io::Result<(u16, String, Vec<u8>)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or(std::io::ErrorKind::UnexpectedEof)?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut body = raw[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    Ok((status, head, body))
}

fn dechunk(mut input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = input.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&input[..eol]).unwrap();
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        out.extend_from_slice(&input[eol + 2..eol + 2 + size]);
        input = &input[eol + 4 + size..];
    }
    out
}

/// A pywb collection `crawl` under `root` (made by `wb-manager init`) holding `warcs` with
/// `index` as its index, served by `wayback` on a free loopback port: the server (killed when
/// dropped) and its port.
pub(crate) fn pywb_serving(root: &Path, warcs: &[PathBuf], index: &str) -> (Wayback, u16) {
    std::fs::create_dir(root).unwrap();
    let (ok, text) = run(
        Command::new("wb-manager")
            .args(["init", "crawl"])
            .current_dir(root),
        None,
    );
    assert!(ok, "wb-manager init: {text}\n{PIP_HINT}");
    let collection = root.join("collections/crawl");
    for warc in warcs {
        std::fs::copy(
            warc,
            collection.join("archive").join(warc.file_name().unwrap()),
        )
        .unwrap();
    }
    std::fs::write(collection.join("indexes/index.cdxj"), index).unwrap();

    // The port is free when chosen but another test may take it before pywb binds it: a pywb
    // that exits before answering is started again on another port (three tries at most).
    let log = root.join("wayback.log");
    (1..=3)
        .find_map(|_| {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let mut server = Wayback(
                Command::new("wayback")
                    .args(["-b", "127.0.0.1", "-p", &port.to_string()])
                    .current_dir(root)
                    .stdout(Stdio::null())
                    .stderr(std::fs::File::create(&log).unwrap())
                    .spawn()
                    .unwrap_or_else(|e| panic!("cannot run wayback: {e}\n{PIP_HINT}")),
            );
            let deadline = Instant::now() + Duration::from_secs(90);
            loop {
                if matches!(get(port, "/crawl/"), Ok((200, _, _))) {
                    return Some((server, port));
                }
                if server.0.try_wait().unwrap().is_some() {
                    return None;
                }
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                assert!(
                    Instant::now() < deadline,
                    "pywb did not answer on port {port}: {log}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        })
        .unwrap_or_else(|| {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("pywb exited three times before answering: {log}")
        })
}

/// pywb replays the crawl from our index: a collection made by `wb-manager init`, our WARC
/// files in its archive/ and our merged index as its index; `wayback` on a free loopback port.
#[test]
fn pywb_replays_the_crawl_from_our_index() {
    let (web, dir) = crawled_twice("gzip");
    let out = dir.path().join("out");
    let index = merged_index(&out);
    let warcs: Vec<PathBuf> = warcs_and_indexes(&out)
        .into_iter()
        .map(|(w, _)| w)
        .collect();
    let (_server, port) = pywb_serving(&dir.path().join("pywb"), &warcs, &index);

    // The captures of a URL in our index: (timestamp, fields), oldest first.
    let captures = |url: &str| -> Vec<(String, BTreeMap<String, String>)> {
        index
            .lines()
            .map(parse_line)
            .filter(|(_, _, f)| f["url"] == url)
            .map(|(_, ts, f)| (ts, f))
            .collect()
    };
    let home = web.url(0, "/");
    let (ts, _) = &captures(&home)[0];
    let (status, _, body) = get(port, &format!("/crawl/{ts}mp_/{home}")).unwrap();
    let page = String::from_utf8_lossy(&body);
    eprintln!("pywb /crawl/{ts}mp_/{home} -> {status}:\n{page}");
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("<title>Home v0</title>") && page.contains("home page"),
        "{page}"
    );
    let rewritten = format!("href=\"/crawl/{ts}mp_/{}\"", web.url(0, "/a"));
    assert!(
        page.contains(&rewritten),
        "links point into the archive: {rewritten}\n{page}"
    );

    // An identical-payload revisit (/b: same bytes again, the server has no validators)
    // replays as the capture it refers to: the first crawl's body, at the recrawl's time.
    let url = web.url(0, "/b");
    let all = captures(&url);
    let (ts, fields) = all.last().unwrap();
    assert_eq!(
        (fields["mime"].as_str(), fields["status"].as_str()),
        ("warc/revisit", "200")
    );
    assert_ne!(ts, &all[0].0, "the recrawl is a second later");
    let (code, head, replayed) = get(port, &format!("/crawl/{ts}id_/{url}")).unwrap();
    assert_eq!(code, 200, "{head}");
    let body = "<html><body>plain b <a href=/>home</a></body></html>";
    assert_eq!(String::from_utf8_lossy(&replayed), body, "{head}");
    // pywb names the capture it served in Content-Location: the revisit's own timestamp.
    assert!(
        head.contains(&format!("/crawl/{ts}id_/{url}")),
        "served as the revisit: {head}"
    );
    eprintln!("pywb /crawl/{ts}id_/{url} (a revisit) -> {code}: {body}");

    // A server-not-modified revisit (/a answered 304) is served by pywb 2.10 as its own 304
    // (resolvingloader.py replays a revisit whose status is 3xx as itself); its original
    // capture is still what the URL's first timestamp replays.
    let url = web.url(0, "/a");
    let all = captures(&url);
    let (ts, fields) = all.last().unwrap();
    assert_eq!(fields["status"], "304");
    let (code, head, _) = get(port, &format!("/crawl/{ts}id_/{url}")).unwrap();
    assert_eq!(code, 304, "{head}");
    let (code, head, replayed) = get(port, &format!("/crawl/{}id_/{url}", all[0].0)).unwrap();
    assert_eq!(code, 200, "{head}");
    assert_eq!(
        String::from_utf8_lossy(&replayed),
        "<html><title>A</title><body>archived a</body></html>"
    );
}
