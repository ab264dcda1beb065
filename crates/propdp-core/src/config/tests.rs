//! Unit tests of the config layer: each table's keys, the noise source, and
//! the sweep built from them.

use super::*;
use crate::Config;
use crate::problem::{Algorithm, NoiseLaw};

const HUBER: &str = r#"
[problem]
model = "huber"
delta = [0.5, 2.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "objective"
lambda = [0.1, 1.0]
sigma = 1.0
"#;

fn err(text: &str) -> String {
    Config::from_toml_str(text).unwrap_err().to_string()
}

#[test]
fn a_key_another_kind_takes_is_refused_naming_the_field_and_its_kinds() {
    let e = err(&HUBER.replace("sigma = 1.0", "sigma = 1.0\nsteps = 3"));
    assert!(
        e.contains("`algorithm.steps` does not apply") && e.contains("kind = \"dpgd\""),
        "{e}"
    );
    let e = err(&HUBER.replace(
        "kind = \"objective\"\nlambda = [0.1, 1.0]\nsigma",
        "kind = \"output\"\nlambda = 1.0\nsigma",
    ));
    assert!(e.contains("algorithm.sigma") && e.contains("algorithm.tau"), "{e}");
    let e = err(&HUBER.replace("sd = 0.5", "sd = 0.5, dof = 3"));
    assert!(
        e.contains("problem.noise.dof") && e.contains("law = \"student_t\""),
        "{e}"
    );
    let e = err(&HUBER.replace("huber_m = 1.0\n", "huber_m = 1.0\nwidth = 2\n"));
    assert!(e.contains("problem.width") && e.contains("unknown key"), "{e}");
}

#[test]
fn required_keys_and_tags_are_named() {
    let e = err(&HUBER.replace("huber_m = 1.0\n", ""));
    assert!(e.contains("missing `problem.huber_m`"), "{e}");
    let e = err(&HUBER.replace("sd = 0.5", "scale = 0.5"));
    assert!(e.contains("missing `problem.noise.sd`"), "{e}");
    let e = err(&HUBER.replace("kind = \"objective\"", "kind = \"sgd\""));
    assert!(e.contains("algorithm.kind") && e.contains("\"dpgd\""), "{e}");
    let e = err(&HUBER.replace("kind = \"objective\"\n", ""));
    assert!(e.contains("missing `algorithm.kind`"), "{e}");
    let e = err(&HUBER
        .replace("sigma = 1.0", "eta = 0.1")
        .replace("\"objective\"", "\"dpgd\""));
    assert!(e.contains("missing `algorithm.steps`"), "{e}");
}

#[test]
fn the_noise_is_given_or_calibrated_never_both() {
    let e = err(&HUBER.replace("sigma = 1.0", "sigma = 1.0\nepsilon = 1.0\ndelta_priv = 1e-6"));
    assert!(e.contains("algorithm.sigma") && e.contains("calibrated"), "{e}");
    let e = err(&HUBER.replace("sigma = 1.0", "epsilon = 1.0"));
    assert!(e.contains("missing `algorithm.delta_priv`"), "{e}");
    let e = err(&HUBER.replace("sigma = 1.0", "epsilon = 1.0\ndelta_priv = 1.5"));
    assert!(
        e.contains("algorithm.delta_priv") && e.contains("0 < delta_priv < 1"),
        "{e}"
    );
    let e = err(&HUBER.replace("sigma = 1.0", "rho = 0.5\nepsilon = 1.0"));
    assert!(e.contains("algorithm.epsilon") && e.contains("not both"), "{e}");
    let e = err(&HUBER.replace("sigma = 1.0", "neighbouring = \"add_remove_one\""));
    assert!(e.contains("algorithm.neighbouring"), "{e}");
    let e = err(&HUBER.replace("sigma = 1.0\n", ""));
    assert!(
        e.contains("missing `algorithm.sigma`") && e.contains("objective perturbation"),
        "{e}"
    );
}

#[test]
fn the_sweep_is_every_combination_with_delta_fastest() {
    let cfg = Config::from_toml_str(HUBER).unwrap();
    let names: Vec<&str> = cfg.sweep.axes.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["s2", "huber_m", "noise.sd", "lambda", "sigma", "delta"]);
    let p = cfg.sweep.points();
    assert_eq!(p.len(), 4);
    assert_eq!((p[0].delta(), p[1].delta(), p[2].delta()), (0.5, 2.0, 0.5));
    assert_eq!(
        p[2].algorithm(),
        Algorithm::Objective {
            lambda: 1.0,
            sigma: 1.0
        }
    );
    assert!(matches!(p[0].model(), crate::Model::Huber { noise: NoiseLaw::Gaussian { sd }, .. } if sd == 0.5));
    assert_eq!(cfg.sweep.swept_axes(), ["lambda", "delta"]);
}

#[test]
fn budgets_are_calibrated_per_point_and_recorded() {
    let output = HUBER
        .replace("\"objective\"", "\"output\"")
        .replace("sigma = 1.0", "rho = [0.5, 2.0]");
    let cfg = Config::from_toml_str(&output).unwrap();
    let p = cfg.sweep.points();
    assert_eq!(p.len(), 8);
    assert!(p.iter().all(|p| p.budget().is_some() && p.algorithm().noise() > 0.0));
    // at the same λ and δ, a larger budget ρ needs less noise
    assert_eq!((p[0].algorithm().lambda(), p[2].algorithm().lambda()), (0.1, 0.1));
    assert!(p[0].algorithm().noise() > p[2].algorithm().noise());
    // objective perturbation below twice its floor: at λ + Δ, the floor ρ/2 (replace-one:
    // 4·log(1 + β/(λ + Δ)) = ρ/2), Δ recorded in the budget; refused with extra_ridge = "refuse"
    let cfg = Config::from_toml_str(&HUBER.replace("sigma = 1.0", "rho = 0.01")).unwrap();
    for p in cfg.sweep.points() {
        let b = p.budget().unwrap();
        let lambda = p.algorithm().lambda();
        assert!(
            b.added_ridge > 0.0 && (lambda - b.added_ridge - 0.1).abs() * (lambda - b.added_ridge - 1.0).abs() < 1e-9
        );
        assert!((4.0 * (1.0 / lambda).ln_1p() - 0.005).abs() < 1e-12, "λ + Δ = {lambda}");
    }
    let e = err(&HUBER.replace("sigma = 1.0", "rho = 0.01\nextra_ridge = \"refuse\""));
    assert!(e.contains("algorithm.rho") && e.contains("log(1 + βR²/λ)"), "{e}");
    let e = err(&output.replace("rho = [0.5, 2.0]", "rho = 0.5\nextra_ridge = \"auto\""));
    assert!(e.contains("algorithm.extra_ridge"), "{e}");
}

#[test]
fn dpgd_steps_must_be_integers_in_range() {
    let dpgd = HUBER
        .replace("\"objective\"", "\"dpgd\"")
        .replace("sigma = 1.0", "sigma = 1.0\neta = 0.1\nsteps = 2.5");
    let e = err(&dpgd);
    assert!(e.contains("algorithm.steps") && e.contains("integer"), "{e}");
    let ok = Config::from_toml_str(&dpgd.replace("steps = 2.5", "steps = [1, 3]")).unwrap();
    assert_eq!(ok.sweep.points().len(), 8);
}

#[test]
fn tune_configs_give_problem_points_with_a_placeholder_algorithm() {
    let text = r#"
[problem]
model = "logistic"
delta = [0.1, 1.0]
s2 = [1.0, 4.0]
[tune]
algorithms = ["objective", "dpgd"]
epsilon = [1.0]
delta_priv = 1e-6
"#;
    let (cfg, points) = TuneConfig::from_toml_str(text).unwrap();
    assert_eq!(points.len(), 4);
    assert_eq!(points[1].delta(), 1.0);
    assert_eq!(points[2].s2(), 4.0);
    assert_eq!(
        cfg.tune.horizons().unwrap(),
        tune::Horizons::Steps(vec![1, 2, 4, 8, 16, 32])
    );
    let e = TuneConfig::from_toml_str(
        &text
            .replace("\"dpgd\"", "\"output\"")
            .replace("delta_priv = 1e-6", "delta_priv = 1e-6\nsteps = [2]"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("tune.steps"), "{e}");
}

/// Least squares and two clusters get a DP-GD placeholder whose step is
/// valid at every δ: at δ = 0.014 (L ≈ 20) a step of 0.1 was refused as
/// above 2/L before any search ran.
#[test]
fn tune_placeholders_of_gradient_only_models_hold_at_small_delta() {
    for problem in [
        "model = \"least_squares\"\ns2 = 1.0\nnoise = { law = \"gaussian\", sd = 0.5 }",
        "model = \"logistic\"\ns2 = 4.0\ndata_model = \"two_cluster\"\nbalance = 0.6\nwithin = 0.8",
    ] {
        let text = format!(
            "[problem]\n{problem}\ndelta = [0.014, 0.001]\n[tune]\nalgorithms = [\"dpsgd\"]\nepsilon = [1.0]\n\
             delta_priv = 1e-6\nclip = [1.0]\n"
        );
        let (_, points) = TuneConfig::from_toml_str(&text).unwrap_or_else(|e| panic!("{problem}: {e}"));
        assert_eq!(points.len(), 2);
    }
}

#[test]
fn kappa_is_another_name_of_delta_and_not_both() {
    let cfg = Config::from_toml_str(&HUBER.replace("delta = [0.5, 2.0]", "kappa = [0.5, 2.0]")).unwrap();
    let deltas: Vec<f64> = cfg.sweep.points().iter().map(|p| p.delta()).collect();
    assert_eq!(deltas, vec![0.5, 2.0, 0.5, 2.0]);
    assert!(cfg.sweep.axes.iter().any(|a| a.name == "delta"));
    let e = err(&HUBER.replace("delta = [0.5, 2.0]", "delta = 0.5\nkappa = 0.5"));
    assert!(e.contains("problem.kappa") && e.contains("delta"), "{e}");
}

const LEAST_SQUARES: &str = r#"
[problem]
model = "least_squares"
delta = 0.5
s2 = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "dpsgd"
lambda = 0.05
sigma = 0.3
eta = 2.0
steps = 10000
sample_rate = 0.01
"#;

#[test]
fn horizons_up_to_the_step_cap_are_served_for_every_model() {
    assert!(Config::from_toml_str(LEAST_SQUARES).is_ok());
    assert!(
        Config::from_toml_str(&LEAST_SQUARES.replace("sample_rate = 0.01", "sample_rate = 0.01\nclip = 1.0")).is_ok()
    );
    let e = err(&LEAST_SQUARES.replace("steps = 10000", "steps = 100001"));
    assert!(e.contains("algorithm.steps") && e.contains("100000"), "{e}");
}

#[test]
fn a_step_whose_second_moments_diverge_is_refused_with_the_largest_stable_step() {
    // η = 9.235 < 2/L_q = 18.5, but the batch's sampling noise has gain G = 2.7
    let e = err(&LEAST_SQUARES.replace("eta = 2.0", "eta = 9.235"));
    assert!(
        e.contains("algorithm.eta") && e.contains("η < 4.589") && e.contains("G = 2.68"),
        "{e}"
    );
}

const DPSGD_ICP: &str = r#"
[problem]
model = "logistic"
delta = 0.5
s2 = 4.0
intercept = [0.8, 2.3]
[algorithm]
kind = "dpsgd"
lambda = 0.1
sigma = 1.0
eta = 1.0
steps = 20
sample_rate = 0.3
clip = 0.5
fit_intercept = [false, true]
"#;

#[test]
fn an_intercept_is_a_sweep_of_b_star_and_fit_intercept_and_absent_without_its_keys() {
    let c = Config::from_toml_str(DPSGD_ICP).unwrap();
    let got: Vec<(f64, f64)> = c
        .sweep
        .points()
        .iter()
        .map(|p| (p.params()["intercept"], p.params()["fit_intercept"]))
        .collect();
    assert_eq!(got, [(0.8, 0.0), (0.8, 1.0), (2.3, 0.0), (2.3, 1.0)]);
    // without the keys: no intercept, and nothing of it in the parameters or the serialized point
    let plain = DPSGD_ICP
        .replace("intercept = [0.8, 2.3]\n", "")
        .replace("fit_intercept = [false, true]\n", "");
    let c = Config::from_toml_str(&plain).unwrap();
    let p = c.sweep.points()[0];
    assert!(p.intercept().is_none());
    assert!(!p.params().keys().any(|k| k.contains("intercept")));
    assert!(!serde_json::to_string(&p).unwrap().contains("intercept"));
    // a point with one round-trips through its serialized form
    let c = Config::from_toml_str(DPSGD_ICP).unwrap();
    let p = c.sweep.points()[3];
    let back: crate::Point = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
}

#[test]
fn an_intercept_is_refused_where_the_theory_does_not_serve_it_naming_the_field() {
    let e = err(&DPSGD_ICP.replace("[0.8, 2.3]", "11.0"));
    assert!(e.contains("problem.intercept") && e.contains("10"), "{e}");
    let e = err(&DPSGD_ICP.replace("[false, true]", "[false, 2]"));
    assert!(e.contains("algorithm.fit_intercept"), "{e}");
    // every horizon is served: the long-horizon state evolution has the intercept's field
    for dmft in ["auto", "exact", "long_horizon"] {
        let cfg = format!("{DPSGD_ICP}[solver]\ndmft = \"{dmft}\"\n");
        assert!(Config::from_toml_str(&cfg.replace("steps = 20", "steps = 200")).is_ok());
    }
    let e = err(&DPSGD_ICP.replace("clip = 0.5", "clip = 0.5\nloss_variant = \"conditional\""));
    assert!(e.contains("algorithm.loss_variant") && e.contains("intercept"), "{e}");
    // a covariance is served (docs/theory.md §3.5)
    let cov = "s2 = 4.0\ncovariance = { family = \"power_law\", exponent = 1.0, condition = 10.0, atoms = 10 }";
    assert!(Config::from_toml_str(&DPSGD_ICP.replace("s2 = 4.0", cov)).is_ok());
    // objective perturbation (docs/theory.md §2.6): Huber's teacher intercept only when learned
    let obj = HUBER.replace("s2 = 1.0", "s2 = 1.0\nintercept = 0.5");
    let e = err(&obj);
    assert!(
        e.contains("problem.intercept") && e.contains("fit_intercept = true"),
        "{e}"
    );
    let learned = obj.replace("sigma = 1.0", "sigma = 1.0\nfit_intercept = true");
    assert!(Config::from_toml_str(&learned).is_ok());
    let logistic = "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ns2 = 4.0\nintercept = 0.8\n\
                    [algorithm]\nkind = \"output\"\nlambda = 0.5\ntau = 0.5\nfit_intercept = [false, true]\n";
    assert_eq!(Config::from_toml_str(logistic).unwrap().sweep.points().len(), 2);
    // a budget with a learned intercept: the privacy claim would not hold (unpenalised, row norm)
    let budget = learned.replace("sigma = 1.0", "epsilon = 2.0\ndelta_priv = 1e-6");
    let e = err(&budget);
    assert!(
        e.contains("algorithm.fit_intercept") && e.contains("unpenalised"),
        "{e}"
    );
    let budget = logistic.replace("tau = 0.5", "epsilon = 2.0\ndelta_priv = 1e-6");
    assert!(err(&budget).contains("algorithm.fit_intercept"));
    assert!(Config::from_toml_str(&budget.replace("[false, true]", "false")).is_ok());
    // b* = 0 with objective perturbation: the model without an intercept
    assert!(Config::from_toml_str(&HUBER.replace("s2 = 1.0", "s2 = 1.0\nintercept = 0.0")).is_ok());
}

const TWO_CLUSTER: &str = r#"
[problem]
model = "logistic"
data_model = "two_cluster"
delta = 0.5
s2 = 4.0
balance = [0.5, 0.75]
within = 0.7
[algorithm]
kind = "dpsgd"
lambda = 0.1
sigma = 1.0
eta = 1.0
steps = 20
sample_rate = 0.3
clip = 0.5
"#;

#[test]
fn two_clusters_sweep_their_balance_and_default_to_balanced_whole_rows() {
    let c = Config::from_toml_str(TWO_CLUSTER).unwrap();
    let got: Vec<(f64, f64)> = c
        .sweep
        .points()
        .iter()
        .map(|p| (p.params()["balance"], p.params()["within"]))
        .collect();
    assert_eq!(got, [(0.5, 0.7), (0.75, 0.7)]);
    let p = c.sweep.points()[1];
    let back: crate::Point = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
    let plain = TWO_CLUSTER
        .replace("balance = [0.5, 0.75]\n", "")
        .replace("within = 0.7\n", "");
    let mix = Config::from_toml_str(&plain).unwrap().sweep.points()[0]
        .two_cluster()
        .unwrap();
    assert_eq!((mix.balance, mix.within), (0.5, 1.0));
    // the teacher's data model: no two clusters, nothing of them in the parameters
    let teacher = plain.replace("data_model = \"two_cluster\"\n", "");
    let p = Config::from_toml_str(&teacher).unwrap().sweep.points()[0];
    assert!(p.two_cluster().is_none() && !p.params().contains_key("balance"));
}

#[test]
fn two_clusters_are_refused_where_they_are_not_served_naming_the_field() {
    let e = err(&TWO_CLUSTER.replace("[0.5, 0.75]", "0.99"));
    assert!(e.contains("problem.balance") && e.contains("0.98"), "{e}");
    let e = err(&TWO_CLUSTER.replace("within = 0.7", "within = 0.0"));
    assert!(e.contains("problem.within") && e.contains("0 < within ≤ 1"), "{e}");
    let e = err(&TWO_CLUSTER.replace("data_model = \"two_cluster\"\n", ""));
    assert!(e.contains("problem.balance") && e.contains("two_cluster"), "{e}");
    let e = err(&TWO_CLUSTER.replace("data_model = \"two_cluster\"", "data_model = \"mixture\""));
    assert!(e.contains("problem.data_model"), "{e}");
    let e = err(&HUBER.replace("s2 = 1.0", "s2 = 1.0\ndata_model = \"two_cluster\""));
    assert!(
        e.contains("problem.data_model") && e.contains("model = \"logistic\""),
        "{e}"
    );
    let obj = TWO_CLUSTER.replace(
        "kind = \"dpsgd\"\nlambda = 0.1\nsigma = 1.0\neta = 1.0\nsteps = 20\nsample_rate = 0.3\nclip = 0.5",
        "kind = \"objective\"\nlambda = 0.1\nsigma = 1.0",
    );
    let e = err(&obj);
    assert!(e.contains("problem.data_model") && e.contains("dpsgd"), "{e}");
    let e = err(&TWO_CLUSTER.replace("clip = 0.5", "clip = 0.5\nloss_variant = \"conditional\""));
    assert!(e.contains("algorithm.loss_variant") && e.contains("two_cluster"), "{e}");
    let e = err(&TWO_CLUSTER.replace("s2 = 4.0", "s2 = 4.0\nintercept = 0.8"));
    assert!(e.contains("problem.intercept") && e.contains("two_cluster"), "{e}");
    // every horizon is served: the long-horizon state evolution has two clusters (docs/theory.md §3.6)
    for dmft in ["auto", "exact", "long_horizon"] {
        let cfg = format!("{TWO_CLUSTER}[solver]\ndmft = \"{dmft}\"\n");
        assert!(Config::from_toml_str(&cfg.replace("steps = 20", "steps = 5000")).is_ok());
    }
    let e = err(&format!(
        "{TWO_CLUSTER}[simulation]\nd = 100\nreps = 4\ndesign = \"rademacher\"\n"
    ));
    assert!(e.contains("simulation.design") && e.contains("gaussian"), "{e}");
    // a learned intercept is served, with the teacher's b* absent
    let fit = TWO_CLUSTER.replace("clip = 0.5", "clip = 0.5\nfit_intercept = true");
    assert!(Config::from_toml_str(&fit).is_ok());
}

#[test]
fn a_precision_is_a_relative_error_and_not_beside_fixed_points() {
    let ok = Config::from_toml_str(&format!("{HUBER}[solver]\nprecision = 0.005\n")).unwrap();
    assert_eq!(ok.raw.solver.dmft().precision, Some(0.005));
    for bad in [
        "precision = 0.0",
        "precision = 0.5",
        "precision = 0.01\ndmft_points = 4096",
    ] {
        let e = err(&format!("{HUBER}[solver]\n{bad}\n"));
        assert!(e.contains("solver.precision"), "{bad}: {e}");
    }
    // absent, the manifest's [solver] table is unchanged
    let text = toml::to_string(&SolverOptions::default()).unwrap();
    assert!(!text.contains("precision"), "{text}");
}
