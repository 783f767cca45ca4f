//! Idle connections, kept for reuse by the next request to the same origin.
//!
//! A map from `scheme://host:port` to that origin's idle connections (at most `per_host`, as
//! many as a host may have requests in flight), bounded as an LRU over origins: the `hosts`
//! origins used last keep theirs, an older origin's connections are closed. The bound
//! (`client::idle_hosts`) is sized to cover every host the workers have queued work for, within
//! a share of the open-file limit, so a host keeps its connection while it has work; an idle
//! connection holds no read buffer (`Connection::park`), so the bound costs sockets, not
//! memory. A server closes what it no longer wants to keep: that costs one failed attempt on
//! the next request, which the client repeats on a fresh connection.
//!
//! A connection is put back only after its response was read exactly to its end (`conn`); it
//! is taken without any check of liveness (no syscall): a server that closed it while it was
//! idle costs one failed attempt, which the client repeats on a fresh connection.

use crate::fetch::conn::Connection;
use crate::lru::Lru;
use crate::seen::checksum::checksum;
use std::sync::Mutex;

/// Keyed by the origin's checksum, so that a look-up copies no string (the LRU keeps a copy of
/// its key per touch); the origin itself is kept beside its connections and compared, so two
/// origins of one checksum never share a connection.
pub struct Pool {
    idle: Mutex<Lru<u64, (String, Vec<Connection>)>>,
    per_host: usize,
}

impl Pool {
    /// Idle connections for the `hosts` origins used last, `per_host` each.
    pub fn new(hosts: usize, per_host: usize) -> Pool {
        Pool {
            idle: Mutex::new(Lru::new(hosts)),
            per_host: per_host.max(1),
        }
    }

    /// An idle connection to `origin`, if one is kept.
    pub fn take(&self, origin: &str) -> Option<Connection> {
        let mut idle = self.idle.lock().unwrap();
        match idle.get_mut(&checksum(origin.as_bytes())) {
            Some((kept, conns)) if kept == origin => conns.pop(),
            _ => None,
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
