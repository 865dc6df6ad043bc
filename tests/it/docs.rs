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
