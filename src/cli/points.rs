//! `hookd points`: the catalog, for people, for scripts (JSON) and for the docs (Markdown).

use super::error::Done;
use super::out;
use crate::catalog::HookPoint;

/// `hookd points`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Print JSON.
    #[arg(long)]
    pub(super) json: bool,
    /// Print the Markdown page docs/hook-points.md.
    #[arg(long, conflicts_with = "json")]
    pub(super) markdown: bool,
}

/// `hookd points`.
pub(super) fn run(a: Args) -> Done {
    out(&if a.markdown {
        HookPoint::docs_markdown()
    } else if a.json {
        format!("{}\n", HookPoint::docs_json())
    } else {
        HookPoint::docs_text()
    });
    Ok(0)
}
