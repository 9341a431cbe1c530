//! The file ledger's search index: a tantivy index in `<ledger>.search/`,
//! derived like the cache (safe to delete, made again by the next search)
//! and caught up from the lines written since its last commit, whose
//! payload says how far it read (and of which file). It proposes
//! candidates only: each is checked against the derived discussion.

use super::Query;
use crate::discussion::envelope::Envelope;
use crate::error::{Error, ErrorCode, Result};
use crate::record::{Body, Record};
use std::io::{BufRead, Seek};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, PhraseQuery, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value as _,
};
use tantivy::tokenizer::{LowerCaser, SimpleTokenizer, TextAnalyzer};
use tantivy::{Index, IndexWriter, Order, TantivyDocument, Term};

/// The tokenizer of the words: runs of letters and digits, lower-cased,
/// nothing dropped (tantivy's default drops words over 40 bytes).
const WORDS: &str = "discuss_words";

/// A message the index proposes: where it is and when it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub discussion_id: String,
    pub message_id: String,
    pub at_ms: i64,
    /// Its line in the ledger (ties of `at_ms` go in ledger order).
    pub line: u64,
}

/// How far the index read, and of which file (its commit's payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Indexed {
    dev: u64,
    ino: u64,
    offset: u64,
    lines: u64,
}

struct Fields {
    discussion_id: Field,
    message_id: Field,
    at_ms: Field,
    line: Field,
    words: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(WORDS)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        discussion_id: builder.add_text_field("discussion_id", STRING | STORED),
        message_id: builder.add_text_field("message_id", STRING | STORED),
        at_ms: builder.add_i64_field("at_ms", INDEXED | FAST | STORED),
        line: builder.add_u64_field("line", FAST | STORED),
        words: builder.add_text_field("words", words),
    };
    (builder.build(), fields)
}

/// Where the index of the ledger at `ledger` lives.
pub(crate) fn folder_of(ledger: &Path) -> PathBuf {
    let mut name = ledger.as_os_str().to_owned();
    name.push(".search");
    PathBuf::from(name)
}

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::IoError,
        format!("the search index could not be {what}: {e}"),
    )
    .hint("it is derived: delete the folder <ledger>.search and search again")
}

/// The index, opened (made when missing, or made anew when it is of
/// another file or of more than the ledger holds).
fn open(ledger: &Path) -> Result<(Index, Fields)> {
    let folder = folder_of(ledger);
    let (schema, fields) = schema();
    let meta = std::fs::metadata(ledger).map_err(|e| Error::io("the ledger", &e))?;
    let usable = |index: &Index| match indexed(index) {
        Some(at) => at.dev == meta.dev() && at.ino == meta.ino() && at.offset <= meta.len(),
        None => true,
    };
    let opened = Index::open_in_dir(&folder)
        .ok()
        .filter(|index| index.schema() == schema && usable(index));
    let index = match opened {
        Some(index) => index,
        None => {
            let _ = std::fs::remove_dir_all(&folder);
            std::fs::create_dir_all(&folder).map_err(|e| failed("made", e))?;
            Index::create_in_dir(&folder, schema).map_err(|e| failed("made", e))?
        }
    };
    index.tokenizers().register(
        WORDS,
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .build(),
    );
    Ok((index, fields))
}

fn indexed(index: &Index) -> Option<Indexed> {
    let payload = index.load_metas().ok()?.payload?;
    serde_json::from_str(&payload).ok()
}

/// Indexes the messages of the whole lines written since the last commit
/// (a torn last line waits for its end); how many lines it read.
fn catch_up(index: &Index, fields: &Fields, ledger: &Path) -> Result<u64> {
    let file = std::fs::File::open(ledger).map_err(|e| Error::io("the ledger", &e))?;
    let meta = file.metadata().map_err(|e| Error::io("the ledger", &e))?;
    let mut at = indexed(index).unwrap_or(Indexed {
        dev: meta.dev(),
        ino: meta.ino(),
        offset: 0,
        lines: 0,
    });
    if at.offset >= meta.len() {
        return Ok(0);
    }
    // One writer at a time; another search catching up is waited for.
    let mut writer: IndexWriter = writer_of(index)?;
    // What another writer committed meanwhile.
    if let Some(committed) = indexed(index) {
        at = committed;
    }
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    reader
        .seek(std::io::SeekFrom::Start(at.offset))
        .map_err(|e| Error::io("the ledger", &e))?;
    let mut line = Vec::new();
    let mut read = 0;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io("the ledger", &e))?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        at.offset += n as u64;
        at.lines += 1;
        read += 1;
        if let Some(document) = document_of(fields, &line, at.lines) {
            writer
                .add_document(document)
                .map_err(|e| failed("written", e))?;
        }
    }
    let mut commit = writer.prepare_commit().map_err(|e| failed("written", e))?;
    commit.set_payload(&serde_json::to_string(&at).unwrap_or_default());
    commit.commit().map_err(|e| failed("written", e))?;
    Ok(read)
}

fn writer_of(index: &Index) -> Result<IndexWriter> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match index.writer_with_num_threads(1, 50_000_000) {
            Ok(writer) => return Ok(writer),
            Err(tantivy::TantivyError::LockFailure(..)) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(failed("opened for writing", e)),
        }
    }
}

/// The document of a line, when it is a message whose envelope parses (a
/// malformed or foreign one is left to the check to refuse; a torn or
/// unreadable line is no document).
fn document_of(fields: &Fields, line: &[u8], line_no: u64) -> Option<TantivyDocument> {
    let record = Record::parse(line, line_no as usize).ok()?;
    let Body::Message(message) = &record.body else {
        return None;
    };
    let discussion_id = message.correlation_id.as_deref()?;
    let envelope = Envelope::parse(&message.payload, discussion_id).ok()?;
    let mut document = TantivyDocument::default();
    document.add_text(fields.discussion_id, discussion_id);
    document.add_text(fields.message_id, &record.id);
    document.add_i64(fields.at_ms, record.at_ms);
    document.add_u64(fields.line, line_no);
    document.add_text(fields.words, super::body_text(&envelope.body));
    Some(document)
}

/// The messages that hold every term of `query`, newest first: `take`
/// of them after the first `skip`, once the index has caught up.
pub(crate) fn candidates(
    ledger: &Path,
    query: &Query,
    skip: usize,
    take: usize,
) -> Result<Vec<Candidate>> {
    let (index, fields) = open(ledger)?;
    catch_up(&index, &fields, ledger)?;
    let reader = index.reader().map_err(|e| failed("read", e))?;
    let searcher = reader.searcher();
    let term = |word: &str| Term::from_field_text(fields.words, word);
    let clauses: Vec<(Occur, Box<dyn tantivy::query::Query>)> = query
        .terms
        .iter()
        .map(|words| {
            let clause: Box<dyn tantivy::query::Query> = match words.as_slice() {
                [one] => Box::new(TermQuery::new(term(one), IndexRecordOption::Basic)),
                many => Box::new(PhraseQuery::new(many.iter().map(|w| term(w)).collect())),
            };
            (Occur::Must, clause)
        })
        .collect();
    let found = searcher
        .search(
            &BooleanQuery::new(clauses),
            &TopDocs::with_limit(take.max(1))
                .and_offset(skip)
                .order_by_fast_field::<i64>("at_ms", Order::Desc),
        )
        .map_err(|e| failed("searched", e))?;
    let mut candidates = Vec::with_capacity(found.len());
    for (_, address) in found {
        let document: TantivyDocument = searcher.doc(address).map_err(|e| failed("read", e))?;
        let text = |field| {
            document
                .get_first(field)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        candidates.push(Candidate {
            discussion_id: text(fields.discussion_id),
            message_id: text(fields.message_id),
            at_ms: document
                .get_first(fields.at_ms)
                .and_then(|v| v.as_i64())
                .unwrap_or_default(),
            line: document
                .get_first(fields.line)
                .and_then(|v| v.as_u64())
                .unwrap_or_default(),
        });
    }
    Ok(candidates)
}
