//! A reproducible stream of URLs with web-like duplication, for `benches/dedupe.sh` and
//! `crawl cachesim`: heavy repetition of popular URLs (navigation, a Zipf-like tail) and strong
//! locality (links back to pages discovered moments ago), so a 64K-entry CLOCK cache hits in
//! the 70–85% range the paper reports.
//!
//! Usage: `cargo run --release --example urlstream -- LINES [SEED] > stream.txt`

use std::io::Write;

/// Probabilities (per mille) of the three kinds of link.
const NEW_PER_MILLE: u64 = 150;
const LOCAL_PER_MILLE: u64 = 500; // the rest are popular URLs
/// Recently discovered URLs that local links point back into.
const RECENT: usize = 1 << 15;
/// Popular URLs, drawn log-uniformly (Zipf with exponent ≈ 1).
const POPULAR_BITS: u32 = 20;
const SITES: u64 = 20_000;

use crawl::SplitMix;

fn main() {
    let mut args = std::env::args().skip(1);
    let lines: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("usage: urlstream LINES [SEED]");
    let seed: u64 = args
        .next()
        .map_or(1, |a| a.parse().expect("SEED must be a number"));
    let mut rng = SplitMix(seed);
    let mut recent = vec![0u64; RECENT];
    let mut discovered = 0u64;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    for _ in 0..lines {
        let roll = rng.next_u64() % 1000;
        let result = if roll < NEW_PER_MILLE || discovered == 0 {
            recent[(discovered % RECENT as u64) as usize] = discovered;
            discovered += 1;
            page(&mut out, discovered - 1)
        } else if roll < NEW_PER_MILLE + LOCAL_PER_MILLE {
            // Mostly the last few hundred discoveries, sometimes further back.
            let window = (discovered as usize).min(RECENT);
            let back = ((rng.unit() * rng.unit()) * window as f64) as usize;
            let slot = ((discovered as usize - 1 - back.min(window - 1)) % RECENT) as usize;
            page(&mut out, recent[slot])
        } else {
            let k = (2f64.powf(rng.unit() * POPULAR_BITS as f64) as u64).saturating_sub(1);
            writeln!(out, "http://site{}.example/nav/{k}", k % SITES)
        };
        if result.is_err() {
            return; // a closed pipe ends the stream
        }
    }
}

/// The URL of the `n`th discovered page: spread over sites, with realistic paths.
fn page(out: &mut impl Write, n: u64) -> std::io::Result<()> {
    let site = n.wrapping_mul(0x9E37_79B9) % SITES;
    writeln!(
        out,
        "http://site{site}.example/articles/{}/page-{n}.html",
        n % 97
    )
}
