//! The context fields hookd itself reads, typed and validated once per dispatch: one rule for
//! all of them (absent or null is "not given"; any other type than the declared one is an error
//! naming the field), instead of string keys read where each is needed, each with its own
//! leniency. Everything else in the context passes to hooks untouched.

use serde::Deserialize;
use serde_json::Value;

/// The context could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DispatchError {
    /// The context is not a JSON object, or a field has the wrong type.
    #[error("invalid dispatch context: {0}")]
    Context(String),
}

/// How a JSON value is named in messages: "a string", "a list".
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The typed view of a dispatch context. Strings borrow from the context.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct View<'a> {
    #[serde(borrow)]
    pub session_id: Option<&'a str>,
    #[serde(borrow)]
    pub mode: Option<&'a str>,
    pub turn: Option<u64>,
    pub session_turn: Option<u64>,
    pub todo_count: Option<u64>,
    pub max_turns: Option<u64>,
    pub stalled_strikes: Option<u64>,
    #[serde(borrow)]
    pub finish_reason: Option<&'a str>,
    #[serde(borrow)]
    pub prompt: Option<&'a str>,
    #[serde(borrow)]
    pub cwd: Option<&'a str>,
    pub is_sub_agent: Option<bool>,
    pub stop_hook_active: Option<bool>,
    #[serde(borrow)]
    pub incomplete_todos: Option<Vec<Todo<'a>>>,
    #[serde(borrow)]
    pub tool: Option<Tool<'a>>,
}

/// `tool`: the call a tool point is about. Its `input` and `result` stay raw JSON.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Tool<'a> {
    #[serde(borrow)]
    pub name: Option<&'a str>,
    pub failed: Option<bool>,
}

/// One open todo: a line of text, or `{status, content}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Todo<'a> {
    Text(&'a str),
    Item {
        #[serde(default, borrow)]
        status: Option<&'a str>,
        #[serde(default, borrow)]
        content: Option<&'a str>,
    },
}

/// Each field's declared kind, for the error message (`tool.name` for nested ones).
const KINDS: &[(&str, Kind)] = &[
    ("session_id", Kind::Text),
    ("mode", Kind::Text),
    ("turn", Kind::Count),
    ("session_turn", Kind::Count),
    ("todo_count", Kind::Count),
    ("max_turns", Kind::Count),
    ("stalled_strikes", Kind::Count),
    ("finish_reason", Kind::Text),
    ("prompt", Kind::Text),
    ("cwd", Kind::Text),
    ("is_sub_agent", Kind::Flag),
    ("stop_hook_active", Kind::Flag),
    ("incomplete_todos", Kind::Todos),
    ("tool", Kind::Object),
    ("tool.name", Kind::Text),
    ("tool.failed", Kind::Flag),
];

#[derive(Clone, Copy)]
enum Kind {
    Text,
    Count,
    Flag,
    Todos,
    Object,
}

impl Kind {
    fn holds(self, v: &Value) -> bool {
        match (self, v) {
            (_, Value::Null) => true,
            (Kind::Text, Value::String(_)) => true,
            (Kind::Count, Value::Number(n)) => n.as_u64().is_some(),
            (Kind::Flag, Value::Bool(_)) => true,
            (Kind::Object, Value::Object(_)) => true,
            (Kind::Todos, Value::Array(items)) => items.iter().all(|t| match t {
                Value::String(_) => true,
                Value::Object(o) => ["status", "content"]
                    .iter()
                    .all(|k| o.get(*k).is_none_or(|v| v.is_string() || v.is_null())),
                _ => false,
            }),
            _ => false,
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Kind::Text => "a string",
            Kind::Count => "a whole number ≥ 0",
            Kind::Flag => "true or false",
            Kind::Todos => "a list of strings or {status, content} objects",
            Kind::Object => "an object",
        }
    }
}

impl<'a> View<'a> {
    /// Read the view from a context object.
    pub(crate) fn of(context: &'a Value) -> Result<View<'a>, DispatchError> {
        View::deserialize(context).map_err(|e| {
            // Name the field and what it must be, as a person would want to read it.
            for (path, kind) in KINDS {
                let found = match path.split_once('.') {
                    Some((outer, inner)) => context.get(outer).and_then(|o| o.get(inner)),
                    None => context.get(path),
                };
                if let Some(v) = found.filter(|v| !kind.holds(v)) {
                    return DispatchError::Context(format!(
                        "`{path}` must be {}, found {}",
                        kind.expected(),
                        kind_of(v)
                    ));
                }
            }
            DispatchError::Context(e.to_string())
        })
    }

    /// `tool.name`, or "".
    pub(crate) fn tool_name(&self) -> &'a str {
        self.tool.as_ref().and_then(|t| t.name).unwrap_or_default()
    }

    /// `tool.failed`, false when absent.
    pub(crate) fn tool_failed(&self) -> bool {
        self.tool.as_ref().and_then(|t| t.failed).unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_known_field_of_the_wrong_type_is_an_error_naming_it() {
        let wrong = |k: Kind| match k {
            Kind::Text => json!(1),
            Kind::Count | Kind::Flag | Kind::Todos | Kind::Object => json!("x"),
        };
        for (path, kind) in KINDS {
            let ctx = match path.split_once('.') {
                Some((outer, inner)) => json!({ outer: { inner: wrong(*kind) } }),
                None => json!({ *path: wrong(*kind) }),
            };
            let e = View::of(&ctx).expect_err(path).to_string();
            assert!(e.contains(&format!("`{path}` must be")), "{path}: {e}");
        }
        let ok = json!({"turn": 3, "todo_count": null, "tool": {"name": "Bash", "input": {"x": 1}},
                        "incomplete_todos": ["a", {"status": "pending", "content": "b"}], "other": [1]});
        let v = View::of(&ok).unwrap();
        assert_eq!(
            (v.turn, v.todo_count, v.tool_name()),
            (Some(3), None, "Bash")
        );
    }
}
