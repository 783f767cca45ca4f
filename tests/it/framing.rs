//! Every byte under the right URL: the real binary against `testweb::framing`'s servers, which
//! write forbidden or ambiguous HTTP/1.1 framing on kept connections at chosen moments (late
//! bytes while the connection rests, an unsolicited 101, `HTTP/1.1 099`, Content-Length beside
//! Transfer-Encoding, `+N` lengths, garbage, `gzip, chunked`). For each case: what the URL log
//! says and what the WARC archives under each URL, and whether the connection was reused.

use crate::util::{LogRow, Outcome, crawl};
use std::collections::BTreeMap;
use std::path::Path;
use testweb::framing::{self, CASES, FramingWeb, GZIP_LINK, STRAY, Served, TRIGGER};

/// The pages seeded on every case's host: the trigger first.
const PAGES: [&str; 3] = [TRIGGER, "/b", "/c"];

/// The crawl's arguments: every host rests 200 ms after each response, ten times the pause
/// after which a case writes its late bytes, so they arrive while the connection is idle. Every
/// case serves the same pages: payload dedupe is off, so that each is archived whole.
const ARGS: [&str; 7] = [
    "--no-payload-dedupe",
    "--min-delay",
    "0.2",
    "--delay-factor",
    "0",
    "--timeout",
    "5",
];

fn seeds(web: &FramingWeb) -> String {
    CASES
        .iter()
        .flat_map(|case| {
            PAGES
                .iter()
                .map(|p| format!("{}{p}\n", web.origin(case.name)))
        })
        .collect()
}

/// Response records' payloads by target URL, from the crawl's WARC files (zstd or gzip), read
/// record by record by their `Content-Length`.
fn archived(out: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut records = BTreeMap::new();
    let dir = out.join("warc");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.to_string_lossy().into_owned();
        let file = std::fs::File::open(&path).unwrap();
        let bytes = if name.ends_with(".warc.zst") {
            zstd::decode_all(file).unwrap()
        } else if name.ends_with(".warc.gz") {
            let mut bytes = Vec::new();
            let mut gz = flate2::read::MultiGzDecoder::new(file);
            std::io::Read::read_to_end(&mut gz, &mut bytes).unwrap();
            bytes
        } else {
            continue;
        };
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let end = rest
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .expect("a record head")
                + 4;
            let head = String::from_utf8_lossy(&rest[..end]).into_owned();
            let field = |name: &str| {
                head.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_owned())
            };
            let length: usize = field("Content-Length:").unwrap().parse().unwrap();
            let block = &rest[end..end + length];
            if field("WARC-Type:").as_deref() == Some("response") {
                let body = block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                let url = field("WARC-Target-URI:").unwrap();
                records.insert(url, block[body..].to_vec());
            }
            rest = &rest[end + length..];
            rest = rest
                .strip_prefix(b"\r\n\r\n")
                .expect("records end with CRLF CRLF");
        }
    }
    records
}

/// What happened to one case's pages: per page, the URL log's status and note, the archived
/// body (if any), and the connection its request came on.
#[derive(Debug)]
struct Seen {
    rows: BTreeMap<String, (u16, String)>,
    bodies: BTreeMap<String, Vec<u8>>,
    connections: BTreeMap<String, u64>,
    /// Connections the host was asked anything on.
    connection_count: usize,
}

fn seen(web: &FramingWeb, case: &str, rows: &[LogRow], out: &Path, log: &[Served]) -> Seen {
    let origin = web.origin(case);
    let archive = archived(out);
    let mut seen = Seen {
        rows: BTreeMap::new(),
        bodies: BTreeMap::new(),
        connections: BTreeMap::new(),
        connection_count: 0,
    };
    for row in rows.iter().filter(|r| r.url.starts_with(&origin)) {
        let path = row.url[origin.len()..].to_owned();
        seen.rows
            .insert(path.clone(), (row.status, row.note.clone()));
        if let Some(body) = archive.get(&row.url) {
            seen.bodies.insert(path, body.clone());
        }
    }
    let mut ids: Vec<u64> = Vec::new();
    for served in log.iter().filter(|s| s.case == case) {
        // The last connection a target was asked on (a retry goes on a fresh one).
        seen.connections
            .insert(served.target.clone(), served.connection);
        if !ids.contains(&served.connection) {
            ids.push(served.connection);
        }
    }
    seen.connection_count = ids.len();
    seen
}

/// Runs the crawl on every case at once; the cases' results by name, and the run.
fn run() -> (
    BTreeMap<&'static str, Seen>,
    serde_json::Value,
    String,
    Outcome,
) {
    let web = FramingWeb::start().unwrap();
    let run: Outcome = crawl(&seeds(&web), &ARGS);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let (summary, rows, stdout, out) = (run.summary(), &run.rows, run.stdout.clone(), &run.out);
    let log = web.log();
    let cases = CASES
        .iter()
        .map(|c| (c.name, seen(&web, c.name, rows, out, &log)))
        .collect();
    (cases, summary, stdout, run)
}

fn body(seen: &Seen, path: &str) -> String {
    seen.bodies
        .get(path)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_else(|| "(none)".into())
}

#[test]
fn every_byte_is_archived_under_its_own_url() {
    let (cases, summary, stdout, _run) = run();
    print_table(&cases);
    for (name, seen) in &cases {
        let context = format!("{name}: {seen:?}\n{stdout}");
        // The pages after the trigger are each their own page, on a connection that is not
        // the trigger's (except after gzip-chunked, whose framing is sound), and that one
        // connection carries them both.
        for page in ["/b", "/c"] {
            assert_eq!(seen.rows[page], (200, "-".into()), "{page} {context}");
            assert_eq!(body(seen, page), format!("page {page}"), "{page} {context}");
        }
        assert!(!body(seen, "/b").contains(STRAY), "{context}");
        let (a, b, c) = (
            seen.connections[TRIGGER],
            seen.connections["/b"],
            seen.connections["/c"],
        );
        assert_eq!(b, c, "the fresh connection is kept: {context}");
        match *name {
            "gzip-chunked" => assert_eq!((a, seen.connection_count), (b, 1), "{context}"),
            _ => assert_ne!(a, b, "not reused after the trigger: {context}"),
        }
        let trigger = seen.rows[TRIGGER].clone();
        let (status, note) = (trigger.0, trigger.1.as_str());
        match *name {
            "late-after-length" | "late-after-chunked" | "idle-garbage" | "cl-and-te"
            | "te-space-colon" => {
                assert_eq!((status, note), (200, "-"), "{context}");
                assert_eq!(body(seen, TRIGGER), "page /a", "{context}");
            }
            "late-after-204" => assert_eq!((status, body(seen, TRIGGER)), (204, String::new())),
            "unsolicited-101" => assert_eq!((status, body(seen, TRIGGER)), (101, String::new())),
            "status-099" | "cl-plus" | "chunk-size-plus" => {
                assert_eq!((status, note), (0, "protocol"), "{context}");
                assert!(!seen.bodies.contains_key(TRIGGER), "{context}");
            }
            "gzip-chunked" => {
                assert_eq!((status, note), (200, "-"), "{context}");
                // Archived as it came (de-chunked, gzip kept), read for links decoded.
                assert_eq!(seen.bodies[TRIGGER], framing::gzip_chunked_body());
                assert_eq!(seen.rows[GZIP_LINK].0, 200, "{context}");
            }
            other => panic!("a case without expectations: {other}"),
        }
    }
    let connections = &summary["connections"];
    // Late bytes found on the idle connection, or read with the response: one per case.
    let late = [
        "late-after-length",
        "late-after-chunked",
        "late-after-204",
        "idle-garbage",
    ];
    assert_eq!(
        connections["unsolicited"].as_u64(),
        Some(late.len() as u64),
        "{summary}"
    );
    // 101, CL+TE twice.
    assert_eq!(
        connections["ambiguous_framing"].as_u64(),
        Some(3),
        "{summary}"
    );
}

/// Prints, per case and page, the URL log's status and note, the archived body and the
/// connection the request came on (the note's table: `cargo test --test it framing::
/// -- --nocapture`).
fn print_table(cases: &BTreeMap<&'static str, Seen>) {
    println!("| case | page | URL log | archived body | connection |");
    println!("|---|---|---|---|---|");
    for (name, seen) in cases {
        for (path, (status, note)) in &seen.rows {
            let conn = seen.connections.get(path).copied().unwrap_or(0);
            let shown = body(seen, path).replace('\n', " ");
            let shown: String = shown.chars().take(30).collect();
            println!("| {name} | {path} | {status} {note} | {shown:?} | #{conn} |");
        }
    }
}
