//! The reactor engine ([`Engine::Reactor`](super::Engine::Reactor)): one thread serves every
//! listener and connection of a web through one epoll set (`mio`), and each host's latency is a
//! deadline in a timer queue rather than a sleeping thread.
//!
//! Invariants, the same as the thread engine's so that a log reads alike whichever served it:
//! - a connection serves its requests one at a time, in order (pipelined heads wait in its
//!   input); a request's `start` is when its head was read, its latency runs after its body was
//!   skipped, and its handler is called when the latency is over;
//! - a response's log entry is recorded when its writing ends, with `end` = the instant its
//!   write began ([`Shared::begin_write`]): a client that holds the response finds it logged;
//! - a request head that cannot be parsed is answered 400 and the connection closes gently
//!   (write side shut, what the client still sends drained for a moment).
//!
//! A response whose body is not [`Body::Bytes`] (scripts, endless bodies: hostile cases) is
//! handed to a thread of its own with its connection, as the thread engine writes it.
//!
//! The loop runs at a raised priority when allowed (`raise_priority`): one thread for a whole
//! web must not wait behind the crawler's thousands for a core, or every host answers late.

use super::{
    MAX_REQUEST_BODY, READ_TIMEOUT, Routing, Shared, ThreadGuard, WRITE_TIMEOUT, answer,
    bad_request, lock, serialize, write_scripted,
};
use crate::http::{self, Head, MAX_HEAD};
use crate::{Body, HostSpec, Request};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

/// How long a closing connection drains what its client still sends.
const DRAIN: Duration = Duration::from_secs(1);
/// Events taken from epoll per wake-up.
const EVENTS: usize = 1024;
/// After a failed accept (e.g. out of descriptors), when to try again.
const ACCEPT_RETRY: Duration = Duration::from_millis(10);

/// Starts the reactor thread on `listeners` (host of a connection by `routing`).
pub(super) fn start(
    shared: &Arc<Shared>,
    listeners: Vec<std::net::TcpListener>,
    routing: Routing,
    specs: Vec<Arc<HostSpec>>,
) -> io::Result<()> {
    let poll = Poll::new()?;
    let mut mio_listeners = Vec::with_capacity(listeners.len());
    for (i, l) in listeners.into_iter().enumerate() {
        l.set_nonblocking(true)?;
        let mut l = TcpListener::from_std(l);
        poll.registry()
            .register(&mut l, Token(i), Interest::READABLE)?;
        mio_listeners.push(l);
    }
    let guard = ThreadGuard::new(shared);
    let reactor = Reactor {
        poll,
        listeners: mio_listeners,
        routing,
        specs,
        conns: Vec::new(),
        free: Vec::new(),
        timers: BinaryHeap::new(),
        scratch: vec![0; 64 << 10],
        accept_again: false,
    };
    thread::Builder::new()
        .name("testweb-reactor".into())
        .spawn(move || reactor.run(guard))?;
    Ok(())
}

/// Where a connection is in serving its current request.
enum State {
    /// Waiting for (the rest of) a request head.
    Head,
    /// Skipping `left` more bytes of the request's body.
    Body {
        left: u64,
        head: Head,
        start: Instant,
    },
    /// The host's latency: the response is made at `due`.
    Latency {
        head: Head,
        start: Instant,
        due: Instant,
    },
    /// Writing `out[at..]`; logged when written or failed.
    Write {
        out: Vec<u8>,
        at: usize,
        done: Done,
        /// Keep the connection for the next request once written.
        keep_alive: bool,
        /// A client that reads nothing until then loses the connection.
        deadline: Instant,
    },
    /// Write side shut; reading (and dropping) what the client still sends until EOF, an
    /// error or `until`.
    Drain { until: Instant },
}

/// What the log records of a response once its writing ends.
struct Done {
    request: Request,
    status: u16,
    start: Instant,
    ticket: u64,
}

struct Conn {
    stream: TcpStream,
    host: usize,
    /// Bytes read and not yet consumed (pipelined requests included).
    input: Vec<u8>,
    /// How far `input` was scanned for a head's end.
    scanned: usize,
    /// The client closed its side, or the connection failed: no bytes will come.
    ended: bool,
    /// The last write found the socket's buffer full.
    write_blocked: bool,
    /// Writable events are asked for (registered interest).
    want_write: bool,
    state: State,
}

/// What driving a connection came to.
enum Next {
    Keep,
    Close,
    /// A scripted body: the connection goes to a thread of its own.
    HandOff(Request, crate::Response, Instant),
}

struct Reactor {
    poll: Poll,
    /// Listener `i` has token `i`; connection slot `k` has token `listeners.len() + k`.
    listeners: Vec<TcpListener>,
    routing: Routing,
    specs: Vec<Arc<HostSpec>>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    /// (deadline, connection slot). An entry may be stale (its slot reused or its state moved
    /// on): a connection woken by a timer only acts on deadlines of its own state that passed.
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    scratch: Vec<u8>,
    accept_again: bool,
}

impl Reactor {
    fn run(mut self, guard: ThreadGuard) {
        raise_priority();
        let sh = guard.0.clone();
        let mut events = Events::with_capacity(EVENTS);
        while !sh.stopped() {
            let now = Instant::now();
            while let Some(&Reverse((due, slot))) = self.timers.peek() {
                if due > now {
                    break;
                }
                self.timers.pop();
                self.drive(&sh, slot, false);
            }
            if self.accept_again {
                self.accept_again = false;
                for i in 0..self.listeners.len() {
                    self.accept(&sh, i);
                }
            }
            let mut wait = READ_TIMEOUT;
            if let Some(&Reverse((due, _))) = self.timers.peek() {
                wait = wait.min(due.saturating_duration_since(Instant::now()));
            }
            if self.accept_again {
                wait = wait.min(ACCEPT_RETRY);
            }
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                if e.kind() != ErrorKind::Interrupted {
                    sh.pause(Duration::from_millis(10));
                }
                continue;
            }
            for ev in events.iter() {
                let token = ev.token().0;
                if token < self.listeners.len() {
                    self.accept(&sh, token);
                } else {
                    self.drive(&sh, token - self.listeners.len(), ev.is_readable());
                }
            }
        }
        // Every listener and connection closed before the web counts this thread gone.
        drop(self);
        drop(guard);
    }

    /// Accepts every pending connection of listener `i`.
    fn accept(&mut self, sh: &Arc<Shared>, i: usize) {
        loop {
            match self.listeners[i].accept() {
                Ok((mut stream, _)) => {
                    // No host at that address: dropping the stream closes it.
                    let Some(host) = self.routing.host(i, stream.local_addr()) else {
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let slot = self.free.pop().unwrap_or_else(|| {
                        self.conns.push(None);
                        self.conns.len() - 1
                    });
                    let token = Token(self.listeners.len() + slot);
                    if self
                        .poll
                        .registry()
                        .register(&mut stream, token, Interest::READABLE)
                        .is_err()
                    {
                        self.free.push(slot);
                        continue;
                    }
                    self.conns[slot] = Some(Conn {
                        stream,
                        host,
                        input: Vec::new(),
                        scanned: 0,
                        ended: false,
                        write_blocked: false,
                        want_write: false,
                        state: State::Head,
                    });
                    // Bytes may have come before the registration: read them now.
                    self.drive(sh, slot, true);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.accept_again = true; // e.g. out of file descriptors
                    return;
                }
            }
        }
    }

    /// Reads what connection `slot` has (when `readable`), then moves its request on as far
    /// as it can go now.
    fn drive(&mut self, sh: &Arc<Shared>, slot: usize, readable: bool) {
        let Some(conn) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        if readable {
            conn.read_all(&mut self.scratch);
        }
        let spec = &self.specs[conn.host];
        let next = conn.advance(sh, spec, &mut self.timers, slot);
        let token = Token(self.listeners.len() + slot);
        match next {
            Next::Keep => {
                // Writable events only while a response waits for room in the socket.
                if conn.write_blocked != conn.want_write {
                    conn.want_write = conn.write_blocked;
                    let interest = match conn.want_write {
                        true => Interest::READABLE | Interest::WRITABLE,
                        false => Interest::READABLE,
                    };
                    let _ = self
                        .poll
                        .registry()
                        .reregister(&mut conn.stream, token, interest);
                }
            }
            Next::Close => self.close(slot),
            Next::HandOff(request, response, start) => {
                let Some(mut conn) = self.conns[slot].take() else {
                    return;
                };
                self.free.push(slot);
                let _ = self.poll.registry().deregister(&mut conn.stream);
                hand_off(sh, conn, request, response, start);
            }
        }
    }

    fn close(&mut self, slot: usize) {
        if let Some(mut conn) = self.conns[slot].take() {
            let _ = self.poll.registry().deregister(&mut conn.stream);
            self.free.push(slot);
        }
    }
}

impl Conn {
    /// Reads until the socket has nothing more (edge-triggered: every readable event must be
    /// drained). While draining a closing connection the bytes are dropped.
    fn read_all(&mut self, scratch: &mut [u8]) {
        loop {
            match self.stream.read(scratch) {
                Ok(0) => {
                    self.ended = true;
                    return;
                }
                Ok(n) => {
                    if !matches!(self.state, State::Drain { .. }) {
                        self.input.extend_from_slice(&scratch[..n]);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.ended = true;
                    return;
                }
            }
        }
    }

    /// Moves the current request on as far as it goes now.
    fn advance(
        &mut self,
        sh: &Shared,
        spec: &HostSpec,
        timers: &mut BinaryHeap<Reverse<(Instant, usize)>>,
        slot: usize,
    ) -> Next {
        self.write_blocked = false;
        loop {
            let now = Instant::now();
            match std::mem::replace(&mut self.state, State::Head) {
                State::Head => match self.take_head() {
                    None if self.ended || sh.stopped() => return Next::Close,
                    None => return Next::Keep,
                    Some(Err((method, target))) => {
                        let mut out = Vec::new();
                        bad_request(&mut out);
                        let request = Request {
                            method,
                            target,
                            headers: Vec::new(),
                        };
                        self.state = self.write(sh, out, request, 400, now, false);
                    }
                    Some(Ok(head)) if head.body_len > MAX_REQUEST_BODY => {
                        sh.record(None, self.host, &head.request, 400, now);
                        return Next::Close;
                    }
                    Some(Ok(head)) => {
                        let left = head.body_len;
                        self.state = State::Body {
                            left,
                            head,
                            start: now,
                        };
                    }
                },
                State::Body {
                    mut left,
                    head,
                    start,
                } => {
                    let n = left.min(self.input.len() as u64);
                    self.input.drain(..n as usize);
                    left -= n;
                    if left > 0 {
                        self.state = State::Body { left, head, start };
                        return if self.ended { Next::Close } else { Next::Keep };
                    }
                    let due = now + spec.latency;
                    if due > now {
                        timers.push(Reverse((due, slot)));
                    }
                    self.state = State::Latency { head, start, due };
                }
                State::Latency { head, start, due } => {
                    if now < due {
                        self.state = State::Latency { head, start, due };
                        return Next::Keep;
                    }
                    let resp = answer(spec, &head.request);
                    let Body::Bytes(ref body) = resp.body else {
                        return Next::HandOff(head.request, resp, start);
                    };
                    let keep_alive = head.keep_alive && !http::says_close(&resp);
                    let mut out = Vec::with_capacity(body.len() + 256);
                    serialize(&mut out, &head, &resp, body, keep_alive);
                    self.state = self.write(sh, out, head.request, resp.status, start, keep_alive);
                }
                State::Write {
                    out,
                    mut at,
                    done,
                    keep_alive,
                    deadline,
                } => {
                    let mut failed = now >= deadline;
                    while !failed && at < out.len() {
                        match self.stream.write(&out[at..]) {
                            Ok(0) => failed = true,
                            Ok(n) => at += n,
                            Err(e) if e.kind() == ErrorKind::Interrupted => {}
                            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                                if !self.want_write {
                                    timers.push(Reverse((deadline, slot)));
                                }
                                self.write_blocked = true;
                                self.state = State::Write {
                                    out,
                                    at,
                                    done,
                                    keep_alive,
                                    deadline,
                                };
                                return Next::Keep;
                            }
                            Err(_) => failed = true,
                        }
                    }
                    sh.record(
                        Some(done.ticket),
                        self.host,
                        &done.request,
                        done.status,
                        done.start,
                    );
                    if failed {
                        return Next::Close;
                    }
                    if !keep_alive {
                        let _ = self.stream.shutdown(Shutdown::Write);
                        self.input.clear();
                        let until = now + DRAIN;
                        timers.push(Reverse((until, slot)));
                        self.state = State::Drain { until };
                    }
                    // else the next request, which may already be in `input`.
                }
                State::Drain { until } => {
                    self.input.clear();
                    if self.ended || now >= until || sh.stopped() {
                        return Next::Close;
                    }
                    self.state = State::Drain { until };
                    return Next::Keep;
                }
            }
        }
    }

    /// The next request head in `input`, taken out of it (blank lines before it skipped), once
    /// it is all there; an unparseable or oversized head as `Err` with what could be read.
    fn take_head(&mut self) -> Option<Result<Head, (String, String)>> {
        let blank = self
            .input
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        if blank > 0 {
            self.input.drain(..blank);
            self.scanned = 0;
        }
        let end = match http::head_end(&self.input, self.scanned) {
            Some(end) if end <= MAX_HEAD => end,
            Some(_) => return Some(Err((String::new(), String::new()))),
            None if self.input.len() > MAX_HEAD => {
                return Some(Err((String::new(), String::new())));
            }
            None => {
                self.scanned = self.input.len();
                return None;
            }
        };
        let head = http::parse_head(&self.input[..end]);
        self.input.drain(..end);
        self.scanned = 0;
        Some(head)
    }

    /// The state that writes `out`, its write's beginning announced to the log.
    fn write(
        &self,
        sh: &Shared,
        out: Vec<u8>,
        request: Request,
        status: u16,
        start: Instant,
        keep_alive: bool,
    ) -> State {
        let ticket = sh.begin_write();
        State::Write {
            out,
            at: 0,
            done: Done {
                request,
                status,
                start,
                ticket,
            },
            keep_alive,
            deadline: Instant::now() + WRITE_TIMEOUT,
        }
    }
}

/// Asks for a higher scheduling priority for this thread (nice -10; granted to root, else
/// ignored). The loop serves every host of the web; beside a crawler of thousands of threads on
/// a busy machine it would get one thread's share of the cores and answer late, where the server
/// it stands for has machines of its own. It needs little CPU, so it takes little from the
/// crawler.
fn raise_priority() {
    // SAFETY: gettid and setpriority take and return plain integers; only this thread's
    // priority changes.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, -10);
    }
}

/// Writes a scripted response on a thread of its own, as the thread engine does, with the
/// connection made blocking again; shutdown reaches it through `Shared::conns`.
fn hand_off(
    sh: &Arc<Shared>,
    conn: Conn,
    request: Request,
    response: crate::Response,
    start: Instant,
) {
    // SAFETY: the descriptor is owned by `conn.stream` and moved out of it here, into one
    // std stream that owns it from now on.
    let stream = unsafe { std::net::TcpStream::from_raw_fd(conn.stream.into_raw_fd()) };
    if stream.set_nonblocking(false).is_err()
        || stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_err()
    {
        return;
    }
    let id = sh.next_conn.fetch_add(1, Ordering::Relaxed);
    if let Ok(clone) = stream.try_clone() {
        lock(&sh.conns).insert(id, clone);
    }
    let guard = ThreadGuard::new(sh);
    let host = conn.host;
    let spawned = thread::Builder::new().stack_size(512 << 10).spawn(move || {
        let sh = &guard.0;
        let _ = write_scripted(sh, host, &request, &response, start, stream);
        lock(&sh.conns).remove(&id);
    });
    if spawned.is_err() {
        lock(&sh.conns).remove(&id);
    }
}
