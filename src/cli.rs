//! The `hookd` command line: subcommands that call the library and render its answers.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::adapter;
use crate::catalog::HookPoint;
use crate::config::{self, Config, ConfigError, LoadOptions, Mode};
use crate::dispatch::{Context, Engine};
use crate::display::{visible, visible_lines};
use crate::events::{EventSink, JsonLines, NullSink};
use crate::gate::{self, Verdict};
use crate::state::{FileStore, MemoryStore, StateStore};

/// The largest dispatch context read from stdin.
const MAX_CONTEXT_BYTES: usize = 16 * 1024 * 1024;

/// hookd: YAML-configured hooks for AI coding agents, gated by a bash allow-list.
#[derive(Debug, Parser)]
#[command(name = "hookd", version, about, long_about = None, after_help = "Configuration lives in .infer/ (hooks.yaml, reminders.yaml, config.yaml). See docs/ for the guide.")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where configuration comes from (shared by the subcommands that load it).
#[derive(Debug, Clone, clap::Args)]
struct ConfigArgs {
    /// Read only this directory instead of ~/.infer and ./.infer.
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
    /// Act on the project's .infer/ without a trust record: for CI on your own repository
    /// (also HOOKD_TRUST_PROJECT=1). A repository you did not write could run anything it allows.
    #[arg(long)]
    trust_project: bool,
    /// At pre_tool, deny a shell tool call (Bash and its kin) whose command the allow-list does
    /// not admit (also HOOKD_GATE_SHELL_TOOLS=1, or `gate_shell_tools: true` in hooks.yaml).
    #[arg(long)]
    gate_shell_tools: bool,
}

/// How `hookd serve` listens, logs and keeps state.
#[derive(Debug, Clone, clap::Args)]
struct ServeArgs {
    /// The Unix socket (default $HOOKD_SOCKET, else $XDG_RUNTIME_DIR/hookd.sock, else
    /// ~/.infer/hookd.sock).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Also serve HTTP on this address, e.g. 127.0.0.1:7878 (port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,
    /// The token HTTP requests must carry as `Authorization: Bearer TOKEN` (also HOOKD_TOKEN).
    /// Without one, `--listen` generates a token and keeps it in a 0600 file beside the socket.
    #[arg(long, env = "HOOKD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Also append events as JSON lines to FILE (rotated by size: FILE.1 … FILE.3).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Rotate the events file when it would grow past this many bytes.
    #[arg(long, default_value_t = 64 * 1024 * 1024, value_name = "BYTES")]
    events_max_bytes: u64,
    /// Seconds running dispatches may take to finish after SIGTERM before their hooks are killed.
    #[arg(long, default_value_t = 10)]
    grace: u64,
    /// Forget a session's reminder state (turns, `once` reminders, stop guard) after this many
    /// seconds without a dispatch.
    #[arg(long, default_value_t = 86_400, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    session_idle: u64,
    /// Events kept in memory for subscribers that reconnect (older ones come from --events).
    #[arg(long, default_value_t = 10_000, value_name = "N", value_parser = clap::value_parser!(u64).range(16..=10_000_000))]
    ring: u64,
    /// Sessions whose state is kept; a new one beyond this forgets the least recently used.
    #[arg(long, default_value_t = 10_000, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_sessions: u64,
    /// Open connections per listener; more are closed at once (clients dispatch in-process).
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// Dispatches running at once; one more is answered 503 (clients dispatch in-process).
    #[arg(long, default_value_t = 128, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    max_dispatches: u64,
    /// Seconds a client has to send a request's headers before its connection is closed.
    #[arg(long, default_value_t = 5, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout: u64,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the hook points in loop order, with what a hook at each may do.
    Points {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Print the Markdown page docs/hook-points.md.
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
    },
    /// Validate every configuration file and show what would run where.
    Check {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// The mode whose allow-list decides the verdicts.
        #[arg(long, default_value = "standard", value_parser = parse_mode)]
        mode: Mode,
        /// Exit 1 when any hook would be refused or skipped (denied by the gate, untrusted, or
        /// switched off), for CI.
        #[arg(long)]
        strict: bool,
    },
    /// Ask the gate whether a command may run. Exit 0 allowed, 1 denied.
    Allow {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// The mode whose allow-list applies.
        #[arg(long, default_value = "standard", value_parser = parse_mode)]
        mode: Mode,
        /// Print {"allowed":bool,"reason":..,"hint":..} (with --model, also "parts": one
        /// verdict per simple command).
        #[arg(long)]
        json: bool,
        /// Judge it as the model's shell command (gate_shell_tools): the agent's shell runs
        /// it, so `&&`, `||`, `;`, `|` and `|&` may join simple commands, each allowed on its
        /// own. Without it: as a hook command, which hookd runs itself, one simple command.
        #[arg(long)]
        model: bool,
        /// The command, as one quoted string (several words are joined by spaces).
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Trust this project's .infer/ as it is now, after showing what it would run and allow.
    /// Any later change to those files (or to a script a hook runs) untrusts it again.
    Trust {
        /// List the trusted projects.
        #[arg(long, conflicts_with = "revoke")]
        list: bool,
        /// Stop trusting this project.
        #[arg(long)]
        revoke: bool,
    },
    /// Be an agent's hook command: read its payload on stdin, dispatch, reply in its format.
    Adapter {
        /// The agent.
        #[arg(value_enum)]
        agent: Agent,
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Append events as JSON lines to FILE (`-` for stderr; default $HOOKD_EVENTS).
        #[arg(long, value_name = "FILE")]
        events: Option<PathBuf>,
        /// If hookd itself fails, deny the tool call or block the prompt instead of letting the
        /// agent go on (also HOOKD_FAIL_CLOSED=1).
        #[arg(long)]
        fail_closed: bool,
        /// Dispatch in this process even when a daemon answers (also HOOKD_NO_DAEMON=1).
        #[arg(long)]
        no_daemon: bool,
    },
    /// Add hookd's adapter to an agent's settings (merging; run twice changes nothing).
    Install {
        /// The agent.
        #[arg(value_enum)]
        agent: Agent,
        /// Which settings file.
        #[arg(long, value_enum, default_value = "project")]
        scope: Scope,
        /// Install the adapter with --fail-closed: if hookd itself fails, the agent is denied.
        /// Use it for unattended agents; the flag lives in the agent's settings, so it holds
        /// even where the agent strips its hooks' environment.
        #[arg(long)]
        fail_closed: bool,
        /// Install the adapter with --gate-shell-tools: the model's shell commands face the gate.
        #[arg(long)]
        gate_shell_tools: bool,
        /// Write through a settings file or directory that is a symbolic link.
        #[arg(long)]
        follow_symlinks: bool,
    },
    /// Print another tool's permission rules as hookd allow entries (never writes anything).
    Import {
        #[command(subcommand)]
        from: ImportFrom,
    },
    /// Remove exactly the entries `hookd install` added.
    Uninstall {
        /// The agent.
        #[arg(value_enum)]
        agent: Agent,
        /// Which settings file.
        #[arg(long, value_enum, default_value = "project")]
        scope: Scope,
        /// Write through a settings file or directory that is a symbolic link.
        #[arg(long)]
        follow_symlinks: bool,
    },
    /// Run the daemon: agents dispatch over a Unix socket (and optionally loopback HTTP);
    /// dashboards follow GET /v1/events. Stops cleanly on SIGTERM or SIGINT.
    Serve {
        #[command(flatten)]
        cfg: ConfigArgs,
        #[command(flatten)]
        args: ServeArgs,
    },
    /// Print the event stream for a person: from the running daemon, or from an events file.
    Events {
        /// Keep printing new events as they come.
        #[arg(long, short)]
        follow: bool,
        /// Only events after this sequence number.
        #[arg(long, value_name = "SEQ", default_value_t = 0)]
        since: u64,
        /// Read this events file (and its rotated FILE.1 … FILE.3) instead of the daemon.
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// Print the events' JSON lines instead.
        #[arg(long)]
        json: bool,
        /// Only this session's events (and configuration events, which concern every session).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
    },
    /// Run what is due at POINT: context JSON on stdin, Outcome JSON on stdout.
    Dispatch {
        /// The hook point.
        #[arg(value_parser = parse_point, value_name = "POINT")]
        point: HookPoint,
        #[command(flatten)]
        cfg: ConfigArgs,
        /// The mode (overrides the context's `mode`; default standard).
        #[arg(long, value_parser = parse_mode)]
        mode: Option<Mode>,
        /// The session (overrides the context's `session_id`).
        #[arg(long, value_name = "ID")]
        session_id: Option<String>,
        /// The agent's turn (overrides the context's `turn`).
        #[arg(long, value_name = "N")]
        turn: Option<u64>,
        /// Append events as JSON lines to FILE (`-` for stderr; default $HOOKD_EVENTS).
        #[arg(long, value_name = "FILE")]
        events: Option<PathBuf>,
        /// Require a running daemon (at $HOOKD_SOCKET or the default socket) to dispatch.
        #[arg(long, conflicts_with = "no_daemon")]
        daemon: bool,
        /// Dispatch in this process even when a daemon is running.
        #[arg(long)]
        no_daemon: bool,
        /// Print the Outcome indented over several lines, for people (default: one line).
        #[arg(long)]
        pretty: bool,
    },
}

/// An on/off environment variable read with the one parser ([`config::parse_bool`]). Unset is
/// off; a value that is neither on nor off is reported on stderr and taken as `unreadable`.
fn env_switch(name: &str, unreadable: bool) -> bool {
    let Some(value) = std::env::var_os(name) else {
        return false;
    };
    match value.to_str().and_then(config::parse_bool) {
        Some(on) => on,
        None => {
            eprintln!(
                "hookd: {name}={} is not on or off (1/true/yes/on, 0/false/no/off); taken as {}",
                value.to_string_lossy().escape_debug(),
                if unreadable { "on" } else { "off" }
            );
            unreadable
        }
    }
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse::<Mode>().map_err(|e| e.to_string())
}

fn parse_point(s: &str) -> Result<HookPoint, String> {
    s.parse::<HookPoint>()
        .map_err(|e| format!("{e}; valid points: {}", HookPoint::names_joined()))
}

/// What the binary should exit with, and what to print on stderr first.
#[derive(Debug)]
pub struct Exit {
    /// Process exit code.
    pub code: i32,
    /// Printed to stderr (already formatted).
    pub message: Option<String>,
}

impl Exit {
    fn ok() -> Self {
        Exit {
            code: 0,
            message: None,
        }
    }
    fn code(code: i32) -> Self {
        Exit {
            code,
            message: None,
        }
    }
    fn error(code: i32, message: impl Into<String>) -> Self {
        Exit {
            code,
            message: Some(message.into()),
        }
    }
}

/// Where `hookd import` reads rules from.
#[derive(Subcommand, Debug)]
pub enum ImportFrom {
    /// Claude Code's `permissions.allow`/`deny`/`ask` Bash rules, from FILE or, by default,
    /// the project's .claude/settings.json and .claude/settings.local.json.
    ClaudeCode {
        /// A Claude Code settings file.
        file: Option<PathBuf>,
        /// Print {"entries":[…],"untranslated":[…]} instead of YAML.
        #[arg(long)]
        json: bool,
    },
}

/// Run the parsed command line.
pub fn run(cli: Cli) -> Exit {
    match cli.command {
        Command::Points { json, markdown } => points(json, markdown),
        Command::Check { cfg, mode, strict } => check(cfg, mode, strict),
        Command::Allow {
            cfg,
            mode,
            json,
            model,
            command,
        } => allow(cfg, mode, json, model, &command.join(" ")),
        Command::Trust { list, revoke } => trust(list, revoke),
        Command::Events {
            follow,
            since,
            file,
            json,
            session,
        } => events_cmd(follow, since, file, json, session.as_deref()),
        Command::Serve { cfg, args } => serve(cfg, args),
        Command::Adapter {
            agent,
            cfg,
            events,
            fail_closed,
            no_daemon,
        } => {
            let no_daemon =
                no_daemon || cfg.config_dir.is_some() || env_switch("HOOKD_NO_DAEMON", false);
            adapter(agent, cfg, events, fail_closed, !no_daemon)
        }
        Command::Install {
            agent,
            scope,
            fail_closed,
            gate_shell_tools,
            follow_symlinks,
        } => {
            let flags: Vec<&str> = [
                (fail_closed, "--fail-closed"),
                (gate_shell_tools, "--gate-shell-tools"),
            ]
            .into_iter()
            .filter_map(|(on, f)| on.then_some(f))
            .collect();
            let opts = adapter::install::InstallOptions {
                flags: &flags,
                follow_symlinks,
            };
            install(agent, scope, false, opts)
        }
        Command::Import {
            from: ImportFrom::ClaudeCode { file, json },
        } => import_claude_code(file, json),
        Command::Uninstall {
            agent,
            scope,
            follow_symlinks,
        } => install(
            agent,
            scope,
            true,
            adapter::install::InstallOptions {
                flags: &[],
                follow_symlinks,
            },
        ),
        Command::Dispatch {
            point,
            cfg,
            mode,
            session_id,
            turn,
            events,
            daemon,
            no_daemon,
            pretty,
        } => {
            PRETTY.store(pretty, std::sync::atomic::Ordering::Relaxed);
            let use_daemon = if no_daemon || cfg.config_dir.is_some() {
                Daemon::Never
            } else if daemon {
                Daemon::Required
            } else {
                Daemon::IfRunning
            };
            dispatch(point, cfg, mode, session_id, turn, events, use_daemon)
        }
    }
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

fn points(json: bool, markdown: bool) -> Exit {
    if markdown {
        out(&HookPoint::docs_markdown());
    } else if json {
        let list: Vec<_> = HookPoint::ALL
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name(),
                    "fires": p.fires(),
                    "observe_only": p.capabilities().observe_only(),
                    "capabilities": p.capabilities(),
                })
            })
            .collect();
        out(&format!("{}\n", serde_json::Value::Array(list)));
    } else {
        let mut s = String::new();
        for p in HookPoint::ALL {
            s.push_str(&format!(
                "{:<17} {}\n{:<17} may: {}\n",
                p.name(),
                p.fires(),
                "",
                p.capabilities().words().join(", ")
            ));
        }
        out(&s);
    }
    Exit::ok()
}

fn load(cfg: ConfigArgs) -> Result<Config, Exit> {
    load_for(cfg, false)
}

/// `allow_lists_only`: errors in hooks.yaml and reminders.yaml are warnings (`hookd allow`).
fn load_for(cfg: ConfigArgs, allow_lists_only: bool) -> Result<Config, Exit> {
    let gate_shell_tools = cfg.gate_shell_tools;
    let mut config = load_files(cfg, allow_lists_only)?;
    config.hooks.gate_shell_tools |= gate_shell_tools;
    Ok(config)
}

fn load_files(cfg: ConfigArgs, allow_lists_only: bool) -> Result<Config, Exit> {
    let mut opts = LoadOptions::from_process(cfg.config_dir).map_err(|e| {
        Exit::error(
            2,
            format!("error: cannot determine the current directory: {e}"),
        )
    })?;
    opts.trust_project = cfg.trust_project;
    opts.allow_lists_only = allow_lists_only;
    if let Some(dir) = &opts.config_dir {
        if !dir.is_dir() {
            return Err(Exit::error(
                2,
                format!("error: --config-dir {} is not a directory", dir.display()),
            ));
        }
    }
    config::load(&opts).map_err(|e: ConfigError| {
        let errors = e.errors().count();
        Exit::error(
            2,
            format!(
                "{e}\n\nhookd: the configuration has {errors} error{}",
                plural(errors)
            ),
        )
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn print_warnings(config: &Config) {
    let mut err = std::io::stderr().lock();
    for w in warnings(config) {
        let _ = writeln!(err, "{w}");
    }
}

/// The configuration's warnings as printed, project text escaped.
fn warnings(config: &Config) -> Vec<String> {
    config
        .warnings
        .iter()
        .map(|w| format!("{}\n", visible_lines(&w.to_string())))
        .collect()
}

fn check(cfg: ConfigArgs, mode: Mode, strict: bool) -> Exit {
    let config = match load(cfg) {
        Ok(c) => c,
        Err(mut e) => {
            e.code = 1;
            e.message = e.message.map(|m| visible_lines(&m).into_owned());
            return e;
        }
    };
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
                    err.lines().last().unwrap_or_default().trim()
                )
            })
        })
        .collect();
    if !uncompilable.is_empty() {
        return Exit::error(
            1,
            format!(
                "{}\n\nhookd: the configuration has {} error{}",
                uncompilable.join("\n\n"),
                uncompilable.len(),
                plural(uncompilable.len())
            ),
        );
    }
    // Entries that cannot mean what their author meant (gate::lint), each with its fix.
    let mut unrestricted = Vec::new();
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
    s.push_str(&format!(
        "reminders: {} ({} configured)\n",
        if config.reminders.enabled {
            "enabled"
        } else {
            "disabled"
        },
        config.reminders.reminders.len()
    ));
    s.push_str(if config.hooks.gate_shell_tools {
        "model's shell commands: gated by the allow-list at pre_tool (gate_shell_tools)\n"
    } else {
        "model's shell commands: not gated (gate_shell_tools is off)\n"
    });
    s.push_str(&format!(
        "allow-list for mode {mode}: {} entries\n",
        config.allow.for_mode(mode).count()
    ));
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
                _ if untrusted => {
                    "SKIPPED (untrusted project): `hookd trust` after review".to_string()
                }
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
            if h.origin.source == config::Source::Project {
                if let Some(line) = coverage_line(config, &h.command) {
                    s.push_str(&format!("    {line}\n"));
                }
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
        return Exit::error(
            1,
            format!(
                "hookd check --strict: {} hook{} would not run:\n  {}",
                refused.len(),
                plural(refused.len()),
                refused.join("\n  ")
            ),
        );
    }
    Exit::ok()
}

fn allow(cfg: ConfigArgs, mode: Mode, json: bool, model: bool, command: &str) -> Exit {
    // Only the allow-list matters here: a broken hooks.yaml is a warning, not a stop.
    let config = match load_for(cfg, true) {
        Ok(c) => c,
        Err(e) => return e,
    };
    print_warnings(&config);
    let gate = gate::Gate::new(&config.allow, config.allow_file.clone());
    let allowed = if model {
        let verdict = gate.model_verdict(command, mode);
        if json {
            let mut v = match &verdict.denied {
                None => serde_json::json!({"allowed": true, "reason": null, "hint": null}),
                Some(d) => verdict_json(&gate::Verdict::Denied(d.clone())),
            };
            v["parts"] = verdict
                .parts
                .iter()
                .map(|p| {
                    let mut part = verdict_json(&p.verdict);
                    part["joint"] = serde_json::json!(p.joint);
                    part["text"] = serde_json::json!(p.text);
                    part
                })
                .collect();
            out(&format!("{v}\n"));
        } else {
            let mut text = match &verdict.denied {
                None => "allowed\n".to_string(),
                Some(d) => format!("denied: {}: {}\n  hint: {}\n", d.reason, d.detail, d.hint),
            };
            for (i, p) in verdict.parts.iter().enumerate() {
                let joint = p.joint.map(|j| format!("{j} ")).unwrap_or_default();
                let said = match &p.verdict {
                    Verdict::Allowed(a) => {
                        format!("allowed by `{}` ({})", a.entry.pattern, a.entry.origin)
                    }
                    Verdict::Denied(d) => format!("denied: {}", d.reason),
                };
                text.push_str(&format!("  part {}: {joint}`{}`: {said}\n", i + 1, p.text));
            }
            out(&text);
        }
        verdict.is_allowed()
    } else {
        let verdict = gate.verdict(command, mode);
        if json {
            out(&format!("{}\n", verdict_json(&verdict)));
        } else {
            match &verdict {
                Verdict::Allowed(a) => out(&format!(
                    "allowed\n  by `{}` ({})\n  runs {:?}\n",
                    a.entry.pattern, a.entry.origin, a.argv
                )),
                Verdict::Denied(d) => out(&format!(
                    "denied: {}: {}\n  hint: {}\n",
                    d.reason, d.detail, d.hint
                )),
            }
        }
        verdict.is_allowed()
    };
    if !allowed && !config.ignored_allow.is_empty() {
        eprintln!(
            "note: {} allow entr{} in this project's .infer/config.yaml {} ignored: the project is not trusted (`hookd check`, then `hookd trust`)",
            config.ignored_allow.len(),
            if config.ignored_allow.len() == 1 { "y" } else { "ies" },
            if config.ignored_allow.len() == 1 { "is" } else { "are" }
        );
    }
    Exit::code(if allowed { 0 } else { 1 })
}

/// `hookd import claude-code`: the rules of FILE, or of the project's Claude Code settings.
fn import_claude_code(file: Option<PathBuf>, json: bool) -> Exit {
    let files: Vec<PathBuf> = match file {
        Some(f) => vec![f],
        None => {
            let cwd = std::env::current_dir().unwrap_or_default();
            let project = crate::paths::find_project(&cwd, crate::paths::home().as_deref());
            let found: Vec<PathBuf> = ["settings.json", "settings.local.json"]
                .iter()
                .map(|n| project.join(".claude").join(n))
                .filter(|p| p.is_file())
                .collect();
            if found.is_empty() {
                return Exit::error(
                    2,
                    format!(
                        "error: no Claude Code settings in {}: neither .claude/settings.json nor .claude/settings.local.json exists\n  = help: name the file: `hookd import claude-code ~/.claude/settings.json`",
                        project.display()
                    ),
                );
            }
            found
        }
    };
    let mut all = adapter::claude_permissions::Import::default();
    for f in &files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => return Exit::error(2, format!("error: cannot read {}: {e}", f.display())),
        };
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                return Exit::error(
                    2,
                    format!(
                        "error: {} is not JSON: {e}\n  --> {}:{}:{}",
                        f.display(),
                        f.display(),
                        e.line(),
                        e.column()
                    ),
                )
            }
        };
        let one = adapter::claude_permissions::import(&value);
        for e in one.entries {
            if !all.entries.iter().any(|x| x.entry == e.entry) {
                all.entries.push(e);
            }
        }
        all.untranslated.extend(one.untranslated);
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    if json {
        out(&format!(
            "{}\n",
            serde_json::to_string(&all).unwrap_or_default()
        ));
    } else {
        out(&adapter::claude_permissions::to_yaml(
            &all,
            &names.join(" and "),
        ));
    }
    Exit::ok()
}

/// One verdict as `hookd allow --json` prints it.
fn verdict_json(verdict: &Verdict) -> serde_json::Value {
    match verdict {
        Verdict::Allowed(a) => serde_json::json!({
            "allowed": true, "reason": null, "hint": null, "argv": a.argv,
            "entry": a.entry.pattern, "origin": a.entry.origin.to_string(),
        }),
        Verdict::Denied(d) => {
            serde_json::json!({"allowed": false, "reason": d.reason, "hint": d.hint, "detail": d.detail})
        }
    }
}

/// Whether `hookd dispatch` goes through a daemon.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Daemon {
    Never,
    IfRunning,
    Required,
}

#[allow(clippy::too_many_arguments)]
/// `hookd dispatch --pretty`: the Outcome over several lines.
static PRETTY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An Outcome (or the daemon's answer) as `hookd dispatch` prints it.
fn outcome_text(json: &str) -> String {
    if PRETTY.load(std::sync::atomic::Ordering::Relaxed) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(json) {
            if let Ok(p) = serde_json::to_string_pretty(&v) {
                return format!("{p}\n");
            }
        }
    }
    format!("{}\n", json.trim_end())
}

fn dispatch(
    point: HookPoint,
    cfg: ConfigArgs,
    mode: Option<Mode>,
    session_id: Option<String>,
    turn: Option<u64>,
    events: Option<PathBuf>,
    use_daemon: Daemon,
) -> Exit {
    let mut context =
        match read_stdin().and_then(|t| Context::from_json(&t).map_err(|e| e.to_string())) {
            Ok(c) => c,
            Err(e) => return Exit::error(2, format!("error: {e}")),
        };
    if let Some(id) = session_id {
        context.set("session_id", id);
    }
    if let Some(t) = turn {
        context.set("turn", t);
    }
    if let Some(m) = mode {
        context.set("mode", m.name());
    }
    if use_daemon != Daemon::Never {
        if let Some(exit) = forward(
            point,
            &context,
            events.is_some(),
            use_daemon == Daemon::Required,
            client_inputs(&cfg).as_deref(),
        ) {
            return exit;
        }
    }
    let config = match load(cfg) {
        Ok(c) => c,
        Err(e) => return e,
    };
    print_warnings(&config);
    let engine = match engine(config, events) {
        Ok(e) => e,
        Err(e) => return e,
    };
    let (result, caught) = interruptible(engine.canceller(), || engine.dispatch(point, &context));
    match result {
        Ok(outcome) => {
            for n in &outcome.notices {
                eprintln!("hookd: {n}");
            }
            out(&outcome_text(
                &serde_json::to_string(&outcome).unwrap_or_else(|_| "{}".into()),
            ));
            match caught {
                Some(sig) => {
                    Exit::error(128 + sig, "hookd: interrupted; running hooks were killed")
                }
                None => Exit::ok(),
            }
        }
        Err(e) => Exit::error(2, format!("error: {e}")),
    }
}

/// An engine writing events to `events` (`-`: stderr; default `$HOOKD_EVENTS`), with session
/// state in files.
fn engine(config: Config, events: Option<PathBuf>) -> Result<Engine, Exit> {
    let events = events.or_else(|| {
        std::env::var_os("HOOKD_EVENTS")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let sink: Arc<dyn EventSink> = match events.as_deref() {
        None => Arc::new(NullSink),
        Some(p) if p.as_os_str() == "-" => Arc::new(JsonLines::stderr()),
        Some(p) => match JsonLines::append(p) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                return Err(Exit::error(
                    2,
                    format!("error: cannot open the events file {}: {e}", p.display()),
                ))
            }
        },
    };
    let store: Arc<dyn StateStore> = match FileStore::default_dir() {
        Some(dir) => Arc::new(FileStore::new(dir)),
        None => Arc::new(MemoryStore::default()),
    };
    Ok(Engine::builder(config)
        .sink(sink)
        .state_store(store)
        .build())
}

/// Run `f`; SIGINT/SIGTERM meanwhile kill the running hooks' groups (their events are still
/// written) and are returned so the caller exits 128 + the signal.
fn interruptible<T>(cancel: &crate::runner::Cancel, f: impl FnOnce() -> T) -> (T, Option<i32>) {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return (f(), None);
    };
    let handle = signals.handle();
    let cancel = cancel.clone();
    let watcher = std::thread::spawn(move || {
        let sig = signals.forever().next();
        if sig.is_some() {
            cancel.cancel();
        }
        sig
    });
    let result = f();
    handle.close();
    (result, watcher.join().ok().flatten())
}

/// The agents with adapters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Agent {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// Charm's Crush.
    Crush,
    /// Google's Gemini CLI.
    Gemini,
}

impl Agent {
    fn adapter(self) -> &'static dyn adapter::Adapter {
        match self {
            Agent::ClaudeCode => &adapter::claude::ClaudeCode,
            Agent::Crush => &adapter::crush::Crush,
            Agent::Gemini => &adapter::gemini::Gemini,
        }
    }
}

/// Where `hookd install` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Scope {
    /// The project's settings, shared with the team (`.claude/settings.json`,
    /// `.gemini/settings.json`, `crush.json`).
    Project,
    /// The project's personal settings, not committed (Claude Code's `.claude/settings.local.json`).
    Local,
    /// Your settings, for every project (`~/.claude/settings.json`, `~/.gemini/settings.json`,
    /// `~/.config/crush/crush.json`).
    User,
}

fn settings_path(agent: Agent, scope: Scope) -> Result<PathBuf, Exit> {
    let scope = match scope {
        Scope::Project => adapter::Scope::Project,
        Scope::Local => adapter::Scope::Local,
        Scope::User => adapter::Scope::User,
    };
    agent
        .adapter()
        .settings_path(scope, &|name| std::env::var_os(name))
        .map_err(|e| Exit::error(2, format!("error: {e}")))
}

fn install(
    agent: Agent,
    scope: Scope,
    remove: bool,
    opts: adapter::install::InstallOptions<'_>,
) -> Exit {
    let path = match settings_path(agent, scope) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let result = if remove {
        adapter::install::uninstall(agent.adapter(), &path, opts)
    } else {
        let hookd = match std::env::current_exe().and_then(|p| p.canonicalize()) {
            Ok(p) => p,
            Err(e) => return Exit::error(2, format!("error: cannot find this hookd binary: {e}")),
        };
        adapter::install::install(agent.adapter(), &path, &hookd, opts)
    };
    match result {
        Ok(adapter::install::Change::Unchanged) => {
            out(&format!(
                "hookd: {} already {}; nothing changed\n",
                path.display(),
                if remove {
                    "has no hookd entries"
                } else {
                    "runs hookd"
                }
            ));
            Exit::ok()
        }
        Ok(adapter::install::Change::Written { backup }) => {
            let saved = backup
                .map(|b| format!(" (previous version saved as {})", b.display()))
                .unwrap_or_default();
            let what = if remove {
                "removed hookd's entries from"
            } else {
                "added hookd's adapter to"
            };
            out(&format!("hookd: {what} {}{saved}\n", path.display()));
            Exit::ok()
        }
        Err(e) => Exit::error(2, format!("error: {e}")),
    }
}

fn adapter(
    agent: Agent,
    cfg: ConfigArgs,
    events: Option<PathBuf>,
    fail_closed: bool,
    use_daemon: bool,
) -> Exit {
    // hookd's own diagnostics for this call (configuration warnings, daemon trouble). An agent
    // that shows stderr to the model as a deny's reason gets only the reason then.
    let diagnostics = std::cell::RefCell::new(Vec::<String>::new());
    // The payload is read first (it names the session's directory); it is judged below, once
    // the switches that decide what a failure means are known.
    let payload = read_stdin().and_then(|t| adapter::payload::parse(&t));
    // The project is the agent's: hookd works there, whatever directory it was started in.
    if let Some(dir) = agent_project(payload.as_ref().ok()) {
        if let Err(e) = std::env::set_current_dir(&dir) {
            diagnostics.borrow_mut().push(format!(
                "hookd: cannot work in the agent's project {}: {e}",
                dir.display()
            ));
        }
    }
    // Then, before anything reads the environment: what the repository set for its agent
    // (.env, .claude/settings*.json) may not decide what hookd trusts, allows or reads.
    diagnostics.borrow_mut().extend(scrub_project_env());
    // A safety switch: a value hookd cannot read turns it on, never silently off.
    let fail_closed = fail_closed || env_switch("HOOKD_FAIL_CLOSED", true);
    // The user's own `fail_closed` and `gate_shell_tools` (hooks.yaml of --config-dir or
    // ~/.infer), read alone, so a broken project file or payload cannot hide them. With the
    // shell tools gated, a call hookd cannot read may be a shell command: it is denied.
    // Read only when something fails: the path that succeeds pays nothing for it.
    let safety = std::cell::OnceCell::new();
    let safety = || {
        *safety.get_or_init(|| {
            LoadOptions::from_process(cfg.config_dir.clone())
                .map(|o| config::user_safety(&o))
                .unwrap_or_default()
        })
    };
    let agent = agent.adapter();
    let closed_for = |event: Option<&str>| {
        let safety = safety();
        fail_closed
            || safety.fail_closed
            || ((cfg.gate_shell_tools || safety.gate_shell_tools)
                && event.is_none_or(|e| {
                    agent
                        .events()
                        .iter()
                        .any(|a| a.name == e && a.point == Some(HookPoint::PreTool))
                }))
    };
    let emit = |r: adapter::AgentReply| {
        if !(agent.stderr_is_reason() && r.exit_code != 0) {
            for d in diagnostics.borrow().iter() {
                eprintln!("{d}");
            }
        }
        for n in &r.notes {
            eprintln!("{n}");
        }
        if !r.stdout.is_empty() {
            out(&format!("{}\n", r.stdout));
        }
        Exit::code(r.exit_code)
    };
    let payload = match payload {
        Ok(p) => p,
        Err(e) => return emit(agent.failure_reply(None, &e, closed_for(None))),
    };
    let event = payload
        .as_object()
        .and_then(|o| agent.event_name(o))
        .map(String::from);
    let t = match agent.translate(&payload) {
        Ok(t) => t,
        Err(e) => {
            let closed = closed_for(event.as_deref());
            return emit(agent.failure_reply(event.as_deref(), &e, closed));
        }
    };
    let Some(point) = t.point else {
        let mut r = adapter::AgentReply {
            stdout: "{}".into(),
            exit_code: 0,
            notes: vec![],
        };
        if !agent.events().iter().any(|e| e.name == t.event) {
            r.notes.push(format!(
                "hookd: {} event `{}` is not mapped to a hook point; ignored",
                agent.name(),
                t.event
            ));
        }
        return emit(r);
    };
    let closed = || closed_for(Some(&t.event));
    // A running daemon answers for every session on the machine: one configuration, one
    // stream. It answers only a client with the same settings (home, variables, flags); its
    // Outcome is then the one this process would have computed with the same files.
    // A daemon it could not use (too large a payload, busy, slow, not this user's, other
    // settings, gone): dispatch here, for the same verdict; never an answer not the daemon's.
    let inputs = client_inputs(&cfg);
    if let Some((socket, answer)) = use_daemon
        .then(|| via_daemon(point, &t.context, inputs.as_deref()))
        .flatten()
    {
        let outcome = answer.and_then(|json| {
            serde_json::from_str::<crate::dispatch::Outcome>(&json)
                .map_err(|e| format!("its answer is not an Outcome: {e}"))
        });
        match outcome {
            Ok(o) => {
                notices(&diagnostics, &o);
                return emit(agent.reply(&t.event, &o));
            }
            Err(e) => diagnostics.borrow_mut().push(format!(
                "hookd: the hookd daemon at {}: {e}; dispatching in this process",
                socket.display()
            )),
        }
    }
    let config = match load(cfg.clone()) {
        Ok(c) => c,
        Err(e) => {
            return emit(agent.failure_reply(
                Some(&t.event),
                &e.message.unwrap_or_default(),
                closed(),
            ))
        }
    };
    let project_closed = config.hooks.fail_closed;
    let closed = || project_closed || closed();
    diagnostics.borrow_mut().extend(warnings(&config));
    let engine = match engine(config, events) {
        Ok(e) => e,
        Err(e) => {
            return emit(agent.failure_reply(
                Some(&t.event),
                &e.message.unwrap_or_default(),
                closed(),
            ))
        }
    };
    let (result, _caught) =
        interruptible(engine.canceller(), || engine.dispatch(point, &t.context));
    match result {
        Ok(outcome) => {
            notices(&diagnostics, &outcome);
            emit(agent.reply(&t.event, &outcome))
        }
        Err(e) => emit(agent.failure_reply(Some(&t.event), &e.to_string(), closed())),
    }
}

/// The Outcome's notices (hooks switched off…), for stderr with hookd's other diagnostics.
fn notices(diagnostics: &std::cell::RefCell<Vec<String>>, outcome: &crate::dispatch::Outcome) {
    diagnostics
        .borrow_mut()
        .extend(outcome.notices.iter().map(|n| format!("hookd: {n}")));
}

/// The agent's project: `CLAUDE_PROJECT_DIR` (Claude Code; Gemini CLI sets it too, with
/// `GEMINI_PROJECT_DIR`), else the payload's `cwd`, absolute ones only; then the project that
/// directory belongs to (its `.infer/`, else the nearest one up to the repository root).
fn agent_project(payload: Option<&serde_json::Value>) -> Option<PathBuf> {
    let from_env = ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"]
        .iter()
        .find_map(|k| std::env::var_os(k).filter(|v| !v.is_empty()))
        .map(PathBuf::from);
    let from_payload = payload
        .and_then(|p| p.get("cwd"))
        .and_then(|c| c.as_str())
        .map(PathBuf::from);
    let dir = from_env
        .into_iter()
        .chain(from_payload)
        .find(|d| d.is_absolute() && d.is_dir())?;
    Some(crate::paths::find_project(
        &dir,
        crate::paths::home().as_deref(),
    ))
}

/// The project of this process's directory (see `paths::find_project`).
fn project_here() -> Option<PathBuf> {
    let home = crate::paths::home();
    std::env::current_dir()
        .ok()
        .map(|d| crate::paths::find_project(&d, home.as_deref()))
}

/// Drop from this process's environment what the project's files set for its agent and may
/// not decide (see `adapter::project_env`); the notes say what was dropped. Called first, while
/// this process has one thread.
fn scrub_project_env() -> Vec<String> {
    let Some(project) = project_here() else {
        return Vec::new();
    };
    // The walk up for `.env` files stops at the home directory, whose files are the user's.
    // `HOME` itself may be the project's doing: where it would stop the walk, the user
    // database says where the home really is (looked up only then: it costs a file read).
    let home = crate::paths::home()
        .filter(|h| project.starts_with(h))
        .and_then(|_| adapter::project_env::user_home());
    let names = adapter::project_env::names_set_by(&project, home.as_deref());
    if names.is_empty() {
        return Vec::new();
    }
    let user_home = if names.contains("HOME") {
        adapter::project_env::user_home()
    } else {
        None
    };
    let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    let s = adapter::project_env::scrub(&names, &env, &project, user_home);
    for k in &s.remove {
        std::env::remove_var(k);
    }
    for (k, v) in &s.set {
        std::env::set_var(k, v);
    }
    s.notes
}

fn read_stdin() -> Result<String, String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(String::new());
    }
    let mut buf = Vec::new();
    stdin
        .lock()
        .take(MAX_CONTEXT_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    if buf.len() > MAX_CONTEXT_BYTES {
        return Err(format!("stdin is over {MAX_CONTEXT_BYTES} bytes"));
    }
    String::from_utf8(buf).map_err(|_| "stdin is not UTF-8".to_string())
}

fn trust(list: bool, revoke: bool) -> Exit {
    let opts = match LoadOptions::from_process(None) {
        Ok(o) => o,
        Err(e) => {
            return Exit::error(
                2,
                format!("error: cannot determine the current directory: {e}"),
            )
        }
    };
    let Some(store_path) = opts.trust_file.clone() else {
        return Exit::error(
            2,
            "error: no place for trust records: set HOME, XDG_CONFIG_HOME or HOOKD_TRUST_FILE",
        );
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
                Exit::ok()
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
                Exit::ok()
            }
            Err(e) => Exit::error(2, format!("error: {e}")),
        };
    }
    if revoke {
        return match store.revoke(&project) {
            Ok(true) => {
                out(&format!(
                    "hookd: {} is no longer trusted\n",
                    visible(&project.display().to_string())
                ));
                Exit::ok()
            }
            Ok(false) => Exit::error(
                1,
                format!(
                    "hookd: {} was not trusted",
                    visible(&project.display().to_string())
                ),
            ),
            Err(e) => Exit::error(2, format!("error: {e}")),
        };
    }
    // Load as if trusted, to show everything the project would be able to do.
    let mut opts = opts;
    opts.trust_project = true;
    let config = match config::load(&opts) {
        Ok(c) => c,
        Err(e) => {
            let n = e.errors().count();
            return Exit::error(2, format!("{}\n\nhookd: the project's configuration has {n} error{}; fix it before trusting it", visible_lines(&e.to_string()), plural(n)));
        }
    };
    let Some(fp) = config.fingerprint.clone() else {
        return Exit::error(
            1,
            format!(
                "hookd: there is nothing to trust: no .infer/ configuration in {}",
                project.display()
            ),
        );
    };
    let gate = gate::Gate::new(&config.allow, config.allow_file.clone());
    let from_project = |o: &config::Origin| o.source == config::Source::Project;
    let mut s = format!(
        "Trusting {}. Its .infer/ will be able to:\n",
        visible(&project.display().to_string())
    );
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
            None => String::new(),
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
    s.push_str(&format!(
        "Fingerprint sha256:{} over {}\n",
        fp.sha256,
        visible(&fp.files.join(", "))
    ));
    if let Err(e) = store.record(&project, &fp) {
        out(&s);
        return Exit::error(2, format!("error: {e}"));
    }
    s.push_str("hookd: trusted. Any change to these files makes the project untrusted again; `hookd trust --revoke` undoes this.\n");
    out(&s);
    Exit::ok()
}

/// What the fingerprint covers of a project hook's code, for the review; `None` for a program
/// found on PATH that is given no project file (not the project's code).
fn coverage_line(config: &Config, command: &str) -> Option<String> {
    let argv = gate::argv_of(command)?;
    let root = config
        .project_dir
        .canonicalize()
        .unwrap_or_else(|_| config.project_dir.clone());
    let c = config::coverage(&root, &argv);
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

/// One line on whether the project's configuration acts, for `hookd check`.
fn trust_line(config: &Config) -> String {
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
    }
}

fn serve(cfg: ConfigArgs, a: ServeArgs) -> Exit {
    let config = match load(cfg.clone()) {
        Ok(c) => c,
        Err(e) => return e,
    };
    print_warnings(&config);
    let mut opts = match LoadOptions::from_process(cfg.config_dir.clone()) {
        Ok(o) => o,
        Err(e) => {
            return Exit::error(
                2,
                format!("error: cannot determine the current directory: {e}"),
            )
        }
    };
    opts.trust_project = cfg.trust_project;
    let inputs = opts.inputs(cfg.gate_shell_tools);
    let watch = watched_files(&opts);
    let hub = crate::daemon::hub::Hub::new(a.ring as usize);
    let mut sinks: Vec<Arc<dyn EventSink>> = vec![hub.clone()];
    if let Some(p) = &a.events {
        match crate::events::RotatingLog::open(p, a.events_max_bytes, LOG_KEEP) {
            Ok(s) => sinks.push(Arc::new(s)),
            Err(e) => {
                return Exit::error(
                    2,
                    format!("error: cannot open the events file {}: {e}", p.display()),
                )
            }
        }
    }
    // What outlives a reload: where events go, the sessions' state and the event numbering.
    let sink: Arc<dyn EventSink> = Arc::new(crate::events::Fanout(sinks));
    let memory = Arc::new(
        MemoryStore::idle_expiry(std::time::Duration::from_secs(a.session_idle))
            .max_sessions(a.max_sessions as usize),
    );
    let store: Arc<dyn StateStore> = memory.clone();
    let last = a
        .events
        .as_ref()
        .map_or(0, |p| crate::events::last_seq_in_log(p, LOG_KEEP));
    let stream = crate::events::Stream::new(sink, last);
    // One token stops every engine's runs at shutdown, across reloads.
    let cancel = crate::runner::Cancel::new();
    let engine_for = move |config: Config| {
        Engine::builder(config)
            .stream(stream.clone())
            .cancel(cancel.clone())
            .state_store(store.clone())
            .build()
    };
    let engine = engine_for(config);
    let gate_shell_tools = cfg.gate_shell_tools;
    let reloader = crate::daemon::Reloader {
        build: Box::new(move || {
            let mut config = config::load(&opts)?;
            config.hooks.gate_shell_tools |= gate_shell_tools;
            Ok(engine_for(config))
        }),
        watch,
    };
    let socket = a.socket.or_else(crate::daemon::default_socket);
    // HTTP always needs a token: without one given, a fresh one in a 0600 file beside the
    // socket, for the operator's curl and Prometheus' `credentials_file`. (A non-loopback
    // address without --token is refused by the daemon instead.)
    let mut token = a.token;
    let mut token_file = None;
    if let Some(addr) = a.listen.filter(|l| token.is_none() && l.ip().is_loopback()) {
        let Some(path) = socket.as_deref().map(crate::daemon::token_file) else {
            return Exit::error(2, format!("error: --listen {addr} needs --token, or a --socket beside which to keep a generated one"));
        };
        let generated = match crate::daemon::generate_token() {
            Ok(t) => t,
            Err(e) => return Exit::error(2, format!("error: cannot generate a token: {e}")),
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = crate::daemon::write_token_file(&path, &generated) {
            return Exit::error(
                2,
                format!("error: cannot write the token file {}: {e}", path.display()),
            );
        }
        token = Some(generated);
        token_file = Some(path);
    }
    let told = token_file.clone();
    let dashboard_key = token.as_deref().map(crate::daemon::dashboard_key);
    let opts = crate::daemon::ServeOptions {
        socket,
        listen: a.listen,
        token,
        token_file,
        limits: crate::daemon::Limits {
            connections: a.max_connections as usize,
            header_timeout: std::time::Duration::from_secs(a.header_timeout),
            dispatches: a.max_dispatches as usize,
            ..Default::default()
        },
        ring: a.ring as usize,
        log: a.events.map(|p| (p, LOG_KEEP)),
        sessions: Some(memory),
        grace: std::time::Duration::from_secs(a.grace),
        inputs: Some(inputs),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return Exit::error(2, format!("error: cannot start the runtime: {e}")),
    };
    let result = runtime.block_on(crate::daemon::serve(
        engine,
        reloader,
        hub,
        opts,
        |listening| {
            eprintln!("hookd: listening on {}", listening.join(", "));
            if let Some(url) = listening.iter().find(|l| l.starts_with("http://")) {
                let how = match &told {
                    Some(f) => format!("\"Authorization: Bearer $(cat {})\"", f.display()),
                    None => "\"Authorization: Bearer $HOOKD_TOKEN\" (the --token given)".into(),
                };
                eprintln!(
                    "hookd: HTTP requests to {url} need the token: curl -H {how} {url}/v1/health"
                );
                // The page's URL carries a read-only key derived from the token (shows events,
                // dispatches nothing); keep it to yourself all the same.
                if let Some(key) = &dashboard_key {
                    eprintln!("dashboard: {url}/?key={key}");
                }
            }
        },
    ));
    match result {
        Ok(()) => {
            eprintln!("hookd: stopped");
            Exit::ok()
        }
        Err(e) => Exit::error(2, format!("error: {e}")),
    }
}

/// The files whose change makes a daemon reload: every configuration file it could read, present
/// or not, and the trust records (trusting a project takes effect without a restart).
fn watched_files(opts: &LoadOptions) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = match &opts.config_dir {
        Some(d) => vec![d.clone()],
        None => opts
            .home_dir
            .iter()
            .map(|h| h.join(".infer"))
            .chain([opts.project_dir.join(".infer")])
            .collect(),
    };
    dirs.iter()
        .flat_map(|d| config::PROJECT_FILES.iter().map(move |f| d.join(f)))
        .chain(opts.trust_file.clone())
        .collect()
}

/// Post a dispatch to the daemon at the default socket: `None` when none listens there or it
/// serves another project; else the socket and the Outcome JSON, or why the daemon could not be
/// used (the caller then dispatches in its own process, with the verdict the daemon would give).
fn via_daemon(
    point: HookPoint,
    context: &Context,
    inputs: Option<&str>,
) -> Option<(PathBuf, Result<String, String>)> {
    use crate::daemon::client::ClientError;
    let socket = crate::daemon::default_socket()?;
    let mut body = serde_json::json!({"point": point.name(), "context": context.to_value()});
    if let Some(project) = project_here().and_then(|d| d.to_str().map(String::from)) {
        body["project"] = serde_json::Value::String(project);
    }
    if let Some(inputs) = inputs {
        body["inputs"] = serde_json::Value::String(inputs.to_string());
    }
    let body = body.to_string();
    if body.len() > crate::daemon::MAX_REQUEST_BYTES {
        let e = format!(
            "the request is {} bytes, over its limit of {}",
            body.len(),
            crate::daemon::MAX_REQUEST_BYTES
        );
        return Some((socket, Err(e)));
    }
    // The daemon must take the dispatch well before the agent gives up on its hook; a slow or
    // saturated daemon costs this much, then the dispatch runs here.
    let accept = std::env::var("HOOKD_DAEMON_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(
            std::time::Duration::from_secs(2),
            std::time::Duration::from_millis,
        );
    let answer = match crate::daemon::client::post(
        &socket,
        "/v1/dispatch",
        &body,
        accept,
        std::time::Duration::from_secs(3700),
    ) {
        Ok((200, outcome)) => Ok(outcome),
        // It serves another project: its hooks are not this project's. Said, not silent: the
        // dispatch here may find no configuration and run nothing.
        Ok((409, answer)) => Err(serde_json::from_str::<serde_json::Value>(&answer)
            .ok()
            .and_then(|v| v["error"].as_str().map(String::from))
            .unwrap_or(answer)),
        Ok((status, answer)) => {
            let msg = serde_json::from_str::<serde_json::Value>(&answer)
                .ok()
                .and_then(|v| v["error"].as_str().map(String::from))
                .unwrap_or(answer);
            Err(format!("it answered {status}: {msg}"))
        }
        Err(ClientError::NotRunning(_)) => return None,
        Err(ClientError::Lost) => Err(LOST.to_string()),
        Err(e) => Err(e.to_string()),
    };
    Some((socket, answer))
}

/// The digest of this client's settings, which a daemon must share to answer it.
fn client_inputs(cfg: &ConfigArgs) -> Option<String> {
    LoadOptions::from_process(cfg.config_dir.clone())
        .map(|mut o| {
            o.trust_project = cfg.trust_project;
            o.inputs(cfg.gate_shell_tools)
        })
        .ok()
}

/// The daemon's answer when it stopped mid-dispatch (`ClientError::Lost`), as text.
const LOST: &str =
    "the daemon took the dispatch and stopped before answering (its hooks may have run)";

/// `hookd dispatch` and `hookd events --follow`: the daemon went away mid-way.
const EXIT_DAEMON_GONE: i32 = 3;

/// Rotated events files kept beside the current one.
const LOG_KEEP: usize = 3;

/// Dispatch through a running daemon: `None` when none answers (and none is required).
fn forward(
    point: HookPoint,
    context: &Context,
    local_events: bool,
    required: bool,
    inputs: Option<&str>,
) -> Option<Exit> {
    let via = via_daemon(point, context, inputs);
    // A daemon that could not be used dispatches here, unless one is required.
    let via = match via {
        // Not run again here: its hooks may have run in the daemon already.
        Some((socket, Err(e))) if e == LOST => {
            return Some(Exit::error(
                EXIT_DAEMON_GONE,
                format!("error: the hookd daemon at {}: {e}; not dispatched again here, so no hook runs twice", socket.display()),
            ))
        }
        Some((socket, Err(e))) if !required => {
            eprintln!(
                "hookd: the hookd daemon at {}: {e}; dispatching in this process",
                socket.display()
            );
            None
        }
        via => via,
    };
    let Some((socket, answer)) = via else {
        if required {
            let at = crate::daemon::default_socket()
                .map(|s| s.display().to_string())
                .unwrap_or_else(|| "(no socket path: set HOOKD_SOCKET)".into());
            return Some(Exit::error(
                2,
                format!("error: no hookd daemon for this project answers at {at}; start one here with `hookd serve`"),
            ));
        }
        return None;
    };
    if local_events {
        eprintln!("hookd: dispatching through the daemon at {}; its events go to its stream (GET /v1/events)", socket.display());
    }
    Some(match answer {
        Ok(outcome) => {
            out(&outcome_text(&outcome));
            Exit::ok()
        }
        Err(e) => Exit::error(
            2,
            format!("error: the hookd daemon at {}: {e}", socket.display()),
        ),
    })
}

/// One event as a line for people: `#seq time point type name details`.
fn event_line(json: &str) -> String {
    let Ok(e) = serde_json::from_str::<serde_json::Value>(json) else {
        return visible(json).into_owned();
    };
    let str_of = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let time = str_of("timestamp").get(11..23).unwrap_or("").to_string();
    let kind = str_of("type");
    let detail = match kind.as_str() {
        "hook_command" => {
            let how = if e["timed_out"] == true {
                "timed out".to_string()
            } else {
                format!("exit {}", e["exit_code"])
            };
            format!(
                "{} ({how}, {}ms) `{}`",
                str_of("name"),
                e["duration_ms"],
                str_of("command")
            )
        }
        "hook_command_skipped" => format!(
            "{} skipped: {} `{}`",
            str_of("name"),
            str_of("reason"),
            str_of("command")
        ),
        "system_reminder" => {
            let text: String = str_of("content")
                .chars()
                .take(60)
                .collect::<String>()
                .replace('\n', " ");
            format!("{} ({}): {text}", str_of("name"), str_of("trigger"))
        }
        "tool_command_denied" => format!(
            "{} denied: {} `{}`",
            str_of("tool"),
            str_of("reason"),
            str_of("command")
        ),
        "config_reloaded" => format!(
            "({}) {}",
            str_of("cause"),
            e["sources"]
                .as_array()
                .map(|a| a
                    .iter()
                    .filter_map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_default()
        ),
        "config_error" => format!(
            "({}) {}:{}: {} (previous configuration kept)",
            str_of("cause"),
            str_of("file"),
            e["line"],
            str_of("message")
        ),
        _ => String::new(),
    };
    // The session, short enough for a column: its first 12 characters.
    let session = str_of("session_id");
    let session = match session.char_indices().nth(12) {
        Some((i, _)) => format!("{}…", &session[..i]),
        None => session,
    };
    // Names, commands and reasons come from a project's files: one line, nothing hidden.
    visible(&format!(
        "#{:<6} {time:<12}  {session:<13} {:<16} {:<20} {detail}",
        e["seq"].to_string(),
        str_of("hook"),
        kind
    ))
    .into_owned()
}

/// A query value, percent-encoded (everything but unreserved characters).
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn events_cmd(
    follow: bool,
    since: u64,
    file: Option<PathBuf>,
    json: bool,
    session: Option<&str>,
) -> Exit {
    // The daemon filters by session itself; an events file is filtered here, the same way.
    let of_session = |line: &str| {
        session.is_none_or(|s| {
            let v = serde_json::from_str::<serde_json::Value>(line).unwrap_or_default();
            v["session_id"].as_str().is_none_or(|id| id == s)
        })
    };
    let print = |line: &str| {
        if !of_session(line) {
            return;
        }
        out(&format!(
            "{}\n",
            if json {
                line.to_string()
            } else {
                event_line(line)
            }
        ));
    };
    let seq_of = |line: &str| {
        serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v["seq"].as_u64())
            .unwrap_or(0)
    };
    if let Some(path) = file {
        let mut seen = 0usize;
        let files = crate::events::log_files(&path, LOG_KEEP);
        for p in &files[..files.len() - 1] {
            if let Ok(text) = std::fs::read_to_string(p) {
                text.lines().filter(|l| seq_of(l) > since).for_each(print);
            }
        }
        loop {
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if !follow => {
                    return Exit::error(2, format!("error: cannot read {}: {e}", path.display()))
                }
                Err(_) => String::new(),
            };
            let lines: Vec<&str> = text.lines().collect();
            if lines.len() < seen {
                seen = 0; // rotated under us
            }
            lines[seen..]
                .iter()
                .filter(|l| seq_of(l) > since)
                .for_each(|l| print(l));
            seen = lines.len();
            if !follow {
                return Exit::ok();
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
    let Some(socket) =
        crate::daemon::default_socket().filter(|s| crate::daemon::client::answers(s))
    else {
        return Exit::error(2, "error: no hookd daemon answers (see `hookd serve`); to read an events file, pass --file FILE");
    };
    let mut path = format!("/v1/events?since={since}&follow={follow}");
    if let Some(s) = session {
        path.push_str(&format!("&session={}", percent_encode(s)));
    }
    let mut last = since;
    let mut shutdown = false;
    let result = crate::daemon::client::sse(&socket, &path, |event, id, data| {
        match event {
            "missed" => eprintln!("hookd: {data}: events were missed"),
            "shutdown" => shutdown = true,
            _ => {
                last = id.unwrap_or(last);
                print(data);
            }
        }
        true
    });
    match result {
        // Following, the stream only ends when the daemon goes away.
        Ok(()) if follow => Exit::error(
            EXIT_DAEMON_GONE,
            format!(
                "hookd: the daemon at {} {}; the last event was {last} (resume with --since {last})",
                socket.display(),
                if shutdown { "shut down" } else { "went away" }
            ),
        ),
        Ok(()) => Exit::ok(),
        Err(e) => Exit::error(2, format!("error: reading the daemon's events: {e}")),
    }
}
