//! URL checksums: the 64-bit fingerprints that stand for URLs in the seen set.
//!
//! The checksum is stored on disk and compared across runs, so it must never change: it is
//! XXH3-64 (seed 0) of the canonical URL's bytes, an algorithm whose output is frozen. Two
//! distinct URLs share a checksum with probability about N²/2⁶⁵ over a seen set of N URLs
//! (2.7×10⁻⁴ at 10⁸, 2.7% at 10⁹); the loser of such a collision is wrongly taken as seen.

/// Identifies the hash function in on-disk headers, so a future change of hash is detected.
pub const HASH_ID: u32 = 1; // XXH3-64, seed 0

/// The checksum of a canonical URL (or, for `crawl dedupe --raw`, of any line).
pub fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The on-disk seen set is only valid while these values hold.
    #[test]
    fn checksum_is_frozen_xxh3() {
        assert_eq!(checksum(b""), 0x2d06800538d394c2);
        assert_eq!(
            checksum(b"http://example.com/"),
            checksum(b"http://example.com/")
        );
        assert_ne!(
            checksum(b"http://example.com/"),
            checksum(b"http://example.com/a")
        );
    }
}
