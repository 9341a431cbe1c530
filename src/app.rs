//! The process edge: parse arguments, run, map the outcome to an exit status.

use crate::cli::Cli;
use crate::commands;
use crate::error::{Error, ErrorCode};
use crate::output::Output;
use clap::Parser;
use std::ffi::OsString;

/// Runs `discuss` with the process arguments; returns the exit status.
pub fn main() -> u8 {
    // A Tab in a shell (`DISCUSS_COMPLETE=bash discuss -- ...`): answered
    // before anything else, and the process ends there.
    crate::complete::answer_if_asked();
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.len() == 1 {
        // Bare `discuss`: the help, as a first step, not an error.
        let mut command = <Cli as clap::CommandFactory>::command();
        let help = command.render_help().to_string();
        // Through the output layer: a closed pipe is a quiet success.
        Output::new(false, crate::cli::ColorChoice::Never).print_text(&format!("{help}\n"));
        return 0;
    }
    // The supervisor's guardian is this binary too (see supervisor::guardian);
    // it is not a command and never reaches clap.
    if args
        .get(1)
        .is_some_and(|a| a == crate::supervisor::guardian::ARG)
    {
        return crate::supervisor::guardian::run();
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version
            let _ = err.print();
            return 0;
        }
        Err(err) => {
            let out = Output::new(wants_json(&args), crate::cli::ColorChoice::Never);
            let rendered = err.render().to_string();
            let message = rendered.trim_start_matches("error: ").trim_end().to_owned();
            out.print_error(&Error::new(ErrorCode::Usage, message));
            return ErrorCode::Usage.exit_status();
        }
    };
    let out = Output::new(cli.global.json, cli.global.color);
    match commands::run(&cli, out.clone()) {
        Ok(status) => status,
        Err(err) => {
            let machine = matches!(
                cli.command,
                crate::cli::Command::Call(_) | crate::cli::Command::Mcp(_)
            );
            let out = if machine { out.as_json() } else { out };
            out.print_error(&err);
            err.exit_status()
        }
    }
}

/// For usage errors, which clap reports before our options are known:
/// `--json` anywhere before `--`, or the `call` command.
fn wants_json(args: &[OsString]) -> bool {
    let before_dashes = args.iter().skip(1).take_while(|a| *a != "--");
    let mut positional = before_dashes
        .clone()
        .filter(|a| !a.to_string_lossy().starts_with('-'));
    before_dashes.clone().any(|a| a == "--json") || positional.next().is_some_and(|a| a == "call")
}
