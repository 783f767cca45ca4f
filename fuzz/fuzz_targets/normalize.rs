//! The URL normalizer: any text, parsed alone and joined to a base, goes through the filter
//! without a panic, and an http(s) URL canonicalizes to a fixed point.
#![no_main]

use crawl::{Filter, Scope, canonicalize};
use libfuzzer_sys::fuzz_target;
use url::Url;

fuzz_target!(|text: &str| {
    let base = Url::parse("http://h.test/a/b?q").unwrap();
    let filter = Filter::new(Scope::Host, std::slice::from_ref(&base));
    for parsed in [Url::parse(text), base.join(text)] {
        let Ok(url) = parsed else { continue };
        let canonical = canonicalize(url);
        let _ = filter.check(&canonical, 1);
        // Only the schemes the crawl keeps: the url crate itself does not re-read some `file:`
        // URLs as written (`file://b1..m-t/e://E` becomes `file:///e://E`, found here).
        if matches!(canonical.scheme(), "http" | "https") {
            let again = canonicalize(Url::parse(canonical.as_str()).unwrap());
            assert_eq!(again.as_str(), canonical.as_str(), "not a fixed point");
        }
    }
});
