//! `hookd check` lints the allow-list: entries that cannot mean what their author meant are
//! warnings naming the entry, where it is, what is wrong and the exact fix.

use crate::support::{stderr, stdout, Project};

#[test]
fn check_prints_each_kind_of_allow_list_warning_with_its_fix() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools:\n  bash:\n    mode:\n      all:\n        allow:\n          - '^gofmt'\n          - '^gofmt -w .$'\n          - '^make; make test$'\n          - '^git status$'\n      auto:\n        allow:\n          - '^git .*'\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "warning: allow entry `^gofmt` (.infer/config.yaml:6) in modes `all`: it reads like a prefix, but entries match the whole command: it admits only `gofmt` itself, never with arguments\n  \
         = fix: write `^gofmt$` to say exactly this command, or list the arguments to allow (`^gofmt( -l)?$`; `^gofmt( .*)?$` admits any)\n\
         warning: allow entry `^gofmt -w .$` (.infer/config.yaml:7) in modes `all`: `.` matches any character, not only a dot (it admits `gofmt -w x`)\n  \
         = fix: write `\\.` for a literal dot: `^gofmt -w \\.$`\n\
         warning: allow entry `^make; make test$` (.infer/config.yaml:8) in modes `all`: no command can ever match it: `;` outside quotes is an operator or a redirection, never part of a simple command's words\n  \
         = fix: the gate admits one simple command per entry (a model's `a && b` needs an entry for `a` and one for `b`); remove or rewrite the entry, and check it with `hookd allow -- 'CMD'`\n\
         warning: allow entry `^git .*` (.infer/config.yaml:12) is UNRESTRICTED: in mode `auto` it admits `git push --force`, which no restricted entry should admit\n  \
         = fix: replace it by entries for the exact commands needed; `hookd allow -- 'CMD'` prints one for each\n\n"
    );
    assert!(
        stdout(&out).ends_with("hookd check: configuration is valid (4 warnings)\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_denied_command_names_the_entry_that_almost_matched() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^cargo test$', '^git log -[0-9]+$']}}}}\n",
    );
    let out = p.run(&["allow", "--", "cargo test --release"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).ends_with("; entry `^cargo test$` (.infer/config.yaml:1) came closest: it matches `cargo test` but not the rest, and an entry admits a command only if it matches all of it\n"),
        "{}",
        stdout(&out)
    );
    let out = p.run(&["allow", "--", "git log --oneline"]);
    assert!(
        stdout(&out).ends_with("; entry `^git log -[0-9]+$` (.infer/config.yaml:1) is for `git` but does not admit these arguments\n"),
        "{}",
        stdout(&out)
    );
    // Nothing for another program.
    let out = p.run(&["allow", "--", "make"]);
    assert!(
        !stdout(&out).contains("came closest") && !stdout(&out).contains("is for"),
        "{}",
        stdout(&out)
    );
}

/// Issue 28, item 3: `hookd check` says when an entry admits a wrapper (a note: the gate
/// judges the command behind it) or an interpreter with open arguments (a warning); the trust
/// review says it too, for the project's entries.
#[test]
fn check_and_trust_say_what_wrappers_and_interpreters_admit() {
    let p = crate::support::Project::new();
    p.write(
        "config.yaml",
        "tools:\n  bash:\n    mode:\n      all:\n        allow: ['^timeout( .*)?$', '^python3 scripts/.*$', '^python3 scripts/gen\\.py$']\n",
    );
    let o = p.run(&["check"]);
    let err = crate::support::stderr(&o);
    assert!(
        err.contains("note: allow entry `^timeout( .*)?$` (.infer/config.yaml:5) in modes `all`: it admits `timeout`, which runs another command: the gate judges that command on its own against the allow-list (`timeout … cargo test` also needs an entry for `cargo test`), refuses variables that change what runs, and refuses a `timeout` whose command it cannot determine\n"),
        "{err}"
    );
    assert!(
        err.contains("warning: allow entry `^python3 scripts/.*$` (.infer/config.yaml:5) in modes `all`: it admits `python3` with open arguments: the script or program text it runs can do anything, and the gate does not read it\n  = fix: allow the exact scripts (`^python3 scripts/gen\\.py$`); the trust review fingerprints scripts inside the project\n"),
        "{err}"
    );
    assert!(!err.contains("`^python3 scripts/gen\\.py$` ("), "{err}");
    let o = p.cmd_untrusted(&["trust"]).output().unwrap();
    let out = crate::support::stdout(&o);
    assert!(
        out.contains("'^timeout( .*)?$' (.infer/config.yaml:5)  a wrapper: the command behind it must be allowed on its own\n"),
        "{out}"
    );
    assert!(
        out.contains("'^python3 scripts/.*$' (.infer/config.yaml:5)  an interpreter: runs program text the gate does not read\n"),
        "{out}"
    );
}
