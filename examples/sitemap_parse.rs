//! The cost of reading a sitemap (`url::sitemap`): MB/s and peak memory on a generated sitemap
//! at the protocol's limits (50,000 URLs in about 50 MB, each `<url>` with a `lastmod` and
//! hreflang alternates, as big multilingual sites write them).
//!
//! Usage:
//! - `sitemap_parse generate FILE [gzip]`: writes the sitemap (gzip-compressed with `gzip`).
//! - `sitemap_parse stream FILE`: reads it from the file, streaming (`read_plain`, or through a
//!   gzip decoder when the file is gzip): the parser's own memory.
//! - `sitemap_parse held FILE`: reads the file into memory first, then parses it from there
//!   (`read`), as the crawler does with a fetched body: the body plus the parser.
//!
//! Prints one line: bytes in and uncompressed, entries, seconds, MB/s of uncompressed XML, the
//! peak heap during the parse (a counting allocator) and the process's peak RSS (VmHWM).
//! benches/sitemap_parse.sh runs every mode.

use crawl::sitemap;
use std::io::{BufWriter, Read, Write};
use std::sync::atomic::Ordering;
use std::time::Instant;

#[path = "common/counting.rs"]
mod counting;
use counting::{LIVE, PEAK};

const LANGUAGES: [&str; 6] = ["en", "de", "fr", "es", "it", "ja"];

/// One `<url>` of the generated sitemap, about 1,000 bytes.
fn entry(i: usize) -> String {
    let path = format!(
        "products/category-{}/item-{i:06}-a-fairly-long-slug",
        i % 97
    );
    let mut xml = format!(
        "<url><loc>https://www.example.com/en/{path}</loc><lastmod>2024-{:02}-{:02}T10:{:02}:00+00:00</lastmod>\
         <changefreq>weekly</changefreq><priority>0.{}</priority>\n",
        1 + i % 12,
        1 + i % 28,
        i % 60,
        i % 10
    );
    for lang in LANGUAGES {
        xml.push_str(&format!(
            "  <xhtml:link rel=\"alternate\" hreflang=\"{lang}\" href=\"https://www.example.com/{lang}/{path}\"/>\n"
        ));
    }
    xml.push_str("</url>\n");
    xml
}

fn generate(path: &str, gzip: bool) -> std::io::Result<()> {
    let file = BufWriter::new(std::fs::File::create(path)?);
    let mut out: Box<dyn Write> = match gzip {
        true => Box::new(flate2::write::GzEncoder::new(
            file,
            flate2::Compression::default(),
        )),
        false => Box::new(file),
    };
    out.write_all(
        b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" \
          xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n",
    )?;
    for i in 0..sitemap::MAX_URLS {
        out.write_all(entry(i).as_bytes())?;
    }
    out.write_all(b"</urlset>\n")?;
    out.flush()
}

/// Peak resident set size of this process, from /proc (VmHWM).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Counts what goes through a reader (the uncompressed bytes the parser saw).
struct Counted<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: sitemap_parse generate FILE [gzip] | stream FILE | held FILE";
    let (mode, path) = match args.as_slice() {
        [mode, path, ..] => (mode.as_str(), path.as_str()),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    if mode == "generate" {
        let gzip = args.get(2).is_some_and(|a| a == "gzip");
        generate(path, gzip).unwrap_or_else(|e| panic!("writing {path}: {e}"));
        return;
    }
    let file_bytes = std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .len();
    let mut entries = 0usize;
    let mut url_bytes = 0usize;
    let mut count = |_kind, found: sitemap::Found| {
        entries += 1;
        url_bytes += found.loc.len() + found.lastmod.map_or(0, |l| l.len());
    };
    let (uncompressed, read, seconds, heap_peak);
    match mode {
        "stream" => {
            let mut head = [0u8; 2];
            std::fs::File::open(path)
                .and_then(|mut f| f.read_exact(&mut head))
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            let file = std::fs::File::open(path).unwrap();
            PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
            let base = LIVE.load(Ordering::Relaxed);
            let start = Instant::now();
            let (r, n) = if head == [0x1f, 0x8b] {
                let mut input = Counted {
                    inner: flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)),
                    bytes: 0,
                };
                (sitemap::read_plain(&mut input, &mut count), input.bytes)
            } else {
                let mut input = Counted {
                    inner: file,
                    bytes: 0,
                };
                (sitemap::read_plain(&mut input, &mut count), input.bytes)
            };
            seconds = start.elapsed().as_secs_f64();
            heap_peak = PEAK.load(Ordering::Relaxed) - base;
            (read, uncompressed) = (r, n);
        }
        "held" => {
            let base = LIVE.load(Ordering::Relaxed);
            PEAK.store(base, Ordering::Relaxed);
            let body = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let start = Instant::now();
            read = sitemap::read(&body, &mut count);
            seconds = start.elapsed().as_secs_f64();
            heap_peak = PEAK.load(Ordering::Relaxed) - base;
            uncompressed = match body.starts_with(&[0x1f, 0x8b]) {
                true => {
                    let mut n = 0u64;
                    let mut d = flate2::read::MultiGzDecoder::new(&body[..]);
                    let mut buf = vec![0u8; 1 << 16];
                    while let Ok(k) = d.read(&mut buf) {
                        if k == 0 {
                            break;
                        }
                        n += k as u64;
                    }
                    n
                }
                false => body.len() as u64,
            };
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
    assert_eq!(read.entries, entries);
    println!(
        "{mode}\tfile {file_bytes} B\txml {uncompressed} B\tentries {entries}\tcapped {}\tmalformed {}\t{seconds:.3} s\t{:.0} MB/s\theap peak {:.2} MiB\tpeak RSS {:.1} MiB\t(url bytes {url_bytes})",
        read.capped,
        read.malformed,
        uncompressed as f64 / 1e6 / seconds,
        heap_peak as f64 / (1 << 20) as f64,
        peak_rss() as f64 / (1 << 20) as f64,
    );
}
