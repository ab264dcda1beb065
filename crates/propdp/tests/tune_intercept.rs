//! `propdp tune` with an intercept (docs/theory.md §2.6, §3.5): the
//! teacher's b* of `[problem] intercept` and `[tune] fit_intercept` reach
//! every candidate, the non-private reference and the simulated check of
//! the optimum. DP-SGD tuned for test_class_err at b* = 1 (logistic,
//! δ = 0.5, s² = 4, ε = 4): with a learned intercept and without, each
//! optimum confirmed by simulation, and the learned intercept's tuned error
//! lower. And the refusals, naming the field.

use std::fs;
use std::path::Path;

use propdp::Silent;
use propdp::rundir::Existing;

fn config(fit_intercept: bool, algorithms: &str) -> String {
    format!(
        r#"
[problem]
model = "logistic"
delta = 0.5
s2 = 4.0
intercept = 1.0
[tune]
algorithms = {algorithms}
metric = "test_class_err"
epsilon = [4.0]
delta_priv = 1e-6
steps = [4, 16, 64]
eta_fraction = [0.1, 0.25, 0.5, 0.9]
sample_rate = [0.05, 0.2, 1.0]
clip = [0.5]
fit_intercept = {fit_intercept}
[simulation]
d = 2000
reps = 20
seed = 13
"#
    )
}

/// The one optimum of a tune run: (predicted, its stderr, simulated, its stderr).
fn optimum(out: &Path) -> (f64, f64, f64, f64) {
    let text = fs::read_to_string(out.join("tune.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1);
    let l = &lines[0];
    assert_eq!(l["params"]["intercept"], 1.0);
    assert_eq!(l["simulation"]["verdict"], "pass", "{l}");
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    (
        f(&l["value"]),
        f(&l["stderr"]),
        f(&l["simulation"]["mean"]),
        f(&l["simulation"]["stderr"]),
    )
}

#[test]
#[ignore = "slow: two tune searches and their simulations, run with --include-ignored"]
fn dpsgd_is_tuned_with_an_intercept_and_learning_it_lowers_the_tuned_error() {
    let tmp = tempfile::tempdir().unwrap();
    let mut tuned = Vec::new();
    for learned in [true, false] {
        let out = tmp.path().join(format!("learned_{learned}"));
        propdp::tune::tune(
            &config(learned, "[\"dpsgd\"]"),
            "t.toml",
            &out,
            Existing::Refuse,
            &Silent,
        )
        .unwrap_or_else(|e| panic!("fit_intercept = {learned}: {e:#}"));
        let (value, se, mean, sim_se) = optimum(&out);
        let z = (mean - value) / se.hypot(sim_se);
        println!(
            "fit_intercept = {learned}: predicted {value:.4} ± {se:.4}, simulated {mean:.4} ± {sim_se:.4}, z {z:+.2}"
        );
        assert!(z.abs() <= 3.0, "fit_intercept = {learned}: z = {z}");
        tuned.push((value, se, mean, sim_se));
    }
    let ((learned, se_l, sim_l, sim_se_l), (fixed, se_f, sim_f, sim_se_f)) = (tuned[0], tuned[1]);
    assert!(
        learned + 3.0 * se_l.hypot(se_f) < fixed,
        "predicted {learned} vs {fixed}"
    );
    assert!(
        sim_l + 3.0 * sim_se_l.hypot(sim_se_f) < sim_f,
        "simulated {sim_l} vs {sim_f}"
    );
}

#[test]
fn an_intercept_is_refused_where_its_privacy_or_theory_does_not_hold_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    // the error and its causes
    let chain = |e: propdp::Error| {
        let mut s = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(c) = source {
            s += &format!(": {c}");
            source = c.source();
        }
        s
    };
    let e = propdp::tune::tune(
        &config(true, "[\"objective\", \"dpsgd\"]"),
        "t.toml",
        &tmp.path().join("a"),
        Existing::Refuse,
        &Silent,
    )
    .unwrap_err();
    let e = chain(e);
    assert!(e.contains("tune.fit_intercept") && e.contains("unpenalised"), "{e}");
    let huber = config(false, "[\"output\", \"dpsgd\"]").replace(
        "model = \"logistic\"",
        "model = \"huber\"\nhuber_m = 1.0\nnoise = { law = \"gaussian\", sd = 0.5 }",
    );
    let e = chain(propdp::tune::tune(&huber, "t.toml", &tmp.path().join("b"), Existing::Refuse, &Silent).unwrap_err());
    assert!(
        e.contains("problem.intercept") && e.contains("fit_intercept = true"),
        "{e}"
    );
}
