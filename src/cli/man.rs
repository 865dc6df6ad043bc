//! `hookd man`: the manual, generated from the one command-line definition (clap_mangen): the
//! page of `hookd`, then one of each subcommand (`hookd-events`…), in one roff stream. Pages
//! name each other as the commands are typed (`hookd events`), never as `hookd-events(1)`,
//! which `man` would not find; each synopsis is the command as typed, with its values.

use super::error::{Done, Error};
use clap::CommandFactory;

/// Print the manual.
pub(super) fn man() -> Done {
    let mut cmd = super::Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    page(&cmd, &["hookd"], &mut out)
        .map_err(|e| Error::Cannot(format!("cannot render the manual page: {e}")))?;
    super::out(&once_a_page(&String::from_utf8_lossy(&out)));
    Ok(0)
}

/// The roff preamble clap_mangen writes before each section it renders, kept only where a
/// page starts.
fn once_a_page(roff: &str) -> String {
    const PREAMBLE: [&str; 2] = [".ie \\n(.g .ds Aq \\(aq", ".el .ds Aq '"];
    let lines: Vec<&str> = roff.lines().collect();
    let mut out = String::with_capacity(roff.len());
    let mut i = 0;
    while i < lines.len() {
        let pair = lines.get(i..i + 2) == Some(&PREAMBLE[..]);
        if pair && !lines.get(i + 2).is_some_and(|l| l.starts_with(".TH ")) {
            i += 2;
            continue;
        }
        out.push_str(lines[i]);
        out.push('\n');
        i += 1;
    }
    out
}

/// The page of `cmd`, typed as `path`, then those of its subcommands.
fn page(cmd: &clap::Command, path: &[&str], out: &mut Vec<u8>) -> std::io::Result<()> {
    let typed = path.join(" ");
    let mut shown = cmd
        .clone()
        .bin_name(&typed)
        .display_name(path.join("-"))
        .override_usage(synopsis(cmd, &typed));
    for sub in cmd.get_subcommands() {
        // Listed below as typed, not by clap_mangen as pages of their own.
        shown = shown.mut_subcommand(sub.get_name(), |s| s.hide(true));
    }
    let man = clap_mangen::Man::new(shown.clone()).title(path.join("-"));
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(out)?;
    }
    let subs: Vec<&clap::Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    if !subs.is_empty() {
        out.extend_from_slice(b".SH COMMANDS\n");
        for sub in &subs {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let line = format!(
                ".TP\n\\fB{}\\fR\n{}\n",
                roff(&format!("{typed} {}", sub.get_name())),
                roff(&about)
            );
            out.extend_from_slice(line.as_bytes());
        }
    }
    if shown.get_after_help().is_some() || shown.get_after_long_help().is_some() {
        man.render_extra_section(out)?;
    }
    if path.len() == 1 {
        man.render_version_section(out)?;
    }
    for sub in subs {
        let mut deeper = path.to_vec();
        deeper.push(sub.get_name());
        page(sub, &deeper, out)?;
    }
    Ok(())
}

/// The command as typed with every option and argument it takes, values named:
/// `hookd events [-f|--follow] [--since <SEQ>] … [-h|--help]`.
pub(super) fn synopsis(cmd: &clap::Command, typed: &str) -> String {
    let mut words = vec![typed.to_string()];
    let value = |a: &clap::Arg| {
        let names = a
            .get_value_names()
            .map(|v| v.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>())
            .unwrap_or_else(|| vec![format!("<{}>", a.get_id().as_str().to_uppercase())]);
        names.join(" ")
    };
    // Options first, then the arguments, as clap's usage has them.
    let (args, options): (Vec<&clap::Arg>, Vec<&clap::Arg>) = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .partition(|a| a.is_positional());
    for a in options.into_iter().chain(args) {
        let takes = a.get_num_args().is_some_and(|n| n.takes_values());
        let word = if a.is_positional() {
            value(a)
        } else {
            let flag = match (a.get_short(), a.get_long()) {
                (Some(s), Some(l)) => format!("-{s}|--{l}"),
                (Some(s), None) => format!("-{s}"),
                (None, Some(l)) => format!("--{l}"),
                (None, None) => continue,
            };
            if takes {
                format!("{flag} {}", value(a))
            } else {
                flag
            }
        };
        words.push(if a.is_required_set() {
            word
        } else {
            format!("[{word}]")
        });
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        words.push("<COMMAND>".into());
    }
    words.join(" ")
}

/// `text` as roff body text: backslashes and hyphens escaped, no control character first.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}
