//! The one catalog of the environment variables hookd reads: what each does to hookd (decides
//! what is loaded, names a protected place, steers where hookd reports, switches a safety
//! setting, carries a secret). Loading's digest, the places' variables, the adapter's scrub,
//! the hooks' environment, `env.keep`'s refusals and docs/configuration.md's table are all
//! read from [`VARS`].

/// What a variable does to hookd. A variable may have several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// Configuration loading reads it: its value changes the configuration (a daemon answers
    /// only clients whose values are its own).
    Config,
    /// It names where a protected place is (`crate::places`).
    Place,
    /// It steers hookd itself (what it loads, trusts, where it reports, which daemon): a
    /// repository's files may not set it for the agent, and hooks never get a repository's
    /// value of it.
    Steering,
    /// A safety switch a project's files may turn on, never off.
    OnlyOn,
    /// A secret of hookd's: never handed to hooks.
    Secret,
}

/// One variable.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Var {
    /// Its name.
    pub name: &'static str,
    /// What it does to hookd.
    pub roles: &'static [Role],
    /// Its effect, for docs/configuration.md's table (empty: listed with the places instead).
    pub doc: &'static str,
}

use Role::{Config, OnlyOn, Place, Secret, Steering};

const fn var(name: &'static str, roles: &'static [Role], doc: &'static str) -> Var {
    Var { name, roles, doc }
}

/// Every variable hookd reads, hookd's own first, then the ones naming places.
#[rustfmt::skip]
pub const VARS: &[Var] = &[
    var("INFER_HOOKS_ENABLED", &[Config, Steering], "overrides `enabled` of `hooks.yaml` (`true/false`, `1/0`, `yes/no`, `on/off`)"),
    var("INFER_REMINDERS_ENABLED", &[Config, Steering], "overrides `enabled` of `reminders.yaml`"),
    var("INFER_REMINDERS_CONFIG", &[Config, Steering], "inline YAML that stands for your `reminders.yaml` (a trusted project's reminders are still added)"),
    var("INFER_TOOLS_BASH_ALLOW_APPEND", &[Config, Steering], "allow entries appended to `tools.bash.mode.all.allow`, separated by commas or newlines"),
    var("HOOKD_TRUST_PROJECT", &[Config, Steering], "on: trust the project's `.infer/` for this run (CI on your own repository)"),
    var("HOOKD_GATE_SHELL_TOOLS", &[Config, Steering, OnlyOn], "on: gate the model's shell and file tools (as `gate_shell_tools: true`); a project's files may turn it on, never off"),
    var("HOOKD_FAIL_CLOSED", &[Steering, OnlyOn], "on: adapters deny when hookd itself fails (as `--fail-closed`); a value that is neither on nor off counts as on"),
    var("HOOKD_NO_DAEMON", &[Steering], "on: adapters dispatch in their own process (as `--no-daemon`); a value that is neither on nor off counts as off, with a line on stderr"),
    var("HOOKD_EVENTS", &[Steering, Place], "`hookd adapter` and `hookd dispatch`: append events to this file (as `--events`; `-` for stderr)"),
    var("HOOKD_DAEMON_TIMEOUT_MS", &[Steering], "`hookd adapter` and `hookd dispatch`: how long a running daemon has to take a dispatch (as `--daemon-timeout-ms`; default 2000)"),
    var("HOOKD_SOCKET", &[Steering, Place], "the daemon's socket (default `$XDG_RUNTIME_DIR/hookd.sock`, else `/run/user/UID/hookd.sock` when that directory is yours, mode 0700, else `~/.infer/hookd.sock`)"),
    var("HOOKD_TOKEN", &[Secret], "`hookd serve --http`: the token HTTP clients must carry (as `--token`); never handed to hooks"),
    var("HOOKD_TRUST_FILE", &[Config, Steering, Place], "where trust records are kept (default `$XDG_CONFIG_HOME/hookd/trust.json`, else `~/.config/hookd/trust.json`)"),
    var("HOOKD_STATE_DIR", &[Steering, Place], "where per-session reminder state is kept (default `$XDG_STATE_HOME/hookd`, else `~/.local/state/hookd`)"),
    var("HOOKD_CONFINED_AGENT", &[Steering], "set by `hookd run --confine` in the agent it confines: where that agent's sandbox is evidently around, its commands and hooks get the nested sandbox; a repository's value is removed, and elsewhere it changes nothing"),
    var("HOOKD_LOG", &[Steering], "log level on stderr: `off`, `error`, `warn` (default), `info` (one line per dispatch: point, session, reminders, commands, skipped), `debug` (also the files read and the trust state, each hook selected or not and why, each gate verdict on a model's shell call, each run or skip with its status), `trace`"),
    var("HOME", &[Steering, Place], "your home: `~/.infer/` and the places below it; a repository's value is replaced by the user database's"),
    var("PATH", &[Steering], "where hooks' programs are found; a repository's entries are removed"),
    var("XDG_CONFIG_HOME", &[Config, Steering, Place], "the configuration home (`hookd/trust.json`, Crush's and git's user settings)"),
    var("XDG_STATE_HOME", &[Steering, Place], "the state home (`hookd/`: per-session state)"),
    var("XDG_RUNTIME_DIR", &[Steering, Place], "the runtime directory (the daemon's socket and token, `hookd*`)"),
    var("XDG_DATA_HOME", &[Place], ""),
    var("CLAUDE_CONFIG_DIR", &[Place], ""),
    var("GEMINI_CLI_HOME", &[Place], ""),
    var("CRUSH_GLOBAL_CONFIG", &[Place], ""),
    var("CRUSH_GLOBAL_DATA", &[Place], ""),
    var("CODEX_HOME", &[Place], ""),
    var("CARGO_HOME", &[Place], ""),
    var("GH_CONFIG_DIR", &[Place], ""),
    var("KUBECONFIG", &[Place], ""),
    var("AWS_SHARED_CREDENTIALS_FILE", &[Place], ""),
    var("AWS_CONFIG_FILE", &[Place], ""),
    var("DOCKER_CONFIG", &[Place], ""),
    var("GNUPGHOME", &[Place], ""),
    var("NETRC", &[Place], ""),
    var("CLOUDSDK_CONFIG", &[Place], ""),
    var("AZURE_CONFIG_DIR", &[Place], ""),
    var("GRADLE_USER_HOME", &[Place], ""),
    var("NPM_CONFIG_USERCONFIG", &[Place], ""),
    var("HF_HOME", &[Place], ""),
    var("PASSWORD_STORE_DIR", &[Place], ""),
    var("KAGGLE_CONFIG_DIR", &[Place], ""),
    var("PULUMI_HOME", &[Place], ""),
    var("TF_CLI_CONFIG_FILE", &[Place], ""),
    var("RCLONE_CONFIG", &[Place], ""),
    var("SOPS_AGE_KEY_FILE", &[Place], ""),
    var("GOOGLE_APPLICATION_CREDENTIALS", &[Place], ""),
    var("RUSTUP_HOME", &[Place], ""),
    var("GOENV", &[Place], ""),
    var("IPYTHONDIR", &[Place], ""),
];

/// The variables that carry a secret by their name, as patterns matched without regard to case
/// (`*` any run of characters): a confined command does not get them unless the user's
/// `sandbox.env.keep` names them (Codex's default excludes, `*KEY*`, `*SECRET*`, `*TOKEN*`, are
/// the anchor; a bare `*KEY*` would take git's `GIT_CONFIG_KEY_0` from its `GIT_CONFIG_COUNT`,
/// which Gemini CLI sets for its shell, and git then refuses to start).
pub const SECRET_PATTERNS: &[&str] = &[
    "*_KEY",
    "*API_KEY*",
    "*APIKEY*",
    "*ACCESS_KEY*",
    "*PRIVATE_KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*PASSPHRASE*",
    "*_PASS",
    "PASS",
    "*_PWD",
    "*_PAT",
    "*JWT*",
    "*_AUTH",
    "*AUTH_CONFIG*",
    "*COOKIE*",
    "*BEARER*",
    "*_SESSION",
    "OP_SESSION_*",
    "*WEBHOOK*",
    "*_DSN",
    "*DATABASE_URL*",
    "*CONNECTION_STRING*",
    "AWS_*",
    "AZURE_*",
    // Found by attack round 9 (2026-11-27): each reached a confined command.
    "*_PW",
    "*AUTHKEY*",
    "*AUTHORIZATION*",
    "*WRITEKEY*",
    "*SIGNINGKEY*",
    "*_HEADERS",
    "KUBE_CONFIG_DATA",
    "SONAR_LOGIN",
];

/// Whether `name` carries a secret: one of hookd's secrets ([`Role::Secret`]) or a name
/// [`SECRET_PATTERNS`] matches.
pub fn carries_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    // Bundler's credentials for a host: `BUNDLE_GEMS__EXAMPLE__COM=user:pass`.
    has(name, Role::Secret)
        || (upper.starts_with("BUNDLE_") && upper.contains("__"))
        || SECRET_PATTERNS.iter().any(|p| {
            let inner = p.trim_matches('*');
            match (p.starts_with('*'), p.ends_with('*')) {
                (true, true) => upper.contains(inner),
                (false, true) => upper.starts_with(inner),
                (true, false) => upper.ends_with(inner),
                (false, false) => upper == inner,
            }
        })
}

/// The names with `role`.
pub fn with(role: Role) -> impl Iterator<Item = &'static str> {
    VARS.iter()
        .filter(move |v| v.roles.contains(&role))
        .map(|v| v.name)
}

/// Whether `name` has `role`.
pub fn has(name: &str, role: Role) -> bool {
    VARS.iter()
        .any(|v| v.name == name && v.roles.contains(&role))
}

/// The catalog's variable a keep list entry (a name, or a prefix followed by `*`) would name,
/// if any: no keep list hands a repository's value of one of them to hooks.
pub fn named_by_pattern(pattern: &str) -> Option<&'static str> {
    VARS.iter()
        .map(|v| v.name)
        .find(|name| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => *name == pattern,
        })
}

/// docs/configuration.md's table of variables.
pub fn markdown() -> String {
    let mut out = String::from("| variable | effect |\n| --- | --- |\n");
    for v in VARS.iter().filter(|v| !v.doc.is_empty()) {
        out.push_str(&format!("| `{}` | {} |\n", v.name, v.doc));
    }
    let places: Vec<String> = with(Role::Place)
        .filter(|n| VARS.iter().any(|v| v.name == *n && v.doc.is_empty()))
        .map(|n| format!("`{n}`"))
        .collect();
    out.push_str(&format!(
        "| {} | where an agent or a tool keeps its settings or credentials: hookd protects them there too (docs/security.md, \"Places\") |\n",
        places.join(", ")
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_a_place_is_anchored_at_is_a_place_variable() {
        for v in crate::places::place_vars() {
            assert!(
                has(v, Role::Place),
                "{v} anchors a place but is not Role::Place"
            );
        }
        for v in with(Role::Place) {
            assert!(
                crate::places::place_vars().any(|p| p == v)
                    || matches!(v, "HOME" | "XDG_CONFIG_HOME"),
                "{v} is a place variable no place is anchored at"
            );
        }
    }

    #[test]
    fn secrets_are_found_by_their_names() {
        for name in [
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "HOOKD_TOKEN",
            "NPM_CONFIG__AUTHTOKEN",
            "DB_PASSWORD",
            "gh_token",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "STRIPE_SECRET",
            "SSH_PRIVATE_KEY_FILE",
            "GEMINI_API_KEY",
            "OPENAI_APIKEY",
            "SIGNING_KEY",
            "MYSQL_PWD",
            "PASS",
            "SMTP_PASS",
            "GH_PAT",
            "NPM_AUTH",
            "BW_SESSION",
            "OP_SESSION_my",
            "CI_JOB_JWT",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "DOCKER_AUTH_CONFIG",
            "DATABASE_URL",
            "CONNECTION_STRING",
            "GPG_PASSPHRASE",
            "COOKIE",
            "AUTH_BEARER",
        ] {
            assert!(carries_secret(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "CARGO_HOME",
            "TERM",
            "RUST_LOG",
            "GIT_CONFIG_KEY_0",
            "KEYTIMEOUT",
            "PWD",
            "OLDPWD",
            "CLASSPATH",
            "GIT_ASKPASS",
            "SSH_ASKPASS",
            "XDG_SESSION_ID",
            "XDG_SESSION_TYPE",
            "XAUTHORITY",
        ] {
            assert!(!carries_secret(name), "{name}");
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, v) in VARS.iter().enumerate() {
            assert!(!VARS[..i].iter().any(|w| w.name == v.name), "{}", v.name);
        }
    }

    #[test]
    fn a_pattern_names_the_catalogs_variables() {
        assert_eq!(named_by_pattern("HOOKD_*"), Some("HOOKD_TRUST_PROJECT"));
        assert_eq!(named_by_pattern("XDG_DATA_HOME"), Some("XDG_DATA_HOME"));
        assert_eq!(named_by_pattern("GIT_CONFIG_*"), None);
    }
}
