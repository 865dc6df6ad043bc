//! Issue 41 item 3: the shipped hookd is statically linked, so the dynamic loader cannot be told
//! to inject into it: `LD_PRELOAD=evil.so hookd …` runs nothing of `evil.so` (a repository can
//! set `LD_PRELOAD` for its agent, and the agent starts hookd). The shipped binary is the one
//! `scripts/build-static.sh` builds (`HOOKD_STATIC_BIN` names another); the test's own
//! dynamically linked hookd is the control: the same library does run in it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shipped binary, if it was built.
fn shipped() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOOKD_STATIC_BIN") {
        return Some(PathBuf::from(p));
    }
    let host = std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .ok()?;
    let host = String::from_utf8_lossy(&host.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))?;
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(host)
        .join("release/hookd");
    p.is_file().then_some(p)
}

/// A shared library whose constructor writes `marker`.
fn evil_so(dir: &Path, marker: &Path) -> Option<PathBuf> {
    let src = dir.join("evil.c");
    std::fs::write(
        &src,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void evil(void) {{ FILE *f = fopen(\"{}\", \"a\"); if (f) {{ fputs(\"pwned\\n\", f); fclose(f); }} }}\n",
            marker.display()
        ),
    )
    .unwrap();
    let so = dir.join("evil.so");
    let built = Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    built.then_some(so)
}

fn run_preloaded(bin: &Path, so: &Path) -> std::process::Output {
    Command::new(bin)
        .args(["allow", "ls"])
        .env("LD_PRELOAD", so)
        .env("HOME", "/nonexistent")
        .output()
        .unwrap()
}

#[test]
fn ld_preload_injects_nothing_into_the_shipped_binary() {
    let Some(bin) = shipped() else {
        crate::support::unavailable(
            "static",
            "the shipped (static) hookd is not built: run scripts/build-static.sh",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let Some(so) = evil_so(dir.path(), &marker) else {
        crate::support::unavailable("gcc", "gcc cannot build a shared library here");
        return;
    };
    // The control: the library runs in a dynamically linked hookd.
    run_preloaded(Path::new(env!("CARGO_BIN_EXE_hookd")), &so);
    assert!(marker.exists(), "the control did not load evil.so");
    std::fs::remove_file(&marker).unwrap();
    let o = run_preloaded(&bin, &so);
    assert!(o.status.code().is_some(), "{o:?}");
    assert!(
        !marker.exists(),
        "{} loaded LD_PRELOAD's library",
        bin.display()
    );
    // And it is static: no interpreter to ask.
    let file = Command::new("file").arg(&bin).output();
    if let Ok(f) = file {
        let said = String::from_utf8_lossy(&f.stdout).into_owned();
        assert!(
            said.contains("statically linked") || said.contains("static-pie"),
            "{said}"
        );
    }
}

/// glibc in a static binary still takes `LD_LIBRARY_PATH` at start for the NSS modules it may
/// load later: on a host whose `nsswitch.conf` names a module that is not built in
/// (`myhostname`, `resolve`, `systemd`), looking up a host name (an OTLP endpoint) loaded the
/// repository's `libnss_myhostname.so.2`. The shipped hookd starts again without the variable
/// first. The host's `nsswitch.conf` is replaced in a mount namespace of the test's own (root).
#[test]
fn ld_library_path_loads_no_nss_module_into_the_shipped_binary() {
    let Some(bin) = shipped() else {
        crate::support::unavailable(
            "static",
            "the shipped (static) hookd is not built: run scripts/build-static.sh",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let Some(so) = evil_so(dir.path(), &marker) else {
        crate::support::unavailable("gcc", "gcc cannot build a shared library here");
        return;
    };
    let libs = dir.path().join("libs");
    std::fs::create_dir(&libs).unwrap();
    std::fs::copy(&so, libs.join("libnss_myhostname.so.2")).unwrap();
    let nsswitch = dir.path().join("nsswitch.conf");
    std::fs::write(
        &nsswitch,
        "passwd: files myhostname\nhosts: files myhostname\n",
    )
    .unwrap();
    let script = "mount --bind \"$1\" /etc/nsswitch.conf && shift && exec \"$@\"";
    let o = Command::new("unshare")
        .args(["-m", "sh", "-c", script, "sh"])
        .arg(&nsswitch)
        .arg(&bin)
        .args(["dispatch", "post_session", "--no-daemon"])
        .env("LD_LIBRARY_PATH", &libs)
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://no-such-host.invalid:4318",
        )
        .env("HOME", dir.path())
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    if said.contains("mount") || said.contains("unshare") {
        crate::support::unavailable("root", "a mount namespace needs root");
        return;
    }
    assert!(
        !marker.exists(),
        "{} loaded an NSS module from LD_LIBRARY_PATH: {said}",
        bin.display()
    );
}
