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

/// `POST /v1/connections`' body: the connections a confined model call made through the proxy
/// of `hookd exec` (which runs in the agent's shell, not in the daemon), for the daemon's
/// stream, metrics, dashboard, events file and OpenTelemetry export.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ConnectionsRequest {
    /// The client's project, as for a dispatch ([`DispatchRequest::project`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// The client's settings digest, as for a dispatch: one other than the daemon's is 412.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<String>,
    /// The client's variables, as for a dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vars: Option<std::collections::BTreeMap<String, String>>,
    /// The agent's session the call belongs to (empty: not known).
    #[serde(default)]
    pub session: String,
    /// Each connection, as it ended.
    pub connections: Vec<Connection>,
}

/// One connection through hookd's proxy, as [`ConnectionsRequest`] carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    /// The host as the command named it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// `allowed` or `refused`.
    pub verdict: String,
    /// Why it was refused or could not be reached; empty when it went through.
    #[serde(default)]
    pub reason: String,
    /// Bytes from the command to the host.
    #[serde(default)]
    pub bytes_out: u64,
    /// Bytes from the host to the command.
    #[serde(default)]
    pub bytes_in: u64,
    /// From the request to the end of the connection, in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
}
