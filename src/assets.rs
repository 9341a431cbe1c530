//! Completion scripts and man pages, generated from the clap definition.
//! Committed copies live in `completions/` and `man/`; `tests/generated.rs`
//! fails when they differ from what this generates, and rewrites them with
//! `REGENERATE=1 cargo test --test generated`.

use crate::cli::Cli;
use clap::CommandFactory;
use clap_complete::Shell;

pub const SHELLS: [Shell; 5] = [
    Shell::Bash,
    Shell::Zsh,
    Shell::Fish,
    Shell::Elvish,
    Shell::PowerShell,
];

/// The completion script for `shell`.
pub fn completion(shell: Shell) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "discuss", &mut script);
    script
}

/// The file name of a committed completion script.
pub fn completion_file(shell: Shell) -> &'static str {
    match shell {
        Shell::Bash => "discuss.bash",
        Shell::Zsh => "_discuss",
        Shell::Fish => "discuss.fish",
        Shell::Elvish => "discuss.elv",
        _ => "_discuss.ps1",
    }
}

/// One man page per command: `discuss.1`, `discuss-ask.1`,
/// `discuss-fleet-add.1`, …
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    let mut pages = Vec::new();
    let mut root = Cli::command();
    root.build();
    collect(&root, "discuss", &mut pages);
    pages
}

fn collect(command: &clap::Command, name: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let mut page = Vec::new();
    let renamed = command
        .clone()
        .name(name.to_owned())
        .bin_name(name.replace('-', " "));
    clap_mangen::Man::new(renamed)
        .render(&mut page)
        .expect("rendering to memory cannot fail");
    pages.push((format!("{name}.1"), page));
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        collect(sub, &format!("{name}-{}", sub.get_name()), pages);
    }
}
