//! What a subcommand ends with: the exit code it chose, or an [`Error`], rendered in one place
//! (`main`) with the exit code that belongs to it.

use std::path::PathBuf;

use crate::config::ConfigError;

/// A subcommand's answer: `Ok(code)` when it did its job (0; 1 for a "no": denied, invalid
/// under `--strict`; an agent's own codes for `hookd adapter`), or the error that stopped it.
pub(crate) type Done = Result<i32, Error>;

/// Why a subcommand stopped. Each kind has one exit code ([`Error::code`]) and one rendering.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The configuration did not load (`hookd check` answers 1 for it, see [`Error::Invalid`]).
    #[error("{}", .0.report())]
    Config(ConfigError),
    /// `hookd check`: the configuration could not be read or is invalid, which is its answer
    /// (exit 1), not a failure to run.
    #[error("{0}")]
    Invalid(#[source] Box<Error>),
    /// The current directory is gone or unreadable.
    #[error("error: cannot determine the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// `--config-dir` names something that is not a directory.
    #[error("error: --config-dir {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// A library call failed; its error says what and where.
    #[error("error: {0}")]
    Library(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The command line asks for something that cannot be done here (the message says what to
    /// do instead).
    #[error("error: {0}")]
    Cannot(String),
    /// A "no" that is an answer, with its explanation (`check --strict`, nothing to trust).
    #[error("{0}")]
    No(String),
    /// The daemon took the request and went away before answering.
    #[error("{0}")]
    DaemonGone(String),
    /// `hookd exec`: the command cannot be confined here, so it did not run.
    #[error("hookd exec: not run: {0}")]
    Confine(String),
    /// SIGINT or SIGTERM arrived; running hooks were killed (their events are written).
    #[error("hookd: interrupted; running hooks were killed")]
    Interrupted(i32),
}

/// `hookd dispatch` and `hookd events --follow`: the daemon went away mid-way.
const EXIT_DAEMON_GONE: i32 = 3;

impl Error {
    /// The process exit code for this error.
    pub(crate) fn code(&self) -> i32 {
        match self {
            Error::Invalid(_) | Error::No(_) => 1,
            Error::DaemonGone(_) => EXIT_DAEMON_GONE,
            // As a shell says of a command it found and could not execute.
            Error::Confine(_) => 126,
            Error::Interrupted(signal) => 128 + signal,
            Error::Config(_)
            | Error::CurrentDir(_)
            | Error::NotADirectory(_)
            | Error::Library(_)
            | Error::Cannot(_) => 2,
        }
    }

    /// A library error, kept as the source.
    pub(crate) fn library(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::Library(Box::new(e))
    }
}
