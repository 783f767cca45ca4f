//! The HTTP/1.1 response parser: any bytes as a server's answer (status line, headers, the
//! Content-Length rules, the chunked decoder) never panic, never read past the cap, and keep a
//! connection only after a response whose end is certain: a known length read whole, or the
//! last chunk, with no byte past it and no ambiguous framing.
#![no_main]

use crawl::fetch_internals::{After, Framing, read_response};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the cap, so that cuts inside heads, chunks and bodies are tried.
    let (cap, bytes) = match data.split_first() {
        Some((b, rest)) => (u64::from(*b) * 4, rest),
        None => (0, data),
    };
    let Ok((head, body, after)) = read_response(bytes.to_vec(), cap) else {
        return;
    };
    assert!((100..=599).contains(&head.status), "{}", head.status);
    assert!(body.len() as u64 <= cap + 1, "{} bytes over a cap of {cap}", body.len());
    assert!(head.raw.len() <= bytes.len());
    let framing = head.framing().expect("read_response checked the framing");
    if let Framing::Length(n) = framing {
        assert_eq!(body.len() as u64, n.min(cap + 1));
    }
    if after == After::Reuse {
        assert!(head.ambiguous().is_none());
        assert!(framing != Framing::Close, "a body to the close cannot be followed");
        assert!(head.minor >= 1);
    }
});
