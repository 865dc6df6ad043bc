//! Issue 40, attack rounds 17 to 19: a link in a directory the walk reads exposes where it
//! leads as if it stood there (`git status` in `pkgs/sub` through `pkgs -> node_modules/p` reads
//! `node_modules/p/sub/.git`). The walk enters such a link as the directory it leads to, at the
//! start and at the end, so a place made there, or brought into reach by pointing a link (or a
//! link on its way) elsewhere, is moved aside at the command's end, and said with the link it
//! is reached through. Each attack is performed for real: unconfined first, where the user's next
//! `git status` in the linked directory runs the command's `core.fsmonitor`; then confined.

use crate::gitdoors::{run, FSMONITOR, TRIGGER};
use crate::places_below::once_old_enough;
use crate::sandbox::{confinable, project};
use crate::support::stderr;

/// `steps` run one after the other from the project's root (each once the last one's
/// directories are old enough for the walk to remember them), then the user's unconfined
/// `git status` and `git commit` in `trigger`: whether that ran the planted `core.fsmonitor`.
/// Confined, each step's standard error is returned too.
fn after(steps: &[&str], trigger: &str, confined: bool) -> (bool, Vec<String>) {
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let mut said = Vec::new();
    for step in steps {
        let exec = once_old_enough(&p, &tmp);
        let o = if confined {
            exec(&step.replace("$OUT", &out.path().display().to_string()))
        } else {
            run(&p, &tmp, p.path(), step, out.path(), false)
        };
        assert!(o.status.success(), "{step}: {}", stderr(&o));
        said.push(stderr(&o));
    }
    let dir = p.path().join(trigger);
    if dir.is_dir() {
        run(&p, &tmp, &dir, TRIGGER, out.path(), false);
    }
    (out.path().join("door").exists(), said)
}

/// The attack works unconfined, and confined the last step's end moves the repository aside,
/// naming it and the link it is reached through (`link`, relative to the project's root); the
/// steps before say nothing.
fn held(name: &str, steps: &[&str], trigger: &str, link: &str) {
    let (ran, _) = after(steps, trigger, false);
    assert!(ran, "{name}: the attack does not work unconfined");
    let (ran, said) = after(steps, trigger, true);
    assert!(!ran, "{name}: the attack worked confined: {said:?}");
    let (last, before) = said.split_last().unwrap();
    assert!(before.iter().all(String::is_empty), "{name}: {before:?}");
    assert!(
        last.contains("hookd: the confined command made ")
            && last.contains("/.git (a repository below the project, whose configuration git would run at your next `git status` there; reached through the link ")
            && last.contains(&format!("/{link}): moved to ")),
        "{name}: {last}"
    );
}

/// A repository with a planted `core.fsmonitor`, made at `dir`.
fn repository(dir: &str) -> String {
    format!("git init -q {dir} && {FSMONITOR} >> {dir}/.git/config")
}

/// Attack round 19, F3: the `.git` one level below where the link leads (`pkgs ->
/// node_modules/p`, `p/sub/.git`) was kept even when one command made it all (4 of 4): only the
/// directory the link led to was looked in. Also over two commands, `p/sub` made by the first.
#[test]
fn a_repository_below_where_a_link_leads_is_moved_aside() {
    if !confinable() {
        return;
    }
    let one = format!(
        "{} && ln -s node_modules/p pkgs",
        repository("node_modules/p/sub")
    );
    held("one command", &[&one], "pkgs/sub", "pkgs");
    held(
        "two commands",
        &[
            "mkdir -p node_modules/p/sub && ln -s node_modules/p pkgs",
            &repository("node_modules/p/sub"),
        ],
        "pkgs/sub",
        "pkgs",
    );
}

/// Attack round 19, F1: a chain `pkgs/sub -> ../node_modules/a -> p`, `p` empty, and a
/// repository made in `node_modules/q` by a first command (its end: nothing where the chain
/// led); a second only re-pointed `node_modules/a` at `q`: neither the link in the tree nor
/// where it ended had changed since, and the user's `git status` in `pkgs/sub` ran the
/// command's code (4 of 4; also with `a` absent at the first's end, 4 of 4).
#[test]
fn a_chain_of_links_pointed_elsewhere_by_a_later_command_is_followed() {
    if !confinable() {
        return;
    }
    let made = format!(
        "{} && mkdir -p node_modules/p pkgs && ln -s ../node_modules/a pkgs/sub",
        repository("node_modules/q")
    );
    let first = format!("{made} && ln -s p node_modules/a");
    held(
        "re-pointed",
        &[&first, "ln -sfn q node_modules/a"],
        "pkgs/sub",
        "pkgs/sub",
    );
    held(
        "dangling",
        &[&made, "ln -s q node_modules/a"],
        "pkgs/sub",
        "pkgs/sub",
    );
}

/// Attack round 18, F2: one command made `pkgs/sub -> ../node_modules/p` while `p` held nothing,
/// the next made a repository in `p` (3 of 3 kept). Attack round 17, F6: a link made where the
/// walk does not look (`node_modules/q/sub`), brought into the tree by renaming `node_modules/q`
/// (4 of 4 kept).
#[test]
fn a_link_filled_or_brought_into_the_tree_by_a_later_command_is_followed() {
    if !confinable() {
        return;
    }
    held(
        "filled",
        &[
            "mkdir -p node_modules/p pkgs && ln -s ../node_modules/p pkgs/sub",
            &repository("node_modules/p"),
        ],
        "pkgs/sub",
        "pkgs/sub",
    );
    let first = format!(
        "{} && mkdir -p node_modules/q && ln -s ../node_modules/p node_modules/q/sub",
        repository("node_modules/p")
    );
    held(
        "renamed in",
        &[&first, "mv node_modules/q pkgs"],
        "pkgs/sub",
        "pkgs/sub",
    );
}

/// Attack round 19, F2: `.github -> node_modules/a -> gh0` (empty), Copilot's hooks made in
/// `gh1` by a first command; a second re-pointed only `node_modules/a` at `gh1`: the hooks were
/// kept where Copilot reads them (4 of 4). What is reached through `.github` is compared with
/// what was there at the start, so the link is moved aside.
#[test]
fn a_chain_of_links_a_name_of_several_components_is_reached_through_is_followed() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let first = "mkdir -p node_modules/gh0 node_modules/gh1/hooks && \
                 echo '{}' > node_modules/gh1/hooks/x.json && \
                 ln -s gh0 node_modules/a && ln -s node_modules/a .github";
    let exec = once_old_enough(&p, &tmp);
    let o = exec(first);
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );
    let exec = once_old_enough(&p, &tmp);
    let o = exec("ln -sfn gh1 node_modules/a");
    assert!(o.status.success(), "{}", stderr(&o));
    let root = p.path().canonicalize().unwrap();
    assert!(
        stderr(&o).contains(&format!(
            "hookd: the confined command made {} (a place agents, editors or git read on their own, which confined commands may not write): moved to {}.hookd-aside",
            root.join(".github").display(),
            root.join(".github").display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(!root.join(".github/hooks/x.json").exists());
}

/// The links a command makes to where the walk does not go by itself (`node_modules`, a
/// fourth level): what they bring into reach is judged there. A link to a directory the walk
/// reads anyway, to one holding nothing, or one that was there before the command (with the
/// repository it leads to, held while the command ran), stays as it is.
#[test]
fn what_a_link_brings_into_reach_is_judged_and_the_rest_left() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    for dir in ["node_modules/pkg", "deep/1/2/3", "web/.claude"] {
        std::fs::create_dir_all(p.path().join(dir)).unwrap();
    }
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "node_modules/old"])
        .current_dir(p.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::os::unix::fs::symlink("node_modules/old", p.path().join("before")).unwrap();
    let script = "git init -q node_modules/pkg && ln -s node_modules/pkg sub && \
                  mkdir deep/1/2/3/.vscode && ln -s deep/1/2 web2 && \
                  ln -s web near && ln -s deep far && \
                  echo x >> before/.git/config; true";
    let exec = once_old_enough(&p, &tmp);
    let o = exec(script);
    assert!(o.status.success(), "{}", stderr(&o));
    let root = p.path().canonicalize().unwrap();
    let err = stderr(&o);
    for (place, link) in [
        ("node_modules/pkg/.git", "sub"),
        ("deep/1/2/3/.vscode", "web2"),
    ] {
        assert!(
            err.contains(&format!(
                "hookd: the confined command made {} (",
                root.join(place).display()
            )) && err.contains(&format!(
                "; reached through the link {}): moved to {}.hookd-aside",
                root.join(link).display(),
                root.join(place).display()
            )),
            "{place}: {err}"
        );
        assert!(root.join(place).symlink_metadata().is_err(), "{place} left");
    }
    for link in ["sub", "web2", "near", "far", "before"] {
        assert!(root.join(link).is_symlink(), "{link} moved: {err}");
    }
    // The repository that was there, reached through `before`: held read-only, left.
    assert!(root.join("node_modules/old/.git").is_dir(), "{err}");
    let config = std::fs::read_to_string(root.join("node_modules/old/.git/config")).unwrap();
    assert!(!config.ends_with("x\n"), "written through the link: {err}");
    assert_eq!(
        err.matches("hookd: the confined command made").count(),
        2,
        "{err}"
    );
}

/// Attack round 20, F1: a link whose way passes `/proc/self/cwd` leads each process to where
/// it stands (`a/x -> /proc/self/cwd/../node_modules/q`): dangling to hookd's end, started in
/// the project's root, and `node_modules/q` (a repository with a planted `core.fsmonitor`) to
/// the user's shell in `a/` (4 of 4: `cd x && git status` ran it). Such a link the command made
/// is moved aside, said; one that was there before stays.
#[test]
fn a_link_through_proc_that_leads_each_reader_elsewhere_is_moved_aside() {
    if !confinable() {
        return;
    }
    let script = format!(
        "mkdir -p a && {} && ln -s /proc/self/cwd/../node_modules/q a/x",
        repository("node_modules/q")
    );
    let trigger = format!("cd x && {TRIGGER}");
    for confined in [false, true] {
        let (p, tmp) = project();
        let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let o = if confined {
            let exec = once_old_enough(&p, &tmp);
            exec(&script.replace("$OUT", &out.path().display().to_string()))
        } else {
            run(&p, &tmp, p.path(), &script, out.path(), false)
        };
        assert!(o.status.success(), "{}", stderr(&o));
        run(&p, &tmp, &p.path().join("a"), &trigger, out.path(), false);
        let ran = out.path().join("door").exists();
        let root = p.path().canonicalize().unwrap();
        if !confined {
            assert!(ran, "the attack does not work unconfined");
            continue;
        }
        assert!(!ran, "the attack worked confined: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "hookd: the confined command made {} (a link hookd cannot follow as your shell, an agent or git would: its way passes a link of /proc, which leads each process somewhere else",
                root.join("a/x").display()
            )),
            "{}",
            stderr(&o)
        );
        assert!(root.join("a/x.hookd-aside").is_symlink());
        // Made again by the user, it is theirs: the next command's end leaves it, and says
        // it (attack round 21, F1: in a tree too large for the end's second walk, one the
        // command made is found only by the next command, which can only say so).
        std::fs::rename(root.join("a/x.hookd-aside"), root.join("a/x")).unwrap();
        let exec = once_old_enough(&p, &tmp);
        let o = exec("true");
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "hookd: {} is a link hookd cannot follow as your shell, an agent or git would (its way passes a link of /proc, which leads each process somewhere else, or is longer than a path may be): look at it, and remove it unless you made it, before you run git or an agent below it\n",
                p.path().join("a/x").display()
            )
        );
        assert!(root.join("a/x").is_symlink());
    }
}

/// A link into the project's own git directory (`x -> .git`, `h -> .git/hooks`) is not entered:
/// that repository's places are held by the `.git/…` rows already, and entered as a directory
/// of its own, `.git` was held as a bare repository, its `HEAD` read-only: `git checkout -b`
/// failed confined. A link to a repository's git directory where the walk does not go by
/// itself (`sub -> node_modules/q/.git`) is still entered (attack round 20 held it).
#[test]
fn a_link_to_the_projects_own_git_directory_leaves_git_working() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let o = run(
        &p,
        &tmp,
        p.path(),
        "git -c user.email=a@b -c user.name=n commit -q --allow-empty -m one && ln -s .git x && ln -s .git/hooks h",
        p.path(),
        false,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let exec = once_old_enough(&p, &tmp);
    let o = exec("git checkout -q -b topic && git -c user.email=a@b -c user.name=n commit -q --allow-empty -m two && git log --format=%s | head -1");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(crate::support::stdout(&o), "two\n", "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    // Its hooks stay held through the link as by their own path.
    let o = exec("echo 'touch pwned' > h/pre-commit");
    assert!(!o.status.success(), "{}", stderr(&o));
}

/// What the rule above leaves out is only the git directory itself: a repository laid out by
/// the command inside it (`.git/evil`, a bare one with a planted `core.fsmonitor`) and a link
/// to it (`x -> .git/evil`: git in `x/` takes it for its repository) is judged as any other,
/// its `HEAD` moved aside.
#[test]
fn a_repository_laid_out_inside_a_git_directory_and_linked_is_moved_aside() {
    if !confinable() {
        return;
    }
    // As `git init --bare` lays it out, its `[core]` a work tree's.
    let config = r#"printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch %s/door #"\n' "$OUT" > .git/evil/config"#;
    let script = format!(
        "mkdir -p .git/evil/objects .git/evil/refs/heads && echo 'ref: refs/heads/main' > .git/evil/HEAD && {config} && ln -s .git/evil x"
    );
    let (ran, _) = after(&[&script], "x", false);
    assert!(ran, "the attack does not work unconfined");
    let (ran, said) = after(&[&script], "x", true);
    assert!(!ran, "the attack worked confined: {said:?}");
    assert!(
        said[0].contains("/.git/evil/HEAD (") && said[0].contains("; reached through the link "),
        "{said:?}"
    );
}
