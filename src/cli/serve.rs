//! `hookd serve`: its flags into the library's `daemon::Builder`, what it says when it listens.

use super::error::{Done, Error};
use super::load::{checked_options, print_warnings, ConfigArgs};
use crate::daemon::announcement;
use crate::host::Host;
use std::path::PathBuf;
use std::time::Duration;

/// `hookd serve`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    #[command(flatten)]
    pub(super) args: ServeArgs,
}

/// How `hookd serve` listens, logs and keeps state.
#[derive(Debug, Clone, clap::Args)]
pub(super) struct ServeArgs {
    /// The Unix socket (default $HOOKD_SOCKET, else $XDG_RUNTIME_DIR/hookd.sock, else
    /// ~/.infer/hookd.sock).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Also serve HTTP on this address, e.g. 127.0.0.1:7878 (port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,
    /// The token HTTP requests must carry as `Authorization: Bearer TOKEN` (also HOOKD_TOKEN).
    /// Without one, `--listen` keeps a token in a 0600 file beside the socket: the same across
    /// restarts, so open dashboards and scrapers resume.
    #[arg(long, env = "HOOKD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Replace the kept token with a new one (open dashboards must then be reopened with the
    /// new `dashboard:` address).
    #[arg(long, conflicts_with = "token")]
    new_token: bool,
    /// Also append events as JSON lines to FILE (rotated by size: FILE.1 … FILE.3).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Rotate the events file when it would grow past this many bytes.
    #[arg(long, default_value_t = 64 * 1024 * 1024, value_name = "BYTES")]
    events_max_bytes: u64,
    /// Seconds running dispatches may take to finish after SIGTERM before their hooks are killed.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    grace: u64,
    /// Forget a session's reminder state (turns, `once` reminders, stop guard) after this many
    /// seconds without a dispatch.
    #[arg(long, default_value_t = 86_400, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    session_idle: u64,
    /// Events kept in memory for subscribers that fall behind or reconnect (older ones are
    /// read back from --events).
    #[arg(long, default_value_t = 10_000, value_name = "N", value_parser = clap::value_parser!(u64).range(16..=10_000_000))]
    ring: u64,
    /// Bytes of events kept in memory at most (suffixes K, M, G: powers of 1024); the oldest
    /// go first, to be read back from --events.
    #[arg(long, default_value = "32M", value_name = "BYTES", value_parser = crate::daemon::hub::parse_size)]
    ring_bytes: u64,
    /// Bytes of events handed to one subscriber per write: what a subscriber that stops reading
    /// can hold (suffixes K, M, G).
    #[arg(long, default_value = "256K", value_name = "BYTES", value_parser = crate::daemon::hub::parse_size)]
    subscriber_bytes: u64,
    /// Sessions whose state is kept; a new one beyond this forgets the least recently used.
    #[arg(long, default_value_t = 10_000, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_sessions: u64,
    /// Projects served besides the one the daemon was started in (each loaded at its first
    /// dispatch, watched for changes); beyond it the least recently dispatched for is
    /// forgotten, and loaded again at its next dispatch.
    #[arg(long, default_value_t = crate::daemon::DEFAULT_MAX_PROJECTS as u64, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_projects: u64,
    /// Open connections per listener; more are closed at once (clients dispatch in-process).
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// Dispatches running at once; one more is answered 503 (clients dispatch in-process).
    #[arg(long, default_value_t = 128, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    max_dispatches: u64,
    /// Bytes of dispatch requests over 64 KiB taken at once (suffixes K, M, G); one more is
    /// answered 503 (clients dispatch in-process). Smaller ones count only in --max-dispatches.
    #[arg(long, default_value = "32M", value_name = "BYTES", value_parser = crate::daemon::hub::parse_size)]
    max_dispatch_bytes: u64,
    /// Observers (event streams, dashboards, /metrics scrapers) served at once per listener, at
    /// most half of --max-connections: the other connections are kept for dispatches.
    #[arg(long, default_value_t = 256, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_observers: u64,
    /// Seconds a client has to send a request's headers before its connection is closed.
    #[arg(long, default_value_t = 5, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout: u64,
}

/// `hookd serve`: the flags into the library's builder, run until SIGTERM or SIGINT.
pub(super) fn run(a: Args) -> Done {
    let s = a.args;
    // Loaded once, by the builder; checked and said as every other subcommand does.
    let mut options = checked_options(&a.cfg)?;
    // The daemon's confined hooks may not touch its own events file (held read-only to them).
    if let Some(p) = &s.events {
        let events = std::path::absolute(p).unwrap_or_else(|_| p.clone());
        options.also_places.push(("HOOKD_EVENTS".into(), events));
    }
    // Nor its own socket (and the token and trail beside it), wherever `--socket` put it: the
    // catalog finds it by `HOOKD_SOCKET`, which names it only where the variable chose it.
    let socket = s
        .socket
        .clone()
        .or_else(|| Host::of_this_process().socket());
    if let Some(socket) = &socket {
        let socket = std::path::absolute(socket).unwrap_or_else(|_| socket.clone());
        options.also_places.push(("HOOKD_SOCKET".into(), socket));
    }
    let exporter = super::telemetry::exporter(Some(&options));
    let builder = crate::daemon::Builder::new(options).map_err(Error::Config)?;
    print_warnings(builder.config());
    let mut builder = builder
        .budgets(
            crate::daemon::hub::Budgets::default()
                .ring(s.ring as usize, s.ring_bytes as usize)
                .subscriber(s.subscriber_bytes as usize),
        )
        .limits(crate::daemon::Limits {
            connections: s.max_connections as usize,
            header_timeout: Duration::from_secs(s.header_timeout),
            dispatches: s.max_dispatches as usize,
            dispatch_bytes: usize::try_from(s.max_dispatch_bytes).unwrap_or(usize::MAX),
            observers: s.max_observers as usize,
            ..Default::default()
        })
        .grace(Duration::from_secs(s.grace))
        .sessions(Duration::from_secs(s.session_idle), s.max_sessions as usize)
        .max_projects(s.max_projects as usize);
    if let Some(socket) = socket {
        builder = builder.socket(socket);
    }
    if let Some(addr) = s.listen {
        builder = builder.listen(addr, s.token);
    }
    if let Some(p) = s.events {
        builder = builder.events(p, s.events_max_bytes);
    }
    if let Ok(me) = std::env::current_exe() {
        builder = builder.exec_program(me);
    }
    if let Some(e) = exporter {
        builder = builder.export(e);
    }
    // HTTP on loopback without --token: the one kept in a 0600 file beside the socket (new with
    // --new-token), for the operator's curl and Prometheus' `credentials_file`.
    let told = builder
        .kept_token_file(s.new_token)
        .map_err(Error::library)?;
    let key = builder.token().map(crate::daemon::dashboard_key);
    builder
        .run_until_signalled(|listening| {
            for line in announcement(&listening, told.as_deref(), key.as_deref()) {
                eprintln!("{line}");
            }
        })
        .map_err(Error::library)?;
    eprintln!("hookd: stopped");
    Ok(0)
}
