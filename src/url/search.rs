//! Byte searches for the short runs a page is read in: the text between two tags, an attribute
//! value, a link. Most are a few bytes long, where `memchr`'s dispatch (a call through a pointer
//! chosen for the CPU) costs more than the search: their first `SHORT_RUN` bytes are read here,
//! sixteen at a time with SSE2 (every x86-64 CPU has it; elsewhere eight at a time in a
//! `u64`), a run shorter than that in one or two `u64`s, and only the rest of a longer run is
//! handed to `memchr`.

use memchr::memchr;

/// Bytes the searches look at themselves before they hand the rest to `memchr`.
const SHORT_RUN: usize = 64;

/// The first `needle` in `haystack` (`memchr`).
#[inline]
pub(crate) fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    let repeated = LOW * u64::from(needle);
    let found = find_head(
        haystack,
        |word| zero_bytes(word ^ repeated),
        #[cfg(target_arch = "x86_64")]
        {
            let needle = sse2::splat(needle);
            move |chunk| sse2::equal(chunk, needle)
        },
    );
    found.unwrap_or_else(|at| memchr(needle, &haystack[at..]).map(|i| at + i))
}

/// `find_byte` for either of two needles (`memchr2`), for a link's value.
#[inline]
pub(crate) fn find_either(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    let (a_word, b_word) = (LOW * u64::from(a), LOW * u64::from(b));
    // The lowest bit of either test is exact (see `zero_bytes`), so the lower of the two is.
    let found = find_head(
        haystack,
        |word| zero_bytes(word ^ a_word) | zero_bytes(word ^ b_word),
        #[cfg(target_arch = "x86_64")]
        {
            let (a, b) = (sse2::splat(a), sse2::splat(b));
            move |chunk| sse2::equal(chunk, a) | sse2::equal(chunk, b)
        },
    );
    found.unwrap_or_else(|at| memchr::memchr2(a, b, &haystack[at..]).map(|i| at + i))
}

/// Whether `bytes` are all ASCII (`<[u8]>::is_ascii`), for an attribute value.
#[inline]
pub(crate) fn is_ascii(bytes: &[u8]) -> bool {
    let found = find_head(
        bytes,
        |word| word & HIGH,
        #[cfg(target_arch = "x86_64")]
        sse2::high_bits,
    );
    found.map_or_else(|at| bytes[at..].is_ascii(), |non_ascii| non_ascii.is_none())
}

/// How many of `bytes`' first bytes are lower-case ASCII letters or `-` (the bytes most tag
/// and attribute names are made of), sixteen at a time while there are as many.
#[inline(always)]
pub(crate) fn lower_run(bytes: &[u8]) -> usize {
    let mut at = 0;
    #[cfg(target_arch = "x86_64")]
    while let Some(chunk) = bytes.get(at..at + 16) {
        let others = !sse2::lower_or_dash(chunk.try_into().expect("sixteen")) & 0xFFFF;
        if others != 0 {
            return at + others.trailing_zeros() as usize;
        }
        at += 16;
    }
    while bytes
        .get(at)
        .is_some_and(|&c| c.is_ascii_lowercase() || c == b'-')
    {
        at += 1;
    }
    at
}

/// Calls `each` with the index of every `needle` in `haystack`, in order, eight bytes at a
/// time (for a path's slashes, most of a few dozen bytes: no `memchr` dispatch).
#[inline]
pub(crate) fn each_byte(needle: u8, haystack: &[u8], mut each: impl FnMut(usize)) {
    const LOW7: u64 = u64::from_le_bytes([0x7f; 8]);
    let repeated = LOW * u64::from(needle);
    let mut words = haystack.chunks_exact(8);
    let mut base = 0;
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes")) ^ repeated;
        // The high bit of each byte that was a `needle` (now zero), and of no other: exact in
        // every byte, unlike `zero_bytes`, since no borrow crosses a byte.
        let mut found = !(((word & LOW7) + LOW7) | word | LOW7);
        while found != 0 {
            each(base + found.trailing_zeros() as usize / 8);
            found &= found - 1;
        }
        base += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b == needle {
            each(base + i);
        }
    }
}

const LOW: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

/// The high bit of each byte of `word` that is zero, or of a byte above such a one: the
/// lowest bit set marks the first zero byte (a borrow carries only upwards, past a true zero).
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(LOW) & !word & HIGH
}

/// The first byte of `haystack`'s first `SHORT_RUN` that the tests mark: `in_word` in a word
/// read little-endian (a bit in each byte marked, the lowest exact), `in_chunk` in sixteen
/// bytes (a bit per byte). `Ok` with where it is, or none; `Err` with where to search on when
/// there was no mark in them.
#[inline(always)]
fn find_head(
    haystack: &[u8],
    in_word: impl Fn(u64) -> u64,
    #[cfg(target_arch = "x86_64")] in_chunk: impl Fn(&[u8; 16]) -> u32,
) -> Result<Option<usize>, usize> {
    let len = haystack.len();
    let word_at = |at: usize| u64::from_le_bytes(haystack[at..at + 8].try_into().expect("eight"));
    if len < 8 {
        // Padded with zeros, whose marks are dropped (a byte at a time: a copy of a length
        // not known would be a call).
        let word = (haystack.iter().enumerate()).fold(0, |w, (i, &b)| w | u64::from(b) << (i * 8));
        let marks = in_word(word) & (1u64 << (len * 8)).wrapping_sub(1);
        return Ok((marks != 0).then(|| marks.trailing_zeros() as usize / 8));
    }
    #[cfg(target_arch = "x86_64")]
    let step = 16;
    #[cfg(not(target_arch = "x86_64"))]
    let step = 8;
    if len < step {
        // The first word, then the last, whose bytes looked at already are dropped.
        let marks = in_word(word_at(0));
        if marks != 0 || len == 8 {
            return Ok((marks != 0).then(|| marks.trailing_zeros() as usize / 8));
        }
        return Ok(last_marks(in_word(word_at(len - 8)), len - 8, 8).map(|i| len - 8 + i));
    }
    let mut at = 0;
    while at < SHORT_RUN {
        if at + step > len {
            // The last `step` bytes, those looked at already dropped: they had no needle,
            // so no borrow of the word test comes from them either.
            let start = len - step;
            return Ok(if at == len {
                None
            } else {
                #[cfg(target_arch = "x86_64")]
                let found = last_marks(
                    u64::from(in_chunk(haystack[start..].try_into().expect("sixteen"))),
                    len - at,
                    16,
                );
                #[cfg(not(target_arch = "x86_64"))]
                let found = last_marks(in_word(word_at(start)), len - at, 8);
                found.map(|i| start + i)
            });
        }
        #[cfg(target_arch = "x86_64")]
        let marks = in_chunk(haystack[at..at + 16].try_into().expect("sixteen"));
        #[cfg(not(target_arch = "x86_64"))]
        let marks = in_word(word_at(at));
        if marks != 0 {
            let bits_per_byte = if step == 16 { 1 } else { 8 };
            return Ok(Some(at + (marks.trailing_zeros() / bits_per_byte) as usize));
        }
        at += step;
    }
    Err(at)
}

/// The first mark among the last `new` bytes of the marks of a run of `bytes` (16: a bit
/// each; 8: a byte each): the index of its byte in the run.
#[inline(always)]
fn last_marks(marks: u64, new: usize, bytes: usize) -> Option<usize> {
    let bits = if bytes == 16 { 1 } else { 8 };
    let marks = marks & (u64::MAX << ((bytes - new) * bits));
    (marks != 0).then(|| marks.trailing_zeros() as usize / bits)
}

/// SSE2, which every x86-64 CPU has.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    /// `byte` in each of sixteen lanes.
    #[inline(always)]
    pub(super) fn splat(byte: u8) -> __m128i {
        // SAFETY: SSE2 is part of x86-64 (every such CPU has it).
        unsafe { _mm_set1_epi8(byte as i8) }
    }

    /// A bit for each of `chunk`'s bytes equal to its lane of `needle`.
    #[inline(always)]
    pub(super) fn equal(chunk: &[u8; 16], needle: __m128i) -> u32 {
        // SAFETY: SSE2 is part of x86-64; `chunk` is sixteen readable bytes, and the load
        // has no alignment requirement.
        unsafe {
            let chunk = _mm_loadu_si128(chunk.as_ptr().cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(chunk, needle)) as u32
        }
    }

    /// A bit for each of `chunk`'s bytes that is a lower-case ASCII letter or `-` (the high
    /// sixteen bits clear).
    #[inline(always)]
    pub(super) fn lower_or_dash(chunk: &[u8; 16]) -> u32 {
        // SAFETY: as in `equal`.
        unsafe {
            let chunk = _mm_loadu_si128(chunk.as_ptr().cast());
            // Signed comparisons: a byte past ASCII is negative, below `a`.
            let from_a = _mm_cmpgt_epi8(chunk, _mm_set1_epi8(b'a' as i8 - 1));
            let to_z = _mm_cmplt_epi8(chunk, _mm_set1_epi8(b'z' as i8 + 1));
            let dash = _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'-' as i8));
            _mm_movemask_epi8(_mm_or_si128(_mm_and_si128(from_a, to_z), dash)) as u32
        }
    }

    /// A bit for each of `chunk`'s bytes past ASCII (its high bit).
    #[inline(always)]
    pub(super) fn high_bits(chunk: &[u8; 16]) -> u32 {
        // SAFETY: as in `equal`.
        unsafe { _mm_movemask_epi8(_mm_loadu_si128(chunk.as_ptr().cast())) as u32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lower_run` stops at the first byte that is not a lower-case letter or `-`, wherever it
    /// is, whatever it is (the bytes next to the range, upper case, past ASCII).
    #[test]
    fn lower_run_stops_at_the_first_other_byte() {
        for len in 0..40 {
            let run: Vec<u8> = (0..len).map(|i| b"az-qm"[i % 5]).collect();
            assert_eq!(lower_run(&run), len);
            for at in 0..len {
                for other in [
                    b'a' - 1,
                    b'z' + 1,
                    b'A',
                    b'Z',
                    b'=',
                    b' ',
                    b'0',
                    0x80,
                    0xE1,
                    0xFF,
                    0,
                ] {
                    let mut bytes = run.clone();
                    bytes[at] = other;
                    assert_eq!(lower_run(&bytes), at, "{len} {at} {other}");
                }
            }
        }
    }

    /// `is_ascii` finds a byte past ASCII wherever it is, in runs of every length around the
    /// words, chunks and `SHORT_RUN`.
    /// `each_byte` gives every needle's index, wherever it is, beside bytes that differ from
    /// it in one bit or are zero.
    #[test]
    fn each_byte_finds_every_needle() {
        for len in 0..40 {
            for needle in [b'/', 0, 0x80, 0xFF] {
                let mut noise = crate::splitmix::SplitMix(len as u64);
                let others = [needle ^ 1, needle ^ 0x80, needle ^ 0x40, 0, b'a'];
                let bytes: Vec<u8> = (0..len)
                    .map(|_| match noise.next_u64() % 4 {
                        0 => needle,
                        n => others[n as usize % others.len()],
                    })
                    .collect();
                let mut got = Vec::new();
                each_byte(needle, &bytes, |at| got.push(at));
                let want: Vec<usize> = (0..len).filter(|&i| bytes[i] == needle).collect();
                assert_eq!(got, want, "{len} {needle} {bytes:?}");
            }
        }
    }

    #[test]
    fn is_ascii_finds_a_byte_past_ascii_anywhere() {
        for len in 0..(SHORT_RUN + 40) {
            let ascii: Vec<u8> = (0..len).map(|i| (i * 7 % 128) as u8).collect();
            assert!(is_ascii(&ascii), "{len}");
            for at in 0..len {
                for high in [0x80, 0xC3, 0xFF] {
                    let mut bytes = ascii.clone();
                    bytes[at] = high;
                    assert!(!is_ascii(&bytes), "{len} {at} {high}");
                }
            }
        }
    }

    /// `find_byte`'s and `find_either`'s word-at-a-time head and `memchr` tail agree with a
    /// plain search for a needle at every place of every length around them, among the bytes
    /// next to it (which a carry or borrow in the word test would confuse with it), zeros (the
    /// padding of a short tail) and bytes past ASCII.
    #[test]
    fn find_byte_finds_the_first_needle_wherever_it_is() {
        for needle in [b'<', b'"', b'\'', b'>', 0, 0x80, 0xff] {
            let others = [
                needle.wrapping_add(1),
                needle.wrapping_sub(1),
                needle ^ 0x80,
                0,
                0xff,
                b'a',
            ];
            for len in 0..(SHORT_RUN + 24) {
                for (k, &other) in others.iter().enumerate() {
                    let haystack: Vec<u8> = (0..len)
                        .map(|i| if (i + k) % 3 == 0 { other } else { b'x' })
                        .map(|b| if b == needle { b'x' } else { b })
                        .collect();
                    assert_eq!(find_byte(needle, &haystack), None, "{needle} {len}");
                    for at in 0..len {
                        let mut changed = haystack.clone();
                        changed[at] = needle;
                        if at + 5 < len {
                            changed[at + 5] = needle;
                        }
                        assert_eq!(find_byte(needle, &changed), Some(at), "{needle} {len} {at}");
                        // Either needle first, the other (or none) after it.
                        let found = find_either(needle, other, &changed);
                        let want = changed.iter().position(|&b| b == needle || b == other);
                        assert_eq!(found, want, "{needle} {other} {len} {at}");
                        assert_eq!(find_either(other, needle, &changed), want);
                    }
                }
            }
        }
    }
}
