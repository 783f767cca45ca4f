//! The cost of link extraction (`crawl::extract_links`): µs per page on the test web's pages
//! (the shape `benches/web_shape.sh` crawls: ~1.7 KB, 5 links) and on real pages given as files
//! (a big one, e.g. the Rust book's `print.html`, or a documentation tree), as many rounds as
//! it takes to fill about a second each.
//!
//! Usage: `extract_cost [FILE_OR_DIR...]`. Prints two lines per input: pages, bytes, links found
//! per pass, CPU µs per page and MB per CPU second (the thread's CPU time, so that a loaded
//! machine slows the figures less than the wall clock), first of `crawl::extract_links` (every
//! link its own URL), then of `page_links` (each distinct URL once: what the crawler calls).
//! With `EXTRACT_COST_ROUNDS=N` each is read exactly N times (a fixed amount of work, for
//! `perf stat`'s counts). Only public functions are called, so the same file measures any build of the crate (a
//! checkout of main, for the before/after).

#[path = "common/cpu.rs"]
mod cpu;

use cpu::thread_cpu_seconds;
use crawl::extract_links;
use crawl::internals::page_links;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use url::Url;

fn main() {
    let mut inputs: Vec<(String, Vec<Vec<u8>>)> = vec![("testweb-pages".into(), testweb_pages())];
    for arg in std::env::args().skip(1) {
        let mut files = Vec::new();
        collect(Path::new(&arg), &mut files);
        files.sort();
        let pages = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        inputs.push((arg, pages));
    }
    let page_url = Url::parse("http://h0.test:8080/p/1.html").unwrap();
    for (name, pages) in inputs {
        measure(&format!("{name} extract_links"), &pages, |page| {
            extract_links(page, &page_url, None, 20_000).links.len()
        });
        measure(&format!("{name} page_links"), &pages, |page| {
            page_links(page, &page_url, None, 20_000, "crawl")
                .order
                .len()
        });
    }
}

/// Calls `extract` on every page, as many rounds as fill about a second, and prints the cost.
fn measure(name: &str, pages: &[Vec<u8>], extract: impl Fn(&[u8]) -> usize) {
    let bytes: usize = pages.iter().map(Vec::len).sum();
    let fixed: Option<u32> = std::env::var("EXTRACT_COST_ROUNDS").ok().map(|n| {
        n.parse()
            .expect("EXTRACT_COST_ROUNDS is a number of rounds")
    });
    let mut links = 0;
    let mut rounds = 0u32;
    let start = Instant::now();
    let cpu_start = thread_cpu_seconds();
    while match fixed {
        Some(n) => rounds < n,
        None => start.elapsed() < Duration::from_secs(1) || rounds < 3,
    } {
        links = pages
            .iter()
            .map(|page| extract(std::hint::black_box(page)))
            .sum::<usize>();
        rounds += 1;
    }
    let secs = thread_cpu_seconds() - cpu_start;
    let per_page = secs * 1e6 / f64::from(rounds) / pages.len() as f64;
    let mbps = bytes as f64 * f64::from(rounds) / secs / 1e6;
    println!(
        "{name}: {} pages, {bytes} bytes, {links} links, {per_page:.2} CPU µs/page, {mbps:.0} MB/CPU-s",
        pages.len()
    );
}

/// 400 pages of a 50-host generated web with the benchmark's padding.
fn testweb_pages() -> Vec<Vec<u8>> {
    let graph = testweb::graph::Graph::new(testweb::graph::GraphSpec {
        hosts: 50,
        pages_per_host: 400,
        children: 4,
        extra_links: 1,
        cross_host_permille: 200,
        page_padding: 1200,
        seed: 1,
    });
    let origins: Vec<String> = (0..50)
        .map(|h| format!("http://h{h}.test:{}", 8080 + h))
        .collect();
    (0..400)
        .map(|p| graph.render(&origins, p % 50, p).into_bytes())
        .collect()
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            collect(&entry.unwrap().path(), files);
        }
    } else if path.extension().is_some_and(|e| e == "html") || files.is_empty() {
        files.push(path.to_path_buf());
    }
}
