//! Links the `discuss` binary with its relative relocations packed
//! (DT_RELR) on Linux with glibc: a start-up binds some 20,000 of them,
//! and packed they are a few KiB to read instead of half a MiB of page
//! faults (docs/performance.md, "A command's fixed cost"). It needs
//! GNU ld 2.38 or later to link and glibc 2.36 or later to run, as
//! Debian 12 has (docs/platforms.md).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
