//! `hookd check`'s sections per hook point: each hook's verdict (as it is, and once the
//! project is trusted), the code it runs and who vouches for it, and the reminders.

use super::Around;
use crate::catalog::HookPoint;
use crate::config::{self, Config, HookSpec, Mode};
use crate::dispatch::Engine;
use crate::display::visible;
use crate::gate::{self, Verdict};

/// Every point with something configured, in loop order; what would not run goes to `refused`,
/// and how many hooks that is to the second value.
pub(super) fn point_sections(
    engine: &Engine,
    mode: Mode,
    around: &Around,
    refused: &mut Vec<String>,
) -> (String, usize) {
    let config = engine.config();
    // The gate as it will be once the project is trusted: its ignored entries added.
    let trusted_gate = {
        let mut all: Vec<_> = config.allow.all_entries().cloned().collect();
        all.extend(config.ignored_allow.iter().cloned());
        gate::Gate::new(
            &config::AllowLists::from_entries(all),
            config.allow_file.clone(),
        )
    };
    let mut s = String::new();
    let mut not_run = 0;
    for point in HookPoint::ALL {
        let hooks = config.hooks.hooks.iter().filter(|h| h.hook == point);
        let reminders = config
            .reminders
            .reminders
            .iter()
            .filter(|r| r.hook == point);
        if hooks.clone().next().is_none() && reminders.clone().next().is_none() {
            continue;
        }
        s.push_str(&format!("\n{point}\n"));
        for h in hooks {
            let gates = Gates {
                now: engine.gate_for(h.origin.source),
                trusted: &trusted_gate,
            };
            let before = refused.len();
            s.push_str(&hook_lines(config, h, gates, mode, around, refused));
            // One hook, however many reasons it has not to run.
            not_run += usize::from(refused.len() > before);
        }
        for r in reminders {
            s.push_str(&format!(
                "  reminder {} (trigger {})\n",
                visible(&r.name),
                visible(&r.trigger.to_string())
            ));
        }
    }
    (s, not_run)
}

/// The gate in effect, and the one once the project is trusted.
#[derive(Clone, Copy)]
struct Gates<'a> {
    now: &'a gate::Gate,
    trusted: &'a gate::Gate,
}

/// One hook: its verdict, whether its program is there, and what code it runs.
fn hook_lines(
    config: &Config,
    h: &HookSpec,
    gates: Gates<'_>,
    mode: Mode,
    around: &Around,
    refused: &mut Vec<String>,
) -> String {
    let untrusted = h.origin.source == config::Source::Project && !config.trust.allows_project();
    let verdict = gates.now.verdict(&h.command, mode);
    let (name, origin) = (
        visible(&h.name),
        visible(&h.origin.to_string()).into_owned(),
    );
    // An admitted hook whose program is missing does nothing when its point comes: the run's
    // own sentence (`gofmt` was not found on PATH), before any run.
    let missing = match &verdict {
        Verdict::Allowed(a) if !untrusted => a
            .argv
            .first()
            .and_then(|p| crate::runner::find_program(p, &config.project_dir, config.host()).err())
            .map(|e| e.to_string()),
        _ => None,
    };
    if let Some(why) = &missing {
        refused.push(format!(
            "hook {name} ({origin}) would not start: {}",
            visible(why)
        ));
    }
    if untrusted || matches!(verdict, Verdict::Denied(_)) {
        refused.push(format!(
            "hook {name} ({origin}) would be {}",
            if untrusted {
                "skipped: the project is not trusted"
            } else {
                "refused by the gate"
            }
        ));
    }
    let said = if untrusted {
        // What the gate will say once the project is trusted: with its entries too.
        format!(
            "SKIPPED (untrusted project): `hookd trust` after review; once trusted, {}",
            verdict_words(&gates.trusted.verdict(&h.command, mode), false)
        )
    } else {
        verdict_words(&verdict, true)
    };
    let mut s = format!(
        "  hook {name} `{}` (timeout {}s, {})\n    -> {said}\n",
        visible(&h.command),
        h.timeout.as_secs(),
        visible(&h.timeout_at.to_string())
    );
    if let Some(why) = &missing {
        s.push_str(&format!("    ! WOULD NOT START: {}\n", visible(why)));
    }
    s.push_str(&code_lines(config, h, around, refused));
    s
}

/// A verdict in `hookd check`'s words; `full` adds what runs or the operator's hint.
fn verdict_words(verdict: &Verdict, full: bool) -> String {
    match verdict {
        Verdict::Allowed(a) => {
            let by = format!(
                "allowed by `{}` ({})",
                visible(&a.entry.pattern),
                visible(&a.entry.origin.to_string())
            );
            if full {
                format!("{by}; runs {}", visible(&format!("{:?}", a.argv)))
            } else {
                by
            }
        }
        Verdict::Denied(d) if full => format!(
            "DENIED ({}): {}\n      hint: {}",
            d.reason,
            visible(&d.detail),
            visible(&d.hint)
        ),
        Verdict::Denied(d) => format!("DENIED ({}): {}", d.reason, visible(&d.detail)),
    }
}

/// What code a hook runs: a project hook's fingerprinted files; a user's hook running the
/// project's files and whether trust covers them; a program that runs repository content.
fn code_lines(config: &Config, h: &HookSpec, around: &Around, refused: &mut Vec<String>) -> String {
    let mut s = String::new();
    if h.origin.source == config::Source::Project {
        if let Some(line) = coverage_line(config, &h.command) {
            s.push_str(&format!("    {line}\n"));
        }
    } else if let Some((line, covered)) = project_code_line(config, &h.command, around) {
        if !covered {
            refused.push(format!(
                "hook {} ({}) would be skipped: it runs the project's code and the project's trust does not cover it",
                visible(&h.name),
                visible(&h.origin.to_string())
            ));
        }
        s.push_str(&format!("    {line}\n"));
    }
    if let Some(line) = repository_content_line(&h.command) {
        s.push_str(&format!("    {line}\n"));
    }
    s
}

/// What the fingerprint covers of a project hook's code, for the review; `None` for a program
/// found on PATH that is given no project file (not the project's code).
pub(super) fn coverage_line(config: &Config, command: &str) -> Option<String> {
    let c = config.code_coverage(command)?;
    match c.blind {
        Some(why) => Some(format!(
            "code NOT COVERED by the fingerprint: {}; review what it runs yourself",
            visible(&why)
        )),
        None if c.files.is_empty() => None,
        None => Some(format!(
            "code fingerprinted: {}",
            visible(&c.files.join(", "))
        )),
    }
}

/// For a hook of the user's own configuration that runs files of the project: the line that
/// says so, and whether the project's trust covers them (when not, the hook is skipped).
fn project_code_line(config: &Config, command: &str, around: &Around) -> Option<(String, bool)> {
    let argv = gate::argv_of(command)?;
    let code = config::project_code(&config.project_dir, &argv, around.host.path());
    if code.is_empty() {
        return None;
    }
    let files = visible(&code.join(", ")).into_owned();
    let covered = config
        .trust
        .uncovered(config.fingerprint.as_ref(), &code)
        .is_none();
    Some(if covered {
        (
            format!("runs the project's {files}: covered by the project's trust"),
            true,
        )
    } else {
        (
            format!("runs the project's {files}: needs `hookd trust` (skipped until then)"),
            false,
        )
    })
}

/// Programs that run what the repository's files say (build scripts, package scripts,
/// makefiles, test configuration): the allow-list admits the program, not what it runs.
const RUNS_REPOSITORY_CONTENT: &[(&str, &str)] = &[
    ("cargo", "build scripts (build.rs) and proc macros"),
    ("npm", "package.json scripts"),
    ("npx", "package binaries"),
    ("yarn", "package.json scripts"),
    ("pnpm", "package.json scripts"),
    ("bun", "package.json scripts"),
    ("make", "the Makefile"),
    ("just", "the justfile"),
    ("go", "go generate directives and test code"),
    ("gradle", "the build script"),
    ("gradlew", "the project's own Gradle wrapper"),
    ("mvn", "the pom's plugins"),
    ("pytest", "conftest.py and the tests"),
    ("tox", "tox.ini commands"),
    ("rake", "the Rakefile"),
    ("bundle", "the Gemfile"),
    ("composer", "composer.json scripts"),
    ("pre-commit", ".pre-commit-config.yaml hooks"),
];

/// For a hook whose program runs repository content: that hookd's trust does not cover it.
fn repository_content_line(command: &str) -> Option<String> {
    let argv = gate::argv_of(command)?;
    let program = argv.first()?.rsplit('/').next()?;
    let (_, what) = RUNS_REPOSITORY_CONTENT
        .iter()
        .find(|(p, _)| *p == program)?;
    Some(format!(
        "runs repository content ({what}) with your rights: neither the allow-list nor trust covers it (docs/security.md#honest-limits)"
    ))
}
