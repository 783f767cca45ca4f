//! What the CDXJ index costs per record (issue 15), for `benches/cdxj.sh`: N synthetic HTML
//! responses written by the WARC writer alone, then by the WARC writer with the index line of
//! each (built and appended as the crawl does, then sorted when the file closes), alternating
//! ROUNDS times so both see the same machine load; and, for comparison, what the second pass
//! the crawl avoids costs (rebuilding the index from the finished WARC file, as after a kill).
//!
//! Usage: `cargo run --release --example cdxj_cost -- [RECORDS] [ROUNDS]`

use std::path::Path;
use std::time::{Duration, Instant, UNIX_EPOCH};

use crawl::SplitMix;
use crawl::archive_internals::{
    Capture, CdxjWriter, Compression, DEFAULT_ZSTD_LEVEL, RequestResponse, WarcConfig, WarcWriter,
    payload_digest,
};

/// Writes `records` responses; with `index`, also their index lines. Returns the time spent in
/// the WARC writer and the time spent indexing.
fn write(dir: &Path, compression: Compression, records: u64, index: bool) -> (Duration, Duration) {
    let mut warc = WarcWriter::open(WarcConfig {
        dir: dir.to_path_buf(),
        compression,
        zstd_level: DEFAULT_ZSTD_LEVEL,
        max_file_bytes: u64::MAX,
        prefix: "bench".into(),
        software: "cdxj_cost".into(),
        dedupe: None,
        response_block_digests: false,
    })
    .unwrap();
    let mut cdxj = index.then(|| CdxjWriter::open(dir).unwrap());
    let mut rng = SplitMix(7);
    let (mut in_warc, mut in_index) = (Duration::ZERO, Duration::ZERO);
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n";
    for i in 0..records {
        // ~8 KiB of HTML with links, different per page.
        let mut body = format!("<html><head><title>page {i}</title></head><body>");
        while body.len() < 8 << 10 {
            body.push_str(&format!(
                "<a href=\"/p/{}\">link {}</a> text ",
                rng.next_u64() % 1_000_000,
                i
            ));
        }
        let url = format!(
            "http://host{}.test/p/{}?q={}",
            i % 97,
            i,
            rng.next_u64() % 100
        );
        let digest = payload_digest(body.as_bytes());
        let ex = RequestResponse {
            target_uri: &url,
            date: UNIX_EPOCH + Duration::from_secs(1_700_000_000 + i),
            ip: None,
            request_head: b"GET / HTTP/1.1\r\nHost: host.test\r\n\r\n",
            response_head: head,
            response_body: body.as_bytes(),
            truncated: None,
        };
        let started = Instant::now();
        let written = warc.write_response(&ex, &digest, None).unwrap();
        in_warc += started.elapsed();
        if let Some(cdxj) = &mut cdxj {
            let started = Instant::now();
            cdxj.add(&Capture {
                target_uri: &url,
                warc_date: &written.warc_date,
                revisit: false,
                http_head: head,
                payload_digest: Some(&digest),
                offset: written.offset,
                length: written.length,
                filename: &written.file,
            })
            .unwrap();
            in_index += started.elapsed();
        }
    }
    let started = Instant::now();
    warc.finish().unwrap();
    in_warc += started.elapsed();
    if let Some(mut cdxj) = cdxj {
        let started = Instant::now();
        cdxj.close().unwrap();
        in_index += started.elapsed();
    }
    (in_warc, in_index)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let records: u64 = args.next().map_or(20_000, |a| a.parse().expect("RECORDS"));
    let rounds: u32 = args.next().map_or(3, |a| a.parse().expect("ROUNDS"));
    let per = |d: Duration| d.as_nanos() as f64 / records as f64 / 1000.0;
    println!("compression\tround\twarc_alone_us\twarc_us\tindex_us\tindex_share\trebuild_us");
    for compression in [Compression::Gzip, Compression::Zstd] {
        for round in 1..=rounds {
            let alone = tempfile::tempdir().unwrap();
            let (warc_alone, _) = write(alone.path(), compression, records, false);
            let both = tempfile::tempdir().unwrap();
            let (warc, index) = write(both.path(), compression, records, true);
            // The second pass the crawl avoids: the index rebuilt from the finished file.
            for entry in std::fs::read_dir(both.path()).unwrap() {
                let path = entry.unwrap().path();
                if path.to_string_lossy().ends_with(".cdxj") {
                    std::fs::remove_file(path).unwrap();
                }
            }
            let started = Instant::now();
            CdxjWriter::open(both.path()).unwrap();
            let rebuild = started.elapsed();
            println!(
                "{compression:?}\t{round}\t{:.1}\t{:.1}\t{:.2}\t{:.1}%\t{:.1}",
                per(warc_alone),
                per(warc),
                per(index),
                100.0 * index.as_secs_f64() / warc.as_secs_f64(),
                per(rebuild)
            );
        }
    }
}
