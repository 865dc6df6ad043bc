//! Per-session reminder state: in memory for embedders, in small locked files for the CLI,
//! whose every dispatch is a new process.

use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// What hookd remembers about one session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    /// `pre_stream` dispatches seen: the session's model turns.
    pub turns: u64,
    /// Reminders that fired (for `once`, `once_after`, `turns_before_max`).
    pub fired: BTreeSet<String>,
    /// The mode of the previous `pre_stream`.
    pub last_mode: Option<String>,
    /// Fingerprint (hex SHA-256 of name and input) of the last failing tool call.
    pub failure_key: Option<String>,
    /// How many times in a row it failed.
    pub failure_count: u64,
    /// Consecutive `continue`s honoured at `post_session` (the loop guard).
    pub continues: u64,
    /// Tool calls the gate let through that the agent has not reported at `post_tool` yet
    /// (the oldest first, at most 64): left at `post_session`, the agent did not run them.
    pub pending: Vec<PendingCall>,
}

/// A tool call the gate let through, awaiting the agent's report of it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PendingCall {
    /// The tool.
    pub tool: String,
    /// A shell tool's command (the model's, not hookd's rewrite of it).
    pub command: Option<String>,
    /// The file another tool names.
    pub path: Option<String>,
    /// The policy the sandbox runs it under, when it rewrote the call.
    pub sandbox: Option<String>,
}

/// What the session must remember between dispatches, given the configured reminders.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tracking {
    /// Count `pre_stream` dispatches and remember the mode (interval, once_after, mode change).
    pub turns: bool,
    /// Remember consecutive failures of the same tool call (on_repeated_failure).
    pub failures: bool,
}

/// What the session's state says at one dispatch, for providers to decide with.
#[derive(Clone, Debug, Default)]
pub(crate) struct SessionFacts {
    /// The mode of the previous `pre_stream`, at a `pre_stream`.
    pub prev_mode: Option<String>,
    /// True when this `pre_stream`'s mode differs from the previous one.
    pub mode_changed: bool,
    /// Consecutive failures of the same tool call (name and input), at `post_tool`.
    pub failures: u64,
    /// Consecutive continues honoured so far, at `post_session`.
    pub continues: u64,
}

/// The session's bookkeeping for one dispatch at `point`: count model turns and remember the
/// mode at `pre_stream`; track the failure streak at `post_tool`.
pub(crate) fn observe(
    point: crate::catalog::HookPoint,
    ctx: &crate::context::Context,
    view: &crate::view::View<'_>,
    mode: crate::kinds::Mode,
    tracking: Tracking,
    state: &mut SessionState,
) -> SessionFacts {
    use serde_json::Value;
    let mut facts = SessionFacts::default();
    if point == crate::catalog::HookPoint::PreStream && tracking.turns {
        state.turns += 1;
        facts.prev_mode = state.last_mode.replace(mode.name().to_string());
        facts.mode_changed = facts.prev_mode.as_deref().is_some_and(|p| p != mode.name());
    }
    if point == crate::catalog::HookPoint::PostTool && tracking.failures {
        if view.tool_failed() {
            // Kept by digest: a tool's input may be megabytes, and a daemon keeps thousands of
            // sessions.
            use sha2::Digest;
            let digest = sha2::Sha256::new()
                .chain_update(view.tool_name().as_bytes())
                .chain_update([0])
                .chain_update(
                    ctx.tool("input")
                        .map(Value::to_string)
                        .unwrap_or_default()
                        .as_bytes(),
                )
                .finalize();
            let key = crate::display::hex(&digest);
            let same = state.failure_key.as_deref() == Some(key.as_str());
            state.failure_count = if same { state.failure_count + 1 } else { 1 };
            state.failure_key = Some(key);
        } else {
            state.failure_key = None;
            state.failure_count = 0;
        }
    }
    facts.failures = state.failure_count;
    facts
}

/// Why state could not be read or written. Dispatch logs it and goes on without state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Filesystem trouble.
    #[error("session state at {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// Holds session states. `update` runs `f` on one session's state atomically.
pub trait StateStore: Send + Sync {
    /// Apply `f` to the state of `session` and keep the result.
    fn update(&self, session: &str, f: &mut dyn FnMut(&mut SessionState))
        -> Result<(), StateError>;
}

/// In-process state, for embedders and the daemon. With [`MemoryStore::idle_expiry`], a session
/// not dispatched to for that long is forgotten (a daemon serves sessions that end without notice).
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Sessions>,
    idle: Option<Duration>,
    /// At most this many sessions: a new one beyond it evicts the least recently used.
    max: Option<usize>,
}

/// Session ids longer than this are kept by their SHA-256 (ids are agents' UUIDs; a client
/// sending megabytes as an id must not make the daemon keep them).
pub const MAX_SESSION_KEY_BYTES: usize = 256;

/// The name a session is known by: the id itself, or `sha256:HEX` (its SHA-256) for an id over
/// [`MAX_SESSION_KEY_BYTES`]. Dispatch uses it for the session's state, its events and its hooks;
/// it is idempotent, so a name already shortened stays as it is.
pub fn session_key(session: &str) -> std::borrow::Cow<'_, str> {
    if session.len() <= MAX_SESSION_KEY_BYTES {
        return session.into();
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(session.as_bytes());
    let hex: String = crate::display::hex(&digest);
    format!("sha256:{hex}").into()
}

/// Characters of a session id `hookd events` shows before cutting it with `…`.
pub const SHOWN_SESSION_CHARS: usize = 12;

/// A session id as `hookd events` shows it in its column: whole, or its first
/// [`SHOWN_SESSION_CHARS`] characters and `…`, which [`session_selects`] accepts.
pub fn session_shown(session: &str) -> std::borrow::Cow<'_, str> {
    match session.char_indices().nth(SHOWN_SESSION_CHARS) {
        Some((i, _)) => format!("{}…", &session[..i]).into(),
        None => session.into(),
    }
}

/// Whether `--session WANTED` (of `hookd events`, or the daemon's `?session=`) selects the
/// session `id`: the id itself, its [`session_key`] (or the id of a key), or, ended with `…`
/// as `hookd events` shows it, any id it begins.
pub fn session_selects(wanted: &str, id: &str) -> bool {
    if let Some(prefix) = wanted.strip_suffix('…') {
        return id.starts_with(prefix);
    }
    wanted == id || session_key(wanted) == session_key(id)
}

#[derive(Debug, Default)]
struct Sessions {
    map: HashMap<String, (SessionState, Instant)>,
    swept: Option<Instant>,
}

impl MemoryStore {
    /// Forget a session idle for `idle`: its turn count, `once` reminders and stop guard start
    /// over if it comes back.
    pub fn idle_expiry(idle: Duration) -> Self {
        MemoryStore {
            inner: Mutex::default(),
            idle: Some(idle),
            max: None,
        }
    }

    /// Keep at most `n` sessions: a new one beyond that forgets the least recently used.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max = Some(n.max(1));
        self
    }

    /// How many sessions are held.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// True when no session is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl StateStore for MemoryStore {
    fn update(
        &self,
        session: &str,
        f: &mut dyn FnMut(&mut SessionState),
    ) -> Result<(), StateError> {
        let now = Instant::now();
        let mut s = self.lock();
        if let Some(idle) = self.idle {
            // The session itself first: an expired one starts over, even between sweeps.
            if s.map.get(session).is_some_and(|(_, at)| now - *at >= idle) {
                s.map.remove(session);
            }
            // Sweep the others at most every idle/8, so a dispatch pays O(sessions) rarely.
            if s.swept.is_none_or(|t| now - t >= idle / 8) {
                s.map.retain(|_, (_, at)| now - *at < idle);
                s.swept = Some(now);
            }
        }
        let key = session_key(session);
        if let Some(max) = self.max {
            // Full and a new session: forget the one dispatched to longest ago. O(sessions),
            // paid only by a session's first dispatch on a full daemon.
            if s.map.len() >= max && !s.map.contains_key(key.as_ref()) {
                let oldest = s
                    .map
                    .iter()
                    .min_by_key(|(_, (_, at))| *at)
                    .map(|(k, _)| k.clone());
                if let Some(k) = oldest {
                    s.map.remove(&k);
                }
            }
        }
        let entry = s
            .map
            .entry(key.into_owned())
            .or_insert_with(|| (SessionState::default(), now));
        entry.1 = now;
        f(&mut entry.0);
        Ok(())
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    fn turns(store: &MemoryStore, session: &str) -> u64 {
        let mut n = 0;
        store
            .update(session, &mut |s| {
                s.turns += 1;
                n = s.turns;
            })
            .unwrap();
        n
    }

    #[test]
    fn idle_sessions_are_forgotten_and_active_ones_kept() {
        let store = MemoryStore::idle_expiry(Duration::from_millis(200));
        assert_eq!(turns(&store, "idle"), 1);
        for _ in 0..6 {
            std::thread::sleep(Duration::from_millis(50));
            turns(&store, "busy");
        }
        assert_eq!(store.len(), 1, "the idle session was swept");
        assert_eq!(turns(&store, "busy"), 7, "the busy one kept its state");
        assert_eq!(turns(&store, "idle"), 1, "the idle one starts over");
    }

    #[test]
    fn sessions_are_capped_and_long_ids_kept_by_their_hash() {
        let store = MemoryStore::idle_expiry(Duration::from_secs(60)).max_sessions(2);
        assert_eq!(turns(&store, "a"), 1);
        assert_eq!(turns(&store, "b"), 1);
        assert_eq!(turns(&store, "a"), 2);
        assert_eq!(turns(&store, "c"), 1, "b, least recently used, made room");
        assert_eq!(store.len(), 2);
        assert_eq!(turns(&store, "a"), 3, "a was kept");
        assert_eq!(turns(&store, "b"), 1, "b starts over");
        let long = "x".repeat(1 << 20);
        assert_eq!(turns(&store, &long), 1);
        assert_eq!(
            turns(&store, &long),
            2,
            "the same long id is the same session"
        );
        let held: usize = store.lock().map.keys().map(String::len).sum();
        assert!(held <= 2 * MAX_SESSION_KEY_BYTES, "{held} bytes of keys");
    }
}

/// One JSON file per session under a directory, locked while read and rewritten.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// Store under `dir` (created on first use).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileStore { dir: dir.into() }
    }

    /// The file for `session`: a readable prefix plus a hash, so any id maps to a safe name.
    pub fn path_for(&self, session: &str) -> PathBuf {
        let readable: String = session
            .chars()
            .take(48)
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.dir.join("sessions").join(format!(
            "{readable}-{:016x}.json",
            fnv1a(session.as_bytes())
        ))
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StateError + '_ {
    move |source| StateError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl StateStore for FileStore {
    fn update(
        &self,
        session: &str,
        f: &mut dyn FnMut(&mut SessionState),
    ) -> Result<(), StateError> {
        let path = self.path_for(session);
        let dir = path.parent().unwrap_or(&self.dir).to_path_buf();
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        // The lock file is separate from the data file so the data can be replaced atomically.
        let lock_path = path.with_extension("lock");
        let lock: File = crate::atomic::lock_file(&lock_path).map_err(io(&lock_path))?;
        lock.lock().map_err(io(&lock_path))?;
        let mut state = match File::open(&path) {
            Ok(mut file) => {
                let mut text = String::new();
                file.read_to_string(&mut text).map_err(io(&path))?;
                serde_json::from_str(&text).unwrap_or_else(|e| {
                    tracing::warn!(
                        "session state {} is unreadable ({e}); starting the session afresh",
                        path.display()
                    );
                    SessionState::default()
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => SessionState::default(),
            Err(e) => return Err(io(&path)(e)),
        };
        f(&mut state);
        let json = serde_json::to_vec(&state).unwrap_or_default();
        crate::atomic::write_private(&path, &json).map_err(io(&path))?;
        drop(lock);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_as_shown_selects_the_sessions_it_begins_and_no_other() {
        let id = "027567bf-78d4-43b7-8b98-7b6d86ce3708";
        assert_eq!(session_shown(id), "027567bf-78d…");
        assert_eq!(session_shown("s1"), "s1");
        for wanted in [id, "027567bf-78d…", "0…"] {
            assert!(session_selects(wanted, id), "{wanted}");
        }
        // Cut without `…` is not the id; a long id's digest selects it.
        assert!(!session_selects("027567bf-78d", id));
        assert!(!session_selects("s1…", id));
        let long = "x".repeat(300);
        assert!(session_selects(&session_key(&long), &long));
    }
    use std::sync::Arc;

    #[test]
    fn file_store_survives_concurrent_updates() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(FileStore::new(dir.path()));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let s = store.clone();
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        s.update("sess/../x y", &mut |st| st.turns += 1).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let mut turns = 0;
        store
            .update("sess/../x y", &mut |st| turns = st.turns)
            .unwrap();
        assert_eq!(turns, 200);
        assert!(store
            .path_for("sess/../x y")
            .starts_with(dir.path().join("sessions")));
    }

    #[test]
    fn corrupt_state_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let p = store.path_for("s");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, b"{not json").unwrap();
        let mut seen = 99;
        store.update("s", &mut |st| seen = st.turns).unwrap();
        assert_eq!(seen, 0);
    }
}
