//! The answers of the writes `ask`, `wake` and `reply`, and of a
//! supervised turn.

use super::discussion::{AttemptJson, PolicyJson};
use super::{Sink, Style, View};
use crate::clock::format_ms;
use crate::discussion::{Attempt, Discussion};
use crate::supervisor::Outcome;
use serde::Serialize;

/// `ask`: the new discussion, and the peer's reserved turn with
/// `--wake-peer` (how it ended, when it was supervised).
pub(crate) struct AskView {
    /// The discussion as the write left it.
    pub discussion: Discussion,
    pub attempt: Option<Attempt>,
    /// A supervised turn: how it ended, and the discussion after it (the
    /// JSON's status and head are those after the turn).
    pub supervised: Option<(Outcome, Discussion)>,
    /// The original answer to a retried request.
    pub replayed: bool,
    /// Whether the root is still the head to wake on (a replayed ask may
    /// answer for a discussion that moved on): only then is `wake` hinted.
    pub root_waits: bool,
}

#[derive(Serialize)]
struct AskJson<'a> {
    discussion_id: &'a str,
    root_message_id: Option<&'a str>,
    head_message_id: Option<&'a str>,
    status: crate::discussion::Status,
    policy: Option<PolicyJson>,
    attempt: Option<AttemptOrOutcome<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    replayed: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
enum AttemptOrOutcome<'a> {
    Attempt(AttemptJson<'a>),
    Outcome(SupervisedJson<'a>),
}

impl Serialize for AskView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (d, attempt) = match &self.supervised {
            Some((outcome, after)) => (after, Some(AttemptOrOutcome::Outcome(outcome.into()))),
            None => (
                &self.discussion,
                self.attempt
                    .as_ref()
                    .map(|a| AttemptOrOutcome::Attempt(AttemptJson::of(a))),
            ),
        };
        let root = d.root.as_ref();
        AskJson {
            discussion_id: &d.id,
            root_message_id: root.map(|r| r.message_id.as_str()),
            head_message_id: d.head().map(|h| h.message_id.as_str()),
            status: d.status,
            policy: root.map(PolicyJson::of),
            attempt,
            replayed: self.replayed,
        }
        .serialize(serializer)
    }
}

impl View for AskView {
    fn exit_status(&self) -> u8 {
        self.supervised.as_ref().map_or(0, |(s, _)| s.exit_status())
    }

    fn human(&self, style: &Style, out: &mut Sink) {
        let d = &self.discussion;
        if let Some(root) = &d.root {
            out.text(&format!(
                "{}  {}  {} → {}, {} turns, deadline {}\nroot {}\n",
                d.id,
                style.status(d.status),
                root.asker,
                root.peer,
                root.policy.max_turns,
                format_ms(root.deadline_ms),
                root.message_id
            ));
            match &self.attempt {
                Some(a) => out.text(&format!(
                    "woke {} for turn {}: attempt {}\n",
                    a.agent_id, a.turn, a.attempt_id
                )),
                None if self.root_waits => out.text(&format!(
                    "next: discuss wake --agent {} --discussion {} --expected-head {}\n",
                    root.peer, d.id, root.message_id
                )),
                None => {}
            }
        }
        if let Some((outcome, _)) = &self.supervised {
            out.text(&supervised_line(&d.id, outcome));
        }
        if self.replayed {
            out.text(REPLAYED);
        }
    }

    fn ids(&self) -> Vec<&str> {
        vec![&self.discussion.id]
    }
}

/// The note under the answer to a retried write.
const REPLAYED: &str = "(replayed: this key was used before; nothing was written)\n";

/// `wake`: the reserved attempt (how it ended, when it was supervised).
pub(crate) struct WakeView {
    pub discussion_id: String,
    pub attempt: Attempt,
    pub supervised: Option<Outcome>,
    pub replayed: bool,
}

impl Serialize for WakeView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct WakeJson<'a> {
            discussion_id: &'a str,
            attempt: AttemptOrOutcome<'a>,
            /// After a supervised turn: the discussion's status.
            #[serde(skip_serializing_if = "Option::is_none")]
            status: Option<crate::discussion::Status>,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            replayed: bool,
        }
        WakeJson {
            discussion_id: &self.discussion_id,
            status: self.supervised.as_ref().and_then(|s| s.status),
            attempt: match &self.supervised {
                Some(outcome) => AttemptOrOutcome::Outcome(outcome.into()),
                None => AttemptOrOutcome::Attempt(AttemptJson::of(&self.attempt)),
            },
            replayed: self.replayed,
        }
        .serialize(serializer)
    }
}

impl View for WakeView {
    fn exit_status(&self) -> u8 {
        self.supervised.as_ref().map_or(0, |s| s.exit_status())
    }

    fn human(&self, _style: &Style, out: &mut Sink) {
        let a = &self.attempt;
        if let Some(outcome) = &self.supervised {
            out.text(&supervised_line(&self.discussion_id, outcome));
            return;
        }
        out.text(&format!(
            "{} holds turn {} of {} until {}\nattempt {}\n",
            a.agent_id,
            a.turn,
            self.discussion_id,
            format_ms(a.deadline_ms),
            a.attempt_id
        ));
        if let Some(into) = &a.into {
            out.text(&format!("{}\n", super::discussion::live_delivery(a, into)));
        }
        if self.replayed {
            out.text(REPLAYED);
        } else if a.into.is_some() {
            out.text(&format!(
                "the session takes it with: discuss turn --agent {}\n",
                a.agent_id
            ));
        } else {
            out.text(&format!(
                "reply: discuss reply --agent {} --discussion {} --attempt {} --reply-to {} --type result --payload JSON\n",
                a.agent_id, self.discussion_id, a.attempt_id, a.head_message_id,
            ));
        }
    }

    fn ids(&self) -> Vec<&str> {
        vec![&self.attempt.attempt_id]
    }
}

/// `reply`: the new message and where the discussion stands.
pub(crate) struct ReplyView {
    pub discussion: Discussion,
    pub message_id: String,
    pub replayed: bool,
}

impl Serialize for ReplyView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct ReplyJson<'a> {
            discussion_id: &'a str,
            message_id: &'a str,
            turn: Option<u32>,
            status: crate::discussion::Status,
            head_message_id: Option<&'a str>,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            replayed: bool,
        }
        let d = &self.discussion;
        ReplyJson {
            discussion_id: &d.id,
            message_id: &self.message_id,
            turn: d
                .transcript
                .iter()
                .find(|e| e.message_id == self.message_id)
                .map(|e| e.turn),
            status: d.status,
            head_message_id: d.head().map(|h| h.message_id.as_str()),
            replayed: self.replayed,
        }
        .serialize(serializer)
    }
}

impl View for ReplyView {
    fn human(&self, style: &Style, out: &mut Sink) {
        let d = &self.discussion;
        out.text(&format!(
            "{} turn {}: {} → {}\n",
            d.id,
            d.head().map_or(0, |h| h.turn),
            self.message_id,
            style.status(d.status)
        ));
    }
}

/// A supervised attempt: the attempt's fields as the run ended them, and
/// `outcome`.
#[derive(Serialize)]
pub(crate) struct SupervisedJson<'a> {
    #[serde(flatten)]
    attempt: AttemptJson<'a>,
    outcome: &'static str,
}

impl<'a> From<&'a Outcome> for SupervisedJson<'a> {
    fn from(outcome: &'a Outcome) -> SupervisedJson<'a> {
        let mut attempt = AttemptJson::of(&outcome.attempt);
        attempt.reason = outcome.reason.as_deref();
        attempt.exit_code = outcome.exit_code;
        attempt.reply_message_id = outcome.reply_message_id.as_deref();
        SupervisedJson {
            attempt,
            outcome: outcome.outcome.as_str(),
        }
    }
}

/// One line on how a supervised attempt ended: the code for scripts, and
/// what happened for the person reading.
fn supervised_line(discussion_id: &str, outcome: &Outcome) -> String {
    let a = &outcome.attempt;
    let mut line = format!(
        "{discussion_id} turn {} ({}): {}",
        a.turn,
        a.agent_id,
        outcome.outcome.as_str()
    );
    if let Some(reason) = &outcome.reason {
        match &a.detail {
            Some(detail) => line.push_str(&format!(" ({reason}: {detail})")),
            None => line.push_str(&format!(" ({reason})")),
        }
    }
    if let Some(code) = outcome.exit_code {
        line.push_str(&format!(", exit code {code}"));
    }
    if let Some(message) = &outcome.reply_message_id {
        line.push_str(&format!(", reply {message}"));
    }
    line.push('\n');
    // Where the turn left the discussion, when it ended it: a person
    // driving turns by hand must not read "completed" as "go on".
    if let Some(status) = outcome.status.filter(|s| s.is_terminal()) {
        line.push_str(&format!("{discussion_id} is now {}", status.as_str()));
        match &outcome.escalated {
            Some(reason) => line.push_str(&format!(
                " and escalated ({reason}): `discuss escalations` shows it\n"
            )),
            None => line.push('\n'),
        }
    }
    line
}
