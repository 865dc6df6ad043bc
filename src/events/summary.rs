//! One event as `hookd events` shows it: its columns, and what happened in one line.

/// One event as `hookd events` shows it: its columns and what happened. Read from the event's
/// JSON field by field and leniently, so that an events file written by another version of
/// hookd (fields missing, or added) still reads; project text is included as it is, and
/// whoever prints it escapes it for the terminal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// `seq`, as written.
    pub seq: String,
    /// The time of day from `timestamp` (`HH:MM:SS.mmm`).
    pub time: String,
    /// `session_id`.
    pub session: String,
    /// The hook point (`hook`; `pre_tool` for the gate's tool events, which happen there).
    pub point: String,
    /// The event's `type`.
    pub kind: String,
    /// What happened.
    pub what: String,
}

impl Summary {
    /// The summary of one event's JSON.
    pub fn of(e: &serde_json::Value) -> Summary {
        let str_of = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let kind = str_of("type");
        let mut point = str_of("hook");
        if point.is_empty() && matches!(kind.as_str(), "tool_command_denied" | "tool_call_allowed")
        {
            // The gate decides on the model's tool calls before they run.
            point = crate::catalog::HookPoint::PreTool.name().into();
        }
        Summary {
            seq: e["seq"].to_string(),
            time: str_of("timestamp").get(11..23).unwrap_or("").to_string(),
            session: str_of("session_id"),
            point,
            what: what(&kind, e),
            kind,
        }
    }
}

/// What happened, by the event's type.
fn what(kind: &str, e: &serde_json::Value) -> String {
    let str_of = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    match kind {
        "hook_command" => hook_command(e),
        "hook_command_skipped" => format!(
            "{} skipped: {} `{}`",
            str_of("name"),
            str_of("reason"),
            str_of("command")
        ),
        "system_reminder" => {
            let text: String = str_of("content").chars().take(60).collect();
            format!(
                "{} ({}): {}",
                str_of("name"),
                str_of("trigger"),
                text.replace('\n', " ")
            )
        }
        "tool_command_denied" => format!(
            "{} denied: {} `{}`",
            str_of("tool"),
            str_of("reason"),
            e.get("path")
                .or_else(|| e.get("command"))
                .and_then(|v| v.as_str())
                .unwrap_or("")
        ),
        "config_reloaded" => format!(
            "({}) {}",
            str_of("cause"),
            e["sources"]
                .as_array()
                .map(|a| a
                    .iter()
                    .filter_map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_default()
        ),
        "tool_call_allowed" => format!(
            "{} allowed `{}`",
            str_of("tool"),
            e.get("command")
                .or_else(|| e.get("path"))
                .and_then(|v| v.as_str())
                .unwrap_or("")
        ),
        "client_refused" => format!("{}: {}", e["status"], str_of("reason")),
        "continue_refused" => str_of("reason"),
        "network_request" => {
            let mut line = format!(
                "{} {}:{} ({}, {} B out, {} B in, {}ms)",
                str_of("verdict"),
                str_of("host"),
                e["port"],
                str_of("name"),
                e["bytes_out"],
                e["bytes_in"],
                e["duration_ms"]
            );
            if !str_of("reason").is_empty() {
                line.push_str(": ");
                line.push_str(&str_of("reason"));
            }
            line
        }
        "tool_result" => format!(
            "{} {} `{}`",
            str_of("tool"),
            str_of("outcome").replace('_', " "),
            e.get("command")
                .or_else(|| e.get("path"))
                .and_then(|v| v.as_str())
                .unwrap_or("")
        ),
        "config_error" => config_error(e),
        _ => String::new(),
    }
}

/// A hook's run: its name, how it ended, how long it took, its command, and why it failed when
/// the exit code does not say it all (a program that is missing, a timeout).
fn hook_command(e: &serde_json::Value) -> String {
    let str_of = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let how = if e["timed_out"] == true {
        "timed out".to_string()
    } else {
        format!("exit {}", e["exit_code"])
    };
    let mut line = format!(
        "{} ({how}, {}ms) `{}`",
        str_of("name"),
        e["duration_ms"],
        str_of("command")
    );
    let error = str_of("error");
    if !error.is_empty() && error != format!("exit status {}", e["exit_code"]) {
        line.push_str(": ");
        line.push_str(&error);
    }
    line
}

/// A configuration that did not load: where, what, and what hookd did about it.
fn config_error(e: &serde_json::Value) -> String {
    let str_of = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let done = match (str_of("cause").as_str(), e["fail_closed"].as_bool()) {
        // An agent's call loading it: nothing older to keep.
        ("dispatch", Some(true)) => "no hook ran; failing closed",
        ("dispatch", Some(false)) => "no hook ran; failing open",
        ("dispatch", None) => "no hook ran",
        _ => "previous configuration kept",
    };
    format!(
        "({}) {}:{}: {} ({done})",
        str_of("cause"),
        str_of("file"),
        e["line"],
        str_of("message")
    )
}
