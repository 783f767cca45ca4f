//! The `testweb` binary: seeds file, serving, and the JSON summary after stdin's EOF.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn serves_until_stdin_eof_and_reports() {
    let dir = std::env::temp_dir().join(format!("testweb-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seeds = dir.join("seeds");
    let mut child = Command::new(env!("CARGO_BIN_EXE_testweb"))
        .args([
            "--hosts",
            "2",
            "--pages-per-host",
            "10",
            "--extra-links",
            "2",
            "--cross-permille",
            "500",
        ])
        .arg("--seeds-out")
        .arg(&seeds)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seeds.exists() {
        assert!(Instant::now() < deadline, "no seeds file");
        std::thread::sleep(Duration::from_millis(10));
    }
    let text = std::fs::read_to_string(&seeds).unwrap();
    let urls: Vec<&str> = text.lines().collect();
    assert_eq!(urls.len(), 2);
    let port: u16 = urls[0]
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let mut c = common::Conn::open(port);
    for path in ["/", "/p/1.html", "/p/1.html", "/robots.txt"] {
        c.get(path);
    }
    drop(child.stdin.take()); // EOF
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        out.trim(),
        r#"{"requests":4,"distinct":2,"duplicates":1,"robots":1,"reachable":20,"overlaps":0}"#
    );
    let _ = std::fs::remove_dir_all(&dir);
}
