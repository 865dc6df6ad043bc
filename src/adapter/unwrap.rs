//! The model's command inside hookd's rewrite of it: at `post_tool` the agent reports the call
//! it ran, which for a confined call is `'…/hookd' exec --shell='COMMAND'…`
//! ([`crate::sandbox::shell_rewrite`]); hooks, matchers and events see `COMMAND`.

use std::path::Path;

use crate::sandbox::shell_rewrite;

/// The model's command when `command` is exactly hookd's rewrite of it (with or without the
/// words that carry the directory back), else `None`.
pub(crate) fn model_command(command: &str) -> Option<String> {
    let (program, rest) = single_quoted(command)?;
    if Path::new(&program).file_name() != Some(std::ffi::OsStr::new("hookd")) {
        return None;
    }
    let mut rest = rest.strip_prefix(" exec ")?;
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
        channel.as_deref().map(Path::new),
    );
    (again == command).then_some(inner)
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
        for command in ["make test", "echo 'a b' && cd sub; pwd", "printf '\\''"] {
            let plain = shell_rewrite(hookd, command, None);
            assert_eq!(model_command(&plain).as_deref(), Some(command), "{plain}");
            let carried = shell_rewrite(hookd, command, Some(Path::new("/s/cwd/1-2-3")));
            assert_eq!(
                model_command(&carried).as_deref(),
                Some(command),
                "{carried}"
            );
            assert_eq!(model_command(&format!("{carried}; curl x")), None);
        }
        assert_eq!(model_command("'/bin/sh' exec --shell='make test'"), None);
        assert_eq!(model_command("make test"), None);
        assert_eq!(model_command("'/x/hookd' exec --shell='a'; rm -rf /"), None);
    }
}
