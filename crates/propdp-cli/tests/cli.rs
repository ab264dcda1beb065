//! End-to-end tests of `propdp run` / `propdp check` on the real binary.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use propdp_core::record::Record;

const HUBER: &str = r#"
[problem]
model = "huber"
delta = { from = 0.1, to = 3.0, steps = 12, scale = "log" }
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }

[algorithm]
kind = "objective"
lambda = 1.0
sigma = [0.0, 0.5, 2.0]
"#;

fn propdp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_propdp"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn records(dir: &Path) -> Vec<Record> {
    fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("complete JSON record"))
        .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn run_writes_one_converged_record_per_point_with_provenance() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "h.toml", HUBER);
    let out = tmp.path().join("out");
    let o = propdp(&["run", &cfg, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&out);
    assert_eq!(recs.len(), 36);
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.index, i);
        assert_eq!(
            (r.source.as_str(), r.model.as_str(), r.algorithm.as_str()),
            ("theory", "huber", "objective")
        );
        for key in ["delta", "lambda", "sigma", "s2", "huber_m", "noise.sd"] {
            assert!(r.params.contains_key(key), "missing param {key}");
        }
        assert!(r.solver.converged && r.solver.residual < 1e-9);
        assert!(r.metrics["est_err2"] > 0.0);
        assert_eq!(r.provenance.crate_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(r.provenance.config_sha256.len(), 64);
    }
    assert_eq!(recs[0].params["delta"], 0.1);
    assert_eq!(recs[11].params["delta"], 3.0);
    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("huber_m = 1.0"), "manifest keeps the config text");
}

#[test]
fn existing_results_are_never_silently_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "h.toml", HUBER);
    let out = tmp.path().join("out");
    assert!(propdp(&["run", &cfg, "--out", out.to_str().unwrap()]).status.success());
    let o = propdp(&["run", &cfg, "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
}

#[test]
fn resume_finishes_an_interrupted_run_without_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "h.toml", HUBER);
    let out = tmp.path().join("out");
    let out_s = out.to_str().unwrap();
    assert!(propdp(&["run", &cfg, "--out", out_s]).status.success());
    let full = records(&out);
    // simulate a crash: 10 complete lines and half of the 11th
    let text = fs::read_to_string(out.join("results.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let torn = format!("{}\n{}", lines[..10].join("\n"), &lines[10][..40]);
    fs::write(out.join("results.jsonl"), torn).unwrap();
    let o = propdp(&["run", &cfg, "--out", out_s, "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("26 records written, 10 already done"));
    let mut resumed = records(&out);
    resumed.sort_by_key(|r| r.index);
    assert_eq!(resumed.len(), full.len());
    for (a, b) in resumed.iter().zip(&full) {
        assert_eq!(a.index, b.index);
        let (x, y) = (a.metrics["est_err2"], b.metrics["est_err2"]);
        assert!((x - y).abs() <= 1e-9 * y, "point {}: {x} vs {y}", a.index);
    }
    // a different config may not resume into this directory
    let other = write(tmp.path(), "h2.toml", &HUBER.replace("lambda = 1.0", "lambda = 2.0"));
    let o = propdp(&["run", &other, "--out", out_s, "--resume"]);
    assert!(
        !o.status.success() && stderr(&o).contains("different config"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn invalid_configs_name_the_field_value_and_range() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (HUBER.replace("s2 = 1.0", "s2 = 1.0\nbogus = 3"), vec!["bogus"]),
        (
            HUBER.replace("sigma = [0.0, 0.5, 2.0]", "sigma = [0.0, -0.5]"),
            vec!["algorithm.sigma", "-0.5", "≥ 0"],
        ),
        (
            HUBER.replace("lambda = 1.0", "lambda = 0.0"),
            vec!["algorithm.lambda", "λ > 0 when σ > 0"],
        ),
        (
            HUBER.replace("from = 0.1", "from = -0.1"),
            vec!["problem.delta", "scale = \"log\""],
        ),
        (
            HUBER.replace("huber_m = 1.0", "huber_m = 0.0"),
            vec!["problem.huber_m", "> 0"],
        ),
        (HUBER.replace("sd = 0.5", "scale = 0.5"), vec!["problem.noise.sd"]),
        (
            HUBER.replace("model = \"huber\"", "model = \"logistic\""),
            vec!["problem.huber_m", "does not apply"],
        ),
        (
            HUBER.replace("kind = \"objective\"", "kind = \"output\""),
            vec!["algorithm.tau"],
        ),
        (
            HUBER.replace("kind = \"objective\"", "kind = \"dpgd\"\neta = 0.2\nsteps = 0"),
            vec!["algorithm.steps", "1 ≤ steps"],
        ),
        (
            HUBER.replace("kind = \"objective\"", "kind = \"dpgd\"\neta = 3.0\nsteps = 10"),
            vec!["algorithm.eta", "diverges"],
        ),
        (
            HUBER.replace("lambda = 1.0", "lambda = 1.0\neta = 0.1"),
            vec!["algorithm.eta", "dpgd"],
        ),
    ];
    for (i, (text, needles)) in cases.iter().enumerate() {
        let cfg = write(tmp.path(), &format!("bad{i}.toml"), text);
        let o = propdp(&["check", &cfg]);
        assert!(!o.status.success(), "case {i} accepted");
        let err = stderr(&o);
        for n in needles {
            assert!(err.contains(n), "case {i}: `{n}` not in: {err}");
        }
    }
}

#[test]
fn points_without_solution_are_reported_and_the_rest_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    // unregularized logistic MLE: exists below the Candès–Sur threshold only
    let cfg = write(
        tmp.path(),
        "l.toml",
        r#"
[problem]
model = "logistic"
delta = [0.1, 0.2, 0.6, 1.0]
s2 = 1.0
[algorithm]
kind = "objective"
lambda = 0.0
sigma = 0.0
"#,
    );
    let out = tmp.path().join("out");
    let o = propdp(&["run", &cfg, "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("separable"), "{}", stderr(&o));
    let ok: Vec<f64> = records(&out).iter().map(|r| r.params["delta"]).collect();
    assert_eq!(ok, vec![0.1, 0.2]);
    let errors = fs::read_to_string(out.join("errors.jsonl")).unwrap();
    assert_eq!(errors.lines().count(), 2);
}

const WITH_SIM: &str = r#"
[problem]
model = "logistic"
delta = [0.5, 2.0]
s2 = 1.0

[algorithm]
kind = "objective"
lambda = 1.0
sigma = 1.0

[simulation]
d = [60, 120]
reps = 6
design = "rademacher"
seed = 9
"#;

fn run_with_threads(cfg: &str, out: &Path, threads: &str) -> Vec<Record> {
    let o = Command::new(env!("CARGO_BIN_EXE_propdp"))
        .args(["run", cfg, "--out", out.to_str().unwrap()])
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    records(out)
}

#[test]
fn simulation_records_are_complete_and_independent_of_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "s.toml", WITH_SIM);
    let one = run_with_threads(&cfg, &tmp.path().join("t1"), "1");
    let two = run_with_threads(&cfg, &tmp.path().join("t2"), "2");
    let sims: Vec<&Record> = one.iter().filter(|r| r.source == "simulation").collect();
    assert_eq!(sims.len(), 4, "2 points × 2 dimensions");
    assert_eq!(one.iter().filter(|r| r.source == "theory").count(), 2);
    for r in &sims {
        let s = r.simulation.as_ref().expect("simulation fields");
        assert_eq!((s.reps, s.seed), (6, 9));
        assert_eq!(s.n, (s.d as f64 / r.params["delta"]).round() as usize);
        assert!(s.per_rep["est_err2"].len() == 6 && s.stderr["est_err2"] > 0.0);
        assert!(r.solver.residual <= 1e-9, "final gradient norm recorded");
    }
    for (a, b) in one.iter().zip(&two) {
        assert_eq!(a.metrics, b.metrics, "results must not depend on the thread count");
    }
}

#[test]
fn validate_compares_theory_and_simulation() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(
        tmp.path(),
        "s.toml",
        &WITH_SIM
            .replace("d = [60, 120]", "d = 150")
            .replace("reps = 6", "reps = 12"),
    );
    let out = tmp.path().join("out");
    let o = propdp(&["validate", &cfg, "--out", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", stderr(&o));
    assert!(stdout.contains("18 of 18 comparisons pass"), "{stdout}");
    let csv = fs::read_to_string(out.join("validation.csv")).unwrap();
    assert_eq!(csv.lines().count(), 19);
    // a config without [simulation] cannot be validated, nor simulated
    let plain = write(tmp.path(), "h.toml", HUBER);
    assert!(stderr(&propdp(&["validate", &plain])).contains("[simulation]"));
    assert!(stderr(&propdp(&["run", &plain, "--sim-only"])).contains("[simulation]"));
    let bad = write(tmp.path(), "b.toml", &WITH_SIM.replace("reps = 6", "reps = 1"));
    assert!(stderr(&propdp(&["check", &bad])).contains("simulation.reps"));
}

#[test]
fn privacy_calibration_round_trips_and_rejects_bad_input() {
    for alg in ["output", "objective", "dpgd"] {
        let o = propdp(&[
            "privacy",
            "--algorithm",
            alg,
            "--model",
            "logistic",
            "--lambda",
            "0.5",
            "--steps",
            "50",
            "--epsilon",
            "2",
            "--delta-priv",
            "1e-5",
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{alg}: {}", stderr(&o));
        assert!(
            out.contains("calibrated noise") && out.contains("ε = 2.000000 at δ = 0.00001"),
            "{alg}: {out}"
        );
    }
    let o = propdp(&["privacy", "--algorithm", "output", "--model", "huber", "--lambda", "0"]);
    assert!(!o.status.success() && stderr(&o).contains("--lambda"), "{}", stderr(&o));
    let o = propdp(&[
        "privacy",
        "--algorithm",
        "dpgd",
        "--model",
        "huber",
        "--noise",
        "1",
        "--delta-priv",
        "2",
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("--delta-priv"),
        "{}",
        stderr(&o)
    );
}

/// A Huber `propdp tune` config comparing objective and output perturbation.
fn huber_tune_config(delta: &str, epsilon: &str) -> String {
    format!(
        r#"
[problem]
model = "huber"
delta = {delta}
s2 = 1.0
huber_m = 1.0
noise = {{ law = "gaussian", sd = 0.5 }}
[tune]
algorithms = ["objective", "output"]
epsilon = {epsilon}
delta_priv = 1e-6
"#
    )
}

/// The optimums written by `propdp tune` into `out`.
fn tune_lines(out: &Path) -> Vec<serde_json::Value> {
    fs::read_to_string(out.join("tune.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn tune_finds_a_local_optimum_of_the_predicted_error() {
    use propdp_core::accountant::{Mechanism, MechanismKind, Neighbouring};
    use propdp_core::config::SolverOptions;
    use propdp_core::{Algorithm, Model, NoiseLaw, Point};
    use propdp_theory::solve::TheorySolver;
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "t.toml", &huber_tune_config("[0.1, 1.0]", "[1.0, 8.0]"));
    let out = tmp.path().join("out");
    let o = propdp(&["tune", &cfg, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = tune_lines(&out);
    assert_eq!(lines.len(), 8, "2 δ × 2 ε × 2 algorithms");
    let solver = TheorySolver::new(SolverOptions::default());
    let model = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    for l in &lines {
        let (lam, eps, delta, value) = (
            l["lambda"].as_f64().unwrap(),
            l["epsilon"].as_f64().unwrap(),
            l["params"]["delta"].as_f64().unwrap(),
            l["value"].as_f64().unwrap(),
        );
        let objective = l["algorithm"] == "objective";
        // independently: calibrate and solve at λ·1.3 and λ/1.3
        for other in [lam * 1.3, lam / 1.3] {
            let kind = if objective {
                MechanismKind::Objective { lambda: other }
            } else {
                MechanismKind::Output { lambda: other }
            };
            let Some(noise) = Mechanism::new(&model, kind, Neighbouring::ReplaceOne).calibrate(eps, 1e-6) else {
                continue;
            };
            let alg = if objective {
                Algorithm::Objective {
                    lambda: other,
                    sigma: noise,
                }
            } else {
                Algorithm::Output {
                    lambda: other,
                    tau: noise,
                }
            };
            let p = Point::new(delta, 1.0, model, alg).unwrap();
            let v = solver.solve(&p, None).unwrap().metrics["est_err2"];
            assert!(value <= v + 1e-9, "{l}: λ·{:.2} gives {v} < {value}", other / lam);
        }
    }
}

#[test]
fn tune_dpgd_beats_its_neighbours_and_simulation_confirms_every_optimum() {
    use propdp_core::accountant::{Mechanism, MechanismKind, Neighbouring};
    use propdp_core::config::SolverOptions;
    use propdp_core::{Algorithm, LossVariant, Model, Point};
    use propdp_theory::solve::TheorySolver;
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(
        tmp.path(),
        "t.toml",
        r#"
[problem]
model = "logistic"
delta = 0.5
s2 = 1.0
[tune]
algorithms = ["output", "dpgd"]
epsilon = [2.0, 8.0]
delta_priv = 1e-6
steps = [1, 2, 4]
eta_fraction = [0.25, 0.5, 0.9]
[simulation]
d = 100
reps = 12
seed = 5
"#,
    );
    let out = tmp.path().join("out");
    let o = propdp(&["tune", &cfg, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("figures/winner_map.png").exists() && out.join("figures/winner_map.svg").exists());
    let lines = tune_lines(&out);
    assert_eq!(lines.len(), 4, "2 ε × 2 algorithms");
    for l in &lines {
        // the SPEC.md §5 rule at the tuned point, against an independent simulation
        assert_eq!(l["simulation"]["agrees"], true, "{l}");
        assert_eq!(l["simulation"]["d"], 100);
    }
    let solver = TheorySolver::new(SolverOptions::default());
    let solve = |steps: usize, fraction: f64, lambda: f64, eps: f64| -> Option<(f64, f64)> {
        let mech = Mechanism::new(
            &Model::Logistic,
            MechanismKind::Dpgd { steps },
            Neighbouring::ReplaceOne,
        );
        let sigma = mech.calibrate(eps, 1e-6).unwrap();
        let l = 0.25 * (1.0 + 0.5f64.sqrt()).powi(2) / 0.5 + lambda;
        let alg = Algorithm::Dpgd {
            lambda,
            sigma,
            eta: fraction * 2.0 / l,
            steps,
            loss_variant: LossVariant::Standard,
        };
        let sol = solver
            .solve(&Point::new(0.5, 1.0, Model::Logistic, alg).ok()?, None)
            .unwrap();
        let se = sol.per_step.unwrap().stderr["est_err2"][steps];
        Some((sol.metrics["est_err2"], se))
    };
    for l in lines.iter().filter(|l| l["algorithm"] == "dpgd") {
        let f = |k: &str| l[k].as_f64().unwrap();
        let (lam, eta, eps, value, se) = (f("lambda"), f("eta"), f("epsilon"), f("value"), f("stderr"));
        let t = l["steps"].as_u64().unwrap() as usize;
        // the reported point is the calibrated one
        let fraction = eta * (0.25 * (1.0 + 0.5f64.sqrt()).powi(2) / 0.5 + lam) / 2.0;
        let (v0, _) = solve(t, fraction, lam, eps).unwrap();
        assert!((v0 - value).abs() < 1e-12, "{l}: re-solved {v0}");
        // no neighbour in T, η or λ does better beyond the RQMC error
        let mut neighbours = vec![(t, fraction * 0.8, lam), (t, (fraction * 1.2).min(0.95), lam)];
        neighbours.extend([1, 2, 4].iter().filter(|&&s| s != t).map(|&s| (s, fraction, lam)));
        neighbours.extend([(t, fraction, lam * 1.5), (t, fraction, lam / 1.5 + 1e-3)]);
        for (s, fr, la) in neighbours {
            let Some((v, se_v)) = solve(s, fr, la, eps) else {
                continue;
            };
            assert!(
                value <= v + 3.0 * (se * se + se_v * se_v).sqrt(),
                "{l}: T={s} η·L/2={fr:.3} λ={la:.3} gives {v} < {value}"
            );
        }
    }
}

#[test]
fn tune_never_replaces_silently_and_resumes_an_interrupted_search() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "t.toml", &huber_tune_config("[0.2, 2.0]", "[1.0, 4.0]"));
    let out = tmp.path().join("out");
    let dir = out.to_str().unwrap();
    assert!(propdp(&["tune", &cfg, "--out", dir]).status.success());
    let file = out.join("tune.jsonl");
    let full = fs::read_to_string(&file).unwrap();
    assert_eq!(full.lines().count(), 8);
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["config_text"], fs::read_to_string(&cfg).unwrap());
    assert_eq!(manifest["points"], 8);
    let o = propdp(&["tune", &cfg, "--out", dir]);
    assert!(!o.status.success() && stderr(&o).contains("--resume"), "{}", stderr(&o));
    // interrupted after three optimums, the fourth torn mid-write
    let lines: Vec<&str> = full.lines().collect();
    fs::write(&file, format!("{}\n{}", lines[..3].join("\n"), &lines[3][..40])).unwrap();
    let o = propdp(&["tune", &cfg, "--out", dir, "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&file).unwrap(), full, "resumed = uninterrupted");
    assert!(out.join("figures/winner_map.png").exists());
    // another config cannot resume this search
    let other = write(
        tmp.path(),
        "u.toml",
        &fs::read_to_string(&cfg).unwrap().replace("4.0]", "8.0]"),
    );
    let o = propdp(&["tune", &other, "--out", dir, "--resume"]);
    assert!(
        !o.status.success() && stderr(&o).contains("different config"),
        "{}",
        stderr(&o)
    );
    assert!(propdp(&["tune", &other, "--out", dir, "--overwrite"]).status.success());
}

#[test]
fn tune_rejects_a_metric_the_theory_does_not_predict() {
    let tmp = tempfile::tempdir().unwrap();
    let text = huber_tune_config("0.5", "[2.0]").replace("[\"objective\", \"output\"]", "[\"objective\", \"dpgd\"]")
        + "metric = \"train_resid_trunc\"\n";
    let cfg = write(tmp.path(), "t.toml", &text);
    let o = propdp(&["tune", &cfg, "--out", tmp.path().join("out").to_str().unwrap()]);
    let e = stderr(&o);
    assert!(
        !o.status.success() && e.contains("tune.metric") && e.contains("dpgd") && e.contains("est_err2"),
        "{e}"
    );
}

#[test]
fn tune_takes_zcdp_budgets_and_names_bad_budget_fields() {
    use propdp_core::accountant::{Mechanism, MechanismKind, Neighbouring};
    use propdp_core::{Model, NoiseLaw};
    let tmp = tempfile::tempdir().unwrap();
    let base = huber_tune_config("[0.5]", "[1.0]").replace("[\"objective\", \"output\"]", "[\"output\", \"dpgd\"]");
    let zcdp = base.replace("epsilon = [1.0]\ndelta_priv = 1e-6\n", "rho = [0.05, 0.5]\n")
        + "steps = [1, 2]\neta_fraction = [0.25, 0.5]\n";
    let cfg = write(tmp.path(), "z.toml", &zcdp);
    let out = tmp.path().join("out");
    let o = propdp(&["tune", &cfg, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("figures/winner_map.png").exists());
    let model = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let lines = tune_lines(&out);
    assert_eq!(lines.len(), 4, "2 ρ × 2 algorithms");
    for l in &lines {
        assert_eq!(l["notion"], "zcdp", "{l}");
        let (rho, noise, lambda) = (
            l["rho"].as_f64().unwrap(),
            l["noise"].as_f64().unwrap(),
            l["lambda"].as_f64().unwrap(),
        );
        let kind = match l["algorithm"].as_str().unwrap() {
            "dpgd" => MechanismKind::Dpgd {
                steps: l["steps"].as_u64().unwrap() as usize,
            },
            _ => MechanismKind::Output { lambda },
        };
        // the reported noise meets ρ exactly
        let got = Mechanism::new(&model, kind, Neighbouring::ReplaceOne).rho(noise);
        assert!((got / rho - 1.0).abs() < 1e-9, "{l}: ρ = {got}");
    }
    for (text, needle) in [
        (
            base.replace("delta_priv = 1e-6\n", "delta_priv = 1e-6\nrho = [1.0]\n"),
            "tune.rho",
        ),
        (base.replace("epsilon = [1.0]\ndelta_priv = 1e-6\n", ""), "tune.epsilon"),
        (base.replace("delta_priv = 1e-6\n", ""), "tune.delta_priv"),
        (
            base.replace("epsilon = [1.0]\ndelta_priv = 1e-6\n", "rho = [-1.0]\n"),
            "tune.rho",
        ),
    ] {
        let cfg = write(tmp.path(), "bad.toml", &text);
        let o = propdp(&["tune", &cfg, "--out", tmp.path().join("bad").to_str().unwrap()]);
        assert!(
            !o.status.success() && stderr(&o).contains(needle),
            "{needle}: {}",
            stderr(&o)
        );
    }
}
