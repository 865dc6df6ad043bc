//! What a hook inherits: no descriptor its caller leaked to hookd, no hookd secret.

use std::os::unix::fs::PermissionsExt;

use crate::support::{stderr, Project};

#[test]
fn a_hook_inherits_no_leaked_descriptor_and_no_token() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./peek\\.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: peek, hook: post_session, command: ./peek.sh}]\n",
    );
    let script = p.path().join("peek.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nfor f in /proc/$$/fd/*; do readlink \"$f\"; done > fds.txt\nenv > env.txt\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The caller leaks a descriptor (opened without close-on-exec) to hookd.
    let secret = p.home.path().join("leaked-secret-file");
    std::fs::write(&secret, "secret").unwrap();
    let leaked = std::fs::File::open(&secret).unwrap();
    nix::fcntl::fcntl(
        &leaked,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
    )
    .unwrap();
    let out = p
        .cmd(&["dispatch", "post_session"])
        .env("HOOKD_TOKEN", "s3cr3t-token-value")
        .output()
        .unwrap();
    drop(leaked);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fds = std::fs::read_to_string(p.path().join("fds.txt")).unwrap();
    assert!(!fds.contains("leaked-secret-file"), "{fds}");
    assert!(fds.contains("fds.txt"), "the listing works: {fds}");
    let env = std::fs::read_to_string(p.path().join("env.txt")).unwrap();
    assert!(!env.contains("s3cr3t-token-value"), "{env}");
    assert!(
        env.contains("HOOKD_HOOK=post_session") || env.contains("PATH="),
        "{env}"
    );
}
