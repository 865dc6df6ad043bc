//! The runner under hostile commands: every fault bounded, every process dead on return.

use std::time::{Duration, Instant};

use hookd::runner::{run, RunReport, RunSpec};

fn spec(argv: &[&str], timeout_ms: u64) -> RunSpec {
    RunSpec {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        cwd: std::env::temp_dir(),
        stdin: b"{}".to_vec(),
        env: vec![],
        environment: Default::default(),
        timeout: Duration::from_millis(timeout_ms),
        grace: Duration::from_millis(300),
        max_output: 4096,
        confinement: None,
    }
}

fn sh(script: &str, timeout_ms: u64) -> RunSpec {
    spec(&["sh", "-c", script], timeout_ms)
}

/// True when `pid` no longer runs (gone, or a zombie waiting for its new parent to reap it).
fn dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .map(|rest| rest.trim_start().starts_with('Z'))
            .unwrap_or(true),
    }
}

fn pids(report: &RunReport) -> Vec<i32> {
    report
        .stdout
        .text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[test]
fn grandchild_holding_stdout_cannot_hang_the_run() {
    let start = Instant::now();
    let r = run(&sh("sleep 30 & echo $!; sleep 30 & echo $!", 10_000));
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(r.exit_code, Some(0));
    assert!(r.leaked, "{r:?}");
    let kids = pids(&r);
    assert_eq!(kids.len(), 2, "{r:?}");
    assert!(
        kids.iter().all(|p| dead(*p)),
        "descendants survived: {kids:?}"
    );
}

#[test]
fn background_descendant_without_pipes_is_killed_too() {
    let r = run(&sh("sleep 30 >/dev/null 2>&1 & echo $!", 10_000));
    assert_eq!(r.exit_code, Some(0));
    let kids = pids(&r);
    assert_eq!(kids.len(), 1);
    assert!(dead(kids[0]));
}

#[test]
fn a_process_ignoring_term_is_killed_after_the_grace() {
    let start = Instant::now();
    let r = run(&sh(
        "trap '' TERM; echo $$; while :; do sleep 0.05; done",
        500,
    ));
    let took = start.elapsed();
    assert!(r.timed_out);
    assert_eq!(r.exit_code, None);
    assert_eq!(r.signal, Some(9));
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_secs(4),
        "{took:?}"
    );
    assert!(
        r.error
            .as_deref()
            .unwrap()
            .starts_with("timed out after 0.5s"),
        "{:?}",
        r.error
    );
    assert!(pids(&r).iter().all(|p| dead(*p)));
}

#[test]
fn a_stopped_process_still_dies_at_the_timeout() {
    let start = Instant::now();
    let r = run(&sh("kill -STOP $$", 400));
    assert!(r.timed_out);
    assert!(start.elapsed() < Duration::from_secs(3));
}

#[test]
fn flooding_stdout_keeps_the_cap_and_counts_the_rest() {
    let r = run(&spec(&["yes"], 500));
    assert!(r.timed_out);
    assert_eq!(r.stdout.text.len(), 4096);
    assert!(r.stdout.dropped > 100_000, "{}", r.stdout.dropped);
    assert!(r.stdout.truncated());
}

#[test]
fn flooding_stderr_while_stdout_is_quiet() {
    let r = run(&sh(
        "head -c 2000000 /dev/zero | tr '\\0' e >&2; echo done",
        10_000,
    ));
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(r.stdout.text, "done\n");
    assert_eq!(r.stderr.text.len(), 4096);
    assert_eq!(r.stderr.dropped, 2_000_000 - 4096);
}

#[test]
fn a_child_that_never_reads_a_large_context() {
    let mut s = sh("sleep 0.1; echo ok", 5_000);
    s.stdin = vec![b'x'; 1024 * 1024];
    let r = run(&s);
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(r.stdout.text, "ok\n");
    assert_eq!(r.error, None);
}

#[test]
fn a_child_that_exits_at_once() {
    let mut s = spec(&["true"], 5_000);
    s.stdin = vec![b'x'; 1024 * 1024];
    let r = run(&s);
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(r.error, None);
}

#[test]
fn raw_bytes_in_output_are_kept_safely() {
    let r = run(&sh(r"printf 'a\377b\000c\rd\033[31me'", 5_000));
    assert_eq!(r.stdout.text, "a\u{FFFD}b\0c\rd\x1b[31me");
}

#[test]
fn exit_codes_and_signals_are_outcomes() {
    let r = run(&sh("exit 126", 5_000));
    assert_eq!(
        (r.exit_code, r.error.as_deref()),
        (Some(126), Some("exit status 126"))
    );
    let r = run(&sh("exit 127", 5_000));
    assert_eq!(r.exit_code, Some(127));
    let r = run(&sh("kill -KILL $$", 5_000));
    assert_eq!((r.exit_code, r.signal), (None, Some(9)));
    assert_eq!(r.error.as_deref(), Some("killed by SIGKILL"));
    assert_eq!(r.exit_code_or_minus_one(), -1);
}

#[test]
fn programs_that_cannot_start_say_why() {
    let r = run(&spec(&["gofmt-definitely-missing", "-w", "."], 5_000));
    assert_eq!(
        r.error.as_deref(),
        Some("`gofmt-definitely-missing` was not found on PATH; is it installed?")
    );
    assert_eq!(r.exit_code_or_minus_one(), -1);

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("noexec.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let r = run(&spec(&[script.to_str().unwrap()], 5_000));
    assert_eq!(
        r.error.as_deref(),
        Some(format!("permission denied executing `{}`", script.display()).as_str())
    );

    let mut s = spec(&["true"], 5_000);
    s.cwd = dir.path().join("gone");
    let r = run(&s);
    assert_eq!(
        r.error.as_deref(),
        Some(format!("working directory {} does not exist", s.cwd.display()).as_str())
    );
}

#[test]
fn a_huge_timeout_does_not_delay_a_quick_command() {
    let start = Instant::now();
    let r = run(&spec(&["true"], 3_600_000));
    assert_eq!(r.exit_code, Some(0));
    assert!(start.elapsed() < Duration::from_secs(1));
}
