//! `discuss turn`: the turn reserved for an agent that lives in a session
//! (a terminal, a hook, an MCP host), with the head it answers and the
//! exact reply command; the first call records the pickup.

use super::Context;
use crate::error::{Error, ErrorCode, Result};
use crate::live::hook::{self, HookEvent};
use crate::operations::live::{Turn, live_turn_of, reply_argv, take_turn};
use crate::output::{Answer, HookView, TurnView};
use clap::{Args, ValueEnum};
use std::time::Duration;

// The turn reserved for AGENT: the discussion, the attempt, the head
// message and the `discuss reply` command that answers it. The first call
// records that the session picked the turn up.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  discuss turn --agent agent-b\n  \
    discuss turn --agent agent-b --wait-ms 60000\n  \
    discuss turn --hook claude-code < event.json")]
pub(crate) struct TurnArgs {
    /// The agent whose turn it is
    #[arg(long, env = "DISCUSS_AGENT_ID", value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: Option<String>,
    /// Wait up to this many ms for a turn to be reserved (exit 10 when
    /// none came)
    #[arg(long, value_name = "N")]
    pub wait_ms: Option<u64>,
    /// Answer an agent CLI's hook event (JSON on stdin) in its protocol;
    /// exit 0 always
    #[arg(long, value_name = "HOST")]
    pub hook: Option<HookHost>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum HookHost {
    #[value(name = "claude-code")]
    ClaudeCode,
}

/// At most ten minutes of waiting, as `wait` allows an hour: a session
/// that wants longer asks again.
const MOST_WAIT_MS: u64 = 600_000;

pub(crate) fn run(ctx: &Context, args: &TurnArgs) -> Result<Answer> {
    if args.hook.is_some() {
        return Ok(hook_answer(ctx, args));
    }
    let agent = agent_of(args)?;
    let wait = wait_of(args)?;
    let turn = take_turn(ctx, &agent, wait, false)?;
    let reply_argv = reply_argv(ctx, &turn);
    Ok(Answer::new(TurnView { turn, reply_argv }))
}

fn agent_of(args: &TurnArgs) -> Result<String> {
    let agent = args.agent.clone().ok_or_else(|| {
        Error::new(ErrorCode::InvalidArgument, "whose turn? --agent is missing")
            .detail("field", "agent")
            .hint("give --agent AGENT, or set DISCUSS_AGENT_ID in the session")
    })?;
    crate::ids::check_name("agent_id", &agent)?;
    Ok(agent)
}

fn wait_of(args: &TurnArgs) -> Result<Option<Duration>> {
    match args.wait_ms {
        None => Ok(None),
        Some(ms) => {
            crate::discussion::envelope::check_range(
                "wait_ms",
                ms as i64,
                (0, MOST_WAIT_MS as i64),
            )?;
            Ok(Some(Duration::from_millis(ms)))
        }
    }
}

/// The hook's answer, never an error: a hook must not break its session
/// (what went wrong is one line on stderr, nothing on stdout).
fn hook_answer(ctx: &Context, args: &TurnArgs) -> Answer {
    match hook_reply(ctx, args) {
        Ok(Some(answer)) => Answer::new(HookView(answer)),
        Ok(None) => Answer::streamed(0),
        Err(why) => {
            say!("discuss turn --hook: {why}");
            Answer::streamed(0)
        }
    }
}

fn hook_reply(
    ctx: &Context,
    args: &TurnArgs,
) -> std::result::Result<Option<serde_json::Value>, String> {
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut input)
        .map_err(|e| format!("stdin could not be read: {e}"))?;
    let event = hook::parse(&input)?;
    if event == HookEvent::Other {
        return Ok(None);
    }
    let agent = agent_of(args).map_err(|e| e.message)?;
    let wait = wait_of(args).map_err(|e| e.message)?;
    // Already continuing for a turn it picked up: not named again, or
    // the agent would never stop.
    if event == (HookEvent::Stop { active: true })
        && let Some((discussion_id, attempt_id)) =
            live_turn_of(ctx, &agent).map_err(|e| e.message)?
    {
        let (discussion, _) =
            crate::operations::read::load(ctx, &discussion_id).map_err(|e| e.message)?;
        if discussion
            .attempt(&attempt_id)
            .is_some_and(|a| a.picked_up_at_ms.is_some())
        {
            return Ok(None);
        }
    }
    let turn = match take_turn(ctx, &agent, wait, true) {
        Ok(turn) => turn,
        Err(err) if err.code == ErrorCode::NoLiveTurn => return Ok(None),
        Err(err) => return Err(err.message),
    };
    let text = told(ctx, &turn);
    Ok(Some(match event {
        HookEvent::Context(name) => hook::context(&name, &text),
        _ => hook::block(&text),
    }))
}

/// What the agent is told: the pointer, how to read the turn and how to
/// answer it.
fn told(ctx: &Context, turn: &Turn) -> String {
    let view = TurnView {
        turn: turn.clone(),
        reply_argv: reply_argv(ctx, turn),
    };
    let pointer = crate::live::Pointer::default().render(&turn.discussion.id, &turn.attempt);
    format!(
        "{pointer}. Read it with `discuss turn --agent {}` (the message, and the command that answers it); \
         answer with a JSON body on stdin: {}",
        turn.attempt.agent_id,
        view.reply_line()
    )
}
