//! The URL normalizer: any text, parsed alone and joined to a base, canonicalizes to a fixed
//! point and goes through the filter without a panic.
#![no_main]

use crawl::normalize::{Filter, Scope, canonicalize};
use libfuzzer_sys::fuzz_target;
use url::Url;

fuzz_target!(|text: &str| {
    let base = Url::parse("http://h.test/a/b?q").unwrap();
    let filter = Filter::new(Scope::Host, std::slice::from_ref(&base));
    for parsed in [Url::parse(text), base.join(text)] {
        let Ok(url) = parsed else { continue };
        let canonical = canonicalize(url);
        let again = canonicalize(Url::parse(canonical.as_str()).unwrap());
        assert_eq!(again.as_str(), canonical.as_str(), "not a fixed point");
        let _ = filter.check(&canonical, 1);
    }
});
