//! The CSS link extractor: any bytes as a stylesheet, with or without a charset, never panic,
//! never return more links than asked for, every link a requisite.
#![no_main]

use crawl::internals::stylesheet_links;
use libfuzzer_sys::fuzz_target;
use url::Url;

fuzz_target!(|data: &[u8]| {
    let sheet = Url::parse("http://h.test/css/site.css").unwrap();
    let (charset, body) = match data.split_first() {
        Some((b, rest)) => (["utf-8", "iso-8859-1", "utf-16"].get(*b as usize % 4), rest),
        None => (None, data),
    };
    let out = stylesheet_links(body, &sheet, charset.copied(), 100);
    assert!(out.order.len() <= 100);
    assert_eq!(out.requisite.len(), out.distinct.len());
    assert!(out.requisite.iter().all(|&r| r));
});
