//! Byte searches for the short runs a page is read in: the text between two tags, an attribute
//! value, a link. Most are a few bytes long, where `memchr`'s dispatch (a call through a pointer
//! chosen for the CPU) costs more than the search: their first `SHORT_RUN` bytes are read here,
//! eight at a time in a `u64`, and only the rest of a longer run is handed to `memchr`.

use memchr::memchr;

/// Bytes `find_byte` looks at itself before it hands the rest to `memchr`.
const SHORT_RUN: usize = 32;

/// The first `needle` in `haystack` (`memchr`).
#[inline]
pub(crate) fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    let repeated = LOW * u64::from(needle);
    find_short(haystack, |word| zero_bytes(word ^ repeated))
        .unwrap_or_else(|at| memchr(needle, &haystack[at..]).map(|i| at + i))
}

/// `find_byte` for either of two needles (`memchr2`), for a link's value.
#[inline]
pub(crate) fn find_either(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    let (a_word, b_word) = (LOW * u64::from(a), LOW * u64::from(b));
    // The lowest bit of either test is exact (see `zero_bytes`), so the lower of the two is.
    find_short(haystack, |word| {
        zero_bytes(word ^ a_word) | zero_bytes(word ^ b_word)
    })
    .unwrap_or_else(|at| memchr::memchr2(a, b, &haystack[at..]).map(|i| at + i))
}

const LOW: u64 = u64::from_ne_bytes([0x01; 8]);

/// The high bit of each byte of `word` that is zero, or of a byte above such a one: the
/// lowest bit set marks the first zero byte (a borrow carries only upwards, past a true zero).
fn zero_bytes(word: u64) -> u64 {
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    word.wrapping_sub(LOW) & !word & HIGH
}

/// The first byte of `haystack`'s first `SHORT_RUN` that `found` marks in its word (read
/// little-endian, eight bytes at a time): `Ok` with where it is, or none; `Err` with where to
/// search on when there was no mark in them.
#[inline]
fn find_short(haystack: &[u8], found: impl Fn(u64) -> u64) -> Result<Option<usize>, usize> {
    let mut at = 0;
    while at < SHORT_RUN {
        let Some(chunk) = haystack.get(at..at + 8) else {
            // Fewer than eight bytes left: a word padded with zeros, whose marks are dropped.
            let mut last = [0u8; 8];
            let rest = &haystack[at..];
            last[..rest.len()].copy_from_slice(rest);
            let marks =
                found(u64::from_le_bytes(last)) & (1u64 << (rest.len() * 8)).wrapping_sub(1);
            return Ok((marks != 0).then(|| at + marks.trailing_zeros() as usize / 8));
        };
        let marks = found(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
        if marks != 0 {
            return Ok(Some(at + marks.trailing_zeros() as usize / 8));
        }
        at += 8;
    }
    Err(at)
}

#[cfg(test)]
mod tests {
    use super::*;

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
