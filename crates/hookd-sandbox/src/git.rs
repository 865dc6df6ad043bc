//! Where git takes a work tree's configuration and hooks from besides its `.git` directory: the
//! git directory a `.git` file names (a linked work tree's, a submodule's, any `gitdir:`), the
//! common directory its `commondir` names, the directory `core.hooksPath` names and the files
//! `include.path` / `includeIf.*.path` name. The gate and the sandbox both read them here.

use std::path::{Path, PathBuf};

/// What git reads for one work tree besides `WORK_TREE/.git`'s own places.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Indirections {
    /// `WORK_TREE/.git` when it is a file (`gitdir: …`): rewriting it redirects git.
    pub pointer: Option<PathBuf>,
    /// Git directories other than `WORK_TREE/.git`: the one the pointer names and the one a
    /// `commondir` names; their `config*`, `hooks/`, … are held as a `.git`'s are.
    pub git_dirs: Vec<PathBuf>,
    /// The directories `core.hooksPath` names, in any configuration file git reads here.
    pub hooks_paths: Vec<PathBuf>,
    /// The configuration files `include.path` and `includeIf.*.path` name.
    pub includes: Vec<PathBuf>,
    /// What a hook manager's installed hooks read and run at the next `git commit`: husky's
    /// `.husky/` (its `_` stubs run `.husky/pre-commit`), pre-commit's
    /// `.pre-commit-config.yaml`, lefthook's `lefthook.yml` and its siblings.
    pub hook_configs: Vec<PathBuf>,
}

/// The most bytes of one hook read to tell which manager installed it.
const HOOK_HEAD: u64 = 16 << 10;

/// What the installed hooks in `hooks_dirs` of the work tree `work_tree` read at a `git commit`
/// ([`Indirections::hook_configs`]).
fn hook_configs(work_tree: &Path, hooks_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut add = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for dir in hooks_dirs {
        // husky 9: `core.hooksPath = .husky/_`, whose stubs run `.husky/<hook>`.
        if dir.file_name().is_some_and(|n| n == "_")
            && dir
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == ".husky")
        {
            add(dir.parent().unwrap_or(dir).to_path_buf());
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().ends_with(".sample") {
                continue;
            }
            let Some(head) = crate::disk::read_plain_head(&entry.path(), HOOK_HEAD) else {
                continue;
            };
            let head = String::from_utf8_lossy(&head);
            if head.contains("pre-commit.com") || head.contains("pre_commit") {
                add(work_tree.join(".pre-commit-config.yaml"));
            }
            if head.contains("lefthook") {
                for f in [
                    "lefthook.yml",
                    ".lefthook.yml",
                    "lefthook.yaml",
                    ".lefthook.yaml",
                    "lefthook-local.yml",
                    ".lefthook-local.yml",
                ] {
                    add(work_tree.join(f));
                }
            }
            if head.contains(".husky") || head.contains("husky.sh") {
                add(work_tree.join(".husky"));
            }
        }
    }
    out
}

/// The most bytes read of one configuration file, `.git` file or `commondir`: none is read that
/// is larger, nor one that is not a regular file (a FIFO would hang the preparation).
const CONFIG_LIMIT: u64 = 4 << 20;

/// How many levels of includes are followed (git's own limit is 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// The indirections of the work tree `work_tree` for a user whose homes are `homes` and whose
/// configuration homes are `config_homes` (where `~/.gitconfig` and `git/config` are).
pub fn indirections(work_tree: &Path, homes: &[PathBuf], config_homes: &[PathBuf]) -> Indirections {
    let mut out = Indirections::default();
    let dot = work_tree.join(".git");
    let Ok(meta) = dot.symlink_metadata() else {
        return out;
    };
    let git_dir = if meta.is_file() {
        out.pointer = Some(dot.clone());
        match pointer_target(&dot) {
            Some(target) => {
                out.git_dirs.push(target.clone());
                target
            }
            None => return out,
        }
    } else {
        dot
    };
    let common = common_dir(&git_dir);
    if let Some(c) = &common {
        out.git_dirs.push(c.clone());
    }
    let mut files = vec![
        common.as_ref().unwrap_or(&git_dir).join("config"),
        git_dir.join("config.worktree"),
        PathBuf::from("/etc/gitconfig"),
    ];
    files.extend(homes.iter().map(|h| h.join(".gitconfig")));
    files.extend(config_homes.iter().map(|c| c.join("git/config")));
    let home = homes.first().map(PathBuf::as_path);
    let mut depth = 0;
    let mut next = files;
    while !next.is_empty() && depth <= MAX_INCLUDE_DEPTH {
        let mut included = Vec::new();
        for file in &next {
            let Some(text) = crate::disk::read_plain_text(file, CONFIG_LIMIT) else {
                continue;
            };
            let base = file.parent().unwrap_or(Path::new("/"));
            for (key, value) in entries(&text) {
                let key = key.to_ascii_lowercase();
                if key == "core.hookspath" {
                    let dir = expand(&value, home, work_tree);
                    if !out.hooks_paths.contains(&dir) {
                        out.hooks_paths.push(dir);
                    }
                } else if key.starts_with("include") && key.ends_with(".path") && !value.is_empty()
                {
                    let f = expand(&value, home, base);
                    if !out.includes.contains(&f) {
                        out.includes.push(f.clone());
                        included.push(f);
                    }
                }
            }
        }
        next = included;
        depth += 1;
    }
    let hooks_dirs: Vec<PathBuf> =
        std::iter::once(common.as_ref().unwrap_or(&git_dir).join("hooks"))
            .chain(out.hooks_paths.iter().cloned())
            .collect();
    out.hook_configs = hook_configs(work_tree, &hooks_dirs);
    out
}

/// The git directory a `.git` file names (relative to the file's directory).
fn pointer_target(dot: &Path) -> Option<PathBuf> {
    let text = crate::disk::read_plain_text(dot, CONFIG_LIMIT)?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    (!target.is_empty()).then(|| dot.parent().unwrap_or(Path::new("/")).join(target))
}

/// The directory `GIT_DIR/commondir` names (relative to `git_dir`).
fn common_dir(git_dir: &Path) -> Option<PathBuf> {
    let text = crate::disk::read_plain_text(&git_dir.join("commondir"), CONFIG_LIMIT)?;
    let target = text.trim_end_matches(['\n', '\r']);
    (!target.is_empty() && target != ".").then(|| git_dir.join(target))
}

/// A path from git's configuration: `~/` is the home, a relative one is relative to `base`.
fn expand(value: &str, home: Option<&Path>, base: &Path) -> PathBuf {
    match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => base.join(value),
    }
}

/// The `section[.subsection].key` / value pairs of a git configuration file, as git reads
/// them: sections in brackets (a key may follow on the same line), `#` and `;` comments,
/// quoted parts joined to unquoted ones, `\` escapes and continued lines. A key without `=` has
/// an empty value.
fn entries(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut rest = line.trim_start();
        if let Some(after) = rest.strip_prefix('[') {
            let Some(end) = after.find(']') else {
                continue;
            };
            section = section_name(&after[..end]);
            rest = after[end + 1..].trim_start();
        }
        if rest.is_empty() || rest.starts_with(['#', ';']) {
            continue;
        }
        let (key, value) = match rest.split_once('=') {
            Some((k, v)) => (k.trim(), v),
            None => (rest.trim(), ""),
        };
        let mut value = value.to_string();
        while value.trim_end().ends_with('\\') && !value.trim_end().ends_with("\\\\") {
            let cut = value.trim_end().len() - 1;
            value.truncate(cut);
            value.push_str(lines.next().unwrap_or_default());
        }
        out.push((format!("{section}.{key}"), unquote(&value)));
    }
    out
}

/// `core`, `includeIf "gitdir:~/x/"` → `includeif.gitdir:~/x/`, `core.sub` as written.
fn section_name(header: &str) -> String {
    match header.split_once('"') {
        Some((name, sub)) => format!(
            "{}.{}",
            name.trim().to_ascii_lowercase(),
            sub.trim_end_matches('"')
        ),
        None => header.trim().to_ascii_lowercase(),
    }
}

/// A value as git reads it: quotes removed, escapes resolved, a comment cut off, blanks at the
/// ends trimmed (those inside quotes kept).
fn unquote(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut kept = 0;
    let mut chars = raw.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('b') => {
                    out.pop();
                }
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
        if quoted || !out.ends_with([' ', '\t']) {
            kept = out.len();
        }
    }
    out.truncate(kept);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_as_git_reads_them() {
        let text = "[core]\n\thooksPath = \".hus\"ky/_ # husky\n[Core] HOOKSPATH=a\\\n/b\n\
                    [includeIf \"gitdir:~/w/\"]\n  path = ~/w.inc\n[include]\npath\n";
        assert_eq!(
            entries(text),
            [
                ("core.hooksPath".to_string(), ".husky/_".to_string()),
                ("core.HOOKSPATH".to_string(), "a/b".to_string()),
                (
                    "includeif.gitdir:~/w/.path".to_string(),
                    "~/w.inc".to_string()
                ),
                ("include.path".to_string(), String::new()),
            ]
        );
    }
}
