//! A DNS cache in front of ureq's resolver.
//!
//! ureq resolves the host before every request, pooled connection or not, and with a timeout
//! set it spawns a thread per lookup: thousands of threads a second in a fast crawl, which cost
//! CPU and left memory growing with the crawl. Mercator kept its own DNS cache for the same
//! reason. Here an IP-literal host is answered without a lookup, and a name's addresses are
//! reused for `TTL`; only a miss goes to the system resolver (with ureq's timeout).
//!
//! Every answer, cached or not, IP literal or name, then passes the crawl's `AddressPolicy`
//! (`fetch::private`): ureq connects only to the addresses a resolver returns, so an address
//! refused here is never connected to. Refused addresses are dropped from the answer; when none
//! is left the fetch fails with `private::Refused` (the URL log's `private-address`).
//!
//! With a proxy, ureq asks the resolver for the proxy's address: the proxy is the user's
//! choice and is exempt (`CachingResolver::exempt`). Its targets come here too, and are
//! checked: every proxy is set to `resolve_target` unless `--allow-private` (`fetch::proxy`),
//! so no proxy resolves a name out of the crawler's sight.
//!
//! `CRAWL_TEST_HOSTS=name=127.0.0.2,...` (a hidden test knob) answers those names without the
//! system resolver; it accepts loopback addresses only, so a test can never reach further.

use crate::fetch::private::{AddressPolicy, Refused};
use rustc_hash::FxHashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How long resolved addresses are reused.
const TTL: Duration = Duration::from_secs(300);
/// Entries kept at most (a fixed cost, whatever the number of hosts); the cache is cleared when
/// it fills (hosts are crawled in waves).
const MAX_ENTRIES: usize = 4096;

#[derive(Debug, Default)]
pub struct CachingResolver {
    inner: DefaultResolver,
    cache: Mutex<FxHashMap<String, (ResolvedSocketAddrs, Instant)>>,
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

    /// Answers `host:port` (a proxy's authority, as in its URL) without checking the policy.
    pub fn exempt(&mut self, authority: &str) {
        self.exempt.push(authority.to_ascii_lowercase());
    }

    /// The answer without refused addresses; an error if none is left.
    fn allowed(
        &self,
        key: &str,
        addrs: ResolvedSocketAddrs,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        if self.exempt.iter().any(|e| e == key) {
            return Ok(addrs);
        }
        let mut kept = self.empty();
        let mut refused = None;
        for &addr in addrs.iter() {
            match self.policy.check(addr.ip()) {
                Ok(()) => kept.push(addr),
                Err(e) => refused = refused.or(Some(e)),
            }
        }
        match refused {
            Some(e) if kept.is_empty() => Err(ureq::Error::Other(Box::new(e))),
            _ => Ok(kept),
        }
    }

    /// The addresses of `uri` before the policy: an IP literal, the test knob, the cache, or
    /// the system resolver.
    fn lookup(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<(String, ResolvedSocketAddrs), ureq::Error> {
        let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) else {
            return Ok((String::new(), self.inner.resolve(uri, config, timeout)?));
        };
        let Some(port) = authority.port_u16().or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        }) else {
            return Ok((String::new(), self.inner.resolve(uri, config, timeout)?));
        };
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let key = format!("{host}:{port}");
        let literal = host.parse::<IpAddr>().ok();
        if let Some(ip) = literal.or_else(|| self.test_hosts.get(&host).copied()) {
            let mut addrs = self.empty();
            addrs.push(SocketAddr::new(ip, port));
            return Ok((key, addrs));
        }
        if let Some((addrs, at)) = self.cache.lock().unwrap().get(&key)
            && at.elapsed() < TTL
        {
            return Ok((key, addrs.clone()));
        }
        let addrs = self.inner.resolve(uri, config, timeout)?;
        let mut cache = self.cache.lock().unwrap();
        if cache.len() >= MAX_ENTRIES {
            cache.clear();
        }
        cache.insert(key.clone(), (addrs.clone(), Instant::now()));
        Ok((key, addrs))
    }
}

impl Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let (key, addrs) = self.lookup(uri, config, timeout)?;
        self.allowed(&key, addrs)
    }
}

/// Whether a fetch error is the policy's refusal.
pub fn is_refused(e: &ureq::Error) -> bool {
    matches!(e, ureq::Error::Other(e) if e.is::<Refused>())
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

    fn resolve(resolver: &CachingResolver, url: &str) -> Result<Vec<SocketAddr>, ureq::Error> {
        let uri: Uri = url.parse().unwrap();
        let config = Config::default();
        resolver
            .resolve(&uri, &config, NextTimeout::default())
            .map(|a| a.iter().copied().collect())
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
            assert!(is_refused(&e), "{url}: {e}");
            assert!(e.to_string().contains("refused to connect"), "{e}");
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
