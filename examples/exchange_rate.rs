//! The shard exchange's engine alone (issue 16), for `benches/exchange.sh`: URLs per second
//! through one Redis stream, and what a queued URL costs Redis in memory.
//!
//! - `broker`: one thread publishes batches of 512 URLs straight to the stream while another
//!   reads and acknowledges them (XREADGROUP, then XACK + XDEL): the broker's own ceiling, the
//!   peer the pipeline is compared with.
//! - `pipeline`: what the crawl does: URLs appended to the outbox on disk 10 at a time (a page's
//!   cross-shard links), the sender thread batching them into the stream, the reader as above.
//!   Timed from the first append to the last URL acknowledged.
//!
//! The two alternate ROUNDS times against a `redis-server` of the example's own (appendonly,
//! fsync always, as the crawl asks), so both see the same machine. Then `memory`: the stream
//! filled to `--max` batches with nobody reading, and Redis's `used_memory` before and after,
//! per URL held.
//!
//! Usage: `cargo run --release --example exchange_rate -- [URLS] [ROUNDS]`

use crawl::exchange_internals::{
    Batching, Broker, Handoff, Outbox, RedisBroker, Sender, SenderConfig,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use testweb::redis::RedisServer;

const BATCH: usize = 512;

/// A URL of the shape the crawl sends (host:port, a path, a query now and then).
fn url(i: u64) -> Handoff {
    let query = if i.is_multiple_of(5) {
        format!("?page={}", i % 97)
    } else {
        String::new()
    };
    Handoff {
        url: format!(
            "http://host{}.example:8080/section/{}/article-{i}.html{query}",
            i % 1000,
            i % 37
        ),
        depth: (i % 6) as u32,
    }
}

/// Reads and acknowledges shard 1's stream until `total` URLs came; returns when.
fn drain(reader: &RedisBroker, total: u64) -> Instant {
    let mut got = 0;
    while got < total {
        let deliveries = reader.read(64, Duration::from_millis(100)).unwrap();
        got += deliveries.iter().map(|d| d.urls.len() as u64).sum::<u64>();
        let ids: Vec<String> = deliveries.into_iter().map(|d| d.id).collect();
        reader.ack(&ids).unwrap();
    }
    Instant::now()
}

fn broker_round(server: &RedisServer, ns: &str, total: u64) -> Duration {
    let writer = RedisBroker::connect(&server.url(), ns, 0, 2).unwrap();
    let reader = RedisBroker::connect(&server.url(), ns, 1, 2).unwrap();
    let started = Instant::now();
    let ended = std::thread::scope(|scope| {
        let reading = scope.spawn(|| drain(&reader, total));
        let mut next = 0;
        while next < total {
            let batch: Vec<Handoff> = (next..(next + BATCH as u64).min(total)).map(url).collect();
            while !writer.publish(1, &batch).unwrap() {
                std::thread::sleep(Duration::from_millis(1));
            }
            next += batch.len() as u64;
        }
        reading.join().unwrap()
    });
    ended - started
}

fn pipeline_round(server: &RedisServer, ns: &str, total: u64) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let writer = RedisBroker::connect(&server.url(), ns, 0, 2).unwrap();
    let reader = RedisBroker::connect(&server.url(), ns, 1, 2).unwrap();
    let outbox = Arc::new(Outbox::open(dir.path()).unwrap());
    let config = SenderConfig {
        batching: Batching {
            urls: BATCH,
            batches: 16,
        },
        ..SenderConfig::default()
    };
    let sender = Sender::spawn(1, outbox.clone(), Arc::new(writer), config).unwrap();
    let started = Instant::now();
    let ended = std::thread::scope(|scope| {
        let reading = scope.spawn(|| drain(&reader, total));
        for first in (0..total).step_by(10) {
            let page: Vec<Handoff> = (first..(first + 10).min(total)).map(url).collect();
            outbox.append(&page).unwrap();
        }
        reading.join().unwrap()
    });
    sender.stop().unwrap();
    ended - started
}

fn used_memory(server: &RedisServer) -> u64 {
    let info = server.command(&["INFO", "memory"]).unwrap();
    let field = |name: &str| -> u64 {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
            .unwrap()
    };
    field("used_memory")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let total: u64 = args.next().map_or(200_000, |a| a.parse().unwrap());
    let rounds: u32 = args.next().map_or(3, |a| a.parse().unwrap());
    let server = RedisServer::start().unwrap();
    let (mut broker, mut pipeline) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        broker.push(broker_round(
            &server,
            &format!("crawl:bench-b{round}"),
            total,
        ));
        pipeline.push(pipeline_round(
            &server,
            &format!("crawl:bench-p{round}"),
            total,
        ));
    }
    let rate = |d: &Duration| total as f64 / d.as_secs_f64();
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (b, p) = (median(&mut broker), median(&mut pipeline));
    println!("urls per round: {total}, rounds: {rounds}, batch: {BATCH} URLs");
    println!(
        "broker only     (publish -> read -> ack): {:>9.0} URLs/s (median of {rounds})",
        rate(&b)
    );
    println!(
        "pipeline (outbox -> sender -> read -> ack): {:>9.0} URLs/s (median of {rounds})",
        rate(&p)
    );
    println!(
        "pipeline / broker: {:.2}",
        b.as_secs_f64() / p.as_secs_f64()
    );

    // Memory: a stream full to its limit, nobody reading.
    let max = 256u64;
    let before = used_memory(&server);
    let writer = RedisBroker::connect(&server.url(), "crawl:bench-mem", 0, 2)
        .unwrap()
        .with_max_stream_len(max);
    let mut held = 0u64;
    let mut next = 0;
    loop {
        let batch: Vec<Handoff> = (next..next + BATCH as u64).map(url).collect();
        if !writer.publish(1, &batch).unwrap() {
            break;
        }
        next += BATCH as u64;
        held += BATCH as u64;
    }
    let after = used_memory(&server);
    let url_bytes: usize = (0..held).map(|i| url(i).url.len() + 2).sum();
    println!(
        "memory: a full stream of {max} batches ({held} URLs, {:.1} MiB of payload) holds {:.1} MiB in Redis: {:.0} bytes per URL ({:.0} of payload)",
        url_bytes as f64 / (1 << 20) as f64,
        (after - before) as f64 / (1 << 20) as f64,
        (after - before) as f64 / held as f64,
        url_bytes as f64 / held as f64,
    );
}
