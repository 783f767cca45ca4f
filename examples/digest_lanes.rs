//! Measures the two WARC digests of a response taken in one two-lane SHA-NI pass
//! (`output::digest`) against the `sha1` crate hashing the body and then head ‖ body.
//!
//!     cargo run --release --example digest_lanes -- [BODY_BYTES] [HEAD_BYTES]
//!
//! Defaults: a 26,000-byte body (rust-doc's mean page) and a 300-byte head. The two ways
//! alternate, 15 rounds of 2,000 responses each; the table gives each way's median ns per
//! response and the ratio of the medians, so a loaded machine slows both alike.

use crawl::archive_internals::{sha1_pair, sha1_pair_portable};
use std::hint::black_box;
use std::time::Instant;

/// A way to take both digests: `(sha1(body), sha1(head ‖ body))`.
type Pair = dyn Fn(&[u8], &[u8]) -> ([u8; 20], [u8; 20]);

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("a number"));
    let body_len = args.next().unwrap_or(26_000);
    let head_len = args.next().unwrap_or(300);
    let body: Vec<u8> = (0..body_len).map(|i| (i * 7 + i / 251) as u8).collect();
    let head: Vec<u8> = (0..head_len).map(|i| b'A' + (i % 26) as u8).collect();
    assert_eq!(sha1_pair(&head, &body), sha1_pair_portable(&head, &body));
    const N: u32 = 2_000;
    let time = |f: &Pair| {
        let t = Instant::now();
        for _ in 0..N {
            black_box(f(black_box(&head), black_box(&body)));
        }
        t.elapsed().as_nanos() as f64 / f64::from(N)
    };
    let (mut twice, mut lanes) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        twice.push(time(&sha1_pair_portable));
        lanes.push(time(&sha1_pair));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t, l) = (median(&mut twice), median(&mut lanes));
    println!("body {body_len} B, head {head_len} B, ns per response (median of 15)");
    println!("sha1 crate twice   {t:>9.0}");
    println!("two SHA-NI lanes   {l:>9.0}");
    println!("ratio twice/lanes  {:>9.2}", t / l);
}
