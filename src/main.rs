fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(discuss::app::main())
}
