//! `<ledger>.summary`: one line per discussion of the base, so that the
//! readers of many discussions (`list` with any filter) read a line each
//! instead of deriving every discussion from its records.
//!
//! Each line holds a discussion's row (opaque here: JSON the command layer
//! writes and reads, through `Summarize`) and the instant from which that
//! row holds whatever the clock says: past its conversation deadline and
//! its newest record, a discussion changes only when a new line touches it.
//! A reader derives instead, from the index, the discussions touched after
//! the base (the checkpoint knows them) and those whose row is not yet
//! settled at its clock: the few that may still be open or active.
//!
//! The file belongs to one base: its header names the base's header hash
//! (itself naming the ledger's device, inode and mark), the number of
//! lines, and each line carries its own hash. Anything that does not match
//! means it is not used, and the reader derives; a reader that derived every
//! discussion writes the file anew. It is written whole under a random
//! name and renamed, by a reader (under the shared lock: any two write the
//! same bytes) or by the writer that merges a new base, which carries the
//! old lines over and summarizes again only the discussions the merge
//! touched. Deleting it changes nothing but speed.

use crate::ledger::file::private_file::{open_derived, temporary_beside};
use crate::ledger::hash::hash64;
use crate::ledger::summary::{Summary, SummaryLine, Untrusted};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

const MAGIC: &str = "DSCSUM01";

pub(crate) fn summary_path(ledger: &Path) -> PathBuf {
    super::with_suffix(ledger, ".summary")
}

/// Reads the summary of the base whose header hash is `base`, line by
/// line, handing each (id, settled from, row) to `line`; the lines come
/// in id order. `Err` when the file is missing, belongs to another base,
/// or any line is damaged, out of order, or missing (the last line counts
/// them): the caller must then forget what it was handed.
pub(crate) fn read(
    ledger: &Path,
    base: u64,
    mut line: impl FnMut(&str, i64, &str) -> Result<(), Untrusted>,
) -> Result<(), Untrusted> {
    let file = open_derived(&summary_path(ledger)).ok_or(Untrusted)?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut text = String::new();
    reader.read_line(&mut text).map_err(|_| Untrusted)?;
    if text != format!("{MAGIC} {base:016x}\n") {
        return Err(Untrusted);
    }
    let mut read = 0u64;
    let mut previous = String::new();
    loop {
        text.clear();
        if reader.read_line(&mut text).map_err(|_| Untrusted)? == 0 {
            // No count line: cut short.
            return Err(Untrusted);
        }
        let body = text.strip_suffix('\n').ok_or(Untrusted)?;
        let (hash, rest) = body.split_once('\t').ok_or(Untrusted)?;
        if hash == END {
            let whole = rest.parse() == Ok(read)
                && reader.read_line(&mut text).map_err(|_| Untrusted)? == 0;
            return if whole { Ok(()) } else { Err(Untrusted) };
        }
        if u64::from_str_radix(hash, 16) != Ok(hash64(rest.as_bytes())) {
            return Err(Untrusted);
        }
        let mut fields = rest.splitn(3, '\t');
        let (Some(id), Some(from), Some(row)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(Untrusted);
        };
        if id <= previous.as_str() {
            return Err(Untrusted);
        }
        line(id, from.parse().map_err(|_| Untrusted)?, row)?;
        previous.clear();
        previous.push_str(id);
        read += 1;
    }
}

/// The first field of the last line, which counts the lines before it
/// (never a hash: not hexadecimal).
const END: &str = "end";

/// Writes the summary of a base, a line at a time in id order, under a
/// random name; `finish` renames it into place (dropped unfinished, it
/// leaves nothing).
pub(crate) struct SummaryWriter {
    out: BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
    count: u64,
}

impl SummaryWriter {
    pub(crate) fn new(ledger: &Path, base: u64) -> io::Result<SummaryWriter> {
        let target = summary_path(ledger);
        let mut out = BufWriter::with_capacity(1 << 20, temporary_beside(&target)?);
        writeln!(out, "{MAGIC} {base:016x}")?;
        Ok(SummaryWriter {
            out,
            target,
            count: 0,
        })
    }

    pub(crate) fn push(&mut self, id: &str, summary: &Summary) -> io::Result<()> {
        self.push_line(&SummaryLine::new(id, summary))
    }

    pub(crate) fn push_line(&mut self, line: &SummaryLine) -> io::Result<()> {
        let rest = line.text();
        writeln!(self.out, "{:016x}\t{rest}", hash64(rest.as_bytes()))?;
        self.count += 1;
        Ok(())
    }

    pub(crate) fn finish(mut self) -> io::Result<()> {
        writeln!(self.out, "{END}\t{}", self.count)?;
        let temp = self.out.into_inner().map_err(|e| e.into_error())?;
        temp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}
