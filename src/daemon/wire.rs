//! The daemon's request and answer bodies, one type each for both sides: the server reads
//! what the client writes with the same struct.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `POST /v1/dispatch`'s body.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DispatchRequest {
    /// The hook point's name.
    pub point: String,
    /// The dispatch context (a JSON object); none is an empty one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    /// The client's project: a daemon serving another one answers 409, and the client
    /// dispatches in its own process instead of running this project's hooks elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// The client's settings digest ([`crate::config::LoadOptions::inputs`]): one other than
    /// the daemon's is answered 412.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<String>,
    /// The client's variables ([`crate::config::LoadOptions::input_vars`]): one it sets to
    /// another value than the daemon's is answered 412; one it lacks takes the daemon's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vars: Option<std::collections::BTreeMap<String, String>>,
    /// The client gates the model's shell commands (`--gate-shell-tools`): a daemon whose
    /// configuration does not answers 412, never with an ungated verdict. A daemon that gates
    /// them answers either kind of client.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gate_shell_tools: bool,
}

/// Every error answer's body: `{"error": "…"}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What was wrong, for a person.
    pub error: String,
}
