//! `hookd check`: every file validated, what would run where, the allow-list lint, trust.

use super::error::{Done, Error};
use super::load::{load, print_warnings, ConfigArgs, GateArgs};
use super::{out, plural};
use hookd::catalog::HookPoint;
use hookd::config::{self, Config, Mode};
use hookd::dispatch::Engine;
use hookd::display::visible;
use hookd::gate::{self, Verdict};

/// `hookd check`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    pub(super) gate: GateArgs,
    /// Exit 1 when any hook would be refused or skipped (denied by the gate, untrusted,
    /// switched off, or its program missing), for CI.
    #[arg(long)]
    pub(super) strict: bool,
}

/// `hookd check`.
pub(super) fn run(a: Args) -> Done {
    check(a.gate.cfg, a.gate.mode, a.strict)
}

pub(super) fn check(cfg: ConfigArgs, mode: Mode, strict: bool) -> Done {
    // An invalid configuration is `check`'s answer (exit 1), not a failure to run.
    let config = load(cfg).map_err(|e| Error::Invalid(Box::new(e)))?;
    print_warnings(&config);
    // Loading only checks syntax; `check` compiles every entry, as the gate will.
    let uncompilable: Vec<String> = config
        .allow
        .all_entries()
        .filter_map(|e| {
            gate::compile_entry(&e.pattern).err().map(|err| {
                format!(
                    "error: allow entry `{}` cannot be compiled\n  --> {}\n  = help: {}",
                    visible(&e.pattern),
                    visible(&e.origin.to_string()),
                    err.what()
                )
            })
        })
        .collect();
    if !uncompilable.is_empty() {
        return Err(Error::No(format!(
            "{}\n\nhookd: the configuration has {} error{}",
            uncompilable.join("\n\n"),
            uncompilable.len(),
            plural(uncompilable.len())
        )));
    }
    // Entries that cannot mean what their author meant (gate::lint), each with its fix.
    let mut unrestricted = missing_installs();
    let mut notes = Vec::new();
    for e in config.allow.all_entries() {
        let modes = format!(
            "in mode{} `{}`",
            if e.list == "all" { "s" } else { "" },
            e.list
        );
        for w in gate::lint::lint_entry(&e.pattern) {
            let what = match w.kind {
                gate::lint::LintKind::Unrestricted => {
                    format!("is UNRESTRICTED: {modes} {}", w.message)
                }
                _ => format!("{modes}: {}", w.message),
            };
            if w.kind == gate::lint::LintKind::Wrapper {
                notes.push(format!(
                    "note: allow entry `{}` ({}) {what}",
                    visible(&e.pattern),
                    visible(&e.origin.to_string()),
                ));
                continue;
            }
            unrestricted.push(format!(
                "warning: allow entry `{}` ({}) {what}\n  = fix: {}",
                visible(&e.pattern),
                visible(&e.origin.to_string()),
                visible(&w.fix)
            ));
        }
    }
    if !unrestricted.is_empty() {
        eprintln!("{}\n", unrestricted.join("\n"));
    }
    if !notes.is_empty() {
        eprintln!("{}\n", notes.join("\n"));
    }
    let engine = Engine::builder(config).build();
    let config = engine.config();
    let mut s = String::new();
    let sources = if config.sources.is_empty() {
        "none found (nothing configured)".to_string()
    } else {
        visible(&config.sources.join(", ")).into_owned()
    };
    s.push_str(&format!("sources: {sources}\n"));
    s.push_str(&trust_line(config));
    s.push('\n');
    s.push_str(&format!(
        "hooks: {} ({} configured)\n",
        if config.hooks.enabled {
            "enabled"
        } else {
            "disabled (set `enabled: true` in hooks.yaml or INFER_HOOKS_ENABLED=true)"
        },
        config.hooks.hooks.len()
    ));
    // Hooks that will not run, for --strict: switched off, untrusted or denied.
    let mut refused: Vec<String> = config
        .hooks
        .off
        .iter()
        .map(|o| visible(o).into_owned())
        .collect();
    for off in &refused {
        s.push_str(&format!("  {off}\n"));
    }
    // What an untrusted project's files turn on is said next to what is in effect.
    let until_trusted =
        |what: String| format!("; the project's {what}, ignored until you trust it");
    s.push_str(&format!(
        "reminders: {} ({} configured){}\n",
        if config.reminders.enabled {
            "enabled"
        } else {
            "disabled"
        },
        config.reminders.reminders.len(),
        match config.ignored_reminders {
            0 => String::new(),
            n => until_trusted(format!("reminders.yaml adds {n} reminder{}", plural(n))),
        }
    ));
    let project_gates = config.ignored_switches.contains(&"gate_shell_tools");
    s.push_str(&if config.policy.gate_shell_tools {
        "model's shell commands: gated by the allow-list at pre_tool (gate_shell_tools)\n"
            .to_string()
    } else {
        format!(
            "model's shell commands: not gated (gate_shell_tools is off){}\n",
            if project_gates {
                until_trusted("hooks.yaml turns it on".into())
            } else {
                String::new()
            }
        )
    });
    if config.ignored_switches.contains(&"fail_closed") && !config.policy.fail_closed {
        s.push_str(&format!(
            "hookd's own failures: allow the call (fail_closed is off){}\n",
            until_trusted("hooks.yaml turns fail_closed on".into())
        ));
    }
    s.push_str(&environment_lines(config));
    let (line, cannot) = sandbox_line(config);
    s.push_str(&line);
    refused.extend(cannot);
    if let Some(e) = super::telemetry::exporter() {
        s.push_str(&format!("OpenTelemetry: {}\n", e.settings().describe()));
    }
    s.push_str(&format!(
        "allow-list for mode {mode}: {} entries\n",
        config.allow.for_mode(mode).count()
    ));
    // The gate as it will be once the project is trusted: its ignored entries added.
    let trusted_gate = {
        let mut all: Vec<_> = config.allow.all_entries().cloned().collect();
        all.extend(config.ignored_allow.iter().cloned());
        gate::Gate::new(
            &config::AllowLists::from_entries(all),
            config.allow_file.clone(),
        )
    };
    for point in HookPoint::ALL {
        let hooks: Vec<_> = config
            .hooks
            .hooks
            .iter()
            .filter(|h| h.hook == point)
            .collect();
        let reminders: Vec<_> = config
            .reminders
            .reminders
            .iter()
            .filter(|r| r.hook == point)
            .collect();
        if hooks.is_empty() && reminders.is_empty() {
            continue;
        }
        s.push_str(&format!("\n{point}\n"));
        for h in hooks {
            let untrusted =
                h.origin.source == config::Source::Project && !config.trust.allows_project();
            let verdict = engine.gate().verdict(&h.command, mode);
            // An admitted hook whose program is missing does nothing when its point comes:
            // the run's own sentence (`gofmt` was not found on PATH), before any run.
            let missing = match &verdict {
                Verdict::Allowed(a) if !untrusted => a
                    .argv
                    .first()
                    .and_then(|p| hookd::runner::find_program(p, &config.project_dir).err()),
                _ => None,
            };
            if let Some(why) = &missing {
                refused.push(format!(
                    "hook {} ({}) would not start: {}",
                    visible(&h.name),
                    visible(&h.origin.to_string()),
                    visible(why)
                ));
            }
            if untrusted || matches!(verdict, Verdict::Denied(_)) {
                refused.push(format!(
                    "hook {} ({}) would be {}",
                    visible(&h.name),
                    visible(&h.origin.to_string()),
                    if untrusted {
                        "skipped: the project is not trusted"
                    } else {
                        "refused by the gate"
                    }
                ));
            }
            let verdict = match verdict {
                // What the gate will say once the project is trusted: with its entries too.
                _ if untrusted => format!(
                    "SKIPPED (untrusted project): `hookd trust` after review; once trusted, {}",
                    match trusted_gate.verdict(&h.command, mode) {
                        Verdict::Allowed(a) => format!(
                            "allowed by `{}` ({})",
                            visible(&a.entry.pattern),
                            visible(&a.entry.origin.to_string())
                        ),
                        Verdict::Denied(d) =>
                            format!("DENIED ({}): {}", d.reason, visible(&d.detail)),
                    }
                ),
                Verdict::Allowed(a) => format!(
                    "allowed by `{}` ({}); runs {}",
                    visible(&a.entry.pattern),
                    visible(&a.entry.origin.to_string()),
                    visible(&format!("{:?}", a.argv))
                ),
                Verdict::Denied(d) => format!(
                    "DENIED ({}): {}\n      hint: {}",
                    d.reason,
                    visible(&d.detail),
                    visible(&d.hint)
                ),
            };
            s.push_str(&format!(
                "  hook {} `{}` (timeout {}s, {})\n    -> {verdict}\n",
                visible(&h.name),
                visible(&h.command),
                h.timeout.as_secs(),
                visible(&h.timeout_at.to_string())
            ));
            if let Some(why) = &missing {
                s.push_str(&format!("    ! WOULD NOT START: {}\n", visible(why)));
            }
            if h.origin.source == config::Source::Project {
                if let Some(line) = coverage_line(config, &h.command) {
                    s.push_str(&format!("    {line}\n"));
                }
            } else if let Some((line, covered)) = project_code_line(config, &h.command) {
                if !covered {
                    refused.push(format!(
                        "hook {} ({}) would be skipped: it runs the project's code and the project's trust does not cover it",
                        visible(&h.name),
                        visible(&h.origin.to_string())
                    ));
                }
                s.push_str(&format!("    {line}\n"));
            }
            if let Some(line) = repository_content_line(&h.command) {
                s.push_str(&format!("    {line}\n"));
            }
        }
        for r in reminders {
            s.push_str(&format!(
                "  reminder {} (trigger {})\n",
                visible(&r.name),
                visible(&r.trigger.to_string())
            ));
        }
    }
    s.push_str(&format!(
        "\nhookd check: configuration is valid ({} warning{})\n",
        config.warnings.len() + unrestricted.len(),
        plural(config.warnings.len() + unrestricted.len())
    ));
    out(&s);
    if strict && !refused.is_empty() {
        return Err(Error::No(format!(
            "hookd check --strict: {} hook{} would not run:\n  {}",
            refused.len(),
            plural(refused.len()),
            refused.join("\n  ")
        )));
    }
    Ok(0)
}

/// What the fingerprint covers of a project hook's code, for the review; `None` for a program
/// found on PATH that is given no project file (not the project's code).
pub(super) fn coverage_line(config: &Config, command: &str) -> Option<String> {
    let c = config.code_coverage(command)?;
    match c.blind {
        Some(why) => Some(format!(
            "code NOT COVERED by the fingerprint: {}; review what it runs yourself",
            visible(&why)
        )),
        None if c.files.is_empty() => None,
        None => Some(format!(
            "code fingerprinted: {}",
            visible(&c.files.join(", "))
        )),
    }
}

/// For a hook of the user's own configuration that runs files of the project: the line that
/// says so, and whether the project's trust covers them (when not, the hook is skipped).
fn project_code_line(config: &Config, command: &str) -> Option<(String, bool)> {
    let argv = gate::argv_of(command)?;
    let path = std::env::var_os("PATH");
    let code = config::project_code(&config.project_dir, &argv, path.as_deref());
    if code.is_empty() {
        return None;
    }
    let files = visible(&code.join(", ")).into_owned();
    let covered = config
        .trust
        .uncovered(config.fingerprint.as_ref(), &code)
        .is_none();
    Some(if covered {
        (
            format!("runs the project's {files}: covered by the project's trust"),
            true,
        )
    } else {
        (
            format!("runs the project's {files}: needs `hookd trust` (skipped until then)"),
            false,
        )
    })
}

/// Programs that run what the repository's files say (build scripts, package scripts,
/// makefiles, test configuration): the allow-list admits the program, not what it runs.
const RUNS_REPOSITORY_CONTENT: &[(&str, &str)] = &[
    ("cargo", "build scripts (build.rs) and proc macros"),
    ("npm", "package.json scripts"),
    ("npx", "package binaries"),
    ("yarn", "package.json scripts"),
    ("pnpm", "package.json scripts"),
    ("bun", "package.json scripts"),
    ("make", "the Makefile"),
    ("just", "the justfile"),
    ("go", "go generate directives and test code"),
    ("gradle", "the build script"),
    ("gradlew", "the project's own Gradle wrapper"),
    ("mvn", "the pom's plugins"),
    ("pytest", "conftest.py and the tests"),
    ("tox", "tox.ini commands"),
    ("rake", "the Rakefile"),
    ("bundle", "the Gemfile"),
    ("composer", "composer.json scripts"),
    ("pre-commit", ".pre-commit-config.yaml hooks"),
];

/// For a hook whose program runs repository content: that hookd's trust does not cover it.
fn repository_content_line(command: &str) -> Option<String> {
    let argv = gate::argv_of(command)?;
    let program = argv.first()?.rsplit('/').next()?;
    let (_, what) = RUNS_REPOSITORY_CONTENT
        .iter()
        .find(|(p, _)| *p == program)?;
    Some(format!(
        "runs repository content ({what}) with your rights: neither the allow-list nor trust covers it (docs/security.md#honest-limits)"
    ))
}

/// The sandbox: on or off, what it lets confined commands do, and whether this kernel
/// enforces it; when it is on and cannot be enforced, the sentence `--strict` fails on (every
/// hook would be skipped).
fn sandbox_line(config: &Config) -> (String, Option<String>) {
    let policy = &config.policy.sandbox;
    let missing = hookd::sandbox::support().missing();
    let kernel = match hookd::sandbox::support().landlock_abi {
        Some(abi) if missing.is_empty() => {
            format!("this kernel enforces it with Landlock ABI {abi} and user namespaces")
        }
        _ => format!(
            "this kernel cannot enforce it: it lacks {}",
            missing.join(" and ")
        ),
    };
    if !policy.enabled {
        return (
            format!(
                "sandbox: off: hooks run with all your rights; `sandbox: {{enabled: true}}` in your config.yaml confines them ({})\n",
                kernel.replace("enforces it with", "can, with")
            ),
            None,
        );
    }
    let places = hookd::sandbox::writable_places(policy, &config.project_dir)
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let line = format!(
        "sandbox: on: hooks and `hookd exec` run confined: writes only in {}; network {}; {}\n",
        visible(&places),
        if policy.network { "on" } else { "off" },
        kernel
    );
    let cannot = (!missing.is_empty()).then(|| {
        format!(
            "the sandbox is on and this kernel cannot enforce it (it lacks {}): every hook would be skipped",
            missing.join(" and ")
        )
    });
    (line, cannot)
}

/// What hooks' environment is made of: what the user keeps, what the project asks to keep,
/// what the project's files set for the agent and what is set here that runs code, each
/// removed unless kept (docs/security.md, "The environment").
fn environment_lines(config: &Config) -> String {
    let mut s = String::from(
        "hooks' environment: yours, less code-running variables and what the project's files set for the agent\n",
    );
    let keep = &config.hooks.env_keep;
    if !keep.is_empty() {
        s.push_str(&format!(
            "  you keep: {} (env.keep)\n",
            visible(&keep.names().join(", "))
        ));
    }
    let asked = &config.hooks.project_env_keep;
    if !asked.is_empty() {
        s.push_str(&format!(
            "  the project asks to keep its own: {} (env.keep in its hooks.yaml){}\n",
            visible(&asked.names().join(", ")),
            if config.trust.allows_project() {
                ""
            } else {
                ": ignored until you trust it"
            }
        ));
    }
    let mut starts = vec![config.project_dir.clone()];
    starts.extend(
        std::env::current_dir()
            .ok()
            .filter(|d| *d != config.project_dir),
    );
    let mut by_file: Vec<(std::path::PathBuf, Vec<String>)> = Vec::new();
    for (name, file) in hookd::adapter::set_for_agent(&starts) {
        match by_file.iter_mut().find(|(f, _)| *f == file) {
            Some((_, names)) => names.push(name),
            None => by_file.push((file, vec![name])),
        }
    }
    for (file, names) in by_file {
        let file = file.strip_prefix(&config.project_dir).unwrap_or(&file);
        const SHOWN: usize = 12;
        let more = match names.len().saturating_sub(SHOWN) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        s.push_str(&format!(
            "  {} sets {}{more} for the agent: removed from hooks run by `hookd adapter`\n",
            visible(&file.display().to_string()),
            visible(&names[..names.len().min(SHOWN)].join(", "))
        ));
    }
    let mut here: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| hookd::runner::runs_code(k) && !keep.matches(k))
        .collect();
    here.sort();
    if !here.is_empty() {
        s.push_str(&format!(
            "  set here and removed from hooks (they run code; keep one with `env: {{keep: [NAME]}}` in your hooks.yaml): {}\n",
            visible(&here.join(", "))
        ));
    }
    s
}

/// One line on whether the project's configuration acts, for `hookd check`.
pub(super) fn trust_line(config: &Config) -> String {
    let hooks = config
        .hooks
        .hooks
        .iter()
        .filter(|h| h.origin.source == config::Source::Project)
        .count();
    match &config.trust {
        config::ProjectTrust::NotApplicable => "project trust: not applicable (no project configuration read)".into(),
        config::ProjectTrust::Trusted { since } => format!("project trust: trusted since {since}"),
        config::ProjectTrust::TrustedByFlag => "project trust: trusted for this run (--trust-project or HOOKD_TRUST_PROJECT)".into(),
        config::ProjectTrust::Untrusted { changed } => format!(
            "project trust: UNTRUSTED ({}): its {hooks} hook{} will be skipped, {} allow entr{} and {} reminder{} are ignored.\n  Review what follows, then run `hookd trust` here to let it act.",
            if *changed { "changed since it was trusted" } else { "never trusted" },
            plural(hooks),
            config.ignored_allow.len(),
            if config.ignored_allow.len() == 1 { "y" } else { "ies" },
            config.ignored_reminders,
            plural(config.ignored_reminders),
        ),
        other => format!("project trust: {other:?}"),
    }
}

/// The agents' settings (each agent, each scope, resolved as `hookd install` does) whose hookd
/// entries run a program that is not there: the agent cannot start such a hook and goes on
/// without it, `--fail-closed` or not.
fn missing_installs() -> Vec<String> {
    use hookd::adapter::{self, install::Scope};
    let mut out = Vec::new();
    for agent in adapter::all() {
        for scope in [Scope::Project, Scope::Local, Scope::User] {
            let Ok(path) = agent.settings_path(scope, &|name| std::env::var_os(name)) else {
                continue;
            };
            let Ok(Some(programs)) = adapter::install::installed_programs(agent, &path) else {
                continue;
            };
            for program in programs {
                let at = std::path::Path::new(&program);
                if at.is_absolute() && !at.is_file() {
                    out.push(format!(
                        "warning: {} runs hookd at {}, which does not exist: {} cannot start the hook and goes on without it, so nothing is checked (not even with --fail-closed)\n  = fix: run `hookd install {} --scope {}` again on this machine{}",
                        visible(&path.display().to_string()),
                        visible(&program),
                        agent.name(),
                        agent.name(),
                        match scope {
                            Scope::Project => "project",
                            Scope::Local => "local",
                            Scope::User => "user",
                        },
                        if matches!(scope, Scope::Project) {
                            " (a project-scope install names this machine's path in a file the team shares; prefer --scope user)"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
    }
    out
}
