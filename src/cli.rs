//! The command-line definition. Doc comments here are the help text.

use crate::commands::{
    ask::AskArgs,
    call::CallArgs,
    events::EventsArgs,
    fleet::FleetArgs,
    kill_switch::KillSwitchArgs,
    ledger::LedgerArgs,
    list::{InboxArgs, ListArgs},
    mcp::McpArgs,
    quota::QuotaArgs,
    reply::ReplyArgs,
    show::ShowArgs,
    verify::VerifyArgs,
    wait::WaitArgs,
    wake::WakeArgs,
};
use crate::output::ColorChoice;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Bounded two-agent discussions between AI agents, on an append-only ledger.
///
/// A message never starts an agent: `ask` records a question, `wake`
/// explicitly reserves one budgeted turn for the recipient, `reply` answers
/// within that turn, and `show` derives the state by replaying the ledger.
#[derive(Debug, Parser)]
#[command(
    name = "discuss",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(
    after_help = "Example:\n  discuss fleet add fleet-alpha agent-a agent-b\n  \
    discuss ask --from agent-a --to agent-b --fleet fleet-alpha \\\n    \
    --payload '{\"body\":\"Refactor auth module?\"}'"
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The options every command takes, listed after the command's own.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalArgs {
    /// The ledger: a file (created on first write) or a PostgreSQL
    /// database given as a postgresql:// URL
    /// [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]
    #[arg(long, global = true, env = "DISCUSS_LEDGER", value_name = "PATH|URL")]
    pub ledger: Option<PathBuf>,

    /// Print exactly one JSON object on stdout (errors: one on stderr)
    #[arg(long, global = true)]
    pub json: bool,

    /// Recorded as `by` on every record written [default: the OS user name]
    #[arg(long, global = true, env = "DISCUSS_ACTOR", value_name = "NAME")]
    pub actor: Option<String>,

    /// Open a ledger on a network filesystem (NFS, SMB...) although its
    /// locks and appends are not reliable there
    #[arg(
        long,
        global = true,
        env = "DISCUSS_ALLOW_NETWORK_FS",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub allow_network_fs: bool,

    /// When to colour output (never with --json; NO_COLOR turns auto off)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

impl GlobalArgs {
    /// The session these options name: the one place where `--ledger`,
    /// `--actor` and `--allow-network-fs` (or their variables) become a
    /// ledger, a clock and an actor.
    pub(crate) fn session(&self) -> crate::error::Result<crate::session::Session> {
        crate::session::Session::new(
            self.ledger.as_deref(),
            self.actor.as_deref(),
            self.allow_network_fs,
            crate::operations::lists::summarize,
        )
    }

    /// The options as the environment alone gives them (`DISCUSS_LEDGER`,
    /// `DISCUSS_ACTOR`, `DISCUSS_ALLOW_NETWORK_FS`), read by clap with the
    /// very parsers of the command line: for shell completion, which sees
    /// no options typed on the line.
    pub(crate) fn from_environment() -> Option<GlobalArgs> {
        let command = GlobalArgs::augment_args(clap::Command::new("discuss"));
        let matches = command.try_get_matches_from(["discuss"]).ok()?;
        <GlobalArgs as clap::FromArgMatches>::from_arg_matches(&matches).ok()
    }
}

/// The commands made for programs: their answers and their errors are
/// JSON whatever `--json` says (`call` prints the tool's object; `mcp`
/// speaks the protocol on stdout and says errors on stderr as JSON).
const ALWAYS_JSON: [&str; 2] = ["call", "mcp"];

/// Whether the command named `name` always answers JSON.
pub(crate) fn always_json(name: &str) -> bool {
    ALWAYS_JSON.contains(&name)
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Register agents in fleets, remove them, list fleets
    Fleet(FleetArgs),
    /// Start a discussion: the root message from one agent to its peer
    Ask(AskArgs),
    /// Reserve one budgeted turn for the recipient of the head
    Wake(WakeArgs),
    /// Answer within a reserved turn (a question or a result)
    Reply(ReplyArgs),
    /// Show the derived state of a discussion
    Show(ShowArgs),
    /// Engage, release or read the global kill-switch
    #[command(name = "kill-switch")]
    KillSwitch(KillSwitchArgs),
    /// Set or show hourly wake quotas
    Quota(QuotaArgs),
    /// Take a tool's request object (ask_peer, wake_agent,
    /// reply_discussion, get_discussion, list_discussions, inbox) and
    /// answer JSON
    Call(CallArgs),
    /// List discussions, newest first
    List(ListArgs),
    /// What waits for an agent: open discussions whose head is addressed
    /// to it, and its live turn (reads only)
    Inbox(InboxArgs),
    /// Replay the whole ledger and report problems (exit 7 when any)
    Verify(VerifyArgs),
    /// Wait until a discussion reaches a status (exit 10 on timeout)
    Wait(WaitArgs),
    /// The ledger's records in order with each one's discussion status;
    /// --follow keeps watching (reads only)
    Events(EventsArgs),
    /// Export, import or describe the ledger (a file or PostgreSQL)
    Ledger(LedgerArgs),
    /// Serve the tools (ask_peer, wake_agent, reply_discussion,
    /// get_discussion, list_discussions, inbox) over MCP on stdio
    Mcp(McpArgs),
    /// Print a completion script
    #[command(
        after_help = "Example:\n  discuss completions bash > ~/.local/share/bash-completion/completions/discuss"
    )]
    Completions {
        /// bash, zsh, fish, elvish or powershell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}
