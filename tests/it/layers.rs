//! The library's modules form layers: no module depends, through `crate::` paths in its code,
//! on a module that depends back on it (docs/architecture.md draws the map). A cycle is how a
//! "small" change in one module starts needing another; this test names it when one appears.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library's top-level module a file belongs to (`None` for the binary and lib.rs).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.trim_end_matches(".rs").to_string();
    (!matches!(name.as_str(), "main" | "lib" | "cli")).then_some(name)
}

/// The `crate::X` names a file's code uses: comments and unit tests left out. A grouped
/// `crate::{a, b}` names each; every name must be a module (a re-export of lib.rs, like
/// `crate::HookPoint`, would hide which module it comes from: see
/// `every_crate_path_names_a_module`).
fn uses(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let mut out = BTreeSet::new();
    for line in code.lines() {
        // Code before any comment (a `//` in a string cuts the line short: harmless here).
        let line = line.split("//").next().unwrap_or("");
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            let names = match rest.strip_prefix('{') {
                // `crate::{a::X, b}`: each group member's first segment (on this line).
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(str::trim)
                    .map(str::to_string)
                    .collect(),
                None => vec![rest.to_string()],
            };
            for n in names {
                let name: String = n
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// The dependency graph of the library's top-level modules.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let deps = g.entry(module.clone()).or_default();
        deps.extend(uses(&text).into_iter().filter(|d| *d != module));
    }
    g
}

/// A cycle through `start`, if there is one (depth-first search).
fn cycle_from(
    g: &BTreeMap<String, BTreeSet<String>>,
    node: &str,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(i) = path.iter().position(|p| p == node) {
        let mut cycle = path[i..].to_vec();
        cycle.push(node.to_string());
        return Some(cycle);
    }
    if done.contains(node) {
        return None;
    }
    path.push(node.to_string());
    for dep in g.get(node).into_iter().flatten() {
        if let Some(c) = cycle_from(g, dep, path, done) {
            return Some(c);
        }
    }
    path.pop();
    done.insert(node.to_string());
    None
}

#[test]
fn the_library_modules_have_no_import_cycles() {
    let g = graph();
    assert!(g.len() > 15, "the module graph looks empty: {g:?}");
    let mut done = BTreeSet::new();
    for node in g.keys() {
        if let Some(cycle) = cycle_from(&g, node, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_shared_words_and_the_gate_sit_below_configuration() {
    let g = graph();
    // The leaves the issue names: the core types depend on the catalog (and its spelling
    // suggestions) only; the gate and events never reach up into configuration loading.
    let allowed = |m: &str, ok: &[&str]| {
        let extra: Vec<_> = g[m].iter().filter(|d| !ok.contains(&d.as_str())).collect();
        assert!(extra.is_empty(), "{m} depends on {extra:?}");
    };
    allowed("kinds", &["catalog", "suggest"]);
    allowed("catalog", &["suggest"]);
    allowed("gate", &["kinds", "paths", "places"]);
    allowed("events", &["catalog", "kinds"]);
    allowed("view", &[]);
}

#[test]
fn every_crate_path_names_a_module() {
    // A `crate::Name` through lib.rs's re-exports goes up to the crate's front and back down:
    // the graph would not see which module it depends on.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph();
    let not_modules: Vec<_> = g
        .iter()
        .flat_map(|(m, deps)| deps.iter().map(move |d| (m, d)))
        .filter(|(_, d)| !src.join(format!("{d}.rs")).is_file() && !src.join(d).is_dir())
        .map(|(m, d)| format!("{m} uses crate::{d}"))
        .collect();
    assert!(not_modules.is_empty(), "{not_modules:?}");
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    let found = cycle_from(&g, "a", &mut Vec::new(), &mut BTreeSet::new());
    assert_eq!(found.unwrap().join(" -> "), "a -> b -> c -> a");
    assert_eq!(
        uses("use crate::gate::X; // crate::nope\n/// crate::doc\nlet x = crate::events::now();"),
        ["events", "gate"].iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(
        uses("use crate::{kinds::Mode, paths};\nlet p: crate::HookPoint;"),
        ["HookPoint", "kinds", "paths"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}

/// The places in `text`'s code (comments and unit tests left out) that read or change the
/// process's environment or directory.
fn process_reads(text: &str) -> Vec<String> {
    const READS: [&str; 11] = [
        "env::var(",
        "env::vars(",
        "env::var_os(",
        "env::vars_os(",
        "env::current_dir(",
        "env::set_current_dir(",
        "env::set_var(",
        "env::remove_var(",
        "env::temp_dir(",
        "env::home_dir(",
        "use std::env;",
    ];
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .filter(|l| READS.iter().any(|r| l.contains(r)))
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn the_library_reads_the_process_only_through_its_host() {
    // The binary (src/cli, main.rs) reads the process at its edge and hands the library a
    // `Host`; host.rs is the one module that reads or changes the process for it. Anywhere
    // else, a read would make an embedder's engine see this process instead of its `Host`.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        if rel.starts_with("cli") || rel == Path::new("main.rs") || rel == Path::new("host.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        found.extend(
            process_reads(&text)
                .into_iter()
                .map(|l| format!("{}: {l}", rel.display())),
        );
    }
    // The sandbox crate takes everything from its policy and its caller: it reads nothing.
    let krate = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/hookd-sandbox/src");
    let mut files = Vec::new();
    sources(&krate, &mut files);
    assert!(files.len() > 5, "{}", krate.display());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        found.extend(
            process_reads(&text)
                .into_iter()
                .map(|l| format!("{}: {l}", file.display())),
        );
    }
    assert!(found.is_empty(), "{found:#?}");
    // The reader sees a read, and not one in a comment or a unit test.
    assert_eq!(
        process_reads("let p = std::env::var_os(\"PATH\"); // env::var(\nlet h = host.var(\"HOME\");\n#[cfg(test)]\nmod tests { std::env::current_dir() }"),
        ["let p = std::env::var_os(\"PATH\");"]
    );
}

/// The functions of a file's code (unit tests left out) whose body, the lines between the
/// `fn` line and its closing brace, is longer than `most`: (line, name, body lines).
fn long_functions(text: &str, most: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = (lines.iter())
        .position(|l| l.starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, line) in lines[..end].iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let mut words = code.split_whitespace().skip_while(|w| {
            w.starts_with("pub") || ["const", "async", "unsafe", "extern", "\"C\""].contains(w)
        });
        // A declaration, or a body on one line.
        if words.next() != Some("fn") || code.ends_with(';') || code.ends_with('}') {
            continue;
        }
        let name: String = (words.next().unwrap_or_default().chars())
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let closing = format!("{indent}}}");
        if let Some(n) = lines[i + 1..end].iter().position(|l| *l == closing) {
            if n > most {
                out.push((i + 1, name, n));
            }
        }
    }
    out
}

#[test]
fn no_file_in_src_is_over_800_lines_nor_a_function_over_80() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut over = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let rel = file.strip_prefix(&src).unwrap().display().to_string();
        if text.lines().count() > 800 {
            over.push(format!("src/{rel}: {} lines", text.lines().count()));
        }
        for (line, name, n) in long_functions(&text, 80) {
            over.push(format!("src/{rel}:{line}: fn {name} has {n} lines"));
        }
    }
    assert!(over.is_empty(), "split these:\n{}", over.join("\n"));
}

#[test]
fn the_function_length_check_finds_a_long_function() {
    let body = "    let x = 1;\n".repeat(81);
    let text = format!("pub(crate) fn long(a: u8) -> u8 {{\n{body}}}\n\nfn short() {{}}\n");
    assert_eq!(long_functions(&text, 80), vec![(1, "long".into(), 81)]);
    assert!(long_functions(&text, 81).is_empty());
}
