//! A tiny std-only HTTP/1.1 client for the tests (the server is what is under test, so it shares no code with the crawler's own client).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A connection that can carry several requests.
pub struct Conn {
    pub reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn open(port: u16) -> Conn {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Conn {
            reader: BufReader::new(s),
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.reader.get_mut().write_all(bytes).expect("write");
    }

    /// Sends `METHOD path HTTP/1.1` with a Host header and `extra` header lines (each ending in \r\n).
    pub fn send(&mut self, method: &str, path: &str, extra: &str) {
        let req = format!("{method} {path} HTTP/1.1\r\nHost: test\r\n{extra}\r\n");
        self.send_raw(req.as_bytes());
    }

    /// Reads one response; `head_only` for answers to HEAD.
    pub fn read(&mut self, head_only: bool) -> Resp {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status line");
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("header line");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(':').expect("header colon");
            headers.push((k.to_string(), v.trim().to_string()));
        }
        let mut resp = Resp {
            status,
            headers,
            body: Vec::new(),
        };
        if !head_only {
            let len: usize = resp
                .header("content-length")
                .expect("content-length")
                .parse()
                .unwrap();
            resp.body.resize(len, 0);
            self.reader.read_exact(&mut resp.body).expect("body");
        }
        resp
    }

    pub fn get(&mut self, path: &str) -> Resp {
        self.send("GET", path, "");
        self.read(false)
    }

    /// True when the server has closed the connection (EOF within the read timeout).
    pub fn at_eof(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.reader.read(&mut b), Ok(0) | Err(_))
    }
}

/// One GET on a fresh connection.
pub fn get(port: u16, path: &str) -> Resp {
    let mut c = Conn::open(port);
    c.send("GET", path, "Connection: close\r\n");
    c.read(false)
}

/// The `testweb` binary started with `args` and `--seeds-out seeds`, once its seeds file is
/// there (polled, 10 s at most): the child (stdin and stdout piped), the seed URLs, and the
/// port of the first seed.
#[allow(dead_code)] // not every test binary uses it
pub fn start_binary(args: &[&str], seeds: &Path) -> (Child, Vec<String>, u16) {
    let child = Command::new(env!("CARGO_BIN_EXE_testweb"))
        .args(args)
        .arg("--seeds-out")
        .arg(seeds)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seeds.exists() {
        assert!(Instant::now() < deadline, "no seeds file");
        std::thread::sleep(Duration::from_millis(10));
    }
    let text = std::fs::read_to_string(seeds).unwrap();
    let urls: Vec<String> = text.lines().map(str::to_owned).collect();
    let port = urls
        .first()
        .and_then(|u| u.strip_prefix("http://127.0.0.1:"))
        .and_then(|u| u.trim_end_matches('/').parse().ok())
        .unwrap_or_else(|| panic!("a first seed http://127.0.0.1:PORT/: {text:?}"));
    (child, urls, port)
}

/// Closes the child's stdin (testweb stops at EOF) and returns its JSON line, after checking
/// it exited successfully.
#[allow(dead_code)]
pub fn stop_binary(mut child: Child) -> String {
    drop(child.stdin.take());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    out.trim().to_owned()
}
