//! Fuzz the gate's verdict: it must never panic or hang, and an admitted command's argv must
//! survive re-quoting (the same verdict and argv again).
#![no_main]

use std::sync::OnceLock;

use hookd::config::{AllowEntry, AllowLists, Mode, Origin};
use hookd::{Gate, Verdict};
use libfuzzer_sys::fuzz_target;

fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| {
        let entries = [".*", "echo( .*)?", "find( .*)?"].map(|p| AllowEntry {
            pattern: p.into(),
            list: "all",
            origin: Origin { file: "fuzz".into(), line: 1, source: hookd::config::Source::Embedded },
        });
        Gate::new(&AllowLists::from_entries(entries), "fuzz")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else { return };
    if let Verdict::Allowed(a) = gate().verdict(command, Mode::Standard) {
        let requoted: Vec<String> = a.argv.iter().map(|w| format!("'{}'", w.replace('\'', r"'\''"))).collect();
        match gate().verdict(&requoted.join(" "), Mode::Standard) {
            Verdict::Allowed(b) => assert_eq!(a.argv, b.argv, "{command:?}"),
            Verdict::Denied(d) => panic!("{command:?} admitted, its re-quoted argv denied: {d:?}"),
        }
    }
});
