//! Why a fetch failed: the kinds of failure, and `Fail`, the error the fetch stages return.
//!
//! Each `ErrorKind` is one word of the URL log (its note, and the JSONL log's `error`), a
//! stable interface that tests and users parse: `as_str` gives the word, and a word once
//! written is never changed. A new kind is a new variant here, its word in `as_str` and `ALL`,
//! and a line in docs/crawling.md's list of error kinds ("Notes in the URL log").
//!
//! `is_transient` tells whether another attempt later may succeed; a request that failed on a
//! reused connection before any byte of its response is sent again at once on a fresh one
//! whatever its kind but `Timeout` (`Fail::stale`, `client`).

use std::fmt;
use std::io;

/// What went wrong with a fetch that produced no response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `timeout`: the `--timeout` for the whole request passed, no byte came for
    /// `conn::PER_READ`, a TCP connect or a name look-up took too long. A slow or silent
    /// server, or a congested path: a later attempt may succeed.
    Timeout,
    /// `dns`: the name has no address, the look-up failed, or it could not be started. A
    /// missing name and a failing resolver look alike here: a later attempt may succeed (a
    /// missing name fails again).
    Dns,
    /// `connect`: no TCP connection (refused, unreachable), or a proxy refused the tunnel.
    /// The server may be down for a while: a later attempt may succeed.
    Connect,
    /// `reset`: the connection was reset or aborted, or a write found it broken. A later
    /// attempt may succeed.
    Reset,
    /// `closed`: the server closed the connection before the end of the response head (or
    /// an I/O read ended early outside the body). A later attempt may succeed.
    Closed,
    /// `short-body`: the connection closed inside the body, before the length its
    /// `Content-Length` or chunking promised (`closed` while reading the body). A later attempt
    /// may succeed.
    ShortBody,
    /// `io`: another I/O error on the connection, outside the body. A later attempt may
    /// succeed.
    Io,
    /// `body`: another I/O error while reading the body (`io` inside the body). A later
    /// attempt may succeed.
    Body,
    /// `bad-url`: the URL does not parse, is not http(s), or its host is not a TLS server
    /// name. Nothing was sent; the same URL always fails.
    BadUrl,
    /// `protocol`: the answer is not HTTP/1.x, or its length or chunking is malformed. The
    /// server's own doing: the same request is expected to fail again.
    Protocol,
    /// `too-large`: the response head is over `conn::MAX_HEAD` bytes or has too many headers.
    /// The same request is expected to fail again.
    TooLarge,
    /// `tls`: TLS failed (a certificate refused, no common protocol version, a bad record).
    /// Set by the server's configuration or `--ca-cert`/`--insecure`: the same request is
    /// expected to fail again.
    Tls,
    /// `private-address`: every address of the host is one the crawler refuses (`private`);
    /// nothing was connected to. Our policy: refused again unless the name comes to resolve
    /// elsewhere.
    PrivateAddress,
}

impl ErrorKind {
    /// Every kind, in the order of the declaration.
    pub const ALL: [ErrorKind; 13] = [
        ErrorKind::Timeout,
        ErrorKind::Dns,
        ErrorKind::Connect,
        ErrorKind::Reset,
        ErrorKind::Closed,
        ErrorKind::ShortBody,
        ErrorKind::Io,
        ErrorKind::Body,
        ErrorKind::BadUrl,
        ErrorKind::Protocol,
        ErrorKind::TooLarge,
        ErrorKind::Tls,
        ErrorKind::PrivateAddress,
    ];

    /// The URL log's word for the kind (never changed once written: see the module doc).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Dns => "dns",
            ErrorKind::Connect => "connect",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::ShortBody => "short-body",
            ErrorKind::Io => "io",
            ErrorKind::Body => "body",
            ErrorKind::BadUrl => "bad-url",
            ErrorKind::Protocol => "protocol",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::Tls => "tls",
            ErrorKind::PrivateAddress => "private-address",
        }
    }

    /// Whether another attempt later may succeed: the failure came from the network's or the
    /// server's state at the time, not from the URL, what the server sent, or our policy.
    pub fn is_transient(self) -> bool {
        match self {
            ErrorKind::Timeout
            | ErrorKind::Dns
            | ErrorKind::Connect
            | ErrorKind::Reset
            | ErrorKind::Closed
            | ErrorKind::ShortBody
            | ErrorKind::Io
            | ErrorKind::Body => true,
            ErrorKind::BadUrl
            | ErrorKind::Protocol
            | ErrorKind::TooLarge
            | ErrorKind::Tls
            | ErrorKind::PrivateAddress => false,
        }
    }

    /// Whether a page (or robots.txt) that failed so is asked again later on the transient
    /// schedule (`fetch::retry::Transient`): no answer came because the server was slow,
    /// refused, or dropped the connection before answering. A DNS failure is not (a missing
    /// name fails again), nor a failure inside a body or of TLS.
    pub fn is_retried(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout | ErrorKind::Connect | ErrorKind::Reset | ErrorKind::Closed
        )
    }

    /// Whether the failure says the host could not be reached at all: a retried kind, or a
    /// name that did not resolve. `PARK_AFTER` of these in a row park the host.
    pub fn is_connection_level(self) -> bool {
        self.is_retried() || self == ErrorKind::Dns
    }

    /// Whether the failure counts against the crawl (`--max-error-ratio`): every kind but the
    /// crawler's own refusals, where nothing was sent (`private-address`, `bad-url`).
    pub fn is_crawl_failure(self) -> bool {
        !matches!(self, ErrorKind::PrivateAddress | ErrorKind::BadUrl)
    }

    /// The kind a failure has when it happened while reading a body: an early close is a
    /// short body, another I/O error a body error; the others stay as they are.
    pub fn in_body(self) -> ErrorKind {
        match self {
            ErrorKind::Closed => ErrorKind::ShortBody,
            ErrorKind::Io => ErrorKind::Body,
            kind => kind,
        }
    }

    /// The kind of an I/O error: a TLS error inside it is `Tls`, and its `io::ErrorKind`
    /// tells the rest.
    pub fn of_io(e: &io::Error) -> ErrorKind {
        if e.get_ref().is_some_and(|e| e.is::<rustls::Error>()) {
            return ErrorKind::Tls;
        }
        match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ErrorKind::Timeout,
            io::ErrorKind::ConnectionRefused => ErrorKind::Connect,
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => ErrorKind::Reset,
            io::ErrorKind::UnexpectedEof => ErrorKind::Closed,
            _ => ErrorKind::Io,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a request failed, as the fetch stages (`conn`, `dns`, `proxy`, `client`) return it;
/// `client` turns it into the caller's `FetchError`.
#[derive(Debug)]
pub struct Fail {
    pub kind: ErrorKind,
    pub message: String,
    /// Failed on a reused connection before any byte of the response: worth one more try on a
    /// fresh connection.
    pub stale: bool,
    /// Not a failure: a non-blocking socket (`fetch::reactor`) has no more bytes yet, and the
    /// response is parsed again once `short` more have come (or the stream ended).
    pub pending: Option<usize>,
}

impl Fail {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Fail {
        Fail {
            kind,
            message: message.into(),
            stale: false,
            pending: None,
        }
    }

    /// A response incomplete so far on a non-blocking socket, `short` bytes at least from its
    /// next step (`pending`).
    pub fn pending(short: usize) -> Fail {
        Fail {
            pending: Some(short.max(1)),
            ..Fail::new(ErrorKind::Io, "")
        }
    }

    /// An I/O error, named by what was being done.
    pub fn io(e: &io::Error, doing: &str) -> Fail {
        Fail::new(ErrorKind::of_io(e), format!("{doing}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_are_the_url_logs() {
        let words: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            words,
            [
                "timeout",
                "dns",
                "connect",
                "reset",
                "closed",
                "short-body",
                "io",
                "body",
                "bad-url",
                "protocol",
                "too-large",
                "tls",
                "private-address",
            ]
        );
        for kind in ErrorKind::ALL {
            assert_eq!(kind.to_string(), kind.as_str());
        }
    }

    #[test]
    fn a_failure_inside_a_body_is_named_for_the_body() {
        assert_eq!(ErrorKind::Closed.in_body(), ErrorKind::ShortBody);
        assert_eq!(ErrorKind::Io.in_body(), ErrorKind::Body);
        assert_eq!(ErrorKind::Timeout.in_body(), ErrorKind::Timeout);
        assert_eq!(ErrorKind::Reset.in_body(), ErrorKind::Reset);
    }

    #[test]
    fn only_failures_before_an_answer_are_retried() {
        let retried: Vec<&str> = (ErrorKind::ALL.iter())
            .filter(|k| k.is_retried())
            .map(|k| k.as_str())
            .collect();
        assert_eq!(retried, ["timeout", "connect", "reset", "closed"]);
        assert!(ErrorKind::Dns.is_connection_level() && !ErrorKind::Dns.is_retried());
        assert!(!ErrorKind::Tls.is_connection_level());
        assert!(!ErrorKind::PrivateAddress.is_crawl_failure());
        assert!(ErrorKind::Tls.is_crawl_failure());
    }

    #[test]
    fn io_errors_are_named_by_their_kind() {
        let of = |kind| ErrorKind::of_io(&io::Error::from(kind));
        assert_eq!(of(io::ErrorKind::TimedOut), ErrorKind::Timeout);
        assert_eq!(of(io::ErrorKind::WouldBlock), ErrorKind::Timeout);
        assert_eq!(of(io::ErrorKind::ConnectionRefused), ErrorKind::Connect);
        assert_eq!(of(io::ErrorKind::BrokenPipe), ErrorKind::Reset);
        assert_eq!(of(io::ErrorKind::UnexpectedEof), ErrorKind::Closed);
        assert_eq!(of(io::ErrorKind::PermissionDenied), ErrorKind::Io);
        let tls = io::Error::new(io::ErrorKind::InvalidData, rustls::Error::DecryptError);
        assert_eq!(ErrorKind::of_io(&tls), ErrorKind::Tls);
    }
}
