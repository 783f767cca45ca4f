//! `crawl`'s text extraction over HTML files, for `benches/extraction.sh` (the Zyte
//! article-extraction benchmark): writes the texts in the benchmark's output format and prints
//! the CPU time of the extraction calls alone (files read and decompressed first), per page.
//!
//! ```text
//! cargo run --release --example extract_bench -- main|full|trafilatura|one-pass OUT.json FILE.html[.gz]...
//! ```

use std::io::Read;
use std::path::Path;

use url::Url;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: extract_bench main|full|trafilatura|one-pass OUT.json FILE.html[.gz]...";
    let (Some(mode), Some(out)) = (args.next(), args.next()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    if !["main", "full", "trafilatura", "one-pass"].contains(&mode.as_str()) {
        eprintln!("{usage} (not {mode:?})");
        std::process::exit(2);
    }
    let pages: Vec<(String, String)> = args.map(|f| (id(&f), read(&f))).collect();
    let mut output = serde_json::Map::new();
    let (mut total, mut max) = (0.0f64, 0.0f64);
    for (id, html) in &pages {
        let url = Url::parse(&format!("https://benchmark.invalid/{id}")).expect("a valid URL");
        let start = cpu_seconds();
        let text = match mode.as_str() {
            "main" => crawl::main_text(html, &url),
            "trafilatura" => crawl::main_text_by(crawl::Extractor::Trafilatura, html, &url),
            "one-pass" => crawl::main_text_by(crawl::Extractor::OnePass, html, &url),
            _ => crawl::full_text(html),
        };
        let took = cpu_seconds() - start;
        (total, max) = (total + took, max.max(took));
        output.insert(id.clone(), serde_json::json!({ "articleBody": text }));
    }
    let json = serde_json::json!({ "version": env!("CARGO_PKG_VERSION"), "output": output });
    std::fs::write(&out, json.to_string()).unwrap_or_else(|e| panic!("writing {out}: {e}"));
    eprintln!(
        "crawl --text {mode}: {} pages, {:.2} ms CPU/page (slowest {:.1} ms), {:.1} MB of HTML",
        pages.len(),
        total * 1e3 / pages.len().max(1) as f64,
        max * 1e3,
        pages.iter().map(|(_, h)| h.len()).sum::<usize>() as f64 / 1e6
    );
}

/// The CPU time of this process so far (what the other machine's helpers take does not count).
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } == 0;
    assert!(ok, "clock_gettime: {}", std::io::Error::last_os_error());
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// The benchmark's id of a file: its name up to the first dot.
fn id(file: &str) -> String {
    let name = Path::new(file).file_name().map(|n| n.to_string_lossy());
    name.unwrap_or_default()
        .split('.')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The file as UTF-8 (the benchmark's pages are), gunzipped if it ends in `.gz`.
fn read(file: &str) -> String {
    let raw = std::fs::read(file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    if !file.ends_with(".gz") {
        return String::from_utf8_lossy(&raw).into_owned();
    }
    let mut text = String::new();
    flate2::read::GzDecoder::new(&raw[..])
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("gunzipping {file}: {e}"));
    text
}
