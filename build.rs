//! Links the `discuss` binary as a position-dependent executable on
//! Linux with glibc: a PIE binds some 20,000 relative relocations at
//! every start, a copy-on-write fault for each page of `.data.rel.ro`
//! they touch (80 of them); without them a start maps that data from the
//! page cache as it is read. The code stays position-independent (rustc's
//! default); only the link is not. This gives up address randomisation of
//! the binary's own image (libraries, stack and heap keep theirs), so a
//! packager whose policy wants a PIE sets `DISCUSS_PIE=1` at build time:
//! docs/decisions.md, "A command's start"; docs/performance.md has the
//! figures. A static build (`scripts/build-release`: `crt-static` and the
//! static relocation model) is position-dependent already.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DISCUSS_PIE");
    if std::env::var_os("DISCUSS_PIE").is_some() {
        return;
    }
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let static_build = features.split(',').any(|f| f == "crt-static");
    if os == "linux" && env == "gnu" && !static_build {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
