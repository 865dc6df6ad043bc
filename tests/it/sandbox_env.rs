//! Issue 40 item 4: secret-carrying variables (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`,
//! `AWS_*`, hookd's own token; `hookd::vars::SECRET_PATTERNS`) do not reach a confined
//! command, through `hookd exec` and through a hook, unless the user's `sandbox.env.keep`
//! names them; a project cannot keep them, and nothing keeps hookd's token.

use crate::sandbox::{confinable, hookd, project};
use crate::support::{json_lines, stderr, stdout};

const SECRETS: [(&str, &str); 25] = [
    ("ANTHROPIC_API_KEY", "sk-ant-secret"),
    ("GITHUB_TOKEN", "ghp_secret"),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
    ("AWS_PROFILE", "prod"),
    ("HOOKD_TOKEN", "hookd-secret"),
    ("DB_PASSWORD", "hunter2"),
    // The attack round of 2026-11-27: names the first patterns missed, and a value that is a
    // URL with a password whatever its variable's name.
    ("MYSQL_PWD", "mysql-secret"),
    ("BW_SESSION", "bitwarden-session"),
    ("GH_PAT", "github-pat"),
    ("CI_JOB_JWT", "ci-jwt"),
    ("SENTRY_DSN", "sentry-dsn"),
    ("CACHE_ADDRESS", "redis://:redis-secret@cache:6379/0"),
    // Attack round 9 (2026-11-27): names and values the patterns and the value check missed.
    (
        "OTEL_EXPORTER_OTLP_HEADERS",
        "Authorization=Bearer otel-secret",
    ),
    (
        "ANTHROPIC_CUSTOM_HEADERS",
        "x-api-key: custom-header-secret",
    ),
    ("BUNDLE_GEMS__EXAMPLE__COM", "u:bundler-secret"),
    ("SONAR_LOGIN", "sonar-secret"),
    ("LDAP_BIND_PW", "ldap-secret"),
    ("HONEYCOMB_WRITEKEY", "honeycomb-secret"),
    ("TS_AUTHKEY", "tailscale-secret"),
    ("KUBE_CONFIG_DATA", "kube-config-secret"),
    ("APP_PEM", "-----BEGIN RSA PRIVATE KEY-----pem-secret"),
    (
        "JDBC_URL",
        "jdbc:postgresql://db/x?user=u&password=jdbc-secret",
    ),
    ("SQL_CONN", "Server=db;User Id=u;Password=ado-secret;"),
    ("REPO_URL", "https://ghp_token-secret@github.com/o/r.git"),
    ("PROXY_URL", "http://AKIAX:proxy/secret@proxy.example:3128"),
];

#[test]
fn secret_variables_do_not_reach_a_confined_command_unless_the_user_keeps_them() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let env_of = |confined: bool| {
        let mut c = if confined {
            hookd(&p, &tmp, &["exec", "--", "env"])
        } else {
            let mut c = std::process::Command::new("env");
            c.env("HOME", p.home.path());
            c
        };
        c.current_dir(p.path())
            .env("LANG", "C.UTF-8")
            .env("EDITOR", "vi");
        for (k, v) in SECRETS {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    // Unconfined, every one is there: the attack (a confined `make test` sending the
    // environment away) would have them.
    let open = env_of(false);
    for (k, v) in SECRETS {
        assert!(open.contains(&format!("{k}={v}\n")), "{k}");
    }
    let confined = env_of(true);
    for (k, v) in SECRETS {
        assert!(
            !confined.contains(v),
            "{k} reached the confined command:\n{confined}"
        );
    }
    for kept in ["LANG=C.UTF-8\n", "EDITOR=vi\n", "PATH="] {
        assert!(confined.contains(kept), "{kept}\n{confined}");
    }
    // The user keeps three, by prefix and by name; hookd's token stays out whatever the list.
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true, env: {keep: ['GITHUB_*', AWS_SECRET_ACCESS_KEY, AWS_PROFILE]}}\n",
    );
    let confined = env_of(true);
    for kept in [
        "GITHUB_TOKEN=ghp_secret\n",
        "AWS_SECRET_ACCESS_KEY=aws-secret\n",
        "AWS_PROFILE=prod\n",
    ] {
        assert!(confined.contains(kept), "{kept}\n{confined}");
    }
    for gone in ["sk-ant-secret", "hookd-secret", "hunter2"] {
        assert!(!confined.contains(gone), "{gone}\n{confined}");
    }
    // A hook confined by the same policy gets the same environment.
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: env, hook: post_session, command: env}]\n",
    );
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^env$']}}}}\n",
    );
    let mut c = hookd(
        &p,
        &tmp,
        &["dispatch", "post_session", "--no-daemon", "--events", "-"],
    );
    for (k, v) in SECRETS {
        c.env(k, v);
    }
    let o = crate::support::with_stdin(c, r#"{"session_id":"s"}"#);
    let events = json_lines(&stderr(&o));
    let ran = events
        .iter()
        .find(|e| e["type"] == "hook_command")
        .expect("the hook ran");
    let out = ran["stdout"].as_str().unwrap();
    assert!(out.contains("PATH="), "{out}");
    for (k, v) in SECRETS {
        assert!(!out.contains(v), "{k} reached the confined hook:\n{out}");
    }
}

#[test]
fn a_project_cannot_keep_secrets_and_nothing_keeps_hookds_token() {
    let (p, _tmp) = project();
    p.write("config.yaml", "sandbox: {env: {keep: [GITHUB_TOKEN]}}\n");
    let o = p.cmd(&["check"]).output().unwrap();
    let said = stderr(&o);
    assert!(
        said.contains("a project cannot hand confined commands more of your secrets; `sandbox.env` is ignored"),
        "{said}"
    );
    p.write("config.yaml", "{}\n");
    p.write_home("config.yaml", "sandbox: {env: {keep: [HOOKD_TOKEN]}}\n");
    let o = p.cmd(&["check"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`HOOKD_TOKEN` cannot be kept: HOOKD_TOKEN steers hookd itself, names a place it protects, or is its secret"),
        "{}",
        stderr(&o)
    );
}

/// Gemini CLI hands its shell git's configuration as `GIT_CONFIG_COUNT` with
/// `GIT_CONFIG_KEY_0`/`GIT_CONFIG_VALUE_0` (found with the real Gemini CLI 0.61.0: an earlier
/// secret pattern, `*KEY*`, took the key and left the count, and every confined `git` failed
/// with "missing config key GIT_CONFIG_KEY_0"). The agent's git configuration reaches its
/// confined git whole.
#[test]
fn the_agents_git_configuration_reaches_a_confined_git_whole() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let o = hookd(
        &p,
        &tmp,
        &["exec", "--", "git", "config", "--get", "core.pager"],
    )
    .current_dir(p.path())
    .env("GIT_CONFIG_COUNT", "1")
    .env("GIT_CONFIG_KEY_0", "core.pager")
    .env("GIT_CONFIG_VALUE_0", "cat")
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "cat\n");
}
