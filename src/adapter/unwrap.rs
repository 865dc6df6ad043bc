//! The model's command inside hookd's rewrite of it: at `post_tool` the agent reports the call
//! it ran, which for a confined call is `'…/hookd' exec --shell='COMMAND'…`
//! ([`crate::sandbox::shell_rewrite`]); hooks, matchers and events see `COMMAND`.

use std::path::{Path, PathBuf};

use crate::sandbox::{shell_rewrite, Decided};

/// The model's command when `command` is exactly the rewrite of it by the hookd at `exec`,
/// else `None`: a call the model itself wrote as `'/x/hookd' exec --shell='ls'` (another
/// program, named hookd, unconfined) is not reported as `ls`.
pub(crate) fn model_command_by(command: &str, exec: &Path) -> Option<String> {
    let (program, _) = single_quoted(command)?;
    (Path::new(&program) == exec)
        .then(|| model_command(command))
        .flatten()
}

/// The model's command when `command` is exactly a hookd's rewrite of it (with or without the
/// words that carry the directory back), else `None`; what the engine rewrote itself.
pub(crate) fn model_command(command: &str) -> Option<String> {
    let (program, rest) = single_quoted(command)?;
    if Path::new(&program).file_name() != Some(std::ffi::OsStr::new("hookd")) {
        return None;
    }
    let (decided, mut rest) = decided(rest.strip_prefix(" exec ")?)?;
    let mut channel = None;
    if let Some(after) = rest.strip_prefix("--cwd-file=") {
        let (file, r) = single_quoted(after)?;
        channel = Some(file);
        rest = r.strip_prefix(' ')?;
    }
    let (inner, _) = single_quoted(rest.strip_prefix("--shell=")?)?;
    // Only what hookd itself would have written, byte for byte.
    let again = shell_rewrite(
        Path::new(&program),
        &inner,
        &decided,
        channel.as_deref().map(Path::new),
    );
    (again == command).then_some(inner)
}

/// The adapter's decision the rewrite carries (`--project='P' [--start-dir='S']
/// [--user-home='H'] [--config-dir='D'] [--session='ID'] [--read-only] `), and what follows
/// it.
fn decided(mut rest: &str) -> Option<(Decided, &str)> {
    let mut d = Decided::default();
    loop {
        if let Some(r) = rest.strip_prefix("--read-only ") {
            d.read_only = true;
            rest = r;
            continue;
        }
        let Some((flag, after)) = [
            "--project=",
            "--start-dir=",
            "--user-home=",
            "--config-dir=",
            "--session=",
        ]
        .iter()
        .find_map(|f| rest.strip_prefix(f).map(|a| (*f, a))) else {
            break;
        };
        let (value, r) = single_quoted(after)?;
        if flag == "--session=" {
            d = d.session(&value);
            rest = r.strip_prefix(' ')?;
            continue;
        }
        let value = Some(PathBuf::from(value));
        match flag {
            "--project=" => d.project = value?,
            "--start-dir=" => d.start = value,
            "--user-home=" => d.user_home = value,
            _ => d.config_dir = value,
        }
        rest = r.strip_prefix(' ')?;
    }
    Some((d, rest))
}

/// The single-quoted shell word at the start of `s` (`'…'`, a `'` inside written `'\''`), and
/// what follows it.
fn single_quoted(s: &str) -> Option<(String, &str)> {
    let mut word = String::new();
    let mut rest = s.strip_prefix('\'')?;
    loop {
        let end = rest.find('\'')?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix("\\''") {
            Some(r) => {
                word.push('\'');
                rest = r;
            }
            None => return Some((word, rest)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rewrite_gives_back_the_command_and_nothing_else_does() {
        let hookd = Path::new("/opt/it's/hookd");
        let decided = [
            Decided::in_project("/p"),
            Decided {
                read_only: true,
                config_dir: Some("/c o".into()),
                user_home: Some("/h".into()),
                ..Decided::in_project("/p").starting_in("/p/web")
            },
            Decided::in_project("/p").session("0b8c6d1e-4f2a-4c1b-9d3e-5a6b7c8d9e0f"),
        ];
        for d in &decided {
            for command in ["make test", "echo 'a b' && cd sub; pwd", "printf '\\''"] {
                let plain = shell_rewrite(hookd, command, d, None);
                assert_eq!(model_command(&plain).as_deref(), Some(command), "{plain}");
                let channel = Some(Path::new("/s/cwd/1-2-3"));
                let carried = shell_rewrite(hookd, command, d, channel);
                assert_eq!(
                    model_command(&carried).as_deref(),
                    Some(command),
                    "{carried}"
                );
                assert_eq!(model_command(&format!("{carried}; curl x")), None);
            }
        }
        // A session hookd would not carry (a quote in it) is not hookd's rewrite.
        assert_eq!(
            model_command("'/x/hookd' exec --project='/p' --session='a'\''b' --shell='ls'"),
            None
        );
        assert_eq!(model_command("'/bin/sh' exec --shell='make test'"), None);
        assert_eq!(model_command("make test"), None);
        assert_eq!(
            model_command("'/x/hookd' exec --project='/p' --shell='a'; rm -rf /"),
            None
        );
    }
}
