//! `hookd trust`: review a project's `.infer/`, then trust, list or revoke.

use super::check::coverage_line;
use super::error::{Done, Error};
use super::{out, plural};
use hookd::config::{self, LoadOptions, Mode};
use hookd::display::{visible, visible_lines};
use hookd::gate::{self, Verdict};

/// `hookd trust`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// List the trusted projects.
    #[arg(long, conflicts_with = "revoke")]
    pub(super) list: bool,
    /// Stop trusting this project.
    #[arg(long)]
    pub(super) revoke: bool,
}

/// `hookd trust`.
pub(super) fn run(a: Args) -> Done {
    trust(a.list, a.revoke)
}

pub(super) fn trust(list: bool, revoke: bool) -> Done {
    let opts = match LoadOptions::from_process(None) {
        Ok(o) => o,
        Err(e) => return Err(Error::CurrentDir(e)),
    };
    let Some(store_path) = opts.trust_file.clone() else {
        return Err(Error::Cannot(
            "no place for trust records: set HOME, XDG_CONFIG_HOME or HOOKD_TRUST_FILE".into(),
        ));
    };
    let store = config::TrustStore::new(store_path);
    let project = opts.project_dir.clone();
    if list {
        return match store.list() {
            Ok(records) if records.is_empty() => {
                out(&format!(
                    "no project is trusted ({})\n",
                    store.path().display()
                ));
                Ok(0)
            }
            Ok(records) => {
                let mut s = String::new();
                for (path, r) in records {
                    s.push_str(&format!(
                        "{}\n  trusted {}  sha256:{}  {}\n",
                        visible(&path),
                        visible(&r.trusted_at),
                        visible(r.sha256.get(..16).unwrap_or(&r.sha256)),
                        visible(&r.files.join(", "))
                    ));
                }
                out(&s);
                Ok(0)
            }
            Err(e) => Err(Error::library(e)),
        };
    }
    if revoke {
        return match store.revoke(&project) {
            Ok(true) => {
                out(&format!(
                    "hookd: {} is no longer trusted\n",
                    visible(&project.display().to_string())
                ));
                Ok(0)
            }
            Ok(false) => Err(Error::No(format!(
                "hookd: {} was not trusted",
                visible(&project.display().to_string())
            ))),
            Err(e) => Err(Error::library(e)),
        };
    }
    // Load as if trusted, to show everything the project would be able to do.
    let mut opts = opts;
    opts.trust_project = true;
    let config = match config::load(&opts) {
        Ok(c) => c,
        Err(e) => {
            let n = e.errors().count();
            return Err(Error::Cannot(format!("{}\n\nhookd: the project's configuration has {n} error{}; fix it before trusting it", visible_lines(&e.to_string()), plural(n))));
        }
    };
    let Some(fp) = config.fingerprint.clone() else {
        return Err(Error::No(format!(
            "hookd: there is nothing to trust: no .infer/ configuration in {}, and none of your hooks runs its files",
            project.display()
        )));
    };
    let gate = gate::Gate::new(&config.allow, config.allow_file.clone())
        .with_untrusted(&config.ignored_allow);
    let from_project = |o: &config::Origin| o.source == config::Source::Project;
    let mut s = format!(
        "Trusting {}. Its files will be able to:\n",
        visible(&project.display().to_string())
    );
    // The user's own hooks that run the project's files: trusting runs that code too.
    let path = std::env::var_os("PATH");
    for h in config
        .hooks
        .hooks
        .iter()
        .filter(|h| !from_project(&h.origin))
    {
        let Some(argv) = gate::argv_of(&h.command) else {
            continue;
        };
        let code = config::project_code(&project, &argv, path.as_deref());
        if !code.is_empty() {
            s.push_str(&format!(
                "  be run by your own hook {} `{}` ({}): {}\n",
                visible(&h.name),
                visible(&h.command),
                visible(&h.origin.to_string()),
                visible(&code.join(", "))
            ));
        }
    }
    let hooks: Vec<_> = config
        .hooks
        .hooks
        .iter()
        .filter(|h| from_project(&h.origin))
        .collect();
    s.push_str(&format!(
        "  run {} hook{}{}:\n",
        hooks.len(),
        plural(hooks.len()),
        if config.hooks.enabled {
            ""
        } else {
            " (hooks are disabled)"
        }
    ));
    for h in &hooks {
        let verdict = match gate.verdict(&h.command, Mode::Standard) {
            Verdict::Allowed(a) => format!(
                "allowed by `{}` ({})",
                visible(&a.entry.pattern),
                visible(&a.entry.origin.to_string())
            ),
            Verdict::Denied(d) => format!("denied ({}) in mode standard", d.reason),
        };
        s.push_str(&format!(
            "    {:<16} {:<14} `{}`  {verdict}\n",
            h.hook.name(),
            visible(&h.name),
            visible(&h.command)
        ));
        if let Some(line) = coverage_line(&config, &h.command) {
            s.push_str(&format!("      {line}\n"));
        }
    }
    let entries: Vec<_> = config
        .allow
        .all_entries()
        .filter(|e| from_project(&e.origin))
        .collect();
    s.push_str(&format!(
        "  allow {} command pattern{}:\n",
        entries.len(),
        plural(entries.len())
    ));
    for e in &entries {
        let loud = match gate::unrestricted_probe(&e.pattern) {
            Some(probe) => format!("  UNRESTRICTED: admits `{probe}`"),
            None => gate::lint::lint_entry(&e.pattern)
                .iter()
                .find_map(|w| match w.kind {
                    gate::lint::LintKind::Wrapper => {
                        Some("  a wrapper: the command behind it must be allowed on its own")
                    }
                    gate::lint::LintKind::Interpreter => {
                        Some("  an interpreter: runs program text the gate does not read")
                    }
                    _ => None,
                })
                .unwrap_or_default()
                .to_string(),
        };
        s.push_str(&format!(
            "    {:<9} '{}' ({}){loud}\n",
            e.list,
            visible(&e.pattern),
            visible(&e.origin.to_string())
        ));
    }
    let reminders: Vec<_> = config
        .reminders
        .reminders
        .iter()
        .filter(|r| from_project(&r.origin))
        .map(|r| visible(&r.name))
        .collect();
    s.push_str(&format!(
        "  inject {} reminder{} into the model's context{}\n",
        reminders.len(),
        plural(reminders.len()),
        if reminders.is_empty() {
            String::new()
        } else {
            format!(": {}", reminders.join(", "))
        }
    ));
    let keep = &config.hooks.project_env_keep;
    if !keep.is_empty() {
        s.push_str(&format!(
            "  keep its own variables in every hook's environment, yours included: {} (env.keep)\n",
            visible(&keep.names().join(", "))
        ));
    }
    s.push_str(&format!(
        "Fingerprint sha256:{} over {}\n",
        fp.sha256,
        visible(&fp.files.join(", "))
    ));
    if let Err(e) = store.record(&project, &fp) {
        out(&s);
        return Err(Error::library(e));
    }
    s.push_str("hookd: trusted. Any change to these files makes the project untrusted again; `hookd trust --revoke` undoes this.\n");
    out(&s);
    Ok(0)
}
