//! `propdp mechanism`: every candidate's σ calibrated to the same (ε, δ)
//! under add/remove-one
//! (checked against the privacy query of its participation; the BLT's
//! against the Gaussian mechanism's exact δ at its sensitivity), the best
//! the least predicted, the optimised strategies no worse than the ones
//! they start from, and the inputs it refuses.

use propdp::Silent;
use propdp::core::problem::Strategy;
use propdp::core::{AlgorithmKind, Config, ModelKind};
use propdp::mechanism::{Origin, choose, load};
use propdp::privacy::{QueryArgs, assess};

const SMALL: &str = r#"
[problem]
model = "least_squares"
delta = 0.5
s2 = 1.0
noise = { law = "gaussian", sd = 0.5 }

[algorithm]
kind = "dpsgd"
lambda = 0.05
sigma = 1.0
eta = 0.2
steps = 160
sample_rate = 0.1
clip = 1.0

[solver]
dmft_points = 1024
dmft_scrambles = 2
"#;

/// σ calibrated by `propdp privacy` for rate `p` in `groups` groups.
fn privacy_sigma(p: f64, groups: u64) -> f64 {
    let args = QueryArgs {
        epsilon: Some(4.0),
        delta_priv: Some(1e-5),
        clip: Some(1.0),
        sample_rate: Some(p),
        steps: Some(160),
        groups: (groups > 1).then_some(groups),
        neighbouring: Some(propdp::core::accountant::Neighbouring::AddRemoveOne),
        ..QueryArgs::new(AlgorithmKind::Dpsgd, ModelKind::LeastSquares)
    };
    assess(&args.query().unwrap()).unwrap().noise
}

#[test]
fn candidates_meet_one_budget_and_the_best_is_the_least_predicted() {
    // the config's σ gives way to the budget, under add/remove-one (amplified BandMF's relation)
    let cfg = load(SMALL, None, 4.0, 1e-5).unwrap();
    assert!(load(&SMALL.replace("sigma = 1.0\n", ""), None, 4.0, 1e-5).is_ok());
    let c = choose(&cfg, 4.0, 1e-5, None, &Silent).unwrap();
    assert_eq!(c.neighbouring, "add/remove-one");
    let origins: Vec<Origin> = c.candidates.iter().map(|c| c.origin).collect();
    assert_eq!(origins[0], Origin::Dpsgd);
    assert!(origins.contains(&Origin::PrefixSum) && origins.contains(&Origin::Optimized));
    assert_eq!(origins.last(), Some(&Origin::Blt));
    for k in &c.candidates {
        assert!(k.epsilon <= 4.0 && k.epsilon > 3.99, "{k:?}");
        assert_eq!(k.metric, "est_err2");
        if k.origin == Origin::Blt {
            continue;
        }
        assert!((k.sample_rate - 0.1 * k.groups as f64).abs() < 1e-15, "{k:?}");
        let want = privacy_sigma(k.sample_rate, k.groups as u64);
        assert!(
            (k.sigma - want).abs() <= 1e-12 * want,
            "{k:?}: privacy calibrates {want}"
        );
        let norm: f64 = k.coefficients.iter().map(|v| v * v).sum();
        assert!((norm - 1.0).abs() < 1e-12, "{k:?}");
    }
    let least = c.candidates.iter().map(|k| k.predicted).fold(f64::INFINITY, f64::min);
    assert_eq!(c.best.predicted, least);
    // the search starts at the prefix-sum coefficients of its groups and keeps the best it sees
    let optimized = c.candidates.iter().find(|k| k.origin == Origin::Optimized).unwrap();
    let start = c
        .candidates
        .iter()
        .find(|k| k.origin == Origin::PrefixSum && k.groups == optimized.groups)
        .unwrap();
    assert!(
        optimized.predicted <= start.predicted,
        "{optimized:?} against {start:?}"
    );
    // and here (ε = 4, q = 0.1: 2 groups) below DP-SGD's too
    assert!(
        optimized.predicted <= c.candidates[0].predicted,
        "{optimized:?} against {:?}",
        c.candidates[0]
    );
    // the BLT: the fixed order in ⌈1/q⌉ = 10 groups, its σ the Gaussian mechanism's at its sensitivity
    let blt = c.candidates.last().unwrap();
    assert_eq!((blt.groups, blt.sample_rate, blt.coefficients.len()), (10, 1.0, 160));
    let b = blt.blt.as_ref().unwrap();
    let strategy = Strategy::blt(&b.buf_decay, &b.output_scale).unwrap();
    assert_eq!(strategy.toeplitz(160), blt.coefficients);
    let sensitivity = strategy.sensitivity(160, 10);
    let delta = gaussian_delta(blt.sigma / sensitivity, 4.0);
    assert!(
        delta <= 1e-5 && delta > 0.99e-5,
        "{blt:?}: δ = {delta:e} at sensitivity {sensitivity}"
    );
    let jax = blt.jax_privacy(1.0);
    assert!((jax["noise_multiplier"].as_f64().unwrap() - blt.sigma / sensitivity).abs() < 1e-12);
    assert_eq!(jax["min_sep"], 10);
    let json = c.json();
    for key in [
        "groups",
        "sample_rate",
        "coefficients",
        "sigma",
        "epsilon",
        "metric",
        "predicted",
        "stderr",
    ] {
        assert!(
            json["best"].get(key).is_some() && json["candidates"][0].get(key).is_some(),
            "{key}"
        );
    }
}

/// Without fixed paths the returned prediction is the run's solve at the
/// final precision (more precise than the default's), and stays the least
/// of the candidates.
#[test]
fn the_returned_prediction_is_solved_at_the_final_precision() {
    use propdp::core::config::SolverOptions;
    use propdp::mechanism::FINAL_PRECISION;
    use propdp::theory::solve::TheorySolver;
    let text = SMALL.replace("dmft_points = 1024\ndmft_scrambles = 2\n", "");
    let cfg = load(&text, None, 4.0, 1e-5).unwrap();
    let c = choose(&cfg, 4.0, 1e-5, None, &Silent).unwrap();
    assert!(c.candidates.iter().all(|k| k.predicted >= c.best.predicted));
    assert!(c.candidates.contains(&c.best));
    assert!(c.best.blt.is_none(), "{:?}", c.best);
    let run = text
        .replace(
            "sample_rate = 0.1\n",
            &format!("sample_rate = {:?}\n", c.best.sample_rate),
        )
        .replace("sigma = 1.0\n", &format!("sigma = {:?}\n", c.best.sigma))
        .replace(
            "clip = 1.0\n",
            &format!(
                "clip = 1.0\ngroups = {}\nstrategy = {{ coefficients = {:?} }}\n",
                c.best.groups, c.best.coefficients
            ),
        );
    let run = Config::from_toml_str(&run).unwrap();
    let point = run.sweep.points()[0];
    let solve = |opts: SolverOptions| {
        let sol = TheorySolver::new(opts).solve(&point, None).unwrap();
        let se = *sol.per_step.as_ref().unwrap().stderr["est_err2"].last().unwrap();
        (sol.metrics["est_err2"], se)
    };
    let (value, se) = solve(SolverOptions {
        precision: Some(FINAL_PRECISION),
        ..run.raw.solver
    });
    assert_eq!((c.best.predicted, c.best.stderr), (value, se));
    let (_, default_se) = solve(run.raw.solver);
    assert!(
        se < default_se,
        "{se} at the final precision, {default_se} at the default"
    );
}

/// δ(ε) of one Gaussian release at noise multiplier `z` (σ over the
/// sensitivity): Φ(1/(2z) − εz) − e^ε·Φ(−1/(2z) − εz) (Balle, Wang 2018, Thm. 8).
fn gaussian_delta(z: f64, epsilon: f64) -> f64 {
    use propdp_numerics::normal::norm_cdf;
    norm_cdf(0.5 / z - epsilon * z) - epsilon.exp() * norm_cdf(-0.5 / z - epsilon * z)
}

/// The BLT search keeps the best it sees: the chosen BLT predicts no worse
/// than its start (each at its own calibrated σ, by the same solver).
#[test]
fn the_blt_search_ends_no_worse_than_its_start() {
    use propdp::mechanism::{Participation, blt_start};
    use propdp::theory::solve::TheorySolver;
    let cfg = load(SMALL, None, 4.0, 1e-5).unwrap();
    let c = choose(&cfg, 4.0, 1e-5, None, &Silent).unwrap();
    let chosen = c.candidates.iter().find(|k| k.origin == Origin::Blt).unwrap();
    let start = blt_start(10, 160).unwrap();
    let (decay, scale) = start.blt_parameters().unwrap();
    assert!(
        decay.len() == 2 && decay.iter().all(|t| (0.0..1.0).contains(t)),
        "{start:?}"
    );
    let text = SMALL.replace(
        "clip = 1.0\n",
        &format!(
            "clip = 1.0\ngroups = 10\nstrategy = {{ blt = {{ buf_decay = {decay:?}, output_scale = {scale:?} }} }}\n"
        ),
    );
    let text = text.replace("sample_rate = 0.1", "sample_rate = 1.0");
    let start_cfg = load(&text, None, 4.0, 1e-5).unwrap();
    let point = start_cfg.sweep.points()[0];
    let solver = TheorySolver::new(cfg.raw.solver);
    let at_start = solver.solve(&point, None).unwrap().metrics["est_err2"];
    let part = Participation {
        groups: 10,
        sample_rate: 1.0,
    };
    assert_eq!(chosen.participation(), part);
    assert!(
        chosen.predicted <= at_start,
        "{chosen:?} against its start {start:?}: {at_start}"
    );
}

#[test]
fn one_dpsgd_point_and_a_predicted_metric_are_required() {
    let sweep = Config::from_toml_str(&SMALL.replace("steps = 160", "steps = [80, 160]")).unwrap();
    let e = choose(&sweep, 4.0, 1e-5, None, &Silent).unwrap_err();
    assert_eq!(e.field(), Some("algorithm.steps"), "{e}");
    let e = choose(
        &Config::from_toml_str(SMALL).unwrap(),
        4.0,
        1e-5,
        Some("test_class_err"),
        &Silent,
    )
    .unwrap_err();
    assert_eq!(e.field(), Some("metric"), "{e}");
    let e = choose(&Config::from_toml_str(SMALL).unwrap(), -1.0, 1e-5, None, &Silent).unwrap_err();
    assert_eq!(e.field(), Some("epsilon"), "{e}");
    let dpgd = SMALL
        .replace("kind = \"dpsgd\"", "kind = \"dpgd\"")
        .replace("sample_rate = 0.1\nclip = 1.0\n", "");
    let e = choose(&Config::from_toml_str(&dpgd).unwrap(), 4.0, 1e-5, None, &Silent).unwrap_err();
    assert_eq!(e.field(), Some("algorithm.kind"), "{e}");
}

#[test]
fn the_chosen_run_is_confirmed_by_simulating_it_beside_dpsgd() {
    use propdp::core::{Algorithm, LossVariant, Point};
    use propdp::sim::{Design, Prior, SimSettings, simulate};

    let cfg = load(SMALL, None, 4.0, 1e-5).unwrap();
    let c = choose(&cfg, 4.0, 1e-5, None, &Silent).unwrap();
    let base: Point = cfg.sweep.points()[0];
    let run = |k: &propdp::mechanism::Candidate| {
        let algorithm = Algorithm::Dpsgd {
            lambda: 0.05,
            sigma: k.sigma,
            eta: 0.2,
            steps: 160,
            loss_variant: LossVariant::Standard,
            sample_rate: k.sample_rate,
            clip: Some(1.0),
            groups: k.groups,
            strategy: match &k.blt {
                Some(b) => Strategy::blt(&b.buf_decay, &b.output_scale).unwrap(),
                None => Strategy::banded(&k.coefficients).unwrap(),
            },
        };
        let point = base.with_algorithm(algorithm).unwrap();
        let s = simulate(
            &point,
            &SimSettings::new(500, 20, Design::Gaussian, Prior::Gaussian, 5),
            0,
        )
        .unwrap();
        (s.mean["est_err2"], s.stderr["est_err2"])
    };
    let (best, best_se) = run(&c.best);
    let (dpsgd, dpsgd_se) = run(&c.candidates[0]);
    // the prediction within 3 standard errors (theory's and simulation's) of the simulated run
    let z = (best - c.best.predicted) / best_se.hypot(c.best.stderr);
    assert!(z.abs() <= 3.0, "best {:?}: simulated {best} ± {best_se}", c.best);
    // and no worse than DP-SGD's simulated run, within 2 standard errors
    assert!(
        best <= dpsgd + 2.0 * best_se.hypot(dpsgd_se),
        "{best} ± {best_se} against DP-SGD's {dpsgd} ± {dpsgd_se}"
    );
}

#[test]
fn tune_reruns_the_dpsgd_optimum_with_correlated_noise() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = r#"
[problem]
model = "huber"
delta = 0.5
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[tune]
algorithms = ["dpsgd"]
epsilon = [16.0]
delta_priv = 1e-5
steps = [256]
eta_fraction = [0.25]
sample_rate = [0.05]
clip = [1.0]
lambda_min = 0.01
lambda_max = 0.1
strategies = ["identity", "bandmf"]
[solver]
dmft_points = 1024
dmft_scrambles = 2
"#;
    let out = propdp::tune::tune(
        cfg,
        "t",
        &tmp.path().join("out"),
        propdp::rundir::Existing::Refuse,
        &Silent,
    )
    .unwrap();
    let text = std::fs::read_to_string(out.file()).unwrap();
    let best: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let run = &best["correlated_noise"];
    let groups = run["groups"].as_u64().unwrap();
    assert!(groups >= 2 && run["origin"] == "prefix_sum", "{best}");
    // certified at the budget: the σ privacy calibrates for that participation under tune's relation
    let p = run["sample_rate"].as_f64().unwrap();
    let args = QueryArgs {
        epsilon: Some(16.0),
        delta_priv: Some(1e-5),
        clip: Some(1.0),
        sample_rate: Some(p),
        steps: Some(256),
        groups: Some(groups),
        neighbouring: Some(propdp::core::accountant::Neighbouring::ReplaceOne),
        ..QueryArgs::new(AlgorithmKind::Dpsgd, ModelKind::Huber)
    };
    let sigma = assess(&args.query().unwrap()).unwrap().noise;
    assert!(
        (run["sigma"].as_f64().unwrap() - sigma).abs() <= 1e-12 * sigma,
        "{run} against {sigma}"
    );
    assert!((p - 0.05 * groups as f64).abs() < 1e-12, "{run}");
    // its step size searched again: no worse than the same run at the optimum's η, by the same solver
    let at_optimum = format!(
        "[problem]\nmodel = \"huber\"\ndelta = 0.5\ns2 = 1.0\nhuber_m = 1.0\nnoise = {{ law = \"gaussian\", sd = 0.5 }}\n\
         [algorithm]\nkind = \"dpsgd\"\nlambda = {}\nsigma = {}\neta = {}\nsteps = 256\nsample_rate = {p}\nclip = 1.0\n\
         groups = {groups}\nstrategy = {{ coefficients = {} }}\n[solver]\ndmft_points = 1024\ndmft_scrambles = 2\n",
        best["lambda"], run["sigma"], best["eta"], run["coefficients"]
    );
    let at_optimum = Config::from_toml_str(&at_optimum).unwrap();
    let solver = propdp::theory::solve::TheorySolver::new(at_optimum.raw.solver);
    let value = solver.solve(&at_optimum.sweep.points()[0], None).unwrap().metrics["est_err2"];
    let eta = run["eta"].as_f64().unwrap();
    assert!(
        run["predicted"].as_f64().unwrap() <= value,
        "{run}: at the optimum's η = {} it predicts {value}",
        best["eta"]
    );
    assert!(eta > 0.0, "{run}");
    assert!(
        out.table().contains("DP-SGD's optima with correlated noise"),
        "{}",
        out.table()
    );
    // without the strategies, no correlated run is written
    let plain = cfg.replace("strategies = [\"identity\", \"bandmf\"]\n", "");
    let out = propdp::tune::tune(
        &plain,
        "t",
        &tmp.path().join("plain"),
        propdp::rundir::Existing::Refuse,
        &Silent,
    )
    .unwrap();
    assert!(
        !std::fs::read_to_string(out.file())
            .unwrap()
            .contains("correlated_noise")
    );
}
