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
