//! `--fixtures DIR`: a static directory served as one host, and never anything outside it.

mod common;

use common::{Conn, get};
use std::path::{Path, PathBuf};
use std::process::Command;
use testweb::{TestWeb, serve_dir};

const SECRET: &str = "outside the root: must never be served";

/// A scratch directory: `root/` holds the site, `secret.txt` sits beside it (outside the root).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("testweb-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.join("root");
        for (path, body) in [
            ("index.html", "<a href=/sub/>sub</a>"),
            ("sub/index.html", "sub index"),
            ("sub/page.html", "a page"),
            ("a b.txt", "spaced"),
            ("style.css", "p{}"),
            ("logo.png", "png"),
            ("photo.JPG", "jpg"),
            ("data.json", "{}"),
            ("feed.xml", "<rss/>"),
            ("robots.txt", "User-agent: *\nDisallow: /private/\n"),
            (".hidden", "dotfile"),
            ("blob.bin", "bytes"),
        ] {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, body).unwrap();
        }
        std::fs::write(dir.join("secret.txt"), SECRET).unwrap();
        std::os::unix::fs::symlink(dir.join("secret.txt"), root.join("link.txt")).unwrap();
        Scratch(dir)
    }

    fn root(&self) -> PathBuf {
        self.0.join("root")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(root: &Path) -> TestWeb {
    TestWeb::start(vec![serve_dir(root).unwrap()]).unwrap()
}

#[test]
fn serves_files_indexes_and_content_types() {
    let scratch = Scratch::new("fixtures-serve");
    let web = start(&scratch.root());
    let port = web.port(0);
    let cases = [
        (
            "/",
            200,
            "text/html; charset=utf-8",
            "<a href=/sub/>sub</a>",
        ),
        (
            "/index.html",
            200,
            "text/html; charset=utf-8",
            "<a href=/sub/>sub</a>",
        ),
        ("/sub/", 200, "text/html; charset=utf-8", "sub index"),
        (
            "/sub/page.html?x=1",
            200,
            "text/html; charset=utf-8",
            "a page",
        ),
        ("/a%20b.txt", 200, "text/plain; charset=utf-8", "spaced"),
        ("/style.css", 200, "text/css; charset=utf-8", "p{}"),
        ("/logo.png", 200, "image/png", "png"),
        ("/photo.JPG", 200, "image/jpeg", "jpg"),
        ("/data.json", 200, "application/json", "{}"),
        ("/feed.xml", 200, "application/xml", "<rss/>"),
        ("/blob.bin", 200, "application/octet-stream", "bytes"),
        (
            "/robots.txt",
            200,
            "text/plain; charset=utf-8",
            "User-agent: *\nDisallow: /private/\n",
        ),
        (
            "/missing.html",
            404,
            "text/plain; charset=utf-8",
            "not found\n",
        ),
        (
            "/sub/missing/",
            404,
            "text/plain; charset=utf-8",
            "not found\n",
        ),
        ("/.hidden", 404, "text/plain; charset=utf-8", "not found\n"),
    ];
    for (path, status, content_type, body) in cases {
        let r = get(port, path);
        assert_eq!(
            (r.status, r.header("content-type"), r.text().as_str()),
            (status, Some(content_type), body),
            "GET {path}"
        );
    }
    // A directory without its slash redirects to it, as static servers do.
    let r = get(port, "/sub");
    assert_eq!((r.status, r.header("location")), (301, Some("/sub/")));
    // HEAD: the head of the GET answer, no body.
    let mut c = Conn::open(port);
    c.send("HEAD", "/style.css", "");
    let r = c.read(true);
    assert_eq!((r.status, r.header("content-length")), (200, Some("3")));
    assert!(r.body.is_empty());
    assert_eq!(
        c.get("/sub/page.html").text(),
        "a page",
        "keep-alive after HEAD"
    );
}

#[test]
fn never_serves_outside_the_root() {
    let scratch = Scratch::new("fixtures-escape");
    let web = start(&scratch.root());
    let port = web.port(0);
    for path in [
        "/../secret.txt",
        "/sub/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/.%2e/secret.txt",
        "/sub/..%2f..%2fsecret.txt",
        "/sub%2f..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
        "/..\\secret.txt",
        "/%00",
        "/index.html%00.txt",
        "/%zz",
        "/%",
        "/%ff",
        "//etc/passwd",
        "/link.txt",
        "/./index.html",
    ] {
        let r = get(port, path);
        assert!(
            r.status == 400 || r.status == 404,
            "GET {path}: expected 400 or 404, got {} {:?}",
            r.status,
            r.text()
        );
        assert!(!r.text().contains(SECRET), "GET {path} leaked the secret");
    }
    // Targets that are not origin-form are refused outright.
    let mut c = Conn::open(port);
    c.send_raw(b"GET http://127.0.0.1/../secret.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.read(false).status, 400);
    let statuses: Vec<u16> = web.log().iter().map(|e| e.status).collect();
    assert!(
        statuses.iter().all(|&s| s == 400 || s == 404),
        "{statuses:?}"
    );
}

#[test]
fn binary_fixtures_mode_writes_seeds_serves_and_reports() {
    let scratch = Scratch::new("fixtures-bin");
    let seeds = scratch.0.join("seeds.txt");
    let root = scratch
        .root()
        .to_str()
        .expect("a UTF-8 temporary path")
        .to_owned();
    let (child, urls, port) = common::start_binary(&["--fixtures", &root], &seeds);
    assert_eq!(urls.len(), 1, "one seed, the origin's /: {urls:?}");
    // One connection, so the requests are strictly sequential: overlaps must be 0.
    let mut c = Conn::open(port);
    assert_eq!(c.get("/sub/").text(), "sub index");
    assert_eq!(c.get("/robots.txt").status, 200);
    assert_eq!(c.get("/sub/").status, 200);
    assert_eq!(c.get("/../secret.txt").status, 400);
    assert_eq!(c.get("/nope").status, 404);
    drop(c);
    let out = common::stop_binary(child); // EOF stops the server
    assert_eq!(
        out,
        r#"{"requests":5,"distinct":3,"duplicates":1,"robots":1,"not_found":1,"overlaps":0}"#
    );
}

#[test]
fn binary_refuses_fixtures_mixed_with_generated_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_testweb"))
        .args([
            "--fixtures",
            ".",
            "--hosts",
            "2",
            "--seeds-out",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fixtures"));
}

#[test]
fn binary_refuses_a_missing_directory() {
    let out = Command::new(env!("CARGO_BIN_EXE_testweb"))
        .args([
            "--fixtures",
            "/nonexistent/testweb-fixtures",
            "--seeds-out",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/testweb-fixtures"));
}
