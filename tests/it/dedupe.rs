//! `crawl dedupe`: the DUE as a line filter, across runs, in input order.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `crawl dedupe --state STATE ARGS…` on `input`; returns (status, stdout lines, stderr).
fn dedupe(state: &Path, args: &[&str], input: &[u8]) -> (i32, Vec<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawl"))
        .arg("dedupe")
        .arg("--state")
        .arg(state)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let lines = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    (
        output.status.code().unwrap_or(-1),
        lines,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn only_never_seen_lines_in_input_order_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // Heavy duplication over many merges: a tiny cache and buffer force both to work.
    let mut x = 17u64;
    let stream: Vec<String> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("line-{}", x % 3000)
        })
        .collect();
    let (first, second) = stream.split_at(12_000);
    let mut reference = HashSet::new();
    for part in [first, second] {
        let expected: Vec<String> = part
            .iter()
            .filter(|l| reference.insert(l.to_string()))
            .cloned()
            .collect();
        let input = part.join("\n") + "\n";
        let args = [
            "--raw",
            "--cache-entries",
            "16",
            "--buffer-entries",
            "50",
            "-q",
        ];
        let (code, lines, stderr) = dedupe(&state, &args, input.as_bytes());
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(lines, expected);
    }
}

#[test]
fn urls_compare_by_canonical_form_and_raw_lines_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let input =
        b"http://a.test/x\r\nHTTP://A.TEST:80/x#top\nhttp://a.test/./x\nnot a url\nnot a url\n";
    let (code, lines, stderr) = dedupe(&dir.path().join("urls"), &[], input);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines, ["http://a.test/x", "not a url"]);
    assert!(stderr.contains("stdin:4: not a url: not a URL"), "{stderr}");
    let (_, lines, _) = dedupe(&dir.path().join("raw"), &["--raw"], input);
    assert_eq!(
        lines,
        [
            "http://a.test/x",
            "HTTP://A.TEST:80/x#top",
            "http://a.test/./x",
            "not a url"
        ]
    );
}

#[test]
fn a_slow_producer_sees_its_lines_before_closing_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawl"))
        .args(["dedupe", "--raw", "-q", "--state"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"first\nfirst\nsecond\n").unwrap();
    stdin.flush().unwrap();
    // The batch is far from full; only the pause in input can release these lines.
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = Vec::new();
    while got.len() < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => got.push(line),
            Err(_) => break,
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(
        got,
        ["first", "second"],
        "lines must come out while stdin is still open"
    );
    assert!(status.success());
}
