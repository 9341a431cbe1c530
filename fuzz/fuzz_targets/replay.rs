//! Arbitrary bytes as a ledger: replay and derivation must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    discuss::fuzzing::replay(data);
});
