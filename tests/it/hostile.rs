//! The web is hostile: the real binary against `testweb::hostile`'s slow, huge, looping, broken
//! and lying servers, and against bad inputs. Each case must end with a clear line in the URL
//! log, bounded memory, exit status 0 and no panic; bad inputs must give a clear error.

use crate::util::{LogRow, Outcome, crawl};
use std::path::{Path, PathBuf};
use std::process::Command;
use testweb::{TestWeb, hostile};

/// Peak RSS any hostile crawl may reach (a normal small crawl takes ~10 MiB; the debug build
/// and a 1 MiB body cap leave plenty of room, a body read whole would not fit).
const MAX_RSS: u64 = 96 << 20;

/// Crawls the given paths of the hostile web's main host (one host: one request at a time),
/// with `--max-body 1M --timeout 5 --retries 0 --max-error-ratio 1` unless `args` say
/// otherwise: each case one attempt, one line (`retry.rs` checks the retries), and a crawl of
/// failing cases is no failed crawl (`retry.rs` checks exit status 3).
fn crawl_paths(web: &TestWeb, paths: &[&str], args: &[&str]) -> Outcome {
    let seeds: String = paths
        .iter()
        .map(|p| format!("{}\n", web.url(hostile::MAIN, p)))
        .collect();
    // Generous where nothing should time out: a loaded machine must not turn a case into one.
    let mut all = vec!["--delay-factor", "0"];
    let defaults = [
        ("--max-body", "1M"),
        ("--timeout", "5"),
        ("--retries", "0"),
        ("--max-error-ratio", "1"),
    ];
    for (flag, value) in defaults {
        if !args.contains(&flag) {
            all.extend([flag, value]);
        }
    }
    all.extend_from_slice(args);
    let run = crawl(&seeds, &all);
    assert_sound(&run);
    run
}

/// Exit 0 (4 at --max-pages), no panic, memory in bounds.
fn assert_sound(run: &Outcome) {
    let summary = run.summary();
    let status = if summary["ending"] == "page-limit" {
        4
    } else {
        0
    };
    assert_eq!(run.code, status, "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let rss = summary["peak_rss_bytes"].as_u64().unwrap();
    assert!(rss < MAX_RSS, "peak RSS {rss} bytes");
}

/// The log row of `path` on the main host (exactly one).
fn row<'a>(web: &TestWeb, run: &'a Outcome, path: &str) -> &'a LogRow {
    let url = web.url(hostile::MAIN, path);
    let rows: Vec<&LogRow> = run.rows.iter().filter(|r| r.url == url).collect();
    assert_eq!(rows.len(), 1, "rows for {url}:\n{}", run.stdout);
    rows[0]
}

fn fetched(web: &TestWeb, host: usize, target: &str) -> usize {
    let log = web.log();
    log.iter()
        .filter(|e| e.host == host && e.target == target)
        .count()
}

#[test]
fn slow_and_silent_servers_cost_one_timeout() {
    let web = hostile::start().unwrap();
    let slow = ["/slow-loris", "/slow-head", "/no-headers", "/cl-long-hang"];
    let run = crawl_paths(&web, &slow, &["--timeout", "1"]);
    for path in slow {
        let r = row(&web, &run, path);
        assert_eq!((r.status, r.note.as_str()), (0, "timeout"), "{path}");
        assert!(r.millis >= 900, "{path} gave up early: {r:?}");
    }
}

#[test]
fn huge_endless_and_bomb_bodies_are_cut_at_max_body() {
    let web = hostile::start().unwrap();
    // Bodies without a length are cut at --max-body; one whose Content-Length is over it is
    // not read at all (`too-long`).
    let endless = ["/endless-chunked", "/endless-http10"];
    let declared = ["/big", "/gzip-bomb"];
    let run = crawl_paths(&web, &[&endless[..], &declared[..]].concat(), &[]);
    for path in endless {
        let r = row(&web, &run, path);
        assert_eq!((r.status, r.bytes), (200, 1 << 20), "{path}: {r:?}");
        assert_eq!(r.note, "truncated", "{path}");
    }
    for path in declared {
        let r = row(&web, &run, path);
        assert_eq!(
            (r.status, r.bytes, r.note.as_str()),
            (200, 0, "too-long"),
            "{path}"
        );
    }
    // With --keep-truncated those are cut too, and the bomb's first bytes are read for links,
    // the gigabyte behind them is not.
    let run = crawl_paths(&web, &declared, &["--keep-truncated"]);
    for path in declared {
        let r = row(&web, &run, path);
        assert_eq!((r.status, r.bytes), (200, 1 << 20), "{path}: {r:?}");
        assert_eq!(r.note, "truncated", "{path}");
    }
    assert_eq!(row(&web, &run, "/after-bomb").status, 200);
}

#[test]
fn the_gzip_bomb_is_a_valid_gzip_file() {
    use std::io::Read;
    let bomb = hostile::gzip_bomb(b"<p>", 5 << 20);
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&bomb[..])
        .read_to_end(&mut out)
        .expect("a valid gzip member (CRC and size checked)");
    assert_eq!(out.len(), 3 + (5 << 20));
    assert!(bomb.len() * 150 < out.len());
}

#[test]
fn redirect_chains_loops_and_bad_targets() {
    let web = hostile::start().unwrap();
    let run = crawl_paths(
        &web,
        &[
            "/chain/5",
            "/chain/40",
            "/loop/a",
            "/to-file",
            "/to-ftp",
            "/to-js",
            "/to-out",
            "/to-garbage",
        ],
        &[],
    );
    assert_eq!(row(&web, &run, "/chain/0").status, 200);
    // The long chain is followed for 10 hops, then cut with a note.
    assert_eq!(row(&web, &run, "/chain/30").note, "too-many-redirects");
    assert!(run.rows.iter().all(|r| !r.url.ends_with("/chain/29")));
    // A loop is cut by the duplicate-URL eliminator.
    assert_eq!(fetched(&web, hostile::MAIN, "/loop/a"), 1);
    assert_eq!(fetched(&web, hostile::MAIN, "/loop/b"), 1);
    assert_eq!(
        row(&web, &run, "/to-file").note,
        "redirect:file:///etc/passwd"
    );
    assert_eq!(
        row(&web, &run, "/to-js").note,
        "redirect:javascript:alert(1)"
    );
    assert!(
        row(&web, &run, "/to-ftp")
            .note
            .starts_with("redirect:ftp://")
    );
    assert_eq!(row(&web, &run, "/to-garbage").note, "bad-location");
    assert!(
        row(&web, &run, "/to-out")
            .note
            .starts_with("redirect:http://")
    );
    assert_eq!(fetched(&web, hostile::OUTSIDE, "/"), 0, "out of scope");
    assert!(run.rows.iter().all(|r| r.url.starts_with("http://")));
}

#[test]
fn lying_lengths_resets_and_http10() {
    let web = hostile::start().unwrap();
    let run = crawl_paths(
        &web,
        &["/cl-short", "/leaf", "/cl-long", "/reset", "/http10"],
        &["-j", "1"],
    );
    // A short Content-Length is believed; what follows it never poisons the next response.
    let short = row(&web, &run, "/cl-short");
    assert_eq!((short.status, short.bytes), (200, 12));
    let leaf = row(&web, &run, "/leaf");
    assert_eq!(
        (leaf.status, leaf.bytes),
        (200, "<p>leaf /leaf</p>".len() as u64)
    );
    assert_eq!(row(&web, &run, "/cl-long").note, "short-body");
    let reset = row(&web, &run, "/reset");
    assert_eq!(reset.status, 0);
    assert!(
        ["reset", "short-body"].contains(&reset.note.as_str()),
        "{reset:?}"
    );
    assert_eq!(row(&web, &run, "/http10").status, 200);
    assert_eq!(row(&web, &run, "/http10-link").status, 200);
}

#[test]
fn hostile_html_links_and_charsets() {
    let web = hostile::start().unwrap();
    // 100,000 links: the per-page cap of 20,000 holds (plus robots.txt's and the sitemap's
    // few). A crawl of its own: under --max-pages its 20,000 links could take the place of the
    // pages the others link to (/good-after-bad was missed in 2 runs of 8).
    let many = crawl_paths(
        &web,
        &["/many-links"],
        &["--max-body", "4M", "--max-depth", "1", "--max-pages", "40"],
    );
    let links = many.summary()["links_found"].as_u64().unwrap();
    assert!((20_000..20_100).contains(&links), "links_found {links}");
    let run = crawl_paths(
        &web,
        &["/bad-utf8", "/latin1", "/cp1251-meta", "/bad-urls"],
        &["--max-body", "4M", "--max-depth", "1"],
    );
    assert_eq!(row(&web, &run, "/utf8-ok").status, 200);
    assert_eq!(row(&web, &run, "/caf%C3%A9").status, 200, "latin1");
    assert_eq!(row(&web, &run, "/%D0%B4%D0%B0").status, 200, "windows-1251");
    assert_eq!(row(&web, &run, "/good-after-bad").status, 200);
    assert!(run.rows.iter().all(|r| r.url.len() <= 2048));
    // 100,000 open elements cost the tokenizer nothing (lol_html's 4 MiB cap lost the link
    // behind them, before session 6): the link is read and followed. A crawl of its own, so
    // that the 20,000 links of /many-links cannot take its place under --max-pages.
    let nested = crawl_paths(
        &web,
        &["/deep-nesting"],
        &["--max-body", "4M", "--max-depth", "1"],
    );
    assert_eq!(row(&web, &nested, "/deep-nesting").status, 200);
    assert!(
        nested
            .rows
            .iter()
            .any(|r| r.url.ends_with("/after-nesting"))
    );
}

#[test]
fn crawler_traps_stay_small() {
    let web = hostile::start().unwrap();
    let run = crawl_paths(
        &web,
        &["/cal/2024/1", "/trap/", "/session", "/spellings"],
        &["--max-depth", "4"],
    );
    let count = |prefix: &str| {
        let prefix = web.url(hostile::MAIN, prefix);
        run.pages()
            .iter()
            .filter(|r| r.url.starts_with(&prefix))
            .count()
    };
    assert_eq!(count("/cal/"), 9, "calendar: depth 0..=4, two directions");
    // Relative a/ and b/ links: cut by the repeated-segment guard (and depth).
    assert!(count("/trap/") <= 31, "{}", count("/trap/"));
    // Fresh session IDs on every link: only three distinct pages behind them.
    assert_eq!(count("/shop"), 3, "{}", run.stdout);
    assert_eq!(row(&web, &run, "/shop?item=1").status, 200);
    // Twelve spellings of one page: fetched once.
    let spelled = web
        .log()
        .iter()
        .filter(|e| e.target.contains("pell"))
        .count();
    assert_eq!(spelled, 1, "{}", run.stdout);
    assert_eq!(fetched(&web, hostile::MAIN, "/spellings"), 1);
}

#[test]
fn an_infinite_calendar_ends_by_itself_at_the_default_depth() {
    let web = hostile::start().unwrap();
    let run = crawl_paths(&web, &["/cal/2024/1"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let prefix = web.url(hostile::MAIN, "/cal/");
    let calendar = run
        .pages()
        .iter()
        .filter(|r| r.url.starts_with(&prefix))
        .count();
    // Depth 0 ..= 100 in two directions (next and previous month).
    assert_eq!(calendar, 201, "{}", run.stderr);
}

#[test]
fn hostile_robots_txt() {
    let web = hostile::start().unwrap();
    let seeds: String = (0..hostile::ROBOTS.len())
        .map(|i| format!("{}\n", web.url(hostile::ROBOTS_FIRST + i, "/")))
        .collect();
    let run = crawl(
        &seeds,
        &[
            "--timeout",
            "3",
            "--delay-factor",
            "0",
            "-j",
            "8",
            "--retry-wait",
            "10ms",
        ],
    );
    assert_sound(&run);
    let host =
        |name| hostile::ROBOTS_FIRST + hostile::ROBOTS.iter().position(|n| *n == name).unwrap();
    let pages = |name| {
        let mut t: Vec<String> = web
            .log()
            .iter()
            .filter(|e| {
                e.host == host(name) && !e.target.contains("robots") && e.target != "/sitemap.xml"
            })
            .map(|e| e.target.clone())
            .collect();
        t.sort();
        t
    };
    let robots_note = |name| {
        let url = web.url(host(name), "/robots.txt");
        let r = run.rows.iter().find(|r| r.url == url).unwrap();
        (r.status, r.note.clone())
    };
    // Huge: the first 500 KiB count, and the rule at the top holds.
    assert_eq!(pages("huge"), ["/", "/private/ok", "/public"]);
    assert_eq!(
        pages("binary"),
        ["/", "/private/ok", "/private/x", "/public"]
    );
    assert_eq!(pages("redirect"), ["/", "/private/ok", "/public"]);
    // Unreachable (5xx, or too slow): asked again, then nothing is fetched.
    assert_eq!(pages("5xx"), Vec::<String>::new());
    assert_eq!(robots_note("5xx"), (503, "robots,retry-after:0.01".into()));
    assert_eq!(pages("slow"), Vec::<String>::new());
    assert_eq!(robots_note("slow"), (0, "timeout,retry-after:0.01".into()));
    // Odd lines: the parsable rules hold, the rest is ignored.
    assert_eq!(pages("odd"), ["/", "/public"]);
}

#[test]
fn bad_seed_files_name_the_line() {
    let huge = format!("http://127.0.0.1:9/{}\n", "x".repeat(100_000));
    let cases: [(&[u8], &str); 4] = [
        (
            b"\xEF\xBB\xBFhttp://127.0.0.1:9/\r\nnot a url\r\n",
            "seeds.txt:2: not a url",
        ),
        (
            huge.as_bytes(),
            "seeds.txt:1: line of 100019 bytes is longer than 8192",
        ),
        (
            b"\x00\x01\xff\xfe\x89PNG\r\n",
            "seeds.txt:1: not UTF-8 text",
        ),
        (
            b"http://127.0.0.1:9/\nfile:///etc/passwd\nmailto:a@b.test\n",
            "seeds.txt:2: file:///etc/passwd: only http and https",
        ),
    ];
    for (seeds, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
        let args = ["seeds.txt", "--out", "out"].map(String::from);
        let (code, stdout, stderr) = crate::util::run_binary(&args, None, dir.path());
        assert_eq!(code, 2, "{expected}: {stderr}");
        assert!(
            stderr.contains(expected),
            "expected {expected:?} in {stderr}"
        );
        assert!(stdout.is_empty());
    }
    // A BOM and CRLF line endings are fine (the seed is read; nothing answers there: exit 3).
    let run = crawl(
        "\u{feff}http://127.0.0.1:9/\r\n\r\n",
        &["--timeout", "1", "--retries", "0"],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(run.rows[0].url, "http://127.0.0.1:9/robots.txt");
}

/// A tmpfs mounted for one test, unmounted (and its directory removed) when dropped.
struct Mount(PathBuf);

impl Mount {
    /// Mounts a tmpfs of `size` (e.g. "256k") at `dir`. Panics (the test fails, it does not
    /// skip) where mounting is not allowed: these tests need root on Linux.
    fn tmpfs(dir: &Path, options: &str) -> Mount {
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir)
            .status()
            .expect("running mount");
        assert!(
            status.success(),
            "mount -t tmpfs failed: these tests need root"
        );
        Mount(dir.to_owned())
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(status.success(), "remount {options}");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn out_that_is_a_file_or_read_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), "http://127.0.0.1:9/\n").unwrap();
    std::fs::write(dir.path().join("file"), "").unwrap();
    let _ro = Mount::tmpfs(&dir.path().join("ro"), "size=64k,ro");
    for (out, expected) in [
        ("file", "--out file: exists and is not a directory"),
        (
            "ro/state",
            "--out ro/state: cannot create the state directory: Read-only file system",
        ),
    ] {
        let args = ["seeds.txt", "--out", out].map(String::from);
        let (code, _, stderr) = crate::util::run_binary(&args, None, dir.path());
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(expected),
            "expected {expected:?} in {stderr}"
        );
    }
}

#[test]
fn a_full_disk_is_a_clear_error_and_the_state_stays_usable() {
    let web = testweb::Graph::new(testweb::GraphSpec {
        hosts: 1,
        pages_per_host: 300,
        page_padding: 4000,
        ..Default::default()
    })
    .start(std::time::Duration::ZERO, &|_| None)
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("seeds.txt"),
        format!("{}/\n", web.origin(0)),
    )
    .unwrap();
    let disk = Mount::tmpfs(&dir.path().join("disk"), "size=256k");
    let args = ["seeds.txt", "--out", "disk/state", "--delay-factor", "0"].map(String::from);
    let (code, _, stderr) = crate::util::run_binary(&args, None, dir.path());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains("disk/state/"), "names the file: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Space is freed: the same command opens the state directory and finishes.
    // (Whether it refetches nothing it had already fetched is the resume work of #5.)
    disk.remount("size=64m");
    let (code, stdout, stderr) = crate::util::run_binary(&args, None, dir.path());
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.is_empty());
}
