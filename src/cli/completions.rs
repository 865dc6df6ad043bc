//! `hookd completions SHELL` and `hookd man`: generated from the one command-line definition
//! (clap_complete, clap_mangen), so they never disagree with what hookd accepts.

use super::error::{Done, Error};
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
        let points: Vec<&str> = hookd::catalog::HookPoint::ALL
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

/// Print the manual page: hookd's own, then one section per subcommand (`hookd-check(1)`…).
pub(super) fn man() -> Done {
    let cmd = super::Cli::command();
    let mut out = Vec::new();
    let render = |man: clap_mangen::Man, out: &mut Vec<u8>| {
        man.render(out)
            .map_err(|e| Error::Cannot(format!("cannot render the manual page: {e}")))
    };
    render(clap_mangen::Man::new(cmd.clone()), &mut out)?;
    for sub in cmd.get_subcommands() {
        let page = clap_mangen::Man::new(sub.clone()).title(format!("hookd-{}", sub.get_name()));
        render(page, &mut out)?;
    }
    super::out(&String::from_utf8_lossy(&out));
    Ok(0)
}
