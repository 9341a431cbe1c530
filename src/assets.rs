//! Completion scripts and man pages, generated from the clap definition.
//! Committed copies live in `completions/` and `man/`; `tests/cli/generated.rs`
//! fails when they differ from what this generates, and rewrites them with
//! `REGENERATE=1 cargo test --test generated`.

use crate::cli::Cli;
use clap::CommandFactory;
use clap_complete::Shell;

pub const SHELLS: [Shell; 5] = [
    Shell::Bash,
    Shell::Zsh,
    Shell::Fish,
    Shell::Elvish,
    Shell::PowerShell,
];

/// The command-line definition as documented: every command in full (a
/// run builds only the one it runs), and no `help` command, for which no
/// page exists to refer to (`--help` serves).
pub fn command() -> clap::Command {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    command
}

/// The completion script for `shell`: it registers completion that asks
/// `discuss` itself at each Tab (`src/complete.rs`).
pub fn completion(shell: Shell) -> Vec<u8> {
    crate::complete::registration(shell)
}

/// The file name of a committed completion script.
pub fn completion_file(shell: Shell) -> &'static str {
    match shell {
        Shell::Bash => "discuss.bash",
        Shell::Zsh => "_discuss",
        Shell::Fish => "discuss.fish",
        Shell::Elvish => "discuss.elv",
        _ => "_discuss.ps1",
    }
}

/// One man page per command: `discuss.1`, `discuss-ask.1`,
/// `discuss-fleet-add.1`, …
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    let mut pages = Vec::new();
    collect(&command(), "discuss", &mut pages);
    pages
}

fn collect(command: &clap::Command, name: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let renamed = command
        .clone()
        .name(name.to_owned())
        .bin_name(name.replace('-', " "));
    let man = clap_mangen::Man::new(renamed.clone());
    let mut page = Vec::new();
    // clap_mangen's sections but its "EXTRA" one, which fills and
    // justifies the examples: they get a section of their own below.
    let rendered = man
        .render_title(&mut page)
        .and_then(|()| man.render_name_section(&mut page))
        .and_then(|()| man.render_synopsis_section(&mut page))
        .and_then(|()| man.render_description_section(&mut page))
        .and_then(|()| man.render_options_section(&mut page))
        .and_then(|()| {
            if renamed.has_subcommands() {
                man.render_subcommands_section(&mut page)
            } else {
                Ok(())
            }
        });
    rendered.expect("rendering to memory cannot fail");
    if let Some(examples) = renamed.get_after_help() {
        page.extend(examples_section(&examples.to_string()).into_bytes());
    }
    if name == "discuss" || name == "discuss-wake" || name == "discuss-ask" {
        page.extend(SUPERVISION.as_bytes());
    }
    page.extend(EXIT_STATUS.as_bytes());
    page.extend(ENVIRONMENT.as_bytes());
    man.render_version_section(&mut page)
        .expect("rendering to memory cannot fail");
    pages.push((format!("{name}.1"), page));
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        collect(sub, &format!("{name}-{}", sub.get_name()), pages);
    }
}

/// The examples of `after_help`, verbatim: no filling, no justification,
/// no hyphenation, so every line can be copied into a shell.
fn examples_section(text: &str) -> String {
    let body = text
        .lines()
        .filter(|line| !line.trim_end().ends_with(':') || line.starts_with(' '))
        .map(|line| roff_escape(line.trim_start()))
        .collect::<Vec<_>>()
        .join("\n");
    format!(".SH EXAMPLES\n.nf\n.nh\n{body}\n.hy\n.fi\n")
}

/// Escapes what roff would read as markup: backslashes, and a leading `.`
/// or `'` that would start a request.
fn roff_escape(line: &str) -> String {
    let line = line.replace('\\', "\\e").replace('-', "\\-");
    if line.starts_with('.') || line.starts_with('\'') {
        format!("\\&{line}")
    } else {
        line
    }
}

const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
0
success
.TP
1
internal or I/O error (io_error, ledger_unreadable, ledger_unavailable: a database that cannot be reached, network_filesystem, internal)
.TP
2
usage error
.TP
3
invalid input (invalid_argument, invalid_id, out_of_range, payload_not_json, payload_too_large, same_agent, group_not_supported, unknown_field, agent_mismatch)
.TP
4
not found (unknown_fleet, not_in_fleet, unknown_discussion, unknown_attempt, ambiguous_id)
.TP
5
conflict with the current state (stale_head, turn_already_active, not_recipient, not_attempt_agent, attempt_not_live, discussion_terminal, idempotency_conflict)
.TP
6
refused by policy (wake_quota_exceeded, kill_switch_engaged)
.TP
7
integrity (verify found problems; discussion_invalid)
.TP
8
a supervised attempt failed
.TP
9
a supervised attempt hit its deadline (deadman)
.TP
10
wait did not see the status (wait_timeout, status_unreachable)
"#;

const ENVIRONMENT: &str = r#".SH ENVIRONMENT
.TP
DISCUSS_LEDGER
the ledger file (as \-\-ledger)
.TP
DISCUSS_ACTOR
recorded as by on every record (as \-\-actor; else the OS user name)
.TP
DISCUSS_NOW
RFC 3339 time or epoch milliseconds at which the clock starts, for tests and demos
.TP
DISCUSS_ALLOW_NETWORK_FS
open a ledger on a network filesystem (as \-\-allow\-network\-fs)
.TP
NO_COLOR
turns colour off (as \-\-color never)
.TP
DISCUSS_COMPLETE
set by the completion scripts (discuss completions SHELL) to ask for the candidates of a Tab
.TP
DISCUSS_AGENT_ID, DISCUSS_DISCUSSION_ID, DISCUSS_ATTEMPT_ID, DISCUSS_REPLY_TO
defaults of reply's \-\-agent, \-\-discussion, \-\-attempt, \-\-reply\-to; set for a supervised child
.TP
DISCUSS_TURN, DISCUSS_DEADLINE_AT
set for a supervised child: its turn and its deadline (RFC 3339)
"#;

const SUPERVISION: &str = r#".SH SUPERVISION
With a command after \-\-, wake (and ask \-\-wake\-peer) run it for exactly one turn.
The child gets DISCUSS_LEDGER, DISCUSS_DISCUSSION_ID, DISCUSS_ATTEMPT_ID,
DISCUSS_AGENT_ID, DISCUSS_REPLY_TO, DISCUSS_TURN and DISCUSS_DEADLINE_AT, and the
head message's body as JSON on stdin; its stdout and stderr go to stderr.
At the deadline its whole process group gets SIGTERM, then SIGKILL after
\-\-kill\-grace\-ms, and deadman is recorded. If the supervisor itself dies, a
guardian process kills the group (a process that leaves the group with setsid is
out of its reach). A child that exits without a reply is failed
(exited_without_reply); one that cannot start is failed (spawn_failed); an engaged
kill\-switch kills it (kill_switch). Nothing is retried. \-\-clean\-env starts it
with only PATH, HOME, LANG, TERM, DISCUSS_* and each \-\-env NAME.
Exit status: 0 completed, 8 failed, 9 deadman.
"#;
