//! A fast 64-bit hash for the cache: discussion keys, the last covered
//! line, checksums. Not cryptographic: it tells damage and staleness apart
//! from the real thing, it does not resist an attacker who can already
//! write the ledger's folder.

const SEED: u64 = 0x243F_6A88_85A3_08D3;
const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// Eight bytes at a time, then a final avalanche (from SplitMix64).
pub(crate) fn hash64(bytes: &[u8]) -> u64 {
    let mut h = SEED ^ (bytes.len() as u64).wrapping_mul(MULTIPLIER);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = (h ^ word).wrapping_mul(MULTIPLIER).rotate_left(31);
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(last)).wrapping_mul(MULTIPLIER);
    h ^= h >> 30;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_and_the_length_count() {
        assert_ne!(hash64(b""), hash64(b"\0"));
        assert_ne!(hash64(b"dsc_0001"), hash64(b"dsc_0002"));
        assert_ne!(hash64(b"abcdefgh1"), hash64(b"abcdefgh2"));
        assert_eq!(hash64(b"same"), hash64(b"same"));
        // Zeros, as a crash may leave in a file, do not hash to zero.
        assert_ne!(hash64(&[0; 64]), 0);
    }
}
