//! Group commit: the writers of one process that queue behind a write
//! share its lock and one sync, and hear of success only after it.

use super::FileLedger;
use crate::engine::{Stamp, plan_fleet};
use crate::error::Result;
use crate::global::Global;
use crate::ledger::excerpt::Excerpt;
use crate::record::{FleetOp, Record};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const WRITERS: usize = 16;

fn join(excerpt: &Excerpt, agent: &str) -> Result<(Vec<Record>, ())> {
    let stamp = Stamp {
        at_ms: 1_000,
        by: "test".into(),
        token_id: None,
    };
    let records = plan_fleet(&excerpt.global, FleetOp::Add, "f", &[agent.into()], &stamp);
    Ok((records, ()))
}

fn members(ledger: &FileLedger) -> Vec<String> {
    let fresh = FileLedger::new(ledger.path().to_path_buf());
    let global: Global = fresh.view(&[]).unwrap().global;
    global
        .members("f")
        .map(|members| members.iter().cloned().collect())
        .unwrap_or_default()
}

/// The first writer's plan waits until the other fifteen queue behind it;
/// then all sixteen write. What each heard, and how many syncs there were.
fn sixteen_queued(ledger: &Arc<FileLedger>) -> Vec<Result<()>> {
    let (inside, entered) = mpsc::channel();
    let first = {
        let ledger = Arc::clone(ledger);
        std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(30);
            ledger.append_keyed(&[], None, |excerpt: &Excerpt| {
                inside.send(()).unwrap();
                while ledger.writers.waiting() < WRITERS - 1 {
                    assert!(Instant::now() < until, "the other writers never queued");
                    std::thread::yield_now();
                }
                join(excerpt, "agent-0")
            })
        })
    };
    entered.recv().unwrap();
    let others: Vec<_> = (1..WRITERS)
        .map(|n| {
            let ledger = Arc::clone(ledger);
            std::thread::spawn(move || {
                ledger.append_keyed(&[], None, |excerpt: &Excerpt| {
                    join(excerpt, &format!("agent-{n}"))
                })
            })
        })
        .collect();
    std::iter::once(first)
        .chain(others)
        .map(|thread| thread.join().unwrap())
        .collect()
}

#[test]
fn writers_queued_behind_a_write_share_one_sync() {
    let dir = tempfile::tempdir().unwrap();
    static SYNCS: AtomicU64 = AtomicU64::new(0);
    fn counted(file: &std::fs::File) -> std::io::Result<()> {
        SYNCS.fetch_add(1, Ordering::SeqCst);
        file.sync_data()
    }
    let ledger = Arc::new(FileLedger::new(dir.path().join("ledger.jsonl")).syncing_with(counted));
    let heard = sixteen_queued(&ledger);
    assert!(heard.iter().all(Result::is_ok), "{heard:?}");
    assert_eq!(SYNCS.load(Ordering::SeqCst), 1);
    let mut expected: Vec<String> = (0..WRITERS).map(|n| format!("agent-{n}")).collect();
    expected.sort();
    assert_eq!(members(&ledger), expected);
    // The group let go of the lock: another handle writes at once.
    let other = FileLedger::new(ledger.path().to_path_buf());
    other
        .append_keyed(&[], None, |excerpt: &Excerpt| join(excerpt, "late"))
        .unwrap();
    assert_eq!(members(&ledger).len(), WRITERS + 1);
}

#[test]
fn a_failed_sync_fails_every_write_of_its_group_and_cuts_them_all_back() {
    let dir = tempfile::tempdir().unwrap();
    static FAIL_NEXT: AtomicBool = AtomicBool::new(false);
    fn failing_once(file: &std::fs::File) -> std::io::Result<()> {
        if FAIL_NEXT.swap(false, Ordering::SeqCst) {
            return Err(std::io::Error::from_raw_os_error(
                rustix::io::Errno::IO.raw_os_error(),
            ));
        }
        file.sync_data()
    }
    let ledger =
        Arc::new(FileLedger::new(dir.path().join("ledger.jsonl")).syncing_with(failing_once));
    ledger
        .append_keyed(&[], None, |excerpt: &Excerpt| join(excerpt, "before"))
        .unwrap();
    let before = std::fs::read(ledger.path()).unwrap();
    FAIL_NEXT.store(true, Ordering::SeqCst);
    let heard = sixteen_queued(&ledger);
    for answer in &heard {
        let err = answer.as_ref().expect_err("a write whose sync failed");
        assert_eq!(err.code, crate::error::ErrorCode::IoError, "{err:?}");
    }
    assert_eq!(std::fs::read(ledger.path()).unwrap(), before);
    assert_eq!(members(&ledger), ["before"]);
    // The cut-back ledger takes the next write as usual.
    ledger
        .append_keyed(&[], None, |excerpt: &Excerpt| join(excerpt, "after"))
        .unwrap();
    assert_eq!(members(&ledger), ["after", "before"]);
}
