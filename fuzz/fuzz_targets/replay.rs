//! Arbitrary bytes as a ledger, and the same bytes reordered and edited:
//! replay and derivation must never panic, hide no complete line, and the
//! cache must agree with replay.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    discuss::fuzzing::replay_variants(data);
});
