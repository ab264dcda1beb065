//! Every command the docs quote with its output prints that output: in
//! README.md and docs/*.md, a ```text block's line `$ propdp ARGS` is run
//! (in a scratch directory holding the files the same page defines in
//! ```toml blocks whose first line is `# NAME.toml`), and each line quoted
//! after it, up to the next `$` line or the block's end, must be a line of
//! what it printed (stdout and stderr), to the printed precision — a line
//! quoted with `…` must match up to it. A number in the docs that the
//! command no longer prints fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One quoted command: the page, its line, its arguments and the lines quoted after it.
struct Quote {
    page: PathBuf,
    line: usize,
    args: Vec<String>,
    expected: Vec<String>,
}

/// The `# NAME.toml` blocks of a page (name, text) and its quoted commands.
fn read(page: &Path) -> (Vec<(String, String)>, Vec<Quote>) {
    let text = std::fs::read_to_string(page).unwrap();
    let (mut files, mut quotes) = (Vec::new(), Vec::new());
    let mut lines = text.lines().enumerate().peekable();
    while let Some((_, line)) = lines.next() {
        let fence = line.trim_start();
        if fence == "```toml" {
            let body: Vec<&str> = lines
                .by_ref()
                .map(|(_, l)| l)
                .take_while(|l| l.trim() != "```")
                .collect();
            if let Some(name) = body
                .first()
                .and_then(|l| l.strip_prefix("# "))
                .filter(|n| n.ends_with(".toml"))
            {
                files.push((name.trim().to_string(), body[1..].join("\n") + "\n"));
            }
        } else if fence == "```text" {
            for (i, l) in lines.by_ref() {
                if l.trim() == "```" {
                    break;
                }
                if let Some(cmd) = l.strip_prefix("$ propdp ") {
                    quotes.push(Quote {
                        page: page.to_path_buf(),
                        line: i + 1,
                        args: cmd.split_whitespace().map(String::from).collect(),
                        expected: Vec::new(),
                    });
                } else if l.starts_with('$') {
                    // another program's command: not ours to run
                } else if let Some(q) = quotes.last_mut().filter(|q| q.page == page && !l.trim().is_empty()) {
                    q.expected.push(l.trim().to_string());
                }
            }
        }
    }
    (files, quotes)
}

/// Whether `quoted` is a line of `printed`: equal after trimming, or, where
/// the quote elides with `…`, equal up to it.
fn printed_line(printed: &str, quoted: &str) -> bool {
    printed.lines().map(str::trim).any(|l| match quoted.split_once('…') {
        Some((head, _)) => l.starts_with(head),
        None => l == quoted,
    })
}

#[test]
fn every_quoted_command_prints_what_the_docs_quote() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.push(root.join("README.md"));
    pages.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for page in &pages {
        let (files, quotes) = read(page);
        if quotes.is_empty() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in &files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        for q in quotes {
            let out = Command::new(env!("CARGO_BIN_EXE_propdp"))
                .args(&q.args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            let printed = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                !q.expected.is_empty(),
                "{}:{}: a quoted command with no output quoted",
                q.page.display(),
                q.line
            );
            for want in &q.expected {
                if !printed_line(&printed, want) {
                    failures.push(format!(
                        "{}:{}: `propdp {}` does not print\n    {want}\n  it prints:\n{printed}",
                        q.page.display(),
                        q.line,
                        q.args.join(" ")
                    ));
                }
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // the docs quote at least the privacy examples of docs/privacy.md and docs/dpsgd.md
    assert!(checked >= 5, "only {checked} quoted commands found");
}

/// The matcher can fail: a changed digit, a missing line, an elided line
/// whose head differs.
#[test]
fn the_matcher_refuses_a_changed_number() {
    let printed = "  (ε, δ)-DP: ε = 8.494516 at δ = 1e-5\n  certified bracket: 8.489530 ≤ ε ≤ 8.494516\n";
    assert!(printed_line(printed, "(ε, δ)-DP: ε = 8.494516 at δ = 1e-5"));
    assert!(!printed_line(printed, "(ε, δ)-DP: ε = 8.4966 at δ = 1e-5"));
    assert!(printed_line(printed, "certified bracket: 8.489530 ≤ …"));
    assert!(!printed_line(printed, "certified bracket: 8.489531 ≤ …"));
    assert!(!printed_line(printed, "RDP: ε = 9.609009"));
}
