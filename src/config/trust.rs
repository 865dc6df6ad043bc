//! Trust: a project's `.infer/` is inert until the user trusts it, and only in the state they
//! reviewed. `hookd trust` records a SHA-256 fingerprint of the project's hook-relevant files in
//! the user's configuration directory; any change to them makes the project untrusted again.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The project configuration files a fingerprint covers, in `.infer/`.
pub const PROJECT_FILES: [&str; 3] = ["config.yaml", "hooks.yaml", "reminders.yaml"];

/// What was hashed and the hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fingerprint {
    /// Hex SHA-256 over every file below (name and content, or a mark when absent).
    pub sha256: String,
    /// The files covered, relative to the project: the `.infer/` files and every program inside
    /// the project that a project hook runs.
    pub files: Vec<String>,
}

/// Interpreters whose non-option arguments name the code they run.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python2", "python3", "node", "deno",
    "bun", "ruby", "perl", "php", "lua", "tclsh", "Rscript", "pwsh",
];

/// Programs that run code read from the project's own files (a Makefile, package.json, a
/// justfile, build scripts) which the fingerprint does not hash: a hook running one of them is
/// flagged in the review as not covered.
const PROJECT_RUNNERS: &[&str] = &[
    "make",
    "gmake",
    "just",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "cargo",
    "go",
    "rake",
    "bundle",
    "gradle",
    "mvn",
    "tox",
    "nox",
    "poetry",
    "pipenv",
    "uv",
    "pre-commit",
    "lefthook",
    "task",
    "mage",
    "bazel",
    "cmake",
    "ninja",
    "meson",
    "dotnet",
    "composer",
    "mix",
    "sbt",
];

/// What the fingerprint covers of one hook: the project files its words name as code, and, when
/// it runs code the fingerprint cannot see, why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Paths as execve will open them, relative to the project (or absolute).
    pub files: Vec<String>,
    /// Why some of the code this hook runs is not covered, for the review.
    pub uncovered: Option<String>,
}

/// The project files a hook's words name as code: the program when it is run by path, the
/// non-option arguments of an interpreter (`bash scripts/fmt.sh`), a Python module run with
/// `-m` (`pkg/mod.py`, `pkg/mod/__init__.py`, `pkg/mod/__main__.py`), and the same behind `env`.
/// Paths are kept as written, joined to the project: the kernel then resolves them exactly as
/// execve will (each symlink before the `..` that follows it), whether or not they exist yet.
/// Anything that leads outside the project is not the repository's to change and is left out.
pub fn coverage(root: &Path, argv: &[String]) -> Coverage {
    let mut words = Vec::new();
    let uncovered = collect(argv, &mut words);
    let mut files: Vec<String> = words.iter().filter_map(|w| inside(root, w)).collect();
    files.dedup();
    Coverage { files, uncovered }
}

fn code_files(root: &Path, argv: &[String]) -> Vec<String> {
    coverage(root, argv).files
}

fn collect(argv: &[String], words: &mut Vec<String>) -> Option<String> {
    let program = argv.first()?;
    if program.contains('/') {
        words.push(program.clone());
    }
    let base = program.rsplit('/').next().unwrap_or(program);
    let args = &argv[1..];
    if base == "env" {
        // env [-i] [-u NAME] [NAME=VALUE]… PROGRAM ARGS: the program it starts is the code.
        let mut i = 0;
        while let Some(w) = args.get(i) {
            match w.as_str() {
                "-i" | "--ignore-environment" | "-0" | "--null" | "-" => i += 1,
                "-u" | "--unset" => i += 2,
                w if w.starts_with('-') => {
                    return Some(format!(
                        "`env {w}` changes how the program is found; its code is not covered"
                    ))
                }
                w if w.contains('=') => i += 1,
                _ => break,
            }
        }
        return collect(&args[i.min(args.len())..], words);
    }
    if INTERPRETERS.contains(&base) || base.starts_with("python3.") {
        let mut it = args.iter();
        while let Some(w) = it.next() {
            if base.starts_with("python") && w == "-m" {
                if let Some(module) = it.next() {
                    let path = module.replace('.', "/");
                    words.push(format!("{path}.py"));
                    words.push(format!("{path}/__init__.py"));
                    words.push(format!("{path}/__main__.py"));
                }
                break;
            }
            if !w.starts_with('-') && !w.is_empty() {
                words.push(w.clone());
            }
        }
        return None;
    }
    PROJECT_RUNNERS.contains(&base).then(|| {
        format!("`{base}` runs code from the project's build files (Makefile, package.json, …), which the fingerprint does not hash")
    })
}

/// `word` as execve will open it, relative to `root` when possible, if it is inside the project
/// either as written (`.` and `..` taken lexically) or once every symlink is resolved.
fn inside(root: &Path, word: &str) -> Option<String> {
    use std::path::Component;
    let joined = if Path::new(word).is_absolute() {
        PathBuf::from(word)
    } else {
        root.join(word)
    };
    let mut lexical = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let real_inside = joined
        .canonicalize()
        .is_ok_and(|real| real.starts_with(root));
    if !(real_inside || lexical.starts_with(root)) {
        return None;
    }
    let written = Path::new(word);
    let rel = if written.is_absolute() {
        word.to_string()
    } else {
        // Drop leading `./` only: every other component is what the kernel will walk.
        let mut comps = written.components().peekable();
        while comps.peek() == Some(&Component::CurDir) {
            comps.next();
        }
        comps.collect::<PathBuf>().display().to_string()
    };
    (!rel.is_empty() && lexical != root).then_some(rel)
}

/// The fingerprint of `project`'s configuration and of the code its hooks name (`hook_argvs`:
/// the words of each project hook).
pub fn fingerprint(project: &Path, hook_argvs: &[Vec<String>]) -> Fingerprint {
    let root = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let mut files: Vec<String> = PROJECT_FILES
        .iter()
        .map(|f| format!(".infer/{f}"))
        .collect();
    let mut extra: Vec<String> = hook_argvs
        .iter()
        .flat_map(|argv| code_files(&root, argv))
        .collect();
    extra.sort();
    extra.dedup();
    files.extend(extra);
    let sha256 = hash_files(&root, &files);
    Fingerprint { sha256, files }
}

/// Whether the files `fp` covers still hash to it: checked again right before a trusted
/// project's hook runs, so an edit made after the configuration was loaded (a daemon loads it
/// once) is not run on the strength of the old record.
pub fn still_matches(project: &Path, fp: &Fingerprint) -> bool {
    let root = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    hash_files(&root, &fp.files) == fp.sha256
}

/// The most of one file the fingerprint reads; a larger one hashes as unreadable.
const MAX_CODE_FILE: u64 = 64 * 1024 * 1024;

fn hash_files(root: &Path, files: &[String]) -> String {
    let mut h = Sha256::new();
    for f in files {
        h.update(f.as_bytes());
        h.update([0]);
        // Never block on a FIFO or read a device a repository planted: those hash as what
        // they are, so replacing one with a regular file (or the reverse) changes the hash.
        match super::fsread::read_regular(&root.join(f), MAX_CODE_FILE) {
            Ok(bytes) => {
                h.update((bytes.len() as u64).to_le_bytes());
                h.update(&bytes);
            }
            Err(super::fsread::ReadError::NotFound) => h.update(b"\xffabsent"),
            Err(e) => {
                h.update(b"\xffunreadable: ");
                h.update(e.to_string().as_bytes());
            }
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// One trusted project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The fingerprint the user reviewed.
    pub sha256: String,
    /// When (RFC 3339).
    pub trusted_at: String,
    /// The files it covered.
    pub files: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    projects: BTreeMap<String, TrustRecord>,
}

/// The user's trust records: one JSON file, locked while rewritten.
#[derive(Clone, Debug)]
pub struct TrustStore {
    path: PathBuf,
}

/// The trust file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("trust records at {path}: {message}")]
pub struct TrustError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl TrustStore {
    /// A store at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    /// `$HOOKD_TRUST_FILE`, else `$XDG_CONFIG_HOME/hookd/trust.json`, else `~/.config/hookd/trust.json`.
    pub fn default_path(env: &BTreeMap<String, String>, home: Option<&Path>) -> Option<PathBuf> {
        let var = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        var("HOOKD_TRUST_FILE")
            .or_else(|| var("XDG_CONFIG_HOME").map(|p| p.join("hookd/trust.json")))
            .or_else(|| home.map(|h| h.join(".config/hookd/trust.json")))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, message: impl std::fmt::Display) -> TrustError {
        TrustError {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }

    fn read(&self) -> Result<TrustFile, TrustError> {
        match fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| self.err(format!("unreadable ({e}); fix or delete the file"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustFile::default()),
            Err(e) => Err(self.err(e)),
        }
    }

    /// The record for `project`, if any.
    pub fn get(&self, project: &Path) -> Result<Option<TrustRecord>, TrustError> {
        Ok(self.read()?.projects.get(&key(project)).cloned())
    }

    /// Every record, by project path.
    pub fn list(&self) -> Result<Vec<(String, TrustRecord)>, TrustError> {
        Ok(self.read()?.projects.into_iter().collect())
    }

    fn update(&self, f: impl FnOnce(&mut TrustFile) -> bool) -> Result<bool, TrustError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| self.err(e))?;
        let lock_path = self.path.with_extension("lock");
        let lock: File = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| self.err(e))?;
        lock.lock().map_err(|e| self.err(e))?;
        let mut file = self.read()?;
        let changed = f(&mut file);
        if changed {
            let tmp = self.path.with_extension("json.tmp");
            let mut out = File::create(&tmp).map_err(|e| self.err(e))?;
            let json = serde_json::to_vec_pretty(&file).map_err(|e| self.err(e))?;
            out.write_all(&json)
                .and_then(|_| out.sync_all())
                .map_err(|e| self.err(e))?;
            fs::rename(&tmp, &self.path).map_err(|e| self.err(e))?;
        }
        Ok(changed)
    }

    /// Trust `project` as it is now.
    pub fn record(&self, project: &Path, fp: &Fingerprint) -> Result<(), TrustError> {
        let record = TrustRecord {
            sha256: fp.sha256.clone(),
            trusted_at: crate::events::now_rfc3339(),
            files: fp.files.clone(),
        };
        self.update(|f| {
            f.projects.insert(key(project), record);
            true
        })
        .map(|_| ())
    }

    /// Forget `project`; false when it was not trusted.
    pub fn revoke(&self, project: &Path) -> Result<bool, TrustError> {
        self.update(|f| f.projects.remove(&key(project)).is_some())
    }
}

fn key(project: &Path) -> String {
    project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf())
        .display()
        .to_string()
}

/// Whether the project's configuration may act.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ProjectTrust {
    /// No project configuration was read (there is none, or `--config-dir` was used).
    NotApplicable,
    /// Trusted with `hookd trust`, unchanged since.
    Trusted {
        /// When.
        since: String,
    },
    /// Trusted for this run by `--trust-project` or `HOOKD_TRUST_PROJECT=1`.
    TrustedByFlag,
    /// Never trusted, or changed since it was: its hooks, allow entries and reminders are inert.
    Untrusted {
        /// True when it was trusted once and a covered file changed since.
        changed: bool,
    },
}

impl ProjectTrust {
    /// True when project configuration may act.
    pub fn allows_project(&self) -> bool {
        matches!(
            self,
            ProjectTrust::Trusted { .. }
                | ProjectTrust::TrustedByFlag
                | ProjectTrust::NotApplicable
        )
    }
}
