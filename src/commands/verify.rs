//! `discuss verify`: replay the whole ledger and report what is wrong.

use super::Context;
use super::list::{derive_all, newest_first};
use crate::discussion::{Discussion, Status};
use crate::error::Result;
use crate::progress::Progress;
use clap::Args;
use serde_json::json;

/// Replay the whole ledger: unreadable lines, a torn tail, findings about
/// lines and every invalid discussion. Exit 0 only when there are none,
/// else 7 with the report.
///
/// It reads every line, so it takes time in proportion to the ledger: about
/// 7 s per million lines on a 2-core machine, with a progress bar on a
/// terminal once it has run for a second.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss verify || discuss verify --json | jq .invalid_discussions"
)]
pub struct VerifyArgs {}

pub fn run(ctx: &Context, _args: &VerifyArgs) -> Result<u8> {
    // Streamed: memory holds one discussion at a time, whatever the size
    // of the ledger.
    let mut progress = Progress::new(ctx.out.json, 0, "verify: reading lines");
    let lines = ctx.ledger.check_lines(ctx.clock.now_ms(), |done, total| {
        progress.set_total(total);
        progress.at(done);
    })?;
    progress.done();
    // Counting the discussions costs a read of the index's ids: only for
    // a bar someone sees.
    let total = if Progress::shown(ctx.out.json) {
        ctx.ledger.discussion_ids()?.len() as u64
    } else {
        0
    };
    let mut progress = Progress::new(ctx.out.json, total, "verify: deriving discussions");
    let mut derived = 0;
    let (all, _) = derive_all(ctx, |d| {
        derived += 1;
        progress.at(derived);
        Some((d.status == Status::Invalid).then(|| Box::new(d)))
    })?;
    progress.done();
    let discussions = all.len();
    let mut invalid: Vec<Box<Discussion>> = all.into_iter().flatten().collect();
    invalid.sort_by(|a, b| newest_first((a.updated_at_ms, &a.id), (b.updated_at_ms, &b.id)));
    let ok = lines.unreadable.is_empty()
        && lines.torn_tail == 0
        && lines.findings.is_empty()
        && invalid.is_empty();
    if ctx.out.json {
        ctx.out.print_json(&json!({
            "ok": ok,
            "ledger": ctx.ledger.location(),
            "records": lines.records,
            "discussions": discussions,
            "unreadable_lines": lines.unreadable.iter().map(|u| json!({"line": u.line, "detail": u.detail})).collect::<Vec<_>>(),
            "torn_tail_bytes": lines.torn_tail,
            "ledger_findings": lines.findings.iter().map(|f| json!({"kind": f.kind, "line": f.line, "detail": f.detail})).collect::<Vec<_>>(),
            "invalid_discussions": invalid.iter().map(|d| json!({
                "discussion_id": d.id,
                "integrity_findings": d.findings.iter().map(|f| json!({
                    "kind": f.kind.as_str(), "message_id": f.message_id, "line": f.line, "detail": f.detail, "record_id": f.record_id,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }));
    } else {
        let mut text = String::new();
        for u in &lines.unreadable {
            text.push_str(&format!(
                "line {}: unreadable: {}\n",
                u.line,
                crate::output::printable(&u.detail, false)
            ));
        }
        for f in &lines.findings {
            text.push_str(&format!(
                "line {}: {}: {}\n",
                f.line,
                f.kind,
                crate::output::printable(&f.detail, false)
            ));
        }
        if lines.torn_tail > 0 {
            let moved = match ctx.ledger.as_file() {
                Some(file) => format!("moved to {} by the next write", file.torn_path().display()),
                None => "refused by writers until removed by hand".into(),
            };
            text.push_str(&format!(
                "torn tail: {} bytes after the last complete line ({moved})\n",
                lines.torn_tail
            ));
        }
        for d in &invalid {
            for f in &d.findings {
                text.push_str(&format!(
                    "{}: line {}: {}: {}\n",
                    d.id,
                    f.line,
                    f.kind.as_str(),
                    crate::output::printable(&f.detail, false)
                ));
            }
        }
        use crate::output::count;
        text.push_str(&format!(
            "{}: {}, {}, {}, {}, {}, {}\n",
            if ok { "ok" } else { "PROBLEMS" },
            count(lines.records, "record", "records"),
            count(discussions as u64, "discussion", "discussions"),
            count(
                lines.unreadable.len() as u64,
                "unreadable line",
                "unreadable lines"
            ),
            count(lines.findings.len() as u64, "line finding", "line findings"),
            count(lines.torn_tail, "torn byte", "torn bytes"),
            count(
                invalid.len() as u64,
                "invalid discussion",
                "invalid discussions"
            ),
        ));
        ctx.out.print_text(&text);
    }
    Ok(if ok {
        0
    } else {
        crate::error::ErrorCode::IntegrityFindings.exit_status()
    })
}
