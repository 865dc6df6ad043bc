//! Program text the gate reads: a sed script's commands and an awk program's constructs, each
//! read far enough to find one that runs a program, writes a file or loads code; text these
//! readers do not follow is refused.

use super::Does::{self, Loads, Runs, Writes};
use super::TextReading;
use std::ops::ControlFlow::{self, Break, Continue};

/// The first command of a sed script that runs a program or writes or reads a file, with what
/// it does; `Err` when the script is not one this reader follows (then it is refused).
pub(super) fn sed_script(script: &str) -> TextReading {
    let sed = Sed(script.chars().collect());
    let mut i = 0;
    loop {
        while sed.at(i).is_some_and(|c| c.is_whitespace() || c == ';') {
            i += 1;
        }
        let Some(first) = sed.at(i) else {
            return Ok(None);
        };
        if first == '#' {
            i = sed.to_line_end(i);
            continue;
        }
        i = sed.addresses(i)?;
        let command = sed.at(i).ok_or(())?;
        match sed.command(command, i + 1)? {
            Continue(next) => i = next,
            Break(found) => return Ok(Some(found)),
        }
    }
}

/// A sed script, as characters.
struct Sed(Vec<char>);

/// What a command comes to: go on at an index, or what the script does.
type Step = ControlFlow<(&'static str, Does), usize>;

impl Sed {
    fn at(&self, i: usize) -> Option<char> {
        self.0.get(i).copied()
    }

    /// Skips a delimited part (`/re/`, the parts of `s` and `y`), escapes included; returns
    /// the index after the closing delimiter.
    fn delimited(&self, mut i: usize, d: char) -> Result<usize, ()> {
        while let Some(c) = self.at(i) {
            if c == '\\' {
                i += 2;
            } else if c == d {
                return Ok(i + 1);
            } else {
                i += 1;
            }
        }
        Err(())
    }

    fn to_line_end(&self, mut i: usize) -> usize {
        while let Some(c) = self.at(i) {
            if c == '\\' {
                i += 2;
            } else if c == '\n' {
                break;
            } else {
                i += 1;
            }
        }
        i
    }

    /// One address (a line, `$`, `/re/`, `\cREc`, with its `I`/`M` flags), if there is one.
    fn address(&self, mut i: usize) -> Result<usize, ()> {
        match self.at(i) {
            Some(c) if c.is_ascii_digit() => {
                while self.at(i).is_some_and(|c| c.is_ascii_digit() || c == '~') {
                    i += 1;
                }
            }
            Some('$') => i += 1,
            Some('/') => i = self.delimited(i + 1, '/')?,
            Some('\\') => {
                let d = self.at(i + 1).ok_or(())?;
                i = self.delimited(i + 2, d)?;
            }
            _ => return Ok(i),
        }
        while matches!(self.at(i), Some('I' | 'M')) {
            i += 1;
        }
        Ok(i)
    }

    /// A command's addresses (`A`, `A,B`, `A,+N`, `A,~N`) and its negation and blanks.
    fn addresses(&self, i: usize) -> Result<usize, ()> {
        let mut i = self.address(i)?;
        if self.at(i) == Some(',') {
            i += 1;
            if matches!(self.at(i), Some('+' | '~')) {
                i += 1;
            }
            i = self.address(i)?;
        }
        while self
            .at(i)
            .is_some_and(|c| c == '!' || c == ' ' || c == '\t')
        {
            i += 1;
        }
        Ok(i)
    }

    /// The command `command`, whose arguments start at `i`.
    fn command(&self, command: char, mut i: usize) -> Result<Step, ()> {
        match command {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'l' | 'L' | 'q' | 'Q' => {
                while self.at(i).is_some_and(|c| c.is_ascii_digit() || c == ' ') {
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                while self
                    .at(i)
                    .is_some_and(|c| c != ';' && c != '\n' && c != '}')
                {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' => i = self.to_line_end(i),
            'e' => return Ok(Break(("e", Runs))),
            'w' => return Ok(Break(("w", Writes))),
            'W' => return Ok(Break(("W", Writes))),
            'r' => return Ok(Break(("r", Loads))),
            'R' => return Ok(Break(("R", Loads))),
            's' | 'y' => return self.substitute(command, i),
            _ => return Err(()),
        }
        Ok(Continue(i))
    }

    /// `s/re/text/flags` or `y/abc/xyz/`: the `e` and `w` flags run and write.
    fn substitute(&self, command: char, i: usize) -> Result<Step, ()> {
        let d = self.at(i).ok_or(())?;
        if d == '\n' || d == '\\' {
            return Err(());
        }
        let mut i = self.delimited(i + 1, d)?;
        i = self.delimited(i, d)?;
        if command == 'y' {
            return Ok(Continue(i));
        }
        while let Some(c) = self.at(i) {
            match c {
                'e' => return Ok(Break(("s///e", Runs))),
                'w' => return Ok(Break(("s///w", Writes))),
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' | ' ' | '\t' => i += 1,
                c if c.is_ascii_digit() => i += 1,
                ';' | '\n' | '}' | '#' => break,
                _ => return Err(()),
            }
        }
        Ok(Continue(i))
    }
}

/// The first construct of an awk program that runs a command, writes a file or loads code;
/// `Err` for a string or regex that never ends.
pub(super) fn awk_program(program: &str) -> TextReading {
    let s: Vec<char> = program.chars().collect();
    let mut i = 0;
    // Whether the last token was an operand (then `/` divides; else it starts a regex).
    let mut operand = false;
    // The parenthesis depth at which a `print`/`printf` statement began, while in one.
    let mut print_at: Option<usize> = None;
    let mut depth = 0usize;
    while let Some(&c) = s.get(i) {
        match c {
            '"' => {
                i = string_end(&s, i + 1)?;
                operand = true;
            }
            '/' if !operand => {
                i = regex_end(&s, i + 1)?;
                operand = true;
            }
            '#' => {
                while s.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
                continue;
            }
            '|' if s.get(i + 1) == Some(&'|') => {
                i += 1;
                operand = false;
            }
            '|' => return Ok(Some(("|", Runs))),
            '@' => return Ok(Some(("@load", Runs))),
            '>' if print_at == Some(depth) => return Ok(Some(("print >", Writes))),
            '(' => {
                depth += 1;
                operand = false;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                operand = true;
            }
            ';' | '{' | '}' | '\n' => {
                print_at = None;
                operand = false;
            }
            c if c.is_alphanumeric() || c == '_' => {
                let start = i;
                while s.get(i).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
                    i += 1;
                }
                let word: String = s[start..i].iter().collect();
                match word.as_str() {
                    "system" => return Ok(Some(("system", Runs))),
                    "print" | "printf" => {
                        print_at = Some(depth);
                        operand = false;
                    }
                    "return" | "in" | "getline" => operand = false,
                    _ => operand = true,
                }
                continue;
            }
            ']' | '$' => operand = c == ']',
            c if c.is_whitespace() => {}
            _ => operand = false,
        }
        i += 1;
    }
    Ok(None)
}

/// The index of the `"` closing a string that starts at `i`; `Err` if it never closes.
fn string_end(s: &[char], mut i: usize) -> Result<usize, ()> {
    loop {
        match s.get(i) {
            Some('\\') => i += 2,
            Some('"') => return Ok(i),
            Some(_) => i += 1,
            None => return Err(()),
        }
    }
}

/// The index of the `/` closing a regex that starts at `i` (not one inside a bracket
/// expression); `Err` if it never closes on its line.
fn regex_end(s: &[char], mut i: usize) -> Result<usize, ()> {
    let mut class = false;
    loop {
        match s.get(i) {
            Some('\\') => i += 2,
            Some('[') => {
                class = true;
                i += 1
            }
            Some(']') => {
                class = false;
                i += 1
            }
            Some('/') if !class => return Ok(i),
            Some('\n') | None => return Err(()),
            Some(_) => i += 1,
        }
    }
}
