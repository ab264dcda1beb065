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
    use propdp::privacy::{NoiseLevel, Participation, Query};
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
                participation: Participation::POISSON,
                neighbouring,
                delta_priv,
                noise,
                // the round trips below read the noise back at the same λ
                extra_ridge: propdp::core::accountant::ExtraRidge::Refuse,
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
    use propdp::privacy::{NoiseLevel, Participation, Query, assess};
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
    // cyclic groups with bands ≤ groups (certified) and beyond (refused)
    let participation = prop_oneof![
        Just(Participation::POISSON),
        (1usize..40, 1usize..40).prop_map(|(groups, bands)| Participation { groups, bands })
    ];
    let cases = (sample_rate, clip, steps, relation, noise, participation);
    let result = runner(40).run(
        &cases,
        |(sample_rate, clip, steps, neighbouring, noise, participation)| {
            let q = Query {
                algorithm: AlgorithmKind::Dpsgd,
                model: Model::Logistic,
                lambda: 1.0,
                steps,
                sample_rate,
                clip,
                participation,
                neighbouring,
                delta_priv: 1e-5,
                noise,
                extra_ridge: propdp::core::accountant::ExtraRidge::Refuse,
            };
            assess_consistent(&q)?;
            if let Ok(r) = assess(&q)
                && let (Some(e), Some(rdp)) = (r.epsilon, r.rdp_epsilon)
            {
                prop_assert!(e <= rdp * (1.0 + 1e-12), "{q:?}: ε = {e} above the RDP's {rdp}");
            }
            Ok(())
        },
    );
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
#[ignore = "slow: run with --include-ignored"]
fn generated_dpgd_and_simulation_configs_end_in_results_or_errors_with_finite_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let law = prop_oneof![
        moderate().prop_map(|sd| format!("{{ law = \"gaussian\", sd = {sd:e} }}")),
        moderate().prop_map(|s| format!("{{ law = \"laplace\", scale = {s:e} }}")),
        (moderate(), 0.5f64..20.0)
            .prop_map(|(s, dof)| format!("{{ law = \"student_t\", dof = {dof}, scale = {s:e} }}")),
        (moderate(), 0.0f64..1.0, moderate())
            .prop_map(|(sd, p, o)| format!("{{ law = \"contaminated\", sd = {sd:e}, p = {p}, outlier_sd = {o:e} }}")),
    ];
    // s² across scales now and then: unscaled regression targets (issue "Hardening, round two" item 1)
    let s2 = prop_oneof![3 => moderate(), 1 => (0i32..13).prop_map(|k| 10f64.powi(k))];
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
        s2,
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
        // every record written passes the checks a resume applies to it
        // (Record::conforms: this config's point, converged, finite, in range, identities)
        let again = run(&cfg, "fuzz", &dir, Existing::Resume, Sources::default(), &Silent)
            .map_err(|e| TestCaseError::fail(format!("{text}: a written record fails its own checks: {e:#}")))?;
        prop_assert_eq!(again.skipped, records.len(), "{}", text);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Generated shard specifications (K/N with K, N across 0…u64::MAX, and
/// malformed text): a refusal naming `--shard`, or a shard whose run
/// finishes (most shards of a large N own nothing) — never a panic, an
/// abort or a hang.
#[test]
fn generated_shard_specifications_are_refused_naming_the_flag_or_run() {
    use propdp::run::run_shard;
    let tmp = tempfile::tempdir().unwrap();
    let cfg = Config::from_toml_str(
        "[problem]\nmodel = \"logistic\"\ndelta = [0.5, 1.0, 2.0]\ns2 = 1.0\n[algorithm]\nkind = \"objective\"\n\
         lambda = 1.0\nsigma = 1.0\n[simulation]\nd = [30]\nreps = 4\nseed = 1\n",
    )
    .unwrap();
    let number = prop_oneof![
        0u64..5,
        0u64..2_000_000,
        Just(u64::MAX),
        Just(10_000_000_000),
        any::<u64>()
    ];
    let spec = prop_oneof![
        4 => (number.clone(), number).prop_map(|(k, n)| format!("{k}/{n}")),
        1 => "[0-9/ -]{0,12}",
    ];
    let result = runner(60).run(&spec, |spec| {
        match spec.parse::<propdp::shard::Shard>() {
            Err(e) => prop_assert!(e.to_string().contains("--shard"), "{spec}: {e}"),
            Ok(shard) => {
                prop_assert!(shard.index < shard.count && shard.count <= propdp::shard::MAX_SHARDS);
                let dir = tmp.path().join("s");
                run_shard(
                    &cfg,
                    "f",
                    &dir,
                    Existing::Overwrite,
                    Sources::default(),
                    Some(shard),
                    &Silent,
                )
                .map_err(|e| TestCaseError::fail(format!("{spec}: {e:#}")))?;
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Every file under `dir` with its bytes (the lock file aside).
fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else if p.file_name().unwrap() != ".propdp.lock" {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

/// Generated output directories holding files propdp did not write (any of
/// the names it writes, with any content, with or without a manifest of
/// someone else's), then `run` or `tune` with every `Existing` mode:
/// either a refusal, or — where none of its names is taken — a run; in
/// both cases every file that was there is byte for byte as it was.
#[test]
fn generated_foreign_files_in_output_directories_are_never_touched() {
    let names = [
        "manifest.json",
        "results.jsonl",
        "errors.jsonl",
        "validation.csv",
        "tune.jsonl",
        "non_private.json",
        "complete.json",
        "figures/index.json",
        "figures/logistic_by_sigma.png",
        "notes.md",
    ];
    let content = prop_oneof![
        Just(String::new()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        ".{0,40}"
    ];
    let files = prop::collection::vec((0..names.len(), content), 1..4);
    let cases = (files, 0u8..3, any::<bool>());
    let run_cfg = Config::from_toml_str(
        "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ns2 = 1.0\n[algorithm]\nkind = \"objective\"\n\
         lambda = 1.0\nsigma = [0.0, 1.0]\n",
    )
    .unwrap();
    let tune_text = "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ns2 = 1.0\n[tune]\nalgorithms = [\"output\"]\n\
                     epsilon = [1.0]\ndelta_priv = 1e-6\n";
    let tmp = tempfile::tempdir().unwrap();
    let case = std::sync::atomic::AtomicUsize::new(0);
    let result = runner(60).run(&cases, |(files, mode, tune)| {
        let n = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = tmp.path().join(format!("case{n}"));
        std::fs::create_dir_all(dir.join("figures")).unwrap();
        for (i, text) in &files {
            std::fs::write(dir.join(names[*i]), text).unwrap();
        }
        let before = snapshot(&dir);
        let existing = [Existing::Refuse, Existing::Resume, Existing::Overwrite][mode as usize];
        let outcome = if tune {
            propdp::tune::tune(tune_text, "t", &dir, existing, &Silent).map(|_| ())
        } else {
            run(&run_cfg, "r", &dir, existing, Sources::default(), &Silent)
                .and_then(|s| propdp::figures::draw(&s.results(), None).map(|_| ()))
        };
        let after: std::collections::BTreeMap<_, _> = snapshot(&dir).into_iter().collect();
        for (path, bytes) in &before {
            prop_assert_eq!(
                after.get(path),
                Some(bytes),
                "{:?} changed ({:?}, {:?})",
                path,
                files,
                outcome.err()
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Generated hand edits of a finished run's records (a field of a line set
/// to another JSON value, a line duplicated or removed): `--resume` either
/// refuses naming the file and line, or keeps records that all pass the
/// checks of fresh ones and fills in what is missing — never a panic, never
/// an edited number kept.
#[test]
fn generated_hand_edited_records_are_refused_or_recomputed() {
    let cfg = Config::from_toml_str(
        "[problem]\nmodel = \"huber\"\ndelta = [0.5, 1.0]\ns2 = 1.0\nhuber_m = 1.0\n\
         noise = { law = \"gaussian\", sd = 0.5 }\n[algorithm]\nkind = \"objective\"\nlambda = 1.0\n\
         sigma = [0.0, 1.0]\n[simulation]\nd = [30]\nreps = 3\nseed = 2\n",
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    run(&cfg, "h", &dir, Existing::Refuse, Sources::default(), &Silent).unwrap();
    let results = dir.join("results.jsonl");
    let original = std::fs::read_to_string(&results).unwrap();
    let lines: Vec<String> = original.lines().map(String::from).collect();
    let paths = [
        "/index",
        "/source",
        "/model",
        "/algorithm",
        "/params/delta",
        "/params/sigma",
        "/metrics/est_err2",
        "/metrics/norm2",
        "/metrics/overlap",
        "/solver/converged",
        "/solver/residual",
        "/provenance/config_sha256",
        "/stderr/est_err2",
        "/per_rep/norm2/0",
        "/d",
        "/n",
        "/reps",
        "/seed",
        "/generator",
    ];
    let value = prop_oneof![
        Just(serde_json::json!(null)),
        Just(serde_json::json!(-5.0)),
        Just(serde_json::json!(1e300)),
        Just(serde_json::json!(0)),
        Just(serde_json::json!(99)),
        Just(serde_json::json!(false)),
        Just(serde_json::json!("x")),
        Just(serde_json::json!({})),
    ];
    let edit = prop_oneof![
        6 => (0..lines.len(), 0..paths.len(), value).prop_map(|(l, p, v)| (l, Some((p, v)), 0u8)),
        1 => (0..lines.len()).prop_map(|l| (l, None, 1u8)),
        1 => (0..lines.len()).prop_map(|l| (l, None, 2u8)),
    ];
    let result = runner(80).run(&edit, |(at, change, how)| {
        let mut edited = lines.clone();
        match (change, how) {
            (Some((p, v)), _) => {
                let mut record: serde_json::Value = serde_json::from_str(&edited[at]).unwrap();
                if let Some(slot) = record.pointer_mut(paths[p]) {
                    *slot = v;
                }
                edited[at] = record.to_string();
            }
            (None, 1) => edited.insert(at, lines[at].clone()),
            _ => {
                edited.remove(at);
            }
        }
        let text: String = edited.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&results, &text).unwrap();
        match run(&cfg, "h", &dir, Existing::Resume, Sources::default(), &Silent) {
            Err(e) => {
                let msg = format!("{e:#}");
                prop_assert!(msg.contains("results.jsonl:"), "{msg}");
                prop_assert_eq!(
                    std::fs::read_to_string(&results).unwrap(),
                    text,
                    "a refused file is left as it is"
                );
            }
            Ok(_) => {
                // the original records, each once; the edited line's point is
                // recomputed (theory cold rather than warm-started: the same to
                // the solver's tolerance), every other line kept as it was
                let by_key = |text: &str| -> std::collections::BTreeMap<_, (String, Record)> {
                    text.lines()
                        .map(|l| {
                            let r: Record = serde_json::from_str(l).unwrap();
                            let canonical = serde_json::from_str::<serde_json::Value>(l).unwrap().to_string();
                            (r.key(), (canonical, r))
                        })
                        .collect()
                };
                let (got, want) = (by_key(&std::fs::read_to_string(&results).unwrap()), by_key(&original));
                prop_assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
                let edited_key = serde_json::from_str::<Record>(&lines[at]).unwrap().key();
                for (k, (line, r)) in &got {
                    let (want_line, w) = &want[k];
                    if line == want_line {
                        continue;
                    }
                    prop_assert_eq!(*k, edited_key, "line {} edited, but {} changed", at + 1, k);
                    for (m, v) in &w.metrics {
                        let close = (r.metrics[m] - v).abs() <= 1e-9 * v.abs().max(1.0);
                        prop_assert!(close, "{}: {} recomputed as {} (was {})", k, m, r.metrics[m], v);
                    }
                }
            }
        }
        std::fs::write(&results, &original).unwrap();
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
