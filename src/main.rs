// malloc and free were a fifth of the whole-ledger work (a record is a few
// small strings): mimalloc's thread-local free lists make them cheaper.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    discuss::app::run(std::env::args_os())
}
