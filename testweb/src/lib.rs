//! `testweb`: a local test web on loopback for crawl's integration tests and benchmarks.
//!
//! - [`TestWeb`] is a small HTTP/1.1 server on std threads, or on one event loop for large webs
//!   of quick handlers ([`Engine::Reactor`]: generated webs). Each "host" is its own listener on
//!   `127.0.0.1:PORT` (distinct ports are distinct hosts to a crawler), serving a [`Handler`];
//!   or, for webs too large for a listener each, one listener for hosts at 127.0.0.1,
//!   127.0.0.2, … ([`TestWeb::start_by_address`], inside a network namespace of one's own).
//!   It is hand-written on `std::net` so tests keep raw control of the bytes ([`Body::Raw`]),
//!   and it logs every request with its timing ([`LogEntry`]) so tests can check politeness.
//! - [`Graph`] (module [`graph`]; `gen` is a reserved word in edition 2024) is a deterministic, generated link-graph web rendered on the fly, with the
//!   breadth-first reference ([`Graph::bfs`]) a crawl's result can be compared with.
//! - [`serve_dir`] (module [`fixtures`]) serves a static directory as one host, never anything
//!   outside it.
//! - [`hostile::start`] serves the hostile cases (slow, silent, endless, gzip bombs, lying
//!   lengths, resets, redirect loops, traps, bad robots.txt) crawl must survive.
//! - [`framing::FramingWeb`] writes HTTP/1.1 framing cases (late bytes on an idle kept
//!   connection, ambiguous lengths, unsolicited 1xx) on kept connections at chosen moments.
//! - [`sitemaps::start`] serves robots.txt `Sitemap:` lines, sitemap indexes, gzip, text,
//!   over-limit and broken sitemaps, and pages only a sitemap leads to.
//! - [`neardup::start`] serves known near-duplicate pages beside distinct ones, and a calendar
//!   trap whose pages differ only in their date.
//! - [`proxy::Proxy`] is an HTTP `CONNECT` and SOCKS5 proxy that reaches only loopback and
//!   records every tunnel; [`tls::TlsServer`] an HTTPS server with a CA of its own (rcgen).
//! - [`redis::RedisServer`] is a `redis-server` of the test's own on a loopback port (append-only
//!   file, fsync always), which a test can SIGKILL and restart, for the shard exchange.
//! - [`changing::ChangingWeb`] serves pages that change as Poisson processes on a simulated
//!   clock the test moves, and keeps the ground truth of changes captured and freshness.
//! - [`dns::DnsServer`] answers DNS questions over UDP after a delay and logs when each came
//!   (names of hosts by address: `h{i}.web.test`), for the crawler's name resolution.
//! - The `testweb` binary serves a generated web for benchmarks, or a directory of fixtures with
//!   `--fixtures DIR` (see `src/main.rs`).
//!
//! ```no_run
//! use testweb::{Graph, GraphSpec};
//! let graph = Graph::new(GraphSpec { hosts: 3, pages_per_host: 100, ..GraphSpec::default() });
//! let web = graph.start(std::time::Duration::ZERO, &|_host| None).unwrap();
//! let seed = format!("{}/", web.origin(0));
//! # let _ = seed;
//! ```

mod accept;
pub mod changing;
pub mod community;
pub mod directives;
pub mod dns;
pub mod fixtures;
pub mod framing;
pub mod graph;
pub mod hostile;
mod http;
pub mod neardup;
pub mod proxy;
pub mod redis;
mod server;
pub mod sitemaps;
pub mod tls;
pub mod warc_readers;

pub use fixtures::serve_dir;
pub use graph::{Graph, GraphSpec};
pub use server::{Engine, TestWeb, host_address, host_index};

use std::sync::Arc;
use std::time::{Duration, Instant};

/// One parsed request head, as the client sent it.
#[derive(Clone, Debug)]
pub struct Request {
    /// The method, e.g. `GET`.
    pub method: String,
    /// The request target as sent: path plus query (origin form).
    pub target: String,
    /// Header fields in order, names as sent.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first header field named `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A response body.
#[derive(Clone, Debug)]
pub enum Body {
    /// Sent after the head. The server adds `Content-Length` unless the handler set
    /// `Content-Length` or `Transfer-Encoding` itself (then the bytes go out as given, lies included).
    Bytes(Vec<u8>),
    /// Raw script: the server writes NO status line or headers itself; it writes each chunk after
    /// its pause, then closes the connection. For hostile-server tests.
    Raw(Vec<(Duration, Vec<u8>)>),
    /// Like [`Body::Raw`], but the connection is then reset (RST, via `SO_LINGER` 0) instead of
    /// closed: a server dying mid-body.
    RawThenReset(Vec<(Duration, Vec<u8>)>),
    /// Raw: `prefix` (status line, headers and all), then `chunk` over and over until the client
    /// stops reading (the write times out or fails) or the web stops: an endless body.
    Endless {
        /// Sent once, first.
        prefix: Vec<u8>,
        /// Sent again and again.
        chunk: Vec<u8>,
    },
}

/// What a [`Handler`] answers.
#[derive(Clone, Debug)]
pub struct Response {
    /// Status code (recorded in the log even for [`Body::Raw`], where it is not sent).
    pub status: u16,
    /// Header fields to send, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
}

impl Response {
    /// A response with the given status, one `Content-Type` and a byte body.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: Body::Bytes(body.into()),
        }
    }

    /// 200 `text/html; charset=utf-8`.
    pub fn html(body: impl Into<Vec<u8>>) -> Response {
        Response::new(200, "text/html; charset=utf-8", body)
    }

    /// `text/plain; charset=utf-8` with the given status.
    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response::new(status, "text/plain; charset=utf-8", body)
    }

    /// A redirect (301, 302, 303, 307, 308...) to `location`, sent as given.
    pub fn redirect(status: u16, location: &str) -> Response {
        Response::text(status, format!("redirect to {location}\n"))
            .with_header("Location", location)
    }

    /// 404 with a short text body.
    pub fn not_found() -> Response {
        Response::text(404, "not found\n")
    }

    /// A raw script (see [`Body::Raw`]); `status` is only what the log records.
    pub fn raw(status: u16, script: Vec<(Duration, Vec<u8>)>) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Raw(script),
        }
    }

    /// Adds one header field.
    pub fn with_header(mut self, k: impl Into<String>, v: impl Into<String>) -> Response {
        self.headers.push((k.into(), v.into()));
        self
    }
}

/// Answers the requests of one host. Called only for `GET` and `HEAD` (the server answers other
/// methods 405 itself); for `HEAD` the server sends the head of the answer without its body.
pub type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// One host of a [`TestWeb`].
#[derive(Clone)]
pub struct HostSpec {
    /// Answers this host's requests.
    pub handler: Handler,
    /// Slept after the request head is read and before the response is written.
    pub latency: Duration,
}

impl HostSpec {
    /// A host with no added latency.
    pub fn new(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> HostSpec {
        HostSpec {
            handler: Arc::new(handler),
            latency: Duration::ZERO,
        }
    }

    /// The same host with `latency` before each response.
    pub fn with_latency(mut self, latency: Duration) -> HostSpec {
        self.latency = latency;
        self
    }
}

/// One served request.
#[derive(Clone, Debug)]
pub struct LogEntry {
    /// Index of the host (listener) that served it.
    pub host: usize,
    /// Method as sent (empty if the request line could not be parsed).
    pub method: String,
    /// Target as sent (empty if the request line could not be parsed).
    pub target: String,
    /// Status answered ([`Response::status`], also for raw scripts).
    pub status: u16,
    /// When the request head was fully read.
    pub start: Instant,
    /// When the last write of the response began: the earliest instant the client can hold all
    /// of it, so a client that waits for each response never shows an overlap. For a request
    /// that got no complete response (the connection gave up), when the server gave up.
    pub end: Instant,
}
