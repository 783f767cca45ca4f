//! The reactor: HTTP and HTTPS requests in flight on non-blocking sockets, one thread for all.
//!
//! A thread that blocks on each request costs a wake-up, two context switches and a stack per
//! request; at the web's latency the politeness rule wants hundreds or thousands of requests
//! in flight. Here one thread owns them all on epoll (`mio`): it connects, does the TLS
//! handshake for `https`, writes the request, reads the response, and hands the responses (or
//! the failures) to `deliver`, which queues them for the threads that process pages
//! (`crawl::worker`). The answers of one turn of the loop (the jobs taken, the timers expired,
//! the events of one `poll`) go in one batch, before the loop waits again: one hand-off, and
//! at most one wake-up per processing thread, for all of them rather than one per answer.
//!
//! What it shares with the blocking client, so that both read a response alike: the job is
//! made by `Fetcher::reactor_job` (the request head, the name resolved by the caller through
//! the look-ahead resolver's cache and checked against the address policy: no DNS in this
//! loop); the response is parsed by `Fetcher::receive` over the same `conn::Connection`, whose
//! framing, caps and errors are the blocking client's. Where the blocking parse would wait, a
//! non-blocking one ends with `Fail::pending(short)`: the connection rolls back to the start
//! of the response, and the parse runs again from there once `short` more bytes came (or the
//! stream ended), so a long body is parsed a few times, not once per read.
//!
//! TLS (rustls, sans-IO) on the same path: after the connect the handshake is driven by the
//! blocking client's own call (`conn::drive_handshake`, rustls's `complete_io`), so a refused
//! certificate fails alike (`tls`, `TLS handshake: …`), with the fetcher's roots (`--ca-cert`,
//! `--insecure`) and the URL's host as SNI. The socket is watched for what rustls waits for:
//! bytes to read, and room to write while records wait to go out (`interest_of`), in every
//! phase, since a read may ask for a write (an alert, a key update) and a request head the
//! socket did not take whole waits for room. Reads take rustls's plaintext first, else read
//! records until the socket is dry (`conn::Stream::read_now`), as the edge-triggered poll needs.
//!
//! Keep-alive: a connection read exactly to its response's end goes to the fetcher's idle pool
//! (`fetch::pool`: its LRU, idle timeout and liveness check), shared with the blocking client
//! (`-j`), each side setting the socket's mode as it takes one; a TLS connection goes there
//! too, whole (its rustls session in it), and the liveness check leaves the socket in the mode
//! it found it. A request that fails on a kept connection before any byte of its answer
//! (`Fail::stale`) is sent once more on a new one.
//!
//! Time: `--timeout` bounds the whole request, `conn::PER_READ` the wait for a byte (in the
//! TLS handshake too) and `CONNECT_TIMEOUT` a connect, each a timer of the loop. The response
//! time (the delay rule's) is from the request written to the arrival of the response's last
//! bytes by the kernel's stamp (`SO_TIMESTAMPNS`, `sys::recv_stamped`, under TLS too), as on
//! the blocking path; without a stamp, from the job's start to the read that completed it.
//!
//! A poll that fails (but for `EINTR`) is told to the caller, who stops the crawl; every job
//! in flight, and every one submitted until `close`, is answered with the failure (`io`).
//!
//! Invariants: every job submitted is delivered exactly once (one submitted after the loop
//! ended is refused, `try_submit`, not dropped); a slot's socket is registered
//! with the poll exactly while the slot holds it, `Slot::interest` saying for what; the poll
//! is edge-triggered, so a slot waits for an event only once its reads found the socket dry
//! (`WouldBlock`) or before any answer can have come (its request just written), and once its
//! writes found it full or had nothing left; the loop never blocks but in `poll` (after a
//! failed poll, in the wait for jobs to refuse and the close), and never with an answer held
//! back.

use crate::fetch::client::{FetchError, Fetcher, Response};
use crate::fetch::conn::{Connection, Handshake, PER_READ, Stream};
use crate::fetch::dns::Addrs;
use crate::fetch::error::{ErrorKind, Fail};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use rustls::StreamOwned;
use rustls::pki_types::ServerName;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};
use url::Url;

/// Longest wait for a TCP connection to open, as the blocking client's.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The token of the waker (`submit`, `close`).
const WAKER: Token = Token(usize::MAX);
/// Events read per `poll`.
const EVENTS: usize = 1024;

/// One GET for the reactor, made by `Fetcher::reactor_job`; `token` comes back with its answer.
pub struct Job<T> {
    pub token: T,
    pub url: Url,
    pub(crate) origin: String,
    pub(crate) addrs: Addrs,
    /// For `https`: the server's name, for SNI and the certificate's check.
    pub(crate) tls: Option<ServerName<'static>>,
    pub(crate) request_head: Vec<u8>,
    /// The body is read only if `BodyRule` wants it (pages; not robots.txt).
    pub(crate) filtered: bool,
    pub(crate) start: Instant,
    pub(crate) started: SystemTime,
    pub(crate) deadline: Instant,
}

/// A job's answer: its token, its URL, the response or the failure.
pub type Answer<T> = (T, Url, Result<Response, FetchError>);

/// The reactor's inbox and waker; `run` is its loop, on a thread of its own.
pub struct Reactor<T> {
    inbox: Mutex<Vec<Job<T>>>,
    waker: Waker,
    poll: Mutex<Option<Poll>>,
    closing: AtomicBool,
    /// Set (under the inbox's lock) once the poll failed: the loop then waits on
    /// `inbox_changed` for jobs and the close, which `submit` and `close` wake it through.
    broken: AtomicBool,
    /// Set (under the inbox's lock) when `run` returns: a job submitted after it would never
    /// be answered, so `try_submit` gives it back.
    ended: AtomicBool,
    inbox_changed: Condvar,
    /// A failure the next `poll` returns instead of its own (`fail_next_poll`).
    #[cfg(test)]
    poll_fault: Mutex<Option<io::Error>>,
}

/// Where a slot's request is.
enum Phase {
    /// Connecting to `addrs[next_addr - 1]`.
    Connecting(mio::net::TcpStream),
    /// Connected; the TLS handshake under way (`conn` is set).
    Handshaking,
    /// The request written; reading its response (`conn` is set).
    Reading,
}

/// A request in flight.
struct Slot<T> {
    job: Job<T>,
    phase: Phase,
    conn: Option<Connection>,
    /// The next address to try when a connect fails.
    next_addr: usize,
    /// On a kept connection: a stale failure is sent again on a new one, once.
    reused: bool,
    /// The connect's, or the next byte's, deadline (the job's own is `job.deadline`).
    io_deadline: Instant,
    /// The instant of this slot's entry in the timer heap.
    timer: Instant,
    /// What the slot's socket is registered for with the poll; None while it is not.
    interest: Option<Interest>,
    /// Bytes to read before the response is parsed again (`Fail::pending`).
    short: usize,
    last_fail: Option<Fail>,
}

impl<T> Slot<T> {
    fn due(&self) -> Instant {
        self.job.deadline.min(self.io_deadline)
    }
}

impl<T: Send> Reactor<T> {
    pub fn new() -> io::Result<Reactor<T>> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        Ok(Reactor {
            inbox: Mutex::new(Vec::new()),
            waker,
            poll: Mutex::new(Some(poll)),
            closing: AtomicBool::new(false),
            broken: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            inbox_changed: Condvar::new(),
            #[cfg(test)]
            poll_fault: Mutex::new(None),
        })
    }

    /// Queues a job; the loop is woken if it may be waiting.
    pub fn submit(&self, job: Job<T>) {
        let submitted = self.try_submit(job);
        debug_assert!(submitted.is_ok(), "a job submitted after the loop ended");
    }

    /// `submit`, or the job back once the loop has ended (after `close`): for a caller that
    /// may still be processing answers then (a robots.txt's redirect, `crawl::worker`).
    pub fn try_submit(&self, job: Job<T>) -> Result<(), Box<Job<T>>> {
        let (first, broken) = {
            let mut inbox = self.inbox.lock().unwrap();
            if self.ended.load(Ordering::SeqCst) {
                return Err(Box::new(job));
            }
            inbox.push(job);
            (inbox.len() == 1, self.broken.load(Ordering::SeqCst))
        };
        if first && broken {
            self.inbox_changed.notify_one();
        } else if first {
            let _ = self.waker.wake();
        }
        Ok(())
    }

    /// Ends `run` once every job submitted has been answered.
    pub fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
        // Taken so that a loop that saw no close yet is waiting, and hears this one.
        let _inbox = self.inbox.lock().unwrap();
        self.inbox_changed.notify_all();
    }

    /// The loop: until `close` and nothing in flight. The answers go to `deliver` in batches
    /// (see the module doc), which takes them out of the vector it is given.
    ///
    /// A poll that fails (but for `EINTR`) leaves nothing to wait with: `poll_failed` is told
    /// once, so that the caller stops submitting; every job in flight is answered with the
    /// failure (`io`), and so is every job submitted until `close`, as it comes; the loop's
    /// result is then the poll's error.
    pub fn run(
        &self,
        fetcher: &Fetcher,
        deliver: &dyn Fn(&mut Vec<Answer<T>>),
        poll_failed: &dyn Fn(&io::Error),
    ) -> io::Result<()> {
        let mut poll = (self.poll.lock().unwrap().take()).expect("one loop per reactor");
        let mut events = Events::with_capacity(EVENTS);
        let mut lp = Loop {
            fetcher,
            deliver,
            slots: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            active: 0,
            answers: Vec::new(),
        };
        loop {
            let jobs = std::mem::take(&mut *self.inbox.lock().unwrap());
            for job in jobs {
                lp.start(&poll, job);
            }
            let timeout = lp.expire(&poll);
            lp.hand_over();
            if lp.active == 0 && self.closing.load(Ordering::SeqCst) {
                let inbox = self.inbox.lock().unwrap();
                if inbox.is_empty() {
                    self.ended.store(true, Ordering::SeqCst);
                    return Ok(());
                }
            }
            let polled = poll.poll(&mut events, timeout);
            #[cfg(test)]
            let polled = match self.poll_fault.lock().unwrap().take() {
                Some(fault) => Err(fault),
                None => polled,
            };
            match polled {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    poll_failed(&e);
                    lp.fail_all(&poll, &e);
                    return self.refuse_until_close(&mut lp, e);
                }
            }
            for event in events.iter() {
                if event.token() != WAKER {
                    lp.ready(&poll, event.token().0);
                }
            }
        }
    }

    /// After the poll failed with `e` (nothing in flight any more): each job submitted is
    /// answered at once with that failure, until `close`; then `e` is the loop's result.
    fn refuse_until_close(&self, lp: &mut Loop<'_, T>, e: io::Error) -> io::Result<()> {
        let mut inbox = self.inbox.lock().unwrap();
        self.broken.store(true, Ordering::SeqCst);
        loop {
            let jobs = std::mem::take(&mut *inbox);
            drop(inbox);
            for job in jobs {
                let fail = poll_failure(&e).into_error(job.start);
                lp.answers.push((job.token, job.url, Err(fail)));
            }
            lp.hand_over();
            inbox = self.inbox.lock().unwrap();
            // Read under the lock `close` takes to notify: a close is seen here, or heard.
            if inbox.is_empty() {
                if self.closing.load(Ordering::SeqCst) {
                    self.ended.store(true, Ordering::SeqCst);
                    return Err(e);
                }
                inbox = self.inbox_changed.wait(inbox).unwrap();
            }
        }
    }

    /// Makes the next `poll` fail with `fault`, and wakes the loop for it.
    #[cfg(test)]
    fn fail_next_poll(&self, fault: io::Error) {
        *self.poll_fault.lock().unwrap() = Some(fault);
        let _ = self.waker.wake();
    }
}

/// A job's failure when the poll failed with `e`.
fn poll_failure(e: &io::Error) -> Fail {
    Fail::new(ErrorKind::Io, format!("the event loop's poll failed: {e}"))
}

/// The loop's state.
struct Loop<'a, T> {
    fetcher: &'a Fetcher,
    deliver: &'a dyn Fn(&mut Vec<Answer<T>>),
    slots: Vec<Option<Slot<T>>>,
    free: Vec<usize>,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    active: usize,
    /// This turn's answers, handed to `deliver` before the loop waits again.
    answers: Vec<Answer<T>>,
}

impl<T> Loop<'_, T> {
    /// A new job: on a kept connection if its origin has a quiet one, else a new one.
    fn start(&mut self, poll: &Poll, job: Job<T>) {
        let now = Instant::now();
        let kept = (self.fetcher.pool().take_at(&job.origin, now))
            .and_then(|mut conn| conn.set_nonblocking().ok().map(|()| conn));
        let slot = Slot {
            phase: Phase::Reading,
            conn: None,
            next_addr: 0,
            reused: kept.is_some(),
            io_deadline: now + CONNECT_TIMEOUT,
            timer: now,
            interest: None,
            short: 1,
            last_fail: None,
            job,
        };
        let at = match self.free.pop() {
            Some(at) => at,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.active += 1;
        self.slots[at] = Some(slot);
        match kept {
            Some(conn) => self.send(poll, at, conn),
            None => self.connect(poll, at),
        }
        if let Some(slot) = self.slots[at].as_mut() {
            slot.timer = slot.due();
            self.timers.push(Reverse((slot.timer, at)));
        }
    }

    /// Starts a connect to the slot's next address; with none left, the job fails.
    fn connect(&mut self, poll: &Poll, at: usize) {
        let slot = self.slots[at].as_mut().expect("a live slot");
        if Instant::now() >= slot.job.deadline {
            let fail = Fail::new(ErrorKind::Timeout, "the request took longer than --timeout");
            return self.finish(poll, at, fail);
        }
        while let Some(&addr) = slot.job.addrs.get(slot.next_addr) {
            slot.next_addr += 1;
            match mio::net::TcpStream::connect(addr) {
                Ok(mut tcp) => {
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    if let Err(e) = poll.registry().register(&mut tcp, Token(at), interest) {
                        slot.last_fail = Some(Fail::io(&e, "polling the connection"));
                        continue;
                    }
                    slot.interest = Some(interest);
                    slot.phase = Phase::Connecting(tcp);
                    slot.io_deadline = Instant::now() + CONNECT_TIMEOUT;
                    return;
                }
                Err(e) => slot.last_fail = Some(connect_fail(addr, &e)),
            }
        }
        let fail =
            (slot.last_fail.take()).unwrap_or_else(|| Fail::new(ErrorKind::Dns, "no address"));
        self.finish(poll, at, fail)
    }

    /// Writes the request on `conn` (registered here for reads, and for writes while TLS
    /// records wait: `watch`) and waits for its answer.
    fn send(&mut self, poll: &Poll, at: usize, mut conn: Connection) {
        let slot = self.slots[at].as_mut().expect("a live slot");
        let registered = watch(poll, at, &mut slot.interest, &conn, Interest::READABLE);
        // A plain request head fits an idle socket's send buffer: written whole at once, or
        // failed. Under TLS, what the socket does not take waits for it to be writable.
        let sent = registered.and_then(|()| conn.send(&slot.job.request_head));
        let sent =
            sent.and_then(|()| watch(poll, at, &mut slot.interest, &conn, interest_of(&conn)));
        match sent {
            Ok(()) => {
                slot.io_deadline = Instant::now() + PER_READ;
                slot.phase = Phase::Reading;
                slot.short = 1;
                slot.conn = Some(conn);
            }
            Err(fail) => {
                slot.conn = Some(conn);
                self.failed(poll, at, fail);
            }
        }
    }

    /// Connected to `addr` for an `https` job: the TLS handshake begins on `conn`.
    fn handshake_begin(
        &mut self,
        poll: &Poll,
        at: usize,
        tcp: std::net::TcpStream,
        addr: SocketAddr,
    ) {
        let fetcher = self.fetcher;
        let slot = self.slots[at].as_mut().expect("a live slot");
        let name = slot.job.tls.clone().expect("an https job");
        let session = match fetcher.tls_session(name) {
            Ok(session) => session,
            Err(fail) => return self.finish(poll, at, fail),
        };
        let tls = StreamOwned::new(session, Stream::Tcp(tcp));
        let mut conn = Connection::new(Stream::Tls(Box::new(tls)), Some(addr.ip()), None);
        if let Err(e) = conn.set_nonblocking() {
            return self.finish(poll, at, Fail::io(&e, "setting up the connection"));
        }
        slot.conn = Some(conn);
        slot.phase = Phase::Handshaking;
        slot.io_deadline = Instant::now() + PER_READ;
        self.handshake(poll, at);
    }

    /// The TLS handshake as far as it goes now: done, the request is sent; else the socket
    /// is watched for what rustls waits for (bytes to read, room to write).
    fn handshake(&mut self, poll: &Poll, at: usize) {
        let slot = self.slots[at].as_mut().expect("a live slot");
        let Some(conn) = slot.conn.as_mut() else {
            return;
        };
        let step = conn.handshake().and_then(|step| match step {
            Handshake::Done => Ok(step),
            Handshake::Waiting { .. } => {
                watch(poll, at, &mut slot.interest, conn, interest_of(conn)).map(|()| step)
            }
        });
        match step {
            Ok(Handshake::Done) => {
                let conn = slot.conn.take().expect("set above");
                self.send(poll, at, conn);
            }
            Ok(Handshake::Waiting { heard }) => {
                if heard {
                    slot.io_deadline = Instant::now() + PER_READ;
                }
            }
            // A fresh connection: not worth another.
            Err(fail) => self.finish(poll, at, fail),
        }
    }

    /// A readiness event on slot `at`.
    fn ready(&mut self, poll: &Poll, at: usize) {
        let Some(slot) = self.slots.get_mut(at).and_then(Option::as_mut) else {
            return;
        };
        match &mut slot.phase {
            Phase::Connecting(tcp) => {
                let addr = slot.job.addrs[slot.next_addr - 1];
                match tcp.take_error() {
                    Ok(None) => {}
                    Ok(Some(e)) | Err(e) => {
                        slot.last_fail = Some(connect_fail(addr, &e));
                        return self.retry_connect(poll, at);
                    }
                }
                match tcp.peer_addr() {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => return,
                    Err(e) => {
                        slot.last_fail = Some(connect_fail(addr, &e));
                        return self.retry_connect(poll, at);
                    }
                }
                let Phase::Connecting(tcp) = std::mem::replace(&mut slot.phase, Phase::Reading)
                else {
                    unreachable!("matched above")
                };
                // Still registered: for reads only from here (`send`).
                // SAFETY: the descriptor comes from `into_raw_fd`, which gives up its ownership:
                // the std stream is its one owner from here.
                let tcp = unsafe { std::net::TcpStream::from_raw_fd(tcp.into_raw_fd()) };
                let _ = tcp.set_nodelay(true);
                crate::sys::stamp_arrivals(&tcp);
                if slot.job.tls.is_some() {
                    return self.handshake_begin(poll, at, tcp, addr);
                }
                let mut conn = Connection::new(Stream::Tcp(tcp), Some(addr.ip()), None);
                match conn.set_nonblocking() {
                    Ok(()) => self.send(poll, at, conn),
                    Err(e) => self.finish(poll, at, Fail::io(&e, "setting up the connection")),
                }
            }
            Phase::Handshaking => self.handshake(poll, at),
            Phase::Reading => {
                // TLS records the socket could not take before (the request's end, a key
                // update's answer) go first.
                let flushed = match slot.conn.as_mut() {
                    Some(conn) if conn.wants_write() => conn.flush_tls(),
                    _ => Ok(()),
                };
                match flushed {
                    Ok(()) => self.read(poll, at),
                    Err(fail) => self.failed(poll, at, fail),
                }
            }
        }
    }

    /// The connect to the slot's current address failed: the next one, if any.
    fn retry_connect(&mut self, poll: &Poll, at: usize) {
        let slot = self.slots[at].as_mut().expect("a live slot");
        if let Phase::Connecting(mut tcp) = std::mem::replace(&mut slot.phase, Phase::Reading) {
            let _ = poll.registry().deregister(&mut tcp);
            slot.interest = None;
        }
        self.connect(poll, at);
    }

    /// Bytes (or the end) came on a reading slot: parsed once enough came for the next step.
    fn read(&mut self, poll: &Poll, at: usize) {
        let fetcher = self.fetcher;
        let slot = self.slots[at].as_mut().expect("a live slot");
        let Some(conn) = slot.conn.as_mut() else {
            return;
        };
        let (got, ended) = conn.read_more(slot.short);
        if got > 0 {
            slot.io_deadline = Instant::now() + PER_READ;
        }
        if got < slot.short && !ended {
            slot.short -= got;
            if let Err(fail) = watch(poll, at, &mut slot.interest, conn, interest_of(conn)) {
                self.failed(poll, at, fail);
            }
            return;
        }
        conn.begin_attempt();
        let parsed = fetcher.receive(conn, &slot.job.url, slot.job.filtered, slot.job.deadline);
        match parsed {
            Err(Fail {
                pending: Some(short),
                ..
            }) => {
                conn.rollback();
                slot.short = short;
                // A record read may have asked for one written (TLS): watched for room.
                if let Err(fail) = watch(poll, at, &mut slot.interest, conn, interest_of(conn)) {
                    self.failed(poll, at, fail);
                }
            }
            Err(fail) => {
                conn.end_attempt();
                self.failed(poll, at, fail);
            }
            Ok((raw, reuse)) => {
                conn.end_attempt();
                let elapsed = conn
                    .round_trip()
                    .unwrap_or_else(|| slot.job.start.elapsed());
                let elapsed = elapsed.min(slot.job.start.elapsed());
                let head = std::mem::take(&mut slot.job.request_head);
                let response = raw.into_response_took(head, slot.job.started, elapsed);
                let conn = (reuse).then(|| slot.conn.take()).flatten();
                if let Some(conn) = conn {
                    deregister(poll, &mut slot.interest, &conn);
                    let origin = std::mem::take(&mut slot.job.origin);
                    self.fetcher.pool().put(origin, conn);
                }
                self.deliver(poll, at, Ok(response));
            }
        }
    }

    /// A failure on slot `at`: a stale kept connection is replaced once by a new one, the
    /// request sent again; anything else ends the job.
    fn failed(&mut self, poll: &Poll, at: usize, fail: Fail) {
        let slot = self.slots[at].as_mut().expect("a live slot");
        if fail.stale && slot.reused {
            slot.reused = false;
            if let Some(conn) = slot.conn.take() {
                deregister(poll, &mut slot.interest, &conn);
            }
            return self.connect(poll, at);
        }
        self.finish(poll, at, fail)
    }

    /// Ends slot `at` with a failure.
    fn finish(&mut self, poll: &Poll, at: usize, fail: Fail) {
        let start = self.slots[at].as_ref().expect("a live slot").job.start;
        self.deliver(poll, at, Err(fail.into_error(start)));
    }

    /// Queues slot `at`'s answer for this turn's batch, and frees the slot.
    fn deliver(&mut self, poll: &Poll, at: usize, answer: Result<Response, FetchError>) {
        let slot = self.release(poll, at);
        if let Some(slot) = slot {
            self.answers.push((slot.job.token, slot.job.url, answer));
        }
    }

    /// Frees slot `at`, closing what it still holds.
    fn release(&mut self, poll: &Poll, at: usize) -> Option<Slot<T>> {
        let mut slot = self.slots[at].take()?;
        if let Phase::Connecting(tcp) = &mut slot.phase {
            let _ = poll.registry().deregister(tcp);
        }
        if let Some(conn) = slot.conn.take() {
            deregister(poll, &mut slot.interest, &conn);
        }
        self.free.push(at);
        self.active -= 1;
        Some(slot)
    }

    /// The poll failed with `e`: every slot ends with that failure, queued and delivered.
    fn fail_all(&mut self, poll: &Poll, e: &io::Error) {
        for at in 0..self.slots.len() {
            if self.slots[at].is_some() {
                self.finish(poll, at, poll_failure(e));
            }
        }
        self.timers.clear();
        self.hand_over();
    }

    /// Hands this turn's answers to `deliver`, in one batch.
    fn hand_over(&mut self) {
        if !self.answers.is_empty() {
            (self.deliver)(&mut self.answers);
            self.answers.clear();
        }
    }

    /// Fails the slots whose time is up; the wait until the next timer.
    fn expire(&mut self, poll: &Poll) -> Option<Duration> {
        let now = Instant::now();
        while let Some(&Reverse((when, at))) = self.timers.peek() {
            if when > now {
                return Some(when - now + Duration::from_millis(1));
            }
            self.timers.pop();
            let Some(slot) = self.slots[at].as_mut() else {
                continue;
            };
            if slot.timer != when {
                continue;
            }
            let due = slot.due();
            if due > now {
                slot.timer = due;
                self.timers.push(Reverse((due, at)));
                continue;
            }
            let fail = match (&slot.phase, now >= slot.job.deadline) {
                (_, true) => {
                    Fail::new(ErrorKind::Timeout, "the request took longer than --timeout")
                }
                (Phase::Connecting(_), false) => {
                    let addr = slot.job.addrs[slot.next_addr - 1];
                    slot.last_fail = Some(Fail::new(
                        ErrorKind::Timeout,
                        format!("connecting to {addr}: timed out"),
                    ));
                    self.retry_connect(poll, at);
                    if let Some(slot) = self.slots[at].as_mut() {
                        slot.timer = slot.due();
                        self.timers.push(Reverse((slot.timer, at)));
                    }
                    continue;
                }
                (Phase::Handshaking, false) => Fail::new(
                    ErrorKind::Timeout,
                    format!("TLS handshake: no byte for {PER_READ:?}"),
                ),
                (Phase::Reading, false) => {
                    Fail::new(ErrorKind::Timeout, format!("no byte for {PER_READ:?}"))
                }
            };
            self.finish(poll, at, fail);
        }
        None
    }
}

/// Takes `conn`'s socket out of the poll (`registered`: what it was registered for).
fn deregister(poll: &Poll, registered: &mut Option<Interest>, conn: &Connection) {
    if let Some(fd) = conn.fd() {
        let _ = poll.registry().deregister(&mut SourceFd(&fd));
    }
    *registered = None;
}

/// What `conn` waits for: bytes to read, and room to write while TLS records wait for it.
fn interest_of(conn: &Connection) -> Interest {
    match conn.wants_write() {
        true => Interest::READABLE | Interest::WRITABLE,
        false => Interest::READABLE,
    }
}

/// Registers `conn`'s socket, slot `at`'s, for `interest`, `registered` being what it is
/// registered for now (a system call only when that changes).
fn watch(
    poll: &Poll,
    at: usize,
    registered: &mut Option<Interest>,
    conn: &Connection,
    interest: Interest,
) -> Result<(), Fail> {
    if *registered == Some(interest) {
        return Ok(());
    }
    let Some(fd) = conn.fd() else {
        return Err(Fail::new(ErrorKind::Io, "not a socket"));
    };
    let (registry, source) = (poll.registry(), &mut SourceFd(&fd));
    match registered {
        Some(_) => registry.reregister(source, Token(at), interest),
        None => registry.register(source, Token(at), interest),
    }
    .map_err(|e| Fail::io(&e, "polling the connection"))?;
    *registered = Some(interest);
    Ok(())
}

/// A failed connect to `addr`, as the blocking client words it.
fn connect_fail(addr: SocketAddr, e: &io::Error) -> Fail {
    let kind = match e.kind() {
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        _ => ErrorKind::Connect,
    };
    Fail::new(kind, format!("connecting to {addr}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::client::FetchConfig;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A server that answers `requests` requests on the one connection it accepts, each
    /// response chunked and written in pieces.
    fn server(requests: usize) -> (SocketAddr, std::thread::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let serving = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut answered = 0;
            for _ in 0..requests {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if socket.read(&mut byte).unwrap() == 0 {
                        return answered;
                    }
                    head.push(byte[0]);
                }
                for piece in [
                    &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
                    b"5\r\nhel",
                    b"lo\r\n0\r\n\r\n",
                ] {
                    socket.write_all(piece).unwrap();
                    socket.flush().unwrap();
                }
                answered += 1;
            }
            answered
        });
        (addr, serving)
    }

    /// Runs `reactor`'s loop, each answer sent to `tx`, until it is closed.
    fn run_into<T: Send>(
        reactor: &Reactor<T>,
        fetcher: &Fetcher,
        tx: std::sync::mpsc::Sender<Answer<T>>,
    ) -> io::Result<()> {
        run_told(reactor, fetcher, tx, &|e| panic!("the poll failed: {e}"))
    }

    /// `run_into`, a failed poll told to `poll_failed`.
    fn run_told<T: Send>(
        reactor: &Reactor<T>,
        fetcher: &Fetcher,
        tx: std::sync::mpsc::Sender<Answer<T>>,
        poll_failed: &dyn Fn(&io::Error),
    ) -> io::Result<()> {
        let deliver = |answers: &mut Vec<Answer<T>>| {
            answers
                .drain(..)
                .for_each(|answer| tx.send(answer).unwrap())
        };
        reactor.run(fetcher, &deliver, poll_failed)
    }

    #[test]
    fn responses_in_pieces_are_read_whole_and_the_connection_is_kept() {
        let (addr, serving) = server(2);
        let fetcher = Fetcher::new(&FetchConfig::loopback("test"));
        let reactor = Reactor::<u32>::new().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let running = scope.spawn(|| run_into(&reactor, &fetcher, tx));
            for token in 0..2 {
                let url = Url::parse(&format!("http://{addr}/page")).unwrap();
                let job = fetcher.reactor_job(token, url, &[], true);
                reactor.submit(job.expect("for the reactor").map_err(|e| e.2).unwrap());
                let (got, _, answer) = rx.recv().unwrap();
                let response = answer.unwrap();
                assert_eq!((got, response.status), (token, 200));
                assert_eq!(response.body, b"hello");
            }
            reactor.close();
            running.join().unwrap().unwrap();
        });
        // Both requests on the one connection the server accepted.
        assert_eq!(serving.join().unwrap(), 2);
    }

    /// A job submitted once the loop has ended (after `close`) would never be answered: it is
    /// given back, not queued.
    #[test]
    fn a_job_submitted_after_the_loop_ended_is_given_back() {
        let fetcher = Fetcher::new(&FetchConfig::loopback("test"));
        let reactor = Reactor::<u32>::new().unwrap();
        let (tx, _rx) = std::sync::mpsc::channel();
        let job = |token| {
            let url = Url::parse("http://127.0.0.1:9/robots.txt").unwrap();
            let job = fetcher.reactor_job(token, url, &[], false);
            job.expect("for the reactor").map_err(|e| e.2).unwrap()
        };
        std::thread::scope(|scope| {
            let running = scope.spawn(|| run_into(&reactor, &fetcher, tx));
            reactor.close();
            running.join().unwrap().unwrap();
        });
        let given_back = reactor.try_submit(job(7)).expect_err("the loop has ended");
        assert_eq!(given_back.token, 7);
        assert!(
            reactor.inbox.lock().unwrap().is_empty(),
            "queued for nobody"
        );
    }

    /// Fetches `urls` on a reactor, one after another: their answers.
    fn fetch_in_turn(fetcher: &Fetcher, urls: &[String]) -> Vec<Result<Response, FetchError>> {
        let reactor = Reactor::<usize>::new().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let running = scope.spawn(|| run_into(&reactor, fetcher, tx));
            let answers = (urls.iter().enumerate())
                .map(|(token, url)| {
                    let job = fetcher.reactor_job(token, Url::parse(url).unwrap(), &[], true);
                    reactor.submit(job.expect("for the reactor").map_err(|e| e.2).unwrap());
                    let (got, _, answer) = rx.recv().unwrap();
                    assert_eq!(got, token);
                    answer
                })
                .collect();
            reactor.close();
            running.join().unwrap().unwrap();
            answers
        })
    }

    /// A fetcher that trusts `server`'s CA (`--ca-cert`).
    fn trusting(server: &testweb::tls::TlsServer) -> Fetcher {
        let roots = crate::fetch::tls::pem_certificates(server.ca_pem().as_bytes());
        Fetcher::new(&FetchConfig {
            extra_roots: roots.unwrap(),
            ..FetchConfig::loopback("test")
        })
    }

    /// HTTPS on the loop: the handshake, a body of many TLS records, and the connection kept
    /// in the pool the threads share: a thread that blocks takes the loop's TLS connection,
    /// and the loop takes it back, one connection for all.
    #[test]
    fn https_is_fetched_on_the_loop_and_its_connection_kept_for_both_paths() {
        let big = "x".repeat(200_000);
        let page = big.clone();
        let server =
            testweb::tls::TlsServer::start_keep_alive(move |req| match req.target.as_str() {
                "/big" => testweb::Response::html(page.clone()),
                _ => testweb::Response::html("hi"),
            });
        let fetcher = trusting(&server);
        let url = |path: &str| format!("{}{path}", server.origin());
        let answers = fetch_in_turn(&fetcher, &[url("/a"), url("/big"), url("/c")]);
        let bodies: Vec<Vec<u8>> = (answers.into_iter())
            .map(|answer| answer.unwrap().body)
            .collect();
        assert_eq!(bodies, [b"hi".to_vec(), big.into_bytes(), b"hi".to_vec()]);
        assert_eq!(server.connections(), 1, "one connection for three requests");
        // Kept by the loop, taken by a thread that blocks.
        assert_eq!(fetcher.get(&url("/d")).unwrap().body, b"hi");
        // Kept by the thread, taken by the loop.
        let answers = fetch_in_turn(&fetcher, &[url("/e")]);
        assert_eq!(answers[0].as_ref().unwrap().body, b"hi");
        assert_eq!(server.connections(), 1, "one connection for five requests");
        let events = fetcher.events();
        let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        assert_eq!(
            (load(&events.unsolicited), load(&events.closed_idle)),
            (0, 0)
        );
    }

    /// A certificate no root vouches for fails the handshake on the loop as on a thread that
    /// blocks: the same kind (`tls`) and message; `--insecure` and a name the certificate has
    /// (SNI `localhost`) pass.
    #[test]
    fn a_refused_certificate_fails_on_the_loop_as_on_a_thread() {
        let server = testweb::tls::TlsServer::start(|_| testweb::Response::html("hi"));
        let url = format!("{}/", server.origin());
        let untrusting = Fetcher::new(&FetchConfig::loopback("test"));
        let on_loop = fetch_in_turn(&untrusting, std::slice::from_ref(&url));
        let on_loop = on_loop.into_iter().next().unwrap().expect_err("refused");
        let blocking = untrusting.get(&url).expect_err("refused");
        assert_eq!(on_loop.kind, ErrorKind::Tls, "{on_loop:?}");
        assert_eq!(
            (on_loop.kind, &on_loop.message),
            (blocking.kind, &blocking.message)
        );
        assert!(
            on_loop.message.starts_with("TLS handshake: "),
            "{on_loop:?}"
        );
        assert!(server.requests().is_empty());
        let insecure = Fetcher::new(&FetchConfig {
            insecure: true,
            ..FetchConfig::loopback("test")
        });
        let answers = fetch_in_turn(&insecure, std::slice::from_ref(&url));
        assert_eq!(answers[0].as_ref().unwrap().body, b"hi");
        let by_name = url.replace("127.0.0.1", "localhost");
        let answers = fetch_in_turn(&trusting(&server), &[by_name]);
        assert_eq!(answers[0].as_ref().unwrap().body, b"hi");
    }

    /// A server that accepts and never speaks: the handshake ends at `--timeout`.
    #[test]
    fn a_silent_server_times_out_the_handshake() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let fetcher = Fetcher::new(&FetchConfig {
            timeout: Duration::from_millis(300),
            ..FetchConfig::loopback("test")
        });
        let answers = fetch_in_turn(&fetcher, &[format!("https://{addr}/")]);
        let fail = answers.into_iter().next().unwrap().expect_err("a timeout");
        assert_eq!(fail.kind, ErrorKind::Timeout, "{fail:?}");
        drop(listener);
    }

    /// Requests a test server's handler holds unanswered until released (10 s at most).
    #[derive(Default)]
    struct Held {
        /// Requests held so far; whether released.
        state: Mutex<(usize, bool)>,
        changed: Condvar,
    }

    impl Held {
        /// In the handler: counts the request and waits for the release.
        fn hold(&self) {
            let mut state = self.state.lock().unwrap();
            state.0 += 1;
            self.changed.notify_all();
            let wait = Duration::from_secs(10);
            drop(
                self.changed
                    .wait_timeout_while(state, wait, |(_, released)| !*released),
            );
        }

        /// Whether `n` requests came to be held within 10 s.
        fn came(&self, n: usize) -> bool {
            let state = self.state.lock().unwrap();
            let wait = Duration::from_secs(10);
            let state = self
                .changed
                .wait_timeout_while(state, wait, |(held, _)| *held < n);
            state.unwrap().0.0 >= n
        }

        fn release(&self) {
            self.state.lock().unwrap().1 = true;
            self.changed.notify_all();
        }
    }

    /// Closes a reactor when dropped.
    struct Closing<'a, T: Send>(&'a Reactor<T>);

    impl<T: Send> Drop for Closing<'_, T> {
        fn drop(&mut self) {
            self.0.close();
        }
    }

    /// A poll that fails (not interrupted) leaves nothing to wait with: each request in flight
    /// is answered once with the failure (`io`), and so is one submitted after it; the caller
    /// is told once, and at `close` the loop ends with the poll's error. The loop runs on a
    /// thread of its own, waited for with a deadline, so a loop that never ends fails the test.
    #[test]
    fn a_failed_poll_answers_every_job_once_and_ends_the_loop_with_its_error() {
        use std::sync::{Arc, mpsc};
        let held = Arc::new(Held::default());
        let holding = Arc::clone(&held);
        let web = testweb::TestWeb::start(vec![testweb::HostSpec::new(move |_| {
            holding.hold();
            testweb::Response::html("too late")
        })])
        .unwrap();
        let fetcher = Arc::new(Fetcher::new(&FetchConfig::loopback("test")));
        let reactor = Arc::new(Reactor::<usize>::new().unwrap());
        let (tx, rx) = mpsc::channel::<Answer<usize>>();
        let (told, heard) = mpsc::channel();
        let (ended, end) = mpsc::channel();
        let running = {
            let (reactor, fetcher) = (Arc::clone(&reactor), Arc::clone(&fetcher));
            std::thread::spawn(move || {
                let poll_failed = |e: &io::Error| told.send(e.to_string()).unwrap();
                let ran = run_told(&reactor, &fetcher, tx, &poll_failed);
                ended.send(ran.map_err(|e| e.to_string())).unwrap();
            })
        };
        // The loop is closed however the test ends, and so ends by itself.
        let closing = Closing(&reactor);
        let submit = |token: usize| {
            let url = Url::parse(&web.url(0, &format!("/{token}"))).unwrap();
            let job = fetcher.reactor_job(token, url, &[], true);
            reactor.submit(job.expect("for the reactor").map_err(|e| e.2).unwrap());
        };
        let within = Duration::from_secs(10);
        let next = || {
            let (token, _, answer) = rx.recv_timeout(within).expect("answered");
            let fail = answer.expect_err("a failure");
            assert_eq!(fail.kind, ErrorKind::Io, "{fail:?}");
            assert!(fail.message.ends_with("poll failed: injected"), "{fail:?}");
            token
        };
        (0..3).for_each(submit);
        assert!(held.came(3), "three requests in flight");
        reactor.fail_next_poll(io::Error::other("injected"));
        let mut in_flight: Vec<usize> = (0..3).map(|_| next()).collect();
        in_flight.sort_unstable();
        assert_eq!(in_flight, [0, 1, 2]);
        // Submitted after the failure: answered as it comes.
        submit(3);
        assert_eq!(next(), 3);
        drop(closing);
        let ran = end.recv_timeout(within).expect("the loop ended at close");
        assert_eq!(ran, Err("injected".to_owned()));
        running.join().unwrap();
        assert_eq!(heard.try_iter().collect::<Vec<_>>(), ["injected"]);
        assert_eq!(rx.try_iter().count(), 0, "each job answered once");
        held.release();
    }

    /// A handler that closes the connection without a byte instead of answering the second
    /// request it reads (the first on the connection kept after the first answer), and
    /// answers "hi" to every other.
    fn closing_the_second_unanswered()
    -> impl Fn(&testweb::Request) -> testweb::Response + Send + Sync + 'static {
        let read = std::sync::atomic::AtomicUsize::new(0);
        move |_| match read.fetch_add(1, Ordering::Relaxed) {
            1 => testweb::Response::raw(200, Vec::new()),
            _ => testweb::Response::html("hi"),
        }
    }

    /// `/a` then `/b` from `origin` on the loop, its server `closing_the_second_unanswered`:
    /// `/b`'s request, written on the connection kept after `/a`, finds it stale (not the
    /// pool's check of an idle connection: the server closed it once the request came), and is
    /// sent once more on a new connection, which answers it.
    fn stale_is_sent_again(fetcher: &Fetcher, origin: &str) {
        let urls = [format!("{origin}/a"), format!("{origin}/b")];
        for answer in fetch_in_turn(fetcher, &urls) {
            assert_eq!(answer.unwrap().body, b"hi");
        }
        let events = fetcher.events();
        assert_eq!(events.closed_idle.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_kept_connection_closed_unanswered_is_replaced_on_the_loop() {
        let web =
            testweb::TestWeb::start(vec![
                testweb::HostSpec::new(closing_the_second_unanswered()),
            ])
            .unwrap();
        let fetcher = Fetcher::new(&FetchConfig::loopback("test"));
        stale_is_sent_again(&fetcher, &web.origin(0));
        let targets: Vec<String> = web.log().into_iter().map(|entry| entry.target).collect();
        assert_eq!(targets, ["/a", "/b", "/b"]);
    }

    #[test]
    fn a_kept_tls_connection_closed_unanswered_is_replaced_on_the_loop() {
        let server = testweb::tls::TlsServer::start_keep_alive(closing_the_second_unanswered());
        stale_is_sent_again(&trusting(&server), &server.origin());
        let targets: Vec<String> = (server.requests().into_iter())
            .map(|request| request.target)
            .collect();
        assert_eq!(targets, ["/a", "/b", "/b"]);
        assert_eq!(
            server.connections(),
            2,
            "the kept one, and one for /b again"
        );
    }

    #[test]
    fn a_refused_connection_is_a_connect_failure() {
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let fetcher = Fetcher::new(&FetchConfig::loopback("test"));
        let reactor = Reactor::<()>::new().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let running = scope.spawn(|| run_into(&reactor, &fetcher, tx));
            let url = Url::parse(&format!("http://{addr}/")).unwrap();
            let job = fetcher.reactor_job((), url, &[], true);
            reactor.submit(job.expect("for the reactor").map_err(|e| e.2).unwrap());
            let (_, _, answer) = rx.recv().unwrap();
            assert_eq!(answer.err().map(|e| e.kind), Some(ErrorKind::Connect));
            reactor.close();
            running.join().unwrap().unwrap();
        });
    }
}
