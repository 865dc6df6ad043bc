//! The projects one daemon serves: the one it was started in, and each project a client
//! dispatches for, loaded on its first dispatch with the same loader and trust rules as a
//! dispatch in that project's own process (its layer beside the user's, untrusted or not),
//! watched for changes, and forgotten least recently used first beyond `--max-projects`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::config::{ConfigError, LoadOptions};
use crate::dispatch::Engine;
use crate::events::Event;

/// Builds the engine of the project at a directory.
pub type BuildEngine = Box<dyn Fn(&Path) -> Result<Engine, ConfigError> + Send + Sync>;

/// The files to watch for the project at a directory.
pub type WatchFiles = Box<dyn Fn(&Path) -> Vec<PathBuf> + Send + Sync>;

/// How the daemon builds a project's engine, and what to watch for it.
pub struct Reloader {
    /// Load the configuration of the project at this directory and build an engine that
    /// shares the running ones' sink, session state and sequence counter.
    pub build: BuildEngine,
    /// The files whose appearance, disappearance or change (time or size) reloads the
    /// project at this directory.
    pub watch: WatchFiles,
}

/// The loading options of a dispatch in the project at `dir`: the daemon's own (home,
/// variables, trust records, flags), with `dir` as the project and the working directory, as
/// a client whose settings match the daemon's (same digest) loads them in its own process.
pub fn project_options(load: &LoadOptions, dir: &Path) -> LoadOptions {
    if dir == load.project_dir {
        return load.clone();
    }
    let mut o = load.clone();
    o.project_dir = dir.to_path_buf();
    o.host.set_cwd(dir);
    o
}

pub(super) type Snapshot = Vec<Option<(std::time::SystemTime, u64)>>;

pub(super) fn snapshot(files: &[PathBuf]) -> Snapshot {
    files
        .iter()
        .map(|f| {
            let m = std::fs::metadata(f).ok()?;
            Some((m.modified().ok()?, m.len()))
        })
        .collect()
}

/// One project the daemon serves: the engine in use (a reload swaps it, dispatches already
/// running finish on the old one) and what its watched files were when last read.
pub(super) struct Served {
    /// The project's directory, as its configuration was loaded.
    pub(super) dir: PathBuf,
    engine: RwLock<Arc<Engine>>,
    seen: Mutex<Snapshot>,
    used: AtomicU64,
    /// A trust change that did not take effect (the changed configuration is invalid): said
    /// with every dispatch's notices until a reload succeeds, so no hint misleads.
    pending_trust: Mutex<Option<String>>,
}

impl Served {
    pub(super) fn new(engine: Engine) -> Served {
        Served {
            dir: engine.config().project_dir.clone(),
            engine: RwLock::new(Arc::new(engine)),
            seen: Mutex::new(Vec::new()),
            used: AtomicU64::new(0),
            pending_trust: Mutex::new(None),
        }
    }

    /// The notice a dispatch carries while a trust change waits for the errors to be fixed.
    pub(super) fn pending_trust(&self) -> Option<String> {
        self.pending_trust
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_pending_trust(&self, notice: Option<String>) {
        *self.pending_trust.lock().unwrap_or_else(|e| e.into_inner()) = notice;
    }

    /// The engine in use.
    pub(super) fn current(&self) -> Arc<Engine> {
        // A panic while holding the lock cannot leave the `Arc` half-written: use it anyway.
        self.engine
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn replace(&self, engine: Arc<Engine>) {
        *self.engine.write().unwrap_or_else(|e| e.into_inner()) = engine;
    }

    /// The configuration files, and the code a trusted project's hooks run: editing a hook's
    /// script untrusts the project, and the reload says so at once.
    pub(super) fn watched(&self, reloader: &Reloader) -> Vec<PathBuf> {
        let engine = self.current();
        let config = engine.config();
        let mut files = (reloader.watch)(&self.dir);
        if let Some(fp) = &config.fingerprint {
            files.extend(fp.files.iter().map(|f| config.project_dir.join(f)));
        }
        files.sort();
        files.dedup();
        files
    }

    fn remember(&self, seen: Snapshot) {
        *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = seen;
    }

    /// Whether a watched file changed since it was last read.
    pub(super) fn changed(&self, reloader: &Reloader) -> bool {
        let now = snapshot(&self.watched(reloader));
        *self.seen.lock().unwrap_or_else(|e| e.into_inner()) != now
    }
}

/// Every project served: the daemon's own, never forgotten, and at most `max` others.
pub(super) struct Projects {
    home: Arc<Served>,
    /// The home project's directory with its links resolved, to know it by another name.
    home_key: PathBuf,
    others: Mutex<HashMap<PathBuf, Arc<Served>>>,
    max: usize,
    tick: AtomicU64,
    pub(super) reloader: Arc<Reloader>,
}

/// A project's directory with its links resolved: how the daemon knows one project by any
/// of its names.
pub(super) fn key(dir: &Path) -> std::io::Result<PathBuf> {
    dir.canonicalize()
}

impl Projects {
    pub(super) fn new(home: Engine, reloader: Reloader, max: usize) -> Projects {
        let home = Arc::new(Served::new(home));
        let reloader = Arc::new(reloader);
        home.remember(snapshot(&home.watched(&reloader)));
        Projects {
            home_key: key(&home.dir).unwrap_or_else(|_| home.dir.clone()),
            home,
            others: Mutex::new(HashMap::new()),
            max,
            tick: AtomicU64::new(0),
            reloader,
        }
    }

    /// The project the daemon was started in.
    pub(super) fn home(&self) -> &Arc<Served> {
        &self.home
    }

    /// Whether `key` names the daemon's own project.
    pub(super) fn is_home(&self, key: &Path) -> bool {
        key == self.home_key
    }

    /// The project known by `key`, if it is served now.
    pub(super) fn get(&self, key: &Path) -> Option<Arc<Served>> {
        if self.is_home(key) {
            return Some(self.home.clone());
        }
        let others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        let served = others.get(key)?.clone();
        served
            .used
            .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        Some(served)
    }

    /// Load the project at `dir` (known by `key`) and serve it, forgetting the least recently
    /// used one beyond the limit (its directory is returned). Blocking: reads its files.
    pub(super) fn load(
        &self,
        key: PathBuf,
        dir: &Path,
    ) -> Result<(Arc<Served>, Option<PathBuf>), ConfigError> {
        // Read before loading: an edit made during the load reloads it again.
        let before = (self.reloader.watch)(dir);
        let pre = snapshot(&before);
        let served = Arc::new(Served::new((self.reloader.build)(dir)?));
        let after = served.watched(&self.reloader);
        served.remember(if after == before {
            pre
        } else {
            snapshot(&after)
        });
        served
            .used
            .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        // Another dispatch loaded it meanwhile: one engine per project.
        if let Some(existing) = others.get(&key) {
            return Ok((existing.clone(), None));
        }
        let mut forgotten = None;
        if others.len() >= self.max.max(1) {
            let oldest = others
                .iter()
                .min_by_key(|(_, s)| s.used.load(Ordering::Relaxed))
                .map(|(k, s)| (k.clone(), s.dir.clone()));
            if let Some((k, d)) = oldest {
                others.remove(&k);
                forgotten = Some(d);
            }
        }
        others.insert(key, served.clone());
        Ok((served, forgotten))
    }

    /// How many projects are served now, the daemon's own included.
    pub(super) fn count(&self) -> usize {
        1 + self.others.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Every project served now, the daemon's own first.
    pub(super) fn all(&self) -> Vec<Arc<Served>> {
        let others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        std::iter::once(self.home.clone())
            .chain(others.values().cloned())
            .collect()
    }
}

/// Load `served`'s configuration again; a valid one replaces its engine, an invalid one is
/// reported (event and stderr) and the running configuration stays. Returns whether it was
/// applied.
pub(super) async fn reload(
    reloader: &Arc<Reloader>,
    served: &Arc<Served>,
    cause: crate::kinds::ReloadCause,
) -> bool {
    // Read before loading: an edit made during the reload triggers another.
    let before = served.watched(reloader);
    let pre = snapshot(&before);
    let dir = served.dir.clone();
    let r = reloader.clone();
    let built = match tokio::task::spawn_blocking(move || (r.build)(&dir)).await {
        Ok(b) => b,
        Err(e) => {
            eprintln!("hookd: reloading panicked; keeping the running configuration: {e}");
            return false;
        }
    };
    let project = Some(served.dir.display().to_string());
    let was = served.current().config().trust.state();
    let applied = match built {
        Ok(new) => {
            let event = reloaded(&new, cause, was, project);
            // Announced before the swap: no event of the new configuration precedes the news.
            let new = Arc::new(new);
            new.emit(Event::ConfigReloaded(event));
            served.replace(new);
            served.set_pending_trust(None);
            true
        }
        Err(e) => {
            let (event, pending) = kept(&e, cause, was, project);
            served.set_pending_trust(pending);
            served.current().emit(Event::ConfigError(event));
            false
        }
    };
    let after = served.watched(reloader);
    served.remember(if after == before {
        pre
    } else {
        snapshot(&after)
    });
    applied
}

/// A valid configuration reloaded: said on stderr, and its event, with the project's trust and
/// what it was when the reload changed it.
fn reloaded(
    new: &Engine,
    cause: crate::kinds::ReloadCause,
    was: crate::events::TrustState,
    project: Option<String>,
) -> crate::events::ConfigReloaded {
    for w in &new.config().warnings {
        eprintln!("{w}\n");
    }
    let sources = new.config().sources.clone();
    let trust = new.config().trust.state();
    let changed = trust != was;
    let change = if changed {
        format!(
            "; the project's trust is now {} (was {})",
            trust.name(),
            was.name()
        )
    } else {
        String::new()
    };
    eprintln!(
        "hookd: configuration reloaded ({}) from {}{change}",
        cause.name(),
        sources.join(", ")
    );
    crate::events::ConfigReloaded {
        sources,
        cause,
        project,
        trust: Some(trust),
        trust_was: changed.then_some(was),
    }
}

/// An invalid configuration, the one in use kept: said on stderr, and its event with the kept
/// configuration's trust and, when the invalid one was loaded with another (`hookd trust` run
/// meanwhile), that trust as pending; and the notice dispatches carry while it is.
fn kept(
    e: &crate::config::ConfigError,
    cause: crate::kinds::ReloadCause,
    was: crate::events::TrustState,
    project: Option<String>,
) -> (crate::events::ConfigError, Option<String>) {
    let mut event = e.event(cause);
    event.project = project;
    event.trust_pending = event.trust.filter(|t| *t != was);
    event.trust = Some(was);
    let pending = event.trust_pending.map(|t| {
        format!(
            " (the project is {} in it; {} in the invalid one, which takes effect once its errors are fixed)",
            was.name(),
            t.name()
        )
    });
    eprintln!(
        "{}\n\nhookd: the changed configuration{} is invalid; still using the previous one{}",
        event.diagnostics,
        event
            .project
            .as_ref()
            .map(|p| format!(" of the project {p}"))
            .unwrap_or_default(),
        pending.unwrap_or_default()
    );
    let notice = event.trust_pending.map(|t| {
        format!(
            "the project's trust is {} since, but the changed configuration has errors (`hookd check` shows them): the daemon keeps the previous configuration, where it is {}, until they are fixed",
            t.name(),
            was.name()
        )
    });
    (event, notice)
}
