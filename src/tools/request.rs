//! A tool's request object, checked against its fields in the table:
//! unknown fields are refused, and each value is read as its kind says,
//! with the table's default when it is absent or null.

use super::{Kind, Tool};
use crate::error::{Error, ErrorCode, Result};
use serde_json::{Map, Value};

pub(super) struct Request {
    tool: &'static Tool,
    fields: Map<String, Value>,
}

fn type_error(field: &str, expected: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!("{field} must be {expected}"),
    )
    .detail("field", field)
}

fn required(field: &str) -> Error {
    Error::new(ErrorCode::InvalidArgument, format!("{field} is required")).detail("field", field)
}

impl Request {
    /// The request, once every field it has is one of the tool's.
    pub(super) fn parse(tool: &'static Tool, fields: Map<String, Value>) -> Result<Request> {
        if let Some(unknown) = fields.keys().find(|k| tool.field(k).is_none()) {
            let allowed: Vec<&str> = tool.fields.iter().map(|f| f.name).collect();
            return Err(Error::new(
                ErrorCode::UnknownField,
                format!("unknown field {unknown:?}"),
            )
            .detail("field", unknown.as_str())
            .detail("allowed", allowed.clone())
            .hint(format!("allowed fields: {}", allowed.join(", "))));
        }
        Ok(Request { tool, fields })
    }

    /// The value given, unless it is absent or null.
    pub(super) fn given(&self, field: &str) -> Option<&Value> {
        self.fields.get(field).filter(|v| !v.is_null())
    }

    pub(super) fn string(&self, field: &str) -> Result<String> {
        match self.given(field) {
            Some(Value::String(s)) => Ok(s.clone()),
            None => Err(required(field)),
            Some(_) if self.kind(field) == Kind::Payload => {
                Err(type_error(field, "a string of serialized JSON")
                    .hint(r#"serialize the body: "payload": "{\"body\":\"...\"}""#))
            }
            Some(_) => Err(type_error(field, "a string")),
        }
    }

    pub(super) fn optional_string(&self, field: &str) -> Result<Option<String>> {
        match self.given(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(type_error(field, "a string")),
        }
    }

    /// A string, or a list of strings (`Kind::Peer`, `Kind::Statuses`).
    pub(super) fn strings(&self, field: &str, expected: &str) -> Result<Vec<String>> {
        let one = |v: &Value| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| type_error(field, expected))
        };
        match self.given(field) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(one).collect(),
            Some(value) => one(value).map(|s| vec![s]),
        }
    }

    /// The integer given, or the table's default.
    pub(super) fn int(&self, field: &str) -> Result<i64> {
        match (self.given(field), self.kind(field)) {
            (None, Kind::Integer { default, .. }) => Ok(default),
            (Some(value), _) => value
                .as_i64()
                .ok_or_else(|| type_error(field, "an integer")),
            (None, _) => Err(required(field)),
        }
    }

    /// The boolean given, or the table's default.
    pub(super) fn bool(&self, field: &str) -> Result<bool> {
        match (self.given(field), self.kind(field)) {
            (None, Kind::Boolean { default }) => Ok(default),
            (Some(Value::Bool(b)), _) => Ok(*b),
            (Some(_), _) => Err(type_error(field, "true or false")),
            (None, _) => Err(required(field)),
        }
    }

    /// A number of dollars given as a JSON number (text is for command
    /// lines), or none.
    pub(super) fn dollars(&self, field: &str) -> Result<Option<&Value>> {
        match self.given(field) {
            Some(Value::String(_)) => Err(type_error(field, "a number, e.g. 0.5")),
            given => Ok(given),
        }
    }

    /// A usage object, checked, or none.
    pub(super) fn usage(&self, field: &str) -> Result<Option<crate::spend::Usage>> {
        self.given(field)
            .map(crate::spend::Usage::from_json)
            .transpose()
    }

    fn kind(&self, field: &str) -> Kind {
        // Only the code below asks, and only for the tool's own fields.
        self.tool.field(field).map_or(Kind::Name, |f| f.kind)
    }
}
