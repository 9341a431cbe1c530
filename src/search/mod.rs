//! Search over what agents said (`discuss search`, `GET /v1/search`): a
//! word is a maximal run of Unicode letters and digits, compared
//! lower-cased, with no stemming and no stop words; a body's words are
//! those of its JSON string values, in order, never its keys. A query's
//! terms are words and `"quoted phrases"` (adjacent words in order); a
//! message matches when it holds every term. The same rules on every
//! backend: an index only proposes candidates, which are checked here.

mod database;
pub(crate) mod index;
pub(crate) mod run;
pub(crate) mod view;

use crate::error::{Error, ErrorCode, Result};
use serde_json::Value;

/// The most characters a snippet shows.
pub(crate) const SNIPPET_CHARS: usize = 160;

/// A parsed query: each term is one word or a phrase of several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Query {
    pub terms: Vec<Vec<String>>,
}

impl Query {
    /// `text` read as words and `"phrases"`; `invalid_argument` when it
    /// has no word at all (or a quote left open).
    pub(crate) fn parse(text: &str) -> Result<Query> {
        let refused = |why: &str| {
            Error::new(ErrorCode::InvalidArgument, format!("the search {why}"))
                .detail("field", "q")
                .hint("search for words, or \"a phrase\" in double quotes: discuss search 'auth \"token refresh\"'")
        };
        if text.matches('"').count() % 2 == 1 {
            return Err(refused("has a \" without its closing \""));
        }
        let mut terms = Vec::new();
        for (i, part) in text.split('"').enumerate() {
            let words: Vec<String> = words(part).map(|(_, _, w)| w).collect();
            if i % 2 == 1 {
                if !words.is_empty() {
                    terms.push(words);
                }
            } else {
                terms.extend(words.into_iter().map(|w| vec![w]));
            }
        }
        if terms.is_empty() {
            return Err(refused("holds no word (letters or digits)"));
        }
        Ok(Query { terms })
    }

    /// Where in `text` the first match of a term begins (a byte offset),
    /// when `text` holds every term; `None` otherwise.
    pub(crate) fn find(&self, text: &str) -> Option<usize> {
        let found: Vec<(usize, usize, String)> = words(text).collect();
        let mut first: Option<usize> = None;
        for term in &self.terms {
            let at = found.windows(term.len()).find_map(|window| {
                window
                    .iter()
                    .zip(term)
                    .all(|((_, _, w), t)| w == t)
                    .then_some(window[0].0)
            })?;
            first = Some(first.map_or(at, |f| f.min(at)));
        }
        first
    }
}

/// The words of `text`: (start byte, end byte, the word lower-cased).
pub(crate) fn words(text: &str) -> impl Iterator<Item = (usize, usize, String)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = chars.peek() {
            if c.is_alphanumeric() {
                break;
            }
            chars.next();
        }
        let (start, _) = *chars.peek()?;
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if !c.is_alphanumeric() {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        Some((start, end, text[start..end].to_lowercase()))
    })
}

/// The text a body is searched in: its JSON string values in document
/// order, one a line (its keys, numbers and the like are not words of it).
pub(crate) fn body_text(body: &Value) -> String {
    fn gather(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(s);
            }
            Value::Array(items) => items.iter().for_each(|v| gather(v, out)),
            Value::Object(fields) => fields.values().for_each(|v| gather(v, out)),
            _ => {}
        }
    }
    let mut text = String::new();
    gather(body, &mut text);
    text
}

/// At most `SNIPPET_CHARS` characters of `text` around the byte offset
/// `at`, on one line, `…` where it was cut.
pub(crate) fn snippet(text: &str, at: usize) -> String {
    let flat: Vec<char> = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let at_char = text[..at.min(text.len())].chars().count();
    if flat.len() <= SNIPPET_CHARS {
        return flat.into_iter().collect();
    }
    // A third of the room before the match, the rest after it.
    let room = SNIPPET_CHARS - 2;
    let mut start = at_char.saturating_sub(room / 3);
    let end = (start + room).min(flat.len());
    start = end.saturating_sub(room).min(start);
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(&flat[start..end]);
    if end < flat.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn words_are_runs_of_letters_and_digits_lower_cased() {
        let found: Vec<String> = words("Auth-Refactor, v2: ÉTÉ naïve_42 日本語!")
            .map(|(_, _, w)| w)
            .collect();
        assert_eq!(
            found,
            ["auth", "refactor", "v2", "été", "naïve", "42", "日本語"]
        );
    }

    #[test]
    fn every_term_must_match_and_a_phrase_is_adjacent_words_in_order() {
        let q = Query::parse(r#"token "auth refactor""#).unwrap();
        assert_eq!(q.terms, [vec!["token"], vec!["auth", "refactor"]]);
        assert!(q.find("The AUTH refactor needs a token.").is_some());
        assert!(q.find("refactor auth token").is_none(), "order");
        assert!(q.find("auth big refactor token").is_none(), "adjacent");
        assert!(q.find("auth refactor").is_none(), "every term");
        assert_eq!(q.find("x token, auth refactor"), Some(2));
        for bad in ["", "  ... ", "\"open"] {
            assert!(Query::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_body_is_its_string_values_never_its_keys() {
        let body = json!({"body": "hello", "secret_key": 7, "list": ["a", {"deep": "world"}]});
        assert_eq!(body_text(&body), "hello\na\nworld");
        assert!(
            Query::parse("secret")
                .unwrap()
                .find(&body_text(&body))
                .is_none()
        );
    }

    #[test]
    fn a_snippet_is_at_most_160_characters_around_the_match() {
        let text = format!("{} needle {}", "a ".repeat(200), "b ".repeat(200));
        let at = text.find("needle").unwrap();
        let shown = snippet(&text, at);
        assert!(
            shown.chars().count() <= SNIPPET_CHARS,
            "{}",
            shown.chars().count()
        );
        assert!(shown.starts_with('…') && shown.ends_with('…') && shown.contains("needle"));
        assert_eq!(snippet("short\ntext", 0), "short text");
    }
}
