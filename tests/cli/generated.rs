//! The committed completion scripts and man pages are what the clap
//! definition generates. To refresh them after changing the CLI:
//! `REGENERATE=1 cargo test --test generated`.

use std::path::Path;

fn check(path: &Path, generated: &[u8], stale: &mut Vec<String>) {
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, generated).unwrap();
    } else if std::fs::read(path).ok().as_deref() != Some(generated) {
        stale.push(path.display().to_string());
    }
}

#[test]
fn committed_completions_and_man_pages_match_the_cli() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for shell in discuss::assets::SHELLS {
        let path = root
            .join("completions")
            .join(discuss::assets::completion_file(shell));
        check(&path, &discuss::assets::completion(shell), &mut stale);
    }
    let pages = discuss::assets::man_pages();
    for (name, page) in &pages {
        check(&root.join("man").join(name), page, &mut stale);
    }
    // No page left behind for a command that no longer exists.
    for entry in std::fs::read_dir(root.join("man")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !pages.iter().any(|(page, _)| *page == name) {
            stale.push(format!("man/{name} (no such command)"));
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files, run `REGENERATE=1 cargo test --test generated`: {stale:?}"
    );
    assert!(pages.iter().any(|(name, _)| name == "discuss-fleet-add.1"));
    assert!(pages.len() >= 20, "one page per command");
}

#[test]
fn every_command_shows_an_example_in_its_help() {
    let mut missing = Vec::new();
    fn walk(cmd: &clap::Command, path: String, missing: &mut Vec<String>) {
        let has_example = cmd
            .get_after_help()
            .is_some_and(|h| h.to_string().contains("discuss "));
        if cmd.get_subcommands().next().is_none() && !has_example {
            missing.push(path.clone());
        }
        if cmd.get_subcommands().next().is_some() && !has_example {
            for sub in cmd.get_subcommands() {
                walk(sub, format!("{path} {}", sub.get_name()), missing);
            }
        }
    }
    let cli = discuss::assets::command();
    for sub in cli.get_subcommands() {
        walk(sub, sub.get_name().to_owned(), &mut missing);
    }
    assert!(
        missing.is_empty(),
        "commands without an example in --help: {missing:?}"
    );
}

#[test]
fn man_pages_have_the_sections_a_reader_looks_for() {
    for (name, page) in discuss::assets::man_pages() {
        let page = String::from_utf8(page).unwrap();
        assert!(!page.contains(".SH EXTRA"), "{name}: no EXTRA heading");
        assert!(
            !page.contains("discuss\\-help") && !page.contains("discuss-help"),
            "{name}"
        );
        assert!(page.contains(".SH \"EXIT STATUS\""), "{name}");
        assert!(page.contains(".SH ENVIRONMENT"), "{name}");
        for variable in [
            "DISCUSS_LEDGER",
            "DISCUSS_ACTOR",
            "DISCUSS_NOW",
            "DISCUSS_ALLOW_NETWORK_FS",
            "DISCUSS_AGENT_ID",
            "DISCUSS_DISCUSSION_ID",
            "DISCUSS_ATTEMPT_ID",
            "DISCUSS_REPLY_TO",
            "DISCUSS_TURN",
            "DISCUSS_DEADLINE_AT",
        ] {
            assert!(page.contains(variable), "{name}: {variable}");
        }
        // Examples stay as written: no filling, no hyphenation.
        if let Some(at) = page.find(".SH EXAMPLES\n") {
            assert!(page[at..].starts_with(".SH EXAMPLES\n.nf\n.nh\n"), "{name}");
        }
        if ["discuss.1", "discuss-wake.1", "discuss-ask.1"].contains(&name.as_str()) {
            assert!(page.contains(".SH SUPERVISION"), "{name}");
        }
    }
}
