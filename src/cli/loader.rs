//! A statically linked hookd has no dynamic loader at its start, but glibc still reads
//! `LD_LIBRARY_PATH` then, for the NSS modules it may load later (a host name looked up on a
//! host whose `nsswitch.conf` names `resolve`, `myhostname` or `systemd`): a repository that
//! sets it for its agent would have its library loaded into hookd. [`start_clear`] runs hookd
//! again without the loader's variables before anything else happens.

/// The loader's variables, moved aside (`HOOKD_LOADER_<NAME>`) across the new start and put
/// back after it, where only hookd's own code reads them (hooks get them only when the user's
/// `hooks.yaml` keeps them).
const LOADER_VARS: [&str; 3] = ["LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT"];
const ASIDE: &str = "HOOKD_LOADER_";

/// The binary's first call, with one thread. A dynamically linked hookd does nothing here
/// (its loader has already acted on those variables; the shipped hookd is static). A static
/// one started with a loader variable executes itself again without it (once: the new start
/// has none); if that fails it stops (exit 126) rather than go on with the variable in glibc.
pub fn start_clear() {
    if !cfg!(target_feature = "crt-static") {
        return;
    }
    let set: Vec<(&str, std::ffi::OsString)> = LOADER_VARS
        .iter()
        .filter_map(|n| std::env::var_os(n).map(|v| (*n, v)))
        .collect();
    if !set.is_empty() {
        restart_without(&set);
    }
    for n in LOADER_VARS {
        let aside = format!("{ASIDE}{n}");
        if let Some(v) = std::env::var_os(&aside) {
            std::env::remove_var(&aside);
            std::env::set_var(n, v);
        }
    }
}

fn restart_without(set: &[(&str, std::ffi::OsString)]) {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new("/proc/self/exe");
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    cmd.args(args);
    for (n, v) in set {
        cmd.env_remove(n).env(format!("{ASIDE}{n}"), v);
    }
    let err = cmd.exec();
    eprintln!("hookd: cannot start again without the loader's variables ({err}); nothing was run");
    std::process::exit(126);
}
