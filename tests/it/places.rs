//! Issue 39 item 1: one catalog of places. For a list of places, the gate (the model's `Write`
//! through the Claude Code adapter) and the sandbox (a confined command writing the file for
//! real) give the same answer; the table of both answers is printed.

use std::path::Path;

use crate::sandbox::{confinable, hookd, project, project_with_the_home_writable};
use crate::support::{claude_pre_tool, stderr, Project};

/// Whether the gate refuses the model's `Write` of `path` (from `cwd`).
pub(crate) fn gate_refuses(p: &Project, tmp: &Path, cwd: &Path, path: &str) -> bool {
    let adapter = hookd(
        p,
        tmp,
        &[
            "adapter",
            "claude-code",
            "--no-daemon",
            "--gate-shell-tools",
        ],
    );
    let input = serde_json::json!({"file_path": path, "content": "x"});
    let reply = claude_pre_tool(adapter, cwd, "Write", input);
    if std::env::var_os("PLACES_DEBUG").is_some() {
        eprintln!("{path}: {reply}");
    }
    reply["hookSpecificOutput"]["permissionDecision"] == "deny"
}

/// What each place holds before the attack: valid JSON, since the agents' settings among them
/// are read as JSON (one that is not makes hookd refuse to run at all).
const ORIGINAL: &str = "{}\n";

/// Whether the sandbox keeps a confined command (run from `cwd`) from changing the existing
/// file `path`: performed for real, and read back.
fn sandbox_refuses(p: &Project, tmp: &Path, cwd: &Path, path: &str) -> bool {
    let file = cwd.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, ORIGINAL).unwrap();
    let mut c = hookd(
        p,
        tmp,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            "printf pwned > \"$1\"",
            "sh",
            path,
        ],
    );
    c.current_dir(cwd);
    let o = c.output().unwrap();
    assert_ne!(o.status.code(), Some(126), "{path}: {}", stderr(&o));
    let after = std::fs::read_to_string(&file).unwrap_or_default();
    if std::env::var_os("PLACES_DEBUG").is_some() {
        eprintln!("{path}: {:?} {after:?} {}", o.status, stderr(&o));
    }
    after == ORIGINAL
}

/// Whether the sandbox keeps a confined command (run from `cwd`) from making `path`, absent
/// (and every directory of it below `cwd`) at the start: performed for real.
fn sandbox_refuses_absent(p: &Project, tmp: &Path, cwd: &Path, path: &str) -> bool {
    let file = cwd.join(path);
    assert!(!file.exists(), "{path} exists");
    let script = "mkdir -p \"$(dirname \"$1\")\" && printf pwned > \"$1\"";
    let mut c = hookd(p, tmp, &["exec", "--", "sh", "-c", script, "sh", path]);
    c.current_dir(cwd);
    let o = c.output().unwrap();
    assert_ne!(o.status.code(), Some(126), "{path}: {}", stderr(&o));
    let made = file.exists();
    if std::env::var_os("PLACES_DEBUG").is_some() {
        eprintln!("{path}: {:?} made: {made} {}", o.status, stderr(&o));
    }
    !made
}

#[test]
fn the_gate_and_the_sandbox_give_the_same_answer_for_each_place() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project_with_the_home_writable();
    std::fs::create_dir_all(p.path().join("web")).unwrap();
    let web = p.path().join("web");
    // What the repository's git configuration names: husky's hooks directory, an include.
    std::fs::create_dir_all(p.path().join(".husky/_")).unwrap();
    std::fs::write(p.path().join("shared.gitconfig"), "[user]\n").unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(p.path())
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    git(&["config", "core.hooksPath", ".husky/_"]);
    git(&["config", "include.path", "../shared.gitconfig"]);
    let mut rows = Vec::new();
    let cases: &[(&Path, &str, bool)] = &[
        // First: `.git/config`'s own case below replaces it.
        (p.path(), ".husky/_/pre-commit", true),
        (p.path(), "shared.gitconfig", true),
        // husky's directory whole: its `_` stubs run `.husky/<hook>` (attack round 11, F5).
        (p.path(), ".husky/pre-commit", true),
        (p.path(), ".husky/install.mjs", true),
        (p.path(), "husky.config.js", false),
        (p.path(), ".infer/notes.txt", true),
        (p.path(), ".claude/settings.json", true),
        (p.path(), ".claude/skills/pwn/SKILL.md", true),
        (p.path(), ".gemini/settings.json", true),
        (p.path(), "crush.json", true),
        (p.path(), ".mcp.json", true),
        (p.path(), ".env", true),
        (p.path(), ".envrc", true),
        (p.path(), "mise.toml", true),
        (p.path(), ".mise.toml", true),
        (p.path(), ".cursor/mcp.json", true),
        (p.path(), ".cursor/hooks.json", true),
        (p.path(), ".zed/settings.json", true),
        (p.path(), ".devcontainer/devcontainer.json", true),
        (p.path(), ".vscode/tasks.json", true),
        (p.path(), ".idea/workspace.xml", true),
        (p.path(), ".gitmodules", true),
        (p.path(), ".codex/config.toml", true),
        // The other agents' and editors' project settings (attack round 11, F6).
        (p.path(), ".qwen/settings.json", true),
        (p.path(), "opencode.json", true),
        (p.path(), "opencode.jsonc", true),
        (p.path(), ".opencode/plugin/p.js", true),
        (p.path(), ".roo/mcp.json", true),
        (p.path(), ".kilocode/mcp.json", true),
        (p.path(), ".kiro/hooks/h.kiro.hook", true),
        (p.path(), ".amazonq/mcp.json", true),
        (p.path(), ".continue/mcpServers/s.yaml", true),
        (p.path(), ".windsurf/hooks.json", true),
        (p.path(), ".clinerules/hooks/PreToolUse", true),
        (p.path(), ".github/hooks/h.json", true),
        (p.path(), ".github/workflows/ci.yml", false),
        (p.path(), ".aider.conf.yml", true),
        (p.path(), ".helix/languages.toml", true),
        (&web, ".kiro/hooks/h.kiro.hook", true),
        (p.path(), ".bashrc", true),
        (p.path(), ".gitconfig", true),
        (p.path(), ".ripgreprc", true),
        (p.path(), ".aws/config", true),
        (p.path(), ".git/config", true),
        (p.path(), ".git/hooks/pre-commit", true),
        (p.path(), ".git/info/attributes", true),
        (p.path(), ".git/commondir", true),
        (p.path(), ".git/modules/m/config", true),
        (&web, ".claude/settings.json", true),
        (&web, ".env", true),
        (p.path(), "src/main.rs", false),
        (p.path(), ".env.example", false),
        (p.path(), ".git/description", false),
        (&web, "package.json", false),
    ];
    // Absent at the start: the sandbox must not let them be made either.
    let absent: &[(&Path, &str, bool)] = &[
        (p.path(), ".envrc", true),
        (p.path(), ".mcp.json", true),
        (p.path(), ".vscode/tasks.json", true),
        (p.path(), ".git/worktrees/w/commondir", true),
        (p.path(), ".git/commondir", true),
        (&web, ".gemini/settings.json", true),
        (&web, ".git/config", true),
        (p.path(), "notes/new.txt", false),
        (p.path(), ".roo/mcp.json", true),
        (p.path(), ".windsurf/hooks.json", true),
        (p.path(), "opencode.json", true),
        (p.path(), ".qwen/settings.json", true),
        (&web, ".aider.conf.yml", true),
        (&web, ".continue/mcpServers/s.yaml", true),
        // No `.github` at the root yet: a workflow can be added (no stand-in stands in its
        // way); a hook does not stay, there or in `web/.github` (moved aside at the end).
        (p.path(), ".github/workflows/new.yml", false),
        (&web, ".github/hooks/h.json", true),
        (p.path(), ".github/hooks/h.json", true),
        (p.path(), ".github/copilot/settings.local.json", true),
        // Attack round 16 (F3): in a directory holding no other name, off the way.
        (p.path(), "pkg/.github/hooks/h.json", true),
        (p.path(), "pkg2/.github/copilot/settings.json", true),
        (p.path(), ".aider.model.settings.yml", true),
    ];
    std::fs::create_dir_all(web.join(".github")).unwrap();
    for (cwd, path, protected) in absent {
        let gate = gate_refuses(&p, &tmp, cwd, path);
        let sandbox = sandbox_refuses_absent(&p, &tmp, cwd, path);
        let rel = cwd.strip_prefix(p.path()).unwrap().join(path);
        rows.push((
            format!("{} (absent)", rel.display()),
            *protected,
            gate,
            sandbox,
        ));
    }
    let home_cases = [
        (".bashrc", true),
        (".gitconfig", true),
        (".infer/notes.txt", true),
        (".claude/settings.json", true),
        (".config/hookd/trust.json", true),
        (".claude/.credentials.json", true),
        (".ssh/id_ed25519", true),
        (".aws/config", true),
        // The attack round of 2026-11-27, with the agent started in the home.
        (".inputrc", true),
        (".local/bin/git", true),
        // Attack round 11 (F8): the home's other PATH directories, hookd's own among them.
        (".cargo/bin/hookd", true),
        ("bin/git", true),
        ("go/bin/git", true),
        (".config/systemd/user/evil.service", true),
        (".config/autostart/evil.desktop", true),
        (".vimrc", true),
        (".curlrc", true),
        // Attack round 16 (F4): the other agents' user level.
        (".copilot/hooks/x.json", true),
        (".copilot/settings.json", true),
        (".config/opencode/plugin/x.js", true),
        (".config/helix/languages.toml", true),
        (".config/Code/User/settings.json", true),
        (
            ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
            true,
        ),
        // Attack round 17 (F3).
        (".config/Cursor/User/settings.json", true),
        (".config/Windsurf/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", true),
        (".vscode-server/data/Machine/settings.json", true),
        (".cline/data/settings/cline_mcp_settings.json", true),
        (".config/nvim/init.lua", true),
        (".config/zed/settings.json", true),
        // Attack round 18 (F3).
        (".vscode-server/bin/abc/server.sh", true),
        (".vscode/extensions/x/package.json", true),
        (".local/share/nvim/site/plugin/x.lua", true),
        (".local/share/zed/extensions/x/extension.toml", true),
        (".var/app/com.visualstudio.code/config/Code/User/settings.json", true),
        // Attack round 19 (F5): the other builds, their servers and extensions, code-server,
        // Vim's, Emacs' and JetBrains' places.
        (".var/app/com.vscodium.codium/config/VSCodium/User/settings.json", true),
        (".var/app/com.visualstudio.code/data/vscode/extensions/x/package.json", true),
        (".local/share/code-server/extensions/x/package.json", true),
        (".local/share/code-server/User/settings.json", true),
        (".config/code-server/config.yaml", true),
        (".vscode-server-oss/extensions/x/package.json", true),
        (".trae-server/extensions/x/package.json", true),
        (".config/Trae/User/settings.json", true),
        (".positron/extensions/x/package.json", true),
        (".vim/plugin/x.vim", true),
        (".emacs.d/init.el", true),
        (".config/emacs/init.el", true),
        (".local/share/JetBrains/IntelliJIdea2024.1/x/lib/x.jar", true),
        (".config/JetBrains/IntelliJIdea2024.1/options/x.xml", true),
        // Attack round 21 (F2).
        (".local/lib/python3.11/site-packages/x.pth", true),
        (".local/lib/python3.11/site-packages/usercustomize.py", true),
        (".exrc", true),
        (".gvimrc", true),
        (".ideavimrc", true),
        (".Rprofile", true),
        (".spacemacs", true),
        (".doom.d/init.el", true),
        (".config/doom/config.el", true),
        (".gdbinit", true),
        (".psqlrc", true),
        // Attack round 22 (F2).
        (".bash_aliases", true),
        (".config/tmux/tmux.conf", true),
        (".zlogout", true),
        (".config/mise/config.toml", true),
        (".config/direnv/direnvrc", true),
        (".local/share/direnv/allow/x", true),
        (".config/starship.toml", true),
        (".config/fish/conf.d/x.fish", true),
        (".config/kitty/kitty.conf", true),
        (".config/nushell/config.nu", true),
        // Attack round 23 (F2).
        (".jupyter/jupyter_server_config.py", true),
        (".config/ghostty/config", true),
        (".config/zellij/config.kdl", true),
        (".config/lazygit/config.yml", true),
        (".config/pnpm/rc", true),
        // Round 26: a sweep of the home's start-up files (each demonstrated where its program
        // is installed: /work/reports/catalog-sweep26.md).
        (".cargo/config.toml", true),
        (".cargo/env", true),
        (".rustup/settings.toml", true),
        (".config/go/env", true),
        (".mavenrc", true),
        (".gradle/init.d/x.init.gradle", true),
        (".docker/cli-plugins/docker-buildx", true),
        (".lesskey", true),
        (".tmux/plugins/tpm/tpm", true),
        (".ipython/profile_default/ipython_config.py", true),
        (".pdbrc", true),
        (".perldb", true),
        (".pyenv/pyenv.d/exec/x.bash", true),
        (".gdbearlyinit", true),
        (".selected_editor", true),
        (".config/user-dirs.dirs", true),
        (".zshrc.zwc", true),
        (".zcompdump-host-5.9", true),
        (".nvm/nvm.sh", true),
        (".bashrc.d/x.sh", true),
        (".bash_completion", true),
        (".hgrc", true),
        (".config/containers/containers.conf", true),
        (".local/share/jupyter/kernels/x/kernel.json", true),
        (".local/share/pipx/venvs/x/bin/python", true),
        (".volta/tools/image/node/bin/node", true),
        (".psqlrc-16", true),
        (".config/irb/irbrc", true),
        (".xsessionrc", true),
        (".local/share/dbus-1/services/x.service", true),
        (".config/git/gitk", true),
        (".pylintrc", true),
        (".node_modules/x/index.js", true),
        (".julia/config/startup.jl", true),
        (".iex.exs", true),
        (".yarnrc", true),
        (".terraform.d/plugins/x/y", true),
        (".cargo/registry/cache/x.crate", false),
        ("notes.txt", false),
    ];
    for (cwd, path, protected) in cases {
        let gate = gate_refuses(&p, &tmp, cwd, path);
        let sandbox = sandbox_refuses(&p, &tmp, cwd, path);
        let rel = cwd.strip_prefix(p.path()).unwrap().join(path);
        rows.push((rel.display().to_string(), *protected, gate, sandbox));
    }
    for (path, protected) in home_cases {
        let full = p.home.path().join(path).display().to_string();
        let gate = gate_refuses(&p, &tmp, p.path(), &full);
        let sandbox = sandbox_refuses(&p, &tmp, p.home.path(), path);
        rows.push((format!("~/{path}"), protected, gate, sandbox));
    }
    let table: Vec<String> = rows
        .iter()
        .map(|(path, protected, gate, sandbox)| {
            let word = |refused: bool| if refused { "refused" } else { "allowed" };
            format!(
                "{path:<32} catalog: {:<9} gate: {:<7} sandbox: {}",
                if *protected { "protected" } else { "open" },
                word(*gate),
                word(*sandbox)
            )
        })
        .collect();
    eprintln!("{}", table.join("\n"));
    let wrong: Vec<&String> = rows
        .iter()
        .zip(&table)
        .filter(|((_, protected, gate, sandbox), _)| gate != protected || sandbox != protected)
        .map(|(_, line)| line)
        .collect();
    assert!(
        wrong.is_empty(),
        "the gate or the sandbox disagrees with the catalog:\n{wrong:#?}"
    );
}

/// A directory pinned inside a read-only place (an ancestor of a hidden one: the editor's
/// server's `data/User/globalStorage` is hidden, so `data/User` and `data` are pinned) is
/// read-only with it: its bind, made before the read-only one, was carried into it writable,
/// and `~/.vscode-server/data/Machine/settings.json` was written with the agent started in the
/// home (found adding code-server's rows: its `User/settings.json` was written).
#[test]
fn a_directory_pinned_inside_a_read_only_place_is_read_only_with_it() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project_with_the_home_writable();
    for dir in [
        ".vscode-server/data/User/globalStorage/x",
        ".local/share/code-server/User/globalStorage/x",
        ".vscode-server/data/Machine",
    ] {
        std::fs::create_dir_all(p.home.path().join(dir)).unwrap();
    }
    for path in [
        ".vscode-server/data/Machine/settings.json",
        ".vscode-server/data/User/settings.json",
        ".local/share/code-server/User/settings.json",
    ] {
        assert!(sandbox_refuses(&p, &tmp, p.home.path(), path), "{path}");
    }
    // The ordinary files of the home beside them stay writable, and so does a project that
    // lies inside a read-only place (a Vim plugin worked on where Vim loads it), whose own
    // places are held as any project's.
    assert!(!sandbox_refuses(&p, &tmp, p.home.path(), "notes.txt"));
    let plugin = p.home.path().join(".vim/pack/mine/start/x");
    std::fs::create_dir_all(&plugin).unwrap();
    assert!(!sandbox_refuses(&p, &tmp, &plugin, "plugin/x.vim"));
    let o = hookd(&p, &tmp, &["exec", "--", "true"])
        .current_dir(&plugin)
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("read-only"), "{}", stderr(&o));
    assert!(sandbox_refuses(&p, &tmp, &plugin, ".vscode/tasks.json"));
    assert!(sandbox_refuses(
        &p,
        &tmp,
        p.home.path(),
        ".vim/plugin/y.vim"
    ));
}

/// Attack round 21, F4: a project that is itself one of the catalog's places (a dotfiles
/// repository in `~/.config/nvim`, with the agent started there) is read-only whole to its own
/// commands (so would `~/.claude` or `~/.infer` be, whose writing would grant the next session
/// what the user did not), and they were not told why: the end says so.
#[test]
fn a_project_that_is_a_catalog_place_is_read_only_and_said() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let nvim = p.home.path().join(".config/nvim");
    std::fs::create_dir_all(&nvim).unwrap();
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&nvim)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", "echo x > init.lua"])
        .current_dir(&nvim)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let nvim = nvim.canonicalize().unwrap();
    assert!(
        stderr(&o).contains(&format!(
            "hookd: the project {} is a place the sandbox keeps read-only (agents, editors or git run what is there): confined commands cannot write in it; work on it outside the sandbox, or on a copy elsewhere",
            nvim.display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(!nvim.join("init.lua").exists());
}

#[test]
fn held_places_cannot_be_moved_away_and_replaced() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project_with_the_home_writable();
    std::fs::create_dir_all(p.home.path().join(".config/hookd")).unwrap();
    std::fs::write(p.home.path().join(".config/hookd/trust.json"), "{}\n").unwrap();
    let attacks = [
        // Unconfined, each works: the markers prove it; confined, each must fail.
        (
            p.path().to_path_buf(),
            "mv .git .git-old && mkdir .git && touch \"$OUT/git\"",
        ),
        (
            p.home.path().to_path_buf(),
            "mv .config .config-moved && touch \"$OUT/config\"",
        ),
    ];
    for (cwd, script) in &attacks {
        let out = tempfile::tempdir_in(p.home.path()).unwrap();
        let mut c = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script]);
        c.current_dir(cwd).env("OUT", out.path());
        let o = c.output().unwrap();
        let marks = std::fs::read_dir(out.path()).unwrap().count();
        assert_eq!(marks, 0, "{script} worked confined: {}", stderr(&o));
        // The same, unconfined, works (and is put back).
        let o = std::process::Command::new("sh")
            .args(["-c", script])
            .current_dir(cwd)
            .env("OUT", out.path())
            .output()
            .unwrap();
        assert_eq!(
            std::fs::read_dir(out.path()).unwrap().count(),
            1,
            "{script} did not work unconfined: {}",
            stderr(&o)
        );
        let _ = std::fs::remove_dir(cwd.join(".git"));
        let _ = std::fs::rename(cwd.join(".git-old"), cwd.join(".git"));
        let _ = std::fs::rename(cwd.join(".config-moved"), cwd.join(".config"));
    }
}

#[test]
fn a_held_place_that_is_a_symlink_stops_the_command() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    std::fs::create_dir_all(p.path().join("cfg/claude")).unwrap();
    std::os::unix::fs::symlink("cfg/claude", p.path().join(".claude")).unwrap();
    let marker = p.path().join("ran");
    let o = hookd(&p, &tmp, &["exec", "--", "touch", "ran"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert!(!marker.exists(), "the command ran");
    let real = p.path().canonicalize().unwrap().join(".claude");
    assert!(
        stderr(&o).contains(&format!(
            "{} is a symbolic link: the sandbox holds it read-only and cannot hold a link",
            real.display()
        )),
        "{}",
        stderr(&o)
    );
}

/// How the first command of [`a_made_file_handed_between_two_commands_at_once_is_moved_aside`]
/// puts the file under its name.
#[derive(Clone, Copy)]
enum Made {
    Here,
    Linked,
    Renamed,
}

/// Attack round 16, F1: two confined commands at once kept a made file for good. The first (X)
/// made `opencode.json` (a name held where it exists and moved aside where a command made it)
/// and waited; the second (A) started, found it and held it read-only; X linked it under a second
/// name and unlinked the first (the unlink detached A's mount: it is a mount point in A's
/// namespace only), so X's end found nothing to move; A linked it back, so A's end found the
/// object it had found at its start (7 of 7 runs; `web/.mcp.json`, which below the root has no
/// stand-in, 3 of 3; a `web/.git` pointer whose `core.fsmonitor` the user's next `git status`
/// ran, 4 of 4). A file changed (made, or linked to its name) since another confined command
/// started is watched now: its change time moved (every link and unlink moves it), A's end
/// moves it aside.
#[test]
fn a_made_file_handed_between_two_commands_at_once_is_moved_aside() {
    if !confinable() {
        return;
    }
    // Made by the first command; or linked by it from a file made before it started (a name
    // no one holds), whose birth time is older than both commands; or brought under its name
    // by the first command renaming the directory an earlier one made it in, where the walk
    // does not look (attack round 17, F1: the file's own times are the earlier command's).
    for (name, how) in [
        ("opencode.json", Made::Here),
        ("web/.mcp.json", Made::Here),
        ("opencode.json", Made::Linked),
        ("pkg/.mcp.json", Made::Renamed),
    ] {
        let (p, tmp) = project();
        std::fs::create_dir_all(p.path().join("web")).unwrap();
        let keep = Path::new(name).with_file_name(".keep");
        let older = match how {
            Made::Here => None,
            Made::Linked => Some(p.path().join(&keep)),
            Made::Renamed => Some(p.path().join("node_modules/p/.mcp.json")),
        };
        if let Some(older) = older {
            std::fs::create_dir_all(older.parent().unwrap()).unwrap();
            std::fs::write(older, "{}\n").unwrap();
            // Older than the clock's slack (a tick) before the first command's start.
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        let keep = keep.display();
        // What is under the name when the second command starts, and the second name the first
        // gives it once that one holds it (a linked one has it already).
        let (make, second) = match how {
            Made::Here => (
                format!("echo '{{}}' > {name}"),
                format!("ln {name} {keep}; "),
            ),
            Made::Linked => (format!("ln {keep} {name}"), String::new()),
            Made::Renamed => (
                "mv node_modules/p pkg".to_string(),
                format!("ln {name} {keep}; "),
            ),
        };
        let wait = |path: &str| {
            format!("i=0; while [ ! -e {path} ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i+1)); done")
        };
        let x = format!(
            "{make}; touch made; {}; {second}rm {name}; touch unlinked",
            wait("started")
        );
        let a = format!(
            "touch started; {}; sleep 0.3; ln {keep} {name}",
            wait("unlinked")
        );
        let first = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &x])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !p.path().join("made").exists() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let second = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &a])
            .output()
            .unwrap();
        let first = first.wait_with_output().unwrap();
        assert!(first.status.success(), "{}", stderr(&first));
        assert!(second.status.success(), "{}", stderr(&second));
        assert!(
            !p.path().join(name).exists(),
            "{name} stays: {}",
            stderr(&second)
        );
        assert!(
            stderr(&second).contains(&format!("{name} (a place agents, editors or git read")),
            "{}",
            stderr(&second)
        );
    }
}

/// Attack round 17, F2: a `.github` the command made as a link (to `node_modules/gh`, holding
/// `hooks/x.json` and `copilot/settings.json`) kept Copilot's hooks where it reads them: the end
/// could not move `.github/hooks` aside through the link and only said so (3 of 3). The link
/// itself is moved aside, at the root and below.
#[test]
fn a_link_a_name_of_several_components_is_reached_through_is_moved_aside() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    std::fs::create_dir_all(p.path().join("pkg2")).unwrap();
    let script = "mkdir -p node_modules/gh/hooks node_modules/gh/copilot && \
                  echo '{}' > node_modules/gh/hooks/x.json && echo '{}' > node_modules/gh/copilot/settings.json && \
                  ln -s node_modules/gh .github && ln -s ../node_modules/gh pkg2/.github";
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let root = p.path().canonicalize().unwrap();
    for link in [".github", "pkg2/.github"] {
        assert!(
            stderr(&o).contains(&format!(
                "hookd: the confined command made {} (a place agents, editors or git read on their own, which confined commands may not write): moved to {}.hookd-aside",
                root.join(link).display(),
                root.join(link).display()
            )),
            "{link}: {}",
            stderr(&o)
        );
        assert!(!root.join(link).join("hooks/x.json").exists(), "{link}");
    }
    // Attack round 18, F1: the link made while where it led held nothing (so its end left it),
    // then filled by the next command: moved aside at that one's end (4 of 4 before).
    let (p, tmp) = project();
    let first = "mkdir -p node_modules/gh && ln -s node_modules/gh .github";
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", first])
        .output()
        .unwrap();
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );
    assert!(p.path().join(".github").is_symlink());
    std::thread::sleep(std::time::Duration::from_millis(300));
    let fill = "mkdir -p node_modules/gh/hooks && echo '{}' > node_modules/gh/hooks/x.json";
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", fill])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let root = p.path().canonicalize().unwrap();
    assert!(
        stderr(&o).contains(&format!(
            "hookd: the confined command made {} (a place",
            root.join(".github").display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(!root.join(".github/hooks/x.json").exists());
}
