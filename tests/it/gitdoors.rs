//! Issue 40 items 2, 3 and 6: the doors through which a confined command could make git, or an
//! agent, run its code at the user's next unconfined start. Each is performed for real, in a
//! fresh project each time: unconfined first, where the unconfined `git status` or `git commit`
//! that follows leaves the marker (the attack works), then through `hookd exec`, where it must
//! not. Ordinary git work must keep working confined.

use std::path::Path;
use std::process::{Command, Output};

use crate::sandbox::{confinable, hookd, project, project_with_the_home_writable};
use crate::support::{stderr, stdout, Project};

/// Plants `core.fsmonitor` (run by the next `git status`) in the config file `$1`, touching
/// `$OUT/door`.
pub(crate) const FSMONITOR: &str = r#"printf '[core]\n\tfsmonitor = "touch %s/door #"\n' "$OUT""#;

/// A `pre-commit` hook that touches `$OUT/door`, written to the file `$1`.
pub(crate) const HOOK: &str = r#"printf '#!/bin/sh\ntouch %s/door\n' "$OUT""#;

/// The unconfined `git status` and `git commit` that run what a door planted.
pub(crate) const TRIGGER: &str = "git status >/dev/null 2>&1; \
                       git -c user.email=a@b -c user.name=n commit -q --allow-empty -m t >/dev/null 2>&1; true";

/// `script` in `dir` of `p`: by `sh` as the user runs it, or through `hookd exec`.
pub(crate) fn run(
    p: &Project,
    tmp: &Path,
    dir: &Path,
    script: &str,
    out: &Path,
    confined: bool,
) -> Output {
    let mut c = if confined {
        hookd(p, tmp, &["exec", "--", "sh", "-c", script])
    } else {
        let mut c = Command::new("sh");
        c.args(["-c", script])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", p.home.path());
        c
    };
    // git never looks above the project: where a test has broken its `.git`, git would find
    // the repository the tests run in (and commit there).
    let ceiling = p.path().parent().unwrap_or(p.path());
    c.current_dir(dir)
        .env("OUT", out)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .output()
        .unwrap()
}

/// A door: `setup` (a shell script run unconfined in the project), then `attack` run from `cwd`
/// (relative to the project), then the trigger from `trigger` (relative too). Unconfined the
/// marker appears; confined it must not.
pub(crate) fn door(name: &str, setup: &str, cwd: &str, attack: &str, trigger: &str) {
    for confined in [false, true] {
        let (p, tmp) = project();
        let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let o = run(&p, &tmp, p.path(), setup, out.path(), false);
        assert!(o.status.success(), "{name}: setup: {}", stderr(&o));
        let a = run(&p, &tmp, &p.path().join(cwd), attack, out.path(), confined);
        assert_ne!(a.status.code(), Some(126), "{name}: {}", stderr(&a));
        // Where the attack did not work, the directory it would have made may be missing.
        std::fs::create_dir_all(p.path().join(trigger)).unwrap();
        run(
            &p,
            &tmp,
            &p.path().join(trigger),
            TRIGGER,
            out.path(),
            false,
        );
        let marked = out.path().join("door").exists();
        if confined {
            assert!(
                !marked,
                "{name}: the attack worked confined: {}",
                stderr(&a)
            );
        } else {
            assert!(
                marked,
                "{name}: the attack did not work unconfined: {}",
                stderr(&a)
            );
        }
    }
}

/// A repository whose git directory is elsewhere in the project (`.git` a file naming it).
const SEPARATE: &str =
    "rm -rf .git && mkdir store && git init -q --separate-git-dir=\"$PWD/store/main.git\" .";

/// One commit, for work trees.
const COMMIT: &str = "git -c user.email=a@b -c user.name=n commit -q --allow-empty -m one";

#[test]
fn the_git_directory_a_git_file_names_is_held_as_a_git_directory() {
    if !confinable() {
        return;
    }
    door(
        "its config",
        SEPARATE,
        "",
        &format!("{FSMONITOR} >> store/main.git/config"),
        "",
    );
    door(
        "its hooks",
        SEPARATE,
        "",
        &format!(
            "{HOOK} > store/main.git/hooks/pre-commit && chmod +x store/main.git/hooks/pre-commit"
        ),
        "",
    );
    door(
        "the pointer",
        SEPARATE,
        "",
        &format!("cp -r store/main.git evil.git && {FSMONITOR} >> evil.git/config && echo 'gitdir: evil.git' > .git"),
        "",
    );
}

#[test]
fn core_hooks_path_is_held_present_or_absent() {
    if !confinable() {
        return;
    }
    let attack = format!(
        "mkdir -p .husky/_ && {HOOK} > .husky/_/pre-commit && chmod +x .husky/_/pre-commit"
    );
    door(
        "husky's hooks",
        "mkdir -p .husky/_ && git config core.hooksPath .husky/_",
        "",
        &attack,
        "",
    );
    door(
        "absent hooks directory",
        "git config core.hooksPath .husky/_",
        "",
        &attack,
        "",
    );
    // What the managers' installed hooks run (attack round 11, F5): husky 9's stubs in
    // `.husky/_` run `.husky/pre-commit`; pre-commit's and lefthook's hooks read their
    // configuration at the root (here a hook that runs it, as their `entry:`/`run:` lines do).
    door(
        "husky's hook body",
        r#"mkdir -p .husky/_ && printf '#!/bin/sh\n. "$(dirname "$0")/h"\n' > .husky/_/pre-commit &&
printf 'n=$(basename "$0"); s="$(dirname "$(dirname "$0")")/$n"; [ -f "$s" ] && sh -e "$s"\n' > .husky/_/h &&
chmod +x .husky/_/pre-commit && echo true > .husky/pre-commit && git config core.hooksPath .husky/_"#,
        "",
        &format!("{HOOK} > .husky/pre-commit"),
        "",
    );
    door(
        "pre-commit's configuration",
        r#"printf '#!/bin/sh\n# File generated by pre-commit: https://pre-commit.com\nsh .pre-commit-config.yaml\n' > .git/hooks/pre-commit &&
chmod +x .git/hooks/pre-commit"#,
        "",
        &format!("{HOOK} > .pre-commit-config.yaml"),
        "",
    );
    door(
        "lefthook's configuration",
        r#"printf '#!/bin/sh\n# lefthook run pre-commit\nsh lefthook.yml\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"#,
        "",
        &format!("{HOOK} > lefthook.yml"),
        "",
    );
    door(
        "an included file",
        "echo '[user]' > shared.gitconfig && git config include.path ../shared.gitconfig",
        "",
        &format!("{FSMONITOR} >> shared.gitconfig"),
        "",
    );
}

#[test]
fn absent_git_places_cannot_be_made() {
    if !confinable() {
        return;
    }
    door(
        "commondir",
        "true",
        "",
        &format!("cp -r .git evil && {FSMONITOR} >> evil/config && echo ../evil > .git/commondir"),
        "",
    );
    door(
        "a submodule's git directory",
        "true",
        "",
        &format!("mkdir -p .git/modules m && git init -q --separate-git-dir=.git/modules/m m && {FSMONITOR} >> .git/modules/m/config"),
        "m",
    );
    door(
        "a linked work tree's",
        COMMIT,
        "",
        &format!(
            "git worktree add -q --detach wt && cp -r .git evil && {FSMONITOR} >> evil/config \
                  && echo ../../../evil > .git/worktrees/wt/commondir"
        ),
        "wt",
    );
}

#[test]
fn no_new_repository_and_no_nested_repositorys_configuration() {
    if !confinable() {
        return;
    }
    door(
        "a new repository",
        "mkdir sub",
        "sub",
        &format!("git init -q && {FSMONITOR} >> .git/config"),
        "sub",
    );
    door(
        "a nested repository",
        "mkdir sub && git -C sub init -q",
        "sub",
        &format!("{FSMONITOR} >> .git/config"),
        "sub",
    );
}

/// Laid out as git lays out a bare repository (`HEAD`, `objects/`, `refs/`), a directory
/// without a `.git` is a repository of its own to git: the user's next `git status` there ran
/// the `core.fsmonitor` of the `config` a confined command wrote beside them (the held-out
/// replay of 2026-11-28, L8; Claude Code's sandbox adapter scrubs such files in the working
/// directory after each command). Made by the command, the layout is moved aside at its end
/// (its `HEAD`); one that was there at the start is held as a `.git` is.
#[test]
fn no_bare_repository_laid_out_below_and_an_existing_ones_configuration_held() {
    if !confinable() {
        return;
    }
    // One `[core]` section, as `git init --bare` writes it, turned into a work tree's.
    let config = r#"printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch %s/door #"\n' "$OUT" > config"#;
    let bare =
        format!("mkdir -p objects refs/heads && echo 'ref: refs/heads/main' > HEAD && {config}");
    door(
        "a bare layout in the working directory",
        "mkdir sub",
        "sub",
        &bare,
        "sub",
    );
    door(
        "a bare layout below, off the way",
        "mkdir -p web/sub",
        ".",
        &format!("cd web/sub && {bare}"),
        "web/sub",
    );
    door(
        "an existing bare repository's configuration",
        "git init -q --bare web/fixture.git",
        ".",
        &format!("cd web/fixture.git && {config}"),
        "web/fixture.git",
    );
    // Attack round 12: a `HEAD` git takes and a parser would not, a dangling link, a `.git`
    // decoy the end moves aside itself, the root's `.git` made no git directory by a file for
    // `objects`, and an existing bare repository whose `refs` one command moved away so that
    // the next would find it unrecognised.
    for (what, head) in [
        (
            "ref:refs without a blank",
            "printf 'ref:refs/heads/main\n' > HEAD",
        ),
        ("an id with junk after it", "printf '%040d junk\n' 0 > HEAD"),
        ("a dangling link", "ln -s refs/heads/nothere HEAD"),
    ] {
        door(
            &format!("a bare layout below, {what}"),
            "mkdir -p web/sub",
            ".",
            &format!("cd web/sub && mkdir -p objects refs/heads && {head} && {config}"),
            "web/sub",
        );
    }
    // A `.git` decoy beside the layout, which the end moves aside as a repository made below:
    // the layout behind it is moved aside too (unconfined, git stops at the decoy; moving it
    // aside is what would have exposed the layout).
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    std::fs::create_dir_all(p.path().join("web/sub")).unwrap();
    let decoy = format!(
        "cd web/sub && mkdir -p objects refs/heads && echo 'not a gitfile' > .git && echo 'ref: refs/heads/main' > HEAD && {config}"
    );
    let a = run(&p, &tmp, p.path(), &decoy, out.path(), true);
    assert!(a.status.success(), "{}", stderr(&a));
    let sub = p.path().join("web/sub");
    assert!(!sub.join(".git").exists(), "{}", stderr(&a));
    assert!(!sub.join("HEAD").exists(), "{}", stderr(&a));
    run(&p, &tmp, &sub, TRIGGER, out.path(), false);
    assert!(!out.path().join("door").exists(), "{}", stderr(&a));
    // In two commands: the `HEAD` by one, `objects`, `refs` and `config` by the next (attack
    // round 13).
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    std::fs::create_dir_all(p.path().join("web")).unwrap();
    let first = "echo 'ref: refs/heads/main' > web/HEAD";
    let second = format!("cd web && mkdir -p objects refs/heads && {config}");
    for step in [first, second.as_str()] {
        let a = run(&p, &tmp, p.path(), step, out.path(), true);
        assert!(a.status.success(), "{}", stderr(&a));
    }
    run(&p, &tmp, &p.path().join("web"), TRIGGER, out.path(), false);
    assert!(
        !out.path().join("door").exists(),
        "a layout made in two commands ran"
    );
    door(
        "the root, its .git's objects a file",
        "",
        ".",
        &format!("mv .git/objects .git/objects.away && touch .git/objects && {bare}"),
        ".",
    );
    door(
        "an existing bare repository, its refs moved away first",
        "git init -q --bare web/fixture.git",
        ".",
        &format!(
            "cd web/fixture.git && (mv refs refs.away || true); {config}; (mv refs.away refs 2>/dev/null || true)"
        ),
        "web/fixture.git",
    );
}

/// The files agents load by themselves, absent at the start: a confined command cannot make
/// them, at the root or in the working directory, and nothing is left behind.
#[test]
fn absent_agent_files_cannot_be_made_and_nothing_is_left() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    std::fs::create_dir_all(p.path().join("web")).unwrap();
    let cases = [
        ("", ".env"),
        ("", ".envrc"),
        ("", ".mcp.json"),
        ("", "crush.json"),
        ("", ".crush.json"),
        ("", ".gitmodules"),
        // Attack round 11 (F6): the twins of held names.
        ("", ".devcontainer.json"),
        ("", "mise.local.toml"),
        ("", ".agents/skills/x/SKILL.md"),
        ("", ".vscode/tasks.json"),
        ("", ".idea/workspace.xml"),
        ("web", ".claude/settings.json"),
        ("web", ".gemini/settings.json"),
        ("web", ".env"),
    ];
    let write = "mkdir -p \"$(dirname \"$1\")\" && printf '{}' > \"$1\"";
    for (cwd, path) in cases {
        let dir = p.path().join(cwd);
        let file = dir.join(path);
        let top = dir.join(Path::new(path).components().next().unwrap());
        let mark = format!("{cwd}{path}").replace('/', "_");
        let script = format!("{write} && touch \"$OUT/{mark}\"");
        let script = script.replace("$1", path);
        let o = run(&p, &tmp, &dir, &script, out.path(), true);
        assert!(
            !file.exists(),
            "{cwd}/{path} was made confined: {}",
            stderr(&o)
        );
        assert!(!top.exists(), "{cwd}/{path}: its stand-in was left behind");
        let o = run(&p, &tmp, &dir, &script, out.path(), false);
        assert!(file.exists(), "{cwd}/{path}: {}", stderr(&o));
        std::fs::remove_dir_all(&top)
            .or_else(|_| std::fs::remove_file(&top))
            .unwrap();
    }
    let marks = std::fs::read_dir(out.path()).unwrap().count();
    assert_eq!(
        marks,
        cases.len(),
        "only the unconfined writes left markers"
    );
}

/// A stand-in stays while any confined command holding it runs: the one that ends first does
/// not free the name for the other.
#[test]
fn a_stand_in_stays_until_the_last_command_holding_it_ends() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    // The write is what must fail (a marker outside the project could not be made confined).
    let slow = "sleep 1.5; printf X=1 > .env";
    let mut a = hookd(&p, &tmp, &["exec", "--", "sh", "-c", slow]);
    a.env("OUT", out.path());
    let mut a = a.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let o = run(&p, &tmp, p.path(), "true", out.path(), true);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::os::unix::fs::FileTypeExt::is_socket(
            &p.path()
                .join(".env")
                .symlink_metadata()
                .unwrap()
                .file_type()
        ),
        "the stand-in went while a command held it"
    );
    a.wait().unwrap();
    assert!(
        !p.path().join(".env").is_file(),
        "the slow command wrote .env"
    );
    // The other way around: the command that made the stand-in ends first, the one that found
    // it still runs.
    let mut first = hookd(&p, &tmp, &["exec", "--", "sleep", "0.5"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut second = hookd(&p, &tmp, &["exec", "--", "sh", "-c", slow]);
    second.env("OUT", out.path());
    let mut second = second.spawn().unwrap();
    first.wait().unwrap();
    second.wait().unwrap();
    assert!(
        !p.path().join(".env").is_file(),
        "the command that found the stand-in wrote .env after its maker ended"
    );
    assert!(
        !p.path().join(".env").exists(),
        "the stand-in was left behind"
    );
}

/// Issue 40 item 6: a held place whose ancestor is a symbolic link in a writable place
/// (`~/.config -> dotfiles/config` with the home writable) stops the command: the bind would
/// land on the link's target, and the command could put a directory with its own
/// `git/config` where the link was.
#[test]
fn a_held_place_below_a_symlink_in_a_writable_place_stops_the_command() {
    if !confinable() {
        return;
    }
    let attack = format!(
        "rm \"$HOME/.config\" && mkdir -p \"$HOME/.config/git\" && {FSMONITOR} > \"$HOME/.config/git/config\""
    );
    for confined in [false, true] {
        let (p, tmp) = project_with_the_home_writable();
        let home = p.home.path();
        std::fs::create_dir_all(home.join("dotfiles/config/git")).unwrap();
        std::fs::write(home.join("dotfiles/config/git/config"), "[user]\n").unwrap();
        std::os::unix::fs::symlink("dotfiles/config", home.join(".config")).unwrap();
        let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let o = run(&p, &tmp, p.path(), &attack, out.path(), confined);
        run(&p, &tmp, p.path(), TRIGGER, out.path(), false);
        let marked = out.path().join("door").exists();
        assert_eq!(marked, !confined, "{}", stderr(&o));
        if confined {
            assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
            // The first place held below the link is named (`crush/crush.json` or `git/config`).
            let link = home.canonicalize().unwrap().join(".config");
            let e = stderr(&o);
            let start = format!(
                "hookd exec: not run: the sandbox could not be prepared: {} is a symbolic link in a writable place: the sandbox holds {}/",
                link.display(),
                home.join(".config").display()
            );
            assert!(e.starts_with(&start), "{e}");
            assert!(
                e.trim_end().ends_with(" read-only and cannot hold it through a link (replace the link with the directory itself)"),
                "{e}"
            );
        }
    }
}

/// Ordinary git work keeps working confined, from the root and from a directory below it.
/// Attack round 21, F3: with the home writable and no `~/.gitconfig`, the socket standing in
/// for it (so that no command makes one) made every git command die (`unable to access
/// '~/.gitconfig': No such device or address`, exit 128). The stand-ins of git's global
/// configuration are shown to the command as an empty file; neither can be made.
#[test]
fn git_works_confined_with_the_home_writable_and_no_global_configuration() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project_with_the_home_writable();
    let home = p.home.path();
    // A global ignore file beside an absent `config`: its stand-in is the file itself.
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    std::fs::write(home.join(".config/git/ignore"), "*.log\n").unwrap();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let script = format!(
        "set -e
        echo a > a.txt && git add a.txt && {COMMIT} && git status --short
        {FSMONITOR} >> ~/.gitconfig || true
        {FSMONITOR} >> ~/.config/git/config || true
        rm -f ~/.gitconfig ~/.config/git/config 2>/dev/null || true
        git log --oneline | wc -l"
    );
    let o = run(&p, &tmp, p.path(), &script, out.path(), true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "1", "{}", stderr(&o));
    assert!(!stderr(&o).contains("unable to access"), "{}", stderr(&o));
    for made in [".gitconfig", ".config/git/config"] {
        assert!(home.join(made).symlink_metadata().is_err(), "{made} left");
    }
    run(&p, &tmp, p.path(), TRIGGER, out.path(), false);
    assert!(!out.path().join("door").exists());
}

#[test]
fn ordinary_git_work_succeeds_confined() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let other = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let setup = format!(
        "git init -q {0} && cd {0} && echo o > o && git add o && {COMMIT} && git branch -q theirs",
        other.path().display()
    );
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    assert!(run(&p, &tmp, p.path(), &setup, out.path(), false)
        .status
        .success());
    std::fs::create_dir_all(p.path().join("src/deep")).unwrap();
    let git = "git -c user.email=a@b -c user.name=n";
    let script = format!(
        "set -e
        echo a > a.txt && git add a.txt && {git} commit -qm one
        git branch topic && git checkout -q topic
        echo b > b.txt && git add b.txt && {git} commit -qm two
        git checkout -q - && echo c > c.txt && git add c.txt && {git} commit -qm three
        echo d >> a.txt && git stash -q && git stash pop -q && git checkout -q -- a.txt
        {git} merge -q --no-edit topic
        git checkout -q topic && {git} rebase -q - && git checkout -q -
        git switch -q topic && echo f > f.txt && git add f.txt && {git} commit -qm six && git switch -q -
        {git} cherry-pick topic >/dev/null && git reset -q --soft HEAD~1 && git reset -q --hard
        git tag v1 && git gc -q 2>/dev/null
        git fetch -q {} theirs && git log --oneline | wc -l",
        other.path().display()
    );
    let o = run(&p, &tmp, p.path(), &script, out.path(), true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "4");
    let o = run(
        &p,
        &tmp,
        &p.path().join("src/deep"),
        &format!("set -e; echo e > e.txt && git add e.txt && {git} commit -qm five && git log --oneline | wc -l"),
        out.path(),
        true,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "5");
    let status = run(
        &p,
        &tmp,
        p.path(),
        "git status --porcelain",
        out.path(),
        false,
    );
    assert_eq!(
        stdout(&status),
        "",
        "stand-ins or leftovers show in git status"
    );
}

/// The gate gives the same answer for the model's file tools: the git directory a `.git` file
/// names is protected as a `.git` is (its objects are not).
#[test]
fn the_gate_protects_the_git_directory_a_git_file_names() {
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    assert!(run(&p, &tmp, p.path(), SEPARATE, out.path(), false)
        .status
        .success());
    gate_answers(
        &p,
        &tmp,
        &[
            (".git", true),
            ("store/main.git/config", true),
            ("store/main.git/hooks/pre-commit", true),
            ("store/main.git/info/exclude", true),
            ("store/main.git/objects/ab/cdef", false),
        ],
    );
}

/// A hookd killed outright leaves its stand-ins; the next confined command there removes them.
#[test]
fn a_killed_hookds_stand_ins_are_removed_by_the_next_command() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let env = p.path().join(".env");
    let mut a = hookd(&p, &tmp, &["exec", "--", "sleep", "0.6"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(env.symlink_metadata().is_ok(), "no stand-in while it runs");
    a.kill().unwrap();
    a.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert!(
        env.symlink_metadata().is_ok(),
        "the killed hookd's stand-in is gone already"
    );
    let o = run(&p, &tmp, p.path(), "printf X=1 > .env", out.path(), true);
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(
        env.symlink_metadata().is_err(),
        "the leftover stand-in stayed"
    );
    let status = run(
        &p,
        &tmp,
        p.path(),
        "git status --porcelain",
        out.path(),
        false,
    );
    assert_eq!(stdout(&status), "");
}

/// A rebase in progress, faked by a confined command, whose to-do list runs `exec`: the user's
/// (or an IDE's) `git rebase --continue` ran it outside the sandbox (attack round of
/// 2026-11-27). What a confined command leaves so is moved aside when it ends, and said; an
/// ordinary rebase stopped at a conflict is left to continue.
#[test]
fn a_rebase_to_do_list_a_confined_command_left_runs_nothing_later() {
    if !confinable() {
        return;
    }
    let attack = r#"H=$(git rev-parse HEAD); O=$(git rev-parse HEAD~1); mkdir -p .git/rebase-merge && cd .git/rebase-merge &&
echo refs/heads/master > head-name && echo $O > onto && echo $H > orig-head && : > interactive &&
echo 1 > msgnum && echo 1 > end && : > done && printf 'exec touch %s/door\n' "$OUT" > git-rebase-todo"#;
    let commits = format!("{COMMIT} && {COMMIT}");
    let cont = "git -c user.email=a@b -c user.name=n rebase --continue >/dev/null 2>&1; true";
    for confined in [false, true] {
        let (p, tmp) = project();
        let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let o = run(&p, &tmp, p.path(), &commits, out.path(), false);
        assert!(o.status.success(), "{}", stderr(&o));
        let a = run(&p, &tmp, p.path(), attack, out.path(), confined);
        assert!(a.status.success(), "{}", stderr(&a));
        run(&p, &tmp, p.path(), cont, out.path(), false);
        let marked = out.path().join("door").exists();
        assert_eq!(marked, !confined, "confined: {confined}: {}", stderr(&a));
        if confined {
            let moved = p.path().join(".git/rebase-merge.hookd-aside");
            assert!(moved.join("git-rebase-todo").is_file());
            assert_eq!(
                stderr(&a),
                format!("hookd: the command left git's {} with an `exec` line, which `git rebase --continue` (or `git cherry-pick --continue`) would run outside the sandbox: moved to {}; read it before you continue it yourself\n",
                    p.path().canonicalize().unwrap().join(".git/rebase-merge").display(),
                    p.path().canonicalize().unwrap().join(".git/rebase-merge.hookd-aside").display())
            );
        }
    }
    // A rebase the model ran confined and that stopped at a conflict stays to be continued.
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let setup = "g='git -c user.email=a@b -c user.name=n'; echo a > f && git add f && $g commit -qm a && git checkout -qb side && echo b > f && $g commit -qam b && git checkout -q - && echo c > f && $g commit -qam c";
    let o = run(&p, &tmp, p.path(), setup, out.path(), false);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = run(
        &p,
        &tmp,
        p.path(),
        "git -c user.email=a@b -c user.name=n rebase side; true",
        out.path(),
        true,
    );
    assert!(
        p.path().join(".git/rebase-merge").is_dir(),
        "{}",
        stderr(&a)
    );
    assert!(
        stderr(&a).ends_with(&format!(
            "\nhookd: the command left git's {} stopped: what `--continue` or `--abort` there applies is the command's (its commits, an `autostash`, `orig-head`); read them before you run either yourself\n",
            p.path().canonicalize().unwrap().join(".git/rebase-merge").display()
        )),
        "{}",
        stderr(&a)
    );
    // The agent's own rebase: its next confined command continues it (one the user had
    // stopped is read-only to it).
    let c = run(
        &p,
        &tmp,
        p.path(),
        "echo resolved > f && git add f && GIT_EDITOR=true git -c user.email=a@b -c user.name=n rebase --continue",
        out.path(),
        true,
    );
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(!p.path().join(".git/rebase-merge").exists());
}

/// A confined command changed a tracked script and marked it `--assume-unchanged` in git's
/// index: `git status` and `git diff` showed nothing to review, and the user's `make` ran the
/// change (attack round of 2026-11-27). What it changed and hid so is unmarked when it ends,
/// and said.
#[test]
fn a_change_hidden_from_git_status_is_shown_again() {
    if !confinable() {
        return;
    }
    let setup = "printf 'test:\\n\\t@echo tests\\n' > Makefile && printf 'a\\n' > kept && git add Makefile kept && git -c user.email=a@b -c user.name=n commit -qm init && git update-index --assume-unchanged kept";
    let attack = "printf 'test:\\n\\t@echo tests; touch \"$OUT/door\"\\n' > Makefile && git update-index --assume-unchanged Makefile";
    for confined in [false, true] {
        let (p, tmp) = project();
        let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let o = run(&p, &tmp, p.path(), setup, out.path(), false);
        assert!(o.status.success(), "{}", stderr(&o));
        let a = run(&p, &tmp, p.path(), attack, out.path(), confined);
        assert!(a.status.success(), "{}", stderr(&a));
        let status = run(&p, &tmp, p.path(), "git status --short", out.path(), false);
        if confined {
            assert_eq!(stdout(&status), " M Makefile\n");
            assert_eq!(
                stderr(&a),
                "hookd: the command changed Makefile and marked it in git's index so that `git status` and `git diff` would not show it: unmarked; review the change\n"
            );
            // The user's own mark, on a file the command did not change, stays.
            let v = run(
                &p,
                &tmp,
                p.path(),
                "git ls-files -v kept",
                out.path(),
                false,
            );
            assert_eq!(stdout(&v), "h kept\n");
        } else {
            assert_eq!(
                stdout(&status),
                "",
                "the attack hides the change unconfined"
            );
        }
    }
}

/// The git hookd runs after a command (to look at an index it changed) is never one the command
/// could have written: a `PATH` entry inside the project, where the command put a `git` of its
/// own and changed the index so that hookd would run it, unconfined.
#[test]
fn the_git_hookd_runs_afterwards_is_not_the_projects() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let o = run(
        &p,
        &tmp,
        p.path(),
        &format!("echo a > f && git add f && {COMMIT}"),
        out.path(),
        false,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let attack = format!(
        "mkdir -p bin && printf '#!/bin/sh\\ntouch \"%s/door\"\\nexec {} \"$@\"\\n' \"$OUT\" > bin/git && chmod +x bin/git && echo b > f && git add f",
        real.trim()
    );
    let path = format!(
        "{}:{}",
        p.path().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    // Unconfined, the planted git is the one a later `git` finds on that PATH.
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &attack])
        .env("OUT", out.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let later = Command::new("sh")
        .args(["-c", "git --version"])
        .env("PATH", &path)
        .env("OUT", out.path())
        .output()
        .unwrap();
    assert!(later.status.success());
    assert!(
        out.path().join("door").exists(),
        "the planted git runs where PATH finds it"
    );
    std::fs::remove_file(out.path().join("door")).unwrap();
    // hookd, after a confined command that changed the index, did not run it.
    let o = hookd(
        &p,
        &tmp,
        &["exec", "--", "sh", "-c", "echo c > f && git add f"],
    )
    .env("OUT", out.path())
    .env("PATH", &path)
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !out.path().join("door").exists(),
        "hookd ran the project's git"
    );
}

/// hookd's own git at a command's end (`git ls-files` where the command changed the index) was
/// left to find the repository: the command broke `.git/HEAD` (or moved `.git/refs` away),
/// so that `.git` was no git directory to git, and laid out the project's root as one whose
/// `config` names a `core.fsmonitor`; hookd's git, unconfined, ran it as the command ended
/// (attack round 11, F1e and F1g). It is now told where the repository is and runs no
/// fsmonitor; the root's `HEAD` is moved aside, and the broken `.git` is said.
#[test]
fn hookds_own_git_at_the_end_runs_nothing_the_command_planted() {
    if !confinable() {
        return;
    }
    let layout = r#"echo 'ref: refs/heads/main' > HEAD && mkdir -p objects refs/heads && cp .git/index index &&
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch %s/door #"\n' "$OUT" > config"#;
    let breaks = [
        "cp .git/HEAD saved-HEAD && printf 'not a ref\\n' > .git/HEAD",
        "mv .git/refs .git/refs.away",
    ];
    for broken in breaks {
        for confined in [false, true] {
            let (p, tmp) = project();
            let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
            let o = run(
                &p,
                &tmp,
                p.path(),
                &format!("echo a > f && git add f && {COMMIT}"),
                out.path(),
                false,
            );
            assert!(o.status.success(), "{}", stderr(&o));
            let attack = format!("echo b >> f && git add f && {broken} && {layout}");
            let a = run(&p, &tmp, p.path(), &attack, out.path(), confined);
            assert!(a.status.success(), "{broken}: {}", stderr(&a));
            if !confined {
                // What hookd's end ran, by hand: the attack works.
                run(
                    &p,
                    &tmp,
                    p.path(),
                    "git ls-files -v -s -z >/dev/null",
                    out.path(),
                    false,
                );
                assert!(
                    out.path().join("door").exists(),
                    "{broken}: the attack did not work unconfined"
                );
                continue;
            }
            assert!(
                !out.path().join("door").exists(),
                "{broken}: hookd's own git ran the planted fsmonitor: {}",
                stderr(&a)
            );
            let root = p.path().canonicalize().unwrap();
            assert!(!root.join("HEAD").exists(), "{broken}: {}", stderr(&a));
            assert!(
                root.join("HEAD.hookd-aside").exists(),
                "{broken}: {}",
                stderr(&a)
            );
            assert!(
                stderr(&a).contains(&format!(
                    "hookd: the command changed git's index in {}, and git could not read it there",
                    root.display()
                )),
                "{broken}: {}",
                stderr(&a)
            );
            assert!(
                stderr(&a).contains(&format!(
                    "hookd: the command left {} no git directory to git",
                    root.join(".git").display()
                )),
                "{broken}: {}",
                stderr(&a)
            );
            // Nor does the user's next `git status` at the root.
            run(&p, &tmp, p.path(), TRIGGER, out.path(), false);
            assert!(
                !out.path().join("door").exists(),
                "{broken}: {}",
                stderr(&a)
            );
        }
    }
}

/// A FIFO where git reads a nested repository's configuration (`sub/.git/config`, a file it
/// includes, its `commondir`) hung every later `hookd exec`, hook and adapter call in the
/// project: hookd's preparation opened it to read `core.hooksPath` and waited for a writer
/// (attack round 11, F2). A file git reads is read only where it is a regular file, without
/// waiting.
#[test]
fn a_fifo_where_git_reads_its_configuration_hangs_nothing() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let setup = "git init -q sub && rm sub/.git/config && mkfifo sub/.git/config && \
                 mkdir -p web && git init -q web && printf '[include]\\n\\tpath = ../inc\\n' >> web/.git/config && mkfifo web/inc";
    let o = run(&p, &tmp, p.path(), setup, out.path(), false);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut c = hookd(&p, &tmp, &["exec", "--", "true"]);
    let mut child = c.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("hookd exec hung on a FIFO where git reads its configuration");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The model's file tools are refused what a hook manager's installed hooks run, as confined
/// commands are (attack round 11, F5).
#[test]
fn the_gate_protects_what_a_hook_managers_hooks_run() {
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let setup = "mkdir -p .husky/_ && git config core.hooksPath .husky/_ && \
                 printf '#!/bin/sh\\n# File generated by pre-commit: https://pre-commit.com\\n' > .git/hooks/pre-commit";
    assert!(run(&p, &tmp, p.path(), setup, out.path(), false)
        .status
        .success());
    gate_answers(
        &p,
        &tmp,
        &[
            (".husky/pre-commit", true),
            (".husky/_/h", true),
            (".pre-commit-config.yaml", true),
            ("lefthook.yml", false),
            ("src/main.rs", false),
        ],
    );
}

/// The model's file tools laid out a repository where git finds none (`HEAD`, `objects/`,
/// `refs/`, a `config` naming `core.fsmonitor`), outside the sandbox, and the next `git status`
/// there ran it (attack round 11, F1h). A file tool's `HEAD` outside `.git` is refused.
#[test]
fn the_gate_refuses_a_file_tools_head_outside_git() {
    let (p, tmp) = project();
    gate_answers(
        &p,
        &tmp,
        &[
            ("HEAD", true),
            ("web/HEAD", true),
            ("docs/HEAD.md", false),
            ("objects/.keep", false),
            ("src/head.rs", false),
        ],
    );
    // Without `gate_shell_tools`, the sandbox's write policy holds the file tools the same way,
    // and says why.
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let adapter = hookd(&p, &tmp, &["adapter", "claude-code", "--no-daemon"]);
    let input = serde_json::json!({"file_path": "web/HEAD", "content": "x"});
    let reply = crate::support::claude_pre_tool(adapter, p.path(), "Write", input);
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecisionReason"],
        "hookd refused this Write call: `web/HEAD` is a `HEAD` outside `.git`, which with `objects/` and `refs/` beside it makes its directory a repository to git, whose configuration runs at the next `git status` there"
    );
}

/// The end's index check was made to hang (a marked sparse file of 8 GiB, hashed for minutes,
/// while the agent's timeout killed hookd before the rebase check ran) or to pass a change over
/// silently (a marked file replaced by a dangling link): attack round 12, F6 and F7b. A file too
/// large to hash, or of another type than the index's, counts as changed, and the rebase check
/// runs first.
#[test]
fn the_ends_index_check_cannot_be_made_to_hang_or_to_pass_a_change_over() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let setup = format!("echo a > big && echo b > build.sh && git add big build.sh && {COMMIT}");
    let o = run(&p, &tmp, p.path(), &setup, out.path(), false);
    assert!(o.status.success(), "{}", stderr(&o));
    let attack = "git update-index --assume-unchanged big build.sh && truncate -s 8G big && \
                  rm build.sh && ln -s node_modules/.b build.sh";
    let started = std::time::Instant::now();
    let a = run(&p, &tmp, p.path(), attack, out.path(), true);
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the end took {:?}",
        started.elapsed()
    );
    assert_eq!(
        stderr(&a),
        "hookd: the command changed big, build.sh and marked them in git's index so that `git status` and `git diff` would not show them: unmarked; review the change\n"
    );
    let status = run(&p, &tmp, p.path(), "git status --short", out.path(), false);
    assert_eq!(stdout(&status), " M big\n T build.sh\n");
}

/// A rebase the user had stopped at a conflict, into which a confined command put what a
/// `--continue` would not (another `orig-head`, which `--abort` resets to; an `autostash` of
/// its own, applied by both), had the user's `--abort` or `--continue` apply the command's
/// commit outside the sandbox (attack rounds 12 and 13). A stopped state the user had is
/// read-only to confined commands: the user continues it; one the command starts is its own.
#[test]
fn a_rebase_the_user_had_stopped_is_read_only_to_a_confined_command() {
    if !confinable() {
        return;
    }
    let setup = "g='git -c user.email=a@b -c user.name=n'; echo a > f && git add f && $g commit -qm a && \
                 git checkout -qb side && echo b > f && $g commit -qam b && echo b2 > g && git add g && $g commit -qm b2 && \
                 git checkout -q - && echo c > f && $g commit -qam c && git checkout -q side && ($g rebase -q master >/dev/null 2>&1; true)";
    let forge = "g='git -c user.email=a@b -c user.name=n'; t=$(git rev-parse HEAD^{tree}) && c=$(echo forged | $g commit-tree $t -p HEAD) && \
                 (echo $c > .git/rebase-merge/orig-head; echo $c > .git/rebase-merge/autostash; true)";
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let o = run(&p, &tmp, p.path(), setup, out.path(), false);
    assert!(o.status.success(), "{}", stderr(&o));
    let state = p.path().join(".git/rebase-merge");
    let orig = std::fs::read(state.join("orig-head")).unwrap();
    let a = run(&p, &tmp, p.path(), forge, out.path(), true);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(std::fs::read(state.join("orig-head")).unwrap(), orig);
    assert!(!state.join("autostash").exists());
    // The user continues it, unconfined, once they have resolved the conflict.
    let cont = "echo resolved > f && git add f && GIT_EDITOR=true git -c user.email=a@b -c user.name=n rebase --continue >/dev/null 2>&1";
    let c = run(&p, &tmp, p.path(), cont, out.path(), false);
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(!state.exists());
}

/// A replace ref (`.git/refs/replace/`) swaps what git reads for an object while its id stays:
/// a tracked `Makefile`'s blob replaced, `git status` stayed clean and the user's next `git
/// stash` or `checkout` wrote the command's version (attack round 13). `refs/replace` is held
/// read-only (absent: its stand-in).
#[test]
fn replace_refs_cannot_be_made() {
    if !confinable() {
        return;
    }
    let setup =
        format!("printf 'test:\\n\\t@echo ok\\n' > Makefile && git add Makefile && {COMMIT}");
    let attack = "b=$(git rev-parse HEAD:Makefile) && e=$(printf 'test:\\n\\t@touch \"$OUT/door\"\\n' | git hash-object -w --stdin) && git replace $b $e";
    for confined in [false, true] {
        let (p, tmp) = project();
        let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let o = run(&p, &tmp, p.path(), &setup, out.path(), false);
        assert!(o.status.success(), "{}", stderr(&o));
        let a = run(&p, &tmp, p.path(), attack, out.path(), confined);
        let shown = run(
            &p,
            &tmp,
            p.path(),
            "git show HEAD:Makefile",
            out.path(),
            false,
        );
        assert_eq!(
            stdout(&shown).contains("door"),
            !confined,
            "confined: {confined}: {}",
            stderr(&a)
        );
    }
}

/// The gate's answer (refused or not) to a file tool's write of each path, from the project's
/// root.
fn gate_answers(p: &Project, tmp: &Path, cases: &[(&str, bool)]) {
    for (path, refused) in cases {
        assert_eq!(
            crate::places::gate_refuses(p, tmp, p.path(), path),
            *refused,
            "{path}"
        );
    }
}

/// Attack round 13's F8d: the user had stashed their work; a confined command pushed an entry
/// of its own on top (its message copied from theirs, so that `git stash list` shows two alike),
/// and the user's next `git stash pop` applied the command's content outside the sandbox.
/// `git stash` works confined (issue 40 asks for it), so the end says so, naming the entries
/// that are the command's; a stash the command pushed and popped again is not said.
#[test]
fn a_stash_entry_a_confined_command_pushed_is_said() {
    if !confinable() {
        return;
    }
    let setup = format!(
        "echo 'test: ok' > Makefile && git add Makefile && {COMMIT} && echo 'test: mine' > Makefile && git stash -q"
    );
    let push = "echo 'test: touch \"$OUT/door\"' > Makefile && \
                git -c user.email=a@b -c user.name=n stash push -q -m \"$(git log -g --format=%gs -1 refs/stash)\"";
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let o = run(&p, &tmp, p.path(), &setup, out.path(), false);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = run(&p, &tmp, p.path(), push, out.path(), true);
    assert!(a.status.success(), "{}", stderr(&a));
    let git_dir = p.path().canonicalize().unwrap().join(".git");
    assert_eq!(
        stderr(&a),
        format!(
            "hookd: the confined command pushed an entry onto the stash in {} (stash@{{0}}): `git stash pop` applies the newest entry outside the sandbox, so look at each (`git stash show -p stash@{{0}}`) and drop what is not yours\n",
            git_dir.display()
        )
    );
    // What it warns of: the user's pop applies the command's content.
    let pop = run(
        &p,
        &tmp,
        p.path(),
        "git stash pop -q && cat Makefile",
        out.path(),
        false,
    );
    assert!(stdout(&pop).contains("door"), "{}", stderr(&pop));
    // A stash pushed and popped in the same command is its own work: nothing said.
    let own = "echo 'test: again' > Makefile && git -c user.email=a@b -c user.name=n stash -q && git stash pop -q";
    let b = run(&p, &tmp, p.path(), own, out.path(), true);
    assert!(b.status.success(), "{}", stderr(&b));
    assert!(!stderr(&b).contains("stash"), "{}", stderr(&b));
}
