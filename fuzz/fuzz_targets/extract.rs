//! The link extractor: any bytes as HTML, with or without a charset, never panic, never return
//! more links than asked for, and read the page as `lol_html` did (its differential oracle, with
//! the `oracle` feature: the same links, bases and directives).
#![no_main]

use crawl::{extract_agrees_with_lol_html, extract_links};
use libfuzzer_sys::fuzz_target;
use url::Url;

fuzz_target!(|data: &[u8]| {
    let page = Url::parse("http://h.test/dir/page.html").unwrap();
    let (charset, body) = match data.split_first() {
        Some((b, rest)) => (
            ["utf-8", "windows-1251", "shift_jis", "utf-16"].get(*b as usize % 5),
            rest,
        ),
        None => (None, data),
    };
    let out = extract_links(body, &page, charset.copied(), 100);
    assert!(out.links.len() <= 100);
    if let Err(difference) = extract_agrees_with_lol_html(body, charset.copied(), 100) {
        panic!("{difference}");
    }
});
