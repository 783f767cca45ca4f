//! SplitMix64: a tiny, seeded, well-mixed pseudo-random generator (Steele, Lea, Flood 2014).
//!
//! One copy for everything that needs cheap reproducible randomness and no cryptographic
//! strength: WARC record ids (`warc`), RANDOM evictions (`cachesim`), the URL stream generator
//! (`examples/urlstream.rs`).

/// The generator's state; any seed will do.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next number of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..bound (Lemire's multiply-shift; the bias is below 2⁻³² for bounds < 2³²).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((self.next_u64() as u128 * bound as u128) >> 64) as u64
    }

    /// Uniform in [0, 1), with 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_sequence() {
        // The first outputs for seed 0 of the reference implementation (Vigna's splitmix64.c).
        let mut rng = SplitMix(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let mut rng = SplitMix(7);
        assert!((0..1000).all(|_| rng.below(10) < 10 && (0.0..1.0).contains(&rng.unit())));
    }
}
