//! Trust: a project's `.infer/` is inert until the user trusts it, and only in the state they
//! reviewed. `hookd trust` records a SHA-256 fingerprint of the project's hook-relevant files in
//! the user's configuration directory; any change to them makes the project untrusted again.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::paths::PROJECT_FILES;

/// What was hashed and the hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Fingerprint {
    /// Hex SHA-256 over every file below (name and content, or a mark when absent).
    pub sha256: String,
    /// The files covered: the `.infer/` files and every file a project hook runs as code, as
    /// the kernel resolves it (symlinks followed), relative to the project when inside it,
    /// absolute otherwise.
    pub files: Vec<String>,
    /// The project hooks' words, kept to resolve them again in [`still_matches`]: a symlink
    /// retargeted after the check changes which file runs.
    #[serde(skip)]
    argvs: Vec<Vec<String>>,
}

/// Interpreters whose non-option arguments name the code they run. A versioned name
/// (`python3.12`, `perl5.36`) counts as its family: trailing digits and dots are ignored.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "fish",
    "python",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "Rscript",
    "pwsh",
    "osascript",
];

/// Options after which an interpreter's next word is inline code (already in hooks.yaml, so
/// covered) rather than a script.
fn inline_code_options(interp: &str) -> &'static [&'static str] {
    match interp {
        "python" | "pypy" | "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "fish" => &["-c"],
        "node" | "nodejs" | "bun" => &["-e", "--eval", "-p", "--print"],
        "ruby" | "perl" => &["-e", "-E"],
        "php" => &["-r"],
        "lua" | "luajit" => &["-e"],
        "pwsh" => &["-c", "-Command", "-command"],
        _ => &[],
    }
}

/// Programs that run the rest of their words as a command (hookd sees through these).
const WRAPPERS: &[&str] = &["env", "nice", "nohup", "timeout"];

/// What the fingerprint covers of one hook's code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Coverage {
    /// The files hashed for it (resolved, see [`Fingerprint::files`]).
    pub files: Vec<String>,
    /// Why some code it runs is NOT covered, for the review (`hookd trust`, `hookd check`).
    pub blind: Option<String>,
}

/// Where `word`, run or opened with the project as working directory, leads: resolved as the
/// kernel resolves it (each symlink followed, then `..` taken from the resolved directory, as
/// `realpath` does), not lexically. `None` when it is not the project's: it neither names a
/// path inside the project nor resolves into it.
fn locate(root: &Path, word: &str) -> Option<(String, bool)> {
    let full = if Path::new(word).is_absolute() {
        PathBuf::from(word)
    } else {
        root.join(word)
    };
    let real = match full.canonicalize() {
        Ok(real) => Some((real, true)),
        // Absent (or a dangling symlink): resolve its directory, keep its own name.
        Err(_) => match (full.parent().map(Path::canonicalize), full.file_name()) {
            (Some(Ok(dir)), Some(name)) => Some((dir.join(name), false)),
            _ => None,
        },
    };
    let lexical = inside(root, word);
    match real {
        Some((real, exists)) => {
            let shown = match real.strip_prefix(root) {
                Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
                Ok(_) => return None,
                Err(_) if lexical.is_some() => real.display().to_string(),
                Err(_) => return None,
            };
            Some((shown, exists))
        }
        None => lexical.map(|l| (l, false)),
    }
}

/// The program's name without directories and version (`/usr/bin/python3.12` -> `python`).
fn family(word: &str) -> &str {
    let base = word.rsplit('/').next().unwrap_or(word);
    let trimmed = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if trimmed.is_empty() {
        base
    } else {
        trimmed
    }
}

/// Skip a wrapper's own options; the index of the command it runs, or why hookd cannot tell.
fn unwrap(name: &str, argv: &[String], mut i: usize) -> Result<usize, String> {
    let takes_value: &[&str] = match name {
        "env" => &["-u", "--unset"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        _ => &[],
    };
    while let Some(w) = argv.get(i) {
        if name == "env"
            && (w.starts_with("-S")
                || w.starts_with("--split-string")
                || w.starts_with("-C")
                || w.starts_with("--chdir"))
        {
            return Err(format!("`env {w}` runs a command hookd does not parse"));
        }
        if takes_value.contains(&w.as_str()) {
            i += 2;
        } else if w == "--" {
            i += 1;
            break;
        } else if w.starts_with('-') && w.len() > 1 || (name == "env" && w.contains('=')) {
            i += 1;
        } else {
            break;
        }
    }
    // `timeout DURATION COMMAND`.
    Ok(if name == "timeout" { i + 1 } else { i })
}

/// The project files a hook's words name as code: the program when it is run by path, and,
/// for an interpreter (also behind `env`, `nice`, `nohup`, `timeout`), its script and every
/// other argument naming a project file, or the files `python -m a.b` imports first. Each is
/// resolved as the kernel will; anything outside the project is not the repository's to
/// change and is left out. Programs found on PATH are not project code.
impl super::Config {
    /// What the project's fingerprint covers of the code `command` runs (for a review: `hookd
    /// trust`, `hookd check`); `None` when `command` is not one plain command.
    pub fn code_coverage(&self, command: &str) -> Option<Coverage> {
        let argv = crate::gate::argv_of(command)?;
        let root = self
            .project_dir
            .canonicalize()
            .unwrap_or_else(|_| self.project_dir.clone());
        Some(coverage(&root, &argv))
    }
}

pub(crate) fn coverage(root: &Path, argv: &[String]) -> Coverage {
    let mut c = Coverage::default();
    if let Some((interp, start)) = interpreter(root, argv, &mut c) {
        interpreter_args(root, &interp, &argv[start..], &mut c);
    }
    c
}

/// Add the project file `word` names to `c`, if it names one: whether it exists.
fn add(root: &Path, c: &mut Coverage, word: &str) -> Option<bool> {
    let (shown, exists) = locate(root, word)?;
    c.files.push(shown);
    Some(exists)
}

/// The program `argv` runs past its wrappers (each program run by path covered, with its
/// `#!` chain): the interpreter's family and where its arguments start, or `None` when it is
/// not an interpreter (or a wrapper could not be read: then `c` is blind).
fn interpreter(root: &Path, argv: &[String], c: &mut Coverage) -> Option<(String, usize)> {
    let mut i = 0;
    loop {
        let program = argv.get(i)?;
        let mut names = vec![family(program).to_string()];
        if program.contains('/') {
            add(root, c, program);
            shebang_chain(root, program, c);
            // A symlink's target decides what runs (`.venv/bin/python` -> python3.12).
            let full = root.join(program);
            if let Ok(real) = full.canonicalize() {
                names.push(family(&real.display().to_string()).to_string());
            }
        }
        if let Some(w) = names.iter().find(|n| WRAPPERS.contains(&n.as_str())) {
            match unwrap(w, argv, i + 1) {
                Ok(next) => i = next,
                Err(why) => {
                    c.blind = Some(why);
                    return None;
                }
            }
            continue;
        }
        let n = names
            .into_iter()
            .find(|n| INTERPRETERS.contains(&n.as_str()))?;
        return Some((n, i + 1));
    }
}

/// An interpreter's arguments: its script (or `-m` module), option values naming project
/// files; inline code is in hooks.yaml, covered already.
fn interpreter_args(root: &Path, interp: &str, argv: &[String], c: &mut Coverage) {
    let python = interp == "python" || interp == "pypy";
    let mut script_seen = false;
    let mut skip_next = false;
    let mut args = argv.iter().peekable();
    while let Some(w) = args.next() {
        if skip_next {
            skip_next = false;
            continue;
        }
        if python && (w == "-m" || (w.starts_with("-m") && !w.starts_with("--"))) {
            let module = if w == "-m" { args.next() } else { Some(w) };
            let module = module.map(|m| m.trim_start_matches("-m")).unwrap_or("");
            match module_files(module) {
                Some(files) => files.iter().for_each(|f| {
                    add(root, c, f);
                }),
                None => {
                    c.blind = Some(format!(
                        "`{interp} -m {module}`: not a module name hookd can map to files"
                    ))
                }
            }
            script_seen = true;
            continue;
        }
        if inline_code_options(interp).contains(&w.as_str()) {
            // Inline code lives in hooks.yaml, which is covered; its next word is not a file.
            skip_next = true;
            script_seen = true;
            continue;
        }
        if let Some(opt) = w.strip_prefix('-') {
            // `--require=./x.js`: a value that names an existing project file is covered.
            if let Some((_, value)) = opt.split_once('=') {
                if locate(root, value).is_some_and(|(_, exists)| exists) {
                    add(root, c, value);
                }
            }
            continue;
        }
        if (interp == "deno" || interp == "bun")
            && !script_seen
            && matches!(w.as_str(), "run" | "test" | "x")
        {
            continue;
        }
        let exists = add(root, c, w);
        if !script_seen {
            script_seen = true;
            script(root, interp, w, exists, python, c);
        }
    }
}

/// The script word `w`: a Python package directory runs its `__main__.py`; a directory or a
/// missing file lets the interpreter pick code the fingerprint does not cover.
fn script(
    root: &Path,
    interp: &str,
    w: &str,
    exists: Option<bool>,
    python: bool,
    c: &mut Coverage,
) {
    let dir = root.join(w).is_dir();
    if python && dir {
        add(root, c, &format!("{w}/__main__.py"));
    } else if dir || exists == Some(false) {
        c.blind = Some(format!(
            "`{interp} {w}`: `{w}` is not an existing file, so {interp} may run another one (an extension, an index or main file, a module) that the fingerprint does not cover"
        ));
    }
}

/// A script run by path names its interpreter on its `#!` line, and the kernel runs that
/// file with the script as argument: when the interpreter is a project file (`#!./tools/run`,
/// `#!/path/to/project/bin/interp`), it is code the fingerprint must cover, and so is its own
/// `#!` interpreter, to the depth Linux follows (4). A relative interpreter is resolved from
/// the working directory, which is the project's for a hook.
fn shebang_chain(root: &Path, program: &str, c: &mut Coverage) {
    let mut current = root.join(program);
    for _ in 0..4 {
        let Ok(head) = super::fsread::read_head(&current, 256) else {
            return;
        };
        let Some(line) = head.strip_prefix(b"#!") else {
            return;
        };
        let line = line.split(|b| *b == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(line);
        let Some(interp) = line.split_whitespace().next() else {
            return;
        };
        let Some((shown, _)) = locate(root, interp) else {
            return;
        };
        if c.files.contains(&shown) {
            return;
        }
        c.files.push(shown);
        current = root.join(interp);
    }
}

/// The files `python -m a.b` runs from the working directory, present or not (so adding one
/// later untrusts): the package `__init__.py`s on the way, `a/b.py`, `a/b/__init__.py` and
/// `a/b/__main__.py`. `None` for a name that is not dotted identifiers.
fn module_files(module: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = module.split('.').collect();
    if module.is_empty()
        || !parts.iter().all(|p| {
            !p.is_empty()
                && !p.starts_with(|c: char| c.is_ascii_digit())
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
    {
        return None;
    }
    let mut files: Vec<String> = (1..parts.len())
        .map(|n| format!("{}/__init__.py", parts[..n].join("/")))
        .collect();
    let path = parts.join("/");
    files.push(format!("{path}.py"));
    files.push(format!("{path}/__init__.py"));
    files.push(format!("{path}/__main__.py"));
    Some(files)
}

/// `word` as a path relative to `root`, if it stays inside it (`.` and `..` resolved lexically).
fn inside(root: &Path, word: &str) -> Option<String> {
    use std::path::Component;
    let joined = if Path::new(word).is_absolute() {
        PathBuf::from(word)
    } else {
        root.join(word)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    let rel = out.strip_prefix(root).ok()?.display().to_string();
    (!rel.is_empty()).then_some(rel)
}

/// The project files a hook from the user's own configuration runs as code: those its words
/// name that exist (a program run by path, an interpreter's script, the modules `python -m`
/// imports from the project, a `#!` chain; see [`Config::code_coverage`](super::Config)), and
/// a program found on `path` (absolute entries only) that resolves inside the project. A
/// program on `PATH` outside the project, or given by an absolute path outside it, is not.
pub fn project_code(
    project: &Path,
    argv: &[String],
    path: Option<&std::ffi::OsStr>,
) -> Vec<String> {
    let root = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let mut files: Vec<String> = coverage(&root, argv)
        .files
        .into_iter()
        .filter(|f| root.join(f).symlink_metadata().is_ok())
        .collect();
    // A program run by name: found as the runner will find it.
    if let Some(program) = argv.first().filter(|p| !p.contains('/')) {
        let found = crate::program::program_path(program, &root, path);
        if let Some(real) = found.and_then(|c| c.canonicalize().ok()) {
            if let Ok(rel) = real.strip_prefix(&root) {
                files.push(rel.display().to_string());
            }
        }
    }
    files.sort();
    files.dedup();
    files
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
        .flat_map(|argv| coverage(&root, argv).files)
        .collect();
    extra.sort();
    extra.dedup();
    files.extend(extra);
    let sha256 = hash_files(&root, &files);
    Fingerprint {
        sha256,
        files,
        argvs: hook_argvs.to_vec(),
    }
}

/// Whether the project still hashes to `fp`: checked again right before a trusted project's
/// hook runs, so an edit made after the configuration was loaded (a daemon loads it once) is
/// not run on the strength of the old record. The hooks' words are resolved again, as the
/// kernel is about to: a symlink retargeted since makes another file the one that runs.
pub fn still_matches(project: &Path, fp: &Fingerprint) -> bool {
    fingerprint(project, &fp.argvs).sha256 == fp.sha256
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
    crate::display::hex(&h.finalize())
}

/// One trusted project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TrustRecord {
    /// The fingerprint the user reviewed.
    pub sha256: String,
    /// When (RFC 3339).
    pub trusted_at: String,
    /// The files it covered.
    pub files: Vec<String>,
}

impl TrustRecord {
    /// The record for `project`, as `hookd trust --list` shows it (two lines, escaped).
    pub fn listing(&self, project: &str) -> String {
        use crate::display::visible;
        format!(
            "{}\n  trusted {}  sha256:{}  {}\n",
            visible(project),
            visible(&self.trusted_at),
            visible(self.sha256.get(..16).unwrap_or(&self.sha256)),
            visible(&self.files.join(", "))
        )
    }
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
#[error("trust records at {path}: {cause}")]
#[non_exhaustive]
pub struct TrustError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub cause: TrustCause,
}

/// Why the trust file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustCause {
    /// It is not the JSON hookd writes.
    #[error("unreadable ({0}); fix or delete the file")]
    Unreadable(serde_json::Error),
    /// Reading, locking or writing it failed.
    #[error("{0}")]
    Io(std::io::Error),
    /// The records could not be encoded.
    #[error("{0}")]
    Encode(serde_json::Error),
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

    fn err(&self, cause: TrustCause) -> TrustError {
        TrustError {
            path: self.path.clone(),
            cause,
        }
    }

    fn io(&self, e: std::io::Error) -> TrustError {
        self.err(TrustCause::Io(e))
    }

    fn read(&self) -> Result<TrustFile, TrustError> {
        match fs::read_to_string(&self.path) {
            Ok(text) => {
                serde_json::from_str(&text).map_err(|e| self.err(TrustCause::Unreadable(e)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustFile::default()),
            Err(e) => Err(self.io(e)),
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

    /// The trusted projects as `hookd trust --list` prints them (a line saying there are none,
    /// naming the store, when there are none).
    pub fn list_text(&self) -> Result<String, TrustError> {
        let records = self.list()?;
        if records.is_empty() {
            return Ok(format!("no project is trusted ({})\n", self.path.display()));
        }
        Ok(records.iter().map(|(p, r)| r.listing(p)).collect())
    }

    fn update(&self, f: impl FnOnce(&mut TrustFile) -> bool) -> Result<bool, TrustError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let lock_path = self.path.with_extension("lock");
        let lock: File = crate::atomic::lock_file(&lock_path).map_err(|e| self.io(e))?;
        lock.lock().map_err(|e| self.io(e))?;
        let mut file = self.read()?;
        let changed = f(&mut file);
        if changed {
            let json =
                serde_json::to_vec_pretty(&file).map_err(|e| self.err(TrustCause::Encode(e)))?;
            crate::atomic::write_private(&self.path, &json).map_err(|e| self.io(e))?;
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
#[non_exhaustive]
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
    /// The state, as configuration events say it.
    pub fn state(&self) -> crate::events::TrustState {
        use crate::events::TrustState;
        match self {
            ProjectTrust::NotApplicable => TrustState::NotApplicable,
            ProjectTrust::Trusted { .. } => TrustState::Trusted,
            ProjectTrust::TrustedByFlag => TrustState::TrustedByFlag,
            ProjectTrust::Untrusted { changed: false } => TrustState::Untrusted,
            ProjectTrust::Untrusted { changed: true } => TrustState::Changed,
        }
    }

    /// True when project configuration may act.
    pub fn allows_project(&self) -> bool {
        matches!(
            self,
            ProjectTrust::Trusted { .. }
                | ProjectTrust::TrustedByFlag
                | ProjectTrust::NotApplicable
        )
    }

    /// The first of `files` (the project's code a hook of the user's runs, see
    /// [`project_code`]) that this trust does not cover: every one for a project not trusted,
    /// those outside `fingerprint` for one trusted by record, none when trusted by flag.
    pub fn uncovered<'f>(
        &self,
        fingerprint: Option<&Fingerprint>,
        files: &'f [String],
    ) -> Option<&'f String> {
        match self {
            ProjectTrust::TrustedByFlag => None,
            ProjectTrust::Trusted { .. } => files
                .iter()
                .find(|f| fingerprint.is_none_or(|fp| !fp.files.contains(f))),
            _ => files.first(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn the_files_listed_and_watched_are_the_resolved_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("sub/inner")).unwrap();
        fs::write(root.join("sub/run.sh"), "x").unwrap();
        std::os::unix::fs::symlink("sub/inner", root.join("lnk")).unwrap();
        let fp = fingerprint(&root, &[words("./lnk/../run.sh")]);
        // The daemon watches `fp.files`: the file that runs, not the lexical `run.sh`.
        assert_eq!(fp.files[3..], ["sub/run.sh".to_string()]);
        assert!(still_matches(&root, &fp));
        fs::write(root.join("sub/run.sh"), "y").unwrap();
        assert!(!still_matches(&root, &fp));
    }

    #[test]
    fn interpreters_are_seen_through_wrappers_and_versions() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join("x.py"), "").unwrap();
        for cmd in [
            "python3.12 x.py",
            "env -i A=1 python3 -u x.py",
            "nice -n 5 nohup timeout -k 1 10 python3 x.py",
            "python3 -W ignore::Warning --check-hash-based-pycs=default x.py",
        ] {
            let c = coverage(&root, &words(cmd));
            assert!(c.files.contains(&"x.py".to_string()), "{cmd}: {c:?}");
        }
        let c = coverage(&root, &words("python3 -c print(1)"));
        assert_eq!(c, Coverage::default(), "inline code lives in hooks.yaml");
        let c = coverage(&root, &words("python3 -m 1bad"));
        assert!(c.blind.unwrap().contains("not a module name"));
        let c = coverage(&root, &words("env -C /tmp bash y.sh"));
        assert!(c.blind.unwrap().contains("`env -C`"));
        assert_eq!(coverage(&root, &words("git status")), Coverage::default());
        assert_eq!(
            coverage(&root, &words("bash /etc/profile")).files,
            Vec::<String>::new()
        );
    }
}
