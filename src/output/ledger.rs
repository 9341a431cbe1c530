//! The ledger as a whole: `verify`, `ledger export|import|info`.

use super::discussion::FindingJson;
use super::text::{count, hanging, printable};
use super::{Sink, Style, View};
use crate::discussion::Discussion;
use crate::ledger::{ChainSummary, Info, LineCheck, LineFinding, UnreadableLine};
use serde::Serialize;

/// `verify`: what a full replay found.
pub(crate) struct VerifyView {
    pub ok: bool,
    /// Where the ledger is, as it is shown.
    pub ledger: String,
    /// Where the next write moves a torn tail (a file's `.torn` file);
    /// none for a database, whose writers refuse one.
    pub torn_moves_to: Option<String>,
    pub lines: LineCheck,
    pub discussions: usize,
    /// The invalid discussions, newest first.
    pub(crate) invalid: Vec<Discussion>,
    /// `--seal`: the seal that held.
    pub seal: Option<SealHeld>,
}

/// `verify --seal`: the sealed line is there with its digest.
#[derive(Debug, Serialize)]
pub(crate) struct SealHeld {
    pub line: u64,
    /// `every_line`: lines 1 to `line` are as sealed; `its_line`: a seal
    /// of an older `discuss`, which holds only its own line.
    pub covers: &'static str,
    pub sha256: String,
    pub at: String,
    /// The key the seal's signature verified with (`None`: unsigned).
    pub signed_by: Option<String>,
    /// Whether that key was the one `--public-key` named (else only the
    /// seal's own key: it proves the seal unaltered, not whose it is).
    pub key_pinned: bool,
}

impl Serialize for VerifyView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct VerifyJson<'a> {
            ok: bool,
            ledger: String,
            records: u64,
            discussions: usize,
            unreadable_lines: &'a [UnreadableLine],
            torn_tail_bytes: u64,
            ledger_findings: &'a [LineFinding],
            invalid_discussions: Vec<InvalidJson<'a>>,
            chain: &'a ChainSummary,
            #[serde(skip_serializing_if = "Option::is_none")]
            seal: Option<&'a SealHeld>,
        }
        #[derive(Serialize)]
        struct InvalidJson<'a> {
            discussion_id: &'a str,
            integrity_findings: Vec<FindingJson<'a>>,
        }
        VerifyJson {
            ok: self.ok,
            ledger: self.ledger.clone(),
            records: self.lines.records,
            discussions: self.discussions,
            unreadable_lines: &self.lines.unreadable,
            torn_tail_bytes: self.lines.torn_tail,
            ledger_findings: &self.lines.findings,
            invalid_discussions: self
                .invalid
                .iter()
                .map(|d| InvalidJson {
                    discussion_id: &d.id,
                    integrity_findings: d.findings.iter().map(FindingJson::of).collect(),
                })
                .collect(),
            chain: &self.lines.chain,
            seal: self.seal.as_ref(),
        }
        .serialize(serializer)
    }
}

impl View for VerifyView {
    /// 7 (`integrity_findings`) when anything is wrong.
    fn exit_status(&self) -> u8 {
        if self.ok {
            0
        } else {
            crate::error::ErrorCode::IntegrityFindings.exit_status()
        }
    }

    /// A line a problem, the count of everything, then the chain (and the
    /// seal).
    fn human(&self, style: &Style, out: &mut Sink) {
        // On a terminal, wrapped at word boundaries (a digest stays whole)
        // with the rest of a line indented, not cut by the terminal.
        let put = |out: &mut Sink, line: String| out.text(&hanging("", &line, 2, style.width));
        let lines = &self.lines;
        for u in &lines.unreadable {
            put(
                out,
                format!(
                    "line {}: unreadable: {}",
                    u.line,
                    printable(&u.detail, false)
                ),
            );
        }
        for f in &lines.findings {
            put(
                out,
                format!(
                    "line {}: {}: {}",
                    f.line,
                    f.kind,
                    printable(&f.detail, false)
                ),
            );
        }
        if lines.torn_tail > 0 {
            let moved = match &self.torn_moves_to {
                Some(path) => format!("moved to {path} by the next write"),
                None => "refused by writers until removed by hand".into(),
            };
            put(
                out,
                format!(
                    "torn tail: {} bytes after the last complete line ({moved})",
                    lines.torn_tail
                ),
            );
        }
        for d in &self.invalid {
            for f in &d.findings {
                put(
                    out,
                    format!(
                        "{}: line {}: {}: {}",
                        d.id,
                        f.line,
                        f.kind.as_str(),
                        printable(&f.detail, false)
                    ),
                );
            }
        }
        put(
            out,
            format!(
                "{}: {}, {}, {}, {}, {}, {}",
                if self.ok { "ok" } else { "PROBLEMS" },
                count(lines.records, "record", "records"),
                count(self.discussions as u64, "discussion", "discussions"),
                count(
                    lines.unreadable.len() as u64,
                    "unreadable line",
                    "unreadable lines"
                ),
                count(lines.findings.len() as u64, "line finding", "line findings"),
                count(lines.torn_tail, "torn byte", "torn bytes"),
                count(
                    self.invalid.len() as u64,
                    "invalid discussion",
                    "invalid discussions"
                ),
            ),
        );
        // Then what vouches for the history: the chain, and the seal.
        let chain = &lines.chain;
        match (chain.first_chained_line, &chain.last_sha256) {
            (Some(first), Some(last)) => put(
                out,
                format!(
                    "chain: {} chained from line {first}; the last line hashes to sha256:{last}",
                    count(chain.lines_chained, "line", "lines")
                ),
            ),
            (_, None) => put(out, "chain: the ledger has no lines yet".to_owned()),
            _ => put(
                out,
                "chain: no line is chained (written before chaining)".to_owned(),
            ),
        }
        if let Some(seal) = &self.seal {
            let signed = match (&seal.signed_by, seal.key_pinned) {
                (Some(key), true) => format!(", signed by {key}"),
                (Some(key), false) => format!(
                    ", signed by the seal's own key {key} (pass --public-key to know whose)"
                ),
                (None, _) => ", unsigned".to_owned(),
            };
            let held = match seal.covers {
                "every_line" => format!("lines 1 to {} are as sealed", seal.line),
                _ => format!(
                    "line {} still hashes as sealed (an older seal, of its line only: seal again to hold every line)",
                    seal.line
                ),
            };
            put(
                out,
                format!(
                    "seal: {held}, sha256:{} at {}{signed}",
                    seal.sha256, seal.at
                ),
            );
        }
    }
}

/// `ledger export --output PATH`: how many lines went where.
#[derive(Serialize)]
pub(crate) struct ExportView {
    pub exported: u64,
    pub output: String,
    /// Where the ledger is, as it is shown.
    #[serde(skip)]
    pub ledger: String,
}

impl View for ExportView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        out.text(&format!(
            "exported {} from {} to {}\n",
            count(self.exported, "line", "lines"),
            self.ledger,
            self.output
        ));
    }
}

/// `ledger import`: how many lines came from where.
#[derive(Serialize)]
pub(crate) struct ImportView {
    pub imported: u64,
    /// With `--skip-existing`: the records left out because the ledger
    /// holds them already.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    #[serde(skip)]
    pub source: String,
    /// Where the ledger is, as it is shown.
    #[serde(skip)]
    pub ledger: String,
}

impl View for ImportView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        out.text(&format!(
            "imported {} from {} into {}\n",
            count(self.imported, "line", "lines"),
            self.source,
            self.ledger
        ));
        if let Some(skipped) = self.skipped {
            out.text(&format!(
                "skipped {} the ledger holds already\n",
                count(skipped, "record", "records")
            ));
        }
    }
}

/// `ledger seal`: the seal, one JSON object whatever the output (it is
/// meant to be kept as it is).
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct SealView(pub crate::seal::Seal);

impl View for SealView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        let json = serde_json::to_string(&self.0).unwrap_or_default();
        out.text(&format!("{json}\n"));
    }
}

/// `ledger keygen`: where the key went, and its public key.
#[derive(Serialize)]
pub(crate) struct KeygenView {
    pub key_file: String,
    pub public_key: String,
    pub public_key_file: String,
}

impl View for KeygenView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        out.text(&format!(
            "signing key written to {} (keep it secret: it signs seals)\npublic key {} (also in {}; give it to whoever checks seals)\n",
            self.key_file, self.public_key, self.public_key_file
        ));
    }
}

/// `ledger info`: which ledger, and how big.
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct InfoView(pub Info);

impl View for InfoView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        let info = &self.0;
        out.text(&format!(
            "kind      {}\nlocation  {}\nlines     {}\nbytes     {}\n",
            info.kind,
            printable(&info.location, false),
            info.lines,
            info.bytes
        ));
    }
}
