// The system's allocator for a short command, mimalloc's for work over
// much of the ledger (src/allocator.rs).
#[global_allocator]
static ALLOCATOR: discuss::allocator::Allocator = discuss::allocator::Allocator;

// `pow` is the one function of libm the binary calls (indicatif's rates,
// tokio's scheduler statistics). Defined here, the dynamic loader has no
// reason to map libm: a start 0.2 ms shorter (docs/performance.md).
#[unsafe(no_mangle)]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

fn main() -> std::process::ExitCode {
    discuss::app::run(std::env::args_os())
}
