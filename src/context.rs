//! The dispatch context: what the agent knows at a point, as a JSON object, and why one could
//! not be used.

use serde_json::{Map, Value};

use crate::view::kind_of;
pub use crate::view::DispatchError;

/// The dispatch context: what the agent knows at this point, as a JSON object. All fields are
/// optional; `hook`, `turn` and `session_id` are filled in before hooks see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Context {
    /// Always a JSON object.
    fields: Value,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            fields: Value::Object(Map::new()),
        }
    }
}

/// Why a context's (or an agent payload's) text could not be read ([`Context::read_text`]);
/// each names what was read ("stdin").
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// Reading failed.
    #[error("cannot read {what}: {source}")]
    Read {
        /// What was read.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is longer than a context may be.
    #[error("{what} is over {most} bytes")]
    TooLarge {
        /// What was read.
        what: String,
        /// The most a context may be ([`Context::MAX_BYTES`]).
        most: usize,
    },
    /// It is not UTF-8 text.
    #[error("{0} is not UTF-8")]
    NotUtf8(String),
}

impl Context {
    /// The largest context (or agent payload) read as text.
    pub const MAX_BYTES: usize = 16 * 1024 * 1024;

    /// Read a context's (or an agent payload's) text from `input`, at most
    /// [`Context::MAX_BYTES`]; `what` names it in the error ("stdin").
    pub fn read_text(input: impl std::io::Read, what: &str) -> Result<String, InputError> {
        use std::io::Read;
        let mut buf = Vec::new();
        input
            .take(Self::MAX_BYTES as u64 + 1)
            .read_to_end(&mut buf)
            .map_err(|source| InputError::Read {
                what: what.to_string(),
                source,
            })?;
        if buf.len() > Self::MAX_BYTES {
            return Err(InputError::TooLarge {
                what: what.to_string(),
                most: Self::MAX_BYTES,
            });
        }
        String::from_utf8(buf).map_err(|_| InputError::NotUtf8(what.to_string()))
    }

    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse a JSON object; empty input is an empty context.
    pub fn from_json(text: &str) -> Result<Self, DispatchError> {
        if text.trim().is_empty() {
            return Ok(Self::new());
        }
        match serde_json::from_str::<Value>(text) {
            Ok(fields @ Value::Object(_)) => Ok(Context { fields }),
            Ok(other) => Err(DispatchError::Context(format!(
                "expected a JSON object, found {}",
                kind_of(&other)
            ))),
            Err(e) => Err(DispatchError::Context(format!("not valid JSON: {e}"))),
        }
    }

    /// Set a field (flags such as `--turn` override what the agent sent).
    pub fn set(&mut self, key: &str, value: impl Into<Value>) -> &mut Self {
        if let Value::Object(m) = &mut self.fields {
            m.insert(key.to_string(), value.into());
        }
        self
    }

    /// The context as a JSON value.
    pub fn to_value(&self) -> Value {
        self.fields.clone()
    }

    /// A field.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// The fields hookd reads, typed and checked (see `view`).
    pub(crate) fn view(&self) -> Result<crate::view::View<'_>, DispatchError> {
        crate::view::View::of(&self.fields)
    }

    /// `tool.<key>` (for example `tool.name`, `tool.failed`).
    pub(crate) fn tool(&self, key: &str) -> Option<&Value> {
        self.fields.get("tool").and_then(|t| t.get(key))
    }

    /// The JSON a hook command receives on stdin.
    pub(crate) fn to_json_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.fields).unwrap_or_else(|_| b"{}".to_vec())
    }
}
