//! A DNS cache in front of ureq's resolver.
//!
//! ureq resolves the host before every request, pooled connection or not, and with a timeout
//! set it spawns a thread per lookup: thousands of threads a second in a fast crawl, which cost
//! CPU and left memory growing with the crawl. Mercator kept its own DNS cache for the same
//! reason. Here an IP-literal host is answered without a lookup, and a name's addresses are
//! reused for `TTL`; only a miss goes to the system resolver (with ureq's timeout).

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
}

impl Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) else {
            return self.inner.resolve(uri, config, timeout);
        };
        let Some(port) = authority.port_u16().or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        }) else {
            return self.inner.resolve(uri, config, timeout);
        };
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        if let Ok(ip) = host.parse::<IpAddr>() {
            let mut addrs = self.empty();
            addrs.push(SocketAddr::new(ip, port));
            return Ok(addrs);
        }
        let key = format!("{host}:{port}");
        if let Some((addrs, at)) = self.cache.lock().unwrap().get(&key)
            && at.elapsed() < TTL
        {
            return Ok(addrs.clone());
        }
        let addrs = self.inner.resolve(uri, config, timeout)?;
        let mut cache = self.cache.lock().unwrap();
        if cache.len() >= MAX_ENTRIES {
            cache.clear();
        }
        cache.insert(key, (addrs.clone(), Instant::now()));
        Ok(addrs)
    }
}
