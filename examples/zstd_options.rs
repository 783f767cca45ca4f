//! Measures zstd settings on real WARC records: CPU per record and bytes, one frame per record
//! as `output::warc` writes them, with the first setting as the reference row.
//!
//!     cargo run --release --example zstd_options -- OUT/warc/*.warc.zst [SETTING...]
//!
//! A setting is a level and optional parameters after colons: `h14` hashLog, `w15` windowLog,
//! `m4` minMatch, `t2` targetLength, `s2` strategy (1 fast, 2 dfast, ...), `raw` literals not
//! Huffman-coded; e.g. `1`, `-2`, `1:h14:m4`. Without settings a few are measured. Records
//! under 1 KiB are left out: the writer stores them uncompressed. Every record of the file is
//! compressed with one reused context per setting; the settings take turns, eleven rounds, and
//! each row shows its best round's µs per record (the thread's CPU time) and its total bytes.

use zstd::zstd_safe::{CParameter, ParamSwitch, Strategy};

/// The writer's threshold: records under it are stored, not compressed.
const SMALL_RECORD: usize = 1024;

/// This thread's CPU time in seconds: time waiting for a core on a busy machine is not counted.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn compressor(setting: &str) -> zstd::bulk::Compressor<'static> {
    let mut parts = setting.split(':');
    let level: i32 = parts.next().unwrap().parse().expect("a level first");
    let mut c = zstd::bulk::Compressor::new(level).unwrap();
    c.set_parameter(CParameter::ChecksumFlag(true)).unwrap();
    c.set_parameter(CParameter::ContentSizeFlag(true)).unwrap();
    for part in parts {
        let (key, value) = part.split_at(1);
        let n = || {
            value
                .parse::<u32>()
                .expect("a number after the parameter's letter")
        };
        let p = match key {
            "h" => CParameter::HashLog(n()),
            "w" => CParameter::WindowLog(n()),
            "m" => CParameter::MinMatch(n()),
            "t" => CParameter::TargetLength(n()),
            "s" => CParameter::Strategy(match n() {
                1 => Strategy::ZSTD_fast,
                2 => Strategy::ZSTD_dfast,
                3 => Strategy::ZSTD_greedy,
                _ => Strategy::ZSTD_lazy,
            }),
            "r" => CParameter::LiteralCompressionMode(ParamSwitch::Disable),
            _ => panic!("unknown parameter {part}"),
        };
        c.set_parameter(p).unwrap();
    }
    c
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: zstd_options FILE.warc.zst [SETTING...]");
    let mut settings: Vec<String> = args.collect();
    if settings.is_empty() {
        settings = ["1", "1:raw", "-1", "-2", "-5", "2", "3"]
            .map(String::from)
            .to_vec();
    }
    let raw = std::fs::read(&path).expect("read the file");
    let mut records = Vec::new();
    let mut rest = &raw[..];
    while !rest.is_empty() {
        let n = zstd::zstd_safe::find_frame_compressed_size(rest).expect("a frame");
        let record = zstd::bulk::decompress(&rest[..n], 1 << 24).expect("decode");
        if record.len() >= SMALL_RECORD {
            records.push(record);
        }
        rest = &rest[n..];
    }
    let input: usize = records.iter().map(Vec::len).sum();
    println!(
        "{} records of {SMALL_RECORD} bytes or more, {input} bytes uncompressed",
        records.len()
    );
    let mut contexts: Vec<_> = settings.iter().map(|s| compressor(s)).collect();
    let mut best = vec![f64::MAX; settings.len()];
    let mut bytes = vec![0; settings.len()];
    let mut out = Vec::with_capacity(1 << 20);
    for _ in 0..11 {
        for (i, c) in contexts.iter_mut().enumerate() {
            let mut total = 0;
            let start = thread_cpu();
            for r in &records {
                out.clear();
                out.reserve(zstd::zstd_safe::compress_bound(r.len()));
                c.compress_to_buffer(r, &mut out).unwrap();
                total += out.len();
            }
            let us = (thread_cpu() - start) * 1e6 / records.len() as f64;
            best[i] = best[i].min(us);
            bytes[i] = total;
        }
    }
    println!("| setting | µs/record | bytes | ratio | bytes vs first | CPU vs first |");
    println!("|---|---|---|---|---|---|");
    for (i, setting) in settings.iter().enumerate() {
        println!(
            "| {setting} | {:.2} | {} | {:.2} | {:+.1} % | {:+.1} % |",
            best[i],
            bytes[i],
            input as f64 / bytes[i] as f64,
            (bytes[i] as f64 / bytes[0] as f64 - 1.0) * 100.0,
            (best[i] / best[0] - 1.0) * 100.0
        );
    }
}
