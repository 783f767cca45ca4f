//! The cost of the near-duplicate signature (`--near-duplicates`): CPU µs per page of the
//! link extractor without and with the MinHash signature of the page's visible text read in
//! the same pass, alternating rounds of each so that a loaded machine slows both alike.
//!
//! Usage: `minhash_cost FILE_OR_DIR...` (the `.html` files under each directory, or the file).
//! Prints one line per input: pages, bytes, CPU µs/page without and with, and the difference.

#[path = "common/cpu.rs"]
mod cpu;

use cpu::thread_cpu_seconds;
use crawl::internals::page_links_fingerprinted;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use url::Url;

fn main() {
    let page_url = Url::parse("http://h0.test:8080/p/1.html").unwrap();
    for arg in std::env::args().skip(1) {
        let mut files = Vec::new();
        html_files(Path::new(&arg), &mut files);
        let pages: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        let bytes: usize = pages.iter().map(Vec::len).sum();
        // CPU seconds and rounds, without ([0]) and with ([1]) the signature.
        let (mut secs, mut rounds) = ([0.0f64; 2], 0u32);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(4) || rounds < 3 {
            for (with, spent) in secs.iter_mut().enumerate() {
                let cpu_start = thread_cpu_seconds();
                for page in &pages {
                    let page = std::hint::black_box(page);
                    let out =
                        page_links_fingerprinted(page, &page_url, None, 20_000, "crawl", with == 1);
                    std::hint::black_box(out);
                }
                *spent += thread_cpu_seconds() - cpu_start;
            }
            rounds += 1;
        }
        let per_page = secs.map(|s| s * 1e6 / f64::from(rounds) / pages.len() as f64);
        println!(
            "{arg}: {} pages, {bytes} bytes, {:.2} CPU µs/page without, {:.2} with, +{:.2} µs/page",
            pages.len(),
            per_page[0],
            per_page[1],
            per_page[1] - per_page[0]
        );
    }
}

/// `path` if it is a file, else the `.html` files under it, sorted.
fn html_files(path: &Path, out: &mut Vec<PathBuf>) {
    if !path.is_dir() {
        out.push(path.to_path_buf());
        return;
    }
    let mut entries: Vec<PathBuf> = (std::fs::read_dir(path).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() || entry.extension().is_some_and(|e| e == "html") {
            html_files(&entry, out);
        }
    }
}
