//! Docs generated from code stay in sync with it.

#[test]
fn hook_points_page_is_generated_from_the_catalog() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hook-points.md");
    let expected = hookd::HookPoint::docs_markdown();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        actual, expected,
        "docs/hook-points.md is stale: run `hookd points --markdown > docs/hook-points.md`"
    );
}

/// The text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in the doc at `rel` must be
/// `expected`; with `UPDATE_GOLDEN` set, it is written there.
fn section_is(rel: &str, name: &str, expected: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = (
        format!("<!-- {name}:begin -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let start = text.find(&begin).expect("begin marker") + begin.len();
    let stop = text[start..].find(&end).expect("end marker") + start;
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let new = format!("{}{expected}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        &text[start..stop],
        expected,
        "{rel}'s {name} table is stale: run `UPDATE_GOLDEN=1 cargo test --test it docs::`"
    );
}

#[test]
fn the_places_table_is_the_catalog() {
    section_is("docs/security.md", "places", &hookd::places::markdown());
}

#[test]
fn the_variables_table_is_the_catalog() {
    section_is("docs/configuration.md", "vars", &hookd::vars::markdown());
}

/// `hookd ARGS --help`'s output.
fn help(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hookd"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands `--help` lists (`help` left out).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// The long options `--help` lists, with their value's name (`--since` → `SEQ`), `--help` left
/// out.
fn options(help: &str) -> Vec<(String, Option<String>)> {
    let re = regex::Regex::new(r"^\s+(?:-\w, )?(--[a-z][a-z-]*)(?: <([A-Z_]+)>)?").unwrap();
    help.lines()
        .filter_map(|l| re.captures(l))
        .map(|c| (c[1].to_string(), c.get(2).map(|v| v.as_str().to_string())))
        .filter(|(o, _)| o != "--help")
        .collect()
}

/// The options every command that loads the configuration takes, said once below the table.
const SHARED: [&str; 3] = ["--config-dir", "--trust-project", "--gate-shell-tools"];

#[test]
fn the_readmes_command_table_is_what_the_cli_accepts() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| *l != "### Command-line contract")
        .skip(4)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let note = readme
        .split("### Command-line contract")
        .nth(1)
        .and_then(|t| t.split("\n\n").nth(2))
        .unwrap();
    // Each command of a row's first cell: the words that name it, and its options as written.
    let flag = regex::Regex::new(r"(--[a-z][a-z-]*)(?: ([A-Z][A-Z_]*)\b)?").unwrap();
    let mut rows: Vec<(Vec<String>, String)> = Vec::new();
    for row in &table {
        let first = row.replace("\\|", "¦");
        let first = first.split('|').nth(1).unwrap();
        for cmd in first.split('`').skip(1).step_by(2) {
            let words: Vec<&str> = cmd.split_whitespace().collect();
            assert_eq!(words[0], "hookd", "{row}");
            let mut path = vec![words[1].to_string()];
            if !subcommands(&help(&[words[1]])).is_empty() {
                path.push(words[2].to_string());
            }
            rows.push((path, cmd.replace('¦', "|")));
        }
    }
    let mut commands: Vec<Vec<String>> = Vec::new();
    for sub in subcommands(&help(&[])) {
        let deeper = subcommands(&help(&[&sub]));
        if deeper.is_empty() {
            commands.push(vec![sub]);
        } else {
            commands.extend(deeper.into_iter().map(|d| vec![sub.clone(), d]));
        }
    }
    for path in &commands {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        // Every form the table gives of the command.
        let written: String = rows
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, w)| w.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            !written.is_empty(),
            "README's command table has no row for `hookd {}`",
            path.join(" ")
        );
        let written = &written;
        let accepted = options(&help(&args));
        // What the row names, the command takes, with the same value.
        for c in flag.captures_iter(written) {
            let (name, value) = (&c[1], c.get(2).map(|v| v.as_str()));
            let known = accepted.iter().find(|(o, _)| o == name);
            let Some((_, takes)) = known else {
                panic!("README: `hookd {}` has no option {name}", path.join(" "));
            };
            if let Some(value) = value {
                assert_eq!(
                    takes.as_deref(),
                    Some(value),
                    "README: `hookd {}` {name}",
                    path.join(" ")
                );
            }
        }
        // What the command takes, the row names (the shared options, the note below the table).
        for (name, _) in &accepted {
            let said = if SHARED.contains(&name.as_str()) {
                note
            } else {
                written.as_str()
            };
            assert!(
                flag.captures_iter(said).any(|c| &c[1] == name),
                "README: `hookd {}` takes {name}, which the command table does not say",
                path.join(" ")
            );
        }
    }
}

/// The README's layout names every module of `src/` (a file or a folder), and nothing that is
/// not there (issue 39 item 8).
#[test]
fn the_readmes_layout_is_the_source_tree() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let layout = readme
        .split("## Layout\n\n```\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a layout block");
    let named: Vec<&str> = layout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.contains('/') || w.ends_with(".rs"))
        .collect();
    for path in &named {
        assert!(
            root.join(path).exists(),
            "the layout names {path}, which is not there"
        );
    }
    for entry in std::fs::read_dir(root.join("src")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if matches!(name.as_str(), "lib.rs" | "main.rs") {
            continue;
        }
        let shown = if name.ends_with(".rs") {
            format!("src/{name}")
        } else {
            format!("src/{name}/")
        };
        assert!(
            named.contains(&shown.as_str()),
            "the layout does not name {shown}"
        );
    }
}

/// Every `HOOKD_*` variable the code names (in src/ and the sandbox crate) is in the catalog of
/// variables, so the docs' table, `env.keep`'s refusals and the scrub of what a repository set
/// know it (`HOOKD_CONFINED_AGENT` was missing when `hookd run --confine` added it).
#[test]
fn every_hookd_variable_the_code_names_is_in_the_catalog() {
    // What hookd sets for the hooks it runs (docs/hooks.md), over anything inherited: not read.
    const GIVEN_TO_HOOKS: &[&str] = &[
        "HOOKD_HOOK",
        "HOOKD_PROJECT_DIR",
        "HOOKD_SESSION_ID",
        "HOOKD_TURN",
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = std::collections::BTreeSet::new();
    let mut stack = vec![root.join("src"), root.join("crates")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (at, _) in text.match_indices("\"HOOKD_") {
                let name: String = text[at + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                // A whole name ends at the closing quote (not a prefix built on).
                if text[at + 1 + name.len()..].starts_with('"')
                    && !name.ends_with('_')
                    && !GIVEN_TO_HOOKS.contains(&name.as_str())
                    && !path.components().any(|c| c.as_os_str() == "tests")
                    && !hookd::vars::VARS.iter().any(|v| v.name == name)
                {
                    missing.insert(format!("{name} ({})", path.display()));
                }
            }
        }
    }
    assert!(missing.is_empty(), "not in src/vars.rs: {missing:?}");
}
