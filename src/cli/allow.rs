//! `hookd allow`: the gate's verdict on one command, as a hook or as the model's.

use super::error::Done;
use super::load::{load_for, print_warnings, GateArgs};
use super::out;
use crate::review;

/// `hookd allow`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    pub(super) gate: GateArgs,
    /// Print {"allowed":bool,"reason":..,"hint":..} (with --model, also "parts": one
    /// verdict per simple command).
    #[arg(long)]
    pub(super) json: bool,
    /// Judge it as the model's shell command (gate_shell_tools): the agent's shell runs
    /// it, so `&&`, `||`, `;`, `|` and `|&` may join simple commands, each allowed on its
    /// own. Without it: as a hook command, which hookd runs itself, one simple command.
    #[arg(long)]
    pub(super) model: bool,
    /// The command, as one quoted string (several words are joined by spaces).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(super) command: Vec<String>,
}

/// `hookd allow`: exit 0 allowed, 1 denied.
pub(super) fn run(a: Args) -> Done {
    let (mode, command) = (a.gate.mode, a.command.join(" "));
    // Only the allow-list matters here: a broken hooks.yaml is a warning, not a stop.
    let config = load_for(a.gate.cfg, true)?;
    print_warnings(&config);
    let report = if a.model {
        let cwd = std::env::current_dir().unwrap_or_else(|_| config.project_dir.clone());
        review::model_verdict(&config, &command, mode, &cwd, a.json)
    } else {
        review::command_verdict(&config, &command, mode, a.json)
    };
    out(&report.text);
    if let Some(note) = &report.note {
        eprintln!("{note}");
    }
    Ok(if report.allowed { 0 } else { 1 })
}
