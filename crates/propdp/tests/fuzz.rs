//! Property-based fuzzing of the invariants (a fixed-seed generator, so the
//! same cases run every time): for generated configs with values from 1e-300
//! to 1e300 — no panic, every point either in results.jsonl with finite
//! numbers and a converged solver or in errors.jsonl with a reason.

use propdp::Silent;
use propdp::core::Config;
use propdp::core::record::Record;
use propdp::run::{Sources, run};
use propdp::rundir::Existing;
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

fn runner(cases: u32) -> TestRunner {
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// A number across scales: ±10^k, k ∈ [−300, 300], with 0 and specials now and then.
fn scale() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => (-300i32..300).prop_map(|k| 10f64.powi(k)),
        3 => (-3i32..3, 0.1f64..10.0).prop_map(|(k, m)| m * 10f64.powi(k)),
        1 => Just(0.0),
        1 => (-300i32..300).prop_map(|k| -(10f64.powi(k))),
    ]
}

#[test]
fn generated_configs_end_in_results_or_errors_with_finite_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = (any::<bool>(), 0u8..2, scale(), scale(), scale(), scale(), scale());
    let result = runner(300).run(&cases, |(huber, kind, delta, s2, lambda, noise, sd)| {
        let problem = if huber {
            format!("model = \"huber\"\nhuber_m = 1.0\nnoise = {{ law = \"gaussian\", sd = {sd:e} }}\n")
        } else {
            "model = \"logistic\"\n".to_string()
        };
        let (kind, noise_key) = [("objective", "sigma"), ("output", "tau")][kind as usize];
        let text = format!(
            "[problem]\n{problem}delta = {delta:e}\ns2 = {s2:e}\n[algorithm]\nkind = \"{kind}\"\nlambda = {lambda:e}\n\
             {noise_key} = {noise:e}\n[solver]\ntime_limit = 1.0\n"
        );
        let Ok(cfg) = Config::from_toml_str(&text) else {
            return Ok(()); // refused with a named field: also an allowed outcome
        };
        let dir = tmp.path().join("run");
        let s = run(&cfg, "fuzz", &dir, Existing::Overwrite, Sources::default(), &Silent)
            .map_err(|e| TestCaseError::fail(format!("{text}: run failed: {e:#}")))?;
        let records = Record::read_file(&s.results()).unwrap();
        for r in &records {
            prop_assert!(r.non_finite().is_none() && r.solver.converged, "{text}: {r:?}");
        }
        prop_assert_eq!(records.len() + s.failed, cfg.sweep.points().len(), "{}", text);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
