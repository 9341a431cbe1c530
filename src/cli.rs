//! The command-line definition. Doc comments here are the help text.

use crate::commands::{
    ask::AskArgs,
    call::CallArgs,
    escalations::EscalationsArgs,
    events::EventsArgs,
    fleet::FleetArgs,
    gate::{ApprovalsArgs, ApproveArgs, DenyArgs, GateArgs},
    kill_switch::KillSwitchArgs,
    ledger::LedgerArgs,
    list::{InboxArgs, ListArgs},
    mcp::McpArgs,
    quota::QuotaArgs,
    reply::ReplyArgs,
    search::SearchArgs,
    serve::ServeArgs,
    show::ShowArgs,
    token::TokenArgs,
    top::TopArgs,
    turn::TurnArgs,
    verify::VerifyArgs,
    wait::WaitArgs,
    wake::WakeArgs,
};
use crate::options::GlobalArgs;
use clap::{Parser, Subcommand};

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

/// The commands made for programs: their answers and their errors are
/// JSON whatever `--json` says (`call` prints the tool's object; `mcp`
/// speaks the protocol on stdout and says errors on stderr as JSON).
const ALWAYS_JSON: [&str; 2] = ["call", "mcp"];

/// Whether the command named `name` always answers JSON.
pub(crate) fn always_json(name: &str) -> bool {
    ALWAYS_JSON.contains(&name)
}

/// The commands whose work is over much of the ledger, or long: they
/// allocate with mimalloc from the start (`allocator.rs`). Any other
/// switches to it when it reads a long stretch (a rebuild of the cache).
const BULK: [&str; 7] = [
    "verify",
    "events",
    "list",
    "ledger",
    "escalations",
    "mcp",
    "serve",
];

/// Whether the command named `name` does bulk work.
pub(crate) fn does_bulk_work(name: &str) -> bool {
    BULK.contains(&name)
}

#[derive(Debug, Subcommand)]
// Only the subcommand that runs is built (its arguments, and so on down:
// every nested command enum defers too), which takes a third off a
// command's start (docs/performance.md).
#[command(defer = true)]
pub(crate) enum Command {
    /// Register agents in fleets, remove them, list fleets
    Fleet(FleetArgs),
    /// Start a discussion: the root message from one agent to its peer
    Ask(AskArgs),
    /// Reserve one budgeted turn for the recipient of the head
    Wake(WakeArgs),
    /// Answer within a reserved turn (a question or a result)
    Reply(ReplyArgs),
    /// The turn reserved for an agent in a live session, and how to
    /// answer it; the first call records the pickup
    Turn(TurnArgs),
    /// Show the derived state of a discussion
    Show(ShowArgs),
    /// Engage, release or read halts: the global one, a fleet's, an
    /// agent's or a discussion's
    #[command(name = "kill-switch")]
    KillSwitch(KillSwitchArgs),
    /// Set or show hourly wake quotas and spend caps
    Quota(QuotaArgs),
    /// Set, clear or list approval gates: a person says yes before a
    /// costly or sensitive turn is reserved
    Gate(GateArgs),
    /// Grant a pending approval request (one reservation of its head)
    Approve(ApproveArgs),
    /// Deny a pending approval request (a reason is required)
    Deny(DenyArgs),
    /// The approval requests that wait for a person (reads only)
    Approvals(ApprovalsArgs),
    /// Take a tool's request object (ask_peer, wake_agent,
    /// reply_discussion, get_discussion, list_discussions, inbox) and
    /// answer JSON
    Call(CallArgs),
    /// List discussions, newest first
    List(ListArgs),
    /// Find messages by their words, newest first (reads only)
    Search(SearchArgs),
    /// The operator's live terminal view: what needs a person, live turns,
    /// halts, counts, spend; keys halt, release, grant and deny
    Top(TopArgs),
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
    /// List escalations and whether a person heard of them; deliver them
    /// to a command
    Escalations(EscalationsArgs),
    /// Export, import or describe the ledger (a file or PostgreSQL)
    Ledger(LedgerArgs),
    /// Serve the tools (ask_peer, wake_agent, reply_discussion,
    /// get_discussion, list_discussions, inbox) over MCP on stdio
    Mcp(McpArgs),
    /// Serve the tools over HTTP (MCP streamable HTTP, /v1/…) with
    /// per-agent bearer tokens
    Serve(ServeArgs),
    /// Issue, revoke or list the bearer tokens of `discuss serve`
    Token(TokenArgs),
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
