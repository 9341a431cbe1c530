//! Live sessions: agents that live in a terminal (Claude Code, Codex CLI,
//! Gemini CLI, a REPL) are told that a turn is theirs by one line typed
//! into their pane, the pointer (never the body: a body is another
//! agent's data, never keystrokes), and take it with `discuss turn`.

pub(crate) mod hook;
pub(crate) mod tmux;

use crate::clock::format_ms;
use crate::discussion::Attempt;
use crate::error::{Error, Result};

/// The names a pointer's template may use.
const NAMES: [&str; 5] = ["turn", "discussion", "deadline_at", "agent", "attempt"];

/// The pointer's text, from a template (`--into-text`) checked before
/// anything is reserved.
#[derive(Debug, Clone)]
pub(crate) struct Pointer {
    template: String,
}

impl Default for Pointer {
    fn default() -> Pointer {
        Pointer {
            template: "discuss: turn {turn} of {discussion} is yours until {deadline_at}; \
                       run: discuss turn --agent {agent}"
                .into(),
        }
    }
}

impl Pointer {
    /// A template naming only `{turn}`, `{discussion}`, `{deadline_at}`,
    /// `{agent}` and `{attempt}`, on one line of printable text (it is
    /// typed as keys: a control character would be a keystroke).
    pub(crate) fn parse(template: &str) -> Result<Pointer> {
        let usage = |message: String| {
            Error::usage(
                message,
                "discuss wake … --into tmux:PANE --into-text 'TEMPLATE'".into(),
            )
            .hint(format!(
                "the names are {}",
                NAMES.map(|n| format!("{{{n}}}")).join(", ")
            ))
        };
        if template.trim().is_empty() {
            return Err(usage("--into-text is empty".into()));
        }
        if template.chars().any(char::is_control) {
            return Err(usage(
                "--into-text holds a control character (it would be typed as a key)".into(),
            ));
        }
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                return Err(usage("--into-text has a { without its }".into()));
            };
            let name = &after[..close];
            if !NAMES.contains(&name) {
                return Err(usage(format!(
                    "--into-text names {{{}}}, which is not a name of a turn",
                    crate::escape::printable(name, false)
                )));
            }
            rest = &after[close + 1..];
        }
        Ok(Pointer {
            template: template.to_owned(),
        })
    }

    /// The line for `attempt` of `discussion_id`.
    pub(crate) fn render(&self, discussion_id: &str, attempt: &Attempt) -> String {
        self.template
            .replace("{turn}", &attempt.turn.to_string())
            .replace("{discussion}", discussion_id)
            .replace("{deadline_at}", &format_ms(attempt.deadline_ms))
            .replace("{agent}", &attempt.agent_id)
            .replace("{attempt}", &attempt.attempt_id)
    }
}

/// The line typed when a turn is withdrawn (a halt ended it).
pub(crate) fn withdrawn(discussion_id: &str, attempt: &Attempt, reason: &str) -> String {
    format!(
        "discuss: turn {} of {discussion_id} was withdrawn ({reason})",
        attempt.turn
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_names_only_what_a_turn_has_on_one_printable_line() {
        assert!(Pointer::parse("turn {turn} of {discussion}, see {attempt}").is_ok());
        for bad in ["{body}", "x {turn", "a\u{1b}[2J", "line\nline", "  "] {
            let err = Pointer::parse(bad).unwrap_err();
            assert_eq!(err.code, crate::error::ErrorCode::Usage, "{bad:?}");
        }
    }
}
