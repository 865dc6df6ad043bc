//! Fuzz the gate's verdict on model commands (lists and pipelines): it must never panic or
//! hang, and an admitted command rebuilt from its parts' argv, each re-quoted, with the same
//! joints, must be admitted again with the same parts.
#![no_main]

use std::sync::OnceLock;

use hookd::config::{AllowEntry, AllowLists, Mode, Origin};
use hookd::{Gate, Verdict};
use libfuzzer_sys::fuzz_target;

fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| {
        let entries = [".*", "cd( .*)?", "find( .*)?"].map(|p| AllowEntry {
            pattern: p.into(),
            list: "all",
            origin: Origin { file: "fuzz".into(), line: 1, source: hookd::config::Source::Embedded },
        });
        Gate::new(&AllowLists::from_entries(entries), "fuzz")
    })
}

fn argvs(v: &hookd::gate::ModelVerdict) -> Vec<Vec<String>> {
    v.admitted().map(|a| a.argv.clone()).collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else { return };
    let first = gate().model_verdict(command, Mode::Standard);
    if !first.is_allowed() {
        return;
    }
    let mut rebuilt = String::new();
    for part in &first.parts {
        let Verdict::Allowed(a) = &part.verdict else { panic!("{command:?}: admitted with a denied part") };
        if let Some(j) = part.joint {
            rebuilt.push_str(&format!(" {j} "));
        }
        let words: Vec<String> = a.argv.iter().map(|w| format!("'{}'", w.replace('\'', r"'\''"))).collect();
        rebuilt.push_str(&words.join(" "));
    }
    let second = gate().model_verdict(&rebuilt, Mode::Standard);
    assert!(second.is_allowed(), "{command:?} admitted, rebuilt {rebuilt:?} denied: {:?}", second.denied);
    assert_eq!(argvs(&first), argvs(&second), "{command:?}");
});
