//! What a supervised agent said besides a `discuss reply`: its stdout,
//! posted as its reply (`--reply-from-stdout`, an agent CLI's JSON result
//! read for its text and cost), and the usage file it may have written.

use super::{Ended, Options, Outcome, finish};
use crate::discussion::{Attempt, Discussion};
use crate::engine::{AttemptEnd, EndReason, ReplyRequest, plan_reply};
use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;
use crate::spend::Usage;
use std::io::Read;
use std::path::Path;

/// How much stdout `--reply-from-stdout` keeps: a body never fits more.
const MAX_CAPTURE: usize = crate::discussion::envelope::MAX_ENVELOPE_BYTES;

/// Up to MAX_CAPTURE + 1 bytes of stdout; the rest is read and dropped so
/// the child never blocks on a full pipe.
pub(super) fn capture(mut stdout: std::process::ChildStdout) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match stdout.read(&mut buffer) {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = (MAX_CAPTURE + 1).saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
}

/// Posts a child's stdout as its `result` reply.
pub(super) fn reply_from_stdout(
    session: &Session,
    discussion: &Discussion,
    attempt: &Attempt,
    options: &Options,
    stdout: Vec<u8>,
    mut end: AttemptEnd,
) -> Result<Outcome> {
    let text = String::from_utf8_lossy(&stdout);
    if text.trim().is_empty() {
        end.reason = EndReason::EmptyOutput;
        end.detail = Some("the command exited 0 without output and without a reply".into());
        return finish(session, discussion, attempt, end);
    }
    if stdout.len() > MAX_CAPTURE {
        end.reason = EndReason::OutputTooLarge;
        end.detail = Some(format!("stdout is over {MAX_CAPTURE} bytes"));
        return finish(session, discussion, attempt, end);
    }
    let output = serde_json::from_str::<serde_json::Value>(&text)
        .unwrap_or_else(|_| serde_json::json!({ "text": text }));
    let (body, printed) = agent_result(output);
    // What the agent CLI printed it cost wins over the usage file.
    let usage = printed.or(end.usage);
    let request = ReplyRequest::new(
        &attempt.agent_id,
        &discussion.id,
        &attempt.attempt_id,
        &attempt.head_message_id,
        "result",
        &body.to_string(),
        options.close_on_reply,
    )
    .map(|request| {
        request
            .with_usage(usage)
            .with_usage_unreadable(usage.is_none() && end.usage_unreadable)
    });
    end.usage = usage;
    end.usage_unreadable &= usage.is_none();
    let posted = request.and_then(|request| {
        session.ledger.append(&[&discussion.id], |view| {
            plan_reply(
                &view.global(session.now(view.last_at_ms())),
                &view.discussion(&discussion.id),
                &request,
                &session.stamp(view.last_at_ms()),
            )
        })
    });
    match posted {
        Ok((state, message_id)) => Ok(Outcome {
            attempt: state
                .attempt(&attempt.attempt_id)
                .cloned()
                .unwrap_or_else(|| attempt.clone()),
            outcome: Ended::Completed,
            reason: None,
            exit_code: end.exit_code,
            reply_message_id: Some(message_id),
            status: Some(state.status),
            escalated: state.escalation.as_ref().map(|e| e.reason.clone()),
        }),
        Err(err) if err.code == ErrorCode::PayloadTooLarge => {
            end.reason = EndReason::OutputTooLarge;
            end.detail = Some(err.message);
            finish(session, discussion, attempt, end)
        }
        Err(err) => {
            end.reason = EndReason::ReplyRefused;
            end.detail = Some(format!("{}: {}", err.code, err.message));
            finish(session, discussion, attempt, end)
        }
    }
}

/// The most a usage file may hold.
pub(crate) const MAX_USAGE_FILE: u64 = 64 * 1024;

/// What a turn's usage file said.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum UsageReport {
    /// No file, or nothing but white space in it: no report.
    None,
    Read(Usage),
    /// A file there that is not a usage object: too large, not UTF-8, not
    /// a regular file, unreadable. A spend budget fails closed on it.
    Unreadable,
}

/// The usage a child wrote to its `DISCUSS_USAGE_FILE`, if it wrote one.
/// One that cannot be read is said on stderr, and is `Unreadable`: the
/// turn's receipt records `usage_unreadable`.
pub(crate) fn read_usage_file(path: &Path) -> UsageReport {
    // A FIFO planted there must not hold the supervisor (or `reply`)
    // until a writer comes: only a regular file is read (`regular_file`).
    let unreadable = |why: String| {
        say!(
            "warning: usage file {}: {why}; recorded as usage_unreadable",
            path.display()
        );
        UsageReport::Unreadable
    };
    let bytes = match crate::regular_file::read_regular(path, MAX_USAGE_FILE) {
        Ok(bytes) => bytes,
        Err(crate::regular_file::Unread::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return UsageReport::None;
        }
        Err(unread) => return unreadable(unread.to_string()),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return UsageReport::None;
    }
    match std::str::from_utf8(&bytes)
        .map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("not UTF-8: {e}")))
        .and_then(Usage::parse)
    {
        Ok(usage) => UsageReport::Read(usage),
        Err(err) => unreadable(format!(
            "not a usage object ({}: {})",
            err.code, err.message
        )),
    }
}

/// The reply body and usage of an agent CLI's JSON result
/// (`{"type":"result","result":"…","total_cost_usd":0.012,"usage":{…}}`):
/// its `result` text becomes `{"text": …}`, and its `usage` tokens
/// (`input_tokens`, `output_tokens`) and `total_cost_usd` the turn's
/// usage. Any other output is the body as it is, without usage.
fn agent_result(output: serde_json::Value) -> (serde_json::Value, Option<Usage>) {
    let serde_json::Value::Object(fields) = &output else {
        return (output, None);
    };
    let tokens = fields.get("usage").and_then(|u| u.as_object());
    let cost = fields.get("total_cost_usd").filter(|c| !c.is_null());
    if tokens.is_none() && cost.is_none() {
        return (output, None);
    }
    let mut usage = serde_json::Map::new();
    for name in ["input_tokens", "output_tokens"] {
        if let Some(count) = tokens.and_then(|t| t.get(name)) {
            usage.insert(name.into(), count.clone());
        }
    }
    if let Some(cost) = cost {
        usage.insert("cost_usd".into(), cost.clone());
    }
    let usage = match Usage::from_json(&serde_json::Value::Object(usage)) {
        Ok(usage) => Some(usage),
        Err(err) => {
            say!(
                "warning: the command's output reports a usage that is not one ({}: {}); no usage recorded",
                err.code,
                err.message
            );
            None
        }
    };
    let body = match fields.get("result") {
        Some(serde_json::Value::String(text)) => serde_json::json!({ "text": text }),
        _ => output.clone(),
    };
    (body, usage)
}
