//! One HTTP/1.1 connection: a request head out, a response head and body in, and whether the
//! connection may carry another request (keep-alive).
//!
//! The response head is parsed by `httparse` from our own read buffer and kept as the bytes
//! received (for the archive). The body is framed as RFC 9112 §6.3 says: none for 1xx, 204 and
//! 304; chunked when `Transfer-Encoding` ends in `chunked` (the framing removed); a
//! `Content-Length`; else everything up to the close. A body is read up to a cap and no
//! further.
//!
//! Every byte belongs to the request it answers. A connection is reusable only when its
//! response was read exactly to its end with no byte past it, it was HTTP/1.1, neither side
//! said `Connection: close`, and its framing was not ambiguous (`Head::ambiguous`:
//! `Content-Length` beside `Transfer-Encoding`, an unsolicited `101`); `read_body` says which
//! (`After`). A `Content-Length` or chunk size that is not all digits (`+5`) and a status
//! outside 100–599 are `protocol` errors, and the connection is dropped with the error. Before
//! a kept connection carries a request, `idle_state` checks without blocking that the server
//! neither closed it nor wrote to it meanwhile (`pool`).
//!
//! Time: every read is bounded by the request's deadline (`--timeout`, the whole request) and
//! by `PER_READ`. The socket's read timeout is set only when it must change (not per read),
//! and a read that timed out early is retried until one of the two limits really passed.
//! A response that keeps coming, but slower than `LowSpeed` (`--low-speed-limit` bytes a
//! second over `--low-speed-time`, from its first byte on), is given up as a `timeout` at the
//! read that shows it: a trickle sends a byte often enough that neither limit above meets it.
//!
//! TLS: the handshake is `drive_handshake`'s (rustls's `complete_io`) on both paths. On a
//! non-blocking connection (`fetch::reactor`) TLS reads never wait (`Stream::read_now`), a
//! request is sealed whole into rustls and written as far as the socket takes it, the rest
//! when it has room (`flush_tls`); the liveness check leaves the socket in its mode.
//!
//! Errors are `error::Fail`s, their kind the URL log's word; a failure before any byte of the
//! response on a reused connection is marked `stale`: the server closed it while idle, and the
//! request is sent again once on a fresh connection (`client`).

use crate::fetch::error::{ErrorKind, Fail};
pub use crate::sys::Idle;
use rustls::{ClientConnection, HandshakeKind, StreamOwned};
use std::io::{self, Read, Write};
use std::net::{IpAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime};

/// Longest response head read: more is `too-large`.
pub const MAX_HEAD: usize = 64 * 1024;
/// Longest wait for one read, whatever time the request has left.
pub const PER_READ: Duration = Duration::from_secs(20);

/// The slowest a response may come (`--low-speed-limit`, `--low-speed-time`): fewer than
/// `bytes_per_sec` a second over a span of `time` (counted from the response's first byte, span
/// after span) gives it up. A trickle (a byte a second, forever) is a server holding the
/// crawler, not a slow link: a real one sends kilobytes a second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowSpeed {
    /// Bytes a second at least; 0 turns the rule off.
    pub bytes_per_sec: u64,
    /// Over spans this long.
    pub time: Duration,
}

impl LowSpeed {
    /// No rule: only `--timeout` and `PER_READ` bound a response.
    pub const OFF: LowSpeed = LowSpeed {
        bytes_per_sec: 0,
        time: Duration::ZERO,
    };

    /// The default: 100 bytes a second over 10 seconds.
    pub const DEFAULT: LowSpeed = LowSpeed {
        bytes_per_sec: 100,
        time: Duration::from_secs(10),
    };

    fn is_off(&self) -> bool {
        self.bytes_per_sec == 0 || self.time.is_zero()
    }
}
/// How far a read may overshoot the deadline or `PER_READ` rather than set the socket's
/// timeout again.
const SLACK: Duration = Duration::from_millis(100);
/// Headers a response head may have (httparse needs a fixed array); more is `too-large`.
const MAX_HEADERS: usize = 256;
/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 16 * 1024;
/// Most of a body reserved up front from its `Content-Length`; a longer one grows as read.
const MAX_RESERVE: usize = 4 << 20;
/// Longest chunk-size or trailer line of a chunked body.
const MAX_LINE: usize = 4 * 1024;

thread_local! {
    /// A read buffer not in use: the one of the connection this thread parked last.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// A body this thread is done with (`recycle_body`), for its next response.
    static SPARE_BODY: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// When the last bytes this thread read from a socket arrived, if the socket stamps
    /// arrivals (`sys::stamp_arrivals`), and when it last sent a request: `last_round_trip`.
    static LAST_ARRIVAL: std::cell::Cell<Option<SystemTime>> = const { std::cell::Cell::new(None) };
    static LAST_SENT: std::cell::Cell<Option<SystemTime>> = const { std::cell::Cell::new(None) };
}

/// The time from this thread's last request sent to the arrival of the last bytes it read
/// since, by the kernel's stamp (`sys::stamp_arrivals`), or None (taken: None again until the
/// next request and reads). Read when a response is read to its end, it is that response's
/// time: the server's and the network's, without the wait of a busy machine before the
/// thread ran to read it, nor the connect before the request.
pub fn last_round_trip() -> Option<Duration> {
    let (sent, arrived) = (LAST_SENT.take()?, LAST_ARRIVAL.take()?);
    arrived.duration_since(sent).ok()
}

/// A read of a TCP socket, noting when its bytes arrived (`last_arrival`).
fn read_tcp(tcp: &mut TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    #[cfg(target_os = "linux")]
    {
        let (n, arrived) = crate::sys::recv_stamped(tcp, buf)?;
        if n > 0 && arrived.is_some() {
            LAST_ARRIVAL.set(arrived);
        }
        Ok(n)
    }
    #[cfg(not(target_os = "linux"))]
    tcp.read(buf)
}

/// A body kept for reuse is at most this large; a larger one is freed.
const MAX_SPARE_BODY: usize = 256 * 1024;

/// An empty buffer for a response's body: the last one this thread recycled, else a new one.
pub fn spare_body() -> Vec<u8> {
    SPARE_BODY.take()
}

/// Gives a body this thread is done with back for its next response (a worker without an
/// archive; with one, the body moves on to the archive), so a page costs no allocation and no
/// free of its body. Kept only up to `MAX_SPARE_BODY` bytes of room.
pub fn recycle_body(mut body: Vec<u8>) {
    if body.capacity() <= MAX_SPARE_BODY {
        body.clear();
        SPARE_BODY.set(body);
    }
}

/// A connection's byte stream: TCP, or TLS over a stream (TLS over TLS through an `https://`
/// proxy's tunnel).
pub enum Stream {
    /// Plain TCP.
    Tcp(TcpStream),
    /// TLS over a stream.
    Tls(Box<StreamOwned<ClientConnection, Stream>>),
    /// Bytes in memory, then the end of the stream: the response parser alone
    /// (`read_response`, for the fuzz target). Writes go nowhere.
    Memory(io::Cursor<Vec<u8>>),
}

impl Stream {
    /// The socket at the bottom, for its timeouts; none in memory.
    pub fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Stream::Tcp(tcp) => Some(tcp),
            Stream::Tls(tls) => tls.sock.tcp(),
            Stream::Memory(_) => None,
        }
    }

    /// A read of a non-blocking stream (`fetch::reactor`). Under TLS: the plaintext rustls
    /// holds, else records read from the socket until one brings plaintext, the end, or the
    /// socket has nothing (`WouldBlock`: it was read dry, as the loop's edge-triggered poll
    /// needs). Never a socket write but what a record read asks for (an alert, a key update),
    /// and that never blocks: the rest waits for `flush_tls`.
    fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let tls = match self {
            Stream::Tls(tls) => tls,
            other => return other.read(buf),
        };
        loop {
            match tls.conn.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // Plaintext, a close_notify (0), or the socket's end without one.
                read => return read,
            }
            // At the socket's end rustls notes it, and its reader says so above.
            tls.conn.read_tls(&mut tls.sock)?;
            let processed = tls.conn.process_new_packets();
            let _ = write_tls_now(tls);
            if let Err(e) = processed {
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
        }
    }
}

/// Writes the records rustls holds until they are all out or the socket is full (`Ok`: the
/// rest waits for the socket to be writable).
fn write_tls_now(tls: &mut StreamOwned<ClientConnection, Stream>) -> io::Result<()> {
    while tls.conn.wants_write() {
        match tls.conn.write_tls(&mut tls.sock) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Where a TLS handshake is (`drive_handshake`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handshake {
    Done,
    /// Waiting for the socket (non-blocking only); `heard`: bytes came meanwhile.
    Waiting {
        heard: bool,
    },
}

/// Drives the TLS handshake of `tls` over `sock` with rustls's `complete_io`, the blocking
/// client's and the reactor's alike, so that both fail alike (`TLS handshake: …`, a refused
/// certificate a `tls` failure). Blocking, until done or failed; non-blocking, as far as the
/// socket allows now (`Waiting`: the caller waits for what `tls.wants_write()` says, else for
/// bytes to read).
pub fn drive_handshake(
    tls: &mut ClientConnection,
    sock: &mut Stream,
    nonblocking: bool,
) -> Result<Handshake, Fail> {
    let mut heard = false;
    while tls.is_handshaking() {
        match tls.complete_io(sock) {
            // Nothing wanted either way while handshaking: the server ended it (close_notify).
            Ok((0, 0)) if tls.is_handshaking() => {
                let e = io::Error::from(io::ErrorKind::UnexpectedEof);
                return Err(Fail::io(&e, "TLS handshake"));
            }
            Ok((read, _)) => heard |= read > 0,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && nonblocking => {
                return Ok(Handshake::Waiting { heard });
            }
            Err(e) => return Err(Fail::io(&e, "TLS handshake")),
        }
    }
    Ok(Handshake::Done)
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => read_tcp(tcp, buf),
            Stream::Tls(tls) => tls.read(buf),
            Stream::Memory(bytes) => bytes.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.write(buf),
            Stream::Tls(tls) => tls.write(buf),
            Stream::Memory(_) => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
            Stream::Memory(_) => Ok(()),
        }
    }
}

/// A parsed response head; `raw` is the bytes as received, ending with the empty line.
pub struct Head {
    pub status: u16,
    /// HTTP/1.`minor`.
    pub minor: u8,
    pub headers: Headers,
    pub raw: Vec<u8>,
}

/// Response headers in the order received: names as the server wrote them, values trimmed
/// (invalid UTF-8 replaced). All of them share one string, so a response costs two
/// allocations here instead of two per header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Headers {
    /// Each name followed by its value.
    text: String,
    /// Per header: where its name starts, where its value starts (the name's end), where the
    /// value ends.
    spans: Vec<[u32; 3]>,
}

impl Headers {
    /// No headers, room for `n`.
    pub fn with_capacity(n: usize, bytes: usize) -> Headers {
        Headers {
            text: String::with_capacity(bytes),
            spans: Vec::with_capacity(n),
        }
    }

    /// Adds a header after the others (`value` is stored trimmed).
    pub fn push(&mut self, name: &str, value: &str) {
        let start = self.text.len();
        self.text.push_str(name);
        let middle = self.text.len();
        self.text.push_str(value.trim());
        // A head is at most MAX_HEAD bytes, so offsets fit in u32.
        let at = |n: usize| u32::try_from(n).expect("headers under 4 GiB");
        self.spans
            .push([at(start), at(middle), at(self.text.len())]);
    }

    /// The headers in order, as (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.spans.iter().map(|&[start, middle, end]| {
            let (start, middle, end) = (start as usize, middle as usize, end as usize);
            (&self.text[start..middle], &self.text[middle..end])
        })
    }

    /// The first value of header `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Every value of header `name` (case-insensitive), in order.
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        self.iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

impl<'a> FromIterator<(&'a str, &'a str)> for Headers {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(pairs: I) -> Headers {
        let mut headers = Headers::default();
        pairs.into_iter().for_each(|(k, v)| headers.push(k, v));
        headers
    }
}

impl Head {
    /// Whether a comma-separated header `name` has `token` (case-insensitive).
    fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers
            .values(name)
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    /// How the body is delimited (RFC 9112 §6.3). A `Content-Length` that is not `1*DIGIT`
    /// (`+5`, `0x10`, `5 5`), or two that differ, is an error (§6.3 item 5: the response is
    /// discarded and the connection closed) unless a `Transfer-Encoding` overrides it.
    pub fn framing(&self) -> Result<Framing, Fail> {
        if self.status < 200 || self.status == 204 || self.status == 304 {
            return Ok(Framing::Empty);
        }
        let last_coding = self
            .headers
            .values("transfer-encoding")
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .last();
        if let Some(last) = last_coding {
            return Ok(match last.eq_ignore_ascii_case("chunked") {
                true => Framing::Chunked,
                false => Framing::Close,
            });
        }
        let mut length = None;
        for value in self
            .headers
            .values("content-length")
            .flat_map(|v| v.split(','))
        {
            let digits = value.trim();
            let n = match is_digits(digits) {
                true => digits.parse::<u64>().ok(),
                false => None,
            };
            let n = n.ok_or_else(|| {
                Fail::new(ErrorKind::Protocol, format!("bad Content-Length {value:?}"))
            })?;
            if length.is_some_and(|l| l != n) {
                return Err(Fail::new(
                    ErrorKind::Protocol,
                    "conflicting Content-Length values",
                ));
            }
            length = Some(n);
        }
        Ok(length.map_or(Framing::Close, Framing::Length))
    }

    /// Why the connection must close after this response although its framing could be read:
    /// a `Content-Length` beside a `Transfer-Encoding` (RFC 9112 §6.3 item 3: a sign of
    /// response splitting, "ought to be handled as an error"), or a `101` no request of ours
    /// asked for (what follows it is not HTTP/1.1).
    pub fn ambiguous(&self) -> Option<&'static str> {
        if self.status == 101 {
            return Some("an unsolicited 101 Switching Protocols");
        }
        let framed = self.status >= 200 && self.status != 204 && self.status != 304;
        let has = |name| self.headers.values(name).next().is_some();
        (framed && has("transfer-encoding") && has("content-length"))
            .then_some("Content-Length beside Transfer-Encoding")
    }

    /// Whether the connection may carry another request after this response.
    fn keeps_alive(&self) -> bool {
        self.minor >= 1 && !self.has_token("connection", "close")
    }
}

/// Whether a connection may carry another request after a response (`read_body`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Read exactly to its end, HTTP/1.1, no `Connection: close`: kept for the next request.
    Reuse,
    /// Closed as usual: a body read to the close or cut at the cap, HTTP/1.0,
    /// `Connection: close`.
    Close,
    /// Closed: bytes came past the response's end that no request asked for (they would be
    /// read as the next request's response).
    Unsolicited,
    /// Closed: the head's framing was ambiguous (`Head::ambiguous`).
    Ambiguous,
}

/// How a body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body (1xx, 204, 304).
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// Chunked transfer coding, up to the last chunk and trailers.
    Chunked,
    /// At the close of the connection.
    Close,
}

/// A connection and what it has read ahead.
pub struct Connection {
    stream: Stream,
    /// The address requests on it go to (WARC-IP-Address); `None` when a proxy resolved it.
    pub ip: Option<IpAddr>,
    /// Bytes read and not yet used: `buf[pos..end]`. Empty while the connection is idle
    /// (`park`): the buffer goes back to the thread's spare, so an idle connection holds
    /// none and a busy one takes the spare without allocating.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// The socket's read timeout as last set.
    read_timeout: Option<Duration>,
    /// Responses read whole on it: a reused connection has at least one.
    pub answered: u32,
    /// The current request has had at least one byte of response.
    heard: bool,
    /// Non-blocking (`fetch::reactor`): a read that finds no byte ends the parse with
    /// `Fail::pending`, and `rollback` returns to `mark` to parse again when more came.
    nonblocking: bool,
    /// Where the response being parsed starts in `buf`, and `answered` then: the bytes from
    /// here are kept until the parse completes (`begin_attempt`).
    mark: Option<(usize, u32)>,
    /// Bytes the parse needs at least before its next step (`Fail::pending`'s `short`).
    wanting: usize,
    /// The end of the stream, or its error, met by `read_more` and not yet seen by the parse.
    ended: Option<io::Result<usize>>,
    /// When the last request was written, and when the last bytes read since arrived (the
    /// kernel's stamp): the response time of a non-blocking connection, whose thread reads
    /// for many (`round_trip`).
    sent_at: Option<SystemTime>,
    arrived: Option<SystemTime>,
    /// The current request's `LowSpeed`, and its span: when it began (the response's first
    /// byte, then each span's end) and the bytes come since.
    low_speed: LowSpeed,
    span: Option<(Instant, u64)>,
}

impl Connection {
    /// A connection over `stream`, whose socket's read timeout is `read_timeout`.
    pub fn new(stream: Stream, ip: Option<IpAddr>, read_timeout: Option<Duration>) -> Connection {
        Connection {
            stream,
            ip,
            buf: Vec::new(),
            pos: 0,
            end: 0,
            read_timeout,
            answered: 0,
            heard: false,
            nonblocking: false,
            mark: None,
            wanting: 1,
            ended: None,
            sent_at: None,
            arrived: None,
            low_speed: LowSpeed::OFF,
            span: None,
        }
    }

    /// Makes the socket non-blocking for the reactor (`fetch::reactor`): the parse then ends
    /// with `Fail::pending` where it would wait.
    pub fn set_nonblocking(&mut self) -> io::Result<()> {
        if !self.nonblocking {
            if let Some(tcp) = self.stream.tcp() {
                tcp.set_nonblocking(true)?;
            }
            self.nonblocking = true;
        }
        Ok(())
    }

    /// Makes a connection the reactor kept blocking again, for a thread that blocks (the idle
    /// pool is one for both): its read timeout is set again at the next read.
    pub fn set_blocking(&mut self) -> io::Result<()> {
        if self.nonblocking {
            if let Some(tcp) = self.stream.tcp() {
                tcp.set_nonblocking(false)?;
                let wait = Some(PER_READ);
                tcp.set_write_timeout(wait)?;
            }
            (self.nonblocking, self.read_timeout) = (false, None);
        }
        Ok(())
    }

    /// The socket's descriptor, for the reactor's poll; none in memory.
    pub fn fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.stream.tcp().map(|tcp| tcp.as_raw_fd())
    }

    /// From the last request written to the arrival of the last bytes read since, by the
    /// kernel's stamp, if the socket stamps arrivals: the non-blocking path's response time.
    pub fn round_trip(&self) -> Option<Duration> {
        self.arrived?.duration_since(self.sent_at?).ok()
    }

    /// When the last bytes read arrived, by the kernel's stamp, on the monotonic clock: the
    /// instant a host's rest counts from (`Response::answered`). An event loop busy with other
    /// connections reads an answer late; by then the host has rested that long already.
    pub fn arrived_at(&self) -> Option<Instant> {
        let ago = SystemTime::now().duration_since(self.arrived?).ok()?;
        Instant::now().checked_sub(ago)
    }

    /// Starts a parse of the response from the bytes held: `rollback` returns here.
    pub fn begin_attempt(&mut self) {
        self.mark = Some((self.pos, self.answered));
    }

    /// The parse ended pending: every byte it consumed is unread again, for the next attempt.
    pub fn rollback(&mut self) {
        if let Some((mark, answered)) = self.mark.take() {
            (self.pos, self.answered) = (mark, answered);
        }
    }

    /// The parse ended (a response or a failure): the bytes before `pos` may go.
    pub fn end_attempt(&mut self) {
        self.mark = None;
    }

    /// Reads what a non-blocking socket holds, at most `want` bytes (more if one read brings
    /// them), without parsing: bytes received, and whether the stream ended (its end, or its
    /// error, is kept for the parse to meet where it would have). Room for what is wanted is
    /// made as in `buffer_whole` (`make_room`), so a large rest of a body comes in large reads.
    pub fn read_more(&mut self, want: usize) -> (usize, bool) {
        let mut got = 0;
        while got < want && self.ended.is_none() {
            if !self.buf.is_empty() {
                self.make_room(want - got);
            }
            match self.fill(Instant::now() + PER_READ) {
                Ok(0) => return (got, true),
                Ok(n) => got += n,
                Err(_) => break,
            }
        }
        (got, self.ended.is_some())
    }

    /// Sends a request head (a GET has no body); its response must come at `low_speed` at
    /// least.
    pub fn send(&mut self, head: &[u8], low_speed: LowSpeed) -> Result<(), Fail> {
        self.heard = false;
        (self.low_speed, self.span) = (low_speed, None);
        // Noted before the write: a thread preempted after it would note a later instant
        // than the server's, and a response time shorter than the server's.
        LAST_ARRIVAL.set(None);
        let now = SystemTime::now();
        LAST_SENT.set(Some(now));
        (self.sent_at, self.arrived) = (Some(now), None);
        let sent = match (&mut self.stream, self.nonblocking) {
            // Non-blocking TLS: the head is sealed whole into rustls (no limit on what it
            // holds, so it always fits), and what the socket does not take now waits for it
            // to be writable (`flush_tls`).
            (Stream::Tls(tls), true) => {
                tls.conn.set_buffer_limit(None);
                (tls.conn.writer().write_all(head)).and_then(|()| write_tls_now(tls))
            }
            (stream, _) => stream.write_all(head).and_then(|()| stream.flush()),
        };
        sent.map_err(|e| self.stale(Fail::io(&e, "sending the request")))
    }

    /// Under TLS, the TLS handshake as far as it goes now (`drive_handshake`, non-blocking).
    pub fn handshake(&mut self) -> Result<Handshake, Fail> {
        match &mut self.stream {
            Stream::Tls(tls) => drive_handshake(&mut tls.conn, &mut tls.sock, self.nonblocking),
            _ => Ok(Handshake::Done),
        }
    }

    /// Under TLS, whether its handshake resumed a session; None on plain TCP.
    pub fn tls_resumed(&self) -> Option<bool> {
        match &self.stream {
            Stream::Tls(tls) => Some(tls.conn.handshake_kind() == Some(HandshakeKind::Resumed)),
            _ => None,
        }
    }

    /// Whether TLS records wait for the socket to take them (the reactor then waits for it
    /// to be writable as well as readable).
    pub fn wants_write(&self) -> bool {
        matches!(&self.stream, Stream::Tls(tls) if tls.conn.wants_write())
    }

    /// Writes the TLS records waiting (`wants_write`) as far as the socket takes them now.
    pub fn flush_tls(&mut self) -> Result<(), Fail> {
        match &mut self.stream {
            Stream::Tls(tls) => {
                write_tls_now(tls).map_err(|e| self.stale(Fail::io(&e, "sending the request")))
            }
            _ => Ok(()),
        }
    }

    /// Marks `fail` stale when nothing of the response came on a reused connection.
    fn stale(&self, mut fail: Fail) -> Fail {
        fail.stale = self.answered > 0 && !self.heard && fail.kind != ErrorKind::Timeout;
        fail
    }

    /// Reads more bytes into the buffer; `Ok(0)` at the end of the stream.
    fn fill(&mut self, deadline: Instant) -> Result<usize, Fail> {
        if self.buf.is_empty() {
            self.buf = SPARE.take();
            if self.buf.len() < READ_CHUNK {
                self.buf = vec![0; READ_CHUNK];
            }
        }
        if self.pos == self.end && self.mark.is_none() {
            (self.pos, self.end) = (0, 0);
        } else if self.end + READ_CHUNK / 4 > self.buf.len() {
            // Little room left: move what is unread (or kept from the mark) to the front, or
            // grow (the callers bound how much is kept unread: a head, a line; a
            // non-blocking parse keeps its response, up to the body's cap).
            self.compact();
            if self.end + READ_CHUNK / 4 > self.buf.len() {
                self.buf.resize(self.buf.len() + READ_CHUNK, 0);
            }
        }
        let end = self.end;
        if self.nonblocking {
            return self.fill_nonblocking(deadline);
        }
        let began = Instant::now();
        let result = loop {
            let Some(left) = deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
            else {
                break Err(Fail::new(
                    ErrorKind::Timeout,
                    "the request took longer than --timeout",
                ));
            };
            let Some(per_read) = PER_READ
                .checked_sub(began.elapsed())
                .filter(|d| !d.is_zero())
            else {
                break Err(Fail::new(
                    ErrorKind::Timeout,
                    format!("no byte for {PER_READ:?}"),
                ));
            };
            let want = left.min(per_read).max(Duration::from_millis(1));
            // Set only when the socket's would overshoot by more than `SLACK`: once per
            // connection in the common case, not once per read.
            if self.read_timeout.is_none_or(|t| t > want + SLACK) {
                let set = self
                    .stream
                    .tcp()
                    .map(|tcp| tcp.set_read_timeout(Some(want)));
                if let Some(Err(e)) = set {
                    break Err(Fail::io(&e, "setting the read timeout"));
                }
                self.read_timeout = Some(want);
            }
            match self.stream.read(&mut self.buf[end..]) {
                Ok(n) => break Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Timed out early (a shorter timeout set for an earlier request), or really:
                // the checks above tell, with the timeout set again from what is left.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    self.read_timeout = None;
                }
                Err(e) => break Err(Fail::io(&e, "reading the response")),
            }
        };
        match result {
            Ok(n) => {
                self.end = end + n;
                if n > 0 {
                    self.heard = true;
                    self.pace(n)?;
                }
                Ok(n)
            }
            Err(fail) => Err(self.stale(fail)),
        }
    }

    /// Counts `n` bytes come now against the request's `LowSpeed`: a span that ended with
    /// fewer than its rate a second fails the request (`timeout`), else the next span begins.
    fn pace(&mut self, n: usize) -> Result<(), Fail> {
        if self.low_speed.is_off() {
            return Ok(());
        }
        let now = Instant::now();
        let (since, bytes) = self.span.get_or_insert((now, 0));
        *bytes += n as u64;
        let span = now.duration_since(*since);
        if span < self.low_speed.time {
            return Ok(());
        }
        let rate = *bytes as f64 / span.as_secs_f64();
        if rate < self.low_speed.bytes_per_sec as f64 {
            return Err(Fail::new(
                ErrorKind::Timeout,
                format!(
                    "the response came at {rate:.0} bytes/s over {:.1} s, slower than \
                     --low-speed-limit {} bytes/s",
                    span.as_secs_f64(),
                    self.low_speed.bytes_per_sec
                ),
            ));
        }
        self.span = Some((now, 0));
        Ok(())
    }

    /// `fill` on a non-blocking socket: one read, or `Fail::pending` when it has nothing.
    fn fill_nonblocking(&mut self, deadline: Instant) -> Result<usize, Fail> {
        let wanting = std::mem::replace(&mut self.wanting, 1);
        if Instant::now() >= deadline {
            let fail = Fail::new(ErrorKind::Timeout, "the request took longer than --timeout");
            return Err(self.stale(fail));
        }
        let end = self.end;
        let read = match self.ended.take() {
            Some(ended) => ended,
            None => {
                LAST_ARRIVAL.set(None);
                loop {
                    match self.stream.read_now(&mut self.buf[end..]) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        read => break read,
                    }
                }
            }
        };
        match read {
            Ok(n) => {
                if let Some(arrived) = LAST_ARRIVAL.take() {
                    self.arrived = Some(arrived);
                }
                self.end = end + n;
                if n > 0 {
                    self.heard = true;
                    if let Err(fail) = self.pace(n) {
                        // Met by `read_more` too: the parse that follows fails with it.
                        let e = io::Error::new(io::ErrorKind::TimedOut, fail.message.clone());
                        self.ended = Some(Err(e));
                        return Err(fail);
                    }
                } else if self.mark.is_none() {
                    // Met by `read_more`: met again by the parse that follows.
                    self.ended = Some(Ok(0));
                }
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(Fail::pending(wanting)),
            Err(e) => {
                let fail = self.stale(Fail::io(&e, "reading the response"));
                if self.mark.is_none() {
                    self.ended = Some(Err(e));
                }
                Err(fail)
            }
        }
    }

    /// What the connection, idle since its last response, holds, seen without blocking: it
    /// carries a request only when `Quiet`. Bytes the server sent unasked would be read as
    /// the next response, and a closed one would fail the request. Plain TCP costs one
    /// `recv(MSG_PEEK)`. Under TLS, bytes on the socket may be records that carry no data
    /// (TLS 1.3 session tickets): they are read and decrypted without blocking, and only
    /// data or a close counts; plaintext rustls holds unread counts too.
    pub fn idle_state(&mut self) -> Idle {
        if self.pos != self.end {
            return Idle::Bytes;
        }
        let nonblocking = self.nonblocking;
        let tls = match &mut self.stream {
            Stream::Tcp(tcp) => return crate::sys::peek_idle(tcp),
            Stream::Memory(bytes) => {
                return match bytes.position() < bytes.get_ref().len() as u64 {
                    true => Idle::Bytes,
                    false => Idle::Closed,
                };
            }
            Stream::Tls(tls) => tls,
        };
        let held = |state: Result<rustls::IoState, rustls::Error>| match state {
            Ok(state) if state.plaintext_bytes_to_read() > 0 => Some(Idle::Bytes),
            Ok(state) if state.peer_has_closed() => Some(Idle::Closed),
            Ok(_) => None,
            Err(_) => Some(Idle::Closed),
        };
        if let Some(seen) = held(tls.conn.process_new_packets()) {
            return seen;
        }
        let Some(tcp) = tls.sock.tcp() else {
            return Idle::Bytes;
        };
        match crate::sys::peek_idle(tcp) {
            Idle::Bytes => {}
            seen => return seen,
        }
        // TLS inside a proxy's TLS tunnel: its records cannot be read without blocking here.
        if !matches!(tls.sock, Stream::Tcp(_)) || tcp.set_nonblocking(true).is_err() {
            return Idle::Bytes;
        }
        // The socket goes back to the mode it had: the reactor's stay non-blocking.
        // A few records at most: a server that keeps sending is not quiet.
        let mut seen = Idle::Bytes;
        for _ in 0..4 {
            match tls.conn.read_tls(&mut tls.sock) {
                Ok(0) => seen = Idle::Closed,
                Ok(_) => match held(tls.conn.process_new_packets()) {
                    Some(held) => seen = held,
                    None => continue,
                },
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => seen = Idle::Quiet,
                Err(_) => seen = Idle::Closed,
            }
            break;
        }
        match tls.sock.tcp().map(|tcp| tcp.set_nonblocking(nonblocking)) {
            Some(Ok(())) => seen,
            _ => Idle::Closed,
        }
    }

    /// Gives the read buffer back to the thread's spare while the connection is idle (it
    /// holds no unread byte: `read_body` reuses a connection only then).
    pub fn park(&mut self) {
        if self.pos == self.end {
            SPARE.set(std::mem::take(&mut self.buf));
            (self.pos, self.end) = (0, 0);
        }
    }

    /// Reads the response head (interim 1xx heads but 101 skipped), at most `MAX_HEAD` bytes
    /// each. A status outside 100–599 is a `protocol` error. On a reused connection, a first
    /// head that is not HTTP is marked `stale` like a close: the bytes may have been left by
    /// the server on the idle connection, and the request is worth one more try on a fresh one.
    pub fn read_head(&mut self, deadline: Instant) -> Result<Head, Fail> {
        let mut first = true;
        loop {
            let head = self
                .read_one_head(deadline)
                .and_then(|head| match (100..=599).contains(&head.status) {
                    true => Ok(head),
                    false => Err(Fail::new(
                        ErrorKind::Protocol,
                        format!("status {} is outside 100-599", head.status),
                    )),
                })
                .map_err(|mut fail| {
                    if first && fail.kind == ErrorKind::Protocol {
                        fail.stale = self.answered > 0;
                    }
                    fail
                })?;
            first = false;
            if !(100..200).contains(&head.status) || head.status == 101 {
                return Ok(head);
            }
        }
    }

    fn read_one_head(&mut self, deadline: Instant) -> Result<Head, Fail> {
        // Where to look for the blank line that ends the head.
        let mut scanned: usize = 0;
        loop {
            let data = &self.buf[self.pos..self.end];
            let from = scanned.saturating_sub(3);
            if has_blank_line(&data[from..]) {
                let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
                let mut response = httparse::Response::new(&mut headers);
                let parsed = httparse::ParserConfig::default()
                    .allow_spaces_after_header_name_in_responses(true)
                    .allow_obsolete_multiline_headers_in_responses(true)
                    .allow_multiple_spaces_in_response_status_delimiters(true)
                    .parse_response(&mut response, data);
                match parsed {
                    Ok(httparse::Status::Complete(n)) => {
                        let head = Head {
                            status: response.code.unwrap_or(0),
                            minor: response.version.unwrap_or(0),
                            headers: {
                                let all = response.headers.iter();
                                let bytes = all.map(|h| h.name.len() + h.value.len()).sum();
                                let mut headers =
                                    Headers::with_capacity(response.headers.len(), bytes);
                                for h in response.headers.iter() {
                                    headers.push(h.name, &String::from_utf8_lossy(h.value));
                                }
                                headers
                            },
                            raw: data[..n].to_vec(),
                        };
                        if n > MAX_HEAD {
                            return Err(too_large());
                        }
                        self.pos += n;
                        return Ok(head);
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(httparse::Error::TooManyHeaders) => return Err(too_large()),
                    Err(e) => {
                        return Err(Fail::new(
                            ErrorKind::Protocol,
                            format!("not an HTTP response: {e}"),
                        ));
                    }
                }
            }
            scanned = data.len();
            if scanned > MAX_HEAD {
                return Err(too_large());
            }
            if self.fill(deadline)? == 0 {
                let fail = match scanned {
                    0 => Fail::new(
                        ErrorKind::Closed,
                        "the server closed the connection without answering",
                    ),
                    _ => Fail::new(
                        ErrorKind::Closed,
                        "the server closed the connection inside the head",
                    ),
                };
                return Err(self.stale(fail));
            }
        }
    }

    /// Reads the body into `body`, up to `cap` + 1 bytes (one more than the cap tells a cut
    /// body from one exactly as long). Returns whether the connection can be reused.
    pub fn read_body(
        &mut self,
        head: &Head,
        framing: Framing,
        cap: u64,
        deadline: Instant,
        body: &mut Vec<u8>,
    ) -> Result<After, Fail> {
        let limit = cap.saturating_add(1);
        let whole = match framing {
            Framing::Empty => true,
            Framing::Length(n) => {
                let want = n.min(limit);
                if self.nonblocking {
                    self.buffer_whole(want, deadline)?;
                }
                // Room for the whole body at once (it is capped): no copy of a half-read body
                // into a larger buffer. Bounded again so that a lying length costs no more
                // than a few pages a worker may read in a row.
                body.reserve(usize::try_from(want).unwrap_or(usize::MAX).min(MAX_RESERVE));
                while (body.len() as u64) < want {
                    self.wanting = short_of(want, body);
                    if self.pos == self.end && self.fill(deadline)? == 0 {
                        return Err(Fail::new(
                            ErrorKind::Closed,
                            format!("the body ended at {} of {n} bytes", body.len()),
                        ));
                    }
                    self.take(body, want);
                }
                want == n
            }
            Framing::Close => {
                while (body.len() as u64) < limit {
                    if self.pos == self.end {
                        self.wanting = short_of(limit, body);
                        match self.fill(deadline) {
                            Ok(0) => break,
                            // TLS without close_notify: the end of the body all the same.
                            Err(f) if f.kind == ErrorKind::Closed => break,
                            Err(f) => return Err(f),
                            Ok(_) => {}
                        }
                    }
                    self.take(body, limit);
                }
                false
            }
            Framing::Chunked => self.read_chunked(limit, deadline, body)?,
        };
        self.answered += 1;
        Ok(if head.ambiguous().is_some() {
            After::Ambiguous
        } else if !whole || !head.keeps_alive() {
            After::Close
        } else if self.pos != self.end {
            After::Unsolicited
        } else {
            After::Reuse
        })
    }

    /// On a non-blocking connection, reads until the next `want` bytes (a body of known length)
    /// are all buffered, before any is moved into the body: a parse that ends pending is rolled
    /// back and run again (`Fail::pending`), so a body moved in part was copied (and its
    /// buffer allocated) twice. The buffer's room doubles when it runs short (`make_room`; it
    /// grew by `READ_CHUNK` before: a large body took many small reads). The end of the stream
    /// comes back as `Ok`: the caller's loop reports the short body.
    fn buffer_whole(&mut self, want: u64, deadline: Instant) -> Result<(), Fail> {
        let want = usize::try_from(want).unwrap_or(usize::MAX);
        loop {
            let buffered = self.end - self.pos;
            if buffered >= want {
                return Ok(());
            }
            self.wanting = want - buffered;
            self.make_room(self.wanting);
            if self.fill(deadline)? == 0 {
                return Ok(());
            }
        }
    }

    /// Room for reads of the `wanted` bytes still to come, made once the room left is under
    /// both them and `READ_CHUNK / 4` (`fill`'s own rule): what is unread (or kept from the
    /// mark) moved to the front, then room for as many bytes as are kept (at least
    /// `READ_CHUNK`, at most `wanted`). The buffer so at most doubles when it grows, and only
    /// once nearly full: at most about twice what came plus `READ_CHUNK`, in a few
    /// reallocations, however the server trickles its bytes or whatever length it claims.
    fn make_room(&mut self, wanted: usize) {
        if self.buf.len() - self.end >= wanted.min(READ_CHUNK / 4) {
            return;
        }
        self.compact();
        let n = wanted.min(self.end.max(READ_CHUNK));
        if self.buf.len() - self.end < n {
            self.buf.resize(self.end + n, 0);
        }
    }

    /// Moves what is unread (or kept from the mark) to the front of the buffer.
    fn compact(&mut self) {
        let from = self.mark.map_or(self.pos, |(mark, _)| mark);
        if from == 0 {
            return;
        }
        self.buf.copy_within(from..self.end, 0);
        (self.pos, self.end) = (self.pos - from, self.end - from);
        if let Some((mark, _)) = &mut self.mark {
            *mark = 0;
        }
    }

    /// Moves buffered bytes into `body`, up to `limit` bytes of body in all.
    fn take(&mut self, body: &mut Vec<u8>, limit: u64) {
        let room = limit.saturating_sub(body.len() as u64);
        let n = (self.end - self.pos).min(usize::try_from(room).unwrap_or(usize::MAX));
        body.extend_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
    }

    /// A chunked body (RFC 9112 §7.1); true when read to its end (trailers included).
    fn read_chunked(
        &mut self,
        limit: u64,
        deadline: Instant,
        body: &mut Vec<u8>,
    ) -> Result<bool, Fail> {
        loop {
            let line = self.line(deadline)?;
            let size = chunk_size(&line).ok_or_else(|| {
                let line = String::from_utf8_lossy(&line);
                Fail::new(ErrorKind::Protocol, format!("bad chunk size line {line:?}"))
            })?;
            if size == 0 {
                let mut trailers = 0;
                while !self.line(deadline)?.is_empty() {
                    trailers += 1;
                    if trailers > MAX_HEADERS {
                        return Err(too_large());
                    }
                }
                return Ok(true);
            }
            let end = (body.len() as u64).saturating_add(size);
            let want = end.min(limit);
            while (body.len() as u64) < want {
                self.wanting = short_of(want, body);
                if self.pos == self.end && self.fill(deadline)? == 0 {
                    return Err(Fail::new(
                        ErrorKind::Closed,
                        "the body ended inside a chunk",
                    ));
                }
                self.take(body, want);
            }
            if want < end {
                return Ok(false);
            }
            if !self.line(deadline)?.is_empty() {
                return Err(Fail::new(
                    ErrorKind::Protocol,
                    "a chunk longer than its size",
                ));
            }
        }
    }

    /// The next line (without CRLF or LF), at most `MAX_LINE` bytes.
    fn line(&mut self, deadline: Instant) -> Result<Vec<u8>, Fail> {
        let mut scanned: usize = 0;
        loop {
            let data = &self.buf[self.pos..self.end];
            if let Some(at) = data[scanned..].iter().position(|&b| b == b'\n') {
                let at = scanned + at;
                let line = data[..at]
                    .strip_suffix(b"\r")
                    .unwrap_or(&data[..at])
                    .to_vec();
                self.pos += at + 1;
                return Ok(line);
            }
            scanned = data.len();
            if scanned > MAX_LINE {
                return Err(Fail::new(ErrorKind::Protocol, "a chunk line too long"));
            }
            if self.fill(deadline)? == 0 {
                return Err(Fail::new(
                    ErrorKind::Closed,
                    "the body ended inside a chunk line",
                ));
            }
        }
    }
}

/// Reads one response from `bytes` as a connection would (the head, interim 1xx heads skipped,
/// its framing, the body up to `cap` + 1 bytes), and whether the connection would be kept after
/// it: the response parser alone, for the fuzz target (`fuzz/fuzz_targets/response.rs`).
pub fn read_response(bytes: Vec<u8>, cap: u64) -> Result<(Head, Vec<u8>, After), Fail> {
    let mut conn = Connection::new(Stream::Memory(io::Cursor::new(bytes)), None, None);
    let deadline = Instant::now() + PER_READ;
    let head = conn.read_head(deadline)?;
    let framing = head.framing()?;
    let mut body = Vec::new();
    let after = conn.read_body(&head, framing, cap, deadline, &mut body)?;
    Ok((head, body, after))
}

/// The size of a chunk-size line (RFC 9112 §7.1: `1*HEXDIG`, then optional whitespace and
/// `;` extensions); `None` for anything else (`+5`, ` 5`, `0x5`, empty, over 64 bits).
fn chunk_size(line: &[u8]) -> Option<u64> {
    let end = line.iter().position(|&b| b == b';').unwrap_or(line.len());
    let digits = line[..end].trim_ascii_end();
    let digits = std::str::from_utf8(digits).ok()?;
    match !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        true => u64::from_str_radix(digits, 16).ok(),
        false => None,
    }
}

/// Bytes `body` lacks to reach `want`, for `Connection::wanting`.
fn short_of(want: u64, body: &[u8]) -> usize {
    usize::try_from(want.saturating_sub(body.len() as u64)).unwrap_or(usize::MAX)
}

/// Whether `text` is `1*DIGIT`.
fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

fn too_large() -> Fail {
    Fail::new(
        ErrorKind::TooLarge,
        format!("the response head is over {MAX_HEAD} bytes or {MAX_HEADERS} headers"),
    )
}

/// Whether `data` holds the end of a head: an empty line (CRLF CRLF, or LF LF).
fn has_blank_line(data: &[u8]) -> bool {
    data.windows(2)
        .enumerate()
        .any(|(i, w)| w == b"\n\n" || (w == b"\n\r" && data.get(i + 2) == Some(&b'\n')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A connection to a loopback server that writes `response` and closes.
    fn answered_by(response: &'static [u8]) -> (Connection, std::thread::JoinHandle<()>) {
        let (tcp, server) = answered_after(response, |_| ());
        let ip = tcp.peer_addr().unwrap().ip();
        (Connection::new(Stream::Tcp(tcp), Some(ip), None), server)
    }

    /// A socket to a loopback server that writes `response` and closes, once `ready` has
    /// been done with the socket (before any byte of it can arrive).
    fn answered_after(
        response: &'static [u8],
        ready: impl FnOnce(&TcpStream),
    ) -> (TcpStream, std::thread::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (go, told) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let _ = told.recv();
            socket.write_all(response).unwrap();
        });
        let tcp = TcpStream::connect(addr).unwrap();
        ready(&tcp);
        drop(go);
        (tcp, server)
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    /// A response's arrival is the kernel's stamp of its bytes, not the read that took them:
    /// a loop that reads late (busy with other sockets) does not move the host's rest.
    ///
    /// Linux turns receive stamps on for the whole machine a moment after the first socket asks
    /// (`net_enable_timestamp` defers it to a work queue): on a machine where no socket has
    /// asked yet, the first packets arrive unstamped, and the client then falls back to its read.
    /// So one socket keeps stamping wanted, and exchanges are tried until one is stamped, with a
    /// deadline; every stamped one must fall between the request and the peek that saw its bytes.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_arrival_is_the_kernels_stamp_not_the_read() {
        let keeper = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        crate::sys::stamp_arrivals(&keeper);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let before = Instant::now();
            // Stamping asked for before the server may write: no byte arrives unstamped
            // once the machine stamps at all.
            let (tcp, server) = answered_after(
                b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
                crate::sys::stamp_arrivals,
            );
            // Blocks until the bytes are in the kernel's buffer (a peek takes no stamp).
            tcp.peek(&mut [0u8; 1]).unwrap();
            let there = Instant::now();
            let ip = tcp.peer_addr().unwrap().ip();
            let mut conn = Connection::new(Stream::Tcp(tcp), Some(ip), None);
            // As the event loop reads: non-blocking, what the socket holds.
            conn.set_nonblocking().unwrap();
            let read_from = Instant::now();
            assert!(conn.read_more(64).0 > 0);
            server.join().unwrap();
            // `arrived_at` reads the wall clock, then the monotonic one: a thread preempted
            // between the two (a loaded machine) puts the arrival that much later, at most the
            // time the call took.
            let asked = Instant::now();
            let arrival = conn.arrived_at();
            let slack = asked.elapsed();
            let Some(arrived) = arrival else {
                assert!(
                    Instant::now() < deadline,
                    "no arrival stamped in 10 s of tries"
                );
                continue;
            };
            assert!(
                before <= arrived && arrived <= there + slack,
                "{arrived:?} not in {before:?}..={there:?} (+{slack:?})"
            );
            assert!(arrived < read_from + slack);
            break;
        }
        drop(keeper);
    }

    /// As the event loop parses: a body that came in part leaves the parse pending, short of
    /// exactly what has not come (`buffer_whole`); once the rest came (`read_more`, into room
    /// that doubles), the parse from the start takes the whole body as sent.
    #[test]
    fn a_body_that_came_in_part_is_taken_whole_once_it_all_came() {
        const LEN: usize = 300_000;
        let body: Vec<u8> = (0..LEN).map(|i| b'a' + (i % 26) as u8).collect();
        let mut first = format!("HTTP/1.1 200 OK\r\nContent-Length: {LEN}\r\n\r\n").into_bytes();
        let head_len = first.len();
        first.extend_from_slice(&body[..LEN / 3]);
        let rest = body[LEN / 3..].to_vec();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (go, told) = std::sync::mpsc::channel::<()>();
        let (sent, written) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            socket.write_all(&first).unwrap();
            sent.send(()).unwrap();
            let _ = told.recv();
            socket.write_all(&rest).unwrap();
        });
        let tcp = TcpStream::connect(addr).unwrap();
        let ip = tcp.peer_addr().unwrap().ip();
        let mut conn = Connection::new(Stream::Tcp(tcp), Some(ip), None);
        conn.set_nonblocking().unwrap();
        written.recv().unwrap();
        let parse = |conn: &mut Connection| {
            conn.begin_attempt();
            let head = conn.read_head(soon())?;
            let mut got = Vec::new();
            conn.read_body(&head, head.framing()?, u64::MAX - 1, soon(), &mut got)
                .map(|_| got)
        };
        // The first part is in the socket: read until the parse is past the head.
        let mut short = 1;
        let pending = loop {
            conn.read_more(short);
            match parse(&mut conn) {
                Err(Fail {
                    pending: Some(n), ..
                }) if conn.end - conn.mark.unwrap().0 > head_len => {
                    break n;
                }
                Err(Fail {
                    pending: Some(n), ..
                }) => short = n,
                other => panic!("{:?}", other.map(|b| b.len())),
            }
            conn.rollback();
        };
        let buffered = conn.end - conn.mark.unwrap().0 - head_len;
        assert_eq!(pending, LEN - buffered, "short of what has not come");
        conn.rollback();
        drop(go);
        let mut short = pending;
        let got = loop {
            let (n, ended) = conn.read_more(short);
            assert!(!ended, "the stream stays open");
            short -= n.min(short);
            if short > 0 {
                continue;
            }
            match parse(&mut conn) {
                Ok(got) => break got,
                Err(Fail {
                    pending: Some(n), ..
                }) => short = n,
                Err(fail) => panic!("{fail:?}"),
            }
            conn.rollback();
        };
        conn.end_attempt();
        assert!(got == body, "the body as sent");
        server.join().unwrap();
    }

    /// A server that claims a long body and trickles it a byte at a time: the buffer the
    /// event loop keeps it in grows only when nearly full, to at most about twice what came
    /// (`make_room`), not by the claimed length nor on every read.
    #[test]
    fn a_trickled_body_grows_the_buffer_by_what_came_not_by_each_read() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (more, asked) = std::sync::mpsc::channel::<bool>();
        let (sent, written) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            socket
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n")
                .unwrap();
            sent.send(()).unwrap();
            while asked.recv() == Ok(true) {
                socket.write_all(b"x").unwrap();
                sent.send(()).unwrap();
            }
        });
        let tcp = TcpStream::connect(addr).unwrap();
        let ip = tcp.peer_addr().unwrap().ip();
        let mut conn = Connection::new(Stream::Tcp(tcp), Some(ip), None);
        conn.set_nonblocking().unwrap();
        written.recv().unwrap();
        let mut grown = 0;
        let mut last_len = 0;
        for _ in 0..2 * READ_CHUNK {
            let mut got = 0;
            while got == 0 {
                got = conn.read_more(usize::MAX).0;
            }
            conn.begin_attempt();
            let head = conn.read_head(soon()).unwrap();
            let mut body = Vec::new();
            let framing = head.framing().unwrap();
            let parsed = conn.read_body(&head, framing, u64::MAX - 1, soon(), &mut body);
            assert!(matches!(
                parsed,
                Err(Fail {
                    pending: Some(_),
                    ..
                })
            ));
            assert!(
                body.is_empty(),
                "nothing moved into a body before all of it came"
            );
            conn.rollback();
            let held = conn.end - conn.pos;
            assert!(
                conn.buf.len() <= 2 * held + 2 * READ_CHUNK,
                "{} for {held}",
                conn.buf.len()
            );
            grown += usize::from(conn.buf.len() != last_len);
            last_len = conn.buf.len();
            more.send(true).unwrap();
            written.recv().unwrap();
        }
        assert!(grown <= 8, "grown {grown} times");
        more.send(false).unwrap();
        server.join().unwrap();
    }

    /// Reads one response from a server that writes `response` and closes.
    fn read(response: &'static [u8], cap: u64) -> Result<(Head, Vec<u8>, After), Fail> {
        within(move || {
            let (mut conn, server) = answered_by(response);
            let head = conn.read_head(soon())?;
            let mut body = Vec::new();
            let framing = head.framing()?;
            let reuse = conn.read_body(&head, framing, cap, soon(), &mut body)?;
            server.join().unwrap();
            Ok((head, body, reuse))
        })
    }

    /// Runs `read` on a thread and waits for it a while: a read that loops without end (no
    /// byte taken, no fill) fails the test instead of hanging it.
    fn within<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
        const WAIT: Duration = Duration::from_secs(10);
        let (done, answer) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let _ = done.send(read());
        });
        match answer.recv_timeout(WAIT) {
            Ok(answer) => answer,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::panic::resume_unwind(reader.join().expect_err("it panicked"))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("the read did not return within {WAIT:?}")
            }
        }
    }

    /// The head and body `conn` reads with `framing` (the head's own when `None`), and what
    /// becomes of the connection.
    fn read_on(
        mut conn: Connection,
        framing: Option<Framing>,
        cap: u64,
        deadline: Instant,
    ) -> Result<(Head, Vec<u8>, After), Fail> {
        let head = conn.read_head(deadline)?;
        let framing = match framing {
            Some(framing) => framing,
            None => head.framing()?,
        };
        let mut body = Vec::new();
        let after = conn.read_body(&head, framing, cap, deadline, &mut body)?;
        Ok((head, body, after))
    }

    #[test]
    fn chunked_bodies_are_unframed_with_extensions_and_trailers() {
        let (head, body, reuse) = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
              5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n",
            100,
        )
        .unwrap();
        assert_eq!(head.framing().unwrap(), Framing::Chunked);
        assert_eq!(body, b"hello, world");
        assert_eq!(reuse, After::Reuse, "read to its end, HTTP/1.1: reusable");
        // Cut at the cap: one byte over it is read, the connection is not reused.
        let (_, body, reuse) = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            3,
        )
        .unwrap();
        assert_eq!((body.as_slice(), reuse), (&b"hell"[..], After::Close));
        let bad = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n",
            100,
        );
        assert_eq!(bad.err().map(|f| f.kind), Some(ErrorKind::Protocol));
        let short = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nhello",
            100,
        );
        assert_eq!(short.err().map(|f| f.kind), Some(ErrorKind::Closed));
    }

    #[test]
    fn lengths_closes_and_interim_heads() {
        let (head, body, reuse) = read(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            100,
        )
        .unwrap();
        assert_eq!(
            (head.status, body.as_slice(), reuse),
            (200, &b"hello"[..], After::Reuse)
        );
        assert_eq!(head.raw, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
        let (_, _, reuse) = read(
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: Close\r\n\r\n",
            100,
        )
        .unwrap();
        assert_eq!(reuse, After::Close, "Connection: close is honoured");
        let (head, body, reuse) = read(b"HTTP/1.0 200 OK\nServer: old\n\nto the end", 100).unwrap();
        assert_eq!(head.framing().unwrap(), Framing::Close);
        assert_eq!((body.as_slice(), reuse), (&b"to the end"[..], After::Close));
        let short = read(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhello", 100);
        assert_eq!(short.err().map(|f| f.kind), Some(ErrorKind::Closed));
        let conflicting = read(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
            100,
        );
        assert_eq!(conflicting.err().map(|f| f.kind), Some(ErrorKind::Protocol));
        let garbage = read(b"SSH-2.0-OpenSSH\r\n\r\n", 100);
        assert_eq!(garbage.err().map(|f| f.kind), Some(ErrorKind::Protocol));
    }

    #[test]
    fn headers_keep_order_names_and_trimmed_values() {
        let (head, _, _) = read(
            b"HTTP/1.1 200 OK\r\nX-A:  one \r\nset-cookie: a=1\r\nX-Bin: \xff\r\n\
              Set-Cookie: b=2\r\nContent-Length: 0\r\n\r\n",
            100,
        )
        .unwrap();
        let all: Vec<_> = head.headers.iter().collect();
        assert_eq!(
            all,
            [
                ("X-A", "one"),
                ("set-cookie", "a=1"),
                ("X-Bin", "\u{fffd}"),
                ("Set-Cookie", "b=2"),
                ("Content-Length", "0")
            ]
        );
        assert_eq!(head.headers.get("x-a"), Some("one"));
        assert_eq!(head.headers.get("x-missing"), None);
        let cookies: Vec<_> = head.headers.values("SET-COOKIE").collect();
        assert_eq!(cookies, ["a=1", "b=2"]);
        let built: Headers = [("X-A", " one ")].into_iter().collect();
        assert_eq!(built.iter().collect::<Vec<_>>(), [("X-A", "one")]);
    }

    #[test]
    fn a_head_over_the_cap_is_too_large() {
        let mut big = b"HTTP/1.1 200 OK\r\n".to_vec();
        while big.len() <= MAX_HEAD {
            big.extend_from_slice(b"X-Filler: 0123456789012345678901234567890123456789\r\n");
        }
        big.extend_from_slice(b"\r\n");
        let big: &'static [u8] = big.leak();
        assert_eq!(
            read(big, 100).err().map(|f| f.kind),
            Some(ErrorKind::TooLarge)
        );
        // One that never ends is cut at the cap too, not read on.
        let endless: &'static [u8] = vec![b'x'; 3 * MAX_HEAD].leak();
        let (mut conn, server) = answered_by(endless);
        assert_eq!(
            conn.read_head(soon()).err().map(|f| f.kind),
            Some(ErrorKind::TooLarge)
        );
        drop(conn);
        let _ = server.join();
    }

    fn head(status: u16, headers: &[(&str, &str)]) -> Head {
        Head {
            status,
            minor: 1,
            headers: headers.iter().copied().collect(),
            raw: Vec::new(),
        }
    }

    #[test]
    fn bodiless_statuses_have_no_body_whatever_their_length() {
        let length = [("Content-Length", "5")];
        for status in [100, 103, 199, 204, 304] {
            assert_eq!(head(status, &length).framing().unwrap(), Framing::Empty);
        }
        for status in [200, 203, 205, 303, 305, 404] {
            let framing = head(status, &length).framing().unwrap();
            assert_eq!(framing, Framing::Length(5), "{status}");
        }
        // Read on the wire: the bytes after a 204's head are the next response's.
        let (head, body, after) = read(
            b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
            100,
        )
        .unwrap();
        assert_eq!(head.status, 204);
        assert_eq!((body.len(), after), (0, After::Unsolicited));
        let (_, _, after) = read(b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", 100).unwrap();
        assert_eq!(after, After::Reuse);
    }

    #[test]
    fn lengths_and_chunk_sizes_are_digits_only() {
        let length = |value| head(200, &[("Content-Length", value)]).framing();
        assert_eq!(length("0").unwrap(), Framing::Length(0));
        assert_eq!(length(" 007 ").unwrap(), Framing::Length(7));
        assert_eq!(length("5, 5").unwrap(), Framing::Length(5));
        for bad in [
            "+5",
            "-5",
            "0x5",
            "5 5",
            "",
            "5.0",
            "١",
            "99999999999999999999",
        ] {
            let e = length(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Protocol, "{bad:?}");
            assert!(
                e.message.contains("Content-Length"),
                "{bad:?}: {}",
                e.message
            );
        }
        assert_eq!(chunk_size(b"1a"), Some(26));
        assert_eq!(chunk_size(b"0"), Some(0));
        assert_eq!(chunk_size(b"A;ext=1"), Some(10));
        assert_eq!(chunk_size(b"5 \t;ext"), Some(5));
        assert_eq!(chunk_size(b"ffffffffffffffff"), Some(u64::MAX));
        for bad in [
            &b"+5"[..],
            b" 5",
            b"0x5",
            b"",
            b";x",
            b"5 5",
            b"-1",
            b"1ffffffffffffffff",
        ] {
            assert_eq!(chunk_size(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        let plus = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
            100,
        );
        assert_eq!(plus.err().map(|f| f.kind), Some(ErrorKind::Protocol));
        let plus = read(b"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", 100);
        assert_eq!(plus.err().map(|f| f.kind), Some(ErrorKind::Protocol));
    }

    #[test]
    fn ambiguous_framing_is_read_and_then_closed() {
        // Content-Length beside chunked (also with a space before the colon): chunked wins,
        // the connection closes.
        for te in ["Transfer-Encoding: chunked", "Transfer-Encoding : chunked"] {
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n{te}\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
            );
            let (head, body, after) = read(response.into_bytes().leak(), 100).unwrap();
            assert_eq!(head.framing().unwrap(), Framing::Chunked, "{te}");
            assert_eq!((body.as_slice(), after), (&b"hello"[..], After::Ambiguous));
        }
        // An unsolicited 101 is the answer, and the end of HTTP on the connection.
        let (head, body, after) =
            read(b"HTTP/1.1 101 Switching Protocols\r\n\r\nxyz", 100).unwrap();
        assert_eq!((head.status, body.len(), after), (101, 0, After::Ambiguous));
        assert_eq!(
            head.ambiguous(),
            Some("an unsolicited 101 Switching Protocols")
        );
        // Bodiless and plain responses are not ambiguous; a 204 with both headers neither.
        let both = [("Content-Length", "0"), ("Transfer-Encoding", "chunked")];
        assert_eq!(head_of(204, &both), None);
        assert!(head_of(200, &both).is_some());
        assert_eq!(head_of(200, &both[..1]), None);
        assert_eq!(head_of(200, &both[1..]), None);
    }

    fn head_of(status: u16, headers: &[(&str, &str)]) -> Option<&'static str> {
        head(status, headers).ambiguous()
    }

    #[test]
    fn statuses_outside_100_to_599_are_errors_and_interim_heads_are_skipped() {
        for bad in [
            &b"HTTP/1.1 099 Odd\r\n\r\n"[..],
            b"HTTP/1.1 000 x\r\n\r\n",
            b"HTTP/1.1 600 x\r\n\r\n",
        ] {
            let e = read(bad, 100).err().expect("an error");
            assert_eq!(
                e.kind,
                ErrorKind::Protocol,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
            assert!(!e.stale, "a first response is not stale");
        }
        let (head, _, _) = read(b"HTTP/1.1 599 Edge\r\nContent-Length: 0\r\n\r\n", 100).unwrap();
        assert_eq!(head.status, 599);
        let (head, body, after) = read(
            b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n\
              HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
            100,
        )
        .unwrap();
        assert_eq!(
            (head.status, body.as_slice(), after),
            (200, &b"hi"[..], After::Reuse)
        );
        // An interim head then a bad status: still an error.
        let e = read(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 700 x\r\n\r\n", 100).err();
        assert_eq!(e.map(|f| f.kind), Some(ErrorKind::Protocol));
    }

    #[test]
    fn chunk_sizes_add_up_and_the_cap_cuts_inside_a_later_chunk() {
        let response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                         5\r\nhello\r\n7\r\n, world\r\n1\r\n!\r\n0\r\n\r\n";
        let (_, body, after) = read(response, 13).unwrap();
        assert_eq!(
            (body.as_slice(), after),
            (&b"hello, world!"[..], After::Reuse)
        );
        // One byte over the cap is read to tell a cut body: here that is the whole body.
        let (_, body, after) = read(response, 12).unwrap();
        assert_eq!(
            (body.as_slice(), after),
            (&b"hello, world!"[..], After::Reuse)
        );
        let (_, body, after) = read(response, 6).unwrap();
        assert_eq!((body.as_slice(), after), (&b"hello, "[..], After::Close));
        let (_, body, after) = read(response, 4).unwrap();
        assert_eq!((body.as_slice(), after), (&b"hello"[..], After::Close));
        // A chunk longer than its size.
        let long = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n",
            100,
        );
        assert_eq!(long.err().map(|f| f.kind), Some(ErrorKind::Protocol));
        // Lengths: a body read to its end (the cap + 1 bytes at most) is whole, a longer one cut.
        let exact = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(read(exact, 4).unwrap().2, After::Reuse);
        let (_, body, after) = read(exact, 3).unwrap();
        assert_eq!((body.as_slice(), after), (&b"hell"[..], After::Close));
        // Bytes past the body's end are not the next response.
        let (_, body, after) =
            read(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP", 100).unwrap();
        assert_eq!((body.as_slice(), after), (&b"hi"[..], After::Unsolicited));
    }

    /// A connection whose buffer already holds `held` (as if read), to a server that writes
    /// `then` and closes.
    fn holding(held: &[u8], then: &'static [u8]) -> (Connection, std::thread::JoinHandle<()>) {
        let (mut conn, server) = answered_by(then);
        conn.buf = held.to_vec();
        conn.buf.resize(held.len() + READ_CHUNK, 0);
        conn.end = held.len();
        (conn, server)
    }

    #[test]
    fn head_and_line_bounds_are_inclusive() {
        // A head of exactly MAX_HEAD bytes is read; one byte more is too large.
        let sized = |len: usize| {
            let mut head = b"HTTP/1.1 200 OK\r\nX-Fill: ".to_vec();
            head.resize(len - 4, b'x');
            head.extend_from_slice(b"\r\n\r\n");
            head
        };
        let exact: &'static [u8] = sized(MAX_HEAD).leak();
        assert_eq!(
            read(exact, 100).map(|(h, _, _)| h.raw.len()).ok(),
            Some(MAX_HEAD)
        );
        let over: &'static [u8] = sized(MAX_HEAD + 1).leak();
        assert_eq!(
            read(over, 100).err().map(|f| f.kind),
            Some(ErrorKind::TooLarge)
        );
        // MAX_HEAD bytes held without the end of the head, then the close: not yet too large.
        let (mut conn, server) = holding(&sized(MAX_HEAD + 2)[..MAX_HEAD], b"");
        assert_eq!(
            conn.read_head(soon()).err().map(|f| f.kind),
            Some(ErrorKind::Closed)
        );
        server.join().unwrap();
        // A chunk line of MAX_LINE bytes held, its end to come: read.
        let mut line = b"5;".to_vec();
        line.resize(MAX_LINE, b'x');
        let (mut conn, server) = holding(&line, b"\r\nhello");
        let read_line = conn.line(soon()).unwrap();
        assert_eq!(read_line.len(), MAX_LINE);
        server.join().unwrap();
        line.push(b'x');
        let (mut conn, server) = holding(&line, b"\r\nhello");
        assert_eq!(
            conn.line(soon()).err().map(|f| f.kind),
            Some(ErrorKind::Protocol)
        );
        drop(conn);
        let _ = server.join();
    }

    #[test]
    fn an_idle_connection_is_quiet_until_the_server_writes_or_closes() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (go, wait) = std::sync::mpsc::channel::<&'static [u8]>();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            while let Ok(bytes) = wait.recv() {
                socket.write_all(bytes).unwrap();
            }
        });
        let tcp = TcpStream::connect(addr).unwrap();
        let mut conn = Connection::new(Stream::Tcp(tcp), Some(addr.ip()), None);
        let state_within = |conn: &mut Connection, want: Idle| {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let state = conn.idle_state();
                if state == want || Instant::now() > deadline {
                    return state;
                }
                std::thread::yield_now();
            }
        };
        assert_eq!(conn.idle_state(), Idle::Quiet);
        go.send(b"x").unwrap();
        assert_eq!(state_within(&mut conn, Idle::Bytes), Idle::Bytes);
        // Peeked, not read: still there.
        assert_eq!(conn.idle_state(), Idle::Bytes);
        drop(go);
        server.join().unwrap();
        let mut byte = [0u8; 1];
        assert_eq!(conn.stream.read(&mut byte).unwrap(), 1);
        assert_eq!(state_within(&mut conn, Idle::Closed), Idle::Closed);
        // Bytes held in the read buffer count as well.
        let (mut conn, server) = holding(b"HTTP/1.1", b"");
        assert_eq!(conn.idle_state(), Idle::Bytes);
        server.join().unwrap();
    }

    /// The fuzz target's promises (`fuzz/fuzz_targets/response.rs`) on mutations of framing
    /// cases: a short, deterministic run of what cargo-fuzz runs long.
    #[test]
    fn the_response_parser_keeps_its_promises_on_mutated_responses() {
        within(mutated_responses_keep_the_promises);
    }

    fn mutated_responses_keep_the_promises() {
        let seeds: [&[u8]; 6] = [
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x\r\nhello\r\n0\r\nT: 1\r\n\r\n",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No\r\nContent-Length: 3\r\n\r\n",
            b"HTTP/1.0 200 OK\nContent-Length: 2, 2\n\nhiHTTP/1.1 200 OK\r\n\r\n",
            b"HTTP/1.1 101 Up\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding : chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
        ];
        let alphabet = b"\r\n:;, +-0123456789abcdefHTP/.1";
        let mut random = crate::splitmix::SplitMix(29);
        for i in 0..20_000 {
            let mut bytes = seeds[i % seeds.len()].to_vec();
            for _ in 0..=random.below(4) {
                let at = random.below(bytes.len() as u64 + 1) as usize;
                let byte = alphabet[random.below(alphabet.len() as u64) as usize];
                match random.below(3) {
                    0 if at < bytes.len() => bytes[at] = byte,
                    1 if at < bytes.len() => _ = bytes.remove(at),
                    _ => bytes.insert(at, byte),
                }
            }
            let cap = random.below(12);
            let Ok((head, body, after)) = read_response(bytes.clone(), cap) else {
                continue;
            };
            let case = String::from_utf8_lossy(&bytes);
            assert!((100..=599).contains(&head.status), "{case:?}");
            assert!(body.len() as u64 <= cap + 1, "{case:?}");
            let framing = head.framing().unwrap();
            if let Framing::Length(n) = framing {
                assert_eq!(body.len() as u64, n.min(cap + 1), "{case:?}");
            }
            if after == After::Reuse {
                assert!(
                    head.ambiguous().is_none() && framing != Framing::Close,
                    "{case:?}"
                );
                assert!(head.minor >= 1, "{case:?}");
            }
        }
    }

    #[test]
    fn only_a_first_head_that_is_not_http_makes_a_reused_connection_stale() {
        let reused = |response: &'static [u8]| {
            within(move || {
                let (mut conn, server) = answered_by(response);
                conn.answered = 1;
                let fail = conn.read_head(soon()).err().expect("an error");
                drop(conn);
                let _ = server.join();
                (fail.kind, fail.stale)
            })
        };
        assert_eq!(reused(b"garbage\r\n\r\n"), (ErrorKind::Protocol, true));
        assert_eq!(
            reused(b"HTTP/1.1 099 x\r\n\r\n"),
            (ErrorKind::Protocol, true)
        );
        // After an interim head the server did answer: not stale.
        let after_interim = reused(b"HTTP/1.1 100 Continue\r\n\r\ngarbage\r\n\r\n");
        assert_eq!(after_interim, (ErrorKind::Protocol, false));
        let big: &'static [u8] = vec![b'x'; 2 * MAX_HEAD].leak();
        assert_eq!(reused(big), (ErrorKind::TooLarge, false));
        // A close before any byte is stale, and says so.
        let (mut conn, server) = answered_by(b"");
        conn.answered = 1;
        let fail = conn.read_head(soon()).err().unwrap();
        assert!(
            fail.stale && fail.message.contains("without answering"),
            "{fail:?}"
        );
        server.join().unwrap();
        let closed = read(b"HTTP/1.1 200 OK\r\n", 100).err().unwrap();
        assert!(
            !closed.stale && closed.message.contains("inside the head"),
            "{closed:?}"
        );
    }

    #[test]
    fn a_body_that_comes_after_its_head_in_another_read_is_whole() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n";
        let (conn, server) = holding(head, b"hello world");
        let (_, body, after) = within(move || read_on(conn, None, 100, soon())).unwrap();
        assert_eq!(
            (body.as_slice(), after),
            (&b"hello world"[..], After::Reuse)
        );
        server.join().unwrap();
    }

    /// A chunked body whose pieces come in later reads than its head: a chunk-size line and
    /// the head together, the chunk's bytes after; a chunk split between two reads.
    #[test]
    fn a_chunked_body_that_comes_in_pieces_is_whole() {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        for (held, then) in [
            ("5\r\n", &b"hello\r\n6\r\n world\r\n0\r\n\r\n"[..]),
            ("5\r\nhel", b"lo\r\n6\r\n world\r\n0\r\n\r\n"),
        ] {
            let (conn, server) = holding(format!("{head}{held}").as_bytes(), then);
            let (_, body, after) = within(move || read_on(conn, None, 100, soon())).unwrap();
            assert_eq!(
                (body.as_slice(), after),
                (&b"hello world"[..], After::Reuse),
                "{held:?}"
            );
            server.join().unwrap();
        }
    }

    #[test]
    fn a_body_to_the_close_is_cut_at_the_cap() {
        let (_, body, after) = read(b"HTTP/1.0 200 OK\r\n\r\n0123456789", 3).unwrap();
        assert_eq!((body.as_slice(), after), (&b"0123"[..], After::Close));
    }

    /// A body read to the close ends at the close, not at the deadline: a server that neither
    /// sends nor closes is a `timeout`, never a body cut short that looks whole.
    #[test]
    fn a_body_to_the_close_from_a_silent_server_times_out() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            socket.write_all(b"HTTP/1.0 200 OK\r\n\r\npartial").unwrap();
            // Until the client closes.
            while socket.read(&mut [0u8; 64]).is_ok_and(|n| n > 0) {}
        });
        let conn = Connection::new(Stream::Tcp(TcpStream::connect(addr).unwrap()), None, None);
        let deadline = Instant::now() + Duration::from_millis(300);
        let fail = within(move || read_on(conn, None, 100, deadline)).err();
        assert_eq!(fail.map(|f| f.kind), Some(ErrorKind::Timeout));
        server.join().unwrap();
    }

    /// A TLS server that closes the TCP connection without `close_notify` (many do) ends a
    /// body read to the close: rustls reports that close as an unexpected end, and the body
    /// read so far is the response.
    #[test]
    fn a_tls_close_without_close_notify_ends_a_body_read_to_the_close() {
        let server = testweb::tls::TlsServer::start(|_| testweb::Response::html("hello"));
        let (relay, relaying) = relay_alerts(&server, None);
        let mut conn = tls12_to(relay, &server);
        conn.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", LowSpeed::OFF)
            .unwrap();
        let (head, body, after) =
            within(move || read_on(conn, Some(Framing::Close), 100, soon())).unwrap();
        assert_eq!(head.status, 200);
        assert_eq!((body.as_slice(), after), (&b"hello"[..], After::Close));
        relaying.join().unwrap();
    }

    /// A TLS server's close_notify on an idle connection makes it `Closed`; the records read
    /// to see it leave a non-blocking socket (the reactor's) non-blocking.
    #[test]
    fn an_idle_tls_connection_its_server_closed_is_closed_and_keeps_its_mode() {
        let server = testweb::tls::TlsServer::start(|_| testweb::Response::html("hi"));
        let (release, held) = std::sync::mpsc::channel();
        let (relay, relaying) = relay_alerts(&server, Some(held));
        let mut conn = tls12_to(relay, &server);
        conn.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", LowSpeed::OFF)
            .unwrap();
        let head = conn.read_head(soon()).unwrap();
        let mut body = Vec::new();
        let framing = head.framing().unwrap();
        conn.read_body(&head, framing, 100, soon(), &mut body)
            .unwrap();
        assert_eq!(body, b"hi");
        conn.set_nonblocking().unwrap();
        // The close_notify held back: nothing to see.
        assert_eq!(conn.idle_state(), Idle::Quiet);
        release.send(()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut state = conn.idle_state();
        while state != Idle::Closed && Instant::now() < deadline {
            std::thread::yield_now();
            state = conn.idle_state();
        }
        assert_eq!(state, Idle::Closed);
        let fd = conn.fd().unwrap();
        // SAFETY: F_GETFL only reads the flags of a descriptor the connection holds open.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        assert!(flags & libc::O_NONBLOCK != 0, "made blocking: {flags:#x}");
        drop(conn);
        relaying.join().unwrap();
    }

    /// A TLS 1.2 connection to `server` through `relay` (its alert records are marked as
    /// such outside the encryption, so a relay can tell them).
    fn tls12_to(relay: std::net::SocketAddr, server: &testweb::tls::TlsServer) -> Connection {
        let roots = crate::fetch::tls::pem_certificates(server.ca_pem().as_bytes()).unwrap();
        let mut store = rustls::RootCertStore::empty();
        store.add_parsable_certificates(roots);
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS12])
            .unwrap()
            .with_root_certificates(store)
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let mut client = ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
        let mut tcp = Stream::Tcp(TcpStream::connect(relay).unwrap());
        let shaken = drive_handshake(&mut client, &mut tcp, false).unwrap();
        assert_eq!(shaken, Handshake::Done);
        let tls = Stream::Tls(Box::new(StreamOwned::new(client, tcp)));
        Connection::new(tls, None, None)
    }

    /// A relay to `server` that passes every TLS record but alerts (TLS 1.2's record type
    /// 21): without `release`, dropped, and the relay closes, so a server's `close_notify`
    /// never reaches the client; with it, held until it says, then passed. Ends when both
    /// sides have closed.
    fn relay_alerts(
        server: &testweb::tls::TlsServer,
        release: Option<std::sync::mpsc::Receiver<()>>,
    ) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
        let upstream: std::net::SocketAddr = server
            .origin()
            .trim_start_matches("https://")
            .parse()
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let relaying = std::thread::spawn(move || {
            let (mut client, _) = listener.accept().unwrap();
            let mut server = TcpStream::connect(upstream).unwrap();
            let (mut to_server, mut from_client) =
                (server.try_clone().unwrap(), client.try_clone().unwrap());
            let requests = std::thread::spawn(move || {
                let _ = io::copy(&mut from_client, &mut to_server);
                let _ = to_server.shutdown(std::net::Shutdown::Write);
            });
            let mut records = Vec::new();
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = server.read(&mut chunk) {
                records.extend_from_slice(&chunk[..n]);
                while records.len() >= 5 {
                    let end = 5 + usize::from(u16::from_be_bytes([records[3], records[4]]));
                    if records.len() < end {
                        break;
                    }
                    let passed = match (records[0], &release) {
                        (21, None) => false,
                        (21, Some(release)) => release.recv().is_ok(),
                        _ => true,
                    };
                    if passed {
                        // The client may be gone once it saw what it waited for.
                        let _ = client.write_all(&records[..end]);
                    }
                    records.drain(..end);
                }
            }
            let _ = client.shutdown(std::net::Shutdown::Write);
            requests.join().unwrap();
        });
        (addr, relaying)
    }

    /// A head is judged when its blank line has come: bytes that are not HTTP, then the close
    /// before any blank line, are a close inside the head.
    #[test]
    fn a_head_is_parsed_only_once_its_blank_line_came() {
        for bytes in [
            &b"SSH-2.0-OpenSSH_9.6\r\n"[..],
            b"x\ny\n",
            b"<html>\r\n<p>\n\r",
        ] {
            let fail = read(bytes.to_vec().leak(), 100).err().expect("an error");
            let case = String::from_utf8_lossy(bytes);
            assert_eq!(fail.kind, ErrorKind::Closed, "{case:?}: {fail:?}");
            assert!(
                fail.message.contains("inside the head"),
                "{case:?}: {fail:?}"
            );
        }
        // LF CR LF ends a head as CRLF CRLF and LF LF do.
        for bytes in [
            &b"HTTP/1.1 200 OK\nContent-Length: 2\n\r\nhi"[..],
            b"HTTP/1.1 200 OK\nContent-Length: 2\n\nhi",
        ] {
            let (_, body, after) = read(bytes.to_vec().leak(), 100).unwrap();
            assert_eq!((body.as_slice(), after), (&b"hi"[..], After::Reuse));
        }
    }

    /// A head's headers are kept in one string allocated once at their exact size.
    #[test]
    fn headers_take_one_allocation_of_their_size() {
        let (head, _, _) = read(
            b"HTTP/1.1 200 OK\r\nLink: </a.css>; rel=preload\r\nContent-Length: 0\r\n\r\n",
            100,
        )
        .unwrap();
        let text = &head.headers.text;
        assert_eq!(text, "Link</a.css>; rel=preloadContent-Length0");
        assert_eq!(text.capacity(), text.len());
    }

    #[test]
    fn too_many_trailers_are_too_large() {
        let mut response =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n".to_vec();
        for _ in 0..=MAX_HEADERS {
            response.extend_from_slice(b"T: 1\r\n");
        }
        response.extend_from_slice(b"\r\n");
        let fail = read(response.leak(), 100).err().map(|f| f.kind);
        assert_eq!(fail, Some(ErrorKind::TooLarge));
        let mut response =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n".to_vec();
        for _ in 0..MAX_HEADERS {
            response.extend_from_slice(b"T: 1\r\n");
        }
        response.extend_from_slice(b"\r\n");
        assert_eq!(read(response.leak(), 100).unwrap().2, After::Reuse);
    }
}
