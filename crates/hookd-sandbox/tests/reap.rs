//! A process that runs confined commands one after another keeps no ended pid 1 unreaped but
//! the last ones: `run_command` returns before pid 1's exit has taken its namespaces down, and
//! the next command reaps it when it starts or ends. Alone in its own test binary: it counts
//! this process's children.

use std::sync::Arc;

use hookd_sandbox::{Confinement, Policy};

/// This process's children that have ended and are not reaped (zombies).
fn zombies() -> usize {
    let mut n = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let children = std::fs::read_to_string(task.unwrap().path().join("children")).unwrap();
        for pid in children.split_whitespace() {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // `pid (comm) S …`: the state follows the last `)`.
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            n += usize::from(state.is_some_and(|s| s.starts_with('Z')));
        }
    }
    n
}

#[test]
fn ended_pids_one_are_reaped_by_the_next_command() {
    let missing = hookd_sandbox::support().missing();
    if !missing.is_empty() {
        eprintln!("skipped: {missing:?}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let confinement = Arc::new(Confinement::prepare(&Policy::default(), dir.path()).unwrap());
    let argv = ["true".to_string()];
    for _ in 0..8 {
        let run = hookd_sandbox::run_command(
            confinement.clone(),
            &argv,
            dir.path(),
            None,
            std::iter::empty(),
        );
        assert!(run.unwrap().success());
    }
    // The last one's pid 1 is left, and the one before it where it was still ending when the
    // last command ended; the six before them were reaped (without reaping: eight zombies).
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(zombies() <= 2, "{} zombies", zombies());
}
