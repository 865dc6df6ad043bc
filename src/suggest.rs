//! "Did you mean" suggestions shared by config diagnostics and the CLI.

/// The candidate closest to `given` by edit distance, if it is close enough to be a typo.
pub(crate) fn closest<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (given.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(given, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_typos_not_strangers() {
        let c = ["timeout", "command", "name", "hook"];
        assert_eq!(super::closest("timout", c), Some("timeout"));
        assert_eq!(super::closest("comand", c), Some("command"));
        assert_eq!(super::closest("banana", c), None);
    }
}
