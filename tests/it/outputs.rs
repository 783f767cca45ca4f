//! What a crawl leaves besides the WARC archive: the URL log's formats and destination, the
//! link graph (only with `--link-graph`), `--save files`, and what goes to stderr at each
//! verbosity.

use crate::util::{assert_same_set, crawl, crawl_unparsed, parse_log, small_web};
use std::collections::BTreeSet;

use testweb::Graph;

/// A loopback port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The fields of a URL log row both formats share (the response time varies between runs).
type Fields = (u16, u32, u64, String, String, String);

fn tsv_fields(row: &crate::util::LogRow) -> Fields {
    (
        row.status,
        row.depth,
        row.bytes,
        row.content_type.clone(),
        row.url.clone(),
        row.note.clone(),
    )
}

/// Parses one JSON line strictly and returns its fields, `-` for null as the tsv writes it.
fn json_fields(line: &str) -> Fields {
    let value: serde_json::Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
    let object = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {line}"));
    let keys: BTreeSet<&str> = object.keys().map(String::as_str).collect();
    let expected: BTreeSet<&str> = [
        "status",
        "depth",
        "bytes",
        "ms",
        "content_type",
        "url",
        "note",
        "error",
    ]
    .into();
    assert_eq!(keys, expected, "keys of {line}");
    assert!(value["ms"].is_u64(), "ms in {line}");
    let text = |key: &str| match &value[key] {
        serde_json::Value::Null => "-".to_owned(),
        serde_json::Value::String(s) => s.clone(),
        other => panic!("{key} is {other} in {line}"),
    };
    let status = value["status"].as_u64().unwrap() as u16;
    // The error kind is there exactly when there was no response, and is the note (up to a
    // retry's `,retry-after:SECS` or `,retries-exhausted`).
    if status == 0 {
        let note = text("note");
        assert_eq!(text("error"), note.split(',').next().unwrap(), "{line}");
        assert_ne!(text("error"), "-", "{line}");
    } else {
        assert!(value["error"].is_null(), "{line}");
    }
    (
        status,
        value["depth"].as_u64().unwrap() as u32,
        value["bytes"].as_u64().unwrap(),
        text("content_type"),
        text("url"),
        text("note"),
    )
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

#[test]
fn jsonl_log_is_valid_json_with_the_tsv_fields_and_error_kinds() {
    let (_graph, web) = small_web(1, 30, 3);
    // A second seed on a closed port gives lines without a response.
    let seeds = format!("{}\nhttp://127.0.0.1:{}/\n", web.url(0, "/"), closed_port());
    // One worker: the two crawls' depths then agree (with several, a page's depth is that of
    // the first page whose links reached it, which varies from run to run).
    let args = [
        "--delay-factor",
        "0",
        "-q",
        "--retry-wait",
        "10ms",
        "-j",
        "1",
    ];
    let tsv = crawl(&seeds, &args);
    assert_eq!(tsv.code, 0, "stderr: {}", tsv.stderr);
    let jsonl = crawl_unparsed(&seeds, &[&args[..], &["--log-format", "jsonl"]].concat());
    assert_eq!(jsonl.code, 0, "stderr: {}", jsonl.stderr);

    let from_json: Vec<Fields> = jsonl.stdout.lines().map(json_fields).collect();
    let from_tsv: Vec<Fields> = tsv.rows.iter().map(tsv_fields).collect();
    assert_eq!(sorted(from_json.clone()), sorted(from_tsv));
    assert!(
        from_json.iter().any(|f| f.0 == 0),
        "no line without a response:\n{}",
        jsonl.stdout
    );
    assert!(
        (from_json.iter()).any(|f| f.5.starts_with("connect,retry-after:")),
        "a retried line:\n{}",
        jsonl.stdout
    );
    assert!(from_json.iter().filter(|f| f.0 == 200).count() >= 30);
}

#[test]
fn log_file_takes_the_lines_and_stdout_stays_empty() {
    let (_graph, web) = small_web(1, 20, 4);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("urls.tsv");
    std::fs::write(&log, "stale line to be truncated\n").unwrap();
    let run = crawl(
        &format!("{}\n", web.url(0, "/")),
        &["--delay-factor", "0", "--log", log.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "", "stdout should be empty with --log");
    let rows = parse_log(&std::fs::read_to_string(&log).unwrap());
    let pages: Vec<_> = rows.iter().filter(|r| r.is_page()).collect();
    assert_eq!(pages.len(), 20, "{rows:#?}");
    assert!(pages.iter().all(|r| r.status == 200));
}

#[test]
fn log_file_that_cannot_be_opened_is_bad_input_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("no-such-dir").join("urls.tsv");
    let run = crawl("http://127.0.0.1:9/\n", &["--log", log.to_str().unwrap()]);
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains(log.to_str().unwrap()),
        "the error should name the file: {}",
        run.stderr
    );
}

#[test]
fn links_file_holds_the_graphs_links_among_fetched_pages_in_scope() {
    let (graph, web) = small_web(2, 60, 5);
    // Host 1 is linked to but not a seed: links to it are out of scope and not recorded.
    let run = crawl(
        &format!("{}\n", web.url(0, "/")),
        &["--delay-factor", "0", "-q", "--link-graph"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    let fetched = graph.bfs(&[(0, 0)], &|h, _| h == 0, None);
    let url = |(h, p): (usize, usize)| web.url(h, &Graph::path(p));
    let expected: Vec<(String, String)> = fetched
        .keys()
        .flat_map(|&from| {
            graph
                .links(from.0, from.1)
                .into_iter()
                .filter(|to| to.0 == 0)
                .map(move |to| (url(from), url(to)))
        })
        .collect();
    assert!(!expected.is_empty());
    let text = std::fs::read_to_string(run.out.join("links.tsv")).unwrap();
    let actual: Vec<(String, String)> = text
        .lines()
        .map(|line| {
            let (from, to) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("not FROM TAB TO: {line:?}"));
            assert!(!to.contains('\t'), "more than two columns: {line:?}");
            (from.to_owned(), to.to_owned())
        })
        .collect();
    assert_same_set("links (from, to)", &expected, &actual);
}

#[test]
fn save_files_writes_each_fetched_page_under_pages() {
    let (_graph, web) = small_web(1, 15, 6);
    let run = crawl(
        &format!("{}\n", web.url(0, "/")),
        &["--delay-factor", "0", "-q", "--save", "files"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let host_dir = run
        .out
        .join("pages")
        .join(format!("127.0.0.1_{}", web.port(0)));
    let pages = run.pages();
    assert_eq!(pages.len(), 15);
    for row in pages {
        let path = row.url.strip_prefix(&web.origin(0)).unwrap();
        let file = match path {
            "/" => host_dir.join("index.html"),
            _ => host_dir.join(path.replace("/p/", "p@/").trim_start_matches('/')),
        };
        let body = std::fs::read(&file)
            .unwrap_or_else(|e| panic!("{} for {}: {e}", file.display(), row.url));
        assert_eq!(body.len() as u64, row.bytes, "{}", file.display());
        assert!(body.starts_with(b"<!doctype html>"), "{}", file.display());
    }
}

#[test]
fn without_save_files_there_is_no_pages_directory() {
    let (_graph, web) = small_web(1, 5, 7);
    let run = crawl(
        &format!("{}\n", web.url(0, "/")),
        &["--delay-factor", "0", "-q"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!run.out.join("pages").exists());
}

/// Status lines as `-v` prints them (the summary says "CLOCK hit rate", not "CLOCK hits").
fn status_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("crawl: ") && l.contains("CLOCK hits"))
        .collect()
}

#[test]
fn verbose_prints_status_lines_default_and_quiet_print_nothing_without_a_terminal() {
    let (_graph, web) = small_web(1, 10, 8);
    let seeds = format!("{}\n", web.url(0, "/"));

    let verbose = crawl(&seeds, &["--delay-factor", "0", "-v"]);
    assert_eq!(verbose.code, 0, "stderr: {}", verbose.stderr);
    let lines = status_lines(&verbose.stderr);
    assert!(!lines.is_empty(), "no status line:\n{}", verbose.stderr);
    let last = lines.last().unwrap();
    assert!(last.starts_with("crawl: 10 pages ("), "{last}");
    assert!(
        verbose.stderr.contains("crawl complete:"),
        "the summary follows: {}",
        verbose.stderr
    );

    // Without a terminal (cron) nothing is printed unless asked, not even the summary; the
    // exit status and summary.json tell what happened.
    let default = crawl(&seeds, &["--delay-factor", "0"]);
    assert_eq!(default.code, 0, "stderr: {}", default.stderr);
    assert_eq!(default.stderr, "", "no terminal, no -v: nothing on stderr");
    assert_eq!(default.summary()["ending"], "complete");

    let quiet = crawl(&seeds, &["--delay-factor", "0", "-q"]);
    assert_eq!(quiet.code, 0, "stderr: {}", quiet.stderr);
    assert_eq!(quiet.stderr, "", "-q should print nothing on success");
}

/// A crawl of `web` whose links.tsv is /dev/full (every write fails: "no space left on
/// device"), with `extra` arguments: its exit status, stdout and stderr.
fn crawl_into_a_full_links_file(web: &testweb::TestWeb, extra: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink("/dev/full", out.join("links.tsv")).unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", web.url(0, "/"))).unwrap();
    let mut args: Vec<String> = [
        seeds.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--delay-factor",
        "0",
    ]
    .map(String::from)
    .into();
    args.extend(extra.iter().map(|s| s.to_string()));
    crate::util::run_binary(&args, None, dir.path())
}

#[test]
fn a_links_file_that_cannot_be_written_is_fatal() {
    let (_graph, web) = small_web(1, 10, 9);
    let (code, _stdout, stderr) = crawl_into_a_full_links_file(&web, &["--link-graph"]);
    assert_eq!(code, 1, "stderr: {stderr}");
    assert!(stderr.contains("links.tsv"), "{stderr}");
}

/// The names in a state directory (`lock` aside: it is there whatever the options).
fn state_files(out: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

#[test]
fn the_link_graph_is_written_only_with_link_graph() {
    let (_graph, web) = small_web(2, 20, 10);
    let seeds = format!("{}\n", web.url(0, "/"));
    let default = crawl(&seeds, &["--delay-factor", "0", "-q"]);
    assert_eq!(default.code, 0, "stderr: {}", default.stderr);
    let graph = crawl(&seeds, &["--delay-factor", "0", "-q", "--link-graph"]);
    assert_eq!(graph.code, 0, "stderr: {}", graph.stderr);

    assert!(!default.out.join("links.tsv").exists());
    let links = std::fs::read_to_string(graph.out.join("links.tsv")).unwrap();
    assert!(links.lines().count() > 20, "{links}");
    // Everything else is as it was: the same files, URL log and counts.
    let mut with_graph = state_files(&graph.out);
    assert!(with_graph.remove("links.tsv"));
    assert_eq!(state_files(&default.out), with_graph);
    // Depth aside: with several workers a page's depth is that of the first page whose links
    // reached it, and which of two is first varies from run to run (a loaded machine gave
    // a page depth 3 in one crawl and 2 in the other).
    let rows = |run: &crate::util::Outcome| -> BTreeSet<Fields> {
        (run.rows.iter().map(tsv_fields))
            .map(|(status, _depth, bytes, kind, url, note)| (status, 0, bytes, kind, url, note))
            .collect()
    };
    assert_eq!(rows(&default), rows(&graph));
    let (a, b) = (default.summary(), graph.summary());
    for key in [
        "pages",
        "status",
        "bytes",
        "links_found",
        "urls_seen",
        "filtered",
    ] {
        assert_eq!(a[key], b[key], "summary.json's {key}");
    }
    assert_eq!(a["warc"]["records"], b["warc"]["records"]);
}

#[test]
fn without_link_graph_links_tsv_is_not_even_opened() {
    let (_graph, web) = small_web(1, 10, 11);
    // A links.tsv no write could reach: left alone by a crawl that records no graph.
    let (code, stdout, stderr) = crawl_into_a_full_links_file(&web, &[]);
    assert_eq!(code, 0, "stderr: {stderr}");
    let rows = parse_log(&stdout);
    let pages = rows
        .iter()
        .filter(|r| r.content_type.starts_with("text/html"));
    assert_eq!(pages.count(), 10, "{stdout}");
}

/// Each run decides for itself: a resumed run without --link-graph leaves links.tsv as it
/// was, and one with it appends its own pages' links.
#[test]
fn a_resumed_run_records_its_links_only_with_link_graph() {
    let (_graph, web) = small_web(1, 30, 13);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("seeds.txt"),
        format!("{}\n", web.url(0, "/")),
    )
    .unwrap();
    // Ten pages a run: 30 pages take three.
    let run = |extra: &[&str]| -> (Option<i32>, BTreeSet<String>) {
        let mut args = vec!["--delay-factor", "0", "-q", "--max-pages", "10"];
        args.extend(extra);
        let (code, stdout, stderr) = crate::util::crawl_dir(dir.path(), &args, &[], None);
        assert!(matches!(code, Some(0 | 4)), "{code:?}: {stderr}");
        let rows = parse_log(&stdout);
        (
            code,
            rows.iter()
                .filter(|r| r.is_page())
                .map(|r| r.url.clone())
                .collect(),
        )
    };
    let links = || std::fs::read_to_string(dir.path().join("out/links.tsv")).unwrap();
    let sources = |text: &str| -> BTreeSet<String> {
        text.lines()
            .map(|l| l.split('\t').next().unwrap().to_owned())
            .collect()
    };
    let (code, first) = run(&["--link-graph"]);
    assert_eq!(code, Some(4));
    let graph = links();
    let (code, second) = run(&[]);
    assert_eq!(code, Some(4));
    assert_eq!(
        links(),
        graph,
        "a run without --link-graph left links.tsv as it was"
    );
    let (_, third) = run(&["--link-graph"]);
    let appended = links()
        .strip_prefix(graph.as_str())
        .expect("appended to")
        .to_owned();
    for (run, pages) in [(&graph, &first), (&appended, &third)] {
        let from = sources(run);
        assert!(
            !from.is_empty() && from.is_subset(pages),
            "{from:?} of {pages:?}"
        );
        assert!(from.is_disjoint(&second), "{from:?} of {second:?}");
    }
}
