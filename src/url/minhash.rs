//! Near-duplicate pages: a MinHash signature (Broder 1997) of a page's visible text, whose
//! matching share estimates the resemblance of two pages: the Jaccard similarity of their sets
//! of 5-word shingles. The signatures of a whole crawl are kept and searched on disk by
//! `seen::neardup`.
//!
//! The text ([`Shingler`]):
//! - Text is what a browser with scripts off shows: the text between tags, outside `<script>`,
//!   `<style>` and the other elements whose content is not markup (`<title>` and `<textarea>`
//!   included), and outside `<template>`; character references decoded (with the attribute
//!   rule, `html::attribute_value`: a legacy name without `;` before `=` or a letter stays as
//!   written, which changes no word that matters). The link extractor's tokenizer finds it in
//!   the same pass as the links (`extract::page_links_fingerprinted`).
//! - Words are runs of alphanumeric characters, lower-cased; a tag ends a word. A page's
//!   shingles are its runs of [`SHINGLE_WORDS`] consecutive words (across tags), each hashed to
//!   64 bits; the measure counts each distinct shingle once, and so does the signature (a
//!   minimum does not change when a value repeats).
//! - Too little text to judge: a page of fewer than [`MIN_WORDS`] words has no signature and
//!   is never a near-duplicate nor an original (README.md, "Limits"). On such pages one changed
//!   word is a large share of the shingles, and navigation-only pages are all alike.
//! - Bounded work: at most [`MAX_TEXT_BYTES`] of visible text are read (the first ones); past
//!   it the tokenizer stops collecting text. A run of a UTF-8 page is read where it is, a byte
//!   at a time (`Shingler::html_text`: no decoding, copy or allocation; a character reference
//!   or a non-ASCII character decoded in place), the same words as decoding it first would give
//!   (`encoded_text`, which pages in other encodings take). A word is hashed as its bytes are
//!   read (`Word`: a shift per byte, a multiply per 8, a mix at its end); a run of ASCII
//!   letters and digits is found first and hashed 8 bytes a load, to the same hash. The
//!   commonest references (`&lt;`, `&amp;`, ...) are read as the separators they are. A
//!   shingle costs a rotation, a mix and one compare.
//!
//! The signature: one-permutation MinHash (Li, Owen and Zhang 2012) with optimal densification
//! (Shrivastava 2017): a shingle's hash picks one of [`HASHES`] bins by its top 8 bits, and a
//! bin keeps the least low 32 bits of its shingles; an empty bin (a short page) takes the value
//! of the first non-empty bin of a fixed pseudo-random probe sequence of its own, the same for
//! every page, so two pages' bins agree with probability their resemblance, whatever their
//! lengths. A bin's value is stored as its low 16 bits (b-bit MinHash, Li and König 2010):
//! two different minima agree by chance once in 65,536, which moves an estimate by less than
//! 0.0001. 256 bins estimate a resemblance of 0.9 within ±0.019 (one standard deviation).

use crate::seen::neardup::{HASHES, Signature};
use crate::url::html::{attribute_value, reference};
use encoding_rs::Encoding;

/// What the crawl does with near-duplicate pages (`--near-duplicates`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum NearDuplicates {
    /// No signature is computed.
    #[default]
    Off,
    /// Noted `near-duplicate:URL` in the URL log and counted; links followed as on any page.
    Note,
    /// Noted and counted, and the page's links are not followed.
    SkipLinks,
}

/// Words per shingle (Broder's measure).
pub const SHINGLE_WORDS: usize = 5;
/// Pages of fewer words are left out (module doc; BENCHMARKS.md, "Near-duplicates").
pub const MIN_WORDS: u64 = 50;
/// Bytes of visible text read per page at most.
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// Accumulates one page's visible text into its signature.
#[derive(Clone)]
pub struct Shingler {
    /// Per bin, the least low 32 bits of its shingles' hashes; `u32::MAX` and not `filled`
    /// when it has none.
    bins: [u32; HASHES],
    /// Bins with a shingle, a bit each.
    filled: [u64; HASHES / 64],
    /// The hashes of the last words (a ring of `SHINGLE_WORDS`), and the slot of the oldest.
    words: [u64; SHINGLE_WORDS],
    oldest: usize,
    /// The last `SHINGLE_WORDS` words' hashes, each rotated by 13 bits per word after it.
    rolling: u64,
    /// Words seen (a shingle is whole from `SHINGLE_WORDS` on).
    seen: u64,
    /// The word being read.
    word: Word,
    /// The last character reference decoded (`html_text`), kept for its buffer.
    reference: String,
    /// Text bytes taken so far.
    taken: usize,
}

/// The hash of a word being read, a byte of its lower-cased UTF-8 at a time, with no copy of
/// it: the bytes not yet folded packed in `tail` (at most 7), the ones before folded into
/// `head` 8 at a time. Two words of at most 7 bytes never get the same hash (`finish` is a
/// bijection of the packed bytes and the length); longer ones collide with probability 2^-64.
#[derive(Clone, Copy, Default)]
struct Word {
    head: u64,
    tail: u64,
    len: u64,
}

impl Word {
    #[inline(always)]
    fn push(&mut self, b: u8) {
        self.tail = self.tail << 8 | u64::from(b);
        self.len += 1;
        if self.len.is_multiple_of(8) {
            self.fold(self.tail);
            self.tail = 0;
        }
    }

    /// Folds 8 packed bytes of the word into `head`.
    #[inline(always)]
    fn fold(&mut self, eight: u64) {
        self.head = (self.head ^ eight)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }

    /// `push` of each of the first `len` bytes of `rest`, ASCII letters and digits all,
    /// lower-cased: 8 a load where the word's length is a multiple of 8 (`tail` is empty
    /// then), and its last 1 to 7 bytes in one load too when `rest` has 8 from there (the
    /// bytes past the word shifted out; a copy to a buffer would stall the load). `| 0x20`
    /// lower-cases a letter and keeps a digit (`'0'` is 0x30).
    #[inline(always)]
    fn push_ascii_alphanumeric(&mut self, rest: &[u8], len: usize) {
        const LOWER: u64 = 0x2020_2020_2020_2020;
        let eight = |at: usize| u64::from_be_bytes(rest[at..at + 8].try_into().expect("8 bytes"));
        let mut at = 0;
        while !self.len.is_multiple_of(8) && at < len {
            self.push(rest[at] | 0x20);
            at += 1;
        }
        while len - at >= 8 {
            self.fold(eight(at) | LOWER);
            self.len += 8;
            at += 8;
        }
        let last = len - at;
        if last > 0 {
            // Packed as `push` packs them, the first the highest.
            self.tail = if rest.len() - at >= 8 {
                (eight(at) | LOWER) >> (8 * (8 - last))
            } else {
                rest[at..len]
                    .iter()
                    .fold(0, |tail, &b| tail << 8 | u64::from(b | 0x20))
            };
            self.len += last as u64;
        }
    }

    /// The word's hash, or `None` for no word; the word is empty after.
    #[inline(always)]
    fn take(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let word = std::mem::take(self);
        Some(mix(word.head ^ word.tail ^ word.len << 56))
    }
}

/// What an ASCII byte is to a word: its lower case when alphanumeric, else `SEPARATOR`; and
/// `SPECIAL` for what `html_text` reads otherwise (`&`, NUL, non-ASCII bytes).
const CLASS: [u8; 256] = {
    let mut table = [SPECIAL; 256];
    let mut b = 1;
    while b < 128 {
        let c = b as u8;
        table[b] = if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            SEPARATOR
        };
        b += 1;
    }
    table[b'&' as usize] = SPECIAL;
    table
};
const SEPARATOR: u8 = 0;
const SPECIAL: u8 = 1;
/// `CLASS` values from this on are letters and digits (`'0'` is the least).
const ALPHANUMERIC: u8 = b'0';

impl Default for Shingler {
    fn default() -> Self {
        Shingler {
            bins: [u32::MAX; HASHES],
            filled: [0; HASHES / 64],
            words: [0; SHINGLE_WORDS],
            oldest: 0,
            rolling: 0,
            seen: 0,
            word: Word::default(),
            reference: String::new(),
            taken: 0,
        }
    }
}

impl Shingler {
    /// A signature of no text yet.
    pub fn new() -> Shingler {
        Shingler::default()
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
            text = &text[..text.floor_char_boundary(room)];
        }
        self.taken += text.len();
        for c in text.chars() {
            self.char(c);
        }
        self.end_word();
    }

    /// Takes one run of text between tags as it is in a page in `encoding`, undecoded: the
    /// same as `text` of it decoded and its references resolved (`html::attribute_value`).
    pub fn encoded_text(&mut self, raw: &[u8], encoding: &'static Encoding) {
        let decoded = encoding.decode_without_bom_handling(raw).0;
        self.text(&attribute_value(&decoded));
    }

    /// `encoded_text(run, UTF_8)` of a run of a UTF-8 page, without the copies: a run that
    /// cannot pass the cap (most) is read in place, a byte at a time, its references and
    /// other characters decoded where they are. The run's bytes are checked as UTF-8 from its
    /// first non-ASCII byte on (most runs have none, and the page's markup is never checked);
    /// from a malformed one on, the rest is decoded (`encoded_text`: runs begin and end at ASCII
    /// bytes, and a decoder starts over at one, so a run decodes alone as in its page).
    pub fn html_text(&mut self, bytes: &[u8]) {
        // A NUL becomes 3 bytes (U+FFFD), a reference at most 6 for its 5 (`&nGt;`).
        if bytes.len() > MAX_TEXT_BYTES.saturating_sub(self.taken) / 3 {
            self.encoded_text(bytes, encoding_rs::UTF_8);
            return;
        }
        // The run from its first non-ASCII byte on, once checked.
        let mut checked: Option<(usize, &str)> = None;
        // Bytes of the decoded text.
        let mut decoded = bytes.len();
        // The word in a local, which the compiler keeps in registers.
        let mut word = std::mem::take(&mut self.word);
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let class = CLASS[usize::from(b)];
            i += 1;
            if class >= ALPHANUMERIC {
                // The rest of the ASCII letters and digits, found first and then hashed
                // together.
                let start = i - 1;
                while i < bytes.len() && CLASS[usize::from(bytes[i])] >= ALPHANUMERIC {
                    i += 1;
                }
                word.push_ascii_alphanumeric(&bytes[start..], i - start);
            } else if class == SEPARATOR {
                if let Some(hash) = word.take() {
                    self.add_word(hash);
                }
            } else if b == b'&'
                && let Some((length, decoded_length)) = separator_reference(&bytes[i..])
            {
                // The references code shows most (`&lt;`, `&amp;`), each a separator.
                if let Some(hash) = word.take() {
                    self.add_word(hash);
                }
                decoded = decoded - (length + 1) + decoded_length;
                i += length;
            } else {
                self.word = word;
                if b == b'&' {
                    let mut value = std::mem::take(&mut self.reference);
                    value.clear();
                    let next = reference(bytes, i, &mut value);
                    decoded = decoded - (next + 1 - i) + value.len();
                    i = next;
                    value.chars().for_each(|c| self.char(c));
                    self.reference = value;
                } else {
                    let at = i - 1;
                    let c = if b.is_ascii() {
                        char::from(b)
                    } else {
                        let (from, rest) = match checked {
                            Some(checked) => checked,
                            None => match std::str::from_utf8(&bytes[at..]) {
                                Ok(rest) => *checked.insert((at, rest)),
                                Err(_) => {
                                    self.taken += decoded - (bytes.len() - at);
                                    self.encoded_text(&bytes[at..], encoding_rs::UTF_8);
                                    return;
                                }
                            },
                        };
                        rest[at - from..]
                            .chars()
                            .next()
                            .expect("a character starts here")
                    };
                    i += c.len_utf8() - 1;
                    if c == '\0' {
                        // U+FFFD, no letter.
                        decoded += 2;
                    }
                    self.char(c);
                }
                word = std::mem::take(&mut self.word);
            }
        }
        self.word = word;
        self.taken += decoded;
        self.end_word();
    }

    /// Reads one character of decoded text.
    #[inline]
    fn char(&mut self, c: char) {
        if c.is_ascii() {
            let class = CLASS[c as usize];
            if class >= ALPHANUMERIC {
                self.word.push(class);
            } else {
                self.end_word();
            }
        } else if c.is_alphanumeric() {
            for lower in c.to_lowercase() {
                let mut utf8 = [0; 4];
                for &b in lower.encode_utf8(&mut utf8).as_bytes() {
                    self.word.push(b);
                }
            }
        } else {
            self.end_word();
        }
    }

    #[inline]
    fn end_word(&mut self) {
        if let Some(hash) = self.word.take() {
            self.add_word(hash);
        }
    }

    /// The next word is the one of hash `word`.
    fn add_word(&mut self, word: u64) {
        // The shingle's hash: its words' hashes, each rotated 13 bits per word after it (order
        // matters), the oldest's leaving (5 × 13 = 65: 1 bit), then mixed.
        let leaving = std::mem::replace(&mut self.words[self.oldest], word);
        self.oldest = if self.oldest + 1 == SHINGLE_WORDS {
            0
        } else {
            self.oldest + 1
        };
        self.rolling = self.rolling.rotate_left(13) ^ word ^ leaving.rotate_left(1);
        self.seen += 1;
        if self.seen >= SHINGLE_WORDS as u64 {
            self.shingle(mix(self.rolling));
        }
    }

    /// Adds a shingle's hash to its bin.
    fn shingle(&mut self, h: u64) {
        let bin = (h >> 56) as usize;
        self.bins[bin] = self.bins[bin].min(h as u32);
        self.filled[bin / 64] |= 1 << (bin % 64);
    }

    /// The signature, or `None` when the text had fewer than `MIN_WORDS` words.
    pub fn finish(mut self) -> Option<Signature> {
        self.end_word();
        if self.seen < MIN_WORDS {
            return None;
        }
        let filled = |bin: usize| self.filled[bin / 64] >> (bin % 64) & 1 == 1;
        let mut values = [0u16; HASHES];
        for (bin, value) in values.iter_mut().enumerate() {
            let mut source = bin;
            let mut attempt = 0u64;
            while !filled(source) {
                // The probe sequence is the bin's own, so pages agree on where a bin looks.
                attempt += 1;
                source = match PROBES[bin].get(attempt as usize - 1) {
                    Some(&probe) => usize::from(probe),
                    None => probe(bin, attempt),
                };
            }
            // The donor's value, told apart by the bin it fills (optimal densification).
            let v = self.bins[source];
            *value = if source == bin {
                v as u16
            } else {
                (mix(u64::from(v) << 8 | bin as u64) >> 48) as u16
            };
        }
        Some(Signature { values })
    }
}

/// The length after `&` of the commonest references and the length of what each decodes to,
/// when `after` starts with one: each is a character that is no letter nor digit (`<`, `>`,
/// `&`, `"`, `'`, U+00A0), so it only ends a word, as `reference` and `Shingler::char` would
/// read it.
#[inline]
fn separator_reference(after: &[u8]) -> Option<(usize, usize)> {
    const SEPARATORS: [(&[u8], usize); 6] = [
        (b"lt;", 1),
        (b"gt;", 1),
        (b"amp;", 1),
        (b"quot;", 1),
        (b"#39;", 1),
        (b"nbsp;", 2),
    ];
    SEPARATORS
        .iter()
        .find(|(name, _)| after.starts_with(name))
        .map(|&(name, decoded)| (name.len(), decoded))
}

/// Where an empty bin looks for its value at attempt `attempt` (from 1 on).
const fn probe(bin: usize, attempt: u64) -> usize {
    (mix((bin as u64) << 32 | attempt) >> 56) as usize
}

/// The first 8 probes of every bin, the same for every page: a page of few shingles (a third
/// of its bins filled at 100) probes some 500 times.
const PROBES: [[u8; 8]; HASHES] = {
    let mut table = [[0u8; 8]; HASHES];
    let mut bin = 0;
    while bin < HASHES {
        let mut attempt = 0;
        while attempt < 8 {
            table[bin][attempt] = probe(bin, attempt as u64 + 1) as u8;
            attempt += 1;
        }
        bin += 1;
    }
    table
};

/// splitmix64's finalizer: every bit of a shingle's hash depends on every bit of its words'.
const fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The signature of an HTML page's visible text (`extract::page_links_fingerprinted` reads it
/// beside the links), for tests and the measurements.
pub fn page_signature(body: &[u8], charset: Option<&str>) -> Option<Signature> {
    let base = url::Url::parse("http://fingerprint.invalid/").expect("a valid URL");
    let read = crate::url::extract::page_links_fingerprinted;
    read(body, &base, charset, 20_000, "robots", true).fingerprint
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signature(text: &str) -> Signature {
        let mut h = Shingler::new();
        h.text(text);
        h.finish().expect("enough words")
    }

    /// An article of `words` generated words (a fixed vocabulary, drawn without pattern).
    fn article(seed: u64, words: usize) -> String {
        let mut rng = crate::SplitMix(seed);
        (0..words)
            .map(|_| format!("w{}", rng.below(3000)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The exact resemblance of two texts' 5-word shingle sets.
    fn exact(a: &str, b: &str) -> f64 {
        let set = |t: &str| {
            let w: Vec<String> = t
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            w.windows(SHINGLE_WORDS)
                .map(|s| s.join(" "))
                .collect::<std::collections::HashSet<_>>()
        };
        let (a, b) = (set(a), set(b));
        a.intersection(&b).count() as f64 / a.union(&b).count() as f64
    }

    #[test]
    fn identical_text_has_identical_signatures_and_markup_case_and_spacing_do_not_count() {
        let body = article(9, 60);
        let a = signature(&format!(
            "The quick brown fox jumps over the lazy dog {body}"
        ));
        let b = signature(&format!(
            "the  QUICK brown\nfox, jumps over: the lazy dog! {body}"
        ));
        assert_eq!(a.resemblance(&b), 1.0);
    }

    #[test]
    fn the_estimate_follows_the_exact_resemblance() {
        for (words, changed) in [(100, 1), (400, 3), (400, 12), (1000, 30), (3000, 40)] {
            let body = article(1, words);
            let mut other: Vec<&str> = body.split(' ').collect();
            for i in 0..changed {
                other[(i * 7919 + 13) % words] = "changed";
            }
            let other = other.join(" ");
            let (sa, sb) = (signature(&body), signature(&other));
            let (estimate, truth) = (sa.resemblance(&sb), exact(&body, &other));
            assert!(
                (estimate - truth).abs() < 0.08,
                "{words} words, {changed} changed: estimate {estimate}, exact {truth}"
            );
        }
        let a = signature(&article(2, 500));
        assert!(a.resemblance(&signature(&article(3, 500))) < 0.05);
    }

    #[test]
    fn words_change_the_signature_in_order_and_in_case_of_non_ascii_letters() {
        let body = article(4, 60);
        assert_eq!(
            signature(&format!("Grüße aus Köln {body}"))
                .resemblance(&signature(&format!("GRÜßE AUS KÖLN {body}"))),
            1.0
        );
    }

    /// The signature of `runs` read in place (`html_text`) and decoded first (`text`).
    fn both_ways(runs: &[&str]) -> (Option<Signature>, Option<Signature>, usize, usize) {
        let (mut in_place, mut decoded) = (Shingler::new(), Shingler::new());
        for run in runs {
            in_place.html_text(run.as_bytes());
            decoded.text(&crate::url::html::attribute_value(run));
        }
        let taken = (in_place.taken, decoded.taken);
        (in_place.finish(), decoded.finish(), taken.0, taken.1)
    }

    #[test]
    fn text_read_in_place_is_text_decoded_first() {
        let body = article(8, 60);
        let mixed = [
            "Caf&eacute; cr&#232;me &amp; Gr\u{fc}&szlig;e: &lt;Vec&lt;T&gt;&gt;, &nGt; &acE; x",
            "a&quot;b&#39;c&nbsp;d&ltx &lt &amp &quot &nbsp &#39 &#x27; &LT; &AMP; &lt;&gt;",
            "Eight8ch NINE9char sixteen16charsXY seventeen17charsXYZ \u{e9}abcdefghijklmnop",
            "abcdefg\u{e9}HIJKLMNOPQRS 1234567&eacute;89ABCDEFGHIJ x&amp;y&eacute;z",
            "&notit; &copy=2 &#x41;&#66;C &#0; a\0b &; & &# &#x; \u{FEFF}BOM caf\u{e9}s",
            "longer-than-eight-bytes words: internationalization Stra\u{df}enbahnhaltestelle",
            "\u{130}stanbul \u{3a3}\u{3a3} \u{2014}dash\u{2014} \u{4e2d}\u{6587} ,,, a1b2c3",
            &body,
            "  ",
            "end",
        ];
        let (a, b, taken_a, taken_b) = both_ways(&mixed);
        assert_eq!(taken_a, taken_b);
        assert_eq!(
            a.expect("enough words").values,
            b.expect("enough words").values
        );
        // A malformed byte (a page that says UTF-8 and is not, in part) is decoded as U+FFFD
        // from there on, with the word before it and the references after it as they read.
        let broken: &[u8] = b"Caf\xc3\xa9 cr\xe8me Gr\xc3\xbc&szlig;e &lt;\xff\xfeabc&amp; \xc3";
        let mut in_place = Shingler::new();
        let mut decoded = Shingler::new();
        for _ in 0..20 {
            in_place.html_text(broken);
            in_place.html_text(body.as_bytes());
            decoded.encoded_text(broken, encoding_rs::UTF_8);
            decoded.encoded_text(body.as_bytes(), encoding_rs::UTF_8);
        }
        assert_eq!(in_place.taken, decoded.taken);
        assert_eq!(
            in_place.finish().unwrap().values,
            decoded.finish().unwrap().values
        );
        // Each run alone ends its words: splitting a run in two is another text.
        let (a, b, ..) = both_ways(&[&body, "Caf", "&eacute;s", &body]);
        assert_eq!(a.unwrap().values, b.unwrap().values);
    }

    #[test]
    fn words_hashed_eight_bytes_a_load_are_words_hashed_a_byte_at_a_time() {
        let word = b"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789aBcDeFgHiJ";
        for already in 0..10 {
            for len in 0..=word.len() - already {
                let (mut bytewise, mut loaded) = (Word::default(), Word::default());
                for &b in &word[..already] {
                    bytewise.push(CLASS[usize::from(b)]);
                    loaded.push(CLASS[usize::from(b)]);
                }
                let more = &word[already..already + len];
                more.iter()
                    .for_each(|&b| bytewise.push(CLASS[usize::from(b)]));
                // With the rest of `word` after it (read past the word), and without.
                let mut cut = loaded;
                loaded.push_ascii_alphanumeric(&word[already..], len);
                cut.push_ascii_alphanumeric(more, len);
                let expected = bytewise.take();
                assert_eq!(expected, cut.take(), "{already} then {len} bytes alone");
                assert_eq!(expected, loaded.take(), "{already} then {len} bytes");
            }
        }
    }

    #[test]
    fn words_of_up_to_seven_bytes_have_distinct_hashes() {
        let hash = |w: &[u8]| {
            let mut word = Word::default();
            w.iter().for_each(|&b| word.push(b));
            word.take().expect("a word")
        };
        let mut seen = std::collections::HashSet::new();
        let letters = b"ab0";
        for len in 1..=7u32 {
            for n in 0..3usize.pow(len) {
                let w: Vec<u8> = (0..len).map(|i| letters[n / 3usize.pow(i) % 3]).collect();
                assert!(seen.insert(hash(&w)), "{w:?}");
            }
        }
    }

    #[test]
    fn empty_bins_take_the_values_their_probe_sequences_find() {
        // 50 to 60 words: most bins empty, some probing past the table's 8.
        for words in [50, 55, 60, 300] {
            let mut h = Shingler::new();
            h.text(&article(words as u64, words));
            let (bins, filled) = (h.bins, h.filled);
            let is_filled = |bin: usize| filled[bin / 64] >> (bin % 64) & 1 == 1;
            let values = h.finish().expect("enough words").values;
            for (bin, &value) in values.iter().enumerate() {
                let (mut source, mut attempt) = (bin, 0);
                while !is_filled(source) {
                    attempt += 1;
                    source = (mix((bin as u64) << 32 | attempt) >> 56) as usize;
                }
                let v = bins[source];
                let expected = if source == bin {
                    v as u16
                } else {
                    (mix(u64::from(v) << 8 | bin as u64) >> 48) as u16
                };
                assert_eq!(value, expected, "{words} words, bin {bin}");
            }
        }
    }

    #[test]
    fn too_little_text_has_no_signature() {
        let mut h = Shingler::new();
        h.text(&article(5, MIN_WORDS as usize - 1));
        assert!(h.finish().is_none());
        let mut h = Shingler::new();
        h.text(&article(5, MIN_WORDS as usize));
        assert!(h.finish().is_some());
    }

    #[test]
    fn text_past_the_cap_is_not_read() {
        let head = article(3, 2000);
        let pad = "x ".repeat(MAX_TEXT_BYTES);
        let a = signature(&format!("{head} {pad}"));
        let b = signature(&format!("{head} {pad} {}", article(4, 50_000)));
        assert_eq!(a.resemblance(&b), 1.0);
    }

    #[test]
    fn a_page_is_its_visible_text_with_references_decoded() {
        let body = article(6, 60);
        let page = format!(
            "<!doctype html><html><head><title>Not this</title>\
            <style>p {{ color: red }}</style><script>var hidden = 1;</script></head>\
            <body><p class=x>Tom &amp; Jerry&#33;<!-- a comment --></p>\
            <template><p>inert words</p></template><noscript>shown words</noscript>\
            <p>{body}</p></body>"
        );
        let text = signature(&format!("Tom & Jerry! shown words {body}"));
        let read = page_signature(page.as_bytes(), None).unwrap();
        assert_eq!(read.resemblance(&text), 1.0);
        assert!(page_signature(b"<p><script>only code</script>", None).is_none());
    }

    #[test]
    fn a_page_not_valid_utf8_is_read_as_one_that_is() {
        let page = format!(
            "<p>Gr\u{fc}&szlig;e &amp; caf&eacute; {}</p><script>x = \"SCRIPT\"</script>",
            article(10, 60)
        );
        let invalid = page
            .replace("SCRIPT", "\u{fffd}")
            .replace("\u{fffd}", "\u{1}");
        let mut invalid = invalid.into_bytes();
        let at = invalid.iter().position(|&b| b == 1).unwrap();
        invalid[at] = 0xFF;
        assert!(std::str::from_utf8(&invalid).is_err());
        let valid = page_signature(page.as_bytes(), None).unwrap();
        let decoded = page_signature(&invalid, None).unwrap();
        assert_eq!(valid.values, decoded.values);
    }

    #[test]
    fn the_links_read_beside_the_signature_are_the_links_read_without() {
        let page = format!(
            "<base href=/b/><p>text <a href=x>x</a> more <img src=i.png> {}</p>",
            article(7, 60)
        );
        let url = url::Url::parse("http://a.test/p").unwrap();
        let read = crate::url::extract::page_links_fingerprinted;
        let mut with = read(page.as_bytes(), &url, None, 100, "crawl", true);
        let without = read(page.as_bytes(), &url, None, 100, "crawl", false);
        assert!(with.fingerprint.take().is_some());
        assert_eq!(with, without);
    }
}
