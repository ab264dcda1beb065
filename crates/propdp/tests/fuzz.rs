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

/// Mostly moderate values (log-uniform over 1e-3…1e3), across scales now and then.
fn moderate() -> impl Strategy<Value = f64> {
    prop_oneof![4 => (-3.0f64..3.0).prop_map(|k| 10f64.powf(k)), 1 => scale()]
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

/// Generated privacy queries (every algorithm, model, relation, noise given
/// or calibrated to ε or ρ, values across scales): `assess` either refuses
/// naming an argument, or reports finite numbers with noise, ρ, μ > 0, ε ≥ 0,
/// and a calibrated ε that does not exceed its target (1e-6 relative: the
/// root is found to 4 ulp of log-noise, the curve to ~1e-12 relative).
#[test]
fn generated_privacy_queries_give_finite_consistent_guarantees_or_name_the_argument() {
    use propdp::core::accountant::Neighbouring;
    use propdp::core::{AlgorithmKind, Model, NoiseLaw};
    use propdp::privacy::{NoiseLevel, Query};
    let algorithm = prop_oneof![
        Just(AlgorithmKind::Objective),
        Just(AlgorithmKind::Output),
        Just(AlgorithmKind::Dpgd)
    ];
    let model = prop_oneof![
        Just(Model::Logistic),
        scale().prop_map(|huber_m| Model::Huber {
            huber_m,
            noise: NoiseLaw::Gaussian { sd: 1.0 }
        })
    ];
    let relation = prop_oneof![Just(Neighbouring::ReplaceOne), Just(Neighbouring::AddRemoveOne)];
    let noise = prop_oneof![
        scale().prop_map(NoiseLevel::Given),
        scale().prop_map(NoiseLevel::Epsilon),
        scale().prop_map(NoiseLevel::Rho)
    ];
    let steps = prop_oneof![0usize..5, 1usize..2000, Just(1_000_000_000), Just(usize::MAX)];
    let delta_priv = prop_oneof![(-320i32..1).prop_map(|k| 10f64.powi(k)), scale()];
    let cases = (algorithm, model, scale(), steps, relation, delta_priv, noise);
    let result = runner(3000).run(
        &cases,
        |(algorithm, model, lambda, steps, neighbouring, delta_priv, noise)| {
            let q = Query {
                algorithm,
                model,
                lambda,
                steps,
                sample_rate: 1.0,
                clip: None,
                neighbouring,
                delta_priv,
                noise,
            };
            assess_consistent(&q)
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// `assess` either refuses naming an argument, or reports finite numbers
/// with noise, ρ, μ > 0, ε ≥ 0, and a calibrated ε (ρ) within its target.
fn assess_consistent(q: &propdp::privacy::Query) -> Result<(), TestCaseError> {
    use propdp::privacy::{NoiseLevel, assess};
    let r = match assess(q) {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("{e:#}");
            prop_assert!(msg.starts_with("--") || msg.contains("--"), "{q:?}: {msg}");
            return Ok(());
        }
    };
    let finite = [Some(r.noise), r.mu, Some(r.rho), r.epsilon]
        .into_iter()
        .flatten()
        .all(f64::is_finite);
    prop_assert!(finite, "{q:?}: {r:?}");
    prop_assert!(
        r.noise > 0.0 && r.rho > 0.0 && r.mu.is_none_or(|m| m > 0.0),
        "{q:?}: {r:?}"
    );
    prop_assert!(r.epsilon.is_none_or(|e| e >= 0.0), "{q:?}: {r:?}");
    if let (NoiseLevel::Epsilon(target), Some(eps)) = (q.noise, r.epsilon) {
        prop_assert!(
            eps <= target * (1.0 + 1e-6) + 1e-9,
            "{q:?}: calibrated ε = {eps} over target {target}"
        );
    }
    if let NoiseLevel::Rho(target) = q.noise {
        prop_assert!(
            r.rho <= target * (1.0 + 1e-6),
            "{q:?}: calibrated ρ = {} over target {target}",
            r.rho
        );
    }
    Ok(())
}

/// Generated DP-SGD queries (q from 1e-4 to 1, T to 10⁶, noise, clip and
/// targets across scales, both relations), fewer than the closed-form
/// mechanisms' (a PLD composition each): as above, and the RDP ε never below
/// the reported ε.
#[test]
fn generated_dpsgd_privacy_queries_give_finite_consistent_guarantees_or_name_the_argument() {
    use propdp::core::accountant::Neighbouring;
    use propdp::core::{AlgorithmKind, Model};
    use propdp::privacy::{NoiseLevel, Query, assess};
    let relation = prop_oneof![Just(Neighbouring::ReplaceOne), Just(Neighbouring::AddRemoveOne)];
    let noise = prop_oneof![
        scale().prop_map(NoiseLevel::Given),
        (0.3f64..30.0).prop_map(NoiseLevel::Given),
        scale().prop_map(NoiseLevel::Epsilon),
        (0.1f64..10.0).prop_map(NoiseLevel::Epsilon),
        scale().prop_map(NoiseLevel::Rho)
    ];
    let sample_rate = prop_oneof![(-4i32..1).prop_map(|k| 10f64.powi(k)), scale()];
    let clip = prop_oneof![Just(None), scale().prop_map(Some)];
    let steps = prop_oneof![0usize..5, 1usize..2000, Just(1_000_000), Just(usize::MAX)];
    let cases = (sample_rate, clip, steps, relation, noise);
    let result = runner(40).run(&cases, |(sample_rate, clip, steps, neighbouring, noise)| {
        let q = Query {
            algorithm: AlgorithmKind::Dpsgd,
            model: Model::Logistic,
            lambda: 1.0,
            steps,
            sample_rate,
            clip,
            neighbouring,
            delta_priv: 1e-5,
            noise,
        };
        assess_consistent(&q)?;
        if let Ok(r) = assess(&q)
            && let (Some(e), Some(rdp)) = (r.epsilon, r.rdp_epsilon)
        {
            prop_assert!(e <= rdp * (1.0 + 1e-12), "{q:?}: ε = {e} above the RDP's {rdp}");
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Generated DP-GD and DP-SGD configs (DMFT with small RQMC budgets; Huber,
/// logistic and least squares) and static configs with a small `[simulation]`:
/// values across scales, any step size, noise
/// law and design — every point in results with finite numbers (simulation
/// records included) or in errors with a reason, never a panic.
#[test]
fn generated_dpgd_and_simulation_configs_end_in_results_or_errors_with_finite_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let law = prop_oneof![
        moderate().prop_map(|sd| format!("{{ law = \"gaussian\", sd = {sd:e} }}")),
        moderate().prop_map(|s| format!("{{ law = \"laplace\", scale = {s:e} }}")),
        (moderate(), 0.5f64..20.0)
            .prop_map(|(s, dof)| format!("{{ law = \"student_t\", dof = {dof}, scale = {s:e} }}")),
    ];
    let design = prop_oneof![Just("gaussian"), Just("rademacher"), Just("gaussian_projected")];
    let algorithm = prop_oneof![
        3 => (moderate(), moderate(), 0.001f64..1.0, 1usize..12)
            .prop_map(|(l, s, eta, t)| format!("kind = \"dpgd\"\nlambda = {l:e}\nsigma = {s:e}\neta = {eta:e}\nsteps = {t}")),
        1 => (moderate(), moderate()).prop_map(|(l, s)| format!("kind = \"objective\"\nlambda = {l:e}\nsigma = {s:e}")),
        1 => (moderate(), moderate()).prop_map(|(l, t)| format!("kind = \"output\"\nlambda = {l:e}\ntau = {t:e}")),
        3 => (moderate(), moderate(), 0.001f64..50.0, 1usize..12, moderate(), prop::option::of(moderate()))
            .prop_map(|(l, s, eta, t, q, c)| {
                let clip = c.map_or(String::new(), |c| format!("\nclip = {c:e}"));
                format!("kind = \"dpsgd\"\nlambda = {l:e}\nsigma = {s:e}\neta = {eta:e}\nsteps = {t}\nsample_rate = {q:e}{clip}")
            }),
    ];
    let cases = (
        0u8..3,
        law,
        moderate(),
        moderate(),
        algorithm,
        any::<bool>(),
        design,
        20usize..80,
    );
    let result = runner(150).run(&cases, |(model, law, delta, s2, algorithm, simulate, design, d)| {
        let problem = match model {
            0 => format!("model = \"huber\"\nhuber_m = 1.0\nnoise = {law}\n"),
            1 => format!("model = \"least_squares\"\nnoise = {law}\n"),
            _ => "model = \"logistic\"\n".to_string(),
        };
        let simulation = if simulate {
            format!("[simulation]\nd = {d}\nreps = 3\ndesign = \"{design}\"\nseed = 7\n")
        } else {
            String::new()
        };
        let text = format!(
            "[problem]\n{problem}delta = {delta:e}\ns2 = {s2:e}\n[algorithm]\n{algorithm}\n\
             [solver]\ntime_limit = 1.0\ndmft_points = 256\ndmft_scrambles = 2\n{simulation}"
        );
        let Ok(cfg) = Config::from_toml_str(&text) else {
            return Ok(());
        };
        let dir = tmp.path().join("run");
        let s = run(&cfg, "fuzz", &dir, Existing::Overwrite, Sources::default(), &Silent)
            .map_err(|e| TestCaseError::fail(format!("{text}: run failed: {e:#}")))?;
        let records = Record::read_file(&s.results()).unwrap();
        for r in &records {
            prop_assert!(r.non_finite().is_none() && r.solver.converged, "{text}: {r:?}");
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
