//! Whether two allow entries admit a common command, and the shortest such command: the
//! question `hookd import claude-code` asks of an allow entry and a deny rule it must not
//! cover. One sample (the deny rule with its wildcards filled) misses overlaps the entry's own
//! shape creates (`^git .* main$` and `git push:*` share `git push main`); the product of the
//! two patterns' DFAs, walked breadth first, finds every one.

use std::collections::{HashMap, VecDeque};

use regex_automata::dfa::{dense, Automaton};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::Anchored;

/// A state of each DFA: where both patterns are after the same bytes.
type Pair = (StateID, StateID);

/// The most state pairs visited before giving up (two small entries need a few hundred).
const MOST_PAIRS: usize = 200_000;

/// The shortest command both `a` and `b` (allow entries, anchored as the gate anchors them)
/// admit; `None` when none does, or when either does not compile or the search gives up.
pub(crate) fn common_command(a: &str, b: &str) -> Option<String> {
    let build = |p: &str| {
        dense::Builder::new()
            .configure(dense::Config::new().start_kind(regex_automata::dfa::StartKind::Anchored))
            .build(&super::allow::anchored(p))
            .ok()
    };
    let (da, db) = (build(a)?, build(b)?);
    let config = start::Config::new().anchored(Anchored::Yes);
    let start = (da.start_state(&config).ok()?, db.start_state(&config).ok()?);
    // Bytes in the order a witness reads best: printable ASCII first.
    let bytes: Vec<u8> = (b' '..=b'~').chain(0..b' ').chain(0x7f..=0xff).collect();
    // Each pair reached, with the pair and byte it was reached from (`None` for the start).
    let mut came_from: HashMap<Pair, Option<(Pair, u8)>> = HashMap::new();
    came_from.insert(start, None);
    let mut queue = VecDeque::from([start]);
    while let Some(pair @ (sa, sb)) = queue.pop_front() {
        let (ea, eb) = (da.next_eoi_state(sa), db.next_eoi_state(sb));
        if da.is_match_state(ea) && db.is_match_state(eb) {
            let mut out = Vec::new();
            let mut at = pair;
            while let Some(Some((prev, byte))) = came_from.get(&at) {
                out.push(*byte);
                at = *prev;
            }
            out.reverse();
            return Some(String::from_utf8_lossy(&out).into_owned());
        }
        for &byte in &bytes {
            let next = (da.next_state(sa, byte), db.next_state(sb, byte));
            if da.is_dead_state(next.0) || db.is_dead_state(next.1) || came_from.contains_key(&next)
            {
                continue;
            }
            if came_from.len() >= MOST_PAIRS {
                return None;
            }
            came_from.insert(next, Some((pair, byte)));
            queue.push_back(next);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps_are_found_with_the_shortest_witness() {
        assert_eq!(
            common_command("^git .* main$", "^git push( .*)?$").as_deref(),
            Some("git push main")
        );
        assert_eq!(
            common_command("^curl http://github\\.com/( .*)?$", "^curl( .*)?$").as_deref(),
            Some("curl http://github.com/")
        );
        assert_eq!(common_command("^git status$", "^git push( .*)?$"), None);
        assert_eq!(common_command("^ls( .*)?$", "^rm( .*)?$"), None);
        assert_eq!(common_command("(", "x"), None);
    }
}
