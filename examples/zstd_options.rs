//! Measures zstd settings on real WARC records: CPU per record and bytes, one frame per record
//! as `output::warc` writes them, with the writer's settings as the first row.
//!
//!     cargo run --release --example zstd_options -- OUT/warc/*.warc.zst
//!
//! Each row compresses every record of the file (decoded from its frames) with one reused
//! context, seven rounds, and shows the best round's µs per record and the total bytes.

use std::time::Instant;
use zstd::zstd_safe::{CParameter, ParamSwitch};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: zstd_options FILE.warc.zst");
    let raw = std::fs::read(&path).expect("read the file");
    let mut records = Vec::new();
    let mut rest = &raw[..];
    while !rest.is_empty() {
        let n = zstd::zstd_safe::find_frame_compressed_size(rest).expect("a frame");
        records.push(zstd::bulk::decompress(&rest[..n], 1 << 24).expect("decode"));
        rest = &rest[n..];
    }
    let input: usize = records.iter().map(Vec::len).sum();
    println!("{} records, {} bytes uncompressed", records.len(), input);
    type Setting = (&'static str, i32, Vec<CParameter>);
    let settings: Vec<(Setting, usize)> = vec![
        (("level 1 (the writer's)", 1, vec![]), 0),
        (("level 1, literals raw < 1 KiB", 1, vec![]), 1024),
        (("level 1, literals raw < 4 KiB", 1, vec![]), 4096),
        (("level 1, literals raw < 512 B", 1, vec![]), 512),
        (("level 1, literals raw < 2 KiB", 1, vec![]), 2048),
        (("level 1, literals raw always", 1, vec![]), usize::MAX),
        (("level -1", -1, vec![]), 0),
        (("level -3", -3, vec![]), 0),
        (("level -5", -5, vec![]), 0),
        (("level 1, hashLog 10", 1, vec![CParameter::HashLog(10)]), 0),
        (("level 1 again (noise)", 1, vec![]), 0),
        (
            (
                "level 1, literals raw < 1 KiB, hashLog 10",
                1,
                vec![CParameter::HashLog(10)],
            ),
            1024,
        ),
        (
            (
                "level 1, literals raw < 1 KiB, minMatch 6",
                1,
                vec![CParameter::MinMatch(6)],
            ),
            1024,
        ),
        (
            ("level 1, literals raw < 1 KiB, again (noise)", 1, vec![]),
            1024,
        ),
        (("level 1, minMatch 6", 1, vec![CParameter::MinMatch(6)]), 0),
    ];
    println!("| setting | µs/record | bytes | bytes vs level 1 | CPU vs level 1 |");
    let mut first: Option<(f64, usize)> = None;
    for ((name, level, params), raw_below) in settings {
        let new = |literals: ParamSwitch| {
            let mut c = zstd::bulk::Compressor::new(level).unwrap();
            c.set_parameter(CParameter::ChecksumFlag(true)).unwrap();
            c.set_parameter(CParameter::ContentSizeFlag(true)).unwrap();
            c.set_parameter(CParameter::LiteralCompressionMode(literals))
                .unwrap();
            for p in &params {
                c.set_parameter(*p).unwrap();
            }
            c
        };
        // Records under `raw_below` bytes go through a second context whose literals are raw.
        let mut c = new(ParamSwitch::Auto);
        let mut small = new(ParamSwitch::Disable);
        let mut out = Vec::with_capacity(1 << 20);
        let mut best = f64::MAX;
        let mut bytes = 0;
        for _ in 0..7 {
            bytes = 0;
            let start = Instant::now();
            for r in &records {
                let c = if r.len() < raw_below {
                    &mut small
                } else {
                    &mut c
                };
                out.clear();
                out.reserve(zstd::zstd_safe::compress_bound(r.len()));
                c.compress_to_buffer(r, &mut out).unwrap();
                bytes += out.len();
            }
            best = best.min(start.elapsed().as_secs_f64() * 1e6 / records.len() as f64);
        }
        let (t0, b0) = *first.get_or_insert((best, bytes));
        println!(
            "| {name} | {best:.2} | {bytes} | {:+.1} % | {:+.1} % |",
            (bytes as f64 / b0 as f64 - 1.0) * 100.0,
            (best / t0 - 1.0) * 100.0
        );
    }
}
