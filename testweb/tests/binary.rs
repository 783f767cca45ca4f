//! The `testweb` binary: seeds file, serving, and the JSON summary after stdin's EOF.

mod common;

#[test]
fn serves_until_stdin_eof_and_reports() {
    let dir = std::env::temp_dir().join(format!("testweb-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seeds = dir.join("seeds");
    let args = [
        "--hosts",
        "2",
        "--pages-per-host",
        "10",
        "--extra-links",
        "2",
        "--cross-permille",
        "500",
    ];
    let (child, urls, port) = common::start_binary(&args, &seeds);
    assert_eq!(urls.len(), 2);
    let mut c = common::Conn::open(port);
    for path in ["/", "/p/1.html", "/p/1.html", "/robots.txt"] {
        c.get(path);
    }
    let out = common::stop_binary(child);
    assert_eq!(
        out,
        r#"{"requests":4,"distinct":2,"duplicates":1,"robots":1,"reachable":20,"overlaps":0}"#
    );
    let _ = std::fs::remove_dir_all(&dir);
}
