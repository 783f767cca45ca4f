use hashbrown::HashMap;

use super::TEXT_TRIGRAMS_SIZE;
use super::Trigram;
use crate::core::LowercaseText;
use crate::utils::is_stop_char;

/// (Patch of crawl.) A trigram packed into a `u64`, 21 bits a char (every `char` fits), the
/// first char highest: the integers' order is `Trigram`'s derived (lexicographic) order, so
/// sorting packed trigrams sorts them as upstream sorted `Trigram`s.
#[inline]
pub(crate) fn pack(c1: char, c2: char, c3: char) -> u64 {
    ((c1 as u64) << 42) | ((c2 as u64) << 21) | c3 as u64
}

/// (Patch of crawl.) `pack` of a `Trigram`.
#[inline]
pub(crate) fn pack_trigram(t: Trigram) -> u64 {
    pack(t.0, t.1, t.2)
}

/// (Patch of crawl.) The hasher of the count map: one multiply-xorshift mixes both the low bits
/// (hashbrown's bucket) and the high bits (its control byte) for a fraction of the default
/// hasher's cost. It is not keyed: a page's author could choose trigrams that share buckets,
/// but crawl passes at most 1,024 characters (`content::metadata::DETECT_CHARS`), so such a
/// text costs at most some 10^6 probes, about a millisecond.
#[derive(Default, Clone, Copy)]
pub(crate) struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    #[inline]
    fn finish(&self) -> u64 {
        let h = (self.0 ^ (self.0 >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^ (h >> 32)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

pub(crate) type MixBuild = std::hash::BuildHasherDefault<MixHasher>;

/// (Patch of crawl.) The text's trigrams (packed) in upstream's rank order: by occurrences,
/// then by trigram, both descending, at most `TEXT_TRIGRAMS_SIZE`. A trigram's index here is
/// its position in upstream's `trigram_positions` map, and the length is that map's length.
#[inline]
pub fn get_ranked_trigrams(text: &LowercaseText) -> Vec<u64> {
    let counts = count(text);
    // (count, trigram) in one integer: one comparison a pair, and all pairs differ (each
    // trigram once), so any sort gives upstream's one order.
    let mut pairs: Vec<u128> = counts
        .into_iter()
        .map(|(trigram, n)| ((n as u128) << 64) | trigram as u128)
        .collect();
    if pairs.len() > TEXT_TRIGRAMS_SIZE {
        // Only the first 600 are ranked: split them off (their order is the same), sort those.
        pairs.select_nth_unstable_by(TEXT_TRIGRAMS_SIZE - 1, |a, b| b.cmp(a));
        pairs.truncate(TEXT_TRIGRAMS_SIZE);
    }
    pairs.sort_unstable_by(|a, b| b.cmp(a));
    pairs.into_iter().map(|p| p as u64).collect()
}

/// Occurrences of each (packed) trigram, as upstream's `count` found them.
#[inline]
fn count(text: &LowercaseText) -> HashMap<u64, u32, MixBuild> {
    let hash_capacity = calculate_initial_hash_capacity(text);
    let mut trigram_occurances: HashMap<u64, u32, MixBuild> =
        HashMap::with_capacity_and_hasher(hash_capacity, MixBuild::default());

    // iterate through the string and count trigrams
    let mut chars_iter = text.chars().map(to_trigram_char).chain(Some(' '));
    let mut c1 = ' ';
    // unwrap is safe, because we always chain a space character on the end of the iterator
    let mut c2 = chars_iter.next().unwrap();
    for cur_char in chars_iter {
        let c3 = cur_char;
        if !(c2 == ' ' && (c1 == ' ' || c3 == ' ')) {
            *trigram_occurances.entry(pack(c1, c2, c3)).or_insert(0) += 1;
        }
        c1 = c2;
        c2 = c3;
    }
    trigram_occurances
}

// Convert punctuations and digits to a space.
#[inline]
fn to_trigram_char(ch: char) -> char {
    if is_stop_char(ch) { ' ' } else { ch }
}

// In order to improve performance, define the initial capacity for trigrams hash map,
// based on the size of the input text.
#[inline]
fn calculate_initial_hash_capacity(text: &str) -> usize {
    const MAX_INITIAL_HASH_CAPACITY: usize = 2048;

    let len = text.len();
    if len > MAX_INITIAL_HASH_CAPACITY {
        MAX_INITIAL_HASH_CAPACITY
    } else {
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_pack_keeps_trigram_order() {
        let a = Trigram('a', 'z', 'z');
        let b = Trigram('b', 'a', 'a');
        let c = Trigram('\u{10FFFF}', ' ', 'a');
        assert!(pack_trigram(a) < pack_trigram(b) && pack_trigram(b) < pack_trigram(c));
    }

    #[test]
    fn test_get_ranked_trigrams() {
        let lowercase_text = LowercaseText::new("xaaaaabbbb    d");
        let ranked = get_ranked_trigrams(&lowercase_text);
        assert_eq!(ranked[0], pack('a', 'a', 'a'));
        assert_eq!(ranked[1], pack('b', 'b', 'b'));
    }
}
