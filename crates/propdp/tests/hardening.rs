//! Regression tests of the defects found by adversarial use (issue
//! "Hardening"): every number written is finite, no input panics or hangs a
//! run, and every point ends either in results.jsonl or in errors.jsonl.

use std::path::Path;

use propdp::Silent;
use propdp::core::Config;
use propdp::core::record::Record;
use propdp::run::{RunSummary, Sources, run};
use propdp::rundir::Existing;

fn run_text(text: &str, dir: &Path) -> RunSummary {
    let cfg = Config::from_toml_str(text).unwrap();
    run(&cfg, "test", dir, Existing::Overwrite, Sources::default(), &Silent).unwrap()
}

fn errors(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("errors.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every line of results.jsonl is a record with finite numbers and a
/// converged solver; every point is in results or errors.
fn assert_complete(dir: &Path, points: usize) {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    assert!(!text.contains("null"), "a null in {text}");
    let records = Record::read_file(&dir.join("results.jsonl")).unwrap();
    for r in &records {
        assert_eq!(r.non_finite(), None, "{r:?}");
        assert!(r.solver.converged);
    }
    assert_eq!(
        records.len() + errors(dir).len(),
        points,
        "every point is written or reported"
    );
}

const HUBER: &str = r#"
[problem]
model = "huber"
delta = [0.5, 2.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "output"
lambda = 1.0
tau = 1e160
"#;

#[test]
fn d1_overflowing_metrics_are_errors_not_nulls() {
    let tmp = tempfile::tempdir().unwrap();
    for (text, points) in [
        (HUBER.to_string(), 2),
        (HUBER.replace("tau = 1e160", "tau = 1e200"), 2),
        (
            HUBER
                .replace("\"output\"", "\"objective\"")
                .replace("tau = 1e160", "sigma = 1e155"),
            2,
        ),
        (
            HUBER
                .replace("sd = 0.5", "sd = 1e300")
                .replace("tau = 1e160", "tau = 1.0"),
            2,
        ),
        (
            HUBER
                .replace(
                    "{ law = \"gaussian\", sd = 0.5 }",
                    "{ law = \"laplace\", scale = 1e300 }",
                )
                .replace("tau = 1e160", "tau = 1.0"),
            2,
        ),
        (
            HUBER.replace("tau = 1e160", "tau = 1e200") + "[simulation]\nd = 20\nreps = 2\n",
            4,
        ),
        (
            HUBER
                .replace("\"output\"", "\"dpgd\"")
                .replace("tau = 1e160", "sigma = 1e-310\neta = 0.1\nsteps = 2"),
            2,
        ),
    ] {
        let s = run_text(&text, tmp.path());
        assert_complete(tmp.path(), points);
        assert!(s.failed > 0, "{text}: the overflowing points are reported");
        for e in errors(tmp.path()) {
            let e = e["error"].as_str().unwrap();
            assert!(e.contains("not finite") || e.contains("not a finite number"), "{e}");
        }
    }
}

#[test]
fn d2_d3_huge_logistic_noise_is_a_typed_error_promptly() {
    let tmp = tempfile::tempdir().unwrap();
    let text = r#"
[problem]
model = "logistic"
delta = 0.5
s2 = 4.0
[algorithm]
kind = "objective"
lambda = 1.0
sigma = [1e5, 1e6, 1e10, 1e155, 1e200]
"#;
    let s = run_text(text, tmp.path());
    assert_eq!(s.failed, 5);
    assert_complete(tmp.path(), 5);
    for e in errors(tmp.path()) {
        assert!(e["error"].as_str().unwrap().contains("σ/λ"), "{e}");
    }
}

#[test]
fn d15_precision_loss_at_extreme_scales_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let text = HUBER
        .replace("s2 = 1.0", "s2 = [1.0, 1e20, 1e300]")
        .replace("\"output\"", "\"objective\"")
        .replace("tau = 1e160", "sigma = 1.0");
    run_text(&text, tmp.path());
    assert_complete(tmp.path(), 6);
    for r in Record::read_file(&tmp.path().join("results.jsonl")).unwrap() {
        let (q, m, s2) = (r.metrics["norm2"], r.metrics["overlap"], r.params["s2"]);
        assert!(q >= 0.0 && m * m <= q * s2 * (1.0 + 1e-9), "{r:?}");
    }
    let errors = errors(tmp.path());
    assert!(
        errors
            .iter()
            .all(|e| e["error"].as_str().unwrap().contains("precision lost")),
        "{errors:?}"
    );
    assert!(errors.len() >= 2, "s² = 1e20 and 1e300 lose every digit of norm2");
}

#[test]
fn d4_a_budget_is_never_met_by_zero_noise() {
    for eps in ["1e300", "1e20"] {
        let text = HUBER.replace("tau = 1e160", &format!("epsilon = {eps}\ndelta_priv = 1e-6"));
        match Config::from_toml_str(&text) {
            Err(e) => assert!(e.to_string().contains("algorithm.epsilon"), "{e}"),
            Ok(cfg) => {
                for p in cfg.sweep.points() {
                    assert!(
                        p.algorithm().noise() > 0.0,
                        "ε = {eps}: τ = 0 would claim privacy without noise"
                    );
                }
            }
        }
    }
}
