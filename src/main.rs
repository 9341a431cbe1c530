fn main() -> std::process::ExitCode {
    discuss::app::run(std::env::args_os())
}
