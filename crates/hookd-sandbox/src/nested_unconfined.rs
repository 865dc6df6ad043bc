//! A build without the `confine` feature has no nested sandbox either (`nested.rs`): no
//! process is taken to run inside a confined agent, so [`crate::Confinement::prepare`] fails
//! as it does for any command under the sandbox.

use std::path::Path;

use super::{Confinement, Policy, Unavailable};

/// Set in a confined agent's environment by `hookd run --confine` (see `nested.rs`).
pub const AGENT_VAR: &str = "HOOKD_CONFINED_AGENT";

/// Never made in this build.
#[derive(Debug)]
pub(super) struct Nested {
    pub(super) proxy: Option<std::net::SocketAddr>,
}

/// Never: nothing here confines.
pub(super) fn here(_policy: &Policy, _missing: &[String]) -> bool {
    false
}

/// Never reached ([`here`] is false); fails as an unconfinable command does.
pub(super) fn prepare(
    _policy: &Policy,
    _project: &Path,
    _temp_root: &Path,
) -> Result<Confinement, Unavailable> {
    Err(Unavailable::Kernel(super::support().missing()))
}

/// Never reached: a nested confinement is never made in this build.
///
/// # Safety
/// As `nested.rs`'s: called in the child between fork and exec.
pub(super) unsafe fn confine(_c: &Confinement) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "this build does not confine (the `confine` feature)",
    ))
}
