//! Validated requests. Everything that needs no ledger is checked here,
//! before the lock is taken.

use crate::discussion::{Envelope, MessageType, Policy, envelope::parse_body};
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use crate::spend::Usage;
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct AskRequest {
    pub from: String,
    pub to: String,
    pub fleet: String,
    pub policy: Policy,
    pub wake_peer: bool,
    pub discussion_id: String,
    /// The serialized root envelope, within the size limit.
    pub envelope: String,
    /// What the request asks for (`idempotency::digest`).
    pub digest: String,
}

impl AskRequest {
    /// `to` holds every recipient given: more than one is a group.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        from: &str,
        to: &[String],
        fleet: &str,
        payload: &str,
        max_turns: i64,
        timeout_ms: i64,
        turn_timeout_ms: i64,
        wake_peer: bool,
    ) -> Result<AskRequest> {
        let recipients: Vec<&str> = to
            .iter()
            .flat_map(|t| t.split(','))
            .map(str::trim)
            .collect();
        if recipients.len() != 1 {
            return Err(Error::new(
                ErrorCode::GroupNotSupported,
                format!(
                    "a discussion has exactly two agents; got {} recipients",
                    recipients.len()
                ),
            )
            .detail(
                "to_agent_ids",
                recipients.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
            .hint("ask each peer in a discussion of its own"));
        }
        let to = recipients[0];
        ids::check_name("from_agent_id", from)?;
        ids::check_name("to_agent_id", to)?;
        ids::check_name("fleet_id", fleet)?;
        if from == to {
            return Err(
                Error::new(ErrorCode::SameAgent, format!("{from} cannot ask itself"))
                    .detail("agent_id", from)
                    .hint("a discussion is between two distinct agents"),
            );
        }
        let policy = Policy::new(max_turns, timeout_ms, turn_timeout_ms)?;
        let body = parse_body(payload)?;
        let digest = super::idempotency::digest(&[
            "ask",
            from,
            to,
            fleet,
            &body.to_string(),
            &policy.max_turns.to_string(),
            &policy.timeout_ms.to_string(),
            &policy.turn_timeout_ms.to_string(),
            if wake_peer { "wake_peer" } else { "" },
        ]);
        let discussion_id = ids::new_id(ids::DISCUSSION);
        let envelope = Envelope::root(&discussion_id, policy, body).to_payload()?;
        Ok(AskRequest {
            from: from.into(),
            to: to.into(),
            fleet: fleet.into(),
            policy,
            wake_peer,
            discussion_id,
            envelope,
            digest,
        })
    }

    /// The request with spend budgets in its policy (`--max-tokens`,
    /// `--max-cost-usd`; text or a JSON number for the cost). A request
    /// without them is written, and retried, as before.
    pub fn with_budgets(
        mut self,
        max_tokens: Option<&Value>,
        max_cost_usd: Option<&Value>,
    ) -> Result<AskRequest> {
        if max_tokens.is_none() && max_cost_usd.is_none() {
            return Ok(self);
        }
        self.policy = self.policy.with_spend(max_tokens, max_cost_usd)?;
        let mut envelope: Envelope = serde_json::from_str(&self.envelope)
            .map_err(|e| Error::new(ErrorCode::Internal, format!("own envelope: {e}")))?;
        envelope.policy = Some(self.policy);
        self.envelope = envelope.to_payload()?;
        let tokens = self
            .policy
            .max_tokens
            .map_or(String::new(), |t| t.to_string());
        let cost = self
            .policy
            .max_cost_usd
            .map_or(String::new(), |c| c.to_string());
        self.digest = super::idempotency::digest(&[&self.digest, "budgets", &tokens, &cost]);
        Ok(self)
    }
}

#[derive(Debug, Clone)]
pub struct WakeRequest {
    pub agent: String,
    pub discussion_id: String,
    pub expected_head: String,
    pub digest: String,
    /// An agent token's request: a discussion `agent` takes no part in is
    /// refused as one that does not exist (`participant_only`).
    pub participant_only: bool,
    /// The live session to tell of the turn (`wake --into`), as its
    /// reservation records it: `"tmux:%N"`.
    pub into: Option<String>,
}

impl WakeRequest {
    pub fn new(agent: &str, discussion_id: &str, expected_head: &str) -> Result<WakeRequest> {
        ids::check_name("agent_id", agent)?;
        ids::check_server_id("discussion_id", ids::DISCUSSION, discussion_id)?;
        ids::check_server_id("expected_head_message_id", ids::MESSAGE, expected_head)?;
        Ok(WakeRequest {
            agent: agent.into(),
            discussion_id: discussion_id.into(),
            expected_head: expected_head.into(),
            digest: super::idempotency::digest(&["wake", agent, discussion_id, expected_head]),
            participant_only: false,
            into: None,
        })
    }

    /// A wake that tells the live session `into` of its turn; a retry
    /// with the same key must name the same session.
    pub fn into(mut self, into: Option<String>) -> WakeRequest {
        if let Some(into) = &into {
            self.digest = super::idempotency::digest(&[
                "wake",
                &self.agent,
                &self.discussion_id,
                &self.expected_head,
                into,
            ]);
        }
        self.into = into;
        self
    }

    /// The request of an agent token, which must take part.
    pub fn participant_only(mut self, yes: bool) -> WakeRequest {
        self.participant_only = yes;
        self
    }
}

#[derive(Debug, Clone)]
pub struct ReplyRequest {
    pub agent: String,
    pub discussion_id: String,
    pub attempt_id: String,
    pub reply_to: String,
    pub kind: MessageType,
    pub body: Value,
    pub close: bool,
    /// What the turn reported it cost, for its `completed` receipt.
    pub usage: Option<Usage>,
    /// The turn's usage report was there but could not be read.
    pub usage_unreadable: bool,
    pub digest: String,
    /// As `WakeRequest::participant_only`.
    pub participant_only: bool,
}

impl ReplyRequest {
    pub fn new(
        agent: &str,
        discussion_id: &str,
        attempt_id: &str,
        reply_to: &str,
        kind: &str,
        payload: &str,
        close: bool,
    ) -> Result<ReplyRequest> {
        ids::check_name("agent_id", agent)?;
        ids::check_server_id("discussion_id", ids::DISCUSSION, discussion_id)?;
        ids::check_server_id("attempt_id", ids::ATTEMPT, attempt_id)?;
        ids::check_server_id("reply_to_message_id", ids::MESSAGE, reply_to)?;
        let kind = match kind {
            "question" => MessageType::Question,
            "result" => MessageType::Result,
            other => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("type must be \"question\" or \"result\", got {other:?}"),
                )
                .detail("field", "type"));
            }
        };
        let body = parse_body(payload)?;
        let digest = super::idempotency::digest(&[
            "reply",
            agent,
            discussion_id,
            attempt_id,
            reply_to,
            kind.as_str(),
            &body.to_string(),
            if close { "close" } else { "" },
        ]);
        let request = ReplyRequest {
            agent: agent.into(),
            discussion_id: discussion_id.into(),
            attempt_id: attempt_id.into(),
            reply_to: reply_to.into(),
            kind,
            body,
            close,
            usage: None,
            usage_unreadable: false,
            digest,
            participant_only: false,
        };
        // The turn is known only under the lock; the smallest turn (2)
        // gives the smallest envelope, so this refuses what can never fit
        // and the exact check runs again in the plan.
        request.envelope(2)?;
        Ok(request)
    }

    /// The request with a usage report that could not be read: recorded,
    /// and under a spend budget the discussion fails closed.
    pub fn with_usage_unreadable(mut self, unreadable: bool) -> ReplyRequest {
        if unreadable {
            self.digest = super::idempotency::digest(&[&self.digest, "usage_unreadable"]);
            self.usage_unreadable = true;
        }
        self
    }

    /// The request of an agent token, which must take part.
    pub fn participant_only(mut self, yes: bool) -> ReplyRequest {
        self.participant_only = yes;
        self
    }

    /// The request with the turn's usage. A request without one is
    /// written, and retried, as before.
    pub fn with_usage(mut self, usage: Option<Usage>) -> ReplyRequest {
        if let Some(usage) = usage.filter(|u| !u.is_empty()) {
            self.digest =
                super::idempotency::digest(&[&self.digest, "usage", &usage.to_json().to_string()]);
            self.usage = Some(usage);
        }
        self
    }

    /// The serialized envelope of this reply at `turn`.
    pub fn envelope(&self, turn: u32) -> Result<String> {
        Envelope {
            schema: crate::discussion::envelope::SCHEMA.into(),
            discussion_id: self.discussion_id.clone(),
            turn,
            kind: self.kind,
            reply_to_message_id: Some(self.reply_to.clone()),
            attempt_id: Some(self.attempt_id.clone()),
            close: self.close,
            policy: None,
            body: self.body.clone(),
        }
        .to_payload()
    }
}
