//! Diagnostics: what is wrong, where (file:line:col), and what to do about it.

use std::fmt;

use serde::Serialize;

use super::yaml::Pos;

/// How bad a diagnostic is: errors make the configuration invalid, warnings do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The configuration cannot be used.
    Error,
    /// Worth fixing; the configuration still loads.
    Warning,
}

/// One finding about a configuration source, located to the character.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file (as the user would type it) or the environment variable it came from.
    pub file: String,
    /// 1-based line; 0 when the finding is about the file as a whole.
    pub line: usize,
    /// 1-based column; 0 when unknown.
    pub col: usize,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The offending source line and how many characters to underline.
    #[serde(skip)]
    pub(crate) snippet: Option<(String, usize)>,
}

/// How a warning about an unknown key begins.
pub(crate) const UNKNOWN_KEY: &str = "unknown key ";

impl Diagnostic {
    /// A finding about a whole file or variable, with no position.
    pub(crate) fn whole(
        severity: Severity,
        file: &str,
        message: String,
        help: Option<String>,
    ) -> Self {
        Diagnostic {
            severity,
            file: file.to_string(),
            line: 0,
            col: 0,
            message,
            help,
            snippet: None,
        }
    }

    pub(crate) fn at(
        severity: Severity,
        file: &str,
        source: &str,
        pos: Pos,
        message: String,
        help: Option<String>,
    ) -> Self {
        let snippet = source
            .lines()
            .nth(pos.line.saturating_sub(1))
            .map(|l| (l.to_string(), pos.len));
        Diagnostic {
            severity,
            file: file.to_string(),
            line: pos.line,
            col: pos.col,
            message,
            help,
            snippet,
        }
    }

    /// `file:line:col`, `file:line` when the column is unknown, or just the file when there
    /// is no position (never a column 0: columns are 1-based).
    pub fn location(&self) -> String {
        match (self.line, self.col) {
            (0, _) => self.file.clone(),
            (line, 0) => format!("{}:{line}", self.file),
            (line, col) => format!("{}:{line}:{col}", self.file),
        }
    }

    /// Diagnostics as they are shown: errors first, then warnings; each file's in the order
    /// of its lines (files in the order they were read).
    pub(crate) fn sort(diags: &mut [Diagnostic]) {
        let mut files: Vec<String> = Vec::new();
        for d in diags.iter() {
            if !files.contains(&d.file) {
                files.push(d.file.clone());
            }
        }
        let rank = |f: &str| files.iter().position(|x| x == f).unwrap_or(usize::MAX);
        diags.sort_by_key(|d| (!d.is_error(), rank(&d.file), d.line, d.col));
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// True for a key hookd does not know and ignores: a warning to the loader (the agent's
    /// files may hold keys of a newer version), an error to an editor with hookd's schema and
    /// to `hookd check --strict`.
    pub fn is_ignored_key(&self) -> bool {
        !self.is_error() && self.message.starts_with(UNKNOWN_KEY)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        writeln!(f, "{label}: {}", self.message)?;
        write!(f, "  --> {}", self.location())?;
        if let Some((line, len)) = &self.snippet {
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            let caret_pad: String = line
                .chars()
                .take(self.col.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            write!(
                f,
                "\n{pad} |\n{num} | {line}\n{pad} | {caret_pad}{}",
                "^".repeat((*len).max(1))
            )?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_source_and_help() {
        let src = "enabled: true\nhooks:\n  - name: fmt\n    hook: post_sesion\n";
        let d = Diagnostic::at(
            Severity::Error,
            ".infer/hooks.yaml",
            src,
            Pos {
                line: 4,
                col: 11,
                len: 11,
            },
            "unknown hook point `post_sesion`".into(),
            Some("did you mean `post_session`?".into()),
        );
        assert_eq!(
            d.to_string(),
            "error: unknown hook point `post_sesion`\n  --> .infer/hooks.yaml:4:11\n  |\n4 |     hook: post_sesion\n  |           ^^^^^^^^^^^\n  = help: did you mean `post_session`?"
        );
    }
}
