//! The README's gallery shows what the code computes: each figure of
//! docs/figures/ drawn from a config of configs/figures/ is stored with the
//! records it was drawn from (docs/figures/<name>.jsonl, written by
//! scripts/reproduce_figures.sh). Their config must be today's (its
//! SHA-256), and their theory must be what today's solver gives, to 1e-6
//! relative — else the figure is out of date: run the script.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// (source, index, metric) → value of a results file's theory records, and its config's SHA-256.
fn theory(path: &Path) -> (BTreeMap<(u64, String), f64>, String) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    let mut sha = String::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        sha = r["provenance"]["config_sha256"].as_str().unwrap().to_string();
        if r["source"] != "theory" {
            continue;
        }
        let index = r["index"].as_u64().unwrap();
        for (k, v) in r["metrics"].as_object().unwrap() {
            if let Some(v) = v.as_f64() {
                out.insert((index, k.clone()), v);
            }
        }
    }
    (out, sha)
}

#[test]
fn every_gallery_figure_is_drawn_from_todays_theory() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("configs/figures")).unwrap() {
        let config = entry.unwrap().path();
        let name = config.file_stem().unwrap().to_string_lossy().to_string();
        let stored = root.join(format!("docs/figures/{name}.jsonl"));
        if !root.join(format!("docs/figures/{name}.png")).exists() {
            continue;
        }
        assert!(
            stored.exists(),
            "docs/figures/{name}.png has no {name}.jsonl: run scripts/reproduce_figures.sh"
        );
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("run");
        let o = Command::new(env!("CARGO_BIN_EXE_propdp"))
            .args([
                "run",
                config.to_str().unwrap(),
                "--theory-only",
                "--quiet",
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let ((then, then_sha), (now, now_sha)) = (theory(&stored), theory(&out.join("results.jsonl")));
        assert_eq!(
            then_sha, now_sha,
            "{name}: the config changed since the figure was drawn"
        );
        assert_eq!(
            then.keys().collect::<Vec<_>>(),
            now.keys().collect::<Vec<_>>(),
            "{name}: other points or metrics"
        );
        for (k, a) in &then {
            let b = now[k];
            assert!(
                (a - b).abs() <= 1e-6 * a.abs().max(1.0),
                "{name}: point {} {}: the figure shows {a}, the code gives {b}: run scripts/reproduce_figures.sh",
                k.0,
                k.1
            );
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} gallery figures checked");
}
