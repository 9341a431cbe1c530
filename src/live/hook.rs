//! The Claude Code hook protocol (`discuss turn --hook claude-code`): an
//! event as JSON on stdin, an answer as JSON on stdout, exit 0 always so
//! a hook never breaks its session.

use serde_json::{Value, json};

/// The events a hook answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookEvent {
    /// `Stop` or `SubagentStop`: the agent is about to stop; `active`
    /// when it is already continuing because of a stop hook.
    Stop { active: bool },
    /// `SessionStart` or `UserPromptSubmit`: context may be added.
    Context(String),
    /// Any other event: nothing to say.
    Other,
}

/// The event on stdin, or why it is not one.
pub(crate) fn parse(input: &str) -> Result<HookEvent, String> {
    let event: Value = serde_json::from_str(input.trim())
        .map_err(|e| format!("the hook's input is not JSON: {e}"))?;
    let Some(name) = event.get("hook_event_name").and_then(Value::as_str) else {
        return Err("the hook's input has no hook_event_name".into());
    };
    Ok(match name {
        "Stop" | "SubagentStop" => HookEvent::Stop {
            active: event.get("stop_hook_active") == Some(&Value::Bool(true)),
        },
        "SessionStart" | "UserPromptSubmit" => HookEvent::Context(name.to_owned()),
        _ => HookEvent::Other,
    })
}

/// Keeps the agent going with the turn: `Stop`'s answer.
pub(crate) fn block(reason: &str) -> Value {
    json!({"decision": "block", "reason": reason})
}

/// Adds `text` to the agent's context: `SessionStart`'s and
/// `UserPromptSubmit`'s answer.
pub(crate) fn context(event: &str, text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_a_hook_answers_and_the_rest() {
        let stop = r#"{"session_id":"s","hook_event_name":"Stop","stop_hook_active":true}"#;
        assert_eq!(parse(stop), Ok(HookEvent::Stop { active: true }));
        let sub = r#"{"hook_event_name":"SubagentStop","stop_hook_active":false}"#;
        assert_eq!(parse(sub), Ok(HookEvent::Stop { active: false }));
        let start = r#"{"hook_event_name":"SessionStart","source":"startup"}"#;
        assert_eq!(parse(start), Ok(HookEvent::Context("SessionStart".into())));
        let tool = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#;
        assert_eq!(parse(tool), Ok(HookEvent::Other));
        assert!(parse("not json").is_err());
        assert!(parse(r#"{"session_id":"s"}"#).is_err());
    }
}
