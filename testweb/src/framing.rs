//! A web of HTTP/1.1 framing cases: servers that write what RFC 9112 forbids or leaves
//! ambiguous on a kept-alive connection, at chosen moments, for the crawler's framing tests
//! (`tests/it/framing.rs`).
//!
//! Each case of [`CASES`] is its own host (its own listener on loopback). A host answers every
//! request on a connection kept open for as long as the client keeps it (HTTP/1.1, no
//! `Connection: close`): `/robots.txt` a 404, [`TRIGGER`] the case's bytes, any other target
//! `page TARGET` as `text/html` with a `Content-Length`. The case's bytes may include a pause
//! and then more bytes written while the connection rests ([`LATE`] after the response:
//! long enough for the client to have read the response, shorter than the rest the tests ask of
//! the crawler). Every request is logged with the connection it came on ([`Served`]), so a test
//! can tell whether a connection was reused.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The target whose answer is the case.
pub const TRIGGER: &str = "/a";
/// How long after the answer to [`TRIGGER`] a case writes its late bytes.
pub const LATE: Duration = Duration::from_millis(20);
/// The body of the response a case writes unasked (late, or after a 101).
pub const STRAY: &str = "STRAY";
/// Where the gzip-under-chunked page links to.
pub const GZIP_LINK: &str = "/linked-from-gzip";

/// One framing case: its name, and what it does.
pub struct Case {
    pub name: &'static str,
    pub what: &'static str,
}

macro_rules! cases {
    ($($name:literal $what:literal;)*) => {
        /// Every case, a host each, in this order.
        pub const CASES: &[Case] = &[$(Case { name: $name, what: $what }),*];
    };
}

cases! {
    "late-after-length" "a Content-Length response, then 20 ms later a second complete response unasked";
    "late-after-chunked" "a chunked response, then 20 ms later a second complete response unasked";
    "late-after-204" "a 204, then 20 ms later a second complete response unasked";
    "unsolicited-101" "101 Switching Protocols nobody asked for, then 20 ms later a complete response";
    "status-099" "HTTP/1.1 099, then 20 ms later a complete response";
    "cl-and-te" "Content-Length: 3 beside Transfer-Encoding: chunked";
    "te-space-colon" "Content-Length: 3 beside 'Transfer-Encoding : chunked' (space before the colon)";
    "cl-plus" "Content-Length: +7";
    "chunk-size-plus" "a chunk size written +7";
    "idle-garbage" "a Content-Length response, then 20 ms later garbage on the idle connection";
    "gzip-chunked" "Transfer-Encoding: gzip, chunked: a gzip'd page that links to /linked-from-gzip";
}

/// One request as the server read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    /// The case's name (the host).
    pub case: &'static str,
    /// The connection it came on: numbered from 1 in the order accepted, across all hosts.
    pub connection: u64,
    /// The request target as sent.
    pub target: String,
}

/// The running framing web; stopped when dropped.
pub struct FramingWeb {
    addrs: Vec<SocketAddr>,
    log: Arc<Mutex<Vec<Served>>>,
    stop: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    threads: Vec<JoinHandle<()>>,
}

impl FramingWeb {
    /// Starts one host per case on loopback.
    pub fn start() -> io::Result<FramingWeb> {
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicU64::new(0));
        let mut addrs = Vec::new();
        let mut threads = Vec::new();
        for case in CASES {
            let listener = TcpListener::bind("127.0.0.1:0")?;
            addrs.push(listener.local_addr()?);
            let (log, stop, open) = (Arc::clone(&log), Arc::clone(&stop), Arc::clone(&open));
            let connections = Arc::clone(&connections);
            threads.push(std::thread::spawn(move || {
                for socket in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(socket) = socket else { continue };
                    let id = connections.fetch_add(1, Ordering::SeqCst) + 1;
                    if let Ok(copy) = socket.try_clone() {
                        open.lock().unwrap().push(copy);
                    }
                    let log = Arc::clone(&log);
                    std::thread::spawn(move || serve(case.name, id, socket, &log));
                }
            }));
        }
        Ok(FramingWeb {
            addrs,
            log,
            stop,
            open,
            threads,
        })
    }

    /// `http://127.0.0.1:PORT` of case `name`.
    pub fn origin(&self, name: &str) -> String {
        let i = CASES
            .iter()
            .position(|c| c.name == name)
            .unwrap_or_else(|| panic!("no framing case {name:?}"));
        format!("http://{}", self.addrs[i])
    }

    /// Every request served so far, in order.
    pub fn log(&self) -> Vec<Served> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for FramingWeb {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for socket in self.open.lock().unwrap().drain(..) {
            let _ = socket.shutdown(Shutdown::Both);
        }
        // Wakes each accept loop, which then sees the stop.
        for addr in &self.addrs {
            let _ = TcpStream::connect(addr);
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// A response with `Content-Length`, `Content-Type: text/html`.
fn page(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// `body` in one chunk and the last chunk.
fn chunked(body: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n0\r\n\r\n");
    out
}

/// What a case writes for [`TRIGGER`]: bytes, then after [`LATE`] the late bytes (if any).
fn trigger(case: &str) -> (Vec<u8>, Option<Vec<u8>>) {
    let stray = page("200 OK", STRAY);
    let own = "page /a";
    let head = |fields: &str| format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{fields}\r\n");
    match case {
        "late-after-length" => (page("200 OK", own), Some(stray)),
        "late-after-chunked" => {
            let mut bytes = head("Transfer-Encoding: chunked\r\n").into_bytes();
            bytes.extend(chunked(own.as_bytes()));
            (bytes, Some(stray))
        }
        "late-after-204" => (b"HTTP/1.1 204 No Content\r\n\r\n".to_vec(), Some(stray)),
        "unsolicited-101" => (
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x-unknown\r\nConnection: Upgrade\r\n\r\n"
                .to_vec(),
            Some(stray),
        ),
        "status-099" => (b"HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n".to_vec(), Some(stray)),
        "cl-and-te" | "te-space-colon" => {
            let te = match case {
                "cl-and-te" => "Transfer-Encoding: chunked",
                _ => "Transfer-Encoding : chunked",
            };
            let mut bytes = head(&format!("Content-Length: 3\r\n{te}\r\n")).into_bytes();
            bytes.extend(chunked(own.as_bytes()));
            (bytes, Some(stray))
        }
        "cl-plus" => (
            format!("{}{own}", head(&format!("Content-Length: +{}\r\n", own.len()))).into_bytes(),
            Some(stray),
        ),
        "chunk-size-plus" => {
            let mut bytes = head("Transfer-Encoding: chunked\r\n").into_bytes();
            bytes.extend(format!("+{:x}\r\n{own}\r\n0\r\n\r\n", own.len()).bytes());
            (bytes, Some(stray))
        }
        "idle-garbage" => (
            page("200 OK", own),
            Some(b"\x00\x01 not HTTP at all \xff\r\n\r\n".to_vec()),
        ),
        "gzip-chunked" => {
            let html = format!("<a href=\"{GZIP_LINK}\">linked</a>");
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(html.as_bytes()).expect("writing to a Vec");
            let gz = gz.finish().expect("writing to a Vec");
            let mut bytes = head("Transfer-Encoding: gzip, chunked\r\n").into_bytes();
            bytes.extend(chunked(&gz));
            (bytes, None)
        }
        _ => unreachable!("every case is listed"),
    }
}

/// The gzip'd body `gzip-chunked` sends (de-chunked): what its record should hold.
pub fn gzip_chunked_body() -> Vec<u8> {
    let (bytes, _) = trigger("gzip-chunked");
    let at = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let rest = &bytes[at..];
    let line = rest.iter().position(|&b| b == b'\n').expect("a chunk line") + 1;
    let size = usize::from_str_radix(std::str::from_utf8(&rest[..line - 2]).unwrap(), 16).unwrap();
    rest[line..line + size].to_vec()
}

/// Serves one connection until the client closes it or the web stops.
fn serve(case: &'static str, id: u64, mut socket: TcpStream, log: &Mutex<Vec<Served>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let end = loop {
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            match socket.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let target = head.split(' ').nth(1).unwrap_or("").to_owned();
        log.lock().unwrap().push(Served {
            case,
            connection: id,
            target: target.clone(),
        });
        let (now, late) = match target.as_str() {
            TRIGGER => trigger(case),
            "/robots.txt" => (page("404 Not Found", "no robots"), None),
            other => (page("200 OK", &format!("page {other}")), None),
        };
        if socket.write_all(&now).is_err() {
            return;
        }
        if let Some(late) = late {
            std::thread::sleep(LATE);
            if socket.write_all(&late).is_err() {
                return;
            }
        }
    }
}
