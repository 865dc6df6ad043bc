//! How each session went, told from its events alone (`hookd events --summary`): what a CI job
//! reads after a headless run to know whether the agent's session ended well.

use crate::display::plural;

/// One session's tally. Read leniently from events' JSON, as [`crate::events::Summary`] is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Session {
    /// The session's id (`""` when the agent sent none); configuration events of the daemon,
    /// which belong to no session, are tallied under [`NO_SESSION`].
    pub id: String,
    /// Tool calls the gate let through (`tool_call_allowed`).
    pub allowed: u64,
    /// Of those, the ones the agent never ran (`tool_result` `not_run`: its own permissions or
    /// the person refused them, or the turn was interrupted).
    pub not_run: u64,
    /// Refusals: tool calls the gate refused (`tool_command_denied`), and hooks whose reply
    /// denied (`decision: deny`).
    pub refused: u64,
    /// Hooks that ran and failed (an exit other than a denial's, a timeout, a program that did
    /// not start, a reply that could not be read).
    pub failed: u64,
    /// Hooks that did not run (`hook_command_skipped`).
    pub skipped: u64,
    /// `continue_refused` events.
    pub continues_refused: u64,
    /// `config_error` events.
    pub config_errors: u64,
    /// Those of them that stopped a call (`cause: dispatch`); a daemon's reload that failed
    /// (`changed`, `sighup`) kept the previous configuration and stopped nothing.
    pub calls_stopped_by_config: u64,
    /// The last run of each `post_session` hook: its name, and why it failed, if it did.
    last_post_session: Vec<(String, Option<String>)>,
}

/// What the configuration events of the daemon (no `session_id`) are tallied under.
pub const NO_SESSION: &str = "(no session)";

impl Session {
    /// Why the session ended badly, if it did: a `post_session` hook whose last run failed or
    /// did not run, a refused continue, a configuration error.
    pub fn ended_badly(&self) -> Vec<String> {
        let mut why: Vec<String> = self
            .last_post_session
            .iter()
            .filter_map(|(name, failed)| {
                failed
                    .as_ref()
                    .map(|f| format!("post_session hook `{name}` {f}"))
            })
            .collect();
        if self.continues_refused > 0 {
            why.push("a continue was refused".into());
        }
        if self.calls_stopped_by_config > 0 {
            why.push("the configuration did not load".into());
        }
        why
    }

    /// One line for people and CI logs: `ID: N calls allowed, …` and, when it ended badly,
    /// `; ended badly: …`.
    pub fn line(&self) -> String {
        let n = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let mut line = format!(
            "{}: {} call{} allowed ({} not run by the agent), {} refused, {} hook{} failed, {} skipped, {} continue{} refused, {} configuration error{}",
            if self.id.is_empty() { "\"\"" } else { self.id.as_str() },
            self.allowed,
            plural(n(self.allowed)),
            self.not_run,
            self.refused,
            self.failed,
            plural(n(self.failed)),
            self.skipped,
            self.continues_refused,
            plural(n(self.continues_refused)),
            self.config_errors,
            plural(n(self.config_errors)),
        );
        let why = self.ended_badly();
        if !why.is_empty() {
            line.push_str("; ended badly: ");
            line.push_str(&why.join(", "));
        }
        crate::display::visible(&line).into_owned()
    }

    fn add(&mut self, e: &serde_json::Value) {
        let str_of = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("");
        let denied = str_of("decision") == "deny";
        match str_of("type") {
            "tool_call_allowed" => self.allowed += 1,
            "tool_command_denied" => self.refused += 1,
            "tool_result" => self.not_run += u64::from(str_of("outcome") == "not_run"),
            "hook_command" => {
                let failure = hook_failure(e);
                self.refused += u64::from(denied);
                self.failed += u64::from(failure.is_some());
                if str_of("hook") == "post_session" {
                    self.last_run(str_of("name"), failure);
                }
            }
            "hook_command_skipped" => {
                self.skipped += 1;
                if str_of("hook") == "post_session" {
                    let why = format!("did not run ({})", str_of("reason"));
                    self.last_run(str_of("name"), Some(why));
                }
            }
            "continue_refused" => self.continues_refused += 1,
            "config_error" => {
                self.config_errors += 1;
                let reload = matches!(str_of("cause"), "changed" | "sighup");
                self.calls_stopped_by_config += u64::from(!reload);
            }
            _ => {}
        }
    }

    fn last_run(&mut self, name: &str, failed: Option<String>) {
        match self.last_post_session.iter_mut().find(|(n, _)| n == name) {
            Some(run) => run.1 = failed,
            None => self.last_post_session.push((name.to_string(), failed)),
        }
    }
}

/// How a hook's run failed, if it did: a denial is its answer, not a failure.
fn hook_failure(e: &serde_json::Value) -> Option<String> {
    let error = e.get("error").and_then(|v| v.as_str()).unwrap_or("");
    if e["timed_out"] == true {
        return Some("timed out".into());
    }
    if e["decision"] == "deny" {
        return None;
    }
    match e["exit_code"].as_i64() {
        Some(0) if error.is_empty() => None,
        Some(0) => Some(format!("failed: {error}")),
        Some(-1) if !error.is_empty() => Some(format!("failed: {error}")),
        code => Some(format!("failed (exit {})", code.unwrap_or(-1))),
    }
}

/// The sessions of a stream of events, in the order they first appear (and where each is, by
/// id: a log of many sessions is read in one pass, not a search per event).
#[derive(Clone, Debug, Default)]
pub struct Sessions(Vec<Session>, std::collections::HashMap<String, usize>);

impl Sessions {
    /// Tally one event's JSON line (lines that are not events are passed over).
    pub fn add(&mut self, line: &str) {
        let Ok(e) = serde_json::from_str::<serde_json::Value>(line) else {
            return;
        };
        let id = e
            .get("session_id")
            .and_then(|v| v.as_str())
            .unwrap_or(NO_SESSION);
        let at = match self.1.get(id) {
            Some(at) => *at,
            None => {
                self.0.push(Session {
                    id: id.to_string(),
                    ..Session::default()
                });
                self.1.insert(id.to_string(), self.0.len() - 1);
                self.0.len() - 1
            }
        };
        self.0[at].add(&e);
    }

    /// Every session, in the order they first appeared.
    pub fn all(&self) -> &[Session] {
        &self.0
    }

    /// Whether any session ended badly.
    pub fn any_ended_badly(&self) -> bool {
        self.0.iter().any(|s| !s.ended_badly().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_the_agent_never_ran_are_counted_not_failed() {
        let mut s = Sessions::default();
        s.add(r#"{"type":"tool_call_allowed","tool":"Bash","session_id":"a"}"#);
        s.add(r#"{"type":"tool_call_allowed","tool":"Bash","session_id":"a"}"#);
        s.add(r#"{"type":"tool_result","outcome":"ran","session_id":"a"}"#);
        s.add(r#"{"type":"tool_result","outcome":"not_run","session_id":"a"}"#);
        assert_eq!(
            s.all()[0].line(),
            "a: 2 calls allowed (1 not run by the agent), 0 refused, 0 hooks failed, 0 skipped, 0 continues refused, 0 configuration errors"
        );
        assert!(!s.any_ended_badly());
    }

    #[test]
    fn the_last_run_of_a_post_session_hook_decides() {
        let mut s = Sessions::default();
        s.add(r#"{"type":"hook_command","hook":"post_session","name":"t","exit_code":1,"error":"exit status 1","session_id":"a"}"#);
        s.add(r#"{"type":"hook_command","hook":"post_session","name":"t","exit_code":0,"error":"","session_id":"a"}"#);
        s.add(r#"{"type":"hook_command","hook":"pre_tool","name":"g","exit_code":2,"error":"","decision":"deny","session_id":"a"}"#);
        assert_eq!(
            s.all()[0].line(),
            "a: 0 calls allowed (0 not run by the agent), 1 refused, 1 hook failed, 0 skipped, 0 continues refused, 0 configuration errors"
        );
        assert!(!s.any_ended_badly());
        s.add(r#"{"type":"hook_command","hook":"post_session","name":"t","exit_code":-1,"timed_out":true,"session_id":"a"}"#);
        assert!(s.any_ended_badly());
        assert_eq!(
            s.all()[0].line(),
            "a: 0 calls allowed (0 not run by the agent), 1 refused, 2 hooks failed, 0 skipped, 0 continues refused, 0 configuration errors; ended badly: post_session hook `t` timed out"
        );
    }

    #[test]
    fn a_failed_reload_stops_nothing_and_a_blocked_call_ends_badly() {
        let mut s = Sessions::default();
        s.add(r#"{"type":"config_error","cause":"changed","message":"x"}"#);
        s.add(r#"{"type":"config_error","cause":"sighup","message":"x"}"#);
        assert!(!s.any_ended_badly());
        assert_eq!(
            s.all()[0].line(),
            "(no session): 0 calls allowed (0 not run by the agent), 0 refused, 0 hooks failed, 0 skipped, 0 continues refused, 2 configuration errors"
        );
        s.add(r#"{"type":"config_error","cause":"dispatch","message":"x","session_id":"b"}"#);
        assert!(s.any_ended_badly());
        assert_eq!(
            s.all()[1].line(),
            "b: 0 calls allowed (0 not run by the agent), 0 refused, 0 hooks failed, 0 skipped, 0 continues refused, 1 configuration error; ended badly: the configuration did not load"
        );
    }
}
