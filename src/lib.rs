//! hookd: a hook engine for AI coding agents.
//!
//! Load the `.infer/` configuration, build an [`Engine`], and call [`Engine::dispatch`] at each
//! point of the agent's loop. Reminders come back in the [`Outcome`]; commands are gated by the
//! bash allow-list, run bounded, and reported as [`Event`]s.
//!
//! ```
//! use hookd::{Config, Context, Engine, HookPoint};
//!
//! let config = Config::from_yaml(
//!     ".",
//!     Some(("config.yaml", "tools: {bash: {mode: {all: {allow: ['^true$']}}}}")),
//!     Some(("hooks.yaml", "enabled: true\nhooks: [{name: t, hook: post_session, command: 'true'}]")),
//!     None,
//! )?;
//! let engine = Engine::builder(config).build();
//! let mut ctx = Context::new();
//! ctx.set("session_id", "s-1").set("turn", 3);
//! let outcome = engine.dispatch(HookPoint::PostSession, &ctx)?;
//! assert_eq!(outcome.commands[0].status, hookd::CommandStatus::Ok);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layout
//!
//! One dispatch flows through the modules in this order:
//!
//! - [`host`]: the process's variables and directory as a value ([`host::Host`]); the binary
//!   reads them once, and everything below reads that value.
//! - [`catalog`]: the fixed [`HookPoint`]s, what a hook at each may decide, and their docs.
//! - [`config`]: the `.infer/` files (home, then a trusted project) → a validated [`Config`];
//!   every error a [`Diagnostic`] with file, line and column.
//! - [`dispatch`]: the seam. [`Engine::dispatch`] reads the [`Context`], asks each provider
//!   (reminders, the model's tool gate, then command hooks) what is due, and returns an
//!   [`Outcome`].
//! - [`places`] and [`vars`]: the catalogs of the places hookd protects (what the gate and
//!   the sandbox each do with them) and of the environment variables it reads; every list of
//!   either is derived from them.
//! - [`gate`]: may this command run? One plain command admitted by an allow entry
//!   ([`Gate::verdict`]), or a model's command part by part ([`Gate::model_verdict`]).
//! - [`runner`]: an admitted command run without a shell, in its own process group, with a
//!   timeout and bounded output.
//! - [`decision`]: what hooks replied, limited to what their point lets them decide, folded
//!   into one decision.
//! - [`state`]: per-session state (turns, `once` reminders, the stop loop guard).
//! - [`events`]: every action as a numbered, timestamped [`Event`], to any [`EventSink`].
//!
//! Around the engine, each behind a cargo feature (on by default, with the binary):
//!
//! - `sandbox`: confinement of the commands hookd lets run (Landlock, namespaces, mounts,
//!   seccomp, egress by domain), the crate `hookd_sandbox` (crates/hookd-sandbox) with its
//!   `confine`; [`sandbox`] builds its policy from the configuration and the catalog of
//!   places. Without it every command still starts by the same spawn path, and a policy with
//!   the sandbox on runs nothing.
//! - `daemon` (module `daemon`): `hookd serve`, one engine for every session on the
//!   machine, over a Unix socket and loopback HTTP, with the event stream, metrics and a live
//!   dashboard (tokio, axum, hyper).
//! - `adapters` (module `adapter`): Claude Code's, Crush's and Gemini CLI's payloads
//!   in, their replies out, and `hookd install`.
//!
//! - `cli` (module [`cli`]): the `hookd` command line; its one public item is [`cli::main`],
//!   which `src/main.rs` calls.
//!
//! An embedder that needs only the engine depends on `hookd` with `default-features = false`.

#![warn(missing_docs)]

#[cfg(feature = "adapters")]
pub mod adapter;
mod atomic;
pub mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
mod command;
pub mod config;
mod context;
#[cfg(feature = "daemon")]
pub mod daemon;
pub mod decision;
pub mod dispatch;
pub(crate) mod display;
pub mod events;
pub mod gate;
pub mod host;
mod kinds;
#[cfg(feature = "otlp")]
pub mod otlp;
mod outcome;
pub(crate) mod paths;
pub mod places;
mod program;
mod provider;
mod reminder;
#[cfg(feature = "cli")]
mod review;
#[cfg(all(feature = "daemon", feature = "adapters"))]
pub(crate) mod route;
pub mod runner;
pub mod sandbox;
pub mod state;
mod suggest;
#[cfg(feature = "cli")]
mod tail;
mod tool_gate;
pub mod vars;
mod view;

pub use catalog::HookPoint;
pub use config::{load, Config, ConfigError, Diagnostic, LoadOptions, Mode};
pub use dispatch::{
    CommandOut, CommandStatus, Context, DispatchError, Engine, EngineBuilder, Outcome, ReminderOut,
};
pub use events::{Event, EventSink};
pub use gate::{DenyReason, Gate, Verdict};
pub use kinds::{HookDecision, ReloadCause, Role, SkipReason};
