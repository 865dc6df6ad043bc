//! Commands that write many files at once, named by something other than their words: an
//! archive extracted into a directory (`tar xf a.tar -C ~`, `unzip a.zip`), a directory's
//! contents copied into another (`cp -r x/. ~`, `cp -rT x ~`, `rsync -a x/ ~`). What lands is
//! named inside the archive or the source directory, which the gate cannot see (and an earlier
//! part of the same command may still fill), so the destination itself must hold none of
//! hookd's own files: extracting into the home or the project directory is denied, into a
//! subdirectory that holds none of them is not.

use std::path::Path;

/// Where a bulk write by `argv` puts files: the destination words (`.` for the working
/// directory), or `None` when the command is not one. `Some(vec![])` means anywhere: `tar -P`
/// and `cpio --absolute-filenames` keep the archive's absolute names.
pub(super) fn destinations(argv: &[String]) -> Option<Vec<String>> {
    let program = Path::new(argv.first()?).file_name()?.to_str()?;
    // A multi-call binary runs its first argument as the program: `busybox tar xf a.tar`.
    if matches!(program, "busybox" | "toybox") && argv.len() > 1 {
        return destinations(&argv[1..]);
    }
    let args = &argv[1..];
    match program {
        "git" => git(args),
        p if p.starts_with("python") => python_module(args),
        "tar" | "gtar" | "bsdtar" => tar(args),
        "unzip" => unzip(args),
        "cpio" => cpio(args),
        "7z" | "7za" | "7zz" | "7zr" => sevenzip(args),
        "cp" => contents_copy(args, false),
        "rsync" => contents_copy(args, true),
        // macOS's ditto always copies the source's contents into the destination.
        "ditto" => last_operand(args).map(|d| vec![d.to_string()]),
        _ => None,
    }
}

/// Short options in a cluster (`-xzf` → `xzf`); `None` for a long option or an operand.
fn cluster(word: &str) -> Option<&str> {
    word.strip_prefix('-').filter(|w| !w.starts_with('-'))
}

/// The value of `--name=VALUE` or of `--name VALUE`, and of a short option `-C DIR` / `-CDIR`,
/// for each place it is given.
fn values<'a>(args: &'a [String], long: &str, short: Option<char>) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = args[i].as_str();
        let named = long_option(w, long);
        if let Some(Some(v)) = named {
            out.push(v);
        } else if named.is_some() {
            if let Some(v) = args.get(i + 1) {
                out.push(v.as_str());
                i += 1;
            }
        } else if let (Some(s), Some(c)) = (short, cluster(w)) {
            // The option letter takes the rest of the cluster as its value, or the next word.
            if let Some(at) = c.find(s) {
                let rest = &c[at + s.len_utf8()..];
                if !rest.is_empty() {
                    out.push(rest);
                } else if let Some(v) = args.get(i + 1) {
                    out.push(v.as_str());
                    i += 1;
                }
            }
        }
        i += 1;
    }
    out
}

/// `Some(value)` when `w` is the long option `long` (`--directory`) or an abbreviation of it
/// (GNU getopt takes `--dir=~`): `Some(None)` without `=VALUE`.
fn long_option<'a>(w: &'a str, long: &str) -> Option<Option<&'a str>> {
    let Some(full) = long.strip_prefix("--") else {
        // A single-dash word (unzip's `-d`) is taken as written.
        return match w.strip_prefix(long) {
            Some("") => Some(None),
            Some(rest) => rest.strip_prefix('=').map(Some),
            None => None,
        };
    };
    let (name, value) = super::options::long_name(w)?;
    super::options::abbreviates(name, full).then_some(value)
}

fn has_flag(args: &[String], long: &[&str], short: char) -> bool {
    args.iter().any(|w| {
        long.iter().any(|l| long_option(w, l).is_some())
            || cluster(w).is_some_and(|c| c.contains(short))
    })
}

fn or_here(dirs: Vec<&str>) -> Vec<String> {
    if dirs.is_empty() {
        vec![".".to_string()]
    } else {
        dirs.into_iter().map(str::to_string).collect()
    }
}

fn tar(args: &[String]) -> Option<Vec<String>> {
    // The old style puts the letters first without a dash: `tar xzf a.tgz`.
    let old_style = args
        .first()
        .filter(|w| !w.starts_with('-'))
        .is_some_and(|w| w.contains('x'));
    let extracts = old_style || has_flag(args, &["--extract", "--get"], 'x');
    if !extracts {
        return None;
    }
    let old_absolute = old_style && args.first().is_some_and(|w| w.contains('P'));
    if old_absolute || has_flag(args, &["--absolute-names"], 'P') {
        return Some(Vec::new());
    }
    Some(or_here(values(args, "--directory", Some('C'))))
}

fn unzip(args: &[String]) -> Option<Vec<String>> {
    // Listing, testing, comments and printing to stdout write nothing.
    let reads_only = args
        .iter()
        .any(|w| cluster(w).is_some_and(|c| c.starts_with(['l', 'v', 't', 'z', 'Z', 'p', 'c'])));
    if reads_only {
        return None;
    }
    Some(or_here(
        values(args, "-d", None)
            .into_iter()
            .chain(
                args.iter()
                    .filter_map(|w| w.strip_prefix("-d").filter(|d| !d.is_empty())),
            )
            .collect(),
    ))
}

fn cpio(args: &[String]) -> Option<Vec<String>> {
    if !has_flag(args, &["--extract"], 'i') {
        return None;
    }
    if args.iter().any(|w| w == "--absolute-filenames") {
        return Some(Vec::new());
    }
    Some(or_here(values(args, "--directory", Some('D'))))
}

fn sevenzip(args: &[String]) -> Option<Vec<String>> {
    if !matches!(args.first().map(String::as_str), Some("x" | "e")) {
        return None;
    }
    Some(or_here(
        args.iter()
            .filter_map(|w| w.strip_prefix("-o").filter(|d| !d.is_empty()))
            .collect(),
    ))
}

/// Git writes a work tree where `--work-tree` or `core.worktree` says (`git --work-tree=DIR
/// checkout .`), whatever the subcommand.
fn git(args: &[String]) -> Option<Vec<String>> {
    let mut dirs = values(args, "--work-tree", None);
    dirs.extend(
        args.iter()
            .filter_map(|w| w.strip_prefix("core.worktree="))
            .filter(|d| !d.is_empty()),
    );
    (!dirs.is_empty()).then(|| dirs.into_iter().map(str::to_string).collect())
}

/// `python3 -m tarfile -e ARCHIVE [DIR]` and `python3 -m zipfile -e ARCHIVE DIR`.
fn python_module(args: &[String]) -> Option<Vec<String>> {
    let at = args.iter().position(|w| w == "-m")?;
    if !matches!(
        args.get(at + 1).map(String::as_str),
        Some("tarfile" | "zipfile")
    ) {
        return None;
    }
    let rest = &args[at + 2..];
    let e = rest.iter().position(|w| w == "-e" || w == "--extract")?;
    Some(vec![rest
        .get(e + 2)
        .cloned()
        .unwrap_or_else(|| ".".to_string())])
}

/// `cp -r x/. DEST`, `cp -rT x DEST` and `rsync x/ DEST` put what is inside `x` into `DEST`
/// itself (for rsync a trailing `/` is enough).
fn contents_copy(args: &[String], rsync: bool) -> Option<Vec<String>> {
    let operands: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-'))
        .collect();
    let no_target = !rsync && has_flag(args, &["--no-target-directory"], 'T');
    let contents = operands.iter().any(|w| {
        *w == "."
            || w.ends_with("/.")
            || w.ends_with("/./")
            || (rsync && w.ends_with('/') && operands.last() != Some(w))
    });
    if !(contents || no_target) {
        return None;
    }
    let mut dests: Vec<String> = values(args, "--target-directory", Some('t'))
        .into_iter()
        .map(str::to_string)
        .collect();
    dests.extend(last_operand(args).map(str::to_string));
    Some(dests)
}

fn last_operand(args: &[String]) -> Option<&str> {
    args.iter()
        .map(String::as_str)
        .rfind(|w| !w.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dests(words: &str) -> Option<Vec<String>> {
        let argv: Vec<String> = words.split(' ').map(str::to_string).collect();
        destinations(&argv)
    }

    #[test]
    fn extractions_and_content_copies_name_their_destination() {
        let d = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(dests("tar xzf a.tgz"), d(&["."]));
        assert_eq!(dests("tar -xf a.tar -C /h"), d(&["/h"]));
        assert_eq!(dests("tar -C /h -xf a.tar"), d(&["/h"]));
        assert_eq!(
            dests("tar --extract --file=a.tar --directory=/h"),
            d(&["/h"])
        );
        assert_eq!(dests("tar -xf a.tar -C/h"), d(&["/h"]));
        assert_eq!(dests("tar --ext -f a.tar --dir=/h"), d(&["/h"]));
        assert_eq!(dests("tar -xf a.tar --direc /h"), d(&["/h"]));
        assert_eq!(dests("tar -xf a.tar --abs"), d(&[]));
        assert_eq!(dests("tar xPf a.tar"), d(&[]));
        assert_eq!(dests("tar -xf a.tar --absolute-names"), d(&[]));
        assert_eq!(dests("unzip -o a.zip"), d(&["."]));
        assert_eq!(dests("unzip a.zip -d /h"), d(&["/h"]));
        assert_eq!(dests("unzip a.zip -d/h"), d(&["/h"]));
        assert_eq!(dests("cpio -idv"), d(&["."]));
        assert_eq!(dests("cpio -i --absolute-filenames"), d(&[]));
        assert_eq!(dests("7z x a.7z -o/h"), d(&["/h"]));
        assert_eq!(dests("cp -r x/. /h"), d(&["/h"]));
        assert_eq!(dests("cp -rT x /h"), d(&["/h"]));
        assert_eq!(dests("cp -r . /h/backup"), d(&["/h/backup"]));
        assert_eq!(dests("rsync -a x/ /h"), d(&["/h"]));
        assert_eq!(dests("ditto x /h"), d(&["/h"]));
        assert_eq!(dests("busybox tar xf a.tar"), d(&["."]));
        assert_eq!(dests("python3 -m tarfile -e a.tar /h"), d(&["/h"]));
        assert_eq!(dests("python3 -m zipfile -e a.zip /h"), d(&["/h"]));
        assert_eq!(dests("git --work-tree=/h checkout ."), d(&["/h"]));
        assert_eq!(dests("git --work-tree /h checkout ."), d(&["/h"]));
        assert_eq!(dests("git -c core.worktree=/h checkout -f"), d(&["/h"]));
    }

    #[test]
    fn other_commands_are_not_bulk_writes() {
        for c in [
            "tar -cf box.tar src",
            "tar tf a.tar",
            "tar -tvf a.tar",
            "unzip -l a.zip",
            "unzip -t a.zip",
            "cpio -o",
            "7z l a.7z",
            "cp a b",
            "cp -r src dst",
            "rsync -a src dst/",
            "ls -x",
            "git status",
            "python3 -m tarfile -l a.tar",
            "busybox ls",
        ] {
            assert_eq!(dests(c), None, "{c}");
        }
    }
}
