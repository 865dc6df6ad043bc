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
}

const fn row(
    anchor: Anchor,
    path: &'static str,
    shape: Shape,
    sandbox: Sandbox,
    why: &'static str,
) -> Place {
    Place {
        anchor,
        path,
        shape,
        gate: Gate::Protect,
        sandbox,
        why,
        differs: "",
    }
}

use Anchor::{Anywhere, ConfigHome, GitDir, Home, Var};
use Sandbox::{Hidden, ReadOnly, Watched};
use Shape::{Dir, File, Prefix};

const AGENT_SETTINGS: &str = "an agent's settings: its hooks, permissions and environment";
const AGENT_SETTINGS_KEYS: &str = "an agent's settings: its hooks, permissions and environment, and the API keys its users put there (hidden: it is read by the agent, never by a command)";
const AGENT_KEYS: &str = "loaded by an agent on its own at its next start, where its documentation has its users put its API key (hidden: it is read by the agent, never by a command)";
const RUNS_LATER: &str = "loaded by an agent or a tool on its own at its next start";
const VSCODE_USER: &str = "the editor's user settings and tasks (a terminal profile, a task run on opening a folder), run at its next start";
const EXTENSION_KEYS: &str = "Roo Code's, Cline's or Kilo Code's global MCP servers (started by the editor's extension) and the keys in their `env` (hidden: it is read by the extension, never by a command)";
const GIT_RUNS: &str =
    "git runs what it names at the user's next unconfined `git status` or `git commit`";
const HOOKD_OWN: &str = "hookd's own configuration, trust, state or daemon";
const SECRET: &str = "a credential store";
const HISTORY: &str = "past sessions' commands and output";
const SOCKETS: &str =
    "a service's sockets: whoever connects acts with the user's sessions or credentials";
const STARTUP: &str = "the shell or git runs it at the user's next start";
const STARTUP_HERE: &str =
    "the shell, git or ripgrep runs it where this directory is a home (a dotfiles repository)";

/// Every place hookd protects, in the order docs/security.md lists them.
#[rustfmt::skip]
pub const PLACES: &[Place] = &[
    // hookd's and the agents' settings, by name wherever they are.
    row(Anywhere, ".infer", Dir, ReadOnly, HOOKD_OWN),
    row(Anywhere, ".claude", Dir, ReadOnly, "an agent's settings, skills, agents and commands: their frontmatter declares hooks"),
    row(Anywhere, ".gemini", Dir, ReadOnly, AGENT_SETTINGS),
    row(Anywhere, ".codex", Dir, ReadOnly, "Codex's project settings: its sandbox mode, approvals, MCP servers and hooks"),
    row(Anywhere, ".agents", Dir, ReadOnly, "the repository's skills (`.agents/skills`), whose text Codex and other agents load into their context at their next start (Codex holds it in every writable root)"),
    row(Anywhere, "crush.json", File, ReadOnly, AGENT_SETTINGS),
    row(Anywhere, ".crush.json", File, ReadOnly, AGENT_SETTINGS),
    row(Anywhere, ".cursor", Dir, ReadOnly, "Cursor's project settings: its hooks, MCP servers and rules"),
    // The other agents' and editors' project settings that start or run something (attack
    // round 11, F6). Those an editor's extension reads while it runs, held like `.cursor/`
    // (a stand-in where absent); those a program reads when it starts, `Watched`: held where
    // they exist, moved aside at the command's end where it made them (no stand-in to pay for
    // at every command).
    row(Anywhere, ".roo", Dir, ReadOnly, "Roo Code's project MCP servers (`.roo/mcp.json`), started by the editor's extension as soon as the file changes"),
    row(Anywhere, ".kilocode", Dir, ReadOnly, "Kilo Code's project MCP servers (`.kilocode/mcp.json`), started by the editor's extension as soon as the file changes"),
    row(Anywhere, ".continue", Dir, ReadOnly, "Continue's project MCP servers (`.continue/mcpServers`) and configuration, reloaded by the editor's extension"),
    row(Anywhere, ".kiro", Dir, ReadOnly, "Kiro's hooks (`.kiro/hooks`: commands run on file events, read while the editor runs) and MCP servers"),
    row(Anywhere, ".windsurf", Dir, ReadOnly, "Windsurf's hooks (`.windsurf/hooks.json`: commands run around Cascade's steps), workflows and rules"),
    row(Anywhere, ".clinerules", Dir, ReadOnly, "Cline's hooks (`.clinerules/hooks`, run by the editor's extension) and rules"),
    row(Anywhere, ".amazonq", Dir, ReadOnly, "Amazon Q Developer's project MCP servers and agents (their hooks)"),
    row(Anywhere, ".qwen", Dir, Watched, "Qwen Code's project settings (a Gemini CLI fork), read at its start: its hooks, MCP servers and tools"),
    row(Anywhere, "opencode.json", File, Watched, "OpenCode's project configuration, read at its start: the MCP servers' commands it starts, its plugins"),
    row(Anywhere, "opencode.jsonc", File, Watched, "OpenCode's project configuration, read at its start: the MCP servers' commands it starts, its plugins"),
    row(Anywhere, ".opencode", Dir, Watched, "OpenCode's project plugins (code run inside OpenCode), agents and commands, read at its start"),
    row(Anywhere, ".github/hooks", Dir, Watched, "GitHub Copilot's repository hooks (`.github/hooks/*.json`), read at a session's start by its CLI and its agent"),
    row(Anywhere, ".github/copilot", Dir, Watched, "GitHub Copilot CLI's repository settings (`settings.json`, `settings.local.json`), whose `hooks` it runs from a session's start"),
    row(Anywhere, ".aider.model.settings.yml", File, Watched, "aider's model settings, read at its start: an `api_base` there sends your key to another server"),
    row(Anywhere, ".aider.model.metadata.json", File, Watched, "aider's model metadata, read at its start with its model settings"),
    row(Anywhere, ".aider.conf.yml", File, Watched, "aider's configuration, read at its start at the repository's root and in the working directory: its `lint-cmd` and `test-cmd` run after each edit"),
    row(Anywhere, ".helix", Dir, Watched, "Helix's workspace configuration, read at its start: the language servers it starts"),
    row(Anywhere, ".mcp.json", File, ReadOnly, "MCP servers an agent starts"),
    row(Anywhere, ".env", File, ReadOnly, RUNS_LATER),
    row(Anywhere, ".envrc", File, ReadOnly, RUNS_LATER),
    row(Anywhere, "mise.toml", File, ReadOnly, "mise, activated in the user's shell, runs its `[hooks]` and `[env]` sources on entering the directory"),
    row(Anywhere, ".mise.toml", File, ReadOnly, "mise, activated in the user's shell, runs its `[hooks]` and `[env]` sources on entering the directory"),
    row(Anywhere, "mise.local.toml", File, ReadOnly, "mise, activated in the user's shell, runs its `[hooks]` and `[env]` sources on entering the directory"),
    row(Anywhere, ".mise.local.toml", File, ReadOnly, "mise, activated in the user's shell, runs its `[hooks]` and `[env]` sources on entering the directory"),
    row(Anywhere, ".vscode", Dir, ReadOnly, RUNS_LATER),
    row(Anywhere, ".idea", Dir, ReadOnly, RUNS_LATER),
    row(Anywhere, ".zed", Dir, ReadOnly, "Zed's project settings: the language servers and tasks it runs"),
    row(Anywhere, ".devcontainer", Dir, ReadOnly, "the editor runs its `initializeCommand` on your machine when it opens the container"),
    row(Anywhere, ".devcontainer.json", File, ReadOnly, "the editor runs its `initializeCommand` on your machine when it opens the container"),
    row(Anywhere, ".gitmodules", File, ReadOnly, GIT_RUNS),
    // Start-up files by name, as sandbox-runtime holds them: a project that is (or becomes) a
    // home runs them (a dotfiles repository, a container that mounts it as the home).
    row(Anywhere, ".bashrc", File, ReadOnly, STARTUP_HERE),
    row(Anywhere, ".bash_profile", File, ReadOnly, STARTUP_HERE),
    row(Anywhere, ".profile", File, ReadOnly, STARTUP_HERE),
    row(Anywhere, ".zprofile", File, ReadOnly, STARTUP_HERE),
    row(Anywhere, ".zshrc", File, ReadOnly, STARTUP_HERE),
    row(Anywhere, ".gitconfig", File, ReadOnly, STARTUP_HERE),
    row(Anywhere, ".ripgreprc", File, ReadOnly, STARTUP_HERE),
    row(Anywhere, ".aws", Dir, ReadOnly, "where this directory is a home, the AWS tools run the `credential_process` its `config` names (Codex holds it in every writable root)"),
    // git's configuration and indirections.
    row(Anywhere, ".git", Shape::Pinned, Sandbox::Pinned, "moving it away and making a new one replaces its configuration; one that does not exist cannot be made (no new repository); a `.git` file (`gitdir: …`) is read-only"),
    row(GitDir, "config", Prefix, ReadOnly, GIT_RUNS),
    row(GitDir, "hooks", Dir, ReadOnly, GIT_RUNS),
    row(GitDir, "info", Dir, ReadOnly, GIT_RUNS),
    row(GitDir, "commondir", File, ReadOnly, "git takes its configuration and hooks from where it points"),
    row(GitDir, "modules", Dir, ReadOnly, "submodules' configuration and hooks"),
    row(GitDir, "worktrees", Dir, ReadOnly, "linked work trees' configuration"),
    row(GitDir, "refs/replace", Dir, ReadOnly, "git reads the objects it names in place of the originals: what your `git status`, `diff`, `checkout`, `stash` or `rebase --continue` show or write would be the command's"),
    row(Anchor::Runtime(Runtime::GitDirs), "", Shape::Pinned, Sandbox::Pinned, "git takes the work tree's configuration and hooks from there: pinned, its `config*`, `hooks`, `info`, `commondir`, `modules` and `worktrees` held as a `.git`'s"),
    row(Anchor::Runtime(Runtime::HooksPath), "", Dir, ReadOnly, "git runs the hooks there at the user's next `git commit` (husky's `.husky/_`)"),
    row(Anchor::Runtime(Runtime::GitIncludes), "", File, ReadOnly, "git reads it as part of the configuration that includes it"),
    // hookd's own, and the agents' user settings.
    row(Home, ".infer", Dir, ReadOnly, HOOKD_OWN),
    row(Home, ".local/state/hookd", Dir, Hidden, HOOKD_OWN),
    row(ConfigHome, "hookd", Dir, Hidden, HOOKD_OWN),
    row(Var("XDG_STATE_HOME"), "hookd", Dir, Hidden, HOOKD_OWN),
    row(Var("HOOKD_STATE_DIR"), "", Dir, Hidden, HOOKD_OWN),
    row(Var("HOOKD_TRUST_FILE"), "", File, Hidden, HOOKD_OWN),
    row(Var("XDG_RUNTIME_DIR"), "hookd", Prefix, Hidden, "hookd's daemon socket and token"),
    row(Var("HOOKD_SOCKET"), "", File, Hidden, "hookd's daemon socket"),
    row(Anchor::VarSibling("HOOKD_SOCKET"), "token", File, Hidden, "hookd's daemon token, beside a socket `HOOKD_SOCKET` names"),
    row(Anchor::VarSibling("HOOKD_SOCKET"), "events", File, Hidden, "where the daemon at that socket writes its events (its clients append there when it is gone)"),
    row(Anchor::VarSibling("HOOKD_SOCKET"), "fallback", File, Hidden, "the mark of a client of that daemon having fallen back"),
    row(Var("HOOKD_EVENTS"), "", Prefix, Hidden, "hookd's audit trail: the events file (and its rotated files) an adapter or the daemon appends to (hidden: a command that could read it could lock it and hold up every hook)"),
    row(Home, ".infer/hookd.sock", File, Hidden, "hookd's daemon socket (no runtime directory)"),
    row(Home, ".infer/hookd.token", File, Hidden, "hookd's daemon token (no runtime directory)"),
    // Sockets of services the user runs: screen's sessions, Docker Desktop's engine, git's
    // credential cache (it hands a cached token to whoever connects).
    row(Home, ".screen", Dir, Hidden, SOCKETS),
    row(Home, ".docker/run", Dir, Hidden, SOCKETS),
    row(Home, ".cache/git/credential", Dir, Hidden, SOCKETS),
    row(Home, ".git-credential-cache", Dir, Hidden, SOCKETS),
    row(Home, ".1password", Dir, Hidden, "1Password's SSH agent socket: whoever connects signs with the user's keys"),
    row(Home, ".bitwarden-ssh-agent.sock", File, Hidden, "Bitwarden's SSH agent socket: whoever connects signs with the user's keys"),
    row(Home, "snap/bitwarden/current/.bitwarden-ssh-agent.sock", File, Hidden, "Bitwarden's SSH agent socket: whoever connects signs with the user's keys"),
    row(Home, ".var/app/com.bitwarden.desktop/data/.bitwarden-ssh-agent.sock", File, Hidden, "Bitwarden's SSH agent socket: whoever connects signs with the user's keys"),
    row(Home, ".colima", Dir, Hidden, SOCKETS),
    row(Home, ".lima", Dir, Hidden, SOCKETS),
    row(Home, ".rd", Dir, Hidden, SOCKETS),
    row(Home, ".docker/desktop", Dir, Hidden, SOCKETS),
    row(Home, ".claude/settings", Prefix, Hidden, AGENT_SETTINGS_KEYS),
    row(Var("CLAUDE_CONFIG_DIR"), "settings", Prefix, Hidden, AGENT_SETTINGS_KEYS),
    row(Home, ".gemini/settings.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Home, ".gemini/.env", File, Hidden, AGENT_KEYS),
    row(Var("GEMINI_CLI_HOME"), ".gemini/settings.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Var("GEMINI_CLI_HOME"), ".gemini/.env", File, Hidden, AGENT_KEYS),
    row(Var("GEMINI_CLI_HOME"), ".env", File, Hidden, AGENT_KEYS),
    row(Home, ".env", File, Hidden, AGENT_KEYS),
    row(ConfigHome, "crush/crush.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Home, ".local/share/crush/crush.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Var("XDG_DATA_HOME"), "crush/crush.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Var("CRUSH_GLOBAL_CONFIG"), "crush.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Var("CRUSH_GLOBAL_DATA"), "crush.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Anchor::Runtime(Runtime::Sources), "", File, ReadOnly, HOOKD_OWN),
    row(Anchor::Runtime(Runtime::ConfigDir), "", File, ReadOnly, HOOKD_OWN),
    row(Anchor::Runtime(Runtime::Installed), "", Prefix, ReadOnly, AGENT_SETTINGS),
    // The shell's and git's start-up files (they matter where the home is writable: an agent
    // started in the home directory).
    row(Home, ".bashrc", File, ReadOnly, STARTUP),
    row(Home, ".bash_profile", File, ReadOnly, STARTUP),
    row(Home, ".bash_login", File, ReadOnly, STARTUP),
    row(Home, ".bash_logout", File, ReadOnly, STARTUP),
    row(Home, ".profile", File, ReadOnly, STARTUP),
    row(Home, ".zshenv", File, ReadOnly, STARTUP),
    row(Home, ".zprofile", File, ReadOnly, STARTUP),
    row(Home, ".zshrc", File, ReadOnly, STARTUP),
    row(Home, ".zlogin", File, ReadOnly, STARTUP),
    row(Home, ".gitconfig", File, ReadOnly, STARTUP),
    row(ConfigHome, "git/config", File, ReadOnly, STARTUP),
    row(ConfigHome, "fish/config.fish", File, ReadOnly, STARTUP),
    row(Home, ".inputrc", File, ReadOnly, STARTUP),
    row(Home, ".local/bin", Dir, ReadOnly, "programs first on the user's PATH: one named `git` runs in place of git"),
    row(Home, "bin", Dir, ReadOnly, "programs on the user's PATH: one named `git` runs in place of git"),
    row(Home, ".cargo/bin", Dir, ReadOnly, "programs on the user's PATH, hookd itself where `cargo install` put it: the agent runs it, unconfined, at every tool call"),
    row(Home, "go/bin", Dir, ReadOnly, "programs on the user's PATH: one named `git` runs in place of git"),
    row(Home, ".bun/bin", Dir, ReadOnly, "programs on the user's PATH: one named `git` runs in place of git"),
    row(Home, ".deno/bin", Dir, ReadOnly, "programs on the user's PATH: one named `git` runs in place of git"),
    row(Home, ".npm-global/bin", Dir, ReadOnly, "programs on the user's PATH: one named `git` runs in place of git"),
    row(Home, ".volta/bin", Dir, ReadOnly, "programs on the user's PATH: one named `git` runs in place of git"),
    row(ConfigHome, "autostart", Dir, ReadOnly, "the desktop session starts what it names at the next login"),
    row(ConfigHome, "systemd/user", Dir, ReadOnly, "the user's systemd manager starts what it names"),
    row(ConfigHome, "environment.d", Dir, ReadOnly, "the user's systemd manager sets its variables for every service"),
    row(Home, ".ipython/profile_default/startup", Dir, ReadOnly, "IPython runs it at its next start"),
    row(Home, ".vimrc", File, ReadOnly, "Vim runs it at its next start"),
    row(Home, ".tmux.conf", File, ReadOnly, "tmux runs what it names at its next start"),
    row(Home, ".curlrc", File, ReadOnly, "curl reads its options (an upload, a proxy) at every run"),
    row(Home, ".wgetrc", File, ReadOnly, "wget reads its options at every run"),
    // Credential stores, where each tool looks for them.
    row(Home, ".ssh", Dir, Hidden, SECRET),
    row(Home, ".gnupg", Dir, Hidden, SECRET),
    row(Var("GNUPGHOME"), "", Dir, Hidden, SECRET),
    row(Home, ".aws", Dir, Hidden, SECRET),
    row(Var("AWS_SHARED_CREDENTIALS_FILE"), "", File, Hidden, SECRET),
    row(Var("AWS_CONFIG_FILE"), "", File, Hidden, SECRET),
    row(Home, ".azure", Dir, Hidden, SECRET),
    row(ConfigHome, "gcloud", Dir, Hidden, SECRET),
    row(Home, ".kube", Dir, Hidden, SECRET),
    row(Var("KUBECONFIG"), "", File, Hidden, SECRET),
    row(Home, ".docker/config.json", File, Hidden, SECRET),
    row(Var("DOCKER_CONFIG"), "config.json", File, Hidden, SECRET),
    row(Home, ".netrc", File, Hidden, SECRET),
    row(Var("NETRC"), "", File, Hidden, SECRET),
    row(Home, ".git-credentials", File, Hidden, SECRET),
    row(ConfigHome, "git/credentials", File, Hidden, SECRET),
    row(ConfigHome, "gh", Dir, Hidden, SECRET),
    row(Var("GH_CONFIG_DIR"), "", Dir, Hidden, SECRET),
    row(Home, ".npmrc", File, Hidden, SECRET),
    row(Home, ".pypirc", File, Hidden, SECRET),
    row(Home, ".cargo/credentials", File, Hidden, SECRET),
    row(Home, ".cargo/credentials.toml", File, Hidden, SECRET),
    row(Var("CARGO_HOME"), "credentials", File, Hidden, SECRET),
    row(Var("CARGO_HOME"), "credentials.toml", File, Hidden, SECRET),
    row(Home, ".local/share/keyrings", Dir, Hidden, SECRET),
    row(Var("XDG_DATA_HOME"), "keyrings", Dir, Hidden, SECRET),
    row(Home, ".password-store", Dir, Hidden, SECRET),
    // Where other tools keep their tokens and passwords (the attack round of 2026-11-27 read
    // each from a confined command).
    row(Home, ".vault-token", File, Hidden, SECRET),
    row(Home, ".pgpass", File, Hidden, SECRET),
    row(Home, ".my.cnf", File, Hidden, SECRET),
    row(Home, ".terraform.d/credentials.tfrc.json", File, Hidden, SECRET),
    row(ConfigHome, "github-copilot", Dir, Hidden, SECRET),
    row(ConfigHome, "containers/auth.json", File, Hidden, SECRET),
    row(Home, ".m2/settings-security.xml", File, Hidden, SECRET),
    row(Home, ".gradle/gradle.properties", File, Hidden, SECRET),
    row(Home, ".gem/credentials", File, Hidden, SECRET),
    row(Home, ".composer/auth.json", File, Hidden, SECRET),
    row(ConfigHome, "composer/auth.json", File, Hidden, SECRET),
    row(Home, ".pulumi/credentials.json", File, Hidden, SECRET),
    row(Home, ".kaggle", Dir, Hidden, SECRET),
    row(Home, ".huggingface/token", File, Hidden, SECRET),
    row(Home, ".cache/huggingface/token", File, Hidden, SECRET),
    row(Home, ".databrickscfg", File, Hidden, SECRET),
    row(Home, ".oci", Dir, Hidden, SECRET),
    row(Home, ".s3cfg", File, Hidden, SECRET),
    row(Home, ".boto", File, Hidden, SECRET),
    row(ConfigHome, "doctl", Dir, Hidden, SECRET),
    row(ConfigHome, "hcloud", Dir, Hidden, SECRET),
    row(ConfigHome, "ngrok", Dir, Hidden, SECRET),
    row(Home, ".fly", Dir, Hidden, SECRET),
    row(Home, ".vercel", Dir, Hidden, SECRET),
    row(Home, ".wrangler", Dir, Hidden, SECRET),
    row(ConfigHome, "netlify", Dir, Hidden, SECRET),
    row(ConfigHome, "glab-cli", Dir, Hidden, SECRET),
    row(ConfigHome, "tea", Dir, Hidden, SECRET),
    row(ConfigHome, "hub", File, Hidden, SECRET),
    row(ConfigHome, "sops", Dir, Hidden, SECRET),
    row(ConfigHome, "op", Dir, Hidden, SECRET),
    row(ConfigHome, "gopass", Dir, Hidden, SECRET),
    row(Home, ".local/share/gopass", Dir, Hidden, SECRET),
    row(ConfigHome, "restic", Dir, Hidden, SECRET),
    row(Home, ".mc", Dir, Hidden, SECRET),
    row(Home, ".snowsql", Dir, Hidden, SECRET),
    row(Home, ".dbt/profiles.yml", File, Hidden, SECRET),
    row(Home, ".subversion/auth", Dir, Hidden, SECRET),
    row(Home, ".local/share/opencode/auth.json", File, Hidden, SECRET),
    row(ConfigHome, "openai", Dir, Hidden, SECRET),
    row(Home, ".codeium", Dir, Hidden, SECRET),
    // Other agents' keys, where their documentation has them.
    row(Home, ".qwen/oauth_creds.json", File, Hidden, SECRET),
    row(Home, ".aider.conf.yml", File, Hidden, SECRET),
    row(Home, ".continue/config.json", File, Hidden, SECRET),
    row(Home, ".continue/config.yaml", File, Hidden, SECRET),
    // Other agents' settings, where their users put provider keys and MCP servers' `env`
    // (attack round 10 read each).
    row(Home, ".codex/config.toml", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Var("CODEX_HOME"), "config.toml", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Home, ".qwen/.env", File, Hidden, AGENT_KEYS),
    row(Home, ".qwen/settings.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(ConfigHome, "opencode/opencode.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(ConfigHome, "goose/config.yaml", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Home, ".cursor/mcp.json", File, Hidden, AGENT_SETTINGS_KEYS),
    // Attack round 16 (F4, F5): the user level of the agents whose project settings round 11
    // named. What they run at their next start, read-only where the home is writable; where
    // they keep keys, hidden.
    row(Home, ".copilot", Dir, ReadOnly, "GitHub Copilot CLI's user hooks, settings and MCP servers, run at its next start"),
    row(Home, ".copilot/config.json", File, Hidden, "GitHub Copilot CLI's token, where no keychain keeps it (hidden: it is read by the agent, never by a command)"),
    row(Home, ".copilot/mcp-config.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(Home, ".kiro/settings/mcp.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(ConfigHome, "opencode", Dir, ReadOnly, "OpenCode's user configuration, plugins, agents and commands, run at its next start"),
    row(ConfigHome, "opencode/opencode.jsonc", File, Hidden, AGENT_SETTINGS_KEYS),
    row(ConfigHome, "opencode/config.json", File, Hidden, AGENT_SETTINGS_KEYS),
    row(ConfigHome, "helix", Dir, ReadOnly, "Helix's configuration: the language servers it starts"),
    row(ConfigHome, "Code/User", Dir, ReadOnly, VSCODE_USER),
    row(ConfigHome, "Code - Insiders/User", Dir, ReadOnly, VSCODE_USER),
    row(ConfigHome, "VSCodium/User", Dir, ReadOnly, VSCODE_USER),
    row(ConfigHome, "Code/User/globalStorage/rooveterinaryinc.roo-cline/settings", Dir, Hidden, EXTENSION_KEYS),
    row(ConfigHome, "Code/User/globalStorage/saoudrizwan.claude-dev/settings", Dir, Hidden, EXTENSION_KEYS),
    row(ConfigHome, "Code/User/globalStorage/kilocode.kilo-code/settings", Dir, Hidden, EXTENSION_KEYS),
    row(ConfigHome, "Code - Insiders/User/globalStorage/rooveterinaryinc.roo-cline/settings", Dir, Hidden, EXTENSION_KEYS),
    row(ConfigHome, "Code - Insiders/User/globalStorage/saoudrizwan.claude-dev/settings", Dir, Hidden, EXTENSION_KEYS),
    row(ConfigHome, "Code - Insiders/User/globalStorage/kilocode.kilo-code/settings", Dir, Hidden, EXTENSION_KEYS),
    row(ConfigHome, "VSCodium/User/globalStorage/rooveterinaryinc.roo-cline/settings", Dir, Hidden, EXTENSION_KEYS),
    row(ConfigHome, "VSCodium/User/globalStorage/saoudrizwan.claude-dev/settings", Dir, Hidden, EXTENSION_KEYS),
    row(ConfigHome, "VSCodium/User/globalStorage/kilocode.kilo-code/settings", Dir, Hidden, EXTENSION_KEYS),
    // More tools' credentials at their default paths (attack round 9 of 2026-11-27 read each).
    row(Home, ".m2/settings.xml", File, Hidden, SECRET),
    row(Home, ".terraformrc", File, Hidden, SECRET),
    row(ConfigHome, "rclone", Dir, Hidden, SECRET),
    row(Home, ".yarnrc.yml", File, Hidden, SECRET),
    row(ConfigHome, "pip/pip.conf", File, Hidden, SECRET),
    row(Home, ".pip/pip.conf", File, Hidden, SECRET),
    row(Home, ".bundle/config", File, Hidden, SECRET),
    row(Home, ".nuget/NuGet/NuGet.Config", File, Hidden, SECRET),
    row(ConfigHome, "NuGet/NuGet.Config", File, Hidden, SECRET),
    row(Home, ".minikube", Dir, Hidden, SECRET),
    row(ConfigHome, "configstore/firebase-tools.json", File, Hidden, SECRET),
    row(ConfigHome, "io.datasette.llm", Dir, Hidden, SECRET),
    row(Home, ".cloudflared", Dir, Hidden, SECRET),
    row(ConfigHome, "stripe", Dir, Hidden, SECRET),
    row(Home, ".local/share/com.vercel.cli", Dir, Hidden, SECRET),
    row(Home, ".supabase", Dir, Hidden, SECRET),
    row(Home, ".ollama/id_ed25519", File, Hidden, SECRET),
    // Where each tool's own variable moves its store (the same round read each there).
    row(Var("CLOUDSDK_CONFIG"), "", Dir, Hidden, SECRET),
    row(Var("AZURE_CONFIG_DIR"), "", Dir, Hidden, SECRET),
    row(Var("GRADLE_USER_HOME"), "gradle.properties", File, Hidden, SECRET),
    row(Var("NPM_CONFIG_USERCONFIG"), "", File, Hidden, SECRET),
    row(Var("HF_HOME"), "token", File, Hidden, SECRET),
    row(Var("PASSWORD_STORE_DIR"), "", Dir, Hidden, SECRET),
    row(Var("KAGGLE_CONFIG_DIR"), "", Dir, Hidden, SECRET),
    row(Var("PULUMI_HOME"), "credentials.json", File, Hidden, SECRET),
    row(Var("TF_CLI_CONFIG_FILE"), "", File, Hidden, SECRET),
    row(Var("RCLONE_CONFIG"), "", File, Hidden, SECRET),
    row(Var("SOPS_AGE_KEY_FILE"), "", File, Hidden, SECRET),
    row(Var("GOOGLE_APPLICATION_CREDENTIALS"), "", File, Hidden, SECRET),
    row(Home, ".mozilla", Dir, Hidden, "a browser's or a chat client's profile: its cookies sign in as you"),
    row(ConfigHome, "google-chrome", Dir, Hidden, "a browser's or a chat client's profile: its cookies sign in as you"),
    row(ConfigHome, "chromium", Dir, Hidden, "a browser's or a chat client's profile: its cookies sign in as you"),
    row(Home, ".thunderbird", Dir, Hidden, "a browser's or a chat client's profile: its cookies sign in as you"),
    row(ConfigHome, "Slack", Dir, Hidden, "a browser's or a chat client's profile: its cookies sign in as you"),
    // The agents' own credentials and transcripts.
    row(Home, ".claude/.credentials.json", File, Hidden, SECRET),
    row(Var("CLAUDE_CONFIG_DIR"), ".credentials.json", File, Hidden, SECRET),
    row(Home, ".claude.json", File, Hidden, "Claude Code's account and per-project state"),
    row(Home, ".claude.json.backup", File, Hidden, "Claude Code's account and per-project state"),
    row(Home, ".claude/backups", Dir, Hidden, "Claude Code's account and per-project state"),
    row(Var("CLAUDE_CONFIG_DIR"), ".claude.json", File, Hidden, "Claude Code's account and per-project state"),
    row(Var("CLAUDE_CONFIG_DIR"), "backups", Dir, Hidden, "Claude Code's account and per-project state"),
    row(Home, ".gemini/oauth_creds.json", File, Hidden, SECRET),
    row(Var("GEMINI_CLI_HOME"), ".gemini/oauth_creds.json", File, Hidden, SECRET),
    row(Home, ".codex/auth.json", File, Hidden, SECRET),
    row(Var("CODEX_HOME"), "auth.json", File, Hidden, SECRET),
    row(Home, ".claude/projects", Dir, Hidden, HISTORY),
    row(Var("CLAUDE_CONFIG_DIR"), "projects", Dir, Hidden, HISTORY),
    row(Home, ".gemini/tmp", Dir, Hidden, HISTORY),
    row(Var("GEMINI_CLI_HOME"), ".gemini/tmp", Dir, Hidden, HISTORY),
    row(Home, ".codex/sessions", Dir, Hidden, HISTORY),
    // Beside the transcripts (attack round 9 of 2026-11-27 read each from a confined command):
    // every prompt typed in any project, backups of other projects' files, shell snapshots.
    row(Home, ".claude/history.jsonl", File, Hidden, HISTORY),
    row(Home, ".claude/file-history", Dir, Hidden, HISTORY),
    row(Home, ".claude/debug", Dir, Hidden, HISTORY),
    row(Home, ".claude/shell-snapshots", Dir, Hidden, HISTORY),
    row(Home, ".claude/todos", Dir, Hidden, HISTORY),
    row(Var("CLAUDE_CONFIG_DIR"), "history.jsonl", File, Hidden, HISTORY),
    row(Var("CLAUDE_CONFIG_DIR"), "file-history", Dir, Hidden, HISTORY),
    row(Var("CLAUDE_CONFIG_DIR"), "shell-snapshots", Dir, Hidden, HISTORY),
    row(Var("CLAUDE_CONFIG_DIR"), "debug", Dir, Hidden, HISTORY),
    row(Var("CLAUDE_CONFIG_DIR"), "todos", Dir, Hidden, HISTORY),
    row(Home, ".codex/history.jsonl", File, Hidden, HISTORY),
    row(Home, ".codex/log", Dir, Hidden, HISTORY),
    row(Var("CODEX_HOME"), "history.jsonl", File, Hidden, HISTORY),
    row(Var("CODEX_HOME"), "sessions", Dir, Hidden, HISTORY),
    row(Var("CODEX_HOME"), "log", Dir, Hidden, HISTORY),
    // Shell and REPL histories.
    row(Home, ".bash_history", File, Hidden, HISTORY),
    row(Home, ".zsh_history", File, Hidden, HISTORY),
    row(Home, ".histfile", File, Hidden, HISTORY),
    row(Home, ".local/share/fish/fish_history", File, Hidden, HISTORY),
    row(Var("XDG_DATA_HOME"), "fish/fish_history", File, Hidden, HISTORY),
    row(Home, ".python_history", File, Hidden, HISTORY),
    row(Home, ".node_repl_history", File, Hidden, HISTORY),
    row(Home, ".psql_history", File, Hidden, HISTORY),
    row(Home, ".mysql_history", File, Hidden, HISTORY),
    row(Home, ".sqlite_history", File, Hidden, HISTORY),
    row(Home, ".local/share/atuin", Dir, Hidden, HISTORY),
    row(Home, ".viminfo", File, Hidden, HISTORY),
    row(Home, ".lesshst", File, Hidden, HISTORY),
];

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
