//! Safety: private addresses refused after DNS, and bodies not read when their headers say so
//! (`--accept-type`, `--reject-type`, a `Content-Length` over `--max-body`).
//!
//! Nothing here leaves 127.0.0.0/8. The "private" address is 127.0.0.2, which the crawl is told
//! to treat as forbidden (`CRAWL_TEST_FORBID`, a hidden knob that accepts loopback addresses
//! only) although its 127.0.0.1 seeds open the loopback range; the name `forbidden.test`
//! resolves to it through the test-only resolver (`CRAWL_TEST_HOSTS`, loopback only too). So
//! even a crawler that ignored the refusal could reach nothing but loopback, and a listener on
//! 127.0.0.2 proves that nothing reached it.

use crate::util::{LogRow, crawl_dir, parse_log, read_summary, warc_files, warc_text};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use testweb::warc_readers::check_with;

/// How long a test server runs at most, and how long it waits for a client to close.
const SERVER_DEADLINE: Duration = Duration::from_secs(60);
const CLOSE_DEADLINE: Duration = Duration::from_secs(10);

/// What a handler answers: a whole response, or a head and a body sent slowly while the server
/// watches for the client closing.
enum Reply {
    Whole(Vec<u8>),
    Watched { head: Vec<u8>, body_len: usize },
}

/// What the server saw on a watched response.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    /// The client closed after this many body bytes had been sent.
    ClosedAfter(usize),
    /// The whole body went out and the client kept the connection.
    BodyComplete,
}

/// A loopback HTTP/1.1 server for one test: every connection on its own thread, requests
/// logged, stopped (and joined) on drop, bounded by `SERVER_DEADLINE` whatever happens.
struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    connections: Arc<Mutex<usize>>,
    watched: Arc<Mutex<Vec<(String, Seen)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

type Handler = fn(&str, SocketAddr) -> Reply;

impl Server {
    fn start(ip: &str, handler: Handler) -> Server {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(Mutex::new(0));
        let watched = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, c, w, s) = (
            requests.clone(),
            connections.clone(),
            watched.clone(),
            stop.clone(),
        );
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + SERVER_DEADLINE;
            let mut handles = Vec::new();
            while !s.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((socket, _)) => {
                        *c.lock().unwrap() += 1;
                        let (r, w) = (r.clone(), w.clone());
                        handles.push(std::thread::spawn(move || {
                            serve(socket, addr, handler, &r, &w);
                        }));
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5)); // poll the stop flag
                    }
                    Err(e) => panic!("accept: {e}"),
                }
            }
            for h in handles {
                let _ = h.join();
            }
        });
        Server {
            addr,
            requests,
            connections,
            watched,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    fn connections(&self) -> usize {
        *self.connections.lock().unwrap()
    }

    fn watched(&self, target: &str) -> Option<Seen> {
        let w = self.watched.lock().unwrap();
        w.iter().find(|(t, _)| t == target).map(|(_, s)| s.clone())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One connection: requests in turn (keep-alive) until the client closes or the deadline.
fn serve(
    mut socket: TcpStream,
    addr: SocketAddr,
    handler: Handler,
    requests: &Mutex<Vec<String>>,
    watched: &Mutex<Vec<(String, Seen)>>,
) {
    let deadline = Instant::now() + CLOSE_DEADLINE;
    socket.set_nonblocking(false).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while Instant::now() < deadline {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            match socket.read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return,
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end + 4);
        let target = head.split(' ').nth(1).unwrap_or("").to_owned();
        requests.lock().unwrap().push(target.clone());
        match handler(&target, addr) {
            Reply::Whole(bytes) => {
                if socket.write_all(&bytes).is_err() {
                    return;
                }
            }
            Reply::Watched { head, body_len } => {
                let seen = watch(&mut socket, &head, body_len, deadline);
                let closed = matches!(seen, Seen::ClosedAfter(_));
                watched.lock().unwrap().push((target, seen));
                if closed {
                    return;
                }
            }
        }
    }
}

/// Sends `head`, then the body 8 KiB at a time, each after 50 ms of listening for the client:
/// what the client did before the body ended.
fn watch(socket: &mut TcpStream, head: &[u8], body_len: usize, deadline: Instant) -> Seen {
    if socket.write_all(head).is_err() {
        return Seen::ClosedAfter(0);
    }
    let mut sent = 0;
    let mut byte = [0u8; 1];
    while sent < body_len && Instant::now() < deadline {
        match socket.read(&mut byte) {
            Ok(0) => return Seen::ClosedAfter(sent),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            _ => return Seen::ClosedAfter(sent),
        }
        let n = (body_len - sent).min(8192);
        if socket.write_all(&vec![b'x'; n]).is_err() {
            return Seen::ClosedAfter(sent);
        }
        sent += n;
    }
    Seen::BodyComplete
}

fn whole(status: &str, content_type: &str, body: &str) -> Reply {
    Reply::Whole(
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

/// Runs the crawler on `seed` with `env`, in a fresh directory; the URL log parsed.
fn crawl_with_env(
    seed: &str,
    args: &[&str],
    env: &[(&str, String)],
) -> (Vec<LogRow>, String, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), format!("{seed}\n")).unwrap();
    let all: Vec<&str> = ["--delay-factor", "0", "--timeout", "20"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    let (code, stdout, stderr) = crawl_dir(dir.path(), &all, env, None);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    (parse_log(&stdout), stderr, dir.path().join("out"), dir)
}

fn row<'a>(rows: &'a [LogRow], url: &str) -> &'a LogRow {
    let found: Vec<&LogRow> = rows.iter().filter(|r| r.url == url).collect();
    assert_eq!(found.len(), 1, "rows for {url}: {rows:#?}");
    found[0]
}

/// The seed site for the private-address test: links to the forbidden address three ways.
fn links_to_forbidden(target: &str, _: SocketAddr) -> Reply {
    match target {
        "/robots.txt" => whole("404 Not Found", "text/plain", ""),
        "/go" => Reply::Whole(
            format!(
                "HTTP/1.1 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\n\r\n",
                private_url("127.0.0.2", "/redirected")
            )
            .into_bytes(),
        ),
        "/" => whole("200 OK", "text/html", &private_page()),
        _ => whole("404 Not Found", "text/plain", "no"),
    }
}

/// The port of the forbidden listener, shared with the seed site's handler (a plain fn).
static PORT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);

fn private_url(host: &str, path: &str) -> String {
    format!("http://{host}:{}{path}", PORT.load(Ordering::SeqCst))
}

fn private_page() -> String {
    format!(
        r#"<a href="{}">literal</a> <a href="{}">by name</a> <a href="{}">mapped</a> <a href="/go">redirect</a>"#,
        private_url("127.0.0.2", "/literal"),
        private_url("forbidden.test", "/by-name"),
        private_url("[::ffff:127.0.0.2]", "/mapped"),
    )
}

/// The forbidden address's server: it would hand out a secret.
fn secret(target: &str, _: SocketAddr) -> Reply {
    match target {
        "/robots.txt" => whole("404 Not Found", "text/plain", ""),
        _ => whole("200 OK", "text/plain", "the metadata secret"),
    }
}

#[test]
fn private_addresses_are_refused_after_dns_and_nothing_reaches_them() {
    let forbidden = Server::start("127.0.0.2", secret);
    PORT.store(forbidden.addr.port(), Ordering::SeqCst);
    let site = Server::start("127.0.0.1", links_to_forbidden);
    let env = [
        ("CRAWL_TEST_FORBID", "127.0.0.2".to_owned()),
        ("CRAWL_TEST_HOSTS", "forbidden.test=127.0.0.2".to_owned()),
    ];
    let (rows, stderr, out, _dir) = crawl_with_env(&site.url("/"), &["--scope", "any", "-v"], &env);
    let refused = [
        private_url("127.0.0.2", "/literal"),
        private_url("forbidden.test", "/by-name"),
        private_url("[::ffff:7f00:2]", "/mapped"),
        private_url("127.0.0.2", "/redirected"),
    ];
    for url in &refused {
        let r = row(&rows, url);
        assert_eq!((r.status, r.note.as_str()), (0, "private-address"), "{r:?}");
    }
    // Each refused host's robots.txt is refused too (and gives no rules: its pages are each
    // refused and logged in their turn).
    let robots: Vec<&LogRow> = rows
        .iter()
        .filter(|r| r.url.ends_with("/robots.txt") && r.note == "private-address")
        .collect();
    assert_eq!(robots.len(), 3, "{rows:#?}");
    assert_eq!(row(&rows, &site.url("/go")).status, 302);
    assert_eq!(read_summary(&out)["private_refused"], 4 + 3);
    assert!(
        stderr.contains("7 fetches refused: private address"),
        "{stderr}"
    );
    // The evidence, for `--nocapture`: the URL log's refusals and what 127.0.0.2 saw.
    for r in rows.iter().filter(|r| r.note == "private-address") {
        let (s, d, b, m, c) = (r.status, r.depth, r.bytes, r.millis, &r.content_type);
        println!("{s}\t{d}\t{b}\t{m}\t{c}\t{}\t{}", r.url, r.note);
    }
    println!(
        "listener {}: {} connections, requests {:?}",
        forbidden.addr,
        forbidden.connections(),
        forbidden.requests()
    );
    // Nothing reached the forbidden address: not a request, not even a connection.
    assert_eq!(forbidden.connections(), 0, "{:?}", forbidden.requests());
    assert_eq!(site.requests().len(), 4, "{:?}", site.requests());

    // The same crawl with --allow-private does reach it: the listener would have seen a bug.
    let (rows, _, out, _dir) =
        crawl_with_env(&site.url("/"), &["--scope", "any", "--allow-private"], &env);
    assert!(
        rows.iter().all(|r| r.note != "private-address"),
        "{rows:#?}"
    );
    assert_eq!(
        row(&rows, &private_url("127.0.0.2", "/literal")).status,
        200
    );
    assert_eq!(
        row(&rows, &private_url("forbidden.test", "/by-name")).status,
        200
    );
    assert_eq!(read_summary(&out)["private_refused"], 0);
    let mut reached = forbidden.requests();
    reached.sort();
    assert!(
        ["/by-name", "/literal", "/redirected"]
            .iter()
            .all(|p| reached.iter().any(|r| r == p)),
        "{reached:?}"
    );
}

/// The type test's site: pages of several types, two of them watched.
fn typed(target: &str, addr: SocketAddr) -> Reply {
    let watched = |content_type: &str, body_len: usize| Reply::Watched {
        head: format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {body_len}\r\n\r\n"
        )
        .into_bytes(),
        body_len,
    };
    match target {
        // Not an accepted type, but robots.txt is read whatever its type.
        "/robots.txt" => whole(
            "200 OK",
            "application/octet-stream",
            "User-agent: *\nDisallow: /blocked\n",
        ),
        "/" => whole(
            "200 OK",
            "text/html",
            &format!(
                r#"<a href="/doc.pdf">pdf</a> <a href="/style.css">css</a> <a href="/big.html">big</a>
                <a href="/small.html">small</a> <a href="/blocked">blocked</a> <a href="http://{addr}/untyped">?</a>"#
            ),
        ),
        "/doc.pdf" => watched("application/pdf", 1 << 20),
        "/style.css" => watched("text/css; charset=utf-8", 1 << 20),
        "/big.html" => watched("text/html", 1 << 20),
        "/untyped" => Reply::Watched {
            head: b"HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n\r\n".to_vec(),
            body_len: 65536,
        },
        "/small.html" => whole("200 OK", "text/html", "<p>small</p>"),
        _ => whole("404 Not Found", "text/plain", "no"),
    }
}

/// The WARC records (gzip) of a crawl, as text, one string per record.
fn warc_records(out: &Path) -> Vec<String> {
    let text = warc_text(out, ".warc.gz");
    text.split("WARC/1.1\r\n")
        .skip(1)
        .map(str::to_owned)
        .collect()
}

/// The response record of `url`.
fn response_record<'a>(records: &'a [String], url: &str) -> &'a str {
    let target = format!("WARC-Target-URI: {url}\r\n");
    let found: Vec<&String> = records
        .iter()
        .filter(|r| r.contains("WARC-Type: response\r\n") && r.contains(&target))
        .collect();
    assert_eq!(found.len(), 1, "response records of {url}");
    found[0]
}

#[test]
fn rejected_types_and_lengths_are_closed_after_their_headers() {
    let site = Server::start("127.0.0.1", typed);
    let args = [
        "--accept-type",
        "text/*",
        "--reject-type",
        "text/css",
        "--max-body",
        "64K",
        "--warc-compression",
        "gzip",
        "-v",
    ];
    let (rows, stderr, out, _dir) = crawl_with_env(&site.url("/"), &args, &[]);
    let note = |path: &str| {
        let r = row(&rows, &site.url(path));
        (r.status, r.bytes, r.note.clone())
    };
    assert_eq!(note("/doc.pdf"), (200, 0, "type-rejected".into()));
    assert_eq!(note("/style.css"), (200, 0, "type-rejected".into()));
    assert_eq!(note("/untyped"), (200, 0, "type-rejected".into()));
    assert_eq!(note("/big.html"), (200, 0, "too-long".into()));
    assert_eq!(note("/small.html"), (200, 12, "-".into()));
    // robots.txt (application/octet-stream, not accepted) was read: /blocked was never asked for.
    assert!(!site.requests().iter().any(|r| r == "/blocked"));
    // What the server saw: the client closed each skipped response before its body ended.
    for path in ["/doc.pdf", "/style.css", "/big.html", "/untyped"] {
        let r = row(&rows, &site.url(path));
        println!(
            "{path}: log note {}, server saw {:?}",
            r.note,
            site.watched(path)
        );
        match site.watched(path) {
            Some(Seen::ClosedAfter(sent)) => assert!(sent < 65536, "{path}: {sent} bytes"),
            other => panic!("{path}: the server saw {other:?}"),
        }
    }
    let summary = read_summary(&out);
    assert_eq!(
        (&summary["type_rejected"], &summary["too_long"]),
        (&3.into(), &1.into())
    );
    assert!(
        stderr.contains("bodies not read: 3 type-rejected, 1 too-long"),
        "{stderr}"
    );
    // Archived as headers-only response records, marked truncated.
    let records = warc_records(&out);
    for (path, reason) in [("/doc.pdf", "unspecified"), ("/big.html", "length")] {
        let record = response_record(&records, &site.url(path));
        assert!(
            record.contains(&format!("WARC-Truncated: {reason}\r\n")),
            "{record}"
        );
        assert!(
            record.ends_with("\r\n\r\n\r\n\r\n"),
            "a head and no body: {record:?}"
        );
    }
    let small = response_record(&records, &site.url("/small.html"));
    assert!(!small.contains("WARC-Truncated"), "{small}");
    // Headers-only records are valid WARC to the independent readers, digests included.
    for file in warc_files(&out, ".warc.gz") {
        check_with("warcio", &["check", "-v"], &file);
        check_with("fastwarc", &["check", "--verify-payloads"], &file);
    }

    // --keep-truncated keeps the first --max-body bytes of the long page instead.
    let site = Server::start("127.0.0.1", typed);
    let (rows, _, _, _dir) = crawl_with_env(
        &site.url("/"),
        &["--max-body", "64K", "--keep-truncated", "--no-warc"],
        &[],
    );
    let big = row(&rows, &site.url("/big.html"));
    assert_eq!((big.bytes, big.note.as_str()), (65536, "truncated"));
    let pdf = row(&rows, &site.url("/doc.pdf"));
    assert_eq!(
        (pdf.bytes, pdf.note.as_str()),
        (65536, "truncated"),
        "no type filter"
    );
}

/// A seed on the cloud metadata address (or anywhere link-local) is refused before anything is
/// built: stderr names the seed, the rule and the option that opens it, exit status 2, and no
/// advice to resume. No packet leaves the machine: nothing is resolved or connected (the
/// refusal comes before the state directory is even created), and a seed list of a loopback
/// seed and the metadata seed is refused as a whole, its loopback server never asked.
#[test]
fn a_seed_the_address_policy_refuses_is_bad_input_named_with_its_rule() {
    let web = testweb::TestWeb::start(vec![testweb::HostSpec::new(|_| {
        testweb::Response::html("<p>never asked</p>")
    })])
    .unwrap();
    for seed in [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let seeds = format!("{}\n{seed}\n", web.url(0, "/"));
        std::fs::write(dir.path().join("seeds.txt"), seeds).unwrap();
        let (code, stdout, stderr) = crawl_dir(dir.path(), &[], &[], None);
        assert_eq!(code, Some(2), "{seed}: stderr: {stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        for part in [
            seed,
            "link-local",
            "--allow-private",
            "no connection was made",
        ] {
            assert!(stderr.contains(part), "{seed}: {part:?} not in {stderr}");
        }
        assert!(!stderr.contains("resume"), "{stderr}");
        assert!(!dir.path().join("out").exists(), "nothing was built");
    }
    let (code, _, stderr) = {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("seeds.txt"), "http://169.254.169.254/\n").unwrap();
        crawl_dir(dir.path(), &[], &[], None)
    };
    assert_eq!(code, Some(2));
    assert!(stderr.contains("cloud metadata"), "{stderr}");
    assert_eq!(
        web.request_count(),
        0,
        "the loopback seed was not asked either"
    );
}

/// A seed given by a name that resolves to a refused address (here a loopback address the test
/// forbids, as 169.254.169.254 would be) is refused when its address is known: no seed host
/// answered because the address policy refused it, so stderr names the request, the rule and
/// `--allow-private`, the exit status is 2 (bad input), summary.json says `seeds-refused`, and
/// there is no advice to resume, nor a connection to the address.
#[test]
fn a_seed_whose_name_resolves_to_a_refused_address_is_bad_input() {
    let forbidden = Server::start("127.0.0.2", secret);
    let port = forbidden.addr.port();
    let dir = tempfile::tempdir().unwrap();
    let seed = format!("http://metadata.test:{port}/latest/");
    std::fs::write(dir.path().join("seeds.txt"), format!("{seed}\n")).unwrap();
    let env = [
        ("CRAWL_TEST_FORBID", "127.0.0.2".to_owned()),
        ("CRAWL_TEST_HOSTS", "metadata.test=127.0.0.2".to_owned()),
    ];
    let (code, _, stderr) = crawl_dir(dir.path(), &["--timeout", "20"], &env, None);
    assert_eq!(code, Some(2), "stderr: {stderr}");
    let refused = format!("the address policy refused http://metadata.test:{port}/robots.txt");
    for part in [&refused, "127.0.0.2", "--allow-private", "exit status 2"] {
        assert!(stderr.contains(part), "{part:?} not in {stderr}");
    }
    assert!(!stderr.contains("resume"), "{stderr}");
    let summary = read_summary(&dir.path().join("out"));
    assert_eq!(summary["outcome"], "seeds-refused", "{summary}");
    assert_eq!(forbidden.connections(), 0, "{:?}", forbidden.requests());
}
