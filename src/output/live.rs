//! Live sessions as the contract shows them: `discuss turn` (and
//! `take_turn`, `GET /v1/turn`), and the Claude Code hook's answer.

use super::discussion::AttemptJson;
use super::text::{body_text, printable};
use super::{Sink, Style, View};
use crate::clock::format_ms;
use crate::operations::live::Turn;
use serde::Serialize;
use serde_json::{Value, json};

/// `turn`: `{"discussion_id","attempt":ATTEMPT,"head":{"message_id",
/// "from_agent_id","type","body"},"reply_argv":[…]}`.
pub(crate) struct TurnView {
    pub turn: Turn,
    pub reply_argv: Vec<String>,
}

impl TurnView {
    /// The message the turn answers.
    fn head(&self) -> Option<&crate::discussion::Entry> {
        let head = &self.turn.attempt.head_message_id;
        self.turn
            .discussion
            .transcript
            .iter()
            .find(|m| &m.message_id == head)
    }

    /// The reply command as a person would type it (each word quoted
    /// where a shell would need it).
    pub(crate) fn reply_line(&self) -> String {
        self.reply_argv
            .iter()
            .map(|word| shell_word(word))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `word` as a POSIX shell reads it back.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

impl Serialize for TurnView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let head = self.head().map(|m| {
            json!({"message_id": m.message_id, "from_agent_id": m.from_agent_id,
                "type": m.kind.as_str(), "body": m.body})
        });
        json!({
            "discussion_id": self.turn.discussion.id,
            "attempt": AttemptJson::of(&self.turn.attempt),
            "head": head,
            "reply_argv": self.reply_argv,
        })
        .serialize(serializer)
    }
}

impl View for TurnView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        let a = &self.turn.attempt;
        let mut text = format!(
            "Turn {} of {} is {}'s until {}.\n",
            a.turn,
            self.turn.discussion.id,
            printable(&a.agent_id, false),
            format_ms(a.deadline_ms)
        );
        if let Some(m) = self.head() {
            text.push_str(&format!(
                "{} asks ({}, {}):\n",
                printable(&m.from_agent_id, false),
                m.kind.as_str(),
                m.message_id
            ));
            for line in body_text(&m.body).lines() {
                text.push_str(&format!("  {line}\n"));
            }
        }
        text.push_str(&format!(
            "Answer (the body on stdin; --type question to ask back, --close to end it):\n  {}\n",
            self.reply_line()
        ));
        out.text(&text);
    }

    fn ids(&self) -> Vec<&str> {
        vec![self.turn.attempt.attempt_id.as_str()]
    }
}

/// What a hook prints: the agent CLI's own protocol, one JSON object, in
/// every form (`--json` or not).
pub(crate) struct HookView(pub Value);

impl Serialize for HookView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl View for HookView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        out.text(&format!("{}\n", self.0));
    }
}
