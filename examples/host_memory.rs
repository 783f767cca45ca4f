//! Memory per known host, for the scheduler alone: HOSTS hosts each get URLs, are served (their
//! robots.txt answered, their pages fetched instantly) and drain, in waves of 1,000 with a
//! short rest between pages, the way a crawl meets hosts. A counting allocator reports the
//! scheduler's live heap after every host has been met, and its peak.
//!
//! Usage: `host_memory HOSTS [PAGES_PER_HOST]` (benches/host_memory.sh runs 10^3 .. 10^5)

use crawl::internals::{DelayRule, Entry, Next, RobotsRules, Scheduler, Work};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[path = "common/counting.rs"]
mod counting;
use counting::{LIVE, PEAK};

fn main() {
    let mut args = std::env::args().skip(1);
    let hosts: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("usage: host_memory HOSTS [PAGES]");
    let pages: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let rule = DelayRule {
        factor: 10.0,
        min: Duration::ZERO,
        max: Duration::from_secs(30),
    };
    let before = LIVE.load(Ordering::Relaxed);
    let mut scheduler = Scheduler::with_lanes(rule, 1, None);
    let mut now = Instant::now();
    let robots = RobotsRules::from_response("crawl", 200, b"User-agent: *\nDisallow: /private/\n");
    for wave in (0..hosts).step_by(1000) {
        for h in wave..(wave + 1000).min(hosts) {
            for p in 0..pages {
                let entry = Entry::new(format!("http://host{h}.example/page/{p}.html"), 1, 0);
                scheduler.add(entry, now).expect("a canonical URL");
            }
        }
        loop {
            match scheduler.next(now).expect("in-memory queues do no I/O") {
                Next::Work(Work::Robots { host, .. }) => {
                    scheduler.robots_done(host, robots.clone(), Duration::from_millis(1), now)
                }
                Next::Work(Work::Page { host, .. }) => {
                    scheduler.page_done(host, Duration::from_millis(1), now)
                }
                Next::WaitUntil(at) => now = at,
                Next::Empty => break,
            }
        }
        now += Duration::from_secs(1); // the wave's hosts are done resting
    }
    let live = LIVE.load(Ordering::Relaxed) - before;
    let peak = PEAK.load(Ordering::Relaxed) - before;
    println!(
        "hosts {hosts}, pages/host {pages}: live heap after {:.1} KiB ({:.1} B/host), peak {:.1} KiB",
        live as f64 / 1024.0,
        live as f64 / hosts as f64,
        peak as f64 / 1024.0
    );
    drop(scheduler);
}
