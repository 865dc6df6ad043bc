//! `hookd completions SHELL`: generated from the one command-line definition (clap_complete),
//! so it never disagrees with what hookd accepts.

use super::error::Done;
use clap::CommandFactory;
use clap_complete::Shell;

/// `hookd completions`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

/// Print the completion script for the shell.
pub(super) fn run(a: Args) -> Done {
    let mut cmd = super::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "hookd", &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if matches!(a.shell, Shell::Fish) {
        // clap_complete's fish script leaves positional values out: the points, from the catalog.
        let points: Vec<&str> = crate::catalog::HookPoint::ALL
            .iter()
            .map(|p| p.name())
            .collect();
        script.push_str(&format!(
            "complete -c hookd -n \"__fish_hookd_using_subcommand dispatch\" -f -a \"{}\"\n",
            points.join(" ")
        ));
    }
    super::out(&script);
    Ok(0)
}
