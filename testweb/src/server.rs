//! The server: one listener per host, one accept thread for them all (epoll), one thread per
//! connection, a shared request log, and a bounded shutdown (stop flag, sockets shut down, short
//! read timeouts). Or, with [`Engine::Reactor`], one thread for listeners and connections alike
//! (module `reactor`), writing the same log.
//!
//! One accept thread rather than one per host: a thread blocked in accept(2) holds a reserved
//! descriptor, so 10,000 hosts would need 20,000 descriptors (and 10,000 threads) before serving
//! anything; with epoll they need 10,000.
//!
//! Hosts by address ([`TestWeb::start_by_address`]): one listener for every host, host i at
//! [`host_address`]`(i)` (127.0.0.1, 127.0.0.2, …) on the listener's port, told apart by the
//! local address each connection arrived on. Only a listener bound to the unspecified address
//! receives connections to all of 127/8, so this mode is for a network namespace of the caller's
//! own, where `lo` is the only interface. It needs one descriptor for all listeners, where the
//! default needs one per host: 10,000 hosts and a crawler's thousands of kept connections fit a
//! 20,000-descriptor limit only this way. Invariant, both modes: a log entry's `host` is the
//! index the host was given, whatever served it.

mod reactor;

use crate::http::{self, MAX_HEAD};
use crate::{Body, HostSpec, LogEntry, Request, Response};
use std::collections::HashMap;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// How often the accept thread looks at the stop flag.
const READ_TIMEOUT: Duration = Duration::from_millis(100);
/// How often an idle connection looks at the stop flag. Only a fallback: shutdown shuts every
/// connection's socket down, which wakes its read at once. Long, because a web of 10,000 hosts
/// keeps thousands of idle connections, and each wake-up costs the crawler under test CPU.
const CONN_POLL: Duration = Duration::from_secs(1);
/// A client that reads nothing for this long loses its connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long shutdown waits for threads before leaving stragglers detached.
const SHUTDOWN_WAIT: Duration = Duration::from_millis(1500);
/// Request bodies (rare: GET/HEAD have none) are skipped up to this size; larger ones close.
const MAX_REQUEST_BODY: u64 = 16 << 20;

/// Backlog of the shared listener of hosts by address (the kernel caps it at
/// `net.core.somaxconn`): a crawler opening thousands of hosts at once must not find it full,
/// or its connections wait for SYN retransmits (1 s, then 3 s).
const SHARED_BACKLOG: i32 = 65_535;

/// A running local test web: one loopback listener per host, or one for all hosts by address.
/// Stops on [`TestWeb::shutdown`] or drop.
pub struct TestWeb {
    shared: Arc<Shared>,
    /// Every host's address, in host order.
    addrs: Vec<SocketAddrV4>,
    stopped: bool,
}

/// Host `i`'s address in a web of hosts by address: the `i`-th of 127.0.0.1, 127.0.0.2, …,
/// skipping those ending in .0 or .255 (network and broadcast look-alikes), so 254 hosts per
/// 127.x.y.0/24. None past 127/8's 65,534 × 254 addresses.
pub fn host_address(i: usize) -> Option<Ipv4Addr> {
    let (block, last) = (i / 254, i % 254 + 1);
    (block < 1 << 16).then(|| {
        let block = block as u32;
        Ipv4Addr::from((127 << 24) | (block << 8) | last as u32)
    })
}

/// The inverse of [`host_address`]: the host index of a local address, if it is one.
pub fn host_index(ip: Ipv4Addr) -> Option<usize> {
    let u = u32::from(ip);
    let (last, block) = ((u & 0xff) as usize, ((u >> 8) & 0xffff) as usize);
    (u >> 24 == 127 && last != 0 && last != 255).then(|| block * 254 + last - 1)
}

/// How a web serves its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A thread per connection: any handler (it may block) and any body, raw scripts and
    /// endless bodies included.
    Threads,
    /// One event loop for every connection (epoll, through `mio`), each host's latency from a
    /// timer queue: for large webs of quick handlers, where a thread per connection would cost
    /// the machine as much as the crawler under test. Handlers run on the loop, so they must not
    /// block; a response whose body is not [`Body::Bytes`] is written by a thread of its own.
    Reactor,
}

/// Which host an accepted connection is for.
#[derive(Clone, Copy)]
enum Routing {
    /// Listener `k` serves host `k`.
    ByListener,
    /// One listener; the connection's local address names the host (`hosts` of them).
    ByAddress { hosts: usize },
}

impl Routing {
    /// The host of a connection accepted by listener `listener` at local address `local`.
    fn host(self, listener: usize, local: io::Result<SocketAddr>) -> Option<usize> {
        match self {
            Routing::ByListener => Some(listener),
            Routing::ByAddress { hosts } => match local {
                Ok(SocketAddr::V4(a)) => host_index(*a.ip()).filter(|&h| h < hosts),
                _ => None,
            },
        }
    }
}

struct Shared {
    stop: AtomicBool,
    stop_lock: Mutex<()>,
    stop_cv: Condvar,
    log: Mutex<LogState>,
    log_cv: Condvar,
    threads: Mutex<usize>,
    threads_cv: Condvar,
    conns: Mutex<HashMap<u64, TcpStream>>,
    next_conn: AtomicU64,
}

/// The request log, plus the responses being written right now: [`TestWeb::log`] waits for those
/// that were already being written when it was called, so a client that has read a response
/// always finds it in the log.
#[derive(Default)]
struct LogState {
    entries: Vec<LogEntry>,
    /// Tickets of the responses being written, with the instant their last write began.
    writing: Vec<(u64, Instant)>,
    next_ticket: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Sleeps `d` unless stopped first; false if stopped.
    fn pause(&self, d: Duration) -> bool {
        if d.is_zero() {
            return !self.stopped();
        }
        let deadline = Instant::now() + d;
        let mut g = lock(&self.stop_lock);
        loop {
            let now = Instant::now();
            if self.stopped() {
                return false;
            } else if now >= deadline {
                return true;
            }
            g = self
                .stop_cv
                .wait_timeout(g, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Announces the last write of a response; pass the ticket to [`Shared::record`].
    fn begin_write(&self) -> u64 {
        let mut log = lock(&self.log);
        let t = log.next_ticket;
        log.next_ticket += 1;
        log.writing.push((t, Instant::now()));
        t
    }

    /// Logs a finished request. With a ticket, `end` is when the last write began: the client
    /// may hold the response (and send its next request) before `write` even returns here, so
    /// a later instant would make a sequential client look like it overlapped its requests.
    /// Entries stay ordered by `end`.
    fn record(&self, ticket: Option<u64>, host: usize, req: &Request, status: u16, start: Instant) {
        let (method, target) = (req.method.clone(), req.target.clone());
        let mut log = lock(&self.log);
        let mut end = Instant::now();
        if let Some(t) = ticket {
            if let Some(i) = log.writing.iter().position(|&(w, _)| w == t) {
                end = log.writing.swap_remove(i).1;
            }
            self.log_cv.notify_all();
        }
        let at = log.entries.partition_point(|e| e.end <= end);
        log.entries.insert(
            at,
            LogEntry {
                host,
                method,
                target,
                status,
                start,
                end,
            },
        );
    }

    /// The log once the responses being written now are in it (waiting at most 1 s).
    fn settled_log(&self) -> MutexGuard<'_, LogState> {
        let mut log = lock(&self.log);
        let pending: Vec<u64> = log.writing.iter().map(|&(t, _)| t).collect();
        let deadline = Instant::now() + Duration::from_secs(1);
        while log.writing.iter().any(|(t, _)| pending.contains(t)) {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            log = self
                .log_cv
                .wait_timeout(log, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        log
    }
}

/// Counts a live server thread; uncounts it when dropped (also when its spawn failed).
struct ThreadGuard(Arc<Shared>);

impl ThreadGuard {
    fn new(shared: &Arc<Shared>) -> ThreadGuard {
        *lock(&shared.threads) += 1;
        ThreadGuard(shared.clone())
    }
}

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        *lock(&self.0.threads) -= 1;
        self.0.threads_cv.notify_all();
    }
}

impl TestWeb {
    /// Binds one listener per host on `127.0.0.1:0` (distinct ports = distinct hosts) and serves
    /// each from its own threads.
    pub fn start(hosts: Vec<HostSpec>) -> io::Result<TestWeb> {
        TestWeb::start_with(hosts.len(), move |_| hosts)
    }

    /// Two-step start for webs whose pages link across hosts: binds `n` listeners, then asks
    /// `make` for the hosts given every host's origin (`origins[h]`, as [`TestWeb::origin`]).
    pub fn start_with(
        n: usize,
        make: impl FnOnce(&[String]) -> Vec<HostSpec>,
    ) -> io::Result<TestWeb> {
        TestWeb::start_with_engine(n, Engine::Threads, make)
    }

    /// [`TestWeb::start_with`] served by `engine`.
    pub fn start_with_engine(
        n: usize,
        engine: Engine,
        make: impl FnOnce(&[String]) -> Vec<HostSpec>,
    ) -> io::Result<TestWeb> {
        let listeners = (0..n)
            .map(|_| TcpListener::bind("127.0.0.1:0"))
            .collect::<io::Result<Vec<_>>>()?;
        let addrs = listeners
            .iter()
            .map(|l| {
                Ok(SocketAddrV4::new(
                    Ipv4Addr::LOCALHOST,
                    l.local_addr()?.port(),
                ))
            })
            .collect::<io::Result<Vec<_>>>()?;
        TestWeb::serve(listeners, addrs, Routing::ByListener, engine, make)
    }

    /// Like [`TestWeb::start_with`], but every host on ONE listener bound to `bind` (IPv4; port 0
    /// picks a free one): host i is `http://`[`host_address`]`(i)`:PORT, and a connection serves
    /// the host its local address names (others are closed unanswered). Bound to 0.0.0.0 it
    /// receives all of 127/8, and every interface's addresses too: use that only inside a
    /// network namespace of your own (`unshare --net`, then `ip link set lo up`). Bound to
    /// 127.0.0.1 only host 0 is reachable.
    pub fn start_by_address(
        n: usize,
        bind: SocketAddr,
        engine: Engine,
        make: impl FnOnce(&[String]) -> Vec<HostSpec>,
    ) -> io::Result<TestWeb> {
        if !bind.is_ipv4() {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!("hosts by address bind an IPv4 address, not {bind}"),
            ));
        }
        if n > 0 && host_address(n - 1).is_none() {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!("{n} hosts by address do not fit 127/8"),
            ));
        }
        let listener = TcpListener::bind(bind)?;
        // Listening again only resizes the queue of pending connections (Linux).
        // SAFETY: a valid listening socket.
        if unsafe { libc::listen(listener.as_raw_fd(), SHARED_BACKLOG) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let port = listener.local_addr()?.port();
        let addrs = (0..n)
            .map(|i| SocketAddrV4::new(host_address(i).unwrap_or(Ipv4Addr::LOCALHOST), port))
            .collect();
        let routing = Routing::ByAddress { hosts: n };
        TestWeb::serve(vec![listener], addrs, routing, engine, make)
    }

    fn serve(
        listeners: Vec<TcpListener>,
        addrs: Vec<SocketAddrV4>,
        routing: Routing,
        engine: Engine,
        make: impl FnOnce(&[String]) -> Vec<HostSpec>,
    ) -> io::Result<TestWeb> {
        let n = addrs.len();
        let origins: Vec<String> = addrs.iter().map(|a| format!("http://{a}")).collect();
        let hosts = make(&origins);
        if hosts.len() != n {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                "start_with: wrong number of hosts",
            ));
        }
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            stop_lock: Mutex::new(()),
            stop_cv: Condvar::new(),
            log: Mutex::new(LogState::default()),
            log_cv: Condvar::new(),
            threads: Mutex::new(0),
            threads_cv: Condvar::new(),
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
        });
        let web = TestWeb {
            shared: shared.clone(),
            addrs,
            stopped: false,
        };
        let specs: Vec<Arc<HostSpec>> = hosts.into_iter().map(Arc::new).collect();
        if engine == Engine::Reactor {
            reactor::start(&shared, listeners, routing, specs)?;
            return Ok(web);
        }
        // SAFETY: epoll_create1 returns a new descriptor (owned from here on) or -1.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `epoll` is a valid descriptor nothing else owns.
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        for (host, listener) in listeners.iter().enumerate() {
            listener.set_nonblocking(true)?;
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: host as u64,
            };
            // SAFETY: valid descriptors and an initialized event.
            let r = unsafe {
                libc::epoll_ctl(
                    epoll.as_raw_fd(),
                    libc::EPOLL_CTL_ADD,
                    listener.as_raw_fd(),
                    &mut ev,
                )
            };
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let guard = ThreadGuard::new(&shared);
        thread::Builder::new()
            .name("testweb-accept".into())
            .spawn(move || accept_loop(guard, epoll, listeners, routing, specs))?;
        Ok(web)
    }

    /// Number of hosts.
    pub fn hosts(&self) -> usize {
        self.addrs.len()
    }

    /// `http://127.0.0.1:PORT` of `host` (no trailing slash); `http://127.A.B.C:PORT` for hosts
    /// by address.
    pub fn origin(&self, host: usize) -> String {
        format!("http://{}", self.addrs[host])
    }

    /// Origin of `host` followed by `path` (which starts with `/`).
    pub fn url(&self, host: usize, path: &str) -> String {
        format!("{}{path}", self.origin(host))
    }

    /// Port of `host` (the same for every host by address).
    pub fn port(&self, host: usize) -> u16 {
        self.addrs[host].port()
    }

    /// The host listening on `port`, if any (host 0 for hosts by address: they share it).
    pub fn host_of_port(&self, port: u16) -> Option<usize> {
        self.addrs.iter().position(|a| a.port() == port)
    }

    /// Snapshot of every request so far, in the order they ended (see [`LogEntry::end`]). Includes every response a
    /// client has received (it waits for responses whose writing had begun).
    pub fn log(&self) -> Vec<LogEntry> {
        self.shared.settled_log().entries.clone()
    }

    /// Number of requests so far (as [`TestWeb::log`] would count them).
    pub fn request_count(&self) -> usize {
        self.shared.settled_log().entries.len()
    }

    /// Stops serving: closes listeners and connections and waits (at most ~1.5 s) for threads.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        let sh = &self.shared;
        {
            let _g = lock(&sh.stop_lock);
            sh.stop.store(true, Ordering::Release);
            sh.stop_cv.notify_all();
        }
        for s in lock(&sh.conns).values() {
            let _ = s.shutdown(Shutdown::Both);
        }
        let deadline = Instant::now() + SHUTDOWN_WAIT;
        let mut n = lock(&sh.threads);
        while *n > 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            n = sh
                .threads_cv
                .wait_timeout(n, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for TestWeb {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Accepts on every (non-blocking) listener as epoll reports it ready, until the stop flag;
/// then drops the listeners.
fn accept_loop(
    guard: ThreadGuard,
    epoll: OwnedFd,
    listeners: Vec<TcpListener>,
    routing: Routing,
    specs: Vec<Arc<HostSpec>>,
) {
    let sh = guard.0.clone();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    while !sh.stopped() {
        // SAFETY: a valid epoll descriptor and a buffer of `events.len()` events.
        let n = unsafe {
            libc::epoll_wait(
                epoll.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                READ_TIMEOUT.as_millis() as i32,
            )
        };
        if n < 0 {
            if io::Error::last_os_error().kind() != ErrorKind::Interrupted {
                sh.pause(Duration::from_millis(10));
            }
            continue;
        }
        for ev in &events[..n as usize] {
            let listener = ev.u64 as usize;
            loop {
                match listeners[listener].accept() {
                    Ok((stream, _)) => {
                        // No host at that address: dropping the stream closes it.
                        let Some(host) = routing.host(listener, stream.local_addr()) else {
                            continue;
                        };
                        if !serve_accepted(&sh, host, &specs[host], stream) {
                            return;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => {
                        sh.pause(Duration::from_millis(10)); // e.g. out of file descriptors
                        break;
                    }
                }
            }
        }
    }
}

/// Serves one accepted connection on its own thread; false once the web is stopping.
fn serve_accepted(sh: &Arc<Shared>, host: usize, spec: &Arc<HostSpec>, stream: TcpStream) -> bool {
    if stream.set_nonblocking(false).is_err() {
        return true;
    }
    let id = sh.next_conn.fetch_add(1, Ordering::Relaxed);
    if let Ok(clone) = stream.try_clone() {
        lock(&sh.conns).insert(id, clone);
    }
    if sh.stopped() {
        lock(&sh.conns).remove(&id);
        return false;
    }
    let guard = ThreadGuard::new(sh);
    let spec = spec.clone();
    let spawned = thread::Builder::new().stack_size(512 << 10).spawn(move || {
        let _ = serve_conn(&guard.0, host, &spec, stream);
        lock(&guard.0.conns).remove(&id);
    });
    if spawned.is_err() {
        lock(&sh.conns).remove(&id);
    }
    true
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Reads more bytes into `buf`: Ok(0) at EOF, Ok(None) when stopped while waiting.
fn read_more(sh: &Shared, stream: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<Option<usize>> {
    let mut tmp = [0u8; 8192];
    loop {
        match stream.read(&mut tmp) {
            Ok(n) => {
                buf.extend_from_slice(&tmp[..n]);
                return Ok(Some(n));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) => {
                if sh.stopped() {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Half-closes, then drains what the client still sends for a moment, so that closing does not
/// reset the connection before the client has read the response.
fn close_gently(sh: &Shared, mut stream: TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let mut sink = Vec::new();
    for _ in 0..3 {
        sink.clear();
        match read_more(sh, &mut stream, &mut sink) {
            Ok(Some(n)) if n > 0 => {}
            _ => return,
        }
    }
}

fn serve_conn(sh: &Shared, host: usize, spec: &HostSpec, mut stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(CONN_POLL))?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    let mut out: Vec<u8> = Vec::with_capacity(8192);
    loop {
        // Read one request head (tolerating blank lines before it, and pipelined leftovers).
        let mut scanned = 0;
        let end = loop {
            let blank = buf
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
            if blank > 0 {
                buf.drain(..blank);
                scanned = 0;
            }
            if let Some(end) = http::head_end(&buf, scanned) {
                break end;
            }
            scanned = buf.len();
            if buf.len() > MAX_HEAD {
                break buf.len();
            }
            match read_more(sh, &mut stream, &mut buf)? {
                Some(0) | None => return Ok(()),
                Some(_) => {}
            }
        };
        let start = Instant::now();
        let head = if end > MAX_HEAD {
            Err((String::new(), String::new()))
        } else {
            http::parse_head(&buf[..end])
        };
        buf.drain(..end.min(buf.len()));
        let head = match head {
            Ok(h) => h,
            Err((method, target)) => {
                let req = Request {
                    method,
                    target,
                    headers: Vec::new(),
                };
                out.clear();
                bad_request(&mut out);
                let ticket = sh.begin_write();
                let r = stream.write_all(&out);
                sh.record(Some(ticket), host, &req, 400, start);
                close_gently(sh, stream);
                return r;
            }
        };
        // Skip a request body, if any.
        if head.body_len > MAX_REQUEST_BODY {
            sh.record(None, host, &head.request, 400, start);
            return Ok(());
        }
        let mut skip = head.body_len as usize;
        while skip > 0 {
            if buf.is_empty() && !matches!(read_more(sh, &mut stream, &mut buf)?, Some(n) if n > 0)
            {
                return Ok(());
            }
            let n = skip.min(buf.len());
            buf.drain(..n);
            skip -= n;
        }
        if !sh.pause(spec.latency) {
            return Ok(());
        }
        let req = &head.request;
        let resp = answer(spec, req);
        let keep_alive = head.keep_alive && !http::says_close(&resp);
        let Body::Bytes(ref body) = resp.body else {
            return write_scripted(sh, host, req, &resp, start, stream);
        };
        out.clear();
        serialize(&mut out, &head, &resp, body, keep_alive);
        let ticket = sh.begin_write();
        let r = stream.write_all(&out).and_then(|_| stream.flush());
        sh.record(Some(ticket), host, req, resp.status, start);
        r?;
        if !keep_alive {
            close_gently(sh, stream);
            return Ok(());
        }
    }
}

/// The answer to a request: the handler's for GET and HEAD (500 if it panics), 405 otherwise.
fn answer(spec: &HostSpec, req: &Request) -> Response {
    if req.method == "GET" || req.method == "HEAD" {
        catch_unwind(AssertUnwindSafe(|| (spec.handler)(req)))
            .unwrap_or_else(|_| Response::text(500, "handler panicked\n"))
    } else {
        Response::text(405, "method not allowed\n").with_header("Allow", "GET, HEAD")
    }
}

/// Appends a [`Body::Bytes`] response to `head`'s request to `out`: head, then body unless
/// the request or the status has none.
fn serialize(out: &mut Vec<u8>, head: &http::Head, resp: &Response, body: &[u8], keep_alive: bool) {
    let head_only = head.request.method == "HEAD";
    if http::write_head(out, resp, body.len(), head_only, keep_alive, head.http10) {
        out.extend_from_slice(body);
    }
}

/// Appends the answer to a request head that could not be parsed (the connection then closes).
fn bad_request(out: &mut Vec<u8>) {
    let resp = Response::text(400, "bad request\n");
    http::write_head(out, &resp, 12, false, false, false);
    out.extend_from_slice(b"bad request\n");
}

/// Writes a response whose body is a script or endless ([`Body::Raw`], [`Body::RawThenReset`],
/// [`Body::Endless`]) on a blocking stream, logs it, and ends the connection as the body says.
fn write_scripted(
    sh: &Shared,
    host: usize,
    req: &Request,
    resp: &Response,
    start: Instant,
    mut stream: TcpStream,
) -> io::Result<()> {
    match resp.body {
        Body::Endless {
            ref prefix,
            ref chunk,
        } => {
            let mut r = stream.write_all(prefix);
            while r.is_ok() && !sh.stopped() {
                r = stream.write_all(chunk);
            }
            sh.record(None, host, req, resp.status, start);
            r
        }
        Body::Raw(ref script) | Body::RawThenReset(ref script) => {
            let (mut r, mut ticket) = (Ok(()), None);
            for (i, (pause, bytes)) in script.iter().enumerate() {
                if !sh.pause(*pause) {
                    break;
                }
                if i + 1 == script.len() {
                    ticket = Some(sh.begin_write());
                }
                r = stream.write_all(bytes).and_then(|_| stream.flush());
                if r.is_err() {
                    break;
                }
            }
            sh.record(ticket, host, req, resp.status, start);
            if matches!(resp.body, Body::RawThenReset(_)) {
                reset(&stream);
            }
            r
        }
        Body::Bytes(_) => Ok(()),
    }
}

/// Sets `SO_LINGER` to zero so that dropping the socket sends RST rather than FIN.
fn reset(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket descriptor and a correctly sized, initialized `linger` struct.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}
