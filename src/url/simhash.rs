//! Near-duplicate pages: a 64-bit SimHash (Charikar 2002) of a page's visible text, and the
//! per-host windows of recent fingerprints a page is compared with (Manku, Jain and Das Sarma
//! 2007 use the same fingerprint at Google's scale).
//!
//! The fingerprint ([`SimHasher`]):
//! - Text is what a browser with scripts off shows: the text between tags, outside `<script>`,
//!   `<style>` and the other elements whose content is not markup (`<title>` and `<textarea>`
//!   included), and outside `<template>`; character references decoded (with the attribute
//!   rule, `html::attribute_value`: a legacy name without `;` before `=` or a letter stays as
//!   written, which changes no word that matters). The link extractor's tokenizer finds it in
//!   the same pass as the links (`extract::page_links_fingerprinted`).
//! - Words are runs of alphanumeric characters, lower-cased; a tag ends a word. The features
//!   are shingles of [`SHINGLE_WORDS`] consecutive words (across tags), each hashed to 64 bits
//!   and counted once per occurrence: bit `i` of the fingerprint is set when more shingles
//!   have bit `i` set than clear. One changed word changes `SHINGLE_WORDS` shingles, and the
//!   bits a change flips grow with the share of shingles it changes: on the test web of
//!   `testweb::neardup` (pages of 100 to 1,100 words under one template), 2-word shingles miss
//!   fewer one-word copies at the distance where no distinct pair is near (1 of 60 date-stamp
//!   copies at 5 bits, against 15 with 3 words), while single words make the distinct pages of
//!   a host alike (their common words and the template: 55 distinct pairs within 1 bit).
//! - Bounded work: at most [`MAX_TEXT_BYTES`] of visible text are hashed (the first ones);
//!   past it the tokenizer stops collecting text, so a page of megabytes costs the same
//!   SimHash work as one of 64 KiB of text (the link scan goes on as before). Memory is the 64
//!   counters and the last words' hashes. A page without a word has no fingerprint.
//!
//! The comparison ([`Windows`]): a page whose fingerprint is within [`MAX_DISTANCE`] bits
//! (Hamming distance) of one of the last [`WINDOW`] distinct fingerprints of its host is a
//! near-duplicate; a near-duplicate's own fingerprint is not added (the window keeps distinct
//! pages, so a slow drift of pages does not walk away from the first one). The windows of at
//! most [`HOSTS`] hosts are kept, the least recently used dropped first (`lru::Lru`): at most
//! 8 × 128 × 4,096 bytes = 4 MiB of fingerprints, about 1 KiB per host, whatever the crawl's
//! size. A host whose window was dropped starts a new one; its pages are compared again from
//! then on.

use crate::lru::Lru;
use crate::seen::checksum::checksum;
use std::collections::VecDeque;
use std::sync::Mutex;

/// What the crawl does with near-duplicate pages (`--near-duplicates`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum NearDuplicates {
    /// No fingerprint is computed.
    #[default]
    Off,
    /// Noted `near-duplicate` in the URL log and counted; links followed as on any page.
    Note,
    /// Noted and counted, and the page's links are not followed.
    SkipLinks,
}

/// Words per shingle (see the module doc).
pub const SHINGLE_WORDS: usize = 2;
/// Bytes of visible text hashed per page at most.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// Bits two fingerprints may differ in and still be near-duplicates: the most at which no two
/// distinct pages of the test web of `testweb::neardup` are near (BENCHMARKS.md,
/// "Near-duplicates", has the table). Manku et al.'s 3 is for 8 billion pages compared with
/// each other; here a page meets at most `WINDOW` of its host's.
pub const MAX_DISTANCE: u32 = 5;
/// Distinct fingerprints kept per host.
pub const WINDOW: usize = 128;
/// Hosts whose windows are kept.
pub const HOSTS: usize = 4096;

/// The number of bits `a` and `b` differ in.
pub fn distance(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Accumulates one page's visible text into its fingerprint.
#[derive(Clone)]
pub struct SimHasher {
    /// Per bit: shingles with it set, up to the last `pending`.
    ones: [u32; 64],
    /// Per bit, the last `pending` shingles with it set: a byte per bit (lane `j` of
    /// `recent[k]` is bit `8k + j`), eight bits added at a time (`SPREAD`).
    recent: [u64; 8],
    /// Shingles in `recent` (flushed into `ones` before a byte can overflow).
    pending: u32,
    /// Shingles counted.
    shingles: u32,
    /// The hashes of the last words, oldest first (a ring of `SHINGLE_WORDS`).
    words: [u64; SHINGLE_WORDS],
    /// Words seen (the ring is full from `SHINGLE_WORDS` on).
    seen: u64,
    /// The word being read: its hash so far, and whether it has a character.
    word: u64,
    in_word: bool,
    /// Text bytes taken so far.
    taken: usize,
}

impl Default for SimHasher {
    fn default() -> Self {
        SimHasher {
            ones: [0; 64],
            recent: [0; 8],
            pending: 0,
            shingles: 0,
            words: [0; SHINGLE_WORDS],
            seen: 0,
            word: WORD_SEED,
            in_word: false,
            taken: 0,
        }
    }
}

const WORD_SEED: u64 = 0xcbf2_9ce4_8422_2325;
const WORD_PRIME: u64 = 0x0000_0100_0000_01b3;

impl SimHasher {
    /// A fingerprint of no text yet.
    pub fn new() -> SimHasher {
        SimHasher::default()
    }

    /// Whether more text is wanted (fewer than `MAX_TEXT_BYTES` taken).
    pub fn wants_more(&self) -> bool {
        self.taken < MAX_TEXT_BYTES
    }

    /// Takes one run of text between tags (decoded, references resolved), up to the cap. The
    /// run's end ends a word.
    pub fn text(&mut self, text: &str) {
        let room = MAX_TEXT_BYTES.saturating_sub(self.taken);
        let mut text = text;
        if text.len() > room {
            let mut cut = room;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text = &text[..cut];
        }
        self.taken += text.len();
        for (i, &b) in text.as_bytes().iter().enumerate() {
            if b.is_ascii() {
                if b.is_ascii_alphanumeric() {
                    self.letter(u32::from(b.to_ascii_lowercase()));
                } else {
                    self.end_word();
                }
            } else if is_char_start(b) {
                let c = text[i..].chars().next().expect("a char starts here");
                if c.is_alphanumeric() {
                    for lower in c.to_lowercase() {
                        self.letter(u32::from(lower));
                    }
                } else {
                    self.end_word();
                }
            }
        }
        self.end_word();
    }

    fn letter(&mut self, c: u32) {
        self.word = (self.word ^ u64::from(c)).wrapping_mul(WORD_PRIME);
        self.in_word = true;
    }

    fn end_word(&mut self) {
        if !std::mem::take(&mut self.in_word) {
            return;
        }
        let word = std::mem::replace(&mut self.word, WORD_SEED);
        self.words[(self.seen % SHINGLE_WORDS as u64) as usize] = word;
        self.seen += 1;
        if self.seen >= SHINGLE_WORDS as u64 {
            self.shingle();
        }
    }

    /// Adds the shingle of the last `SHINGLE_WORDS` words.
    fn shingle(&mut self) {
        let oldest = (self.seen % SHINGLE_WORDS as u64) as usize;
        let mut h = 0u64;
        for i in 0..SHINGLE_WORDS {
            h = mix(h.rotate_left(17) ^ self.words[(oldest + i) % SHINGLE_WORDS]);
        }
        self.add(h);
    }

    /// Counts one feature's bits: a byte of `h` at a time, each spread to one counter byte per
    /// bit, so a shingle costs 8 table reads and adds instead of 64.
    fn add(&mut self, h: u64) {
        for (k, lanes) in self.recent.iter_mut().enumerate() {
            *lanes += SPREAD[((h >> (8 * k)) & 0xFF) as usize];
        }
        self.shingles += 1;
        self.pending += 1;
        if self.pending == u32::from(u8::MAX) {
            self.flush();
        }
    }

    /// Moves the byte counters into `ones`.
    fn flush(&mut self) {
        for (k, lanes) in self.recent.iter_mut().enumerate() {
            for j in 0..8 {
                self.ones[8 * k + j] += ((*lanes >> (8 * j)) & 0xFF) as u32;
            }
            *lanes = 0;
        }
        self.pending = 0;
    }

    /// The fingerprint, or `None` when the text had no word. A page of fewer words than a
    /// shingle has its words' shingle.
    pub fn finish(mut self) -> Option<u64> {
        self.end_word();
        match self.seen {
            0 => return None,
            n if n < SHINGLE_WORDS as u64 => {
                let h = self.words[..n as usize]
                    .iter()
                    .fold(0u64, |h, &w| mix(h.rotate_left(17) ^ w));
                self.add(h);
            }
            _ => {}
        }
        self.flush();
        // A bit is set when more than half the shingles have it set.
        let bits = self.ones.iter().enumerate();
        let n = self.shingles;
        Some(bits.fold(0, |f, (bit, &ones)| f | (u64::from(2 * ones > n) << bit)))
    }
}

/// For each byte value, its eight bits as eight bytes of 0 or 1 (bit `j` in byte `j`).
static SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            table[b] |= ((b as u64 >> j) & 1) << (8 * j);
            j += 1;
        }
        b += 1;
    }
    table
};

/// Whether `b` begins a UTF-8 character (is no continuation byte).
fn is_char_start(b: u8) -> bool {
    b & 0xC0 != 0x80
}

/// splitmix64's finalizer: every bit of a shingle's hash depends on every bit of its words'.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The fingerprint of an HTML page's visible text (`extract::page_links_fingerprinted`
/// reads it beside the links), for tests and the precision measurement.
pub fn page_fingerprint(body: &[u8], charset: Option<&str>) -> Option<u64> {
    let base = url::Url::parse("http://fingerprint.invalid/").expect("a valid URL");
    let read = crate::url::extract::page_links_fingerprinted;
    read(body, &base, charset, 20_000, "robots", true).fingerprint
}

/// Per host, the last `WINDOW` distinct fingerprints; at most `HOSTS` hosts (module doc).
pub struct Windows {
    hosts: Mutex<Lru<u64, VecDeque<u64>>>,
}

impl Default for Windows {
    fn default() -> Self {
        Windows {
            hosts: Mutex::new(Lru::new(HOSTS)),
        }
    }
}

impl Windows {
    /// Whether `fingerprint`, of a page of `host` (its name and port), is within
    /// `MAX_DISTANCE` bits of one in the host's window; if not, it joins the window (the
    /// oldest leaving a full one).
    pub fn near_duplicate(&self, host: &str, fingerprint: u64) -> bool {
        let key = checksum(host.as_bytes());
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        if hosts.get(&key).is_none() {
            hosts.insert(key, VecDeque::new());
        }
        let window = hosts.get_mut(&key).expect("inserted above");
        if (window.iter()).any(|&f| distance(f, fingerprint) <= MAX_DISTANCE) {
            return true;
        }
        if window.len() == WINDOW {
            window.pop_front();
        }
        window.push_back(fingerprint);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint(text: &str) -> u64 {
        let mut h = SimHasher::new();
        h.text(text);
        h.finish().expect("some words")
    }

    /// An article of `words` generated words (a fixed vocabulary, drawn without pattern).
    fn article(seed: u64, words: usize) -> String {
        let mut rng = crate::SplitMix(seed);
        (0..words)
            .map(|_| format!("w{}", rng.below(3000)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn identical_text_has_identical_fingerprints_and_markup_case_and_spacing_do_not_count() {
        let a = fingerprint("The quick brown fox jumps over the lazy dog");
        assert_eq!(
            a,
            fingerprint("the  QUICK brown\nfox, jumps over: the lazy dog!")
        );
        assert_eq!(distance(a, a), 0);
    }

    #[test]
    fn a_changed_date_stamp_is_a_few_bits_and_a_different_article_is_many() {
        let body = article(1, 400);
        let a = fingerprint(&format!("Posted 2026-11-27 09:15. {body}"));
        let b = fingerprint(&format!("Posted 2026-11-28 17:40. {body}"));
        let other = fingerprint(&format!("Posted 2026-11-27 09:15. {}", article(2, 400)));
        assert!(distance(a, b) <= MAX_DISTANCE, "{}", distance(a, b));
        assert!(distance(a, other) > 16, "{}", distance(a, other));
    }

    #[test]
    fn words_change_the_fingerprint_in_order_and_in_case_of_non_ascii_letters() {
        assert_eq!(fingerprint("Grüße aus Köln"), fingerprint("GRÜßE AUS KÖLN"));
        assert_ne!(fingerprint("a b c d"), fingerprint("d c b a"));
    }

    #[test]
    fn no_word_is_no_fingerprint_and_short_texts_still_have_one() {
        let mut h = SimHasher::new();
        h.text("  , . ; ");
        assert_eq!(h.finish(), None);
        assert_ne!(fingerprint("hello"), fingerprint("world"));
    }

    #[test]
    fn text_past_the_cap_is_not_hashed() {
        let head = article(3, 2000);
        assert!(head.len() < MAX_TEXT_BYTES);
        let pad = "x ".repeat(MAX_TEXT_BYTES);
        let a = fingerprint(&format!("{head} {pad}"));
        let b = fingerprint(&format!("{head} {pad} {}", article(4, 50_000)));
        assert_eq!(a, b);
    }

    #[test]
    fn a_page_is_its_visible_text_with_references_decoded() {
        let page = "<!doctype html><html><head><title>Not this</title>\
            <style>p { color: red }</style><script>var hidden = 1;</script></head>\
            <body><p class=x>Tom &amp; Jerry&#33;<!-- a comment --></p>\
            <template><p>inert words</p></template><noscript>shown words</noscript></body>";
        let text = fingerprint("Tom & Jerry! shown words");
        assert_eq!(page_fingerprint(page.as_bytes(), None), Some(text));
        assert_eq!(
            page_fingerprint(b"<p><script>only code</script>", None),
            None
        );
        // Latin-1, as the header says.
        let latin1 = b"<p>K\xf6ln caf\xe9</p>";
        assert_eq!(
            page_fingerprint(latin1, Some("iso-8859-1")),
            Some(fingerprint("Köln café"))
        );
    }

    #[test]
    fn the_links_read_beside_the_fingerprint_are_the_links_read_without() {
        let page = b"<base href=/b/><p>text <a href=x>x</a> more <img src=i.png></p>";
        let url = url::Url::parse("http://a.test/p").unwrap();
        let read = crate::url::extract::page_links_fingerprinted;
        let mut with = read(page, &url, None, 100, "crawl", true);
        let without = read(page, &url, None, 100, "crawl", false);
        assert!(with.fingerprint.take().is_some());
        assert_eq!(with, without);
        // The part before a late `<base>` is read again for its links, not for its text.
        let late = b"<p>one two</p><a href=x>x</a><base href=/b/><p>three</p>";
        assert_eq!(
            page_fingerprint(late, None),
            Some(fingerprint("one two x three"))
        );
    }

    #[test]
    fn the_window_keeps_distinct_pages_per_host() {
        let windows = Windows::default();
        let a = fingerprint(&article(5, 300));
        assert!(!windows.near_duplicate("a.test:80", a));
        assert!(windows.near_duplicate("a.test:80", a ^ 0b101));
        assert!(!windows.near_duplicate("b.test:80", a), "another host");
        // Past the window, the first page is forgotten.
        for i in 0..WINDOW as u64 {
            assert!(!windows.near_duplicate("a.test:80", fingerprint(&article(100 + i, 300))));
        }
        assert!(!windows.near_duplicate("a.test:80", a));
    }
}
