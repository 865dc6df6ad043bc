//! `hookd schema hooks|reminders|config|events`: the JSON Schema (draft 2020-12) of each file
//! hookd reads, from the shapes its loader reads them with, and of the events it writes, from
//! the event types. Editors use them to underline what `hookd check` would reject.

use super::error::Done;
use crate::config::SchemaFile;

/// `hookd schema`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Which schema: a configuration file's, or an event's.
    #[arg(value_enum)]
    of: Of,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Of {
    Hooks,
    Reminders,
    Config,
    Events,
}

/// Print the schema, indented, with a final newline.
pub(super) fn run(a: Args) -> Done {
    let schema = match a.of {
        Of::Hooks => SchemaFile::Hooks.schema(),
        Of::Reminders => SchemaFile::Reminders.schema(),
        Of::Config => SchemaFile::Config.schema(),
        Of::Events => crate::events::schema(),
    };
    let text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    super::out(&format!("{text}\n"));
    Ok(0)
}
