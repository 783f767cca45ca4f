//! robots.txt: any bytes parse, and any path can be asked about, without a panic.
#![no_main]

use crawl::RobotsRules;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (paths, body) = data.split_at(data.len().min(64));
    let rules = RobotsRules::from_response("crawl", 200, body);
    assert!(rules.is_allowed("/robots.txt"));
    let path = format!("/{}", String::from_utf8_lossy(paths));
    let _ = rules.is_allowed(&path);
    let _ = rules.crawl_delay();
});
