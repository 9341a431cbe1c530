//! `discuss verify`: replay the whole ledger and report what is wrong.

use super::Context;
use super::list::all_discussions;
use crate::discussion::Status;
use crate::error::Result;
use clap::Args;
use serde_json::json;

/// Replay the whole ledger: unreadable lines, a torn tail and every invalid
/// discussion. Exit 0 only when there are none, else 7 with the report.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss verify || discuss verify --json | jq .invalid_discussions"
)]
pub struct VerifyArgs {}

pub fn run(ctx: &Context, _args: &VerifyArgs) -> Result<u8> {
    let snapshot = ctx.ledger.read()?;
    let discussions = all_discussions(&snapshot, ctx.now(snapshot.last_at_ms));
    let invalid: Vec<_> = discussions
        .iter()
        .filter(|d| d.status == Status::Invalid)
        .collect();
    let ok = snapshot.unreadable.is_empty() && snapshot.torn_tail == 0 && invalid.is_empty();
    if ctx.out.json {
        ctx.out.print_json(&json!({
            "ok": ok,
            "ledger": ctx.ledger.path().display().to_string(),
            "records": snapshot.records.len(),
            "discussions": discussions.len(),
            "unreadable_lines": snapshot.unreadable.iter().map(|u| json!({"line": u.line, "detail": u.detail})).collect::<Vec<_>>(),
            "torn_tail_bytes": snapshot.torn_tail,
            "invalid_discussions": invalid.iter().map(|d| json!({
                "discussion_id": d.id,
                "integrity_findings": d.findings.iter().map(|f| json!({
                    "kind": f.kind.as_str(), "message_id": f.message_id, "line": f.line, "detail": f.detail, "record_id": f.record_id,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }));
    } else {
        let mut text = String::new();
        for u in &snapshot.unreadable {
            text.push_str(&format!("line {}: unreadable: {}\n", u.line, u.detail));
        }
        if snapshot.torn_tail > 0 {
            text.push_str(&format!(
                "torn tail: {} bytes after the last complete line (moved to {} by the next write)\n",
                snapshot.torn_tail,
                ctx.ledger.torn_path().display()
            ));
        }
        for d in &invalid {
            for f in &d.findings {
                text.push_str(&format!(
                    "{}: line {}: {}: {}\n",
                    d.id,
                    f.line,
                    f.kind.as_str(),
                    f.detail
                ));
            }
        }
        text.push_str(&format!(
            "{}: {} records, {} discussions, {} unreadable lines, {} torn bytes, {} invalid discussions\n",
            if ok { "ok" } else { "PROBLEMS" },
            snapshot.records.len(),
            discussions.len(),
            snapshot.unreadable.len(),
            snapshot.torn_tail,
            invalid.len()
        ));
        ctx.out.print_text(&text);
    }
    Ok(if ok {
        0
    } else {
        crate::error::ErrorCode::IntegrityFindings.exit_status()
    })
}
