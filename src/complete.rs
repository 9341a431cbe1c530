//! Shell completion that knows the ledger: discussion ids, agents and
//! fleets, besides commands and options. The shell's script (`discuss
//! completions SHELL`) asks the binary at each Tab with `DISCUSS_COMPLETE`
//! set (clap_complete's dynamic engine), and the candidates come from cheap
//! reads only: the index's ids for a typed prefix, the live set for the
//! discussions one would act on, the global state for agents and fleets.
//! A ledger that cannot be read completes nothing: a Tab never prints an
//! error.

use crate::discussion::Status;
use crate::session::Session;
use clap_complete::CompletionCandidate;
use std::ffi::OsStr;

/// The variable that turns a run into a completion request.
pub(crate) const VAR: &str = "DISCUSS_COMPLETE";

/// The shell code that registers completion for `shell`: what `discuss
/// completions SHELL` prints.
pub(crate) fn registration(shell: clap_complete::Shell) -> Vec<u8> {
    let mut script = Vec::new();
    let name = shell.to_string();
    if let Some(completer) = clap_complete::env::Shells::builtins().completer(&name) {
        // Writing to memory cannot fail.
        let _ = completer.write_registration(VAR, "discuss", "discuss", "discuss", &mut script);
    }
    script
}

/// The ledger `DISCUSS_LEDGER` (or the default) names, for reading, as
/// every command opens it. (`--ledger` typed on the line is not seen:
/// completers get only the word being completed.)
fn session() -> Option<Session> {
    let mut global = crate::options::GlobalArgs::from_environment()?;
    global.actor = Some("completion".into());
    let session = global.session().ok()?;
    session.ledger.exists().unwrap_or(false).then_some(session)
}

/// Discussion ids: those starting with the typed prefix once it is long
/// enough to look up (`dsc_` and four characters), else the open and
/// active discussions, newest first, with their status and participants.
pub(crate) fn discussions(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(session) = session() else {
        return Vec::new();
    };
    let typed = current.to_string_lossy();
    if typed.len() >= 8 {
        let ids = session
            .ledger
            .discussion_ids_starting(&typed)
            .unwrap_or_default();
        return ids
            .into_iter()
            .filter(|id| id.starts_with(typed.as_ref()))
            .map(CompletionCandidate::new)
            .collect();
    }
    let live = [Status::Open, Status::Active];
    let Ok((rows, _)) = crate::operations::lists::listed(&session, &live, None, None) else {
        return Vec::new();
    };
    rows.into_iter()
        .filter(|row| row.id.starts_with(typed.as_ref()))
        .map(|row| {
            let help = format!("{} {}", row.status.as_str(), row.participants.join(" ⇄ "));
            CompletionCandidate::new(row.id).help(Some(help.into()))
        })
        .collect()
}

/// Status names for `--status` and `--until`, after any typed before a
/// comma (`open,act` completes to `open,active`).
pub(crate) fn statuses(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    let (typed, last) = match current.rfind(',') {
        Some(at) => current.split_at(at + 1),
        None => ("", &*current),
    };
    crate::discussion::Status::ALL
        .iter()
        .map(|s| s.as_str())
        .chain(["terminal"])
        .filter(|name| name.starts_with(last))
        .map(|name| CompletionCandidate::new(format!("{typed}{name}")))
        .collect()
}

/// Every agent of every fleet, and every agent with a quota of its own.
pub(crate) fn agents() -> Vec<CompletionCandidate> {
    global_names(|global| {
        let mut agents: Vec<String> = global.fleets.values().flatten().cloned().collect();
        agents.extend(global.agent_quotas.keys().cloned());
        agents
    })
}

/// Every fleet.
pub(crate) fn fleets() -> Vec<CompletionCandidate> {
    global_names(|global| global.fleets.keys().cloned().collect())
}

fn global_names(names: impl Fn(&crate::global::Global) -> Vec<String>) -> Vec<CompletionCandidate> {
    let Some(session) = session() else {
        return Vec::new();
    };
    let Ok(view) = session.ledger.view(&[]) else {
        return Vec::new();
    };
    let mut names = names(&view.global(session.now(view.last_at_ms())));
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}
