//! A tiny std-only HTTP/1.1 client for the tests (no ureq: the server is what is under test).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

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
