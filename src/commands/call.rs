//! `discuss call TOOL [JSON|-]`: the seed's request objects, verbatim.

use super::{Context, read_input};
use crate::error::{Error, ErrorCode, Result};
use crate::output::Answer;
use crate::tools::MAX_REQUEST_BYTES;
use clap::Args;
use serde_json::Value;
use std::path::Path;

// Take one of the seed's request objects and answer JSON (always).
//
// TOOL is ask_peer, wake_agent, reply_discussion, get_discussion,
// list_discussions or inbox. Unknown fields are refused. In ask_peer, max_turns, timeout_ms, turn_timeout_ms
// and wake_peer default as in `discuss ask`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss call get_discussion \\\n      '{\"discussion_id\":\"dsc_…\",\"include_receipts\":false}'\n  \
    echo '{\"agent_id\":\"agent-b\",...}' | discuss call wake_agent -"
)]
pub(crate) struct CallArgs {
    /// ask_peer, wake_agent, reply_discussion, get_discussion, list_discussions or inbox
    #[arg(value_name = "TOOL")]
    pub tool: String,
    /// The request object; `-` or nothing reads it from stdin (refused
    /// when stdin is a terminal and nothing is given)
    #[arg(value_name = "JSON|-")]
    pub request: Option<String>,
}

pub(crate) fn run(ctx: &Context, args: &CallArgs) -> Result<Answer> {
    let text = match args.request.as_deref() {
        // On a terminal nothing would come: say how instead of waiting.
        None if std::io::IsTerminal::is_terminal(&std::io::stdin()) => {
            return Err(Error::new(
                ErrorCode::Usage,
                format!("discuss call {} reads the request object from stdin, which is a terminal", args.tool),
            )
            .hint(format!("give it as an argument: discuss call {} '{{...}}'", args.tool))
            .hint("or pipe it: echo '{...}' | discuss call TOOL (or give - to read a terminal until Ctrl-D)"));
        }
        None | Some("-") => read_input(Path::new("-"), MAX_REQUEST_BYTES)?,
        Some(json) => json.to_owned(),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("the request is not JSON: {e}"),
        )
    })?;
    let Value::Object(request) = value else {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "the request must be a JSON object",
        ));
    };
    Ok(Answer::new(crate::tools::answer(
        ctx,
        &args.tool,
        request,
        crate::tools::Caller::default(),
    )?))
}
