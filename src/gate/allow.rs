//! The allow-lists the gate decides by: entries, each an anchored regular expression over the
//! whole command, kept per list (`all`, then one per mode). The gate owns this type;
//! configuration loading fills it.

use serde::Serialize;

use crate::kinds::{Mode, Origin, LISTS};

/// One allow-list entry: an anchored regular expression over the whole command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AllowEntry {
    /// The regular expression as written.
    pub pattern: String,
    /// The list it is on: `all` ([`Mode::All`]) or a mode's own.
    pub list: Mode,
    /// Where it was written.
    pub origin: Origin,
}

/// The effective allow-lists, by list key (`all`, then each mode).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowLists {
    lists: [Vec<AllowEntry>; 5],
}

impl AllowLists {
    /// Build from entries (each names its list).
    pub fn from_entries(entries: impl IntoIterator<Item = AllowEntry>) -> Self {
        let mut out = AllowLists::default();
        for e in entries {
            if let Some(i) = LISTS.iter().position(|k| *k == e.list) {
                out.lists[i].push(e);
            }
        }
        out
    }

    /// The entries that apply in `mode`: `all` first, then the mode's own.
    pub fn for_mode(&self, mode: Mode) -> impl Iterator<Item = &AllowEntry> {
        // `all` is the shared list alone; every other mode adds its own list to it.
        let own = LISTS
            .iter()
            .position(|k| *k == mode)
            .filter(|i| *i > 0)
            .map_or(&[][..], |i| &self.lists[i][..]);
        self.lists[0].iter().chain(own.iter())
    }

    /// From the lists in `LISTS` order (`all`, then each mode).
    pub(crate) fn from_lists(lists: [Vec<AllowEntry>; 5]) -> Self {
        AllowLists { lists }
    }

    /// Every entry, in list order.
    pub fn all_entries(&self) -> impl Iterator<Item = &AllowEntry> {
        self.lists.iter().flatten()
    }
}
