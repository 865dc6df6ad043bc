//! What a subcommand ends with: an exit code, and what to print on stderr first.

/// What the binary should exit with, and what to print on stderr first.
#[derive(Debug)]
pub(crate) struct Exit {
    /// Process exit code.
    pub(crate) code: i32,
    /// Printed to stderr (already formatted).
    pub(crate) message: Option<String>,
}

impl Exit {
    pub(super) fn ok() -> Self {
        Exit {
            code: 0,
            message: None,
        }
    }
    pub(super) fn code(code: i32) -> Self {
        Exit {
            code,
            message: None,
        }
    }
    pub(super) fn error(code: i32, message: impl Into<String>) -> Self {
        Exit {
            code,
            message: Some(message.into()),
        }
    }
}
