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
//! Names: the job is made by `Fetcher::reactor_job`, which never waits for DNS, so that no
//! thread processing pages waits for a slow or dead name's server. A name the look-ahead
//! resolver's cache answers comes with its addresses, checked against the address policy
//! there; any other comes with its look-up, started or joined on the resolver's look-up
//! threads (`dns::CachingResolver::resolve_or_start`), and its job is parked here
//! (`Phase::Resolving`: no socket, its only timer the job's deadline) until the look-up's
//! thread says the answer came (`Wake::looked_up`, which wakes the loop). The loop then takes
//! the answer through the policy (`Fetcher::resolved`) and connects, or ends the job with the
//! failure `reactor_job` would have given at once (`dns`, `private-address`, the same
//! messages); past `--timeout` first, with the look-up's timeout, as a thread that waits for it
//! words it. No look-up runs in this loop, and none is waited for.
//!
//! What it shares with the blocking client, so that both read a response alike: the request
//! head, made by `Fetcher::reactor_job`; the response is parsed by `Fetcher::receive` over the
//! same `conn::Connection`, whose
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
//! ended is refused, `try_submit`, not dropped; a parked job is ended by its look-up's answer
//! or by its deadline, whichever the loop meets first: the other finds its slot freed, or
//! another job's there, `Slot::serial`; a parked job counts as in flight, so the loop does
//! not end before it is answered); a slot's socket is registered
//! with the poll exactly while the slot holds it, `Slot::interest` saying for what; the poll
//! is edge-triggered, so a slot waits for an event only once its reads found the socket dry
//! (`WouldBlock`) or before any answer can have come (its request just written), and once its
//! writes found it full or had nothing left; the loop never blocks but in `poll` (after a
//! failed poll, in the wait for jobs to refuse and the close), and never with an answer held
//! back.

use crate::fetch::client::{FetchError, Fetcher, Response, Unresolved};
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
use std::sync::{Arc, Condvar, Mutex};
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
    /// The addresses to connect to, checked against the policy; none yet while `unresolved`.
    pub(crate) addrs: Addrs,
    /// The name's look-up the job waits for (parked in the loop until it answers).
    pub(crate) unresolved: Option<Unresolved>,
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
    wake: Arc<Wake>,
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

/// What wakes the loop from other threads: the waker (`submit`, `close`), and the look-ups
/// that answered a parked job, which the DNS threads that made them queue here.
struct Wake {
    waker: Waker,
    /// Parked slots whose look-up answered, by index and serial (a slot freed since, by its
    /// deadline, and taken again is not the one its look-up was for).
    looked_up: Mutex<Vec<(usize, u64)>>,
}

impl Wake {
    /// Slot `at` (of `serial`)'s look-up answered: the loop is woken to go on with it.
    fn looked_up(&self, at: usize, serial: u64) {
        let mut looked_up = self.looked_up.lock().unwrap_or_else(|e| e.into_inner());
        looked_up.push((at, serial));
        let first = looked_up.len() == 1;
        drop(looked_up);
        if first {
            let _ = self.waker.wake();
        }
    }
}

/// Where a slot's request is.
enum Phase {
    /// Parked until its name's look-up answers (`Job::unresolved`); no socket yet.
    Resolving,
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
    /// Which of the jobs held at this index over the loop's life (`Wake::looked_up`).
    serial: u64,
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
            wake: Arc::new(Wake {
                waker,
                looked_up: Mutex::new(Vec::new()),
            }),
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
            let _ = self.wake.waker.wake();
        }
        Ok(())
    }

    /// Ends `run` once every job submitted has been answered.
    pub fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let _ = self.wake.waker.wake();
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
            wake: Arc::clone(&self.wake),
            serials: 0,
        };
        loop {
            let jobs = std::mem::take(&mut *self.inbox.lock().unwrap());
            for job in jobs {
                lp.start(&poll, job);
            }
            let looked_up = std::mem::take(&mut *self.wake.looked_up.lock().unwrap());
            for (at, serial) in looked_up {
                lp.looked_up(&poll, at, serial);
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
        let _ = self.wake.waker.wake();
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
    /// Where a parked job's look-up says it answered.
    wake: Arc<Wake>,
    /// Jobs started so far: the next one's serial.
    serials: u64,
}

impl<T> Loop<'_, T> {
    /// A new job: parked until its name's look-up answers, if it must; then `open`.
    fn start(&mut self, poll: &Poll, job: Job<T>) {
        let now = Instant::now();
        // Parked, only the job's deadline bounds the wait.
        let io_deadline = match job.unresolved {
            Some(_) => job.deadline,
            None => now + CONNECT_TIMEOUT,
        };
        self.serials += 1;
        let slot = Slot {
            phase: Phase::Resolving,
            conn: None,
            next_addr: 0,
            reused: false,
            io_deadline,
            timer: now,
            interest: None,
            short: 1,
            last_fail: None,
            serial: self.serials,
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
        let slot = self.slots[at].as_mut().expect("just set");
        match &slot.job.unresolved {
            None => self.open(poll, at),
            Some(unresolved) => {
                let (wake, serial) = (Arc::clone(&self.wake), slot.serial);
                let notify = Box::new(move || wake.looked_up(at, serial));
                if unresolved.answered_or_notify(notify) {
                    self.resolved(poll, at);
                }
            }
        }
        self.arm(at);
    }

    /// Slot `at`'s look-up answered, if the slot is still the parked one it was for.
    fn looked_up(&mut self, poll: &Poll, at: usize, serial: u64) {
        let parked = self
            .slots
            .get(at)
            .and_then(Option::as_ref)
            .is_some_and(|slot| slot.serial == serial && matches!(slot.phase, Phase::Resolving));
        if parked {
            self.resolved(poll, at);
            self.arm(at);
        }
    }

    /// The parked slot `at`'s look-up answered: its addresses checked (`Fetcher::resolved`),
    /// then `open`; or the job fails as `reactor_job` would have failed it.
    fn resolved(&mut self, poll: &Poll, at: usize) {
        let slot = self.slots[at].as_mut().expect("a live slot");
        let unresolved = slot.job.unresolved.take().expect("a parked job");
        match self.fetcher.resolved(unresolved) {
            Ok(addrs) => {
                slot.job.addrs = addrs;
                slot.io_deadline = Instant::now() + CONNECT_TIMEOUT;
                self.open(poll, at)
            }
            Err(fail) => self.finish(poll, at, fail),
        }
    }

    /// The request of slot `at`, its addresses known: on a kept connection if its origin has
    /// a quiet one, else a new one.
    fn open(&mut self, poll: &Poll, at: usize) {
        let slot = self.slots[at].as_mut().expect("a live slot");
        let kept = (self
            .fetcher
            .pool()
            .take_at(&slot.job.origin, Instant::now()))
        .and_then(|mut conn| conn.set_nonblocking().ok().map(|()| conn));
        slot.reused = kept.is_some();
        match kept {
            Some(conn) => self.send(poll, at, conn),
            None => self.connect(poll, at),
        }
    }

    /// Puts slot `at` (if still live) in the timer heap at its due time.
    fn arm(&mut self, at: usize) {
        if let Some(slot) = self.slots[at].as_mut() {
            slot.timer = slot.due();
            self.timers.push(Reverse((slot.timer, at)));
        }
    }

    /// Starts a connect to the slot's next address; with none left, the job fails.
    fn connect(&mut self, poll: &Poll, at: usize) {
        let slot = self.slots[at].as_mut().expect("a live slot");
        if Instant::now() >= slot.job.deadline {
            let fail = over_timeout();
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
        let low_speed = self.fetcher.low_speed();
        let sent = registered.and_then(|()| conn.send(&slot.job.request_head, low_speed));
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
                self.fetcher.handshaken(conn.tls_resumed() == Some(true));
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
            // No socket yet: an event of the slot's last holder.
            Phase::Resolving => {}
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
                let arrived = conn.arrived_at().filter(|at| *at >= slot.job.start);
                let response = raw.into_response_took(head, (slot.job.started, elapsed), arrived);
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
                // Parked: its deadline is its only timer.
                (Phase::Resolving, _) => match &slot.job.unresolved {
                    Some(unresolved) => unresolved.timed_out(slot.job.deadline - slot.job.start),
                    None => over_timeout(),
                },
                (_, true) => over_timeout(),
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

/// A job's failure once its `--timeout` passed.
fn over_timeout() -> Fail {
    Fail::new(ErrorKind::Timeout, "the request took longer than --timeout")
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

    /// A response that trickles (a byte every 20 ms, 50 bytes a second: its head at once, the
    /// body after) is given up as a `timeout` once a span of `--low-speed-time` shows it slower
    /// than `--low-speed-limit`, on the loop and on a blocking thread alike, long before
    /// `--timeout`; with the rule off, the same trickle, short, is read whole.
    #[test]
    fn a_trickling_response_is_given_up_below_the_low_speed_limit() {
        use crate::fetch::conn::LowSpeed;
        let web = testweb::TestWeb::start(vec![testweb::HostSpec::new(|req| {
            let n: usize = req.target.trim_start_matches("/n").parse().unwrap_or(1000);
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n");
            let mut script = vec![(Duration::ZERO, head.into_bytes())];
            script.extend((0..n).map(|_| (Duration::from_millis(20), b"x".to_vec())));
            testweb::Response::raw(200, script)
        })])
        .unwrap();
        let config = |low_speed| FetchConfig {
            timeout: Duration::from_secs(60),
            low_speed,
            ..FetchConfig::loopback("test")
        };
        let strict = Fetcher::new(&config(LowSpeed {
            bytes_per_sec: 1000,
            time: Duration::from_millis(200),
        }));
        let slow = web.url(0, "/n1000");
        let on_loop = fetch_in_turn(&strict, std::slice::from_ref(&slow));
        let on_thread = strict.get(&slow);
        for answer in [on_loop.into_iter().next().unwrap(), on_thread] {
            let e = answer.expect_err("given up");
            assert_eq!(e.kind, ErrorKind::Timeout, "{e:?}");
            assert!(e.message.contains("--low-speed-limit 1000"), "{e:?}");
            assert!(e.elapsed < Duration::from_secs(10), "{e:?}");
        }
        let lenient = Fetcher::new(&config(LowSpeed::OFF));
        let short = web.url(0, "/n15");
        let on_loop = fetch_in_turn(&lenient, std::slice::from_ref(&short));
        let on_thread = lenient.get(&short);
        for answer in [on_loop.into_iter().next().unwrap(), on_thread] {
            assert_eq!(answer.expect("read whole").body, b"x".repeat(15));
        }
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

    /// A server that closes every connection after its answer costs a handshake per request,
    /// but only the first is a full one: the loop and the threads that block resume the
    /// session the first handshake left, and say so in the counters.
    #[test]
    fn a_server_that_closes_each_connection_resumes_the_first_session() {
        let server = testweb::tls::TlsServer::start(|_| testweb::Response::html("hi"));
        let fetcher = trusting(&server);
        let url = |path: &str| format!("{}{path}", server.origin());
        for answer in fetch_in_turn(&fetcher, &[url("/a"), url("/b"), url("/c")]) {
            assert_eq!(answer.unwrap().body, b"hi");
        }
        assert_eq!(fetcher.get(&url("/d")).unwrap().body, b"hi");
        assert_eq!(server.connections(), 4, "the server closes each connection");
        let events = fetcher.events();
        let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        assert_eq!(
            (load(&events.tls_handshakes), load(&events.tls_resumed)),
            (4, 3),
            "one full handshake, three resumed"
        );
        // Resumption off (`--no-tls-resume`): every handshake is a full one.
        let roots = crate::fetch::tls::pem_certificates(server.ca_pem().as_bytes()).unwrap();
        let forgetful = Fetcher::new(&FetchConfig {
            extra_roots: roots,
            tls_resume: false,
            ..FetchConfig::loopback("test")
        });
        for answer in fetch_in_turn(&forgetful, &[url("/e"), url("/f")]) {
            assert_eq!(answer.unwrap().body, b"hi");
        }
        let events = forgetful.events();
        assert_eq!(
            (load(&events.tls_handshakes), load(&events.tls_resumed)),
            (2, 0)
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

    /// A fetcher whose names are looked up by `fake` (held until it opens), each answered
    /// with 127.0.0.1; requests bounded by `timeout`, addresses by `seed`'s policy.
    fn fetcher_held(
        seed: &str,
        timeout: Duration,
    ) -> (Fetcher, std::sync::Arc<crate::fetch::dns::fake::FakeDns>) {
        use crate::fetch::dns::fake;
        let held = std::sync::Arc::new(fake::FakeDns::default());
        held.state.lock().unwrap().address = Some([127, 0, 0, 1].into());
        let policy = crate::fetch::private::AddressPolicy::new(&[Url::parse(seed).unwrap()], false);
        let config = FetchConfig {
            timeout,
            addresses: policy.clone(),
            ..FetchConfig::loopback("test")
        };
        (
            Fetcher::with_resolver(&config, fake::resolver(policy, &held)),
            held,
        )
    }

    /// Answers the look-ups of a `FakeDns` when dropped.
    struct Opening<'a>(&'a crate::fetch::dns::fake::FakeDns);

    impl Drop for Opening<'_> {
        fn drop(&mut self) {
            self.0.open();
        }
    }

    /// Makes `url`'s job and submits it, as a thread that processes pages does: a failure
    /// before the request is sent to `tx` as the reactor's answers are.
    fn submit_or_answer(
        reactor: &Reactor<usize>,
        fetcher: &Fetcher,
        tx: &std::sync::mpsc::Sender<Answer<usize>>,
        token: usize,
        url: &str,
    ) {
        match fetcher.reactor_job(token, Url::parse(url).unwrap(), &[], true) {
            Some(Ok(job)) => reactor.submit(job),
            Some(Err((token, url, e))) => tx.send((token, url, Err(e))).unwrap(),
            None => panic!("not for the reactor: {url}"),
        }
    }

    /// A thread that hands jobs to the loop never waits for a name: while the look-ups of
    /// three names are held, another host's pages, handed over after theirs by the same
    /// thread, are all fetched; once the names are answered, their pages are fetched too.
    #[test]
    fn pages_of_a_known_host_are_fetched_while_names_are_looked_up() {
        use std::sync::mpsc;
        let web = testweb::TestWeb::start(vec![testweb::HostSpec::new(|req| {
            testweb::Response::html(format!("page {}", req.target))
        })])
        .unwrap();
        let (fetcher, held) = fetcher_held("http://127.0.0.1/", Duration::from_secs(60));
        let reactor = Reactor::<usize>::new().unwrap();
        let (tx, rx) = mpsc::channel();
        let port = web.port(0);
        let held_urls: Vec<String> = (0..3)
            .map(|i| format!("http://held{i}.test:{port}/held{i}"))
            .collect();
        let known_urls: Vec<String> = (0..5).map(|i| web.url(0, &format!("/known{i}"))).collect();
        std::thread::scope(|scope| {
            let running = scope.spawn(|| run_into(&reactor, &fetcher, tx.clone()));
            let _closing = Closing(&reactor);
            // However the test ends, the look-ups are answered (first), so nothing waits on.
            let _opening = Opening(&held);
            // The one thread that processes pages, handing over the held names' jobs first.
            let (reactor, fetcher, tx) = (&reactor, &fetcher, tx.clone());
            let (held_urls, known_urls) = (&held_urls, &known_urls);
            scope.spawn(move || {
                for (token, url) in held_urls.iter().chain(known_urls).enumerate() {
                    submit_or_answer(reactor, fetcher, &tx, token, url);
                }
            });
            let within = Duration::from_secs(20);
            let mut known: Vec<usize> = (0..known_urls.len())
                .map(|_| {
                    let (token, _, answer) = rx.recv_timeout(within).expect("a known host's page");
                    assert_eq!(answer.expect("fetched").status, 200);
                    token
                })
                .collect();
            known.sort_unstable();
            assert_eq!(
                known,
                [3, 4, 5, 6, 7],
                "the held names' jobs answered first"
            );
            // The three look-ups are held, not failed or answered. Each starts on a thread of
            // its own, so under load the third may start after the known pages came back.
            held.until(|s| s.running == 3);
            held.open();
            let mut answered: Vec<(usize, Vec<u8>)> = (0..held_urls.len())
                .map(|_| {
                    let (token, _, answer) = rx.recv_timeout(within).expect("a held name's page");
                    (token, answer.expect("fetched").body)
                })
                .collect();
            answered.sort_unstable();
            let bodies: Vec<(usize, Vec<u8>)> = (0..3)
                .map(|i| (i, format!("page /held{i}").into_bytes()))
                .collect();
            assert_eq!(answered, bodies);
            drop(_opening);
            drop(_closing);
            running.join().unwrap().unwrap();
        });
        assert_eq!(rx.try_iter().count(), 0, "each job answered once");
        let asked = held.state.lock().unwrap().asked.clone();
        assert_eq!(asked.len(), 3, "{asked:?}");
        assert!(asked.values().all(|&n| n == 1), "{asked:?}");
    }

    /// A look-up held past `--timeout` fails its job once, with the failure of a thread that
    /// waits for the look-up (`timeout`); its late answer is not a second one. A job whose
    /// name's look-up fails, or answers an address the policy refuses, ends as on a thread
    /// that blocks (`dns`, `private-address`, the same messages).
    #[test]
    fn a_parked_job_ends_once_at_its_deadline_or_with_its_look_ups_failure() {
        use std::sync::mpsc;
        let (fetcher, held) = fetcher_held("http://127.0.0.1/", Duration::from_millis(300));
        let reactor = Reactor::<usize>::new().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|scope| {
            let running = scope.spawn(|| run_into(&reactor, &fetcher, tx.clone()));
            let _closing = Closing(&reactor);
            let within = Duration::from_secs(20);
            submit_or_answer(&reactor, &fetcher, &tx, 0, "http://slow.test:9/");
            let (token, _, answer) = rx.recv_timeout(within).expect("answered at the deadline");
            let fail = answer.expect_err("timed out");
            assert_eq!((token, fail.kind), (0, ErrorKind::Timeout), "{fail:?}");
            assert_eq!(fail.message, "looking up slow.test took over 300ms");
            held.open();
            held.until(|s| s.running == 0);
            // The answer came late: answered already, the job is not answered again. A job
            // after it shows the loop went by the late answer.
            submit_or_answer(&reactor, &fetcher, &tx, 1, "http://no-such.test:9/");
            let (token, _, answer) = rx.recv_timeout(within).expect("answered");
            let fail = answer.expect_err("no such name");
            let blocking = fetcher
                .get("http://no-such.test:9/")
                .expect_err("no such name");
            assert_eq!((token, fail.kind), (1, ErrorKind::Dns), "{fail:?}");
            assert_eq!(fail.message, blocking.message);
            drop(_closing);
            running.join().unwrap().unwrap();
        });
        assert_eq!(rx.try_iter().count(), 0, "each job answered once");
        // A public seed: the loopback answer is refused after the look-up, as a thread finds.
        let (fetcher, held) = fetcher_held("http://example.com/", Duration::from_secs(60));
        let url = "http://refused.test:9/";
        let job = fetcher.reactor_job(2, Url::parse(url).unwrap(), &[], true);
        let job = job.expect("for the reactor").map_err(|e| e.2).unwrap();
        held.open();
        let answers = {
            let reactor = Reactor::<usize>::new().unwrap();
            let (tx, rx) = mpsc::channel();
            std::thread::scope(|scope| {
                let running = scope.spawn(|| run_into(&reactor, &fetcher, tx));
                reactor.submit(job);
                reactor.close();
                running.join().unwrap().unwrap();
            });
            rx.try_iter().collect::<Vec<_>>()
        };
        let [(2, _, Err(fail))] = &answers[..] else {
            panic!("one failure");
        };
        let blocking = fetcher.get(url).expect_err("refused");
        assert_eq!(fail.kind, ErrorKind::PrivateAddress, "{fail:?}");
        assert_eq!(fail.message, blocking.message);
    }

    /// An `https` host that is no TLS server name (a label over 63 bytes) fails `bad-url` once
    /// its look-up answered, as a job of a cached name fails at once; a failed look-up fails
    /// `dns` first, as before.
    #[test]
    fn a_host_that_is_no_tls_name_fails_after_its_look_up() {
        let label = "x".repeat(64);
        let (fetcher, held) = fetcher_held("http://127.0.0.1/", Duration::from_secs(60));
        let reactor = Reactor::<usize>::new().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let urls = [
            format!("https://{label}.test/"),
            format!("https://no-such.{label}.test/"),
        ];
        std::thread::scope(|scope| {
            let running = scope.spawn(|| run_into(&reactor, &fetcher, tx.clone()));
            for (token, url) in urls.iter().enumerate() {
                submit_or_answer(&reactor, &fetcher, &tx, token, url);
            }
            held.until(|s| s.running == 2);
            held.open();
            reactor.close();
            running.join().unwrap().unwrap();
        });
        let mut answers: Vec<_> = rx.try_iter().collect();
        answers.sort_unstable_by_key(|answer| answer.0);
        let fails: Vec<FetchError> = (answers.into_iter())
            .map(|(_, _, answer)| answer.expect_err("a failure"))
            .collect();
        assert_eq!(fails.len(), 2, "each job answered once");
        assert_eq!(fails[1].kind, ErrorKind::Dns, "{:?}", fails[1]);
        // Cached now: the same failure at once.
        let at_once = fetcher.reactor_job(0, Url::parse(&urls[0]).unwrap(), &[], true);
        let Some(Err((_, _, at_once))) = at_once else {
            panic!("not failed at once");
        };
        assert_eq!(fails[0].kind, ErrorKind::BadUrl, "{:?}", fails[0]);
        assert_eq!(fails[0].message, at_once.message);
        assert!(fails[0].message.contains("is not a TLS server name"));
    }

    /// A loop closed while a job waits for its look-up ends only once the job is answered.
    #[test]
    fn a_closed_loop_answers_the_job_parked_for_its_look_up() {
        let web = testweb::TestWeb::start(vec![testweb::HostSpec::new(|_| {
            testweb::Response::html("late")
        })])
        .unwrap();
        let (fetcher, held) = fetcher_held("http://127.0.0.1/", Duration::from_secs(60));
        let reactor = Reactor::<usize>::new().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let url = format!("http://parked.test:{}/", web.port(0));
        std::thread::scope(|scope| {
            let running = scope.spawn(|| run_into(&reactor, &fetcher, tx.clone()));
            submit_or_answer(&reactor, &fetcher, &tx, 0, &url);
            held.until(|s| s.running == 1);
            reactor.close();
            assert!(rx.try_recv().is_err(), "answered before its look-up");
            held.open();
            running.join().unwrap().unwrap();
        });
        let answers: Vec<_> = rx.try_iter().collect();
        assert_eq!(answers.len(), 1, "answered once");
        let (token, _, answer) = answers.into_iter().next().unwrap();
        assert_eq!((token, answer.unwrap().body), (0, b"late".to_vec()));
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
