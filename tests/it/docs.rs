//! Docs generated from code stay in sync with it.

#[test]
fn hook_points_page_is_generated_from_the_catalog() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hook-points.md");
    let expected = hookd::HookPoint::docs_markdown();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        actual, expected,
        "docs/hook-points.md is stale: run `hookd points --markdown > docs/hook-points.md`"
    );
}

/// The text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in the doc at `rel` must be
/// `expected`; with `UPDATE_GOLDEN` set, it is written there.
fn section_is(rel: &str, name: &str, expected: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = (
        format!("<!-- {name}:begin -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let start = text.find(&begin).expect("begin marker") + begin.len();
    let stop = text[start..].find(&end).expect("end marker") + start;
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let new = format!("{}{expected}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        &text[start..stop],
        expected,
        "{rel}'s {name} table is stale: run `UPDATE_GOLDEN=1 cargo test --test it docs::`"
    );
}

#[test]
fn the_places_table_is_the_catalog() {
    section_is("docs/security.md", "places", &hookd::places::markdown());
}

#[test]
fn the_variables_table_is_the_catalog() {
    section_is("docs/configuration.md", "vars", &hookd::vars::markdown());
}
