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

/// A `Hasher` by `hash64`, for maps keyed by the ledger's own ids (the
/// discussions under way in a pass): cheaper than the default SipHash,
/// with the same caveat as the index's keys.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash64(bytes) ^ self.0.rotate_left(17);
    }
    // A `str` ends its bytes with 0xff: folded in without a second hash.
    fn write_u8(&mut self, byte: u8) {
        self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(MULTIPLIER);
    }
}

/// A `Hasher` for keys that are `hash64`s already (the index's keys): the
/// key itself.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed; anything else still hashes soundly.
        self.0 = hash64(bytes) ^ self.0.rotate_left(5);
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// Maps by the index's keys (`KeyHasher`).
pub(crate) type KeyHashMap<V> =
    std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// Maps by `IdHasher`.
pub(crate) type IdHashMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

/// Sets by `IdHasher`.
pub(crate) type IdHashSet<K> =
    std::collections::HashSet<K, std::hash::BuildHasherDefault<IdHasher>>;

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

    #[test]
    fn map_hashers_tell_keys_apart() {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let by_key = BuildHasherDefault::<KeyHasher>::default();
        assert_eq!(by_key.hash_one(0xDEAD_BEEF_u64), 0xDEAD_BEEF);
        let by_id = BuildHasherDefault::<IdHasher>::default();
        // A string's end is part of its hash: ("a", "bc") is not ("ab", "c").
        assert_ne!(by_id.hash_one(("a", "bc")), by_id.hash_one(("ab", "c")));
        assert_ne!(by_id.hash_one("dsc_0001"), by_id.hash_one("dsc_0002"));
        let mut map: IdHashMap<String, u32> = IdHashMap::default();
        map.insert("dsc_1".into(), 1);
        map.insert("dsc_2".into(), 2);
        assert_eq!(
            (map.get("dsc_1"), map.get("dsc_2"), map.get("dsc_3")),
            (Some(&1), Some(&2), None)
        );
    }
}
