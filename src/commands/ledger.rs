//! `discuss ledger export|import|info`: move a ledger between a file and
//! PostgreSQL, byte for byte, and tell which ledger is in use.

use super::Context;
use crate::error::{Error, ErrorCode, Result};
use crate::ledger::lines::{operations_of, record_and_mark, stream_lines};
use crate::output::{Answer, ExportView, ImportView, InfoView, KeygenView, SealView};
use clap::{Args, Subcommand};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

// Export, import or describe the ledger (a file or a PostgreSQL database)
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    discuss --ledger ledger.jsonl ledger export --output backup.jsonl\n  \
    discuss --ledger postgresql://discuss@db/fleet ledger import backup.jsonl\n  \
    discuss ledger info --json")]
pub(crate) struct LedgerArgs {
    #[command(subcommand)]
    pub command: LedgerCommand,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum LedgerCommand {
    /// Write the ledger's complete lines in order, byte for byte
    Export {
        /// Write to this file (replaced whole, atomically) instead of stdout
        #[arg(long, short, value_name = "PATH")]
        output: Option<PathBuf>,
    },
    /// Append the lines of a JSON-lines file verbatim, all or nothing
    Import {
        /// The file to import, or - for standard input
        #[arg(value_name = "PATH|-")]
        path: PathBuf,
        /// Import only the records whose ids the ledger does not hold yet
        /// (still refused when such a line differs from the stored one);
        /// without it, any record the ledger holds refuses the import
        #[arg(long)]
        skip_existing: bool,
    },
    /// Which ledger is in use: kind, location, lines, bytes
    Info,
    /// Print a seal of the ledger's last line (after checking the chain)
    /// to keep somewhere else; `verify --seal` checks it later
    Seal {
        /// Sign it with this key (from `ledger keygen`)
        #[arg(long, value_name = "FILE")]
        key: Option<PathBuf>,
    },
    /// Make an Ed25519 key to sign seals with; prints its public key
    Keygen {
        /// Where the key goes (never replaced; its public key beside it,
        /// FILE.pub)
        #[arg(long, short, value_name = "FILE")]
        output: PathBuf,
    },
}

pub(crate) fn run(ctx: &Context, args: &LedgerArgs) -> Result<Answer> {
    match &args.command {
        LedgerCommand::Export { output } => export(ctx, output.as_deref()),
        LedgerCommand::Import {
            path,
            skip_existing,
        } => import(ctx, path, *skip_existing),
        LedgerCommand::Info => info(ctx),
        LedgerCommand::Seal { key } => seal(ctx, key.as_deref()),
        LedgerCommand::Keygen { output } => keygen(output),
    }
}

/// A seal of the last line, once the whole chain was checked: a seal
/// vouches for a history that held when it was made.
fn seal(ctx: &Context, key: Option<&Path>) -> Result<Answer> {
    ctx.ledger.require_existing()?;
    // The key is read before the long read: a wrong path fails at once.
    let key = key.map(crate::seal::read_key).transpose()?;
    let now_ms = ctx.clock.now_ms();
    let check = ctx.ledger.check_lines(
        crate::ledger::LineChecker::new(now_ms).whole_chain(),
        |_, _| {},
    )?;
    if let Some(broken) = check.findings.iter().find(|f| f.kind == "chain_broken") {
        return Err(Error::new(
            ErrorCode::IntegrityFindings,
            format!(
                "the chain is broken at line {}: {}; nothing was sealed",
                broken.line, broken.detail
            ),
        )
        .detail("line", broken.line)
        .hint("discuss verify shows every finding"));
    }
    let (Some(line), Some(sha256)) = (check.chain.last_line, check.chain.last_sha256) else {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "the ledger has no complete line to seal",
        ));
    };
    let seal = crate::seal::Seal {
        ledger: ctx.ledger.location(),
        line,
        sha256,
        chain_sha256: check
            .whole_chain
            .map(|digest| crate::record::chain::hex(&digest)),
        at: crate::clock::format_ms(now_ms),
        signature: None,
        public_key: None,
    };
    let seal = match &key {
        Some(key) => seal.sign(key),
        None => seal,
    };
    Ok(Answer::new(SealView(seal)))
}

fn keygen(output: &Path) -> Result<Answer> {
    let key = crate::seal::generate_key(output)?;
    Ok(Answer::new(KeygenView {
        key_file: output.display().to_string(),
        public_key: crate::seal::public_key_text(&key.verifying_key()),
        public_key_file: crate::seal::public_path(output).display().to_string(),
    }))
}

fn export(ctx: &Context, output: Option<&Path>) -> Result<Answer> {
    let Some(path) = output else {
        // The lines themselves are the answer, even with --json.
        ctx.out.to_stdout(|out| ctx.ledger.export(out))?;
        return Ok(Answer::streamed(0));
    };
    refuse_ledger_output(ctx, path)?;
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let failed = |e: std::io::Error| Error::io(path.display(), &e);
    let mut temp = tempfile::NamedTempFile::new_in(folder).map_err(failed)?;
    let lines = {
        let mut out = BufWriter::with_capacity(1 << 20, temp.as_file_mut());
        let lines = ctx.ledger.export(&mut out)?;
        out.flush().map_err(failed)?;
        lines
    };
    temp.as_file().sync_all().map_err(failed)?;
    temp.persist(path).map_err(|e| failed(e.error))?;
    Ok(Answer::new(ExportView {
        exported: lines,
        output: path.display().to_string(),
        ledger: ctx.ledger.location(),
    }))
}

/// `invalid_argument` for an output that is this ledger or one of its
/// derived files, or another ledger in use (a discuss cache beside it, or
/// a lock held on it): `export` replaces its output by a rename, and a
/// writer that had opened the old file would append to an unlinked inode
/// and report success. Nothing is created or changed.
fn refuse_ledger_output(ctx: &Context, output: &Path) -> Result<()> {
    let refuse = |why: String| {
        Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("will not export to {}: {why}", output.display()),
        )
        .detail("path", output.display().to_string())
        .hint("export to a new file (e.g. backup.jsonl), then move it where it belongs while no discuss process uses it"))
    };
    if let Some(ledger) = ctx.ledger.as_file() {
        if same_file(ledger.path(), output) {
            return refuse("it is the ledger itself".into());
        }
        if ledger
            .derived_paths()
            .iter()
            .any(|file| same_file(file, output))
        {
            return refuse("it is a file the ledger derives".into());
        }
    }
    if !output.exists() {
        return Ok(());
    }
    if crate::ledger::FileLedger::new(output.to_path_buf()).has_cache() {
        return refuse("it is a ledger in use (its discuss cache is beside it)".into());
    }
    if let Ok(file) = File::open(output)
        && let Err(std::fs::TryLockError::WouldBlock) = file.try_lock()
    {
        return refuse("a discuss process holds it locked as a ledger".into());
    }
    Ok(())
}

/// Whether two paths name one file: the same inode when both exist, else
/// the same absolute path once their folders are resolved (symlinks and
/// `..` included).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return (x.dev(), x.ino()) == (y.dev(), y.ino());
    }
    let resolved = |path: &Path| {
        let folder = match path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder,
            _ => Path::new("."),
        };
        Some(std::fs::canonicalize(folder).ok()?.join(path.file_name()?))
    };
    matches!((resolved(a), resolved(b)), (Some(x), Some(y)) if x == y)
}

fn import(ctx: &Context, path: &Path, skip_existing: bool) -> Result<Answer> {
    let (source, shown) = open_source(path)?;
    let len = source.metadata().map_err(|e| Error::io(&shown, &e))?.len();
    check_importable(&source, len, &shown)?;
    let stamp = ctx.stamp(None);
    let source = crate::ledger::import::Source::scan(&source, len, skip_existing, stamp)?;
    let done = ctx.ledger.import(&source)?;
    Ok(Answer::new(ImportView {
        imported: done.imported,
        skipped: skip_existing.then_some(done.skipped),
        source: shown,
        ledger: ctx.ledger.location(),
    }))
}

/// The file to import; standard input is first copied to a temporary file,
/// so that it can be checked whole before anything is written.
fn open_source(path: &Path) -> Result<(File, String)> {
    if path.as_os_str() != "-" {
        let shown = path.display().to_string();
        // A FIFO must not hang the open: it is refused, as is anything
        // but a regular file (`regular_file`).
        let file = crate::regular_file::open_regular(path).map_err(|unread| match unread {
            crate::regular_file::Unread::Io(e) => Error::new(
                ErrorCode::InvalidArgument,
                format!("cannot read {shown}: {e}"),
            )
            .detail("path", shown.clone()),
            _ => Error::new(
                ErrorCode::InvalidArgument,
                format!("{shown} is not a regular file"),
            )
            .detail("path", shown.clone())
            .hint("to import from a pipe, give - and send the lines to standard input"),
        })?;
        return Ok((file, shown));
    }
    let mut spool = tempfile::tempfile().map_err(|e| Error::io("a temporary file", &e))?;
    std::io::copy(&mut std::io::stdin().lock(), &mut spool)
        .map_err(|e| Error::io("standard input", &e))?;
    Ok((spool, "standard input".into()))
}

/// `invalid_argument` unless the file is complete lines in whole
/// operations: a last line without its newline, or an operation whose
/// lines do not all follow, would be a torn write in the ledger.
fn check_importable(source: &File, len: u64, shown: &str) -> Result<()> {
    let refuse = |why: String| {
        Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{shown} cannot be imported: {why}; nothing was written"),
        )
        .detail("path", shown.to_owned()))
    };
    if len == 0 {
        return Ok(());
    }
    let mut last = [0u8];
    std::os::unix::fs::FileExt::read_exact_at(source, &mut last, len - 1)
        .map_err(|e| Error::io(shown, &e))?;
    if last[0] != b'\n' {
        return refuse("its last line has no newline (a torn write?)".into());
    }
    let streamed = operations_of(
        |line| stream_lines(source, len, line),
        |_, line_no, line| ((), record_and_mark(line_no, line).1),
        |()| {},
    )
    .map_err(|e| Error::io(shown, &e))?;
    if streamed.cut_operation {
        return refuse(format!(
            "its lines after line {} are an operation cut short (a torn write)",
            streamed.lines
        ));
    }
    Ok(())
}

fn info(ctx: &Context) -> Result<Answer> {
    Ok(Answer::new(InfoView(ctx.ledger.info()?)))
}
