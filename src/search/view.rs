//! `discuss search`: `{"matches":[{"discussion_id","message_id","turn",
//! "from_agent_id","at","snippet"}]}`, and a block a match for a person.

use super::run::Found;
use crate::escape::printable;
use crate::output::{At, Sink, Style, View, relative};
use serde::Serialize;
use serde_json::json;

pub(crate) struct SearchView {
    pub found: Vec<Found>,
    pub now_ms: i64,
}

impl Serialize for SearchView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let matches: Vec<_> = self
            .found
            .iter()
            .map(|f| {
                json!({"discussion_id": f.discussion_id, "message_id": f.message_id,
                    "turn": f.turn, "from_agent_id": f.from_agent_id, "at": At(f.at_ms),
                    "snippet": f.snippet})
            })
            .collect();
        json!({ "matches": matches }).serialize(serializer)
    }
}

impl View for SearchView {
    /// One block a match: ids stay whole at any width.
    fn human(&self, _style: &Style, out: &mut Sink) {
        if self.found.is_empty() {
            out.text("no message holds every word of the search\n");
            return;
        }
        let mut text = String::new();
        for f in &self.found {
            text.push_str(&format!(
                "{} turn {} · {} · {}\n  {}\n",
                f.discussion_id,
                f.turn,
                printable(&f.from_agent_id, false),
                relative(f.at_ms, self.now_ms),
                printable(&f.snippet, false)
            ));
        }
        out.text(&text);
    }

    fn ids(&self) -> Vec<&str> {
        self.found
            .iter()
            .map(|f| f.discussion_id.as_str())
            .collect()
    }
}
