//! The global options (`--ledger`, `--actor`, `--allow-network-fs`,
//! `--json`, `--color` and their variables), and the one place where they
//! become a session. Apart from `cli`, so that shell completion, which
//! the commands' arguments name, reads them without a cycle.

use crate::output::ColorChoice;
use clap::Args;
use std::path::PathBuf;

// The options every command takes, listed after the command's own.
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
