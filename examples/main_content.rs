//! A page's main content as the crawler's extractor keeps it (its HTML) and as `--markdown`
//! writes it, for `benches/markdown.sh`, which renders the Markdown back to HTML with pandoc
//! and compares the headings and absolute links of the two.
//!
//! Usage: `main_content < pages.tsv > pages.jsonl`. Each input line is `URL TAB FILE` (the page
//! as served from URL, read from FILE); each output line is a JSON object with `url`, `kept`
//! (the extractor's HTML, `null` where it kept none) and `markdown`.

use crawl::content_internals::{kept_html, main_markdown};
use std::io::{BufRead, Write};
use url::Url;

fn main() {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin is readable");
        let Some((url, file)) = line.split_once('\t') else {
            panic!("{line:?}: expected URL TAB FILE");
        };
        let url = Url::parse(url).unwrap_or_else(|e| panic!("{url}: not a URL ({e})"));
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let html = String::from_utf8_lossy(&bytes);
        let object = serde_json::json!({
            "url": url.as_str(),
            "kept": kept_html(&html, &url),
            "markdown": main_markdown(&html, &url),
        });
        writeln!(out, "{object}").expect("stdout is writable");
    }
}
