//! Idle connections, kept for reuse by the next request to the same origin.
//!
//! A map from `scheme://host:port` to that origin's idle connections (at most `per_host`, as
//! many as a host may have requests in flight), bounded as an LRU over origins: the `hosts`
//! origins used last keep theirs, an older origin's connections are closed. The bound
//! (`client::idle_hosts`) is what the open-file limit leaves beside the requests in flight, so
//! that every host resting between its requests keeps its connection (a smaller LRU, cycled
//! through by hosts in turn, evicts the next one due); a host whose work ended keeps its
//! connection too, until its server closes it or newer hosts push it out; an idle
//! connection holds no read buffer (`Connection::park`), so the bound costs sockets, not
//! memory. A server closes what it no longer wants to keep: the check below finds it before a
//! request is written; one that closes in between costs one failed attempt, which the client
//! repeats on a fresh connection.
//!
//! A connection is put back only after its response was read exactly to its end, with no byte
//! past it (`conn`). It is taken only when provably quiet: before a request is written on it,
//! one non-blocking look (`Connection::idle_state`, a `recv(MSG_PEEK)`) finds whether the
//! server closed it or sent bytes while it was idle. Either way it is closed and the next one
//! tried (or a fresh one made): bytes nobody asked for would be read, and archived, as the next
//! request's response. Each such event is counted (`ConnectionEvents`, in summary.json).

use crate::fetch::conn::{Connection, Idle};
use crate::lru::Lru;
use crate::seen::checksum::checksum;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Connections closed for what their server did around a response, for summary.json: a
/// server that sends bytes unasked or frames ambiguously is seen there.
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
        ] {
            to.fetch_add(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }
}

/// Keyed by the origin's checksum, so that a look-up copies no string (the LRU keeps a copy of
/// its key per touch); the origin itself is kept beside its connections and compared, so two
/// origins of one checksum never share a connection.
pub struct Pool {
    idle: Mutex<Lru<u64, (String, Vec<Connection>)>>,
    per_host: usize,
    /// What the liveness check and the client found.
    pub events: ConnectionEvents,
}

impl Pool {
    /// Idle connections for the `hosts` origins used last, `per_host` each.
    pub fn new(hosts: usize, per_host: usize) -> Pool {
        Pool {
            idle: Mutex::new(Lru::new(hosts)),
            per_host: per_host.max(1),
            events: ConnectionEvents::default(),
        }
    }

    /// An idle connection to `origin` that is quiet (see the module doc), if one is kept;
    /// those found closed or holding bytes are closed and counted.
    pub fn take(&self, origin: &str) -> Option<Connection> {
        loop {
            let mut conn = {
                let mut idle = self.idle.lock().unwrap();
                match idle.get_mut(&checksum(origin.as_bytes())) {
                    Some((kept, conns)) if kept == origin => conns.pop(),
                    _ => None,
                }
            }?;
            match conn.idle_state() {
                Idle::Quiet => return Some(conn),
                Idle::Closed => ConnectionEvents::add(&self.events.closed_idle),
                Idle::Bytes => ConnectionEvents::add(&self.events.unsolicited),
            }
        }
    }

    /// Keeps `conn` for the next request to `origin` (closed instead when `origin` has
    /// `per_host` idle already).
    pub fn put(&self, origin: String, mut conn: Connection) {
        conn.park();
        let key = checksum(origin.as_bytes());
        let mut idle = self.idle.lock().unwrap();
        match idle.get_mut(&key) {
            Some((kept, conns)) if *kept == origin => {
                if conns.len() < self.per_host {
                    conns.push(conn);
                }
            }
            // A new origin, or (never seen in practice) another origin of the same checksum,
            // whose connections are closed.
            _ => idle.insert(key, (origin, vec![conn])),
        }
    }
}
