//! Both SHA-1 digests of a response record in one pass: the payload digest (over the body) and
//! the block digest (over the HTTP head then the body), as WARC writes them (`sha1:` + base32).
//!
//! Two SHA-1s over nearly the same bytes cost two passes of a SHA-NI unit that one message
//! alone cannot keep busy: each `sha1rnds4` waits on the one before it. Two independent
//! messages, interleaved round by round, fill those waits (multi-buffer hashing, as ISA-L and
//! OpenSSL's multi-block SHA do). On x86-64 with SHA-NI (detected at run time) the two digests
//! are taken that way — a lane per message, the rounds written after RustCrypto's `sha1` x86
//! backend; elsewhere the `sha1` crate hashes twice. Both ways give `sha1`'s exact digests
//! (the tests hold each to it), which WARC readers verify.
//!
//! The block lane reads the head then the body without joining them: a 64-byte block that lies
//! inside one of them is read in place, and only the block across the seam and the padded
//! last one or two blocks are copied into a 64-byte staging block.

use sha1::{Digest, Sha1};

/// The payload digest of `body` (`sha1:` and base32, as the URL log, `fetched.tsv` and the
/// records carry it) and the SHA-1 of `head ‖ body`, which the WARC writer encodes into the
/// response record's block digest.
pub fn payload_and_block(head: &[u8], body: &[u8]) -> (String, [u8; 20]) {
    let (payload, block) = sha1_pair(head, body);
    (warc_digest(&payload), block)
}

/// A response's payload digest and, when its record carries a block digest (`block`), the
/// SHA-1 of that record's block (head ‖ body), both in one pass over the body.
pub fn page_digests(block: bool, head: &[u8], body: &[u8]) -> (String, Option<[u8; 20]>) {
    if block {
        let (payload, block) = payload_and_block(head, body);
        return (payload, Some(block));
    }
    (sha1_base32(body), None)
}

/// `sha1:` and the base32 SHA-1 of `bytes`, as WARC digests are written (one pass of `sha1`).
pub fn sha1_base32(bytes: &[u8]) -> String {
    warc_digest(&Sha1::digest(bytes).into())
}

/// `sha1:` and the base32 of a SHA-1, as WARC digests are written.
pub fn warc_digest(sha1: &[u8; 20]) -> String {
    let mut digest = String::with_capacity(5 + 32);
    digest.push_str("sha1:");
    data_encoding::BASE32.encode_append(sha1, &mut digest);
    digest
}

/// SHA-1 of `body` and of `head ‖ body`: two lanes at once where the CPU has SHA-NI.
pub fn sha1_pair(head: &[u8], body: &[u8]) -> ([u8; 20], [u8; 20]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(pair) = sha_ni::pair(head, body) {
        return pair;
    }
    sha1_pair_portable(head, body)
}

/// `sha1_pair` with the `sha1` crate, one message after the other (any CPU).
pub fn sha1_pair_portable(head: &[u8], body: &[u8]) -> ([u8; 20], [u8; 20]) {
    let payload = Sha1::digest(body);
    let mut block = Sha1::new();
    block.update(head);
    block.update(body);
    (payload.into(), block.finalize().into())
}

/// `sha1_pair` on two SHA-NI lanes, or `None` when the CPU lacks SHA-NI (for the tests: each
/// way is tested on its own).
#[cfg(all(test, target_arch = "x86_64"))]
pub fn sha1_pair_sha_ni(head: &[u8], body: &[u8]) -> Option<([u8; 20], [u8; 20])> {
    sha_ni::pair(head, body)
}

/// One message to hash, `head ‖ body`, read a padded 64-byte block at a time.
struct Message<'a> {
    head: &'a [u8],
    body: &'a [u8],
    /// Bytes in `head ‖ body`.
    len: usize,
    /// Blocks once padded: the message, a 0x80 byte, zeros, the bit length in 8 bytes.
    blocks: usize,
    /// The block across the seam of head and body, or one holding padding.
    stage: [u8; 64],
}

impl<'a> Message<'a> {
    fn new(head: &'a [u8], body: &'a [u8]) -> Message<'a> {
        let len = head.len() + body.len();
        Message {
            head,
            body,
            len,
            blocks: (len + 8) / 64 + 1,
            stage: [0; 64],
        }
    }

    /// Block `k` of the padded message: in place when it lies inside the head or the body,
    /// else built in the staging block.
    #[inline]
    fn block(&mut self, k: usize) -> &[u8; 64] {
        let (start, end, h) = (64 * k, 64 * k + 64, self.head.len());
        if end <= h {
            return self.head[start..].first_chunk().expect("a whole block");
        }
        if start >= h && end <= self.len {
            return self.body[start - h..].first_chunk().expect("a whole block");
        }
        let stage = &mut self.stage;
        *stage = [0; 64];
        if start < h {
            stage[..h - start].copy_from_slice(&self.head[start..]);
        }
        let (from, to) = (start.max(h), end.min(self.len));
        if from < to {
            stage[from - start..to - start].copy_from_slice(&self.body[from - h..to - h]);
        }
        if (start..end).contains(&self.len) {
            stage[self.len - start] = 0x80;
        }
        if k + 1 == self.blocks {
            stage[56..].copy_from_slice(&(self.len as u64 * 8).to_be_bytes());
        }
        stage
    }
}

#[cfg(target_arch = "x86_64")]
mod sha_ni {
    use super::Message;
    use std::arch::x86_64::*;

    /// SHA-1's initial state (FIPS 180-4 §5.3.1).
    const H0: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];

    pub(super) fn pair(head: &[u8], body: &[u8]) -> Option<([u8; 20], [u8; 20])> {
        let sha_ni = is_x86_feature_detected!("sha")
            && is_x86_feature_detected!("sse2")
            && is_x86_feature_detected!("ssse3")
            && is_x86_feature_detected!("sse4.1");
        // SAFETY: `two_lanes` needs sha, sse2, ssse3 and sse4.1, checked just above.
        sha_ni.then(|| unsafe { two_lanes(head, body) })
    }

    /// A lane's state as the SHA-NI instructions hold it: ABCD in one register (A in the
    /// highest 32 bits), E in the highest 32 bits of another.
    #[derive(Clone, Copy)]
    struct Lane {
        abcd: __m128i,
        e: __m128i,
    }

    /// The payload lane (body) and the block lane (head ‖ body) side by side while both have
    /// blocks, then the block lane alone for the blocks it has more (the head's length).
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn two_lanes(head: &[u8], body: &[u8]) -> ([u8; 20], [u8; 20]) {
        let (mut payload, mut block) = (Message::new(&[], body), Message::new(head, body));
        let mut lanes = [start(); 2];
        for k in 0..payload.blocks {
            let words = [load(payload.block(k)), load(block.block(k))];
            compress(&mut lanes, words);
        }
        let mut tail = [lanes[1]];
        for k in payload.blocks..block.blocks {
            compress(&mut tail, [load(block.block(k))]);
        }
        (finish(lanes[0]), finish(tail[0]))
    }

    #[inline]
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn start() -> Lane {
        // SAFETY: `H0` is 16 bytes and more; the load is unaligned.
        let abcd = unsafe { _mm_loadu_si128(H0.as_ptr().cast()) };
        Lane {
            abcd: _mm_shuffle_epi32(abcd, 0b00011011),
            e: _mm_set_epi32(H0[4] as i32, 0, 0, 0),
        }
    }

    #[inline]
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn finish(lane: Lane) -> [u8; 20] {
        let mut state = [0u32; 5];
        let abcd = _mm_shuffle_epi32(lane.abcd, 0b00011011);
        // SAFETY: `state` has room for the 16 bytes stored; the store is unaligned.
        unsafe { _mm_storeu_si128(state.as_mut_ptr().cast(), abcd) };
        state[4] = _mm_extract_epi32(lane.e, 3) as u32;
        let mut out = [0u8; 20];
        for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
        out
    }

    /// A block's 16 words, big-endian, as four registers (the first word highest).
    #[inline]
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn load(block: &[u8; 64]) -> [__m128i; 4] {
        let mask = _mm_set_epi64x(0x0001_0203_0405_0607, 0x0809_0A0B_0C0D_0E0F);
        let at: *const __m128i = block.as_ptr().cast();
        // SAFETY: the four unaligned 16-byte loads stay within the 64-byte block.
        unsafe {
            [
                _mm_shuffle_epi8(_mm_loadu_si128(at), mask),
                _mm_shuffle_epi8(_mm_loadu_si128(at.add(1)), mask),
                _mm_shuffle_epi8(_mm_loadu_si128(at.add(2)), mask),
                _mm_shuffle_epi8(_mm_loadu_si128(at.add(3)), mask),
            ]
        }
    }

    /// One block into each of `N` lanes, their 20 four-round steps interleaved: step `q` of
    /// every lane before step `q + 1` of any, so each lane's `sha1rnds4` runs while another's
    /// waits on its previous one. The steps are those of RustCrypto's `sha1` x86 backend.
    #[inline]
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn compress<const N: usize>(lanes: &mut [Lane; N], blocks: [[__m128i; 4]; N]) {
        // Per lane: the last five 4-word groups of the schedule (group q at q % 5) and the two
        // working registers, h[q % 2] read and h[(q + 1) % 2] written by step q.
        let mut w = [[_mm_setzero_si128(); 5]; N];
        let mut h = [[_mm_setzero_si128(); 2]; N];
        for l in 0..N {
            w[l][..4].copy_from_slice(&blocks[l]);
            h[l] = [lanes[l].abcd, _mm_add_epi32(lanes[l].e, w[l][0])];
        }
        macro_rules! step {
            ($q:literal, $f:literal) => {
                for l in 0..N {
                    let (w, h) = (&mut w[l], &mut h[l]);
                    if $q >= 4 {
                        let m1 = _mm_sha1msg1_epu32(w[($q + 1) % 5], w[($q + 2) % 5]);
                        let x = _mm_xor_si128(m1, w[($q + 3) % 5]);
                        w[$q % 5] = _mm_sha1msg2_epu32(x, w[($q + 4) % 5]);
                    }
                    let e = match $q {
                        0 => h[1],
                        _ => _mm_sha1nexte_epu32(h[($q + 1) % 2], w[$q % 5]),
                    };
                    h[($q + 1) % 2] = _mm_sha1rnds4_epu32(h[$q % 2], e, $f);
                }
            };
        }
        step!(0, 0);
        step!(1, 0);
        step!(2, 0);
        step!(3, 0);
        step!(4, 0);
        step!(5, 1);
        step!(6, 1);
        step!(7, 1);
        step!(8, 1);
        step!(9, 1);
        step!(10, 2);
        step!(11, 2);
        step!(12, 2);
        step!(13, 2);
        step!(14, 2);
        step!(15, 3);
        step!(16, 3);
        step!(17, 3);
        step!(18, 3);
        step!(19, 3);
        for l in 0..N {
            // Step 19 wrote h[0] (the new ABCD); h[1] holds the ABCD before it, whose A
            // gives the new E.
            lanes[l].abcd = _mm_add_epi32(lanes[l].abcd, h[l][0]);
            lanes[l].e = _mm_sha1nexte_epu32(h[l][1], lanes[l].e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Body lengths at and around every place padding changes: empty, one byte, the last that
    /// fits the length in its block (55), the first that does not (56), whole blocks, and a
    /// few large ones.
    const BODY_LENGTHS: &[usize] = &[
        0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 26_000, 65_537, 100_000,
    ];

    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    fn reference(head: &[u8], body: &[u8]) -> ([u8; 20], [u8; 20]) {
        let block = [head, body].concat();
        (Sha1::digest(body).into(), Sha1::digest(&block).into())
    }

    /// Every head length from 0 to 130 (each place the seam can fall in a block, and heads of
    /// more than two blocks) against each body length, through `pair`.
    fn agrees_with_sha1(pair: impl Fn(&[u8], &[u8]) -> ([u8; 20], [u8; 20])) {
        for (i, &body_len) in BODY_LENGTHS.iter().enumerate() {
            let body = bytes(body_len, i as u64);
            // Large bodies take every 7th head length, to keep the test short.
            for head_len in (0..=130).step_by(if body_len > 1000 { 7 } else { 1 }) {
                let head = bytes(head_len, 1000 + head_len as u64);
                assert_eq!(
                    pair(&head, &body),
                    reference(&head, &body),
                    "head {head_len} bytes, body {body_len} bytes"
                );
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn sha_ni_lanes_give_sha1s_digests() {
        if !std::arch::is_x86_feature_detected!("sha") {
            eprintln!("no SHA-NI on this CPU: its lanes are not tested here");
            return;
        }
        agrees_with_sha1(|h, b| sha1_pair_sha_ni(h, b).expect("SHA-NI detected"));
    }

    #[test]
    fn portable_pair_gives_sha1s_digests() {
        agrees_with_sha1(sha1_pair_portable);
    }

    #[test]
    fn the_chosen_way_gives_sha1s_digests_in_warc_form() {
        let (head, body) = (b"HTTP/1.1 200 OK\r\n\r\n", b"hello");
        let (payload, block) = payload_and_block(head, body);
        assert_eq!(payload, "sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N");
        let (p, b) = reference(head, body);
        assert_eq!((payload.clone(), block), (warc_digest(&p), b));
        // A page's digests: the same payload digest, the block's SHA-1 only when asked for.
        assert_eq!(page_digests(true, head, body), (payload.clone(), Some(b)));
        assert_eq!(page_digests(false, head, body), (payload, None));
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Random heads and bodies (up to 100 KB) on both ways against the `sha1` crate.
        #[test]
        fn both_ways_match_sha1(
            head in proptest::collection::vec(any::<u8>(), 0..700),
            body in proptest::collection::vec(any::<u8>(), 0..100_000),
        ) {
            let want = (
                <[u8; 20]>::from(Sha1::digest(&body)),
                <[u8; 20]>::from(Sha1::digest([&head[..], &body[..]].concat())),
            );
            prop_assert_eq!(sha1_pair_portable(&head, &body), want);
            prop_assert_eq!(sha1_pair(&head, &body), want);
        }
    }
}
