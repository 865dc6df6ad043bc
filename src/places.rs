//! The one catalog of places hookd protects: where each is anchored, its shape, what the gate
//! does when the model's calls touch it and what the sandbox does for confined commands. The
//! gate's protected paths (`gate::protect`), the sandbox's read-only and hidden places
//! ([`SandboxPlaces`]) and docs/security.md's table are all read from [`PLACES`].
//!
//! The rule the table keeps: a place the gate protects is never writable by a confined command,
//! and a place the sandbox holds is never written by the model's tools. Where the two cannot
//! give the same answer (a kernel mount needs a place that exists), the row says so in `differs`,
//! and `places_agree_or_say_why` checks that every such row does.

use std::path::{Path, PathBuf};

/// Where git reads a work tree's configuration and hooks from besides `.git` (the sandbox's
/// [`hookd_sandbox::git`]; the gate reads it too).
pub use hookd_sandbox::git;

/// The walk that finds protected names below a directory (the sandbox's
/// [`hookd_sandbox::walk`]; the gate reads nested repositories' indirections from it).
pub(crate) use hookd_sandbox::walk;

/// Where a place is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Anchor {
    /// A name in any directory: the project's root and every directory below it, and any
    /// other repository (an agent started in `web/` reads `web/.claude/`).
    Anywhere,
    /// Inside a git directory: `.git/NAME` wherever a `.git` is.
    GitDir,
    /// The user's home (`$HOME`, and the home the user database names).
    Home,
    /// The configuration home: `$XDG_CONFIG_HOME`, and `~/.config`.
    ConfigHome,
    /// The directory (or, with [`Shape::File`] and an empty path, the file) a variable names,
    /// when it is set. A colon-separated list names several (`KUBECONFIG`).
    Var(&'static str),
    /// The file beside the one a variable names, when it is set: its extension replaced by the
    /// row's path (`HOOKD_SOCKET=/x/d.sock` and `token`: `/x/d.token`, where the daemon keeps
    /// its token).
    VarSibling(&'static str),
    /// Named at run time by hookd's own state: the configuration files read, the files of
    /// `--config-dir`, the settings `hookd install --scope user` wrote.
    Runtime(Runtime),
}

/// The places hookd learns at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Runtime {
    /// Every configuration file read.
    Sources,
    /// `hooks.yaml`, `config.yaml` and `reminders.yaml` of `--config-dir`, existing or not.
    ConfigDir,
    /// The agents' settings files `hookd install --scope user` put hookd's hooks in (recorded
    /// in `~/.infer/installed.json`), with their siblings of the same stem.
    Installed,
    /// The git directory a `.git` file names (`gitdir: …`: a linked work tree's, a
    /// submodule's) and the one a `commondir` names ([`git`]).
    GitDirs,
    /// The directory git's `core.hooksPath` names ([`git`]).
    HooksPath,
    /// The configuration files git's `include.path` and `includeIf.*.path` name ([`git`]).
    GitIncludes,
}

/// What the path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// A directory and everything in it.
    Dir,
    /// Exactly this file.
    File,
    /// The files of the parent directory whose name starts with the last component
    /// (`.claude/settings` covers `settings.json` and `settings.local.json`).
    Prefix,
    /// The directory itself, which may not be moved, replaced or removed; what is inside is
    /// governed by other rows (`.git`: its objects and refs stay writable for git's work).
    Pinned,
}

/// What the gate does with the model's calls that touch a place (with `gate_shell_tools`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Gate {
    /// A file tool writing it, or a shell command naming it, is denied as `protected_path`.
    Protect,
    /// Nothing.
    Open,
}

/// What the sandbox does for a confined command ([`hookd_sandbox::Hold`]).
pub use hookd_sandbox::Hold as Sandbox;

/// One protected place.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Place {
    /// Where it is.
    pub anchor: Anchor,
    /// The path from the anchor (`/`-separated; empty for the anchor itself).
    pub path: &'static str,
    /// What the path names.
    pub shape: Shape,
    /// What the gate does.
    pub gate: Gate,
    /// What the sandbox does.
    pub sandbox: Sandbox,
    /// Why it is protected, for the docs.
    pub why: &'static str,
    /// Where the gate's and the sandbox's answers differ, why (empty: they agree).
    pub differs: &'static str,
    /// A file a program reads at each of its starts, failing on anything that is not a file
    /// (git's global configuration, cargo's): where it is absent and stood in for, the command
    /// sees an empty file there ([`hookd_sandbox::Places::read_at_start`]).
    pub read_at_start: bool,
}

/// The rows, as data (`table.rs`): every place, in the order docs/security.md lists them.
mod table;
pub use table::PLACES;

/// Every variable a row of [`PLACES`] is anchored at (the variables that name places).
pub fn place_vars() -> impl Iterator<Item = &'static str> {
    let mut seen: Vec<&'static str> = Vec::new();
    for p in PLACES {
        if let Anchor::Var(v) | Anchor::VarSibling(v) = p.anchor {
            if !seen.contains(&v) {
                seen.push(v);
            }
        }
    }
    seen.into_iter()
}

/// The places' anchors resolved for one process: what the rows are relative to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Anchors {
    /// The homes: `$HOME`, and the user database's when it differs.
    pub homes: Vec<PathBuf>,
    /// `$XDG_CONFIG_HOME`, and `~/.config` for each home.
    pub config_homes: Vec<PathBuf>,
    /// A variable's value as a path (non-empty).
    pub vars: Vec<(&'static str, PathBuf)>,
}

impl Anchors {
    /// The anchors of `homes` and the variables `var` reads (a non-empty value as a path).
    pub fn new(homes: Vec<PathBuf>, var: impl Fn(&str) -> Option<PathBuf>) -> Anchors {
        let mut config_homes: Vec<PathBuf> = var("XDG_CONFIG_HOME").into_iter().collect();
        for h in &homes {
            let c = h.join(".config");
            if !config_homes.contains(&c) {
                config_homes.push(c);
            }
        }
        let vars = place_vars()
            .chain(["XDG_CONFIG_HOME"])
            .filter_map(|v| var(v).map(|p| (v, p)))
            .collect();
        Anchors {
            homes,
            config_homes,
            vars,
        }
    }

    /// Another home whose places are protected too (the user database's, when `$HOME` names
    /// another directory).
    pub fn add_home(&mut self, home: PathBuf) {
        if !self.homes.contains(&home) {
            let config = home.join(".config");
            if !self.config_homes.contains(&config) {
                self.config_homes.push(config);
            }
            self.homes.push(home);
        }
    }

    /// The absolute places of `place` (none for [`Anchor::Anywhere`], [`Anchor::GitDir`] and
    /// [`Anchor::Runtime`], which are not at one place).
    pub fn paths(&self, place: &Place) -> Vec<PathBuf> {
        let join = |base: &Path| {
            if place.path.is_empty() {
                base.to_path_buf()
            } else {
                base.join(place.path)
            }
        };
        match place.anchor {
            Anchor::Home => self.homes.iter().map(|h| join(h)).collect(),
            Anchor::ConfigHome => self.config_homes.iter().map(|c| join(c)).collect(),
            Anchor::Var(name) => self
                .vars
                .iter()
                .filter(|(v, _)| *v == name)
                .flat_map(|(_, value)| {
                    // `KUBECONFIG` is a list; a directory variable is one path.
                    let text = value.to_string_lossy().into_owned();
                    let parts: Vec<PathBuf> = if place.path.is_empty() && text.contains(':') {
                        text.split(':')
                            .filter(|s| !s.is_empty())
                            .map(PathBuf::from)
                            .collect()
                    } else {
                        vec![value.clone()]
                    };
                    parts.into_iter().map(|p| join(&p)).collect::<Vec<_>>()
                })
                .collect(),
            Anchor::VarSibling(name) => (self.vars.iter())
                .filter(|(v, value)| *v == name && value.file_name().is_some())
                .map(|(_, value)| value.with_extension(place.path))
                .collect(),
            Anchor::Anywhere | Anchor::GitDir | Anchor::Runtime(_) => Vec::new(),
        }
    }
}

/// The names protected in any directory ([`Anchor::Anywhere`]), with their shape.
pub fn anywhere() -> impl Iterator<Item = &'static Place> {
    PLACES.iter().filter(|p| p.anchor == Anchor::Anywhere)
}

/// The places inside a git directory ([`Anchor::GitDir`]).
pub fn in_git_dir() -> impl Iterator<Item = &'static Place> {
    PLACES.iter().filter(|p| p.anchor == Anchor::GitDir)
}

/// The place, among those protected by name, that `path` is or is inside (a `.infer`
/// directory, a `.claude/…` file, a `.git/hooks/…` file, a `.env`): the path up to the name.
/// A [`Shape::Pinned`] name counts only as the last component (`.git` itself, not what is in
/// it).
pub fn by_name(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut up_to = PathBuf::new();
    let mut parent: Option<&std::ffi::OsStr> = None;
    let mut components = path.components().peekable();
    while let Some(c) = components.next() {
        up_to.push(c.as_os_str());
        let Component::Normal(name) = c else {
            continue;
        };
        let last = components.peek().is_none();
        let text = name.to_str().unwrap_or_default();
        let in_git = parent.is_some_and(|p| p == ".git");
        // A row of several components (`.github/hooks`) is hit where the path so far ends
        // with all of them.
        let named = |p: &Place| p.path == text || (p.path.contains('/') && up_to.ends_with(p.path));
        let hit = |p: &Place| match p.shape {
            Shape::Dir => named(p),
            Shape::File | Shape::Pinned => last && named(p),
            Shape::Prefix => last && text.starts_with(p.path),
        };
        if anywhere().any(hit) || (in_git && in_git_dir().any(hit)) {
            return Some(up_to);
        }
        parent = Some(name);
    }
    None
}

/// Whether writing `path` would put a `HEAD` outside a `.git` directory: with `objects/` and
/// `refs/` beside it (which the same tools can write), git takes that directory for a
/// repository of its own and runs its `config`'s `core.fsmonitor` at the next `git status`
/// there (attack round 11, F1h). The sandbox moves such a layout aside after a confined
/// command; the model's file tools write outside it, so both the sandbox's write policy and the
/// gate refuse them this. Not a row of the catalog: a shell word `HEAD` (`git diff HEAD`) names
/// no file.
pub(crate) fn lays_out_a_repository(path: &Path) -> bool {
    let in_git = path.components().any(|c| c.as_os_str() == ".git");
    path.file_name().is_some_and(|n| n == "HEAD") && !in_git
}

/// Why [`lays_out_a_repository`] refuses a write, for the model and the operator.
pub(crate) const LAYS_OUT_A_REPOSITORY: &str = "a `HEAD` outside `.git`, which with `objects/` and `refs/` beside it makes its directory a repository to git, whose configuration runs at the next `git status` there";

/// What the sandbox holds, as data for [`crate::sandbox::SandboxPolicy`] ([`hookd_sandbox::Places`]):
/// computed from the catalog and the anchors of one process.
pub type SandboxPlaces = hookd_sandbox::Places;

/// The places of the catalog at `anchors`, plus hookd's run-time ones (`runtime`).
pub(crate) fn sandbox_places(anchors: &Anchors, runtime: &[PathBuf]) -> SandboxPlaces {
    let mut out = SandboxPlaces::default();
    out.homes = anchors.homes.clone();
    out.config_homes = anchors.config_homes.clone();
    for place in PLACES {
        if place.shape == Shape::Prefix {
            for path in anchors.paths(place) {
                if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
                    let name = name.to_string_lossy().into_owned();
                    out.prefixed.push((dir.to_path_buf(), name, place.sandbox));
                }
            }
            continue;
        }
        if place.read_at_start {
            out.read_at_start.extend(anchors.paths(place));
        }
        let list = match place.sandbox {
            Sandbox::ReadOnly | Sandbox::Watched => &mut out.read_only,
            Sandbox::Hidden => &mut out.hidden,
            Sandbox::Pinned | Sandbox::Open => continue,
        };
        list.extend(anchors.paths(place));
    }
    out.read_only.extend(runtime.iter().cloned());
    for place in PLACES {
        let name = match place.anchor {
            Anchor::Anywhere => place.path.to_string(),
            Anchor::GitDir => format!(".git/{}", place.path),
            _ => continue,
        };
        if place.sandbox != Sandbox::Open {
            out.by_name.push((name, place.sandbox));
        }
    }
    out
}

/// The catalog as a Markdown table (docs/security.md's "Places" section, kept equal to it by
/// `docs::the_places_table_is_the_catalog`; `UPDATE_GOLDEN=1` writes it there).
pub fn markdown() -> String {
    let mut out = String::from(
        "| place | what | the model's tools (gate) | confined commands (sandbox) | why |\n| --- | --- | --- | --- | --- |\n",
    );
    for p in PLACES {
        let gate = match p.gate {
            Gate::Protect => "refused",
            Gate::Open => "allowed",
        };
        let sandbox = match p.sandbox {
            Sandbox::ReadOnly => "read-only",
            Sandbox::Watched => "read-only; made: moved aside at its end",
            Sandbox::Hidden => "hidden",
            Sandbox::Pinned => "cannot be moved",
            Sandbox::Open => "writable",
        };
        let sandbox = if p.read_at_start {
            format!("{sandbox}; absent: an empty file to the command")
        } else {
            sandbox.to_string()
        };
        let differs = if p.differs.is_empty() {
            String::new()
        } else {
            format!(" ({})", p.differs)
        };
        out.push_str(&format!(
            "| `{}` | {} | {gate} | {sandbox}{differs} | {} |\n",
            shown(p),
            shape_word(p.shape),
            p.why
        ));
    }
    out
}

/// A row's place as a person reads it (`~/.ssh`, `$CARGO_HOME/credentials`, `<any>/.env`).
pub fn shown(p: &Place) -> String {
    let tail = |base: &str| {
        if p.path.is_empty() {
            base.to_string()
        } else {
            format!("{base}/{}", p.path)
        }
    };
    let star = if p.shape == Shape::Prefix { "*" } else { "" };
    let text = match p.anchor {
        Anchor::Anywhere => tail("…"),
        Anchor::GitDir => tail("….git"),
        Anchor::Home => tail("~"),
        Anchor::ConfigHome => tail("$XDG_CONFIG_HOME|~/.config"),
        Anchor::Var(v) => tail(&format!("${v}")),
        Anchor::VarSibling(v) => format!("${{{v}%.*}}.{}", p.path),
        Anchor::Runtime(Runtime::Sources) => "every configuration file read".into(),
        Anchor::Runtime(Runtime::ConfigDir) => "--config-dir's three files".into(),
        Anchor::Runtime(Runtime::Installed) => {
            "the settings `hookd install --scope user` wrote".into()
        }
        Anchor::Runtime(Runtime::GitDirs) => {
            "the git directory a `.git` file or a `commondir` names".into()
        }
        Anchor::Runtime(Runtime::HooksPath) => "the directory `core.hooksPath` names".into(),
        Anchor::Runtime(Runtime::GitIncludes) => {
            "the files git's `include.path` and `includeIf.*.path` name".into()
        }
    };
    format!("{text}{star}")
}

fn shape_word(s: Shape) -> &'static str {
    match s {
        Shape::Dir => "directory",
        Shape::File => "file",
        Shape::Prefix => "files by prefix",
        Shape::Pinned => "directory itself",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_agree_or_say_why() {
        for p in PLACES {
            let agree = match p.gate {
                Gate::Protect => p.sandbox != Sandbox::Open,
                Gate::Open => p.sandbox == Sandbox::Open,
            };
            assert!(
                agree || !p.differs.is_empty(),
                "{}: gate and sandbox differ",
                shown(p)
            );
        }
    }

    #[test]
    fn only_names_are_watched() {
        // `Watched` is what the sandbox does to an absent name (no stand-in, moved aside at
        // the end): an absolute place has no such answer.
        for p in PLACES.iter().filter(|p| p.sandbox == Sandbox::Watched) {
            assert_eq!(p.anchor, Anchor::Anywhere, "{}", shown(p));
        }
    }

    #[test]
    fn names_are_found_at_any_depth() {
        for (path, place) in [
            ("/p/.infer/hooks.yaml", "/p/.infer"),
            ("/p/web/.claude/skills/x/SKILL.md", "/p/web/.claude"),
            ("/p/.env", "/p/.env"),
            ("/p/a/b/.mcp.json", "/p/a/b/.mcp.json"),
            ("/p/.git", "/p/.git"),
            ("/p/.git/config.worktree", "/p/.git/config.worktree"),
            ("/p/.git/modules/m/config", "/p/.git/modules"),
            ("/p/sub/.git/hooks/pre-commit", "/p/sub/.git/hooks"),
            ("/p/.github/hooks/h.json", "/p/.github/hooks"),
            ("/p/web/.github/hooks", "/p/web/.github/hooks"),
            ("/p/.kiro/hooks/x.kiro.hook", "/p/.kiro"),
        ] {
            assert_eq!(
                by_name(Path::new(path)),
                Some(PathBuf::from(place)),
                "{path}"
            );
        }
        for path in [
            "/p/.git/objects/ab",
            "/p/.git/HEAD",
            "/p/src/env",
            "/p/.envx",
            "/p/x/.infers",
            "/p/.github/workflows/ci.yml",
            "/p/.github/hooks.md",
            "/p/hooks/x",
        ] {
            assert_eq!(by_name(Path::new(path)), None, "{path}");
        }
    }

    #[test]
    fn a_list_variable_names_each_file() {
        let a = Anchors::new(vec![PathBuf::from("/h")], |v| {
            (v == "KUBECONFIG").then(|| PathBuf::from("/a/k1:/b/k2"))
        });
        let kube = PLACES
            .iter()
            .find(|p| p.anchor == Anchor::Var("KUBECONFIG"))
            .unwrap();
        assert_eq!(
            a.paths(kube),
            [PathBuf::from("/a/k1"), PathBuf::from("/b/k2")]
        );
    }
}
