//! A DNS cache in front of the system resolver.
//!
//! A fast crawl would otherwise ask the system resolver before every connection. Mercator kept
//! its own DNS cache for the same reason. Here an IP-literal host is answered without a lookup,
//! and a name's addresses are reused for `TTL`; only a miss goes to the system resolver, on a
//! thread other than the fetch's, so that the request's timeout bounds the wait
//! (`getaddrinfo` has none).
//!
//! Every answer, cached or not, IP literal or name, then passes the crawl's `AddressPolicy`
//! (`fetch::private`): the client connects only to the addresses this resolver returns, so an
//! address refused here is never connected to. Refused addresses are dropped from the answer;
//! when none is left the fetch fails with `private::Refused` (the URL log's `private-address`).
//!
//! A proxy is looked up here too: it is the user's choice and is exempt
//! (`CachingResolver::exempt`). Its targets are checked: every proxy is set to resolve here
//! unless `--allow-private` (`fetch::proxy`), so no proxy resolves a name out of our sight.
//!
//! Resolution ahead of need: the scheduler announces a host as soon as it is held or set aside
//! for a slot (`Scheduler::foresee`, hooked up by `Fetcher::resolver_ahead`; not when a proxy
//! resolves the names; the key of a host to be looked up, not an IP literal, is handed over a
//! channel, `CachingResolver::ahead_hook`, so that the dispatcher never waits for this
//! resolver's lock), and its name is looked up then, on one of the look-up threads (at most
//! `AHEAD_THREADS` take names ahead; names beyond them wait in a bounded queue, dropped past
//! `AHEAD_QUEUED`: their fetch looks them up), so that its first request (robots.txt) finds the
//! answer cached rather than waiting a round trip to the DNS server for it. A look-up ahead
//! only fills the cache: its answer is checked by the policy when a fetch asks for it, like
//! any other. One look-up runs per name at a time: a fetch that needs a name being looked up
//! takes that answer instead of asking again, and an answer that comes after its fetch gave
//! up is cached all the same. Failures are not cached.
//!
//! Two ways to ask. `resolve` waits (at most its timeout) on the calling thread, for the
//! blocking client (`-j`, proxies), its look-up on a thread of its own. `resolve_or_start`
//! never waits, for the event loop's jobs (`Fetcher::reactor_job`): the addresses when they
//! are known now, else the name's look-up (`Lookup`), joined if under way, else started on a
//! look-up thread, ahead of the names queued ahead and never dropped (a fetch needs it); the
//! loop is told when the answer came (`Lookup::answered_or_notify`, called on the look-up's
//! thread) and takes it through `checked`, the same policy check and failures as `resolve`.
//! A thread that processes pages then never waits for a slow or dead name's DNS server.
//!
//! Invariants: at most one look-up per `host:port` runs at a time (`LookupState::running`;
//! a key is there from the look-up's start, queued for a thread or not, to its answer); at
//! most `LOOKUP_THREADS` look-up threads run (`resolve`'s own aside) and at most
//! `AHEAD_THREADS` of them take keys queued ahead (those beyond are for fetches: a burst of
//! slow names ahead leaves threads for the names fetches wait for); a key waits in the queue
//! ahead at most once, and in the queue of fetches (`needed`, bounded by the jobs in flight) at
//! most once, `running` already; every waiter of a look-up hears its answer once: a blocking
//! one through the condvar, one that does not block through its `Notify`, registered and
//! answered under the same lock, so that none is lost or called twice.
//!
//! `CRAWL_TEST_HOSTS=name=127.0.0.2,...` (a hidden test knob) answers those names without the
//! system resolver; it accepts loopback addresses only, so a test can never reach further.

use crate::fetch::error::{ErrorKind, Fail};
use crate::fetch::private::AddressPolicy;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Told a host's key (`host:port`) as soon as the host is known, so that its name is resolved
/// before its first request comes due (`CachingResolver::resolve_ahead`).
pub type HostAhead = Box<dyn Fn(&str) + Send + Sync>;

/// How long resolved addresses are reused.
const TTL: Duration = Duration::from_secs(300);
/// Entries kept at most (a fixed cost, whatever the number of hosts: a few MiB); the cache is
/// cleared when it fills (hosts are crawled in waves). As many as the hosts the scheduler may
/// hold (`dispatch::MAX_HOST_SLOTS`), so that names resolved ahead stay until their fetch.
const MAX_ENTRIES: usize = 32_768;
/// Look-ups ahead of need running at once: at 100 ms an answer, 2,560 names a second, more
/// than the hosts a crawl starts per second at its most connections; a bound on the threads
/// and on the burst of questions a crawl of many new hosts sends its DNS server.
const AHEAD_THREADS: usize = 256;
/// Names waiting for a look-up ahead at most; more are left to their fetch.
const AHEAD_QUEUED: usize = 4096;
/// Look-up threads at most (the blocking path's own aside): those beyond `AHEAD_THREADS` take
/// only names a fetch waits for, so that a burst of slow names looked up ahead never makes a
/// fetch's name wait for a thread.
const LOOKUP_THREADS: usize = 2 * AHEAD_THREADS;
/// A look-up thread's stack: `getaddrinfo` needs far less (the workers' is the same).
const LOOKUP_STACK: usize = 512 * 1024;

/// The addresses of one answer (most names have one or two).
pub type Addrs = Arc<[SocketAddr]>;

/// The system resolver's answer for a name and port (`getaddrinfo`); a test may put another.
type SystemLookup = Arc<dyn Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync>;

pub struct CachingResolver {
    lookups: Arc<Lookups>,
    /// Which addresses may be connected to.
    policy: AddressPolicy,
    /// `host:port`s answered without the policy (a proxy the user named).
    exempt: Vec<String>,
    /// Names answered by the `CRAWL_TEST_HOSTS` knob (loopback addresses only).
    test_hosts: FxHashMap<String, IpAddr>,
}

/// The cache and the look-ups under way, shared with the threads that run them.
struct Lookups {
    state: Mutex<LookupState>,
    system: SystemLookup,
}

#[derive(Default)]
struct LookupState {
    /// `host:port` → its addresses and when they were had.
    cache: FxHashMap<String, (Addrs, Instant)>,
    /// Look-ups under way by key: who needs one waits for its answer.
    running: FxHashMap<String, Arc<Pending>>,
    /// Keys a fetch waits for (`resolve_or_start`) once a thread is free, each in `running`
    /// already; served before those ahead.
    needed: VecDeque<String>,
    /// Keys to look up ahead once a thread is free, at most `AHEAD_QUEUED`, and the same as a
    /// set (a key is queued once).
    ahead: VecDeque<String>,
    queued: FxHashSet<String>,
    /// Look-up threads running (`Lookups::serve`), at most `LOOKUP_THREADS`.
    threads: usize,
}

/// One look-up's answer, once it came, and who is told of it then.
#[derive(Default)]
struct Pending {
    answer: Mutex<Answer>,
    done: Condvar,
}

/// The addresses or the message of the error, once they came; until then, the calls that tell
/// a waiter which does not block (`Lookup::answered_or_notify`).
#[derive(Default)]
struct Answer {
    came: Option<Result<Addrs, String>>,
    notify: Vec<Notify>,
}

/// Told once the answer of a look-up came, on the thread that made it.
pub type Notify = Box<dyn FnOnce() + Send>;

/// What `CachingResolver::resolve_or_start` gives.
pub enum Resolution {
    /// Answered at once (an IP literal, the test knob, the cache), checked against the policy.
    Now(Result<Addrs, Fail>),
    /// A look-up under way, started or joined: `Lookup::answered_or_notify`, then
    /// `CachingResolver::checked`.
    Coming(Lookup),
}

/// A look-up under way that a fetch waits for without blocking.
pub struct Lookup {
    key: String,
    host: String,
    pending: Arc<Pending>,
}

impl std::fmt::Debug for CachingResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachingResolver")
            .field("exempt", &self.exempt)
            .finish_non_exhaustive()
    }
}

impl CachingResolver {
    /// A resolver whose answers pass `policy`.
    pub fn new(policy: AddressPolicy) -> CachingResolver {
        let test_hosts = test_hosts(&std::env::var("CRAWL_TEST_HOSTS").unwrap_or_default());
        CachingResolver::with_system(policy, test_hosts, Arc::new(getaddrinfo))
    }

    fn with_system(
        policy: AddressPolicy,
        test_hosts: FxHashMap<String, IpAddr>,
        system: SystemLookup,
    ) -> CachingResolver {
        CachingResolver {
            lookups: Arc::new(Lookups {
                state: Mutex::default(),
                system,
            }),
            policy,
            exempt: Vec::new(),
            test_hosts,
        }
    }

    /// Answers `host:port` (a proxy's authority) without checking the policy.
    pub fn exempt(&mut self, authority: &str) {
        self.exempt.push(authority.to_ascii_lowercase());
    }

    /// The addresses of `host` (a name or an IP literal, brackets or not) that may be
    /// connected to; waits at most `timeout` for the system resolver.
    pub fn resolve(&self, host: &str, port: u16, timeout: Duration) -> Result<Addrs, Fail> {
        let host = unbracketed(host);
        let (key, addrs) = self.lookup(host, port, timeout)?;
        self.allowed(&key, addrs)
    }

    /// `resolve` that never waits: the addresses when they are known now, else the look-up
    /// they come from, started on a look-up thread (first in line) or joined if under way.
    pub fn resolve_or_start(&self, host: &str, port: u16) -> Resolution {
        let host = unbracketed(host).to_ascii_lowercase();
        let key = format!("{host}:{port}");
        let mut state = match self.known(&host, &key, port) {
            Known::Addrs(addrs) => return Resolution::Now(self.allowed(&key, addrs)),
            Known::Running(pending) => return Resolution::Coming(Lookup { key, host, pending }),
            Known::Unknown(state) => state,
        };
        let pending = state.start(&key);
        if state.threads < LOOKUP_THREADS {
            state.threads += 1;
            drop(state);
            self.lookups.spawn(key.clone());
        } else {
            state.needed.push_back(key.clone());
        }
        Resolution::Coming(Lookup { key, host, pending })
    }

    /// A look-up's answer (`lookup` was answered: `Lookup::answered_or_notify`) as `resolve`
    /// gives it: checked against the policy, a failure the same `dns` one.
    pub fn checked(&self, lookup: &Lookup) -> Result<Addrs, Fail> {
        let answer = lookup
            .pending
            .answer
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let came = (answer.came.clone())
            .unwrap_or_else(|| Err(format!("{} has no answer yet", lookup.host)));
        drop(answer);
        let addrs = came.map_err(|message| Fail::new(ErrorKind::Dns, message))?;
        self.allowed(&lookup.key, addrs)
    }

    /// What the scheduler tells of each host it comes to know (`Scheduler::foresee_with`): the
    /// key goes over a channel to a thread of its own, which calls `resolve_ahead`. The
    /// scheduler calls it holding the dispatcher's lock, so it never takes the resolver's:
    /// on a machine short of CPU, a look-up thread preempted while holding it would stall
    /// every worker behind the dispatcher. The thread ends when the scheduler is dropped.
    pub fn ahead_hook(self: &Arc<Self>) -> Option<HostAhead> {
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let resolver = Arc::clone(self);
        std::thread::Builder::new()
            .name("dns-ahead".into())
            .stack_size(LOOKUP_STACK)
            .spawn(move || rx.iter().for_each(|key| resolver.resolve_ahead(&key)))
            .ok()?;
        let here = Arc::clone(self);
        Some(Box::new(move |key| {
            // A host answered without a look-up costs no message and no wake-up of the thread.
            if here.needs_lookup(key) {
                let _ = tx.send(key.to_owned());
            }
        }))
    }

    /// Whether `key` (`host:port`) names a host the system resolver would be asked for: not an
    /// IP literal, nor a name of the test knob.
    fn needs_lookup(&self, key: &str) -> bool {
        let Some((host, _)) = key.rsplit_once(':') else {
            return false;
        };
        let host = unbracketed(host);
        host.parse::<IpAddr>().is_err()
            && (self.test_hosts.is_empty()
                || !self.test_hosts.contains_key(&host.to_ascii_lowercase()))
    }

    /// Starts looking up `key` (`host:port`, a host's politeness key) unless its answer is
    /// cached or coming, so that its first fetch finds it (see the module doc). Never waits
    /// for the answer, nor checks it against the policy (its fetch does).
    pub fn resolve_ahead(&self, key: &str) {
        let Some((host, port)) = key.rsplit_once(':') else {
            return;
        };
        let Ok(port) = port.parse::<u16>() else {
            return;
        };
        let host = unbracketed(host).to_ascii_lowercase();
        if self.answered_here(&host).is_some() {
            return;
        }
        let key = format!("{host}:{port}");
        let mut state = self.lookups.lock();
        if state.cached(&key).is_some()
            || state.running.contains_key(&key)
            || state.queued.contains(&key)
        {
            return;
        }
        if state.threads < AHEAD_THREADS {
            state.threads += 1;
            state.start(&key);
            drop(state);
            self.lookups.spawn(key);
        } else if state.ahead.len() < AHEAD_QUEUED {
            state.queued.insert(key.clone());
            state.ahead.push_back(key);
        }
    }

    /// The answer without refused addresses; an error if none is left.
    fn allowed(&self, key: &str, addrs: Addrs) -> Result<Addrs, Fail> {
        if self.exempt.iter().any(|e| e == key) {
            return Ok(addrs);
        }
        if addrs.iter().all(|a| self.policy.check(a.ip()).is_ok()) {
            return Ok(addrs);
        }
        let mut kept = Vec::new();
        let mut refused = None;
        for &addr in addrs.iter() {
            match self.policy.check(addr.ip()) {
                Ok(()) => kept.push(addr),
                Err(e) => refused = refused.or(Some(e)),
            }
        }
        match refused {
            Some(e) if kept.is_empty() => Err(Fail::new(ErrorKind::PrivateAddress, e.to_string())),
            _ => Ok(kept.into()),
        }
    }

    /// An IP literal, or a name of the test knob: answered without a look-up.
    fn answered_here(&self, host: &str) -> Option<IpAddr> {
        let literal = host.parse::<IpAddr>().ok();
        literal.or_else(|| self.test_hosts.get(host).copied())
    }

    /// The addresses of `host` before the policy: an IP literal, the test knob, the cache, or
    /// the system resolver (a look-up under way, or one of its own); with the cache key.
    fn lookup(&self, host: &str, port: u16, timeout: Duration) -> Result<(String, Addrs), Fail> {
        let host = host.to_ascii_lowercase();
        let key = format!("{host}:{port}");
        let pending = match self.known(&host, &key, port) {
            Known::Addrs(addrs) => return Ok((key, addrs)),
            Known::Running(pending) => pending,
            Known::Unknown(mut state) => {
                let pending = state.start(&key);
                drop(state);
                let (lookups, owned) = (Arc::clone(&self.lookups), key.clone());
                std::thread::Builder::new()
                    .name("dns".into())
                    .stack_size(LOOKUP_STACK)
                    .spawn(move || lookups.run(&owned))
                    .map_err(|e| {
                        let message = format!("cannot start a look-up of {host}: {e}");
                        self.lookups.finish(&key, Err(message.clone()));
                        Fail::new(ErrorKind::Dns, message)
                    })?;
                pending
            }
        };
        let addrs = pending.wait(&host, timeout)?;
        Ok((key, addrs))
    }

    /// What is known of `key` (`host:port`, `host` lower-cased) before a look-up: its
    /// addresses (an IP literal, the test knob, the cache), the look-up under way, or nothing
    /// (the state's lock held, so that the caller may start one).
    fn known(&self, host: &str, key: &str, port: u16) -> Known<'_> {
        if let Some(ip) = self.answered_here(host) {
            return Known::Addrs(Arc::from([SocketAddr::new(ip, port)]));
        }
        let state = self.lookups.lock();
        if let Some(addrs) = state.cached(key) {
            return Known::Addrs(addrs);
        }
        match state.running.get(key) {
            Some(pending) => Known::Running(Arc::clone(pending)),
            None => Known::Unknown(state),
        }
    }
}

/// What `CachingResolver::known` found.
enum Known<'a> {
    Addrs(Addrs),
    Running(Arc<Pending>),
    Unknown(MutexGuard<'a, LookupState>),
}

impl Lookup {
    /// Whether the answer came; if not, `notify` is called once it does (and dropped if it
    /// did), on the look-up's thread.
    pub fn answered_or_notify(&self, notify: Notify) -> bool {
        let mut answer = self
            .pending
            .answer
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if answer.came.is_some() {
            return true;
        }
        answer.notify.push(notify);
        false
    }

    /// The failure of a fetch that waited `timeout` for this answer, as `resolve` words it.
    pub fn timed_out(&self, timeout: Duration) -> Fail {
        lookup_timeout(&self.host, timeout)
    }
}

impl Lookups {
    fn lock(&self) -> MutexGuard<'_, LookupState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks the system resolver for `key` and hands the answer to whoever waits for it.
    fn run(&self, key: &str) {
        let (host, port) = key.rsplit_once(':').expect("a host:port key");
        let port = port.parse().expect("a port");
        let answer = match (self.system)(host, port) {
            Ok(addrs) if !addrs.is_empty() => Ok(Addrs::from(addrs)),
            Ok(_) => Err(format!("{host} has no address")),
            Err(e) => Err(format!("looking up {host}: {e}")),
        };
        self.finish(key, answer);
    }

    /// Starts a look-up thread (`serve`) on `key`, counted in `threads` and recorded as
    /// running by the caller; if none can start, `key` is answered with the failure.
    fn spawn(self: &Arc<Self>, key: String) {
        let (lookups, first) = (Arc::clone(self), key.clone());
        let started = std::thread::Builder::new()
            .name("dns-lookup".into())
            .stack_size(LOOKUP_STACK)
            .spawn(move || lookups.serve(first));
        if let Err(e) = started {
            self.lock().threads -= 1;
            let host = key.rsplit_once(':').map_or(&*key, |(host, _)| host);
            let message = format!("cannot start a look-up of {host}: {e}");
            self.finish(&key, Err(message));
        }
    }

    /// A look-up thread: `key`, then the keys a fetch waits for, then (while the threads are
    /// at most `AHEAD_THREADS`) the queued keys nobody has looked up yet.
    fn serve(&self, mut key: String) {
        loop {
            self.run(&key);
            let mut state = self.lock();
            match state.next_key() {
                Some(next) => key = next,
                None => {
                    state.threads -= 1;
                    return;
                }
            }
        }
    }

    /// Caches an answer (a failure is not) and wakes whoever waits for it: the threads that
    /// block, and the waiters that do not (`Notify`), called once the locks are let go.
    fn finish(&self, key: &str, answer: Result<Addrs, String>) {
        let mut state = self.lock();
        if let Ok(addrs) = &answer {
            if state.cache.len() >= MAX_ENTRIES {
                state.cache.clear();
            }
            state
                .cache
                .insert(key.to_owned(), (Arc::clone(addrs), Instant::now()));
        }
        let Some(pending) = state.running.remove(key) else {
            return;
        };
        drop(state);
        let mut came = pending.answer.lock().unwrap_or_else(|e| e.into_inner());
        came.came = Some(answer);
        let notify = std::mem::take(&mut came.notify);
        drop(came);
        pending.done.notify_all();
        notify.into_iter().for_each(|notify| notify());
    }
}

impl LookupState {
    /// `key`'s addresses while they are fresh.
    fn cached(&self, key: &str) -> Option<Addrs> {
        let (addrs, at) = self.cache.get(key)?;
        (at.elapsed() < TTL).then(|| Arc::clone(addrs))
    }

    /// Records a look-up of `key` as under way.
    fn start(&mut self, key: &str) -> Arc<Pending> {
        let pending = Arc::new(Pending::default());
        self.running.insert(key.to_owned(), Arc::clone(&pending));
        pending
    }

    /// The next key for a look-up thread that is free: one a fetch waits for (recorded as
    /// running already), else, while the threads are at most `AHEAD_THREADS`, one queued
    /// ahead that is neither cached nor under way (recorded as running here).
    fn next_key(&mut self) -> Option<String> {
        if let Some(key) = self.needed.pop_front() {
            return Some(key);
        }
        if self.threads > AHEAD_THREADS {
            return None;
        }
        while let Some(key) = self.ahead.pop_front() {
            self.queued.remove(&key);
            if self.cached(&key).is_none() && !self.running.contains_key(&key) {
                self.start(&key);
                return Some(key);
            }
        }
        None
    }
}

impl Pending {
    /// The answer, waited for at most `timeout`.
    fn wait(&self, host: &str, timeout: Duration) -> Result<Addrs, Fail> {
        let deadline = Instant::now() + timeout;
        let mut answer = self.answer.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(came) = answer.came.as_ref() {
                return came
                    .clone()
                    .map_err(|message| Fail::new(ErrorKind::Dns, message));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(lookup_timeout(host, timeout));
            }
            answer = self
                .done
                .wait_timeout(answer, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// A fetch that waited `timeout` for `host`'s look-up.
fn lookup_timeout(host: &str, timeout: Duration) -> Fail {
    Fail::new(
        ErrorKind::Timeout,
        format!("looking up {host} took over {timeout:?}"),
    )
}

/// The system resolver: `getaddrinfo`, which has no timeout of its own (hence its thread).
fn getaddrinfo(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    (host, port).to_socket_addrs().map(Vec::from_iter)
}

/// An IPv6 literal without the brackets a URL's host carries (`[::1]` → `::1`), which the
/// resolver, `NO_PROXY` and TLS's server name take bare; any other host as it is.
pub fn unbracketed(host: &str) -> &str {
    host.trim_start_matches('[').trim_end_matches(']')
}

/// `CRAWL_TEST_HOSTS`'s `name=address` pairs, lower-cased names; pairs whose address is not
/// loopback are dropped.
fn test_hosts(list: &str) -> FxHashMap<String, IpAddr> {
    list.split(',')
        .filter_map(|pair| {
            let (name, ip) = pair.split_once('=')?;
            let ip = ip
                .trim()
                .parse::<IpAddr>()
                .ok()
                .filter(IpAddr::is_loopback)?;
            Some((name.trim().to_ascii_lowercase(), ip))
        })
        .collect()
}

/// A system resolver for tests (here and the reactor's): holds every look-up until its gate
/// opens, then answers a name with its address (127.0.0.2 unless told), a name beginning
/// `no-such.` with a failure; counts the look-ups of each name and the most running at once.
#[cfg(test)]
pub(crate) mod fake {
    use super::*;

    #[derive(Default)]
    pub(crate) struct FakeDns {
        pub(crate) state: Mutex<FakeState>,
        opened: Condvar,
    }

    #[derive(Default)]
    pub(crate) struct FakeState {
        pub(crate) open: bool,
        pub(crate) running: usize,
        pub(crate) most: usize,
        pub(crate) asked: FxHashMap<String, usize>,
        /// The address of every answer; 127.0.0.2 when None.
        pub(crate) address: Option<IpAddr>,
    }

    impl FakeDns {
        pub(crate) fn lookup(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
            let mut state = self.state.lock().unwrap();
            *state.asked.entry(host.to_owned()).or_default() += 1;
            state.running += 1;
            state.most = state.most.max(state.running);
            while !state.open {
                state = self.opened.wait(state).unwrap();
            }
            state.running -= 1;
            if host.starts_with("no-such.") {
                return Err(io::Error::new(io::ErrorKind::NotFound, "no such name"));
            }
            let ip = state.address.unwrap_or(IpAddr::from([127, 0, 0, 2]));
            Ok(vec![SocketAddr::new(ip, port)])
        }

        pub(crate) fn open(&self) {
            self.state.lock().unwrap().open = true;
            self.opened.notify_all();
        }

        /// Polls (with a deadline) until `done` holds of the state.
        pub(crate) fn until(&self, done: impl Fn(&FakeState) -> bool) {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !done(&self.state.lock().unwrap()) {
                assert!(Instant::now() < deadline, "timed out");
                std::thread::yield_now();
            }
        }
    }

    /// A resolver whose system resolver is `fake`, its answers checked by `policy`.
    pub(crate) fn resolver(policy: AddressPolicy, fake: &Arc<FakeDns>) -> CachingResolver {
        let fake = Arc::clone(fake);
        let system: SystemLookup = Arc::new(move |host, port| fake.lookup(host, port));
        CachingResolver::with_system(policy, FxHashMap::default(), system)
    }
}

#[cfg(test)]
mod tests {
    use super::fake::FakeDns;
    use super::*;
    use url::Url;

    fn resolve(resolver: &CachingResolver, url: &str) -> Result<Vec<SocketAddr>, Fail> {
        let url = Url::parse(url).unwrap();
        let host = url.host_str().unwrap();
        let port = url.port_or_known_default().unwrap();
        resolver
            .resolve(host, port, Duration::from_secs(5))
            .map(|a| a.to_vec())
    }

    fn resolver(seed: &str, hosts: &str) -> CachingResolver {
        let policy = AddressPolicy::new(&[Url::parse(seed).unwrap()], false);
        CachingResolver::with_system(policy, test_hosts(hosts), Arc::new(getaddrinfo))
    }

    #[test]
    fn answers_pass_the_policy_literals_and_names_alike() {
        // A public seed: every loopback answer is refused, literal or by name.
        let r = resolver("http://example.com/", "meta.test=127.0.0.2");
        for url in [
            "http://127.0.0.1:9/",
            "http://[::1]:9/",
            "http://meta.test:9/x",
        ] {
            let e = resolve(&r, url).unwrap_err();
            assert_eq!(e.kind, ErrorKind::PrivateAddress, "{url}: {e:?}");
            assert!(e.message.contains("refused to connect"), "{e:?}");
        }
        // A loopback seed opens loopback: the same answers come back.
        let r = resolver("http://127.0.0.1:8/", "meta.test=127.0.0.2");
        assert_eq!(
            resolve(&r, "http://META.test:9/").unwrap(),
            ["127.0.0.2:9".parse().unwrap()]
        );
        assert_eq!(
            resolve(&r, "http://127.0.0.3/").unwrap(),
            ["127.0.0.3:80".parse().unwrap()]
        );
        // An exempt authority (a proxy) is answered whatever the policy.
        let mut r = resolver("http://example.com/", "");
        r.exempt("127.0.0.1:3128");
        assert!(resolve(&r, "http://127.0.0.1:3128/").is_ok());
        assert!(resolve(&r, "http://127.0.0.1:3129/").is_err());
    }

    fn with_fake(seed: &str) -> (CachingResolver, Arc<FakeDns>) {
        let fake = Arc::new(FakeDns::default());
        let policy = AddressPolicy::new(&[Url::parse(seed).unwrap()], false);
        (super::fake::resolver(policy, &fake), fake)
    }

    fn cached(r: &CachingResolver, key: &str) -> bool {
        r.lookups.lock().cached(key).is_some()
    }

    #[test]
    fn only_names_of_the_system_resolver_are_handed_to_the_look_ahead() {
        let r = resolver("http://127.0.0.1/", "knob.test=127.0.0.2");
        for key in ["127.0.0.1:80", "[::1]:8080", "KNOB.test:80", "no-port"] {
            assert!(!r.needs_lookup(key), "{key}");
        }
        assert!(r.needs_lookup("a.test:80") && r.needs_lookup("xn--bcher-kva.test:443"));
        assert!(resolver("http://127.0.0.1/", "").needs_lookup("knob.test:80"));
    }

    #[test]
    fn a_name_resolved_ahead_is_answered_from_the_cache_and_checked_then() {
        // A public seed: loopback is refused, though the name was resolved ahead.
        let (r, fake) = with_fake("http://example.com/");
        fake.open();
        r.resolve_ahead("A.test:80");
        r.resolve_ahead("127.0.0.1:80"); // literals need no look-up
        let deadline = Instant::now() + Duration::from_secs(20);
        while !cached(&r, "a.test:80") {
            assert!(Instant::now() < deadline, "never resolved");
            std::thread::yield_now();
        }
        let e = resolve(&r, "http://a.test/").unwrap_err();
        assert_eq!(e.kind, ErrorKind::PrivateAddress, "{e:?}");
        r.resolve_ahead("a.test:80"); // cached: not asked again
        // A loopback seed: the same cached answer is allowed.
        let (open, _) = with_fake("http://127.0.0.1/");
        let answer = open.allowed("a.test:80", r.lookups.lock().cached("a.test:80").unwrap());
        assert_eq!(answer.unwrap()[..], ["127.0.0.2:80".parse().unwrap()]);
        let asked = fake.state.lock().unwrap().asked.clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked["a.test"], 1);
    }

    #[test]
    fn look_ups_ahead_run_at_once_up_to_the_bound_and_once_per_name() {
        let (r, fake) = with_fake("http://127.0.0.1/");
        let names: Vec<String> = (0..AHEAD_THREADS + 10)
            .map(|i| format!("h{i}.test"))
            .collect();
        for name in &names {
            r.resolve_ahead(&format!("{name}:80"));
            r.resolve_ahead(&format!("{name}:80")); // known: neither queued nor asked twice
        }
        // Every thread is waiting on the (closed) resolver: the bound, all at once.
        fake.until(|s| s.running == AHEAD_THREADS);
        assert_eq!(r.lookups.lock().ahead.len(), 10);
        // A fetch of a queued name does not wait for a thread ahead: it asks at once, and
        // a second fetch of it waits for that answer rather than asking again.
        let queued = format!("{}:80", names.last().unwrap());
        std::thread::scope(|scope| {
            let fetches: Vec<_> = (0..2)
                .map(|_| scope.spawn(|| resolve(&r, &format!("http://{queued}/"))))
                .collect();
            fake.until(|s| s.running == AHEAD_THREADS + 1);
            fake.open();
            for fetch in fetches {
                assert_eq!(
                    fetch.join().unwrap().unwrap(),
                    ["127.0.0.2:80".parse().unwrap()]
                );
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        while !names.iter().all(|n| cached(&r, &format!("{n}:80"))) {
            assert!(Instant::now() < deadline, "not all resolved");
            std::thread::yield_now();
        }
        let state = fake.state.lock().unwrap();
        assert!(state.asked.values().all(|&n| n == 1), "asked twice");
        assert_eq!(state.asked.len(), names.len());
        assert_eq!(state.most, AHEAD_THREADS + 1);
        let lookups = r.lookups.lock();
        assert!(lookups.running.is_empty() && lookups.ahead.is_empty());
        assert!(lookups.queued.is_empty());
    }

    #[test]
    fn the_schedulers_hook_hands_the_key_over_without_taking_the_lock() {
        let (r, fake) = with_fake("http://127.0.0.1/");
        let r = Arc::new(r);
        let hook = r.ahead_hook().unwrap();
        let held = r.lookups.lock();
        hook("hooked.test:80"); // returns though the resolver's lock is held
        drop(held);
        fake.open();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !cached(&r, "hooked.test:80") {
            assert!(Instant::now() < deadline, "never resolved");
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_fetch_that_gives_up_leaves_the_late_answer_cached() {
        let (r, fake) = with_fake("http://127.0.0.1/");
        let e = r
            .resolve("slow.test", 80, Duration::from_millis(1))
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Timeout, "{e:?}");
        fake.open();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !cached(&r, "slow.test:80") {
            assert!(Instant::now() < deadline, "the late answer was dropped");
            std::thread::yield_now();
        }
        assert!(resolve(&r, "http://slow.test/").is_ok());
        assert_eq!(fake.state.lock().unwrap().asked["slow.test"], 1);
    }

    /// `resolve_or_start`'s look-up, to be answered: told through a channel once it is.
    fn coming(r: &CachingResolver, host: &str) -> (Lookup, std::sync::mpsc::Receiver<()>) {
        let Resolution::Coming(lookup) = r.resolve_or_start(host, 80) else {
            panic!("{host} answered at once");
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let notify = Box::new(move || tx.send(()).unwrap());
        assert!(
            !lookup.answered_or_notify(notify),
            "{host} answered already"
        );
        (lookup, rx)
    }

    /// Waits (20 s at most) for `lookup`'s answer to be told, once.
    fn told(rx: &std::sync::mpsc::Receiver<()>) {
        rx.recv_timeout(Duration::from_secs(20)).expect("told");
        assert!(rx.try_recv().is_err(), "told twice");
    }

    fn now(resolution: Resolution) -> Result<Vec<SocketAddr>, Fail> {
        match resolution {
            Resolution::Now(answer) => answer.map(|addrs| addrs.to_vec()),
            Resolution::Coming(_) => panic!("not answered at once"),
        }
    }

    #[test]
    fn a_fetch_that_does_not_wait_is_answered_at_once_from_literals_and_the_cache() {
        let (r, fake) = with_fake("http://127.0.0.1/");
        fake.open();
        let loopback = "127.0.0.3:80".parse().unwrap();
        assert_eq!(
            now(r.resolve_or_start("127.0.0.3", 80)).unwrap(),
            [loopback]
        );
        assert!(resolve(&r, "http://hit.test/").is_ok());
        let resolved = now(r.resolve_or_start("HIT.test", 80)).unwrap();
        assert_eq!(resolved, ["127.0.0.2:80".parse().unwrap()]);
        assert_eq!(fake.state.lock().unwrap().asked["hit.test"], 1);
        // Checked against the policy at once, as `resolve` checks.
        let (public, _) = with_fake("http://example.com/");
        let e = now(public.resolve_or_start("[::1]", 80)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::PrivateAddress, "{e:?}");
    }

    #[test]
    fn a_miss_starts_a_look_up_that_tells_its_answer_without_a_wait() {
        let (r, fake) = with_fake("http://127.0.0.1/");
        let (lookup, rx) = coming(&r, "miss.test");
        fake.until(|s| s.running == 1);
        assert!(rx.try_recv().is_err(), "told before the answer");
        fake.open();
        told(&rx);
        assert!(lookup.answered_or_notify(Box::new(|| panic!("answered already"))));
        assert_eq!(
            r.checked(&lookup).unwrap()[..],
            ["127.0.0.2:80".parse().unwrap()]
        );
        assert!(cached(&r, "miss.test:80"));
        assert_eq!(fake.state.lock().unwrap().asked["miss.test"], 1);
    }

    #[test]
    fn a_fetch_that_does_not_wait_joins_the_look_up_ahead_and_a_fetch_that_waits() {
        let (r, fake) = with_fake("http://127.0.0.1/");
        r.resolve_ahead("joined.test:80");
        fake.until(|s| s.running == 1);
        let (first, told_first) = coming(&r, "joined.test");
        let (second, told_second) = coming(&r, "JOINED.test");
        std::thread::scope(|scope| {
            let blocking = scope.spawn(|| resolve(&r, "http://joined.test/"));
            fake.open();
            assert!(blocking.join().unwrap().is_ok());
        });
        told(&told_first);
        told(&told_second);
        assert!(r.checked(&first).is_ok() && r.checked(&second).is_ok());
        let state = fake.state.lock().unwrap();
        assert_eq!((state.asked.len(), state.asked["joined.test"]), (1, 1));
    }

    /// `host`'s look-up, started without a wait under `seed`'s policy and answered: its failure
    /// told, the same (kind and message) as a fetch that waits (`resolve`) gets after it.
    fn told_failure(seed: &str, host: &str, kind: ErrorKind) -> (Fail, Arc<FakeDns>) {
        let (r, fake) = with_fake(seed);
        let (lookup, rx) = coming(&r, host);
        fake.open();
        told(&rx);
        let e = r.checked(&lookup).unwrap_err();
        let blocking = resolve(&r, &format!("http://{host}/")).unwrap_err();
        assert_eq!(e.kind, kind, "{e:?}");
        assert_eq!((e.kind, &e.message), (blocking.kind, &blocking.message));
        (e, fake)
    }

    #[test]
    fn a_failed_look_up_is_told_and_fails_as_a_fetch_that_waits_fails() {
        let (e, fake) = told_failure("http://127.0.0.1/", "no-such.test", ErrorKind::Dns);
        assert_eq!(e.message, "looking up no-such.test: no such name");
        // Failures are not cached: the fetch that waits asked again.
        assert_eq!(fake.state.lock().unwrap().asked["no-such.test"], 2);
    }

    #[test]
    fn an_answer_the_policy_refuses_is_told_and_refused_as_a_fetch_that_waits() {
        let public = "http://example.com/";
        let (_, fake) = told_failure(public, "private.test", ErrorKind::PrivateAddress);
        // The answer was cached: the fetch that waits did not ask again.
        assert_eq!(fake.state.lock().unwrap().asked["private.test"], 1);
    }

    #[test]
    fn a_fetchs_look_up_runs_when_the_threads_and_queue_ahead_are_full() {
        let (r, fake) = with_fake("http://127.0.0.1/");
        for i in 0..AHEAD_THREADS + AHEAD_QUEUED + 1 {
            r.resolve_ahead(&format!("ahead{i}.test:80"));
        }
        fake.until(|s| s.running == AHEAD_THREADS);
        let dropped = format!("ahead{}.test", AHEAD_THREADS + AHEAD_QUEUED);
        assert_eq!(r.lookups.lock().ahead.len(), AHEAD_QUEUED);
        assert!(!r.lookups.lock().queued.contains(&format!("{dropped}:80")));
        // Neither a full queue nor busy threads ahead keep a fetch's name waiting: it gets
        // a thread of its own, up to `LOOKUP_THREADS`; past those, it is first in line.
        let queued_ahead = coming(&r, &format!("ahead{AHEAD_THREADS}.test"));
        let mut fetched = vec![coming(&r, &dropped), queued_ahead];
        fetched
            .extend((2..LOOKUP_THREADS - AHEAD_THREADS).map(|i| coming(&r, &format!("f{i}.test"))));
        fake.until(|s| s.running == LOOKUP_THREADS);
        let last = coming(&r, "last.test");
        assert_eq!(r.lookups.lock().needed, ["last.test:80"]);
        fetched.push(last);
        fake.open();
        for (lookup, rx) in &fetched {
            told(rx);
            assert_eq!(
                r.checked(lookup).unwrap()[..],
                ["127.0.0.2:80".parse().unwrap()]
            );
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while r.lookups.lock().threads > 0 {
            assert!(Instant::now() < deadline, "look-up threads left running");
            std::thread::yield_now();
        }
        let state = fake.state.lock().unwrap();
        assert!(state.asked.values().all(|&n| n == 1), "asked twice");
        assert_eq!(state.most, LOOKUP_THREADS);
        let lookups = r.lookups.lock();
        assert!(lookups.running.is_empty() && lookups.ahead.is_empty());
        assert!(lookups.needed.is_empty() && lookups.queued.is_empty());
    }

    #[test]
    fn the_test_resolver_accepts_loopback_addresses_only() {
        let hosts = test_hosts("a.test=127.0.0.2, b.test=10.0.0.1,c.test=::1,d.test=8.8.8.8,bad");
        let mut names: Vec<_> = hosts.keys().cloned().collect();
        names.sort();
        assert_eq!(names, ["a.test", "c.test"]);
    }
}
