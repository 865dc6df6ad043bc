//! Tests of `protect.rs`: how places resolve, and which are protected by path, link and name.

use super::*;

#[test]
fn resolve_follows_a_link_before_dotdot() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("sub/deep")).unwrap();
    std::os::unix::fs::symlink(root.join("sub/deep"), root.join("lnk")).unwrap();
    assert_eq!(resolve(&root.join("lnk/../x")), root.join("sub/x"));
    assert_eq!(normalize(&root.join("lnk/../x")), root.join("x"));
    assert_eq!(resolve(&root.join("nope/../y")), root.join("y"));
}

#[test]
fn protected_places_by_path_link_and_name() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    let home = root.join("home");
    let project = root.join("proj");
    std::fs::create_dir_all(home.join(".infer")).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::os::unix::fs::symlink(home.join(".infer"), project.join("cfg")).unwrap();
    let p = ProtectedPaths::new(&Places {
        home: Some(home.clone()),
        project_dir: project.clone(),
        ..Places::default()
    });
    let cwd = project.join("src");
    for word in [
        "~/.infer/config.yaml",
        "../cfg/config.yaml",
        "../.infer/hooks.yaml",
        "../.claude/settings.local.json",
        "../crush.json",
        // The whole `.claude` directory: its skills and agents declare hooks.
        "../.claude/commands/x.md",
        "../.env",
    ] {
        assert!(p.protected(word, &cwd).is_some(), "{word}");
    }
    let detour = format!("{}/../home/./.gemini/settings.json", home.display());
    assert!(p.protected(&detour, &cwd).is_some(), "{detour}");
    for word in [
        "main.rs",
        "../.claude-notes/x.md",
        "~/.inferx",
        "-f",
        "../.env.example",
    ] {
        assert!(p.protected(word, &cwd).is_none(), "{word}");
    }
    let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(p
        .named_by(&argv(&["cp", "a", "of=../.infer/x"]), &cwd)
        .is_some());
    assert!(p
        .named_by(
            &argv(&["cp", "a", &format!("-o{}/.infer/x", home.display())]),
            &cwd
        )
        .is_some());
    assert!(p
        .named_by(&argv(&["cat", "other/.infer/hooks.yaml"]), &cwd)
        .is_some());
    assert!(p.named_by(&argv(&["cargo", "test"]), &cwd).is_none());
}

/// A place whose directory is a link (`~/.config -> dotfiles/config`, a dotfiles manager's) is
/// protected where the link leads too, and an absent one beside it as named: the resolver takes
/// the listing's word for what is no link, and looks at what is (or may be) one.
#[test]
fn a_place_behind_a_linked_directory_is_protected_where_it_leads() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    let home = root.join("home");
    let project = root.join("proj");
    std::fs::create_dir_all(home.join("dotfiles/config/git")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::os::unix::fs::symlink("dotfiles/config", home.join(".config")).unwrap();
    std::os::unix::fs::symlink(home.join("dotfiles/ssh"), home.join(".ssh")).unwrap();
    let h = home.clone();
    let places = Places::new(&project, &[], None, |k| (k == "HOME").then(|| h.clone()));
    let p = ProtectedPaths::new(&places);
    for word in [
        "~/dotfiles/config/git/config",
        "~/.config/git/config",
        "~/dotfiles/ssh/id_ed25519",
        "~/.bashrc",
    ] {
        assert!(p.protected(word, &project).is_some(), "{word}");
    }
    assert!(p.protected("~/dotfiles/notes.txt", &project).is_none());
}
