//! The baseline for the crawl-machinery benchmark (benches/machinery.sh): fetch a list of URLs
//! with the crawler's own HTTP client settings and the same number of threads, and nothing
//! else: no parsing, no dedupe, no scheduling, no writing.
//!
//! Usage: `fetch_baseline URLS_FILE THREADS` — prints pages, seconds and pages/s.

use crawl::{AddressPolicy, BodyRule, FetchConfig, Fetcher, IDLE_TIMEOUT, idle_hosts};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: fetch_baseline URLS_FILE THREADS");
    let threads: usize = args
        .next()
        .and_then(|t| t.parse().ok())
        .expect("THREADS must be a number");
    let urls: Vec<String> = std::fs::read_to_string(&path)
        .expect("reading URLs")
        .lines()
        .map(str::to_owned)
        .collect();
    let fetcher = Fetcher::new(&FetchConfig {
        user_agent: "crawl-baseline".into(),
        headers: Vec::new(),
        cookies: None,
        proxy: None,
        insecure: false,
        extra_roots: Vec::new(),
        tls_resume: true,
        timeout: Duration::from_secs(30),
        low_speed: crawl::fetch_internals::LowSpeed::DEFAULT,
        max_body: 10 << 20,
        host_connections: 1,
        idle_hosts: idle_hosts(threads),
        idle_timeout: IDLE_TIMEOUT,
        body: BodyRule::default(),
        // The benchmark web is on loopback.
        addresses: AddressPolicy::new(&[], true),
    });
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(url) = urls.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if fetcher.get(url).is_err() {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{{\"pages\":{},\"failed\":{},\"seconds\":{secs:.3},\"pages_per_second\":{:.1}}}",
        urls.len(),
        failed.load(Ordering::Relaxed),
        urls.len() as f64 / secs
    );
}
