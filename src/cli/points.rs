//! `hookd points`: the catalog, for people, for scripts (JSON) and for the docs (Markdown).

use super::error::Done;
use super::out;
use hookd::catalog::HookPoint;

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
    points(a.json, a.markdown)
}

pub(super) fn points(json: bool, markdown: bool) -> Done {
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
    Ok(0)
}
