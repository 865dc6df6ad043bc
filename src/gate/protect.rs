//! hookd's own files, protected from the model: with `gate_shell_tools`, a file tool call that
//! writes one, or a shell command that names one, is denied at `pre_tool`.
//!
//! A path is compared after resolving it the way the kernel will open it (`~`, relative to
//! the tool call's `cwd`, symlinks component by component, then `..`), and also as written
//! (lexically normalized), so neither a symlink nor a `..` detour hides a protected file.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::{Denied, DenyReason};
use crate::places::{Anchors, Gate, Shape, PLACES};

/// File tools that write, by agent: Claude Code and infer (`Write`, `Edit`, `MultiEdit`,
/// `NotebookEdit`, infer's `Delete`), Gemini CLI (`write_file`, `replace`), Crush (`write`,
/// `edit`, `multiedit`, `hashline_edit`, `delete`, and `download`, which saves a URL to a file).
pub(crate) const FILE_TOOLS: &[&str] = &[
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Delete",
    "write_file",
    "replace",
    "write",
    "edit",
    "multiedit",
    "hashline_edit",
    "delete",
    "download",
];

/// The input keys that name the file a file tool writes, across those agents.
pub(crate) const PATH_KEYS: &[&str] = &["file_path", "path", "notebook_path", "absolute_path"];

/// A call that touches a protected place: the word or path it named, and the place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Touch {
    /// As the call wrote it.
    pub named: String,
    /// The protected place it is, or is inside (`/home/u/.infer`).
    pub place: String,
    /// An archive extracted or a directory's contents copied into a directory holding the
    /// place: what lands there is named by the archive or the source, not by the command.
    pub bulk: bool,
}

/// One protected place.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Rule {
    /// The directory and everything in it.
    Dir(PathBuf),
    /// Exactly this file.
    File(PathBuf),
    /// Files in `dir` whose name starts with the prefix (`~/.claude/settings*`).
    Prefixed(PathBuf, String),
}

impl Rule {
    fn covers(&self, path: &Path) -> bool {
        match self {
            Rule::Dir(d) => path.starts_with(d),
            Rule::File(f) => path == f,
            Rule::Prefixed(dir, prefix) => {
                path.parent() == Some(dir.as_path())
                    && path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(prefix.as_str()))
            }
        }
    }

    /// The path everything the rule protects is at or below.
    fn inside(&self) -> &Path {
        match self {
            Rule::Dir(p) | Rule::File(p) => p,
            Rule::Prefixed(d, _) => d,
        }
    }

    /// The place as a path text (`~/.claude/settings` for the prefixed rule).
    fn text(&self) -> String {
        match self {
            Rule::Dir(p) | Rule::File(p) => p.display().to_string(),
            Rule::Prefixed(p, prefix) => p.join(prefix).display().to_string(),
        }
    }
}

/// The places the model may not write, computed once per engine.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProtectedPaths {
    rules: Vec<Rule>,
    /// Each rule's place as a path text ([`Rule::text`]), in the same order: looked for inside
    /// every word of a command, so made once.
    texts: Vec<String>,
    home: Option<PathBuf>,
    /// The home and project directories (as written and resolved): they and what is above
    /// them hold protected places, but naming them (`ls ~`, `cp x .`) is not a touch.
    roots: Vec<PathBuf>,
}

/// Where the environment puts hookd's and the agents' files (a host's variables; tests set
/// them): the anchors of the catalog of places (`crate::places`) and hookd's run-time places.
#[derive(Clone, Debug, Default)]
pub(crate) struct Places {
    /// The directory relative places are read from (the host's; `/` when it has none).
    pub base: PathBuf,
    pub home: Option<PathBuf>,
    pub project_dir: PathBuf,
    /// The catalog's anchors: the homes, the configuration homes, the variables naming places.
    pub anchors: Anchors,
    /// Configuration files read, e.g. those of `--config-dir`.
    pub sources: Vec<PathBuf>,
    /// Directories configuration is read from (`--config-dir`): its files are protected even
    /// before they exist, or the model could create one the next run reads as the user's.
    pub config_dirs: Vec<PathBuf>,
    /// The agents' settings files `hookd install --scope user` put hookd's hooks in (its
    /// record): protected with their siblings of the same stem (`settings.local.json`).
    pub installed: Vec<PathBuf>,
    /// More places, protected too (values of these variables an adapter's scrub took away).
    pub extra: Vec<Places>,
    /// How far below the project nested repositories are looked for (`sandbox.walk`: the
    /// sandbox's walk, read the same way).
    pub walk: crate::places::walk::Bounds,
    /// Where that walk keeps what it read for the next (hookd's `STATE/walks`).
    pub walk_memory: Option<PathBuf>,
}

impl Places {
    /// The places for a project, `var` reading the variables that name places
    /// ([`crate::places::place_vars`], `HOME`, `XDG_CONFIG_HOME`; a non-empty value as a path).
    pub fn new(
        project_dir: &Path,
        sources: &[String],
        config_dir: Option<&Path>,
        var: impl Fn(&str) -> Option<PathBuf>,
    ) -> Places {
        let home = var("HOME");
        Places {
            base: PathBuf::from("/"),
            anchors: Anchors::new(home.iter().cloned().collect(), &var),
            home,
            project_dir: project_dir.to_path_buf(),
            // Files are named as read: absolute, or relative to the project (variables,
            // named without a `/`, are not files).
            sources: sources
                .iter()
                .filter(|s| s.contains('/'))
                .map(|s| project_dir.join(s))
                .collect(),
            config_dirs: config_dir.iter().map(|d| project_dir.join(d)).collect(),
            installed: Vec::new(),
            walk: Default::default(),
            walk_memory: None,
            extra: Vec::new(),
        }
    }

    /// hookd's run-time places as files: the files read and `--config-dir`'s files.
    pub fn runtime(&self) -> Vec<PathBuf> {
        let mut out = self.sources.clone();
        for dir in &self.config_dirs {
            out.extend(crate::paths::PROJECT_FILES.iter().map(|f| dir.join(f)));
        }
        for p in &self.extra {
            out.extend(p.runtime());
        }
        out
    }

    /// The recorded installs as prefixed places: each file's directory and stem
    /// (`settings.json` holds `settings.local.json` too).
    pub fn installed_prefixes(&self) -> Vec<(PathBuf, String)> {
        self.installed
            .iter()
            .filter_map(|f| {
                let stem = f.file_stem()?.to_string_lossy().into_owned();
                Some((f.parent()?.to_path_buf(), stem))
            })
            .collect()
    }
}

/// The rule protecting `path` shaped as `shape`.
fn rule(path: PathBuf, shape: Shape) -> Rule {
    match shape {
        Shape::Dir => Rule::Dir(path),
        Shape::Prefix => match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => {
                Rule::Prefixed(dir.to_path_buf(), name.to_string_lossy().into_owned())
            }
            _ => Rule::File(path),
        },
        _ => Rule::File(path),
    }
}

/// The protected places of `p`, as given (made absolute by [`ProtectedPaths::new`]): the
/// catalog's rows the gate protects, at the project's root and at `p`'s anchors, and hookd's
/// run-time places.
fn rules(p: &Places) -> Vec<Rule> {
    let mut rules = Vec::new();
    for place in crate::places::anywhere().filter(|r| r.gate == Gate::Protect) {
        rules.push(rule(p.project_dir.join(place.path), place.shape));
    }
    for place in PLACES.iter().filter(|r| r.gate == Gate::Protect) {
        for path in p.anchors.paths(place) {
            rules.push(rule(path, place.shape));
        }
    }
    rules.extend(git_rules(&p.base.join(&p.project_dir), p));
    rules.extend(p.sources.iter().cloned().map(Rule::File));
    for f in &p.installed {
        rules.push(Rule::File(f.clone()));
        let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned());
        if let (Some(dir), Some(stem)) = (f.parent(), stem) {
            rules.push(Rule::Prefixed(dir.to_path_buf(), stem));
        }
    }
    for dir in &p.config_dirs {
        for file in crate::paths::PROJECT_FILES {
            rules.push(Rule::File(dir.join(file)));
        }
    }
    rules.extend(p.extra.iter().flat_map(self::rules));
    rules
}

/// What git reads besides `.git` in the work tree `dir`: the git directory a `.git` file names
/// (with its places, as a `.git`'s), the directory `core.hooksPath` names, the files its
/// configuration includes, what a hook manager's installed hooks run.
fn git_rules(dir: &Path, p: &Places) -> Vec<Rule> {
    let git = crate::places::git::indirections(dir, &p.anchors.homes, &p.anchors.config_homes);
    let mut rules = Vec::new();
    for dir in &git.git_dirs {
        for place in crate::places::in_git_dir().filter(|r| r.gate == Gate::Protect) {
            rules.push(rule(dir.join(place.path), place.shape));
        }
    }
    rules.extend(git.hooks_paths.into_iter().map(Rule::Dir));
    rules.extend(git.includes.into_iter().map(Rule::File));
    // What a hook manager's installed hooks run (`.husky/`, `.pre-commit-config.yaml`, …).
    rules.extend(git.hook_configs.into_iter().map(Rule::Dir));
    rules
}

/// The same for every repository below the project's root (a nested one, a submodule's work
/// tree) that the sandbox's walk finds ([`crate::places::walk`]): their `.git` places are
/// protected by name already, what they name elsewhere is not. Where the walk is cut short
/// (a tree too large to walk), what it found is kept; the sandbox refuses to run there at all.
fn nested_git_rules(p: &Places) -> Vec<Rule> {
    let root = p.base.join(&p.project_dir);
    let memory = p.walk_memory.as_deref();
    crate::places::walk::walk_remembered(&root, &[".git"], &p.walk, memory)
        .dirs
        .iter()
        .flat_map(|d| git_rules(d, p))
        .collect()
}

impl ProtectedPaths {
    /// hookd's configuration (`~/.infer/`, the project's `.infer/`, every file read), its trust
    /// store and state, the daemon's socket and token, and the agents' settings where
    /// `hookd install` puts its adapter.
    pub fn new(p: &Places) -> ProtectedPaths {
        let mut rules = rules(p);
        rules.extend(nested_git_rules(p));
        // Relative places (a library user's `project_dir` of `.`) are made absolute first.
        let cwd = &p.base;
        let mut all = Vec::with_capacity(rules.len() * 2);
        let mut seen = std::collections::HashSet::new();
        // Most places share their directories (the home, the project): each is resolved once.
        let mut resolver = Resolver::default();
        for r in rules {
            let r = match r {
                Rule::Dir(d) => Rule::Dir(normalize(&cwd.join(d))),
                Rule::File(f) => Rule::File(normalize(&cwd.join(f))),
                Rule::Prefixed(d, x) => Rule::Prefixed(normalize(&cwd.join(d)), x),
            };
            let resolved = match &r {
                Rule::Dir(d) => Rule::Dir(resolver.resolve(d)),
                Rule::File(f) => Rule::File(resolver.resolve(f)),
                Rule::Prefixed(d, x) => Rule::Prefixed(resolver.resolve(d), x.clone()),
            };
            if resolved != r && seen.insert(resolved.clone()) {
                all.push(resolved);
            }
            if seen.insert(r.clone()) {
                all.push(r);
            }
        }
        // Directories that may hold protected places but may be named freely: `/`, the home
        // and the project, and the directories above them.
        let roots = p
            .anchors
            .homes
            .iter()
            .map(PathBuf::as_path)
            .chain(p.home.as_deref())
            .chain([p.project_dir.as_path()])
            .flat_map(|d| {
                let d = normalize(&cwd.join(d));
                [resolve(&d), d]
            })
            .collect();
        ProtectedPaths {
            texts: all.iter().map(Rule::text).collect(),
            rules: all,
            home: p.home.clone(),
            roots,
        }
    }

    /// The protected place `word` names, read as a path from `cwd`.
    pub fn protected(&self, word: &str, cwd: &Path) -> Option<String> {
        if word.is_empty() {
            return None;
        }
        let expanded = match (word.strip_prefix('~'), &self.home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                home.join(rest.trim_start_matches('/'))
            }
            _ => PathBuf::from(word),
        };
        let absolute = cwd.join(expanded);
        self.place_of(&absolute)
    }

    /// The protected place `absolute` is, is inside, or holds: a directory that contains one
    /// (`~/.claude`, `~/.config`) is one too, since moving it away or replacing it replaces
    /// what is inside. The home and project directories and those above them are exempt.
    fn place_of(&self, absolute: &Path) -> Option<String> {
        let lexical = normalize(absolute);
        let resolved = resolve(absolute);
        if let Some(place) = by_name(&lexical).or_else(|| by_name(&resolved)) {
            return Some(place);
        }
        if let Some(r) = self
            .rules
            .iter()
            .find(|r| r.covers(&lexical) || r.covers(&resolved))
        {
            return Some(r.text());
        }
        let holds = |p: &Path| -> Option<String> {
            if self.roots.iter().any(|root| root.starts_with(p)) {
                return None;
            }
            self.rules
                .iter()
                .find(|r| r.inside().starts_with(p) && r.inside() != p)
                .or_else(|| {
                    self.rules
                        .iter()
                        .find(|r| matches!(r, Rule::Prefixed(d, _) if d == p))
                })
                .map(Rule::text)
        };
        holds(&lexical).or_else(|| holds(&resolved))
    }

    /// A word that names an existing directory (or ends in `/`) with another word of the
    /// command: `cp settings.json ~/.claude/`, `mv -t ~/.config/crush crush.json`, `cp -r
    /// x/.gemini ~`. What lands there, the directory joined with the other word's last
    /// component, is checked like a named path.
    fn landing(&self, argv: &[String], cwd: &Path) -> Option<Touch> {
        let path_of = |word: &str| self.path_of(word, cwd);
        // Each directory once, and only one near a protected place (inside one, or holding one):
        // anything else cannot gain a protected child. Without this, a long command of
        // directories cost words x words path resolutions (seconds for 8 KiB).
        let mut dirs: Vec<PathBuf> = Vec::new();
        for w in argv.iter().skip(1) {
            let w = w.rsplit_once('=').map_or(w.as_str(), |(_, v)| v);
            let p = path_of(w);
            if w.is_empty() || dirs.contains(&normalize(&p)) {
                continue;
            }
            let resolved = resolve(&p);
            if !(w.ends_with('/') || resolved.is_dir()) {
                continue;
            }
            let near = |d: &Path| {
                holds_by_name(d)
                    || self
                        .rules
                        .iter()
                        .any(|r| r.inside().starts_with(d) || d.starts_with(r.inside()))
            };
            if near(&normalize(&p)) || near(&resolved) {
                dirs.push(normalize(&p));
            }
        }
        let mut names: Vec<(&String, &std::ffi::OsStr)> = Vec::new();
        for word in argv.iter().skip(1).filter(|w| !w.starts_with('-')) {
            if let Some(name) = Path::new(word.trim_end_matches('/')).file_name() {
                if !names.iter().any(|(_, n)| *n == name) {
                    names.push((word, name));
                }
            }
        }
        for dir in &dirs {
            for (word, name) in &names {
                if let Some(place) = self.place_of(&dir.join(name)) {
                    return Some(Touch {
                        named: (*word).clone(),
                        place,
                        bulk: false,
                    });
                }
            }
        }
        None
    }

    /// `word` as a path from `cwd`, with a leading `~` as the home directory.
    fn path_of(&self, word: &str, cwd: &Path) -> PathBuf {
        match (word.strip_prefix('~'), &self.home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                cwd.join(home.join(rest.trim_start_matches('/')))
            }
            _ => cwd.join(word),
        }
    }

    /// A bulk write (an archive extracted, a directory's contents copied; see `gate::bulk`)
    /// into a directory that is, is inside or holds a protected place, the home and project
    /// directories included, or to wherever the archive's absolute names say.
    fn bulk_into(&self, argv: &[String], cwd: &Path) -> Option<Touch> {
        let dests = super::bulk::destinations(argv)?;
        let named = argv.join(" ");
        if dests.is_empty() {
            return Some(Touch {
                named,
                place: "hookd's own files anywhere, by the archive's absolute names".into(),
                bulk: true,
            });
        }
        for dest in dests {
            let p = self.path_of(&dest, cwd);
            let (lexical, resolved) = (normalize(&p), resolve(&p));
            let near = |d: &Path| {
                self.rules
                    .iter()
                    .find(|r| r.inside().starts_with(d) || d.starts_with(r.inside()))
            };
            if let Some(r) = near(&lexical).or_else(|| near(&resolved)) {
                return Some(Touch {
                    named,
                    place: r.text(),
                    bulk: true,
                });
            }
            let held = [&lexical, &resolved]
                .into_iter()
                .find(|d| holds_by_name(d))
                .map(|d| d.display().to_string());
            if let Some(place) = held {
                return Some(Touch {
                    named,
                    place,
                    bulk: true,
                });
            }
        }
        None
    }

    /// The first word of a shell command that names a protected place, and the place: each
    /// word and what follows `=` in it (`--output=FILE`, `of=FILE`) read as a path from `cwd`;
    /// a word with the text of a protected path inside it (`-o/home/u/.infer/x`); a word with
    /// a `.infer` component (another project's configuration is hookd's too).
    pub fn named_by(&self, argv: &[String], cwd: &Path) -> Option<Touch> {
        for word in argv {
            // The word, what follows each `=` in it, and the values a short-option cluster may
            // carry attached: each may be a path.
            let candidates: Vec<&str> = std::iter::once(word.as_str())
                .chain(word.match_indices('=').map(|(i, _)| &word[i + 1..]))
                .chain(attached_values(word))
                .collect();
            if let Some(place) = candidates.iter().find_map(|c| self.protected(c, cwd)) {
                return Some(Touch {
                    named: word.clone(),
                    place,
                    bulk: false,
                });
            }
            if let Some(place) = self
                .texts
                .iter()
                .find(|text| text.len() > 1 && word.contains(text.as_str()))
                .cloned()
            {
                return Some(Touch {
                    named: word.clone(),
                    place,
                    bulk: false,
                });
            }
            if candidates
                .iter()
                .any(|c| c.split('/').any(|part| part == ".infer"))
            {
                return Some(Touch {
                    named: word.clone(),
                    place: ".infer/".to_string(),
                    bulk: false,
                });
            }
        }
        self.landing(argv, cwd)
            .or_else(|| self.bulk_into(argv, cwd))
    }

    /// Why an admitted model command may not run after all: its first part that names one of
    /// hookd's own files, seen from every directory the command may be in by then (a `cd`
    /// part adds its target; a failed `cd` with `;` or `||` leaves the old one, so both stay
    /// candidates).
    pub(crate) fn touched_by(&self, verdict: &super::ModelVerdict, cwd: PathBuf) -> Option<Denied> {
        const MOST_DIRECTORIES: usize = 16;
        let mut dirs = vec![cwd];
        for a in verdict.admitted() {
            for dir in &dirs {
                if let Some(t) = self.named_by(&a.argv, dir) {
                    return Some(denial(if t.bulk {
                        let of = if t.place.starts_with('/') {
                            ", one of hookd's own files"
                        } else {
                            ""
                        };
                        format!(
                            "`{}` writes files it does not name (an archive's or a directory's contents) where they can reach {}{of}",
                            t.named, t.place
                        )
                    } else {
                        format!("`{}` names {}, one of hookd's own files", t.named, t.place)
                    }));
                }
            }
            if a.argv[0] == "cd" {
                let target = super::cd_target(&a.argv)
                    .map(PathBuf::from)
                    .unwrap_or_else(|| self.home.clone().unwrap_or_default());
                let moved: Vec<PathBuf> = dirs.iter().map(|d| d.join(&target)).collect();
                dirs.extend(moved);
                dirs.sort();
                dirs.dedup();
                if dirs.len() > MOST_DIRECTORIES {
                    return Some(denial(
                        "the command changes directory too often to tell where it writes".into(),
                    ));
                }
            }
        }
        None
    }

    /// The protected file a file tool call writes, by its path input (any key agents use).
    pub fn written_by(&self, input: Option<&serde_json::Value>, cwd: &Path) -> Option<Touch> {
        let input = input?;
        PATH_KEYS
            .iter()
            .filter_map(|k| input.get(*k).and_then(|v| v.as_str()))
            .find_map(|path| {
                self.protected(path, cwd).map(|place| Touch {
                    named: path.to_string(),
                    place,
                    bulk: false,
                })
            })
    }
}

/// The denial of a call that touches hookd's own files: the model learns the file is
/// protected, the operator's hint says there is no entry that lifts it.
pub(crate) fn denial(detail: String) -> Denied {
    Denied {
        reason: DenyReason::ProtectedPath,
        detail,
        hint: DenyReason::ProtectedPath.advice().to_string(),
    }
}

/// The denial of a file tool call writing `named`, inside `place`.
pub(crate) fn file_denial(named: &str, place: &str) -> Denied {
    denial(format!(
        "`{named}` is inside {place}, one of hookd's own files"
    ))
}

/// hookd's own files and the agents' settings, as `gate_shell_tools` keeps the model's shell
/// commands and file tools away from them: what `hookd allow --model` and the adapters check
/// after the allow-list.
#[derive(Clone, Debug)]
pub struct OwnFiles(ProtectedPaths);

impl OwnFiles {
    /// Those at `places` (a loaded configuration's: `Config::places`).
    #[cfg(feature = "cli")]
    pub(crate) fn at(places: &Places) -> Self {
        OwnFiles(ProtectedPaths::new(places))
    }

    /// Why the model's command, admitted by the allow-list as `verdict`, is refused anyway:
    /// it names one of the files, seen from `cwd` and every directory it `cd`s to.
    pub fn command(&self, verdict: &super::ModelVerdict, cwd: &Path) -> Option<Denied> {
        self.0.touched_by(verdict, cwd.to_path_buf())
    }

    /// Why a file tool call writing `path` (from `cwd`) is refused.
    pub fn file(&self, path: &str, cwd: &Path) -> Option<Denied> {
        self.0
            .protected(path, cwd)
            .map(|place| file_denial(path, &place))
    }
}

/// The place protected by name (`crate::places::by_name`: a `.infer` or `.claude` directory,
/// a `.env`, a repository's `.git/hooks/`, … in any directory) that `path` is or is inside, as
/// a path text up to the name.
fn by_name(path: &Path) -> Option<String> {
    crate::places::by_name(path).map(|p| p.display().to_string())
}

/// A directory that is, or is inside, a place `by_name` protects, or that holds one on disk
/// (a `.git`, `.claude`, `.env`, …): what lands in it unnamed (an archive's members, a
/// directory's contents) may replace one.
fn holds_by_name(dir: &Path) -> bool {
    by_name(dir).is_some()
        || crate::places::anywhere().any(|p| std::fs::symlink_metadata(dir.join(p.path)).is_ok())
}

/// [`resolve`] for many normalized absolute paths that share directories: each directory is
/// resolved once and listed once, then only the last component of a path is looked at: a name
/// its directory's listing lacks, or says is no link, is taken as it is (most of the catalog's
/// places are absent: a `stat` each cost every adapter call about 1 µs a place, two homes of
/// them), one that is (or whose type the listing does not tell) is fully resolved again, which is
/// what `resolve` would find.
#[derive(Default)]
struct Resolver {
    resolved: std::collections::HashMap<PathBuf, PathBuf>,
    /// Each listed directory's names, with whether each may be a link; `None` where it could
    /// not be listed (or holds too many names to be worth it).
    listed: std::collections::HashMap<PathBuf, Option<std::collections::HashMap<OsString, bool>>>,
}

/// A directory with more names than this is not listed: its places are looked at one by one.
const MOST_NAMES: usize = 4096;

impl Resolver {
    fn resolve(&mut self, path: &Path) -> PathBuf {
        if let Some(r) = self.resolved.get(path) {
            return r.clone();
        }
        let out = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => {
                let dir = self.resolve(parent);
                let joined = dir.join(name);
                if self.may_link(&dir, name) {
                    match std::fs::symlink_metadata(&joined) {
                        Ok(m) if m.file_type().is_symlink() => resolve(&joined),
                        _ => joined,
                    }
                } else {
                    joined
                }
            }
            _ => resolve(path),
        };
        self.resolved.insert(path.to_path_buf(), out.clone());
        out
    }

    /// Whether `name` in `dir` (resolved) may be a link: not where `dir`'s listing lacks it or
    /// says it is something else; where `dir` could not be listed, it may.
    fn may_link(&mut self, dir: &Path, name: &std::ffi::OsStr) -> bool {
        if !self.listed.contains_key(dir) {
            let names = self.list(dir);
            self.listed.insert(dir.to_path_buf(), names);
        }
        match &self.listed[dir] {
            Some(names) => names.get(name).copied().unwrap_or(false),
            None => true,
        }
    }

    /// `dir`'s names, each with whether it may be a link; empty where `dir` is absent (known
    /// from its own directory's listing, or told by the listing's failure).
    fn list(&mut self, dir: &Path) -> Option<std::collections::HashMap<OsString, bool>> {
        if let (Some(up), Some(name)) = (dir.parent(), dir.file_name()) {
            if let Some(Some(names)) = self.listed.get(up) {
                if !names.contains_key(name) {
                    return Some(Default::default());
                }
            }
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Default::default()),
            Err(_) => return None,
        };
        let mut names = std::collections::HashMap::new();
        for entry in entries {
            let entry = entry.ok()?;
            let may_link = entry.file_type().map_or(true, |t| t.is_symlink());
            names.insert(entry.file_name(), may_link);
            if names.len() > MOST_NAMES {
                return None;
            }
        }
        Some(names)
    }
}

/// `path` with `.` dropped and `..` applied to what precedes it, without looking at the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// An absolute `path` resolved as the kernel opens it: component by component, a symlink is
/// replaced by its target before a following `..` applies. The part that does not exist is
/// kept as written (normalized). At most 40 links are followed, as Linux does.
fn resolve(path: &Path) -> PathBuf {
    let mut pending: Vec<OsString> = path
        .components()
        .rev()
        .map(|c| c.as_os_str().to_os_string())
        .collect();
    let mut out = PathBuf::from("/");
    let mut links = 0;
    let mut exists = true;
    while let Some(c) = pending.pop() {
        match Path::new(&c).components().next() {
            Some(Component::RootDir) | Some(Component::Prefix(_)) => out = PathBuf::from("/"),
            Some(Component::CurDir) | None => {}
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::Normal(name)) => {
                out.push(name);
                if !exists {
                    continue;
                }
                match std::fs::symlink_metadata(&out) {
                    Ok(m) if m.file_type().is_symlink() && links < 40 => {
                        links += 1;
                        let Ok(target) = std::fs::read_link(&out) else {
                            continue;
                        };
                        out.pop();
                        pending.extend(
                            target
                                .components()
                                .rev()
                                .map(|c| c.as_os_str().to_os_string()),
                        );
                    }
                    Ok(_) => {}
                    Err(_) => exists = false,
                }
            }
        }
    }
    out
}

/// The values a short-option cluster may carry attached (`-t.infer` is `-t .infer`,
/// `-o.claude/settings.json` is `-o .claude/settings.json`, `-rt.infer` is `-r -t .infer`):
/// what follows each of its leading letters, up to eight of them.
fn attached_values(word: &str) -> impl Iterator<Item = &str> {
    let rest = word
        .strip_prefix('-')
        .filter(|r| !r.starts_with('-'))
        .unwrap_or_default();
    rest.char_indices()
        .take_while(|(_, c)| c.is_ascii_alphabetic())
        .take(8)
        .map(move |(i, c)| &rest[i + c.len_utf8()..])
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
#[path = "protect_tests.rs"]
mod tests;
