//! The OS user, for the default actor name and the default ledger path.

use std::ffi::CStr;
use std::path::PathBuf;

struct Passwd {
    name: String,
    home: PathBuf,
}

fn passwd() -> Option<Passwd> {
    let uid = rustix::process::getuid().as_raw();
    // SAFETY: the password database has no safe API (rustix has none; it
    // is libc's, not the kernel's). getpwuid_r writes only into the
    // buffers we hand it, and the returned pointers point into `buffer`,
    // which outlives their use.
    unsafe {
        let mut entry: libc::passwd = std::mem::zeroed();
        let mut buffer = vec![0 as libc::c_char; 4096];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            uid,
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() {
            return None;
        }
        Some(Passwd {
            name: CStr::from_ptr(entry.pw_name).to_string_lossy().into_owned(),
            home: PathBuf::from(CStr::from_ptr(entry.pw_dir).to_string_lossy().into_owned()),
        })
    }
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `$USER`, else `$LOGNAME`, else the password database.
pub(crate) fn user_name() -> Option<String> {
    non_empty_env("USER")
        .or_else(|| non_empty_env("LOGNAME"))
        .or_else(|| passwd().map(|p| p.name))
}

/// `$HOME`, else the password database.
pub(crate) fn home_dir() -> Option<PathBuf> {
    non_empty_env("HOME")
        .map(PathBuf::from)
        .or_else(|| passwd().map(|p| p.home))
}

/// `$XDG_STATE_HOME/discuss/ledger.jsonl` (when absolute), else
/// `~/.local/state/discuss/ledger.jsonl`.
pub(crate) fn default_ledger_path() -> Option<PathBuf> {
    let state = non_empty_env("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home_dir().map(|home| home.join(".local/state")))?;
    Some(state.join("discuss").join("ledger.jsonl"))
}
