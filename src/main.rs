//! The `hookd` binary: the library's command line ([`hookd::cli::main`]), its exit code the
//! process's.

fn main() {
    std::process::exit(hookd::cli::main());
}
