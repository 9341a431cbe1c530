//! The process edge: `run(args)` parses the arguments, runs the one
//! command they name and turns the outcome into an exit status. Whether
//! the answer is JSON, how a closed stdout ends the process and what an
//! error prints are decided here, once. `main.rs` only calls `run` with
//! the process's arguments, so the whole program runs in-process too.

use crate::cli::{Cli, Command};
use crate::commands::{self, Context};
use crate::error::{Error, Result};
use crate::output::{Answer, ColorChoice, Output};
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::process::ExitCode;

/// Runs `discuss` with these arguments (the program's name first);
/// returns the exit status.
pub fn run(args: impl IntoIterator<Item = impl Into<OsString>>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    ExitCode::from(status_of(&args))
}

fn status_of(args: &[OsString]) -> u8 {
    // A Tab in a shell (`DISCUSS_COMPLETE=bash discuss -- ...`): answered
    // before anything else, and nothing more is done.
    if answer_completion_if_asked(args) {
        return 0;
    }
    if args.len() == 1 {
        // Bare `discuss`: the help, as a first step, not an error.
        let help = Cli::command().render_help().to_string();
        let out = Output::new(false, ColorChoice::Never);
        return finish(&out, out.print_text(&format!("{help}\n")).map(|()| 0));
    }
    // The supervisor's guardian is this binary too (see supervisor::guardian);
    // it is not a command and never reaches clap.
    if args
        .get(1)
        .is_some_and(|a| a == crate::supervisor::guardian::ARG)
    {
        return crate::supervisor::guardian::run();
    }
    let parsed = Cli::command()
        .try_get_matches_from(args)
        .and_then(|matches| {
            let name = matches.subcommand_name().unwrap_or_default().to_owned();
            Ok((Cli::from_arg_matches(&matches)?, name))
        });
    let (cli, name) = match parsed {
        Ok(parsed) => parsed,
        Err(err) if !err.use_stderr() => {
            // --help and --version
            let _ = err.print();
            return 0;
        }
        Err(err) => {
            let json = wants_json(args);
            let out = Output::new(json, ColorChoice::Never);
            return finish(&out, Err(usage_error(&err, args)));
        }
    };
    if crate::cli::does_bulk_work(&name) {
        crate::allocator::for_bulk_work();
    }
    let out = Output::new(cli.global.json, cli.global.color);
    let out = if crate::cli::always_json(&name) {
        out.as_json()
    } else {
        out
    };
    let outcome = dispatch(&cli, &out);
    let status = finish(&out, outcome);
    crate::traces::finish();
    status
}

/// The exit status of an outcome, its error shown first. A closed stdout
/// ends the run quietly with success, whatever error it surfaced as: the
/// reader has what it wanted, and every write to the ledger is done by the
/// time anything is printed.
fn finish(out: &Output, outcome: Result<u8>) -> u8 {
    match outcome {
        Ok(status) => status,
        Err(_) if crate::output::stdout_closed() => 0,
        Err(err) => {
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
    if let Some(hint) = missing_from_environment(err, meant) {
        error = error.hint(hint);
    }
    error.hint(format!(
        "`{} --help` explains every option",
        meant.get_bin_name().unwrap_or("discuss")
    ))
}

/// For required options that an environment variable can give (`reply`'s
/// ids, which a supervised turn sets): which variables, and where they
/// come from, so a missing `--attempt` reads as what it is.
fn missing_from_environment(err: &clap::Error, meant: &clap::Command) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    if err.kind() != clap::error::ErrorKind::MissingRequiredArgument {
        return None;
    }
    let Some(ContextValue::Strings(missing)) = err.get(ContextKind::InvalidArg) else {
        return None;
    };
    let variables: Vec<String> = missing
        .iter()
        .filter_map(|shown| {
            let long = shown.trim_start_matches("--").split([' ', '=']).next()?;
            let arg = meant.get_arguments().find(|a| a.get_long() == Some(long))?;
            let variable = arg.get_env()?.to_string_lossy();
            Some(format!("{variable} (--{long})"))
        })
        .collect();
    if variables.is_empty() {
        return None;
    }
    let them = if variables.len() == 1 { "it" } else { "them" };
    Some(format!(
        "a supervised turn (`discuss wake ... -- CMD`) sets {}; outside one, give {them}: `discuss wake` prints the attempt, `discuss inbox --agent A` shows live_attempt_id",
        variables.join(", ")
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
/// `--json` anywhere before `--`, or a command that always answers JSON.
fn wants_json(args: &[OsString]) -> bool {
    let before_dashes = args.iter().skip(1).take_while(|a| *a != "--");
    let mut positional = before_dashes
        .clone()
        .filter(|a| !a.to_string_lossy().starts_with('-'));
    before_dashes.clone().any(|a| a == "--json")
        || positional
            .next()
            .is_some_and(|a| crate::cli::always_json(&a.to_string_lossy()))
}

/// Answers a completion request when `DISCUSS_COMPLETE` names a shell
/// (true: answered); false at once otherwise.
fn answer_completion_if_asked(args: &[OsString]) -> bool {
    let current_dir = std::env::current_dir().ok();
    clap_complete::CompleteEnv::with_factory(Cli::command)
        .var(crate::complete::VAR)
        .bin("discuss")
        .completer("discuss")
        .try_complete(args.iter().cloned(), current_dir.as_deref())
        .unwrap_or(true)
}

/// Runs the parsed command and shows its answer through the output
/// layer; the exit status on success.
fn dispatch(cli: &Cli, out: &Output) -> Result<u8> {
    if let Command::Completions { shell } = &cli.command {
        // Needs no ledger.
        let script = crate::assets::completion(*shell);
        out.print_text(&String::from_utf8_lossy(&script))?;
        return Ok(0);
    }
    let ctx = Context {
        session: cli.global.session()?,
        out: out.clone(),
    };
    let answer = match &cli.command {
        Command::Fleet(args) => commands::fleet::run(&ctx, args)?,
        Command::Ask(args) => traced_write("ask_peer", None, || commands::ask::run(&ctx, args))?,
        Command::Wake(args) => traced_write("wake_agent", Some(&args.discussion), || {
            commands::wake::run(&ctx, args)
        })?,
        Command::Reply(args) => traced_write("reply_discussion", Some(&args.discussion), || {
            commands::reply::run(&ctx, args)
        })?,
        Command::Turn(args) => commands::turn::run(&ctx, args)?,
        Command::Show(args) => commands::show::run(&ctx, args)?,
        Command::KillSwitch(args) => commands::kill_switch::run(&ctx, args)?,
        Command::Quota(args) => commands::quota::run(&ctx, args)?,
        Command::Gate(args) => commands::gate::run(&ctx, args)?,
        Command::Approve(args) => commands::gate::approve(&ctx, args)?,
        Command::Deny(args) => commands::gate::deny(&ctx, args)?,
        Command::Approvals(args) => commands::gate::list(&ctx, args)?,
        Command::Call(args) => commands::call::run(&ctx, args)?,
        Command::List(args) => commands::list::run(&ctx, args)?,
        Command::Search(args) => commands::search::run(&ctx, args)?,
        Command::Top(args) => commands::top::run(&ctx, args)?,
        Command::Inbox(args) => commands::list::inbox(&ctx, args)?,
        Command::Verify(args) => commands::verify::run(&ctx, args)?,
        Command::Wait(args) => commands::wait::run(&ctx, args)?,
        Command::Events(args) => commands::events::run(&ctx, args)?,
        Command::Escalations(args) => commands::escalations::run(&ctx, args)?,
        Command::Ledger(args) => commands::ledger::run(&ctx, args)?,
        Command::Token(args) => commands::token::run(&ctx, args)?,
        // Answers go out as MCP messages; the session ends the process.
        Command::Mcp(args) => return commands::mcp::run(ctx, args),
        Command::Serve(args) => return commands::serve::run(ctx, args),
        Command::Completions { .. } => Answer::streamed(0),
    };
    ctx.out.emit(&answer)?;
    Ok(answer.status)
}

/// A write command in a span named for its tool (`docs/traces.md`), its
/// parent `TRACEPARENT`; a supervised turn's span goes under it.
fn traced_write(
    tool: &str,
    discussion: Option<&str>,
    write: impl FnOnce() -> Result<Answer>,
) -> Result<Answer> {
    let span = crate::traces::start(
        tool,
        opentelemetry::trace::SpanKind::Internal,
        crate::traces::Parent::Inherited,
    );
    let entered = span.enter();
    let answer = write();
    drop(entered);
    if span.is_on() {
        let told = match &answer {
            Ok(answer) => Ok(answer
                .view
                .as_ref()
                .map(|view| view.value())
                .unwrap_or_default()),
            Err(err) => Err(err.clone()),
        };
        crate::traces::outcome(&span, discussion, &told);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_program_runs_in_process() {
        assert_eq!(status_of(&args(&["discuss", "frobnicate"])), 2);
        assert_eq!(status_of(&args(&["discuss", "show"])), 2);
        assert_eq!(status_of(&args(&["discuss", "--version"])), 0);
    }

    #[test]
    fn commands_made_for_programs_answer_usage_errors_as_json() {
        assert!(wants_json(&args(&["discuss", "call", "--bogus"])));
        assert!(wants_json(&args(&["discuss", "mcp", "--bogus"])));
        assert!(wants_json(&args(&["discuss", "list", "--json", "--bogus"])));
        assert!(!wants_json(&args(&["discuss", "list", "--bogus"])));
        assert!(!wants_json(&args(&["discuss", "list", "--", "--json"])));
    }
}
