//! Issue 40: the protected places that exist below the project's root, off the way from it to
//! the command's working directory (a monorepo's `web/.claude`, `web/.env`, a nested
//! repository's `.git`, a submodule's `.git` file and the git directory it names), are held as
//! the root's are: each attack is performed for real from the root, unconfined first (the file
//! changes, or the user's next unconfined git command leaves the marker), then through
//! `hookd exec`, where it must not. The walk that finds them has bounds; they are tested too.

use crate::gitdoors::{door, run, FSMONITOR, HOOK};
use crate::sandbox::{confinable, hookd, project};
use crate::support::stderr;

/// What each file holds before the attack (valid JSON: agents' settings are read as JSON).
const ORIGINAL: &str = "{}\n";

/// Whether a command run from the root could change the existing file `path` (below the root),
/// confined or not, in a fresh project.
fn changed(path: &str, confined: bool) -> bool {
    let (p, tmp) = project();
    attacked(&p, &tmp, path, confined)
}

/// Whether a command run from the root of `p` could change `path` (made first, below the root).
fn attacked(
    p: &crate::support::Project,
    tmp: &std::path::Path,
    path: &str,
    confined: bool,
) -> bool {
    let file = p.path().join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, ORIGINAL).unwrap();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let script = format!("printf pwned > '{path}'");
    let o = run(p, tmp, p.path(), &script, out.path(), confined);
    assert_ne!(o.status.code(), Some(126), "{path}: {}", stderr(&o));
    std::fs::read_to_string(&file).unwrap_or_default() != ORIGINAL
}

#[test]
fn existing_agent_files_below_the_root_are_read_only() {
    if !confinable() {
        return;
    }
    for path in [
        "web/.claude/settings.json",
        "web/.claude/skills/x/SKILL.md",
        "web/.env",
        "web/.gemini/settings.json",
        "a/b/.mcp.json",
        "a/b/.envrc",
        "web/.vscode/tasks.json",
        "tools/.gitmodules",
    ] {
        assert!(changed(path, false), "{path}: the attack fails unconfined");
        assert!(!changed(path, true), "{path}: written confined");
    }
    // Ordinary files beside them stay writable.
    assert!(changed("web/package.json", true));
    assert!(changed("web/.claude-notes", true));
}

#[test]
fn a_nested_repository_below_the_root_is_held_as_the_roots() {
    if !confinable() {
        return;
    }
    door(
        "its config",
        "git init -q sub",
        "",
        &format!("{FSMONITOR} >> sub/.git/config"),
        "sub",
    );
    door(
        "its hooks",
        "git init -q sub",
        "",
        &format!("{HOOK} > sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit"),
        "sub",
    );
    door(
        "moved away and replaced",
        "git init -q a/sub",
        "",
        &format!(
            "mv a/sub/.git a/sub/.git-old && git init -q a/sub && {FSMONITOR} >> a/sub/.git/config"
        ),
        "a/sub",
    );
    door(
        "its absent commondir",
        "git init -q sub",
        "",
        &format!("cp -r sub/.git evil && {FSMONITOR} >> evil/config && echo ../../evil > sub/.git/commondir"),
        "sub",
    );
    door(
        "its core.hooksPath",
        "git init -q sub && mkdir hooks-sub && git -C sub config core.hooksPath ../hooks-sub",
        "",
        &format!("{HOOK} > hooks-sub/pre-commit && chmod +x hooks-sub/pre-commit"),
        "sub",
    );
}

/// A submodule's work tree: a `.git` file naming a git directory elsewhere.
const POINTER: &str =
    "mkdir -p vendor store && git init -q --separate-git-dir=\"$PWD/store/lib.git\" vendor/lib";

#[test]
fn a_git_file_below_the_root_and_the_git_directory_it_names_are_held() {
    if !confinable() {
        return;
    }
    door(
        "the git directory it names",
        POINTER,
        "",
        &format!("{FSMONITOR} >> store/lib.git/config"),
        "vendor/lib",
    );
    door(
        "the git directory's hooks",
        POINTER,
        "",
        &format!(
            "{HOOK} > store/lib.git/hooks/pre-commit && chmod +x store/lib.git/hooks/pre-commit"
        ),
        "vendor/lib",
    );
    door(
        "the pointer",
        POINTER,
        "",
        &format!("cp -r store/lib.git evil.git && {FSMONITOR} >> evil.git/config && echo \"gitdir: $PWD/evil.git\" > vendor/lib/.git"),
        "vendor/lib",
    );
}

/// `hookd exec -- touch ran` from the root of `p` once it holds `dirs` directories: refused
/// (126, not run); its output.
fn refused_in_a_tree_of(
    p: &crate::support::Project,
    tmp: &std::path::Path,
    dirs: usize,
) -> std::process::Output {
    for i in 0..dirs {
        std::fs::create_dir(p.path().join(format!("d{i}"))).unwrap();
    }
    let o = hookd(p, tmp, &["exec", "--", "touch", "ran"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert!(!p.path().join("ran").exists(), "the command ran");
    o
}

/// The walk's bounds, as docs/security.md states them: a place more than three levels below a
/// root is not found (and stays writable, as it is for sandbox-runtime), nor one inside
/// `node_modules`; a tree too large to walk stops the command, naming where the walk stopped.
#[test]
fn the_walk_has_bounds_and_a_cut_walk_stops_the_command() {
    if !confinable() {
        return;
    }
    assert!(
        changed("a/b/c/.env", true),
        "four levels down is not walked"
    );
    assert!(changed("node_modules/x/.env", true));
    let (p, tmp) = project();
    let o = refused_in_a_tree_of(&p, &tmp, 20_000);
    let root = p.path().canonicalize().unwrap();
    assert_eq!(
        stderr(&o),
        format!(
            "hookd exec: not run: the sandbox could not be prepared: the walk for protected places below {} stopped at depth 1: 20001 directories to read, more than the 20000 it reads (remove what makes the tree that large, run the command from a smaller project, or bound the walk in your ~/.infer/config.yaml: `sandbox.walk.skip` (directory names not entered), `sandbox.walk.depth`, `sandbox.walk.most_dirs`); a place below it could not be held read-only\n",
            root.display()
        )
    );
}

/// Whether `path` (an existing file below the root, made first) could be changed by a
/// confined command run from the root, the user's config.yaml being `user` and the project's
/// `project`.
fn changed_under(path: &str, user: &str, project_config: &str) -> bool {
    let (p, tmp) = project();
    p.write_home("config.yaml", user);
    p.write("config.yaml", project_config);
    attacked(&p, &tmp, path, true)
}

/// The user's `sandbox.walk` bounds the walk (a monorepo too large for the default refuses
/// every confined command otherwise): `skip` leaves a directory unwalked, `depth` reaches
/// deeper, `most_dirs` moves the refusal. A repository's own `sandbox.walk` is ignored with a
/// warning: it would skip its own `web/` to keep `web/.claude` writable.
#[test]
fn the_users_walk_setting_bounds_the_walk_and_a_projects_is_ignored() {
    if !confinable() {
        return;
    }
    let on = "sandbox: {enabled: true}\n";
    assert!(!changed_under("vendor/x/.env", on, ""));
    assert!(changed_under(
        "vendor/x/.env",
        "sandbox: {enabled: true, walk: {skip: [vendor]}}\n",
        ""
    ));
    assert!(changed_under("a/b/c/.env", on, ""));
    assert!(!changed_under(
        "a/b/c/.env",
        "sandbox: {enabled: true, walk: {depth: 4}}\n",
        ""
    ));
    assert!(changed_under(
        "web/.env",
        "sandbox: {enabled: true, walk: {depth: 1}}\n",
        ""
    ));
    // The project's is ignored: the place stays held, and `hookd check` says why.
    let theirs = "sandbox:\n  walk: {skip: [web], depth: 1}\n";
    assert!(!changed_under("web/.env", on, theirs));
    let (p, tmp) = project();
    p.write_home("config.yaml", on).write("config.yaml", theirs);
    let o = hookd(&p, &tmp, &["check"]).output().unwrap();
    assert!(
        stderr(&o).contains("warning: a project cannot change how far below it hookd looks for protected places; `sandbox.walk` is ignored\n  --> .infer/config.yaml:2:"),
        "{}",
        stderr(&o)
    );
    // `most_dirs`: a tree of 60 directories is too large for 50 (the command does not run),
    // and `hookd check` shows the user's bounds.
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true, walk: {most_dirs: 50, skip: [vendor]}}\n",
    );
    let o = refused_in_a_tree_of(&p, &tmp, 60);
    assert!(
        stderr(&o)
            .contains("stopped at depth 1: 61 directories to read, more than the 50 it reads"),
        "{}",
        stderr(&o)
    );
    let o = hookd(&p, &tmp, &["check"]).output().unwrap();
    assert!(
        crate::support::stdout(&o).contains("; protected names looked for 3 level(s) below the project, in at most 50 directories, not entering vendor (`sandbox.walk`)\n"),
        "{}",
        crate::support::stdout(&o)
    );
}

/// Issue 40 item 2: the model's file tools are refused what a nested repository's git reads
/// outside its `.git` (its `core.hooksPath`, its included files, the git directory its `.git`
/// file names), as they are the root's: through the Claude Code adapter's `Write`.
#[test]
fn the_gate_protects_what_a_nested_repository_names() {
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let setup = format!(
        "git init -q sub && mkdir hooks-sub && git -C sub config core.hooksPath ../hooks-sub \
         && echo '[user]' > sub.gitconfig && git -C sub config include.path ../../sub.gitconfig \
         && {POINTER}"
    );
    let o = run(&p, &tmp, p.path(), &setup, out.path(), false);
    assert!(o.status.success(), "{}", stderr(&o));
    for (path, refused) in [
        ("hooks-sub/pre-commit", true),
        ("sub.gitconfig", true),
        ("store/lib.git/config", true),
        ("store/lib.git/hooks/pre-commit", true),
        ("vendor/lib/.git", true),
        ("sub/.git/config", true),
        ("store/lib.git/objects/ab/cdef", false),
        ("hooks-other/pre-commit", false),
        ("vendor/lib/src/main.rs", false),
    ] {
        assert_eq!(
            crate::places::gate_refuses(&p, &tmp, p.path(), path),
            refused,
            "{path}"
        );
    }
}

/// Issue 40 item 5: the lock files of the stand-ins (in hookd's state) do not grow with every
/// place ever held: beyond 256, a command that ends removes the idle ones, never one a running
/// command holds (its stand-in stays and keeps its place from being written).
#[test]
fn idle_lock_files_are_swept_and_held_ones_kept() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let locks = p.state.path().join("placeholders");
    let count = |prefix: &str| {
        std::fs::read_dir(&locks)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .count()
    };
    let slow = "sleep 1.5; printf X=1 > .env";
    let mut a = hookd(&p, &tmp, &["exec", "--", "sh", "-c", slow])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let held = count("");
    assert!(held > 0, "no lock while a command holds its stand-ins");
    // What thousands of places held once (projects since removed) leave behind.
    for i in 0..300 {
        std::fs::write(locks.join(format!("old{i}.lock")), "").unwrap();
    }
    let o = hookd(&p, &tmp, &["exec", "--", "true"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count("old"), 0, "idle lock files were left");
    assert_eq!(count(""), held, "the running command's lock files went");
    a.wait().unwrap();
    assert!(
        !p.path().join(".env").is_file(),
        "the running command wrote .env after the sweep"
    );
    assert!(p.path().join(".env").symlink_metadata().is_err());
}

/// Issue 40 items 2 and 3: what cannot be held, a protected name made below the project off the
/// way to the working directory, is moved aside once the command has ended (it never takes
/// effect where an agent, an editor or git would read it), and said; what existed before, or is
/// made elsewhere, is left alone.
#[test]
fn protected_places_made_below_are_moved_aside_when_the_command_ends() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir_all(p.path().join("old/.claude")).unwrap();
    let o = hookd(
        &p,
        &tmp,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            "mkdir -p web/.claude src && echo '{}' > web/.claude/settings.json && git init -q sub && touch src/x",
        ],
    )
    .current_dir(p.path())
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let root = p.path().canonicalize().unwrap();
    let aside = |place: &str| {
        format!(
            "hookd: the confined command made {} (a place agents, editors or git read on their own, which confined commands may not write): moved to {}; look at it before you rename it back",
            root.join(place).display(),
            root.join(format!("{place}.hookd-aside")).display()
        )
    };
    let mut lines: Vec<String> = stderr(&o).lines().map(String::from).collect();
    lines.sort();
    let repo = format!(
        "hookd: the confined command made {} (a repository below the project, whose configuration git would run at your next `git status` there): moved to {}; look at it before you rename it back",
        root.join("sub/.git").display(),
        root.join("sub/.git.hookd-aside").display()
    );
    assert_eq!(lines, [repo, aside("web/.claude")]);
    assert!(root.join("sub/.git").symlink_metadata().is_err());
    assert!(root.join("sub/.git.hookd-aside/config").is_file());
    assert!(root.join("web/.claude").symlink_metadata().is_err());
    assert!(root.join("web/.claude.hookd-aside/settings.json").is_file());
    assert!(
        root.join("old/.claude").is_dir(),
        "what existed before went"
    );
    assert!(root.join("src/x").is_file());
    let o = hookd(&p, &tmp, &["exec", "--", "true"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert_eq!(stderr(&o), "", "what existed before is not named");
    // The model's shell calls, as the adapters rewrite them, do the same; a name already taken
    // beside it is not written over.
    std::fs::create_dir_all(root.join("app/.vscode.hookd-aside")).unwrap();
    let o = hookd(&p, &tmp, &["exec", "--shell", "mkdir -p app/.vscode"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "{}\n",
            aside("app/.vscode").replace(".vscode.hookd-aside", ".vscode.hookd-aside-1")
        )
    );
    assert!(root.join("app/.vscode").symlink_metadata().is_err());
    // Unconfined, the same command leaves it (the attack works there).
    let o = run(&p, &tmp, p.path(), "mkdir -p web/.claude", p.path(), false);
    assert!(o.status.success());
    assert!(root.join("web/.claude").is_dir());
}

/// Once what was just made in `p` is old enough for a walk to remember (a directory changed in
/// the two seconds before a walk is read again by the next one): a runner of confined
/// `sh -c SCRIPT` from its root.
pub(crate) fn once_old_enough<'a>(
    p: &'a crate::support::Project,
    tmp: &'a std::path::Path,
) -> impl Fn(&str) -> std::process::Output + 'a {
    std::thread::sleep(std::time::Duration::from_millis(2_300));
    move |script: &str| {
        hookd(p, tmp, &["exec", "--", "sh", "-c", script])
            .current_dir(p.path())
            .output()
            .unwrap()
    }
}

/// The walk remembers what it read in hookd's state (a large tree's cost): a directory unchanged
/// since is not read again. What a confined command makes below the root changes the directory
/// it is made in, which the next walk reads again: the place made is held from the next command
/// on, as without the memory; and the memory itself is out of the command's reach.
#[test]
fn a_remembered_walk_holds_what_a_command_made_since() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    for dir in ["web/src", "api/src", "lib/x"] {
        std::fs::create_dir_all(p.path().join(dir)).unwrap();
    }
    let exec = once_old_enough(&p, &tmp);
    let o = exec("true");
    assert!(o.status.success(), "{}", stderr(&o));
    let walks = p.state.path().join("walks");
    let kept = std::fs::read_dir(&walks).map_or(0, |d| d.count());
    assert!(kept > 0, "no memory of the walk in {}", walks.display());
    // The memory is hidden from the command, as the rest of hookd's state.
    let o = exec(&format!("ls '{}' || echo hidden", walks.display()));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "hidden\n",
        "{}",
        stderr(&o)
    );

    // Made below, off the way to the working directory: it can be, and is moved aside...
    let settings = p.path().join("web/.claude/settings.json");
    let o = exec(&format!(
        "mkdir web/.claude && printf '{ORIGINAL}' > web/.claude/settings.json"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("moved to"), "{}", stderr(&o));
    assert!(settings.symlink_metadata().is_err());
    // ...and once the user has looked at it and put it back (the memory says `web/` holds
    // nothing), it is held from the next command on.
    std::fs::rename(
        p.path().join("web/.claude.hookd-aside"),
        p.path().join("web/.claude"),
    )
    .unwrap();
    let o = exec("printf pwned > web/.claude/settings.json");
    assert!(!o.status.success(), "written confined: {}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), ORIGINAL);
    // Unconfined, the same write lands (the attack works).
    let o = run(
        &p,
        &tmp,
        p.path(),
        "printf pwned > web/.claude/settings.json",
        p.path(),
        false,
    );
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "pwned");
}

/// The command's end walks again where the walks at its start read at most 2,000 directories:
/// a tree of 1,531 directories within two levels is looked at again from its first command on,
/// and after a burst of changes; one of 2,296 is not, and what a command makes there is held
/// from the next command on.
#[test]
fn what_is_made_below_a_large_tree_is_moved_aside_within_the_second_walks_budget() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let tree = |width: usize| {
        for a in 0..width {
            for b in 0..50 {
                std::fs::create_dir_all(p.path().join(format!("d{a}/e{b}"))).unwrap();
            }
        }
    };
    tree(30);
    let exec = once_old_enough(&p, &tmp);
    let made = p.path().canonicalize().unwrap().join("d3/.claude");
    let o = exec("mkdir d3/.claude");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("the confined command made {}", made.display())),
        "{}",
        stderr(&o)
    );
    assert!(made.symlink_metadata().is_err());
    // A command that changes a thousand directories just before the next one starts (their
    // memory too recent to trust) does not make the next one skip its second walk (an attack
    // round's): the budget is the tree's size.
    let o = exec("for d in d1*/e* d2*/e*; do touch $d/x; done");
    assert!(o.status.success(), "{}", stderr(&o));
    let o = hookd(&p, &tmp, &["exec", "--", "mkdir", "d5/.claude"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let burst = p.path().canonicalize().unwrap().join("d5/.claude");
    assert!(
        stderr(&o).contains(&format!("the confined command made {}", burst.display())),
        "{}",
        stderr(&o)
    );
    // Half again as large: beyond the second walk's budget. The end does not look; the next
    // confined command's start, whose walk reads the tree anyway, judges what it made there by
    // the end's record, before it holds anything (attack round 22, F1: a repository planted
    // in `node_modules/q` and a link to it stayed for good, 3 of 3).
    tree(45);
    let root = p.path().canonicalize().unwrap();
    let exec = once_old_enough(&p, &tmp);
    // Also one three levels below the root by its own path, reached through a link one level
    // down (`pkgs -> node_modules/p`, `p/sub/.git`): the walks read it through the link.
    let o = exec("mkdir d40/.claude && echo x > d40/.claude/settings.json && git init -q node_modules/q && ln -s ../node_modules/q d41/x && git init -q node_modules/p/sub && ln -s node_modules/p pkgs");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(
        root.join("d40/.claude").is_dir(),
        "left until the next start"
    );
    // Yours, made after that end: not the command's (where the filesystem keeps birth times).
    std::thread::sleep(std::time::Duration::from_millis(100));
    std::fs::create_dir_all(root.join("d42/.vscode")).unwrap();
    let births = root
        .join("d42/.vscode")
        .metadata()
        .unwrap()
        .created()
        .is_ok();
    let o = exec("echo pwned > d40/.claude/settings.json");
    assert!(!o.status.success(), "written confined: {}", stderr(&o));
    moved_aside(
        &o,
        &root,
        &[
            "d40/.claude",
            "node_modules/q/.git",
            "node_modules/p/sub/.git",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(root.join("d40/.claude.hookd-aside/settings.json")).unwrap(),
        "x\n"
    );
    if births {
        assert!(root.join("d42/.vscode").is_dir(), "{}", stderr(&o));
    }
    // Judged once: the command after says nothing.
    let o = exec("true");
    assert_eq!(stderr(&o), "");
}

/// That `o`'s command said it moved each of `made` (below `root`) aside, and did.
fn moved_aside(o: &std::process::Output, root: &std::path::Path, made: &[&str]) {
    for made in made {
        let said = format!("the confined command made {} (", root.join(made).display());
        assert!(stderr(o).contains(&said), "{made}: {}", stderr(o));
        assert!(root.join(made).symlink_metadata().is_err(), "{made} left");
    }
}

/// 2,250 directories within two levels of `dir` (`d0/e0` to `d44/e49`): more than a command's
/// end walks again (`LOOKS_AGAIN_UP_TO`).
fn large_tree(dir: &std::path::Path) {
    for a in 0..45 {
        for b in 0..50 {
            std::fs::create_dir_all(dir.join(format!("d{a}/e{b}"))).unwrap();
        }
    }
}

/// The same where `hookd exec` is killed (its end never runs) in a tree too large for a second
/// walk: the next command's preparation settles the killed one's record as far as the way and
/// the roots, and keeps the rest for its own walk to judge (`deferred.rs`).
#[test]
fn what_a_killed_command_made_in_a_large_tree_is_moved_aside_at_the_next_start() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    large_tree(p.path());
    let root = p.path().canonicalize().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2_300));
    let script = "mkdir d40/.claude && echo {} > d40/.claude/settings.json; sleep 30";
    let mut child = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .current_dir(p.path())
        .spawn()
        .unwrap();
    let settings = root.join("d40/.claude/settings.json");
    crate::sandbox::appears(&settings, "the command did not start");
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(settings.exists());
    let o = hookd(&p, &tmp, &["exec", "--", "true"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!settings.exists(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "hookd: the confined command made {} (",
            root.join("d40/.claude").display()
        )),
        "{}",
        stderr(&o)
    );
}

/// Attack round 23, F1: the next command run from inside the large tree (where the agent's
/// shell went next) had the places on its way held as found, unjudged: `big/d5/.git` planted
/// there stayed for good (6 of 6). The way and the roots are judged first too.
#[test]
fn what_a_large_trees_end_left_on_the_next_commands_way_is_moved_aside() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    large_tree(p.path());
    let root = p.path().canonicalize().unwrap();
    let exec = once_old_enough(&p, &tmp);
    let o = exec("mkdir d5/e1/.claude && echo {} > d5/e1/.claude/settings.json && git init -q d5/.sub && mv d5/.sub/.git d5/.git");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let o = hookd(&p, &tmp, &["exec", "--", "true"])
        .current_dir(root.join("d5/e1"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    moved_aside(&o, &root, &["d5/e1/.claude", "d5/.git"]);
}

/// Attack round 24, F1: a large tree's record is judged by a command of a project holding it
/// too (a repository of its own inside the user's larger one, the next command run from the
/// outer one): the plant was held as found, 4 of 4.
#[test]
fn what_a_large_trees_end_left_is_judged_by_a_command_of_a_project_holding_it() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let inner = p.path().join("inner");
    large_tree(&inner);
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&inner)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let root = p.path().canonicalize().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2_300));
    let o = hookd(&p, &tmp, &["exec", "--", "mkdir", "d5/.claude"])
        .current_dir(&inner)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let o = hookd(&p, &tmp, &["exec", "--", "true"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let made = root.join("inner/d5/.claude");
    assert!(
        stderr(&o).contains(&format!("the confined command made {} (", made.display())),
        "{}",
        stderr(&o)
    );
    assert!(made.symlink_metadata().is_err());
}

/// A protected name found below that is a symbolic link stops the command, naming it, as one at
/// the root does: the link could be replaced by a file of the command's.
#[test]
fn a_protected_link_below_the_root_stops_the_command() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir_all(p.path().join("packages/x")).unwrap();
    std::fs::write(p.path().join("shared.env"), "A=1\n").unwrap();
    std::os::unix::fs::symlink("../../shared.env", p.path().join("packages/x/.env")).unwrap();
    let o = hookd(&p, &tmp, &["exec", "--", "touch", "ran"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert!(!p.path().join("ran").exists(), "the command ran");
    let link = p.path().canonicalize().unwrap().join("packages/x/.env");
    assert_eq!(
        stderr(&o),
        format!(
            "hookd exec: not run: the sandbox could not be prepared: {} is a symbolic link: the sandbox holds it read-only and cannot hold a link (replace the link with the directory or file itself)\n",
            link.display()
        )
    );
}

/// A hook whose sandbox cannot be prepared for what the walk found (here, a protected link
/// below the root) is skipped, naming it, with the operator's hint about the project, not the
/// kernel.
#[test]
fn a_hook_is_skipped_naming_what_the_walk_found() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^touch ran$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: h, hook: post_session, command: 'touch ran'}]\n",
    );
    std::fs::create_dir_all(p.path().join("packages/x")).unwrap();
    std::os::unix::fs::symlink("../../shared.env", p.path().join("packages/x/.env")).unwrap();
    let c = hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]);
    let o = crate::support::with_stdin(c, "{}");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!p.path().join("ran").exists(), "the hook ran");
    let skipped = crate::support::json_lines(&stderr(&o))
        .into_iter()
        .find(|e| e["type"] == "hook_command_skipped")
        .unwrap();
    assert_eq!(skipped["reason"], "sandbox_unavailable");
    let link = p.path().canonicalize().unwrap().join("packages/x/.env");
    assert_eq!(
        skipped["detail"],
        format!("the sandbox could not be prepared: {} is a symbolic link: the sandbox holds it read-only and cannot hold a link (replace the link with the directory or file itself)", link.display())
    );
    assert_eq!(
        skipped["hint"],
        "fix what the detail names in the project (a symbolic link where a held place is, a tree too large to walk, a directory of yours that cannot be read), or set `sandbox.enabled: false` in your config.yaml to run hooks unconfined"
    );
}

/// `c` as another user than root (nobody) where the tests run as root, who reads and renames
/// whatever the permissions say: `setpriv`, with `c`'s arguments, environment and directory;
/// `paths` are given to that user first. Unchanged for any other user.
pub(crate) fn as_a_plain_user(
    c: &std::process::Command,
    paths: &[&std::path::Path],
) -> std::process::Command {
    let mut s = if nix::unistd::geteuid().is_root() {
        for p in paths {
            let ok = std::process::Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(p)
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown {}", p.display());
        }
        let mut s = std::process::Command::new("setpriv");
        s.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(c.get_program());
        s
    } else {
        std::process::Command::new(c.get_program())
    };
    s.args(c.get_args()).env_clear();
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            s.env(k, v);
        }
    }
    if let Some(d) = c.get_current_dir() {
        s.current_dir(d);
    }
    s
}

/// A confined command that takes its own permissions off the directory it made a place in
/// (`chmod 100 web`: the second walk cannot list `web/`, and an agent started there still reads
/// `web/.claude`; `chmod 500 app`: nothing can be renamed in `app/`) has them given back for
/// the end's walk and move: what it made is moved aside all the same, and said. As root, run
/// as another user: root's own reading and renaming need no permission.
#[test]
fn a_command_that_takes_its_permissions_away_still_has_what_it_made_moved_aside() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = "mkdir -p web/.claude app/.claude deep/b/.claude && echo x > web/.claude/settings.json && chmod 100 web && chmod 500 app && chmod 600 deep";
    let mut c = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script]);
    c.current_dir(p.path());
    let o = as_a_plain_user(&c, &[p.path(), p.home.path(), p.state.path()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let root = p.path().canonicalize().unwrap();
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "hookd: the confined command had taken its owner's reading off {}, which the walk at its start read: given back (u+rx) to look for what it made there",
            root.join("web").display()
        )),
        "{err}"
    );
    // Listed but not searched (`chmod 600`, an attack round's): whether `deep/b` exists cannot
    // be asked; given back too.
    assert!(
        err.contains(&format!(
            "hookd: the confined command had taken its owner's reading off {}, which the walk at its start read",
            root.join("deep").display()
        )),
        "{err}"
    );
    for place in ["web/.claude", "app/.claude", "deep/b/.claude"] {
        assert!(
            err.contains(&format!(
                "the confined command made {} (a place agents, editors or git read on their own, which confined commands may not write): moved to {}.hookd-aside",
                root.join(place).display(),
                root.join(place).display()
            )),
            "{err}"
        );
        assert!(root.join(place).symlink_metadata().is_err(), "{place} left");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = |d: &str| {
        std::fs::metadata(root.join(d))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("web"), 0o500, "web's reading given back");
    assert_eq!(mode("app"), 0o500, "app's mode taken back after the move");
    assert_eq!(mode("deep"), 0o700, "deep's search given back");

    // At a command's start, a directory of the user's that can be listed but not searched
    // stops it, as an unreadable one does (what is in it could not be held).
    std::fs::set_permissions(root.join("deep"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = as_a_plain_user(&c, &[]).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(126), "{err}");
    assert!(
        err.contains(&format!(
            "could not read {}, which is yours",
            root.join("deep").display()
        )),
        "{err}"
    );
}
