//! `--idle-timeout` end to end: a host the crawl has finished with has its kept connection
//! closed by the crawler once unused for the timeout, while the crawl goes on elsewhere, not
//! only when the crawl ends.

use crate::util::crawl;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use testweb::{HostSpec, Response, TestWeb};

/// Pages of the host crawled after the finished one: a chain, each found on the one before.
const CHAIN: usize = 12;
/// The rest between two of its requests (`--min-delay`), well under the timeout, which the
/// chain outlasts several times over.
const REST: &str = "0.1";
const TIMEOUT: &str = "0.25";

/// One host on loopback that answers on kept connections (`/robots.txt` a 404, `/` a page
/// linking to `link`) and notes when the client closed each connection.
struct ClosingHost {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    /// When each connection's client closed it (the server read the end of the stream).
    closed: Arc<Mutex<Vec<Instant>>>,
    stop: Arc<AtomicBool>,
    accepting: Option<JoinHandle<()>>,
}

impl ClosingHost {
    fn start(link: String) -> ClosingHost {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, notes, stopping) = (accepted.clone(), closed.clone(), stop.clone());
        let accepting = std::thread::spawn(move || {
            for socket in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(socket) = socket else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let (notes, link) = (notes.clone(), link.clone());
                std::thread::spawn(move || serve(socket, &link, &notes));
            }
        });
        ClosingHost {
            addr,
            accepted,
            closed,
            stop,
            accepting: Some(accepting),
        }
    }
}

impl Drop for ClosingHost {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees the stop.
        let _ = TcpStream::connect(self.addr);
        if let Some(accepting) = self.accepting.take() {
            let _ = accepting.join();
        }
    }
}

/// Answers requests on one connection until the client closes it (noted) or it stays silent
/// for 10 s (the crawl is long over by then).
fn serve(mut socket: TcpStream, link: &str, closed: &Mutex<Vec<Instant>>) {
    let _ = socket.set_read_timeout(Some(Duration::from_secs(10)));
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match socket.read(&mut byte) {
            Ok(0) => return closed.lock().unwrap().push(Instant::now()),
            Ok(_) => head.push(byte[0]),
            Err(_) => return,
        }
        if !head.ends_with(b"\r\n\r\n") {
            continue;
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        let target = text.split(' ').nth(1).unwrap_or_default();
        let (status, body) = match target {
            "/" => ("200 OK", format!("<a href=\"{link}\">next</a>")),
            _ => ("404 Not Found", String::new()),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if socket.write_all(response.as_bytes()).is_err() {
            return;
        }
        head.clear();
    }
}

#[test]
fn a_finished_hosts_connection_is_closed_by_the_crawler_after_the_timeout() {
    // The chain's host: page i links to page i + 1.
    let chain = TestWeb::start(vec![HostSpec::new(|req| {
        let next = (req
            .target
            .strip_prefix('/')
            .and_then(|n| n.parse::<usize>().ok()))
        .map(|i| i + 1)
        .filter(|&i| i < CHAIN);
        match (req.target.as_str(), next) {
            ("/robots.txt", _) => Response::not_found(),
            (_, Some(i)) => Response::html(format!("<a href=\"/{i}\">next</a>")),
            _ => Response::html("the end"),
        }
    })])
    .unwrap();
    // The seed's host, done after its one page, which leads to the chain.
    let finished = ClosingHost::start(chain.url(0, "/0"));
    let seed = format!("http://{}/\n", finished.addr);
    let args = [
        "--scope",
        "any",
        "--no-sitemaps",
        "--delay-factor",
        "0",
        "--min-delay",
        REST,
        "--idle-timeout",
        TIMEOUT,
    ];
    let run = crawl(&seed, &args);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let pages = run.pages();
    assert_eq!(pages.len(), 1 + CHAIN, "{}", run.stdout);
    assert!(pages.iter().all(|p| p.status == 200), "{}", run.stdout);

    // The finished host's one connection (robots.txt and its page on it) was closed while the
    // chain was still being crawled: before the chain's last request.
    let log = chain.log();
    let last = log
        .iter()
        .map(|e| e.start)
        .max()
        .expect("the chain was crawled");
    let closed = finished.closed.lock().unwrap().clone();
    assert_eq!(finished.accepted.load(Ordering::SeqCst), 1);
    assert_eq!(closed.len(), 1, "the client closed its connection");
    assert!(
        closed[0] < last,
        "closed {:?} after the chain's last request",
        closed[0].saturating_duration_since(last)
    );
    let summary = run.summary();
    let by_timeout = summary["connections"]["closed_timeout"].as_u64();
    assert!(by_timeout >= Some(1), "{summary}");
}
