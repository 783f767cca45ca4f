//! Idle connections, kept for reuse by the next request to the same origin.
//!
//! A map from `scheme://host:port` to that origin's idle connections (at most `per_host`, as
//! many as a host may have requests in flight), bounded as an LRU over origins: the `hosts`
//! origins used last keep theirs, an older origin's connections are closed. The bound
//! (`client::idle_hosts`) is what the open-file limit leaves beside the requests in flight, so
//! that every host resting between its requests keeps its connection (a smaller LRU, cycled
//! through by hosts in turn, evicts the next one due); an idle connection holds no read buffer
//! (`Connection::park`), so the bound costs sockets, not memory.
//!
//! Idle timeout (`--idle-timeout`, [`IDLE_TIMEOUT`] by default): a connection unused for that
//! long is closed by the crawler, so that the hosts a crawl has finished with do not hold a
//! socket each until their servers close their side (zero: none is kept). No timer: each
//! `take` and `put`, at one clock read (the caller's, where it has one), takes out under the
//! lock it takes anyway the origins unused for the timeout from the LRU's oldest end (at most
//! [`SWEEP`] of them; each operation adds at most one origin, so the sweep keeps up), then the
//! connections of the origin it works on that were kept longer (they are stacked oldest
//! first), and closes them once the lock is released. A connection idle for the timeout is
//! never handed out. It is closed at the first operation after its timeout, by whichever
//! thread makes it: a crawl that makes no request for a while holds its idle connections
//! until its next one. Each connection so closed is counted (`closed_timeout`).
//!
//! A server closes what it no longer wants to keep: the check below finds it before a
//! request is written; one that closes in between costs one failed attempt, which the client
//! repeats on a fresh connection.
//!
//! A connection is put back only after its response was read exactly to its end, with no byte
//! past it (`conn`). It is taken only when provably quiet: before a request is written on it,
//! one non-blocking look (`Connection::idle_state`, a `recv(MSG_PEEK)`) finds whether the
//! server closed it or sent bytes while it was idle. Either way it is closed and the next one
//! tried (or a fresh one made): bytes nobody asked for would be read, and archived, as the next
//! request's response. Each such event is counted (`ConnectionEvents`, in summary.json).
//!
//! Invariants: an origin's connections are stacked in the order they were put back (the last
//! one is taken first, the first one is the oldest); an origin's `used` is the instant of its
//! last `take` or `put`, so the LRU's order is the order of `used` (up to the clock reads of
//! threads racing for the lock) and every connection it holds was kept at or before `used`.

use crate::fetch::conn::{Connection, Idle};
use crate::lru::Lru;
use crate::seen::checksum::checksum;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a kept connection may stay unused before the crawler closes it, by default.
/// Servers keep an idle connection 5 s (Apache, Node) to 75 s (nginx): past 30 s many have
/// closed their side, and what the crawler keeps is a socket for nothing. 30 s covers the rest
/// the delay rule gives a host that answers within 3 s (10 × its response time), so a host being
/// crawled keeps its connection; a host resting longer (a slow server, a Crawl-delay, --rate)
/// opens one again, one connect per rest of 30 s or more, which its crawl does not feel. A
/// crawl that finishes a host every few milliseconds then holds the sockets of the hosts of
/// the last 30 s, not of every host the open files allow.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Origins closed for the timeout at most per operation, so that no request waits behind
/// thousands of closes when many hosts fell idle at once (the seeds' hosts of a crawl's start).
pub const SWEEP: usize = 16;

/// Connections closed for what their server did around a response, and those the crawler
/// closed unused, for summary.json: a server that sends bytes unasked or frames ambiguously is
/// seen there.
#[derive(Debug, Default)]
pub struct ConnectionEvents {
    /// Kept connections the server had closed (or reset) while they were idle, found before a
    /// request was written on them.
    pub closed_idle: AtomicU64,
    /// Connections with bytes no request asked for: found on an idle kept connection, or left
    /// past a response's end.
    pub unsolicited: AtomicU64,
    /// Connections closed after a response whose framing was ambiguous
    /// (`conn::Head::ambiguous`: `Content-Length` beside `Transfer-Encoding`, an unsolicited
    /// `101`).
    pub ambiguous: AtomicU64,
    /// Kept connections the crawler closed, unused for the idle timeout.
    pub closed_timeout: AtomicU64,
    /// TLS handshakes completed (`tls::client_config`'s sessions)...
    pub tls_handshakes: AtomicU64,
    /// ...and those of them that resumed a session: no certificate sent or checked again.
    pub tls_resumed: AtomicU64,
}

impl ConnectionEvents {
    /// Counts one event.
    pub fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `other`'s counts to these.
    pub fn add_all(&self, other: &ConnectionEvents) {
        for (to, from) in [
            (&self.closed_idle, &other.closed_idle),
            (&self.unsolicited, &other.unsolicited),
            (&self.ambiguous, &other.ambiguous),
            (&self.closed_timeout, &other.closed_timeout),
            (&self.tls_handshakes, &other.tls_handshakes),
            (&self.tls_resumed, &other.tls_resumed),
        ] {
            to.fetch_add(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }
}

/// Keyed by the origin's checksum, so that a look-up copies no string (the LRU keeps a copy of
/// its key per touch); the origin itself is kept beside its connections and compared, so two
/// origins of one checksum never share a connection.
pub struct Pool {
    idle: Mutex<Lru<u64, Kept>>,
    per_host: usize,
    /// Unused this long, a connection is closed (zero: none is kept).
    timeout: Duration,
    /// What the liveness check and the client found, and what the timeout closed.
    pub events: ConnectionEvents,
}

/// One origin's idle connections, each with the instant it was put back, oldest first.
struct Kept {
    origin: String,
    conns: Vec<(Connection, Instant)>,
    /// The origin's last `take` or `put`.
    used: Instant,
}

impl Pool {
    /// Idle connections for the `hosts` origins used last, `per_host` each, each closed once
    /// unused for `timeout`.
    pub fn new(hosts: usize, per_host: usize, timeout: Duration) -> Pool {
        Pool {
            idle: Mutex::new(Lru::new(hosts)),
            per_host: per_host.max(1),
            timeout,
            events: ConnectionEvents::default(),
        }
    }

    /// An idle connection to `origin` that is quiet (see the module doc), if one is kept;
    /// those found closed or holding bytes are closed and counted.
    pub fn take(&self, origin: &str) -> Option<Connection> {
        self.take_at(origin, Instant::now())
    }

    /// `take`, the clock reading `now` (the caller's read: the reactor's).
    pub(crate) fn take_at(&self, origin: &str, now: Instant) -> Option<Connection> {
        loop {
            let mut conn = self.pop(origin, now)?;
            match conn.idle_state() {
                Idle::Quiet => return Some(conn),
                Idle::Closed => ConnectionEvents::add(&self.events.closed_idle),
                Idle::Bytes => ConnectionEvents::add(&self.events.unsolicited),
            }
        }
    }

    /// The connection to `origin` put back last, once those unused for the timeout are closed.
    fn pop(&self, origin: &str, now: Instant) -> Option<Connection> {
        let mut expired = Vec::new();
        let conn = {
            let mut idle = self.idle.lock().unwrap();
            self.sweep(&mut idle, now, &mut expired);
            match idle.get_mut(&checksum(origin.as_bytes())) {
                Some(kept) if kept.origin == origin => {
                    kept.used = now;
                    self.trim(&mut kept.conns, now, &mut expired);
                    kept.conns.pop().map(|(conn, _)| conn)
                }
                _ => None,
            }
        };
        self.close_expired(expired);
        conn
    }

    /// Keeps `conn` for the next request to `origin` (closed instead when `origin` has
    /// `per_host` idle already, or the timeout is zero).
    pub fn put(&self, origin: String, conn: Connection) {
        self.put_at(origin, conn, Instant::now())
    }

    /// `put`, the clock reading `now`.
    fn put_at(&self, origin: String, mut conn: Connection, now: Instant) {
        if self.timeout.is_zero() {
            // Not kept at all: closed, and not counted as one the timeout closed.
            return drop(conn);
        }
        conn.park();
        let key = checksum(origin.as_bytes());
        let mut expired = Vec::new();
        {
            let mut idle = self.idle.lock().unwrap();
            self.sweep(&mut idle, now, &mut expired);
            match idle.get_mut(&key) {
                Some(kept) if kept.origin == origin => {
                    kept.used = now;
                    self.trim(&mut kept.conns, now, &mut expired);
                    if kept.conns.len() < self.per_host {
                        kept.conns.push((conn, now));
                    }
                }
                // A new origin, or (never seen in practice) another origin of the same
                // checksum, whose connections are closed.
                _ => idle.insert(
                    key,
                    Kept {
                        origin,
                        conns: vec![(conn, now)],
                        used: now,
                    },
                ),
            }
        }
        self.close_expired(expired);
    }

    /// Whether something last used at `at` is unused for the timeout at `now`.
    fn expired(&self, at: Instant, now: Instant) -> bool {
        now.saturating_duration_since(at) >= self.timeout
    }

    /// Takes out the origins unused for the timeout, oldest first, at most `SWEEP`; their
    /// connections go to `expired`.
    fn sweep(&self, idle: &mut Lru<u64, Kept>, now: Instant, expired: &mut Vec<Connection>) {
        for _ in 0..SWEEP {
            let Some(kept) = idle.pop_oldest_if(|kept| self.expired(kept.used, now)) else {
                return;
            };
            expired.extend(kept.conns.into_iter().map(|(conn, _)| conn));
        }
    }

    /// Takes out an origin's connections kept for the timeout or longer (the first ones).
    fn trim(
        &self,
        conns: &mut Vec<(Connection, Instant)>,
        now: Instant,
        expired: &mut Vec<Connection>,
    ) {
        let old = conns.iter().take_while(|(_, at)| self.expired(*at, now));
        let old = old.count();
        expired.extend(conns.drain(..old).map(|(conn, _)| conn));
    }

    /// Closes and counts connections unused for the timeout, outside the lock.
    fn close_expired(&self, expired: Vec<Connection>) {
        if !expired.is_empty() {
            let closed = &self.events.closed_timeout;
            closed.fetch_add(expired.len() as u64, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::conn::Stream;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::RawFd;

    const A: &str = "http://a.test:80";
    const B: &str = "http://b.test:80";
    const C: &str = "http://c.test:80";

    /// Loopback connections whose server ends stay open, silent, for the test's life: each
    /// client end quiet until the pool closes it.
    struct Sockets {
        listener: TcpListener,
        servers: Vec<TcpStream>,
    }

    impl Sockets {
        fn new() -> Sockets {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            Sockets {
                listener,
                servers: Vec::new(),
            }
        }

        /// A new connection, and its index among `servers` (its server end).
        fn connect(&mut self) -> (Connection, usize) {
            let tcp = TcpStream::connect(self.listener.local_addr().unwrap()).unwrap();
            let (server, _) = self.listener.accept().unwrap();
            server
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            self.servers.push(server);
            let conn = Connection::new(Stream::Tcp(tcp), None, None);
            (conn, self.servers.len() - 1)
        }

        /// Whether the client closed connection `i`: its server end reads the end of the
        /// stream (at once when closed; an open one is never asked, so no read waits).
        fn closed(&mut self, i: usize) -> bool {
            matches!(self.servers[i].read(&mut [0u8; 1]), Ok(0))
        }
    }

    fn fd(conn: &Connection) -> RawFd {
        conn.fd().expect("a TCP connection")
    }

    fn closed_timeout(pool: &Pool) -> u64 {
        pool.events.closed_timeout.load(Ordering::Relaxed)
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// A pool of `timeout` holding one connection to A, put back at the instant returned;
    /// the connection's server end (an index into `Sockets`) and descriptor.
    fn one_kept(timeout: Duration) -> (Sockets, Pool, Instant, usize, RawFd) {
        let mut sockets = Sockets::new();
        let pool = Pool::new(8, 1, timeout);
        let t0 = Instant::now();
        let (conn, server) = sockets.connect();
        let kept = fd(&conn);
        pool.put_at(A.into(), conn, t0);
        (sockets, pool, t0, server, kept)
    }

    #[test]
    fn a_connection_idle_past_the_timeout_is_closed_and_not_handed_out() {
        let (mut sockets, pool, t0, server, _) = one_kept(IDLE_TIMEOUT);
        assert!(pool.take_at(A, t0 + IDLE_TIMEOUT).is_none());
        assert_eq!(closed_timeout(&pool), 1);
        assert!(sockets.closed(server), "closed by the pool");
    }

    #[test]
    fn a_connection_within_the_timeout_is_reused() {
        let (_sockets, pool, t0, _, kept) = one_kept(IDLE_TIMEOUT);
        let later = t0 + IDLE_TIMEOUT - Duration::from_millis(1);
        let taken = pool.take_at(A, later).expect("kept");
        assert_eq!(fd(&taken), kept);
        // Put back and taken again: each use starts the timeout over.
        pool.put_at(A.into(), taken, later);
        let taken = pool.take_at(A, later + IDLE_TIMEOUT - Duration::from_millis(1));
        assert_eq!(taken.as_ref().map(fd), Some(kept));
        assert_eq!(closed_timeout(&pool), 0);
    }

    #[test]
    fn the_oldest_origins_are_closed_first_by_any_operation() {
        let mut sockets = Sockets::new();
        let pool = Pool::new(8, 1, secs(30));
        let t0 = Instant::now();
        let mut servers = Vec::new();
        for (origin, at) in [(A, 0), (B, 10), (C, 20)] {
            let (conn, server) = sockets.connect();
            pool.put_at(origin.into(), conn, t0 + secs(at));
            servers.push(server);
        }
        // An operation on another origin, 35 s in: A (35 s unused) is closed, B (25 s) and C
        // (15 s) are not.
        assert!(pool.take_at("http://d.test:80", t0 + secs(35)).is_none());
        assert_eq!(closed_timeout(&pool), 1);
        assert!(sockets.closed(servers[0]));
        assert!(pool.take_at(A, t0 + secs(35)).is_none());
        assert!(pool.take_at(C, t0 + secs(35)).is_some());
        // 41 s in: B is closed, not handed out.
        assert!(pool.take_at(B, t0 + secs(41)).is_none());
        assert_eq!(closed_timeout(&pool), 2);
        assert!(sockets.closed(servers[1]));
    }

    #[test]
    fn an_origins_older_connections_are_closed_while_it_is_used() {
        let mut sockets = Sockets::new();
        let pool = Pool::new(8, 2, secs(30));
        let t0 = Instant::now();
        let (old, old_server) = sockets.connect();
        let (new, _) = sockets.connect();
        let new_fd = fd(&new);
        pool.put_at(A.into(), old, t0);
        pool.put_at(A.into(), new, t0 + secs(20));
        // 40 s in, A was used 20 s ago, but its first connection was kept 40 s: closed.
        let taken = pool.take_at(A, t0 + secs(40));
        assert_eq!(taken.as_ref().map(fd), Some(new_fd));
        assert_eq!(closed_timeout(&pool), 1);
        assert!(sockets.closed(old_server));
        assert!(
            pool.take_at(A, t0 + secs(40)).is_none(),
            "nothing else kept"
        );
    }

    #[test]
    fn a_sweep_closes_a_bounded_number_of_origins_and_keeps_up() {
        let mut sockets = Sockets::new();
        let origins = 2 * SWEEP + 3;
        let pool = Pool::new(origins, 1, secs(30));
        let t0 = Instant::now();
        for i in 0..origins {
            let (conn, _) = sockets.connect();
            pool.put_at(format!("http://h{i}.test:80"), conn, t0);
        }
        let later = t0 + secs(30);
        assert!(pool.take_at(A, later).is_none());
        assert_eq!(closed_timeout(&pool), SWEEP as u64);
        assert!(pool.take_at(A, later).is_none());
        assert!(pool.take_at(A, later).is_none());
        assert_eq!(closed_timeout(&pool), origins as u64);
        assert!((0..origins).all(|i| sockets.closed(i)));
    }

    #[test]
    fn a_zero_timeout_keeps_nothing() {
        let (mut sockets, pool, t0, server, _) = one_kept(Duration::ZERO);
        assert!(pool.take_at(A, t0).is_none());
        // Never kept, so none closed by the timeout: summary.json's count means kept ones.
        assert_eq!(closed_timeout(&pool), 0);
        assert!(sockets.closed(server));
    }
}
