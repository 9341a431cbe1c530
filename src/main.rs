// malloc and free were a fifth of the whole-ledger work (a record is a few
// small strings): mimalloc's thread-local free lists make them cheaper.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
