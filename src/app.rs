//! The process edge: parse arguments, run, map the outcome to an exit status.

use crate::cli::{Cli, Command};
use crate::commands::{self, Context, Options};
use crate::error::Result;
use crate::error::{Error, ErrorCode};
use crate::output::Answer;
use crate::output::Output;
use clap::Parser;
use std::ffi::OsString;

/// Runs `discuss` with the process arguments; returns the exit status.
pub fn main() -> u8 {
    // A Tab in a shell (`DISCUSS_COMPLETE=bash discuss -- ...`): answered
    // before anything else, and the process ends there.
    answer_completion_if_asked();
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.len() == 1 {
        // Bare `discuss`: the help, as a first step, not an error.
        let mut command = <Cli as clap::CommandFactory>::command();
        let help = command.render_help().to_string();
        // Through the output layer: a closed pipe is a quiet success.
        Output::new(false, crate::output::ColorChoice::Never).print_text(&format!("{help}\n"));
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
            let out = Output::new(wants_json(&args), crate::output::ColorChoice::Never);
            out.print_error(&usage_error(&err, &args));
            return ErrorCode::Usage.exit_status();
        }
    };
    let out = Output::new(cli.global.json, cli.global.color);
    match run(&cli, out.clone()) {
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

/// clap's error as the contract's: its message on one line (the missing
/// arguments listed after it), its tips as hints, and the usage of the
/// command that was meant, written as the help writes it (clap's own usage
/// line counts options given through the environment, such as
/// `DISCUSS_LEDGER`, as if they were required).
fn usage_error(err: &clap::Error, args: &[OsString]) -> Error {
    let rendered = err.render().to_string();
    let mut paragraphs = rendered
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let first = paragraphs.next().unwrap_or("invalid arguments");
    let mut lines = first.trim_start_matches("error: ").lines().map(str::trim);
    let mut message = lines.next().unwrap_or_default().to_owned();
    let listed: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
    if !listed.is_empty() {
        message.push(' ');
        message.push_str(&listed.join(", "));
    }
    let mut command = <Cli as clap::CommandFactory>::command();
    command.build();
    let meant = meant_command(&command, args);
    let usage = meant.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ").trim().to_owned();
    let mut error = Error::usage(message, usage);
    for tip in paragraphs.flat_map(str::lines).map(str::trim) {
        if let Some(tip) = tip.strip_prefix("tip: ") {
            error = error.hint(tip);
        }
    }
    error.hint(format!(
        "`{} --help` explains every option",
        meant.get_bin_name().unwrap_or("discuss")
    ))
}

/// The (sub)command the arguments name, as far as they name one.
fn meant_command<'a>(root: &'a clap::Command, args: &[OsString]) -> &'a clap::Command {
    let mut current = root;
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        if matches!(&*word, "--ledger" | "--actor" | "--color") {
            words.next();
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        match current.find_subcommand(&*word) {
            Some(sub) => current = sub,
            None => break,
        }
    }
    current
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

/// Answers a completion request when `DISCUSS_COMPLETE` names a shell, and
/// exits; returns at once otherwise.
fn answer_completion_if_asked() {
    clap_complete::CompleteEnv::with_factory(<Cli as clap::CommandFactory>::command)
        .var(crate::complete::VAR)
        .bin("discuss")
        .completer("discuss")
        .complete();
}

/// Runs the parsed command and shows its answer through the output
/// layer; the exit status on success.
fn run(cli: &Cli, out: Output) -> Result<u8> {
    let global = Options {
        ledger: cli.global.ledger.as_deref(),
        actor: cli.global.actor.as_deref(),
        allow_network_fs: cli.global.allow_network_fs,
    };
    let ctx = match &cli.command {
        // Neither needs a ledger.
        Command::Completions { shell } => {
            out.print_text(&String::from_utf8_lossy(&crate::assets::completion(*shell)));
            return Ok(0);
        }
        // Answers go out as MCP messages, errors as JSON: never human text.
        Command::Mcp(args) => {
            return commands::mcp::run(Context::new(&global, out.as_json())?, args);
        }
        Command::Call(_) => Context::new(&global, out.as_json())?,
        _ => Context::new(&global, out)?,
    };
    let answer = match &cli.command {
        Command::Fleet(args) => commands::fleet::run(&ctx, args)?,
        Command::Ask(args) => commands::ask::run(&ctx, args)?,
        Command::Wake(args) => commands::wake::run(&ctx, args)?,
        Command::Reply(args) => commands::reply::run(&ctx, args)?,
        Command::Show(args) => commands::show::run(&ctx, args)?,
        Command::KillSwitch(args) => commands::kill_switch::run(&ctx, args)?,
        Command::Quota(args) => commands::quota::run(&ctx, args)?,
        Command::Call(args) => commands::call::run(&ctx, args)?,
        Command::List(args) => commands::list::run(&ctx, args)?,
        Command::Inbox(args) => commands::list::inbox(&ctx, args)?,
        Command::Verify(args) => commands::verify::run(&ctx, args)?,
        Command::Wait(args) => commands::wait::run(&ctx, args)?,
        Command::Events(args) => commands::events::run(&ctx, args)?,
        Command::Ledger(args) => commands::ledger::run(&ctx, args)?,
        // Answered above.
        Command::Completions { .. } | Command::Mcp(_) => Answer::streamed(0),
    };
    ctx.out.emit(&answer);
    Ok(answer.status)
}
