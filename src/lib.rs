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

#![warn(missing_docs)]

pub mod adapter;
mod atomic;
pub mod catalog;
mod command;
pub mod config;
mod context;
pub mod daemon;
pub mod decision;
pub mod dispatch;
pub mod display;
pub mod events;
pub mod gate;
mod kinds;
mod outcome;
pub mod paths;
mod provider;
mod reminder;
pub mod runner;
pub mod state;
mod suggest;
mod view;

pub use catalog::HookPoint;
pub use config::{load, Config, ConfigError, Diagnostic, LoadOptions, Mode};
pub use dispatch::{
    CommandOut, CommandStatus, Context, DispatchError, Engine, EngineBuilder, Outcome, ReminderOut,
};
pub use events::{Event, EventSink};
pub use gate::{DenyReason, Gate, Verdict};
