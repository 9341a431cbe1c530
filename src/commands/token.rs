//! `discuss token issue AGENT [--operator] [--expires-in-hours N] | revoke
//! TOKEN_ID | list`: the bearer tokens of `discuss serve`.

use super::Context;
use crate::credentials::{self, MAX_EXPIRES_IN_HOURS, TOKEN_ID};
use crate::discussion::envelope::check_range;
use crate::engine::plan_token_issue;
use crate::error::{Error, ErrorCode, Result};
use crate::output::{Answer, At, TokenIssuedView, TokensView};
use crate::record::Role;
use clap::{Args, Subcommand};

// Tokens for `discuss serve`: an agent token acts as exactly one agent,
// an operator token acts for the operator. The ledger keeps only each
// token's SHA-256 digest.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  TOKEN=$(discuss token issue agent-b --expires-in-hours 720)\n  \
    discuss token issue ops --operator --no-expiry\n  \
    discuss token list\n  discuss token revoke tok_…"
)]
pub(crate) struct TokenArgs {
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum TokenCommand {
    /// Issue a token and print it, this once (stdout)
    Issue {
        /// The agent the token acts as (for --operator: who holds it)
        #[arg(value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
        agent: String,
        /// Act for the operator: fleets, quotas, the kill-switch, and
        /// reading every discussion
        #[arg(long)]
        operator: bool,
        /// Expire after this many hours (1 to 87600; default 2160, 90 days)
        #[arg(
            long,
            value_name = "N",
            allow_negative_numbers = true,
            conflicts_with = "no_expiry"
        )]
        expires_in_hours: Option<i64>,
        /// Never expire (until revoked)
        #[arg(long)]
        no_expiry: bool,
        /// Issue an agent token for an agent that is in no fleet (a typo
        /// must not mint a working credential, so this is refused without it)
        #[arg(long)]
        allow_unknown_agent: bool,
    },
    /// Revoke a token: the next request with it is refused
    Revoke {
        /// The token's id (tok_…) as `token list` shows it, or a unique
        /// start of it (tok_ and four characters at least)
        #[arg(value_name = "TOKEN_ID")]
        token_id: String,
    },
    /// Every token's id, agent, role, expiry and state (never a token)
    List,
}

pub(crate) fn run(ctx: &Context, args: &TokenArgs) -> Result<Answer> {
    match &args.command {
        TokenCommand::Issue {
            agent,
            operator,
            expires_in_hours,
            no_expiry,
            allow_unknown_agent,
        } => {
            crate::ids::check_name("agent_id", agent)?;
            if let Some(hours) = expires_in_hours {
                check_range("expires_in_hours", *hours, (1, MAX_EXPIRES_IN_HOURS))?;
            }
            let expires_in_hours = match (expires_in_hours, no_expiry) {
                (_, true) => None,
                (Some(hours), false) => Some(*hours),
                (None, false) => Some(credentials::DEFAULT_EXPIRES_IN_HOURS),
            };
            // An operator token names who holds it, not an agent of a fleet.
            let must_be_known = !*operator && !*allow_unknown_agent;
            let role = if *operator {
                Role::Operator
            } else {
                Role::Agent
            };
            let token = credentials::new_token()?;
            let token_id = crate::ids::new_id(TOKEN_ID);
            let view = ctx.ledger.append_global(|view| {
                let stamp = ctx.stamp(view.last_at_ms());
                if must_be_known {
                    let global = view.global(stamp.at_ms);
                    if !global
                        .fleets
                        .values()
                        .any(|members| members.contains(agent))
                    {
                        return Err(Error::new(
                            ErrorCode::NotInFleet,
                            format!("{agent} is in no fleet: no agent token is issued for it"),
                        )
                        .detail("agent_id", agent.as_str())
                        .hint(format!(
                            "check the name (discuss fleet list), add it first \
                             (discuss fleet add FLEET {agent}), or give --allow-unknown-agent"
                        )));
                    }
                }
                let expires_ms = expires_in_hours.map(|h| stamp.at_ms + h * 3_600_000);
                let records = plan_token_issue(
                    &token_id,
                    agent,
                    role,
                    credentials::digest(&token),
                    expires_ms,
                    &stamp,
                );
                let view = TokenIssuedView {
                    token: token.clone(),
                    token_id: token_id.clone(),
                    agent_id: agent.clone(),
                    role: role.as_str(),
                    expires_at: expires_ms.map(At),
                };
                Ok((records, view))
            })?;
            if !ctx.out.json {
                ctx.out.note(&view.described());
            }
            Ok(Answer::new(view))
        }
        TokenCommand::Revoke { token_id } => {
            let (global, now, whole) = crate::operations::admin::revoke_token(ctx, token_id)?;
            Ok(Answer::new(TokensView::of(&global, now, Some(&whole))))
        }
        TokenCommand::List => {
            let view = ctx.ledger.view(&[])?;
            let now = ctx.now(view.last_at_ms());
            Ok(Answer::new(TokensView::of(&view.global(now), now, None)))
        }
    }
}
