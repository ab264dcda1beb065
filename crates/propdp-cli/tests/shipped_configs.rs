//! Issue #59 item 4: every config shipped in `configs/` (and its
//! subfolders) runs as shipped — `propdp check` accepts it, including a
//! tune config's cost limit `tune.max_hours`, which the user never set.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `.toml` files under `dir`, recursively, sorted.
fn configs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(configs(&path));
        } else if path.extension().is_some_and(|x| x == "toml") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn every_shipped_config_passes_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let files = configs(&root);
    // the realistic DP-SGD studies, refused by their own default cost limit before
    assert!(
        files.len() >= 25,
        "{} configs found under {}",
        files.len(),
        root.display()
    );
    for name in ["tune_dpsgd_realistic_huber.toml", "tune_dpsgd_realistic_logistic.toml"] {
        assert!(files.iter().any(|f| f.ends_with(name)), "{name} missing");
    }
    let mut refused = Vec::new();
    for f in &files {
        let o = Command::new(env!("CARGO_BIN_EXE_propdp"))
            .arg("check")
            .arg(f)
            .output()
            .expect("binary runs");
        if !o.status.success() {
            refused.push(format!(
                "{}: {}",
                f.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
    }
    assert!(refused.is_empty(), "shipped configs refused:\n{}", refused.join("\n"));
}
