//! A DNS cache in front of the system resolver.
//!
//! A fast crawl would otherwise ask the system resolver before every connection. Mercator kept
//! its own DNS cache for the same reason. Here an IP-literal host is answered without a lookup,
//! and a name's addresses are reused for `TTL`; only a miss goes to the system resolver, on a
//! thread of its own so that the request's timeout bounds the wait (`getaddrinfo` has none).
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
//! `CRAWL_TEST_HOSTS=name=127.0.0.2,...` (a hidden test knob) answers those names without the
//! system resolver; it accepts loopback addresses only, so a test can never reach further.

use crate::fetch::error::{ErrorKind, Fail};
use crate::fetch::private::AddressPolicy;
use rustc_hash::FxHashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long resolved addresses are reused.
const TTL: Duration = Duration::from_secs(300);
/// Entries kept at most (a fixed cost, whatever the number of hosts); the cache is cleared when
/// it fills (hosts are crawled in waves).
const MAX_ENTRIES: usize = 4096;

/// The addresses of one answer (most names have one or two).
pub type Addrs = Arc<[SocketAddr]>;

#[derive(Debug, Default)]
pub struct CachingResolver {
    cache: Mutex<FxHashMap<String, (Addrs, Instant)>>,
    /// Which addresses may be connected to.
    policy: AddressPolicy,
    /// `host:port`s answered without the policy (a proxy the user named).
    exempt: Vec<String>,
    /// Names answered by the `CRAWL_TEST_HOSTS` knob (loopback addresses only).
    test_hosts: FxHashMap<String, IpAddr>,
}

impl CachingResolver {
    /// A resolver whose answers pass `policy`.
    pub fn new(policy: AddressPolicy) -> CachingResolver {
        CachingResolver {
            policy,
            test_hosts: test_hosts(&std::env::var("CRAWL_TEST_HOSTS").unwrap_or_default()),
            ..CachingResolver::default()
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

    /// The addresses of `host` before the policy: an IP literal, the test knob, the cache, or
    /// the system resolver; with the cache key.
    fn lookup(&self, host: &str, port: u16, timeout: Duration) -> Result<(String, Addrs), Fail> {
        let host = host.to_ascii_lowercase();
        let key = format!("{host}:{port}");
        let literal = host.parse::<IpAddr>().ok();
        if let Some(ip) = literal.or_else(|| self.test_hosts.get(&host).copied()) {
            return Ok((key, Arc::from([SocketAddr::new(ip, port)])));
        }
        if let Some((addrs, at)) = self.cache.lock().unwrap().get(&key)
            && at.elapsed() < TTL
        {
            return Ok((key, Arc::clone(addrs)));
        }
        let addrs = system_lookup(&host, port, timeout)?;
        let mut cache = self.cache.lock().unwrap();
        if cache.len() >= MAX_ENTRIES {
            cache.clear();
        }
        cache.insert(key.clone(), (Arc::clone(&addrs), Instant::now()));
        Ok((key, addrs))
    }
}

/// An IPv6 literal without the brackets a URL's host carries (`[::1]` → `::1`), which the
/// resolver, `NO_PROXY` and TLS's server name take bare; any other host as it is.
pub fn unbracketed(host: &str) -> &str {
    host.trim_start_matches('[').trim_end_matches(']')
}

/// `getaddrinfo` on a thread of its own, waited for at most `timeout` (a late answer is
/// dropped with its thread).
fn system_lookup(host: &str, port: u16, timeout: Duration) -> Result<Addrs, Fail> {
    let (tx, rx) = std::sync::mpsc::channel();
    let name = host.to_owned();
    std::thread::Builder::new()
        .name("dns".into())
        .spawn(move || {
            let _ = tx.send((name.as_str(), port).to_socket_addrs().map(Vec::from_iter));
        })
        .map_err(|e| {
            Fail::new(
                ErrorKind::Dns,
                format!("cannot start a look-up of {host}: {e}"),
            )
        })?;
    match rx.recv_timeout(timeout) {
        Ok(Ok(addrs)) if !addrs.is_empty() => Ok(addrs.into()),
        Ok(Ok(_)) => Err(Fail::new(ErrorKind::Dns, format!("{host} has no address"))),
        Ok(Err(e)) => Err(Fail::new(ErrorKind::Dns, format!("looking up {host}: {e}"))),
        Err(_) => Err(Fail::new(
            ErrorKind::Timeout,
            format!("looking up {host} took over {timeout:?}"),
        )),
    }
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

#[cfg(test)]
mod tests {
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
        CachingResolver {
            policy,
            test_hosts: test_hosts(hosts),
            ..CachingResolver::default()
        }
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

    #[test]
    fn the_test_resolver_accepts_loopback_addresses_only() {
        let hosts = test_hosts("a.test=127.0.0.2, b.test=10.0.0.1,c.test=::1,d.test=8.8.8.8,bad");
        let mut names: Vec<_> = hosts.keys().cloned().collect();
        names.sort();
        assert_eq!(names, ["a.test", "c.test"]);
    }
}
