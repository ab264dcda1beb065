//! Private inference (`propdp::inference`, docs/inference.md): the
//! intervals' coverage by simulation on seeded data sets, the privacy
//! report within budget, and every refusal.

use nalgebra::{DMatrix, DVector};
use propdp::ErrorKind;
use propdp::core::NoiseLaw;
use propdp::core::accountant::Neighbouring;
use propdp::core::{Algorithm, LossVariant};
use propdp::inference::{Glm, Reason, Spec, fit, fit_whitened};
use propdp::sim::data::{draw_noise, fill_gaussian};
use propdp::sim::rng::stream;
use rand::RngExt;

/// Rows N(0, I/d) (row-major), θ* ~ N(0, s²I) and labels of `model`.
fn data(seed: u64, n: usize, d: usize, s2: f64, model: Glm, noise: NoiseLaw) -> (Vec<f64>, Vec<f64>, DVector<f64>) {
    data_with(seed, n, d, s2, model, noise, None, 0.0)
}

/// [`data`] with rows N(0, LLᵀ/d) for a factor L of the covariance.
#[allow(clippy::too_many_arguments)] // one per knob of the generating model
fn data_with(
    seed: u64,
    n: usize,
    d: usize,
    s2: f64,
    model: Glm,
    noise: NoiseLaw,
    factor: Option<&DMatrix<f64>>,
    intercept: f64,
) -> (Vec<f64>, Vec<f64>, DVector<f64>) {
    let mut rng = stream(seed, &[7]);
    let mut theta = DVector::zeros(d);
    fill_gaussian(&mut theta, &mut rng);
    theta *= s2.sqrt();
    let mut rows = vec![0.0; n * d];
    for v in &mut rows {
        *v = rng.sample::<f64, _>(rand_distr::StandardNormal) / (d as f64).sqrt();
    }
    if let Some(l) = factor {
        // row-major G Lᵀ: the column-major Lᵀ-transposed product L Gᵀ
        rows = (l * DMatrix::from_row_slice(n, d, &rows).transpose())
            .as_slice()
            .to_vec();
    }
    let y = rows
        .chunks_exact(d)
        .map(|x| {
            let nu: f64 = x.iter().zip(theta.iter()).map(|(a, b)| a * b).sum::<f64>() + intercept;
            match model {
                Glm::Logistic => {
                    if rng.random::<f64>() < 1.0 / (1.0 + (-nu).exp()) {
                        1.0
                    } else {
                        -1.0
                    }
                }
                Glm::Huber { .. } => nu + draw_noise(&noise, &mut rng),
            }
        })
        .collect();
    (rows, y, theta)
}

/// Objective perturbation at ridge λ (its noise calibrated to the budget).
fn objective(lambda: f64) -> Algorithm {
    Algorithm::Objective { lambda, sigma: 0.0 }
}

/// Output perturbation at ridge λ (its noise calibrated to the budget).
fn output(lambda: f64) -> Algorithm {
    Algorithm::Output { lambda, tau: 0.0 }
}

/// T steps of DP-SGD at ridge λ, step size 0.5 and sample rate `q`,
/// clipped at 1 (its noise calibrated to the budget).
fn dpsgd(lambda: f64, steps: usize, q: f64) -> Algorithm {
    Algorithm::Dpsgd {
        lambda,
        sigma: 0.0,
        eta: 0.5,
        steps,
        loss_variant: LossVariant::Standard,
        sample_rate: q,
        clip: Some(1.0),
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    }
}

fn spec(model: Glm, algorithm: Algorithm, epsilon: f64) -> Spec {
    Spec {
        model,
        algorithm,
        epsilon,
        delta_priv: 1e-6,
        neighbouring: Neighbouring::ReplaceOne,
        row_norm: 1.0,
        noise: None,
        holdout: 0.0,
        test_clip: None,
        extra_ridge: propdp::core::accountant::ExtraRidge::Auto,
        standardize: false,
        intercept: false,
    }
}

/// A report writes the spec's algorithm as the keys it always had: its
/// name as `release`, its ridge as `lambda`, DP-SGD's `descent` (Python's
/// summary reads them); the noise the budget calibrates is not among them.
#[test]
fn a_report_writes_the_algorithm_as_release_lambda_and_descent() {
    let v = serde_json::to_value(spec(Glm::Logistic, dpsgd(0.5, 20, 0.25), 8.0)).unwrap();
    assert_eq!(
        (v["release"].as_str(), v["lambda"].as_f64()),
        (Some("dpsgd"), Some(0.5))
    );
    assert_eq!(
        v["descent"],
        serde_json::json!({"steps": 20, "eta": 0.5, "sample_rate": 0.25, "clip": 1.0})
    );
    assert!(v.get("algorithm").is_none() && v.get("sigma").is_none(), "{v}");
    for (algorithm, name) in [(objective(2.0), "objective"), (output(2.0), "output")] {
        let v = serde_json::to_value(spec(Glm::Huber { m: 1.0 }, algorithm, 8.0)).unwrap();
        assert_eq!(
            (v["release"].as_str(), v["lambda"].as_f64(), v["descent"].is_null()),
            (Some(name), Some(2.0), true),
            "{v}"
        );
        assert_eq!(v["model"], serde_json::json!({"model": "huber", "m": 1.0}));
    }
}

/// Over `sets` data sets: (coverage of the 95% intervals with its standard
/// error over data sets, coverage of the naive interval θ̂_j ± 1.96σ̂_eff).
fn coverage(s: &Spec, delta: f64, s2: f64, noise: NoiseLaw, sets: u64) -> (f64, f64, f64) {
    coverage_with(s, delta, s2, noise, 0.0, sets)
}

/// [`coverage`] of labels with a teacher's intercept b*.
fn coverage_with(s: &Spec, delta: f64, s2: f64, noise: NoiseLaw, intercept: f64, sets: u64) -> (f64, f64, f64) {
    let d = 400;
    let n = (d as f64 / delta) as usize;
    let (mut per_set, mut naive) = (Vec::new(), 0.0);
    for k in 0..sets {
        let (rows, y, theta) = data_with(k, n, d, s2, s.model, noise, None, intercept);
        let f = fit(&rows, n, d, &y, s, Some(100 + k)).unwrap();
        assert!(
            f.privacy.epsilon <= s.epsilon,
            "ε = {} above {}",
            f.privacy.epsilon,
            s.epsilon
        );
        let ci = f.conf_int(0.05).unwrap();
        assert!(ci.iter().all(|(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi));
        let hit = ci
            .iter()
            .zip(theta.iter())
            .filter(|((lo, hi), t)| lo <= *t && *t <= hi)
            .count();
        per_set.push(hit as f64 / d as f64);
        naive += f
            .params
            .iter()
            .zip(theta.iter())
            .filter(|(p, t)| (*p - *t).abs() <= 1.96 * f.nuisance.as_ref().expect("a proportional fit").sigma_eff)
            .count() as f64
            / (d as f64 * sets as f64);
    }
    let m = per_set.iter().sum::<f64>() / sets as f64;
    let sd = (per_set.iter().map(|c| (c - m).powi(2)).sum::<f64>() / (sets - 1) as f64).sqrt();
    (m, sd / (sets as f64).sqrt(), naive)
}

fn assert_covers(name: &str, (c, se, naive): (f64, f64, f64), naive_below: f64) {
    let tol = (3.0 * se).max(0.015);
    assert!(
        (c - 0.95).abs() <= tol,
        "{name}: 95% intervals covered {c:.4} (s.e. {se:.4}), outside 0.95 ± {tol:.4}"
    );
    assert!(
        naive < naive_below,
        "{name}: the naive interval covered {naive:.4}, expected below {naive_below}"
    );
}

/// Logistic objective perturbation where the signal is strong (s² = 4,
/// ε = 32): the naive interval centred at θ̂ covers about half the
/// coefficients (α ≈ 0.2); the debiased one its level.
#[test]
#[ignore = "slow: run with --include-ignored"]
fn logistic_intervals_keep_their_level_where_the_naive_one_fails() {
    let s = spec(Glm::Logistic, objective(1.0), 32.0);
    let g = NoiseLaw::Gaussian { sd: 0.0 };
    assert_covers("logistic objective", coverage(&s, 0.5, 4.0, g, 24), 0.7);
    let s = spec(Glm::Logistic, output(1.0), 32.0);
    assert_covers("logistic output", coverage(&s, 0.5, 4.0, g, 24), 0.7);
}

/// Huber objective perturbation with Student-t label noise the method is
/// not told about: the residual statistics are released and charged.
/// DP-SGD (q = 0.2, C = 1, T = 30): α and σ_eff from the state evolution at
/// ŝ² (found from ‖θ̂‖²/d as for the fixed points), its RQMC error in the
/// width. Measured with 8 sets: 0.960 (s.e. 0.003), the naive interval 0.60;
/// logistic DP-GD (ε = 32): 0.957 and 0.79 (docs/inference.md has 60-set runs).
#[test]
#[ignore = "slow: run with --include-ignored"]
fn dpsgd_intervals_keep_their_level_from_the_state_evolution() {
    let g = NoiseLaw::Gaussian { sd: 0.5 };
    let known = Spec {
        noise: Some(g),
        ..spec(Glm::Huber { m: 1.0 }, dpsgd(1.0, 30, 0.2), 32.0)
    };
    assert_covers("huber DP-SGD, known law", coverage(&known, 0.5, 1.0, g, 8), 0.7);
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn huber_intervals_keep_their_level_without_the_noise_law() {
    let s = spec(Glm::Huber { m: 1.0 }, objective(1.0), 32.0);
    let t = NoiseLaw::StudentT { dof: 3.0, scale: 0.5 };
    assert_covers("huber objective", coverage(&s, 1.0, 1.0, t, 24), 0.85);
}

/// Huber output perturbation when the label noise's law is given: s² from
/// ‖θ̂‖²/d, like logistic, and nothing but θ̂ released.
#[test]
fn huber_output_intervals_keep_their_level_given_the_noise_law() {
    let t = NoiseLaw::StudentT { dof: 3.0, scale: 0.5 };
    let s = Spec {
        noise: Some(t),
        ..spec(Glm::Huber { m: 1.0 }, output(1.0), 16.0)
    };
    assert_covers("huber output, known law", coverage(&s, 0.5, 1.0, t, 24), 0.93);
}

/// Huber output perturbation without the noise law: the unperturbed fit's
/// residual statistics de-blurred from the residuals at θ̂ (deblur.rs), at
/// blur τR/M = 0.43 (ε = 32) and 1.31 (ε = 8, where α̂'s bias is allowed
/// for in its standard error; there the output noise dominates and the
/// naive interval covers about 0.95 too, so only the level is checked).
#[test]
#[ignore = "slow: run with --include-ignored"]
fn huber_output_intervals_keep_their_level_without_the_noise_law() {
    let t = NoiseLaw::StudentT { dof: 3.0, scale: 0.5 };
    for (epsilon, naive_below) in [(32.0, 0.93), (8.0, 1.0)] {
        let s = spec(Glm::Huber { m: 1.0 }, output(1.0), epsilon);
        assert_covers(
            &format!("huber output, ε = {epsilon}"),
            coverage(&s, 0.5, 1.0, t, 24),
            naive_below,
        );
    }
}

/// The same seed gives the same release; the report covers both releases
/// of a Huber fit within the budget.
#[test]
fn a_seed_fixes_the_release_and_the_ledger_holds_the_budget() {
    let s = spec(Glm::Huber { m: 1.0 }, objective(1.0), 4.0);
    let (rows, y, _) = data(1, 400, 200, 1.0, s.model, NoiseLaw::Gaussian { sd: 0.5 });
    let (a, b) = (
        fit(&rows, 400, 200, &y, &s, Some(9)).unwrap(),
        fit(&rows, 400, 200, &y, &s, Some(9)).unwrap(),
    );
    assert_eq!(a.params, b.params);
    // θ̂, the rows' shrink, the two residual statistics
    assert_eq!(a.privacy.releases.len(), 3);
    assert!(a.privacy.epsilon <= 4.0 && a.privacy.epsilon_lower <= a.privacy.epsilon);
    assert!(
        a.privacy.epsilon > 3.9,
        "the budget is spent, not wasted: {}",
        a.privacy.epsilon
    );
    let c = fit(&rows, 400, 200, &y, &s, Some(10)).unwrap();
    assert_ne!(a.params, c.params);
}

fn refusal(result: propdp::Result<propdp::inference::Inference>) -> Reason {
    let e = result.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Refused, "{e:#}");
    e.refusal().expect("a refusal").reason
}

#[test]
fn each_refusal_fires_with_its_reason() {
    let g = NoiseLaw::Gaussian { sd: 0.5 };
    let logistic = spec(Glm::Logistic, objective(1.0), 8.0);
    // too few features
    let (rows, y, _) = data(1, 200, 100, 1.0, Glm::Logistic, g);
    assert_eq!(
        refusal(fit(&rows, 200, 100, &y, &logistic, Some(1))),
        Reason::TooFewFeatures
    );
    // labels that are not a logistic model's
    let (rows, mut y, _) = data(1, 400, 200, 1.0, Glm::Logistic, g);
    y[3] = 2.0;
    assert_eq!(refusal(fit(&rows, 400, 200, &y, &logistic, Some(1))), Reason::Labels);
    // logistic labels with an intercept (P(y = 1) = sigmoid(xᵀθ* + 1.5): about 75% ones)
    let (rows, _, theta) = data(4, 800, 400, 1.0, Glm::Logistic, g);
    let mut rng = stream(4, &[8]);
    let y: Vec<f64> = rows
        .chunks_exact(400)
        .map(|x| {
            let nu: f64 = x.iter().zip(theta.iter()).map(|(a, b)| a * b).sum::<f64>() + 1.5;
            if rng.random::<f64>() < 1.0 / (1.0 + (-nu).exp()) {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    assert_eq!(
        refusal(fit(&rows, 800, 400, &y, &logistic, Some(1))),
        Reason::UnbalancedLabels
    );
    // with an intercept they are served (the refusal of labels nearly all of one class: the
    // nuisance module's unit tests)
    let with_intercept = Spec {
        intercept: true,
        ..logistic
    };
    let f = fit(&rows, 800, 400, &y, &with_intercept, Some(1)).unwrap();
    assert!(f.intercept.is_some_and(|b| b > 0.0), "{:?}", f.intercept);
    let (rows, y, _) = data(1, 400, 200, 1.0, Glm::Huber { m: 1.0 }, g);
    // Huber DP-SGD without the noise law: the residual statistics' equations are the fixed point's
    let huber_sgd = Spec {
        ..spec(Glm::Huber { m: 1.0 }, dpsgd(1.0, 20, 1.0), 8.0)
    };
    assert_eq!(
        refusal(fit(&rows, 400, 200, &y, &huber_sgd, Some(1))),
        Reason::NoiseLawNeeded
    );
    // labels a function of the rows (y = sign(xᵀθ*)), much data and little noise: ‖θ̂‖²/d
    // is consistent only with a huge signal
    let sharp = spec(Glm::Logistic, objective(1.0), 1000.0);
    let (n, d) = (5000, 500);
    let (rows, _, theta) = data(2, n, d, 1.0, Glm::Logistic, g);
    let y: Vec<f64> = rows
        .chunks_exact(d)
        .map(|x| x.iter().zip(theta.iter()).map(|(a, b)| a * b).sum::<f64>().signum())
        .collect();
    assert_eq!(refusal(fit(&rows, n, d, &y, &sharp, Some(1))), Reason::NearSeparable);
    // little ridge: q(s²) peaks and falls, and a strong signal's ‖θ̂‖²/d is reached on both sides
    let small = spec(Glm::Logistic, objective(0.01), 10_000.0);
    let (rows, y, _) = data(3, 800, 400, 30.0, Glm::Logistic, g);
    assert_eq!(refusal(fit(&rows, 800, 400, &y, &small, Some(1))), Reason::Unidentified);
}

#[test]
fn arguments_out_of_range_are_named() {
    let (rows, y, _) = data(1, 400, 200, 1.0, Glm::Logistic, NoiseLaw::Gaussian { sd: 0.5 });
    let mut s = spec(Glm::Logistic, objective(1.0), 8.0);
    s.delta_priv = 2.0;
    let e = fit(&rows, 400, 200, &y, &s, None).unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ErrorKind::Argument, Some("delta_priv")),
        "{e:#}"
    );
    // below objective perturbation's floor 2·log(1 + β/λ) = 2·log(1.25), extra ridge refused
    let s = Spec {
        extra_ridge: propdp::core::accountant::ExtraRidge::Refuse,
        ..spec(Glm::Logistic, objective(1.0), 0.4)
    };
    let e = fit(&rows, 400, 200, &y, &s, None).unwrap_err();
    assert_eq!(e.field(), Some("epsilon"), "{e:#}");
    assert!(e.to_string().contains("floor"), "{e}");
    let f = fit(&rows, 400, 200, &y, &spec(Glm::Logistic, objective(1.0), 8.0), Some(1)).unwrap();
    assert_eq!(f.conf_int(1.5).unwrap_err().argument, "alpha");
    assert_eq!(f.contrast(&[1.0; 3], 0.05).unwrap_err().argument, "a");
    // no rows held out: no test error interval, and the argument to change named
    assert_eq!(f.test_error_int(0.05).unwrap_err().argument, "holdout");
    for (holdout, clip) in [(1.0, None), (-0.1, None), (0.2, Some(0.0))] {
        let s = Spec {
            holdout,
            test_clip: clip,
            ..spec(Glm::Huber { m: 1.0 }, objective(1.0), 8.0)
        };
        let field = if clip.is_some() { "test_clip" } else { "holdout" };
        assert_eq!(fit(&rows, 400, 200, &y, &s, None).unwrap_err().field(), Some(field));
    }
    // DP-SGD's descent, each setting in range; DP-GD is DP-SGD at q = 1; the noise is calibrated
    let sgd = |steps: usize, eta: f64, sample_rate: f64, clip: f64| Algorithm::Dpsgd {
        lambda: 1.0,
        sigma: 0.0,
        eta,
        steps,
        loss_variant: LossVariant::Standard,
        sample_rate,
        clip: Some(clip),
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    };
    let bad = [
        (sgd(0, 0.5, 1.0, 1.0), "steps"),
        (sgd(20, -1.0, 1.0, 1.0), "eta"),
        (sgd(20, 0.5, 1.5, 1.0), "sample_rate"),
        (sgd(20, 0.5, 1.0, 0.0), "clip"),
        (sgd(20, 0.5, 1.0, 1.0).with_noise(1.0), "sigma"),
        (
            Algorithm::Dpsgd {
                lambda: 1.0,
                sigma: 0.0,
                eta: 0.5,
                steps: 20,
                loss_variant: LossVariant::Conditional,
                sample_rate: 1.0,
                clip: None,
                groups: 1,
                strategy: propdp_core::problem::Strategy::IDENTITY,
            },
            "loss_variant",
        ),
        (output(1.0).with_noise(0.5), "tau"),
        (
            Algorithm::Dpgd {
                lambda: 1.0,
                sigma: 0.0,
                eta: 0.5,
                steps: 20,
                loss_variant: LossVariant::Standard,
            },
            "algorithm",
        ),
    ];
    for (algorithm, field) in bad {
        let s = spec(Glm::Logistic, algorithm, 8.0);
        assert_eq!(
            fit(&rows, 400, 200, &y, &s, None).unwrap_err().field(),
            Some(field),
            "{s:?}"
        );
    }
    // too few rows held out for the interval: 2% of 400
    let s = Spec {
        holdout: 0.02,
        ..spec(Glm::Logistic, objective(1.0), 8.0)
    };
    let e = fit(&rows, 400, 200, &y, &s, Some(1)).unwrap_err();
    assert_eq!(e.field(), Some("holdout"), "{e:#}");
    // no exact count of the private rows, even in a refusal
    assert!(!e.to_string().contains("400"), "{e:#}");
}

/// E min(r², b) for r ~ N(0, v).
fn clipped_square_mean(v: f64, b: f64) -> f64 {
    let c = (b / v).sqrt();
    let (cdf, pdf) = (propdp::core::loss::norm_cdf(c), propdp::core::loss::norm_pdf(c));
    v * ((2.0 * cdf - 1.0) - 2.0 * c * pdf) + b * 2.0 * (1.0 - cdf)
}

/// Over `sets` data sets with a fifth of the rows held out: the coverage of
/// the test error's 95% interval of the population error of each fit θ̂
/// (exact for rows N(0, I/d): logistic `test_class_error`; Huber with
/// Gaussian label noise, r = y − xᵀθ̂ ~ N(0, ‖θ̂ − θ*‖²/d + sd²)), and
/// the intervals' mean half-width.
fn test_error_coverage(s: &Spec, sd: f64, sets: u64) -> (f64, f64) {
    let (n, d, s2) = (1000, 400, 4.0);
    let (mut hits, mut width) = (0, 0.0);
    for k in 0..sets {
        let (rows, y, theta) = data(500 + k, n, d, s2, s.model, NoiseLaw::Gaussian { sd });
        let f = fit(&rows, n, d, &y, s, Some(900 + k)).unwrap();
        let t = f.test_error.expect("rows held out");
        assert!(f.privacy.epsilon <= s.epsilon && t.epsilon <= s.epsilon);
        assert!((150..250).contains(&t.rows), "{} held out", t.rows);
        assert_eq!(f.n + t.rows, n);
        let th = DVector::from_vec(f.params.clone());
        let df = d as f64;
        let (m, q, s2_real) = (th.dot(&theta) / df, th.norm_squared() / df, theta.norm_squared() / df);
        let truth = match s.model {
            Glm::Logistic => propdp::core::population::test_class_error(s2_real, m, q),
            Glm::Huber { .. } => clipped_square_mean(q - 2.0 * m + s2_real + sd * sd, 9.0),
        };
        let i = f.test_error_int(0.05).unwrap();
        hits += usize::from(i.lower <= truth && truth <= i.upper);
        width += (i.upper - i.lower) / 2.0 / sets as f64;
    }
    (hits as f64 / sets as f64, width)
}

/// The held-out test error's interval covers the population error of the
/// fit at its level; the privacy noise alone (without the rows' own
/// spread) would be far too narrow.
#[test]
#[ignore = "slow: run with --include-ignored"]
fn the_held_out_test_error_interval_covers_the_fits_population_error() {
    for (model, sd) in [(Glm::Logistic, 0.0), (Glm::Huber { m: 1.0 }, 0.5)] {
        let s = Spec {
            holdout: 0.2,
            ..spec(model, objective(1.0), 4.0)
        };
        let (coverage, width) = test_error_coverage(&s, sd, 60);
        // 60 sets: the coverage's standard error at 0.95 is 0.028
        assert!(coverage >= 0.87, "{model:?}: coverage {coverage}, half-width {width}");
        assert!(width > 0.0 && width.is_finite());
    }
}

/// Rows with a known covariance Σ = D + A/2 (D diagonal, a power law of
/// condition 20; A_ij = 0.5^|i−j|, normalised to tr Σ = d): the intervals
/// from the whitened fit keep their level for every coordinate of θ*, where
/// the isotropic ones on the raw rows do not (Huber, λ = 0.2, ε = 32).
#[test]
#[ignore = "slow: run with --include-ignored"]
fn with_a_public_covariance_the_whitened_intervals_keep_their_level() {
    let (n, d, s2) = (800, 400, 1.0);
    let sigma = DMatrix::from_fn(d, d, |i, j| {
        let diagonal = if i == j {
            20f64.powf(-(i as f64) / (d as f64 - 1.0))
        } else {
            0.0
        };
        diagonal + 0.5 * 0.5f64.powi(i.abs_diff(j) as i32)
    });
    let sigma = &sigma * (d as f64 / sigma.trace());
    let factor = sigma.clone().cholesky().expect("positive definite").l();
    let s = spec(Glm::Huber { m: 1.0 }, objective(0.2), 32.0);
    let noise = NoiseLaw::Gaussian { sd: 0.5 };
    let sets = 16;
    let (mut whitened, mut plain) = (Vec::new(), 0.0);
    for k in 0..sets {
        let (rows, y, theta) = data_with(40 + k, n, d, s2, s.model, noise, Some(&factor), 0.0);
        let covers = |ci: Vec<(f64, f64)>| {
            ci.iter()
                .zip(theta.iter())
                .filter(|((lo, hi), t)| lo <= *t && *t <= hi)
                .count() as f64
                / d as f64
        };
        let f = fit_whitened(&rows, n, d, &y, sigma.as_slice(), &s, Some(k)).unwrap();
        assert!(f.whitened && f.privacy.epsilon <= s.epsilon);
        // a coordinate is the contrast e_j
        let e3: Vec<f64> = (0..d).map(|j| f64::from(u8::from(j == 3))).collect();
        let (c, ci) = (f.contrast(&e3, 0.05).unwrap(), f.conf_int(0.05).unwrap());
        assert!((c.lower - ci[3].0).abs() < 1e-12 && (c.upper - ci[3].1).abs() < 1e-12);
        whitened.push(covers(ci));
        // the isotropic intervals on the raw rows, on the 40 coordinates of least variance
        let ci = fit(&rows, n, d, &y, &s, Some(k)).unwrap().conf_int(0.05).unwrap();
        plain += (d - 40..d)
            .filter(|&j| ci[j].0 <= theta[j] && theta[j] <= ci[j].1)
            .count() as f64
            / 40.0
            / sets as f64;
    }
    let mean = whitened.iter().sum::<f64>() / sets as f64;
    let sd = (whitened.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (sets as f64 - 1.0)).sqrt();
    let se = sd / (sets as f64).sqrt();
    assert!(
        (mean - 0.95).abs() <= (3.0 * se).max(0.015),
        "whitened coverage {mean} ± {se} (isotropic on the raw rows: {plain})"
    );
    // measured: 0.948 ± 0.003 whitened; isotropic, the 40 coordinates of least variance: 0.79
    assert!(
        plain < 0.85,
        "the isotropic intervals on correlated rows covered {plain}"
    );
    // a matrix that is not a covariance is named
    let (rows, y, _) = data(1, 400, 200, 1.0, Glm::Logistic, noise);
    let mut bad = vec![0.0; 200 * 200];
    bad[1] = 1.0;
    let e = fit_whitened(&rows, 400, 200, &y, &bad, &s, Some(1)).unwrap_err();
    assert_eq!(e.field(), Some("covariance"), "{e:#}");
}

/// Every key of a JSON value, at any depth.
fn keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                out.push(k.clone());
                keys(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

/// A release holds neither the noise's seed (with it the noise is
/// regenerated and subtracted) nor an exact count of private rows: the
/// rows' shrink by the projection is released, and under add/remove so is
/// n, whose released value moves with the noise.
#[test]
fn a_release_holds_no_seed_and_no_exact_count() {
    let seed = 987_654_321_u64;
    let (n, d) = (600, 200);
    for (model, release) in [(Glm::Logistic, objective(1.0)), (Glm::Huber { m: 1.0 }, output(1.0))] {
        let (rows, y, _) = data(5, n, d, 1.0, model, NoiseLaw::Gaussian { sd: 0.5 });
        for neighbouring in [Neighbouring::ReplaceOne, Neighbouring::AddRemoveOne] {
            let s = Spec {
                neighbouring,
                holdout: 0.2,
                ..spec(model, release, 8.0)
            };
            let f = fit(&rows, n, d, &y, &s, Some(seed)).unwrap();
            let dir = tempfile::tempdir().unwrap();
            f.write(dir.path(), 0.05).unwrap();
            let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
            let text = f.text();
            for out in [&json, &text] {
                assert!(!out.contains(&seed.to_string()), "the seed in {out}");
            }
            let report: serde_json::Value = serde_json::from_str(&json).unwrap();
            let mut all = Vec::new();
            keys(&report, &mut all);
            for banned in ["seed", "projected", "grad_norm"] {
                assert!(!all.iter().any(|k| k == banned), "{banned} in {json}");
            }
            assert!(f.rows.shrink_sd > 0.0 && f.rows.shrink.is_finite());
            let fitted: Vec<usize> = (0..4)
                .map(|k| fit(&rows, n, d, &y, &s, Some(seed + k)).unwrap().n)
                .collect();
            let held: Vec<usize> = (0..4)
                .map(|k| {
                    fit(&rows, n, d, &y, &s, Some(seed + k))
                        .unwrap()
                        .test_error
                        .unwrap()
                        .rows
                })
                .collect();
            if neighbouring == Neighbouring::AddRemoveOne {
                // the exact fitted count is n minus the held-out rows; its release moves by ~z
                assert!(f.rows.fitted_sd > 1.0, "{:?}", f.rows);
                let spread = fitted.iter().max().unwrap() - fitted.iter().min().unwrap();
                assert!(spread > 3, "released counts {fitted:?} hardly move: exact?");
                let spread = held.iter().max().unwrap() - held.iter().min().unwrap();
                assert!(spread > 3, "released held-out counts {held:?} hardly move: exact?");
                assert!(text.contains("about"), "{text}");
            } else {
                // replace-one: n is public and the split independent of the data
                assert_eq!(f.rows.fitted_sd, 0.0);
                for (a, b) in fitted.iter().zip(&held) {
                    assert_eq!(a + b, n);
                }
            }
        }
    }
}

/// One extreme but finite label cannot make a Huber release NaN: the
/// residual statistics are bounded per row (their sensitivity holds for
/// every finite label), and a label far out moves the release no more than
/// one a little less far out.
#[test]
fn an_extreme_label_leaves_the_huber_release_finite() {
    let (n, d) = (600, 200);
    let model = Glm::Huber { m: 1.0 };
    let (rows, y, _) = data(6, n, d, 1.0, model, NoiseLaw::Gaussian { sd: 0.5 });
    for release in [output(1.0), objective(1.0)] {
        let s = spec(model, release, 4.0);
        // far out on either side: the row's ψ is ±M whatever its label's size
        let far = [1e6, 1e154, 1e155, 1e300, f64::MAX, -1e6, -1e155, -f64::MAX];
        let fits: Vec<_> = far
            .iter()
            .map(|&big| {
                let mut y = y.clone();
                y[0] = big;
                let f = fit(&rows, n, d, &y, &s, Some(3)).unwrap();
                let ci = f.conf_int(0.05).unwrap();
                assert!(
                    ci.iter().all(|(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi),
                    "{release:?}, y[0] = {big}: {:?}",
                    &ci[..3]
                );
                let r = f.residuals.unwrap();
                assert!(r.inside.is_finite() && r.beta2.is_finite(), "{r:?}");
                (r.inside, r.beta2)
            })
            .collect();
        // the statistics see the far label only through its bounded ψ
        for side in [&fits[..5], &fits[5..]] {
            for w in side.windows(2) {
                assert!(
                    (w[0].0 - w[1].0).abs() < 1e-6 && (w[0].1 - w[1].1).abs() < 1e-6,
                    "{release:?}: {fits:?}"
                );
            }
        }
    }
}

/// A row norm far below the rows' scale projects every row, breaking the
/// intervals' assumption of rows N(0, I/d): refused, from the privately
/// released shrink.
#[test]
fn rows_shrunk_by_the_projection_are_refused() {
    let (n, d) = (1000, 200);
    let model = Glm::Huber { m: 1.0 };
    let (rows, y, _) = data(7, n, d, 1.0, model, NoiseLaw::Gaussian { sd: 0.5 });
    for (row_norm, release) in [(1e-3, output(1.0)), (0.3, objective(1.0))] {
        let s = Spec {
            row_norm,
            ..spec(model, release, 4.0)
        };
        assert_eq!(refusal(fit(&rows, n, d, &y, &s, Some(1))), Reason::RowsProjected);
    }
    let s = spec(model, output(1.0), 4.0);
    assert!(fit(&rows, n, d, &y, &s, Some(1)).is_ok());
}

/// Objective perturbation below its floor (Chaudhuri, Monteleoni, Sarwate
/// 2011, Alg. 2): with `extra_ridge = auto` the fit is made at λ + Δ, Δ
/// bringing the floor to ε/2, and its intervals — the theory solved and
/// the estimate debiased at λ + Δ — keep their level; with `refuse` the
/// same ε is an argument error naming epsilon.
#[test]
fn below_its_floor_objective_perturbation_adds_ridge_and_keeps_its_level() {
    let t = NoiseLaw::StudentT { dof: 3.0, scale: 0.5 };
    let g0 = NoiseLaw::Gaussian { sd: 0.0 };
    for (s, delta, s2, noise) in [
        (
            Spec {
                row_norm: 1.5,
                ..spec(Glm::Huber { m: 1.0 }, objective(1.0), 2.0)
            },
            0.5,
            1.0,
            t,
        ),
        (
            Spec {
                row_norm: 1.5,
                ..spec(Glm::Logistic, objective(0.1), 4.0)
            },
            0.5,
            4.0,
            g0,
        ),
    ] {
        let (rows, y, _) = data(1, 800, 400, s2, s.model, noise);
        let f = fit(&rows, 800, 400, &y, &s, Some(1)).unwrap();
        assert!(f.privacy.extra_ridge > 0.0 && f.privacy.lambda == s.lambda() + f.privacy.extra_ridge);
        assert!(f.privacy.epsilon <= s.epsilon);
        assert!(f.text().contains("extra ridge"), "{}", f.text());
        let refuse = Spec {
            extra_ridge: propdp::core::accountant::ExtraRidge::Refuse,
            ..s
        };
        let e = fit(&rows, 800, 400, &y, &refuse, Some(1)).unwrap_err();
        assert_eq!((e.kind(), e.field()), (ErrorKind::Argument, Some("epsilon")), "{e:#}");
        let (c, se, naive) = coverage(&s, delta, s2, noise, 16);
        eprintln!(
            "{:?} λ {} ε {}: Δ = {:.4}, coverage {c:.4} ± {se:.4}, naive {naive:.4}",
            s.model,
            s.lambda(),
            s.epsilon,
            f.privacy.extra_ridge
        );
        assert_covers(&format!("{:?} below the floor", s.model), (c, se, naive), 1.01);
    }
}

/// c of the ridge target θ*_λ = c·θ* of logistic labels on rows N(0, I/d)
/// (rotation invariance; intercept 0 by the labels' symmetry): the root of
/// n·E[ℓ'(y, cν)ν] + λc‖θ*‖² = 0, ν = xᵀθ* ~ N(0, ‖θ*‖²/d), on a grid of
/// 1601 points in ν and by Brent's method.
fn logistic_ridge_shrink(n: f64, lambda: f64, theta: &DVector<f64>) -> f64 {
    let norm2 = theta.norm_squared();
    let sd = (norm2 / theta.len() as f64).sqrt();
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let points: Vec<(f64, f64)> = (0..1601)
        .map(|i| {
            let t = -8.0 + i as f64 * 0.01;
            (sd * t, (-0.5 * t * t).exp())
        })
        .collect();
    let total: f64 = points.iter().map(|p| p.1).sum();
    let gradient = |c: f64| {
        let mean: f64 = points
            .iter()
            .map(|&(nu, w)| w * nu * (-sigmoid(nu) * sigmoid(-c * nu) + sigmoid(-nu) * sigmoid(c * nu)))
            .sum::<f64>()
            / total;
        n * mean + lambda * c * norm2
    };
    propdp::theory::numerics::roots::brent_absolute(0.0, 2.0, gradient, 1e-12, 200)
        .expect("the ridge target's shrink lies in (0, 2)")
}

/// The classical interval's coverage of the ridge target at one cell of
/// docs/inference.md's table: logistic objective perturbation, d = 10,
/// n = 3000, ε = 8, λ the sufficient one, 100 data sets. The standard
/// error of a coverage over 100 data sets of 10 coordinates is about
/// √(0.95·0.05/1000) ≈ 0.007 (coordinates of one fit share Ĥ's noise; the
/// table measured 0.956 ± 0.005 over 200): 0.95 ± 0.03 is four of them.
#[test]
fn the_classical_interval_covers_its_ridge_target() {
    let (n, d) = (3000, 10);
    let mut s = spec(Glm::Logistic, objective(1.0), 8.0);
    s.row_norm = 1.5;
    s.algorithm = s
        .algorithm
        .with_lambda(propdp::inference::classical::sufficient_lambda(&s, d).unwrap());
    let (mut hits, mut intercept_hits, sets) = (0, 0, 100);
    for k in 0..sets {
        let (rows, y, theta) = data(500 + k, n, d, 4.0, Glm::Logistic, NoiseLaw::Gaussian { sd: 0.0 });
        let f = fit(&rows, n, d, &y, &s, Some(k)).unwrap();
        let target = &theta * logistic_ridge_shrink(n as f64, s.lambda(), &theta);
        hits += f
            .conf_int(0.05)
            .unwrap()
            .iter()
            .zip(target.iter())
            .filter(|((lo, hi), t)| lo <= *t && *t <= hi)
            .count();
        let b = f.intercept_int(0.05).unwrap().unwrap();
        intercept_hits += usize::from(b.lower <= 0.0 && 0.0 <= b.upper);
    }
    let coverage = hits as f64 / (sets * d as u64) as f64;
    assert!((coverage - 0.95).abs() < 0.03, "coverage {coverage}");
    // 100 intervals for one intercept each: binomial sd 0.022
    let b = intercept_hits as f64 / sets as f64;
    assert!((b - 0.95).abs() < 0.07, "intercept coverage {b}");
}

/// d = 30 is below the proportional minimum: at d/n = 0.03 the fit gets the
/// classical interval, labelled as such in the result, the report and the
/// text, with an intercept; at too small a λ its Hessian's noise refuses it.
#[test]
fn a_small_d_gets_the_classical_interval_labelled() {
    let (n, d) = (1000, 30);
    let (rows, y, _) = data(3, n, d, 1.0, Glm::Logistic, NoiseLaw::Gaussian { sd: 0.0 });
    let mut s = spec(Glm::Logistic, objective(1.0), 8.0);
    assert_eq!(refusal(fit(&rows, n, d, &y, &s, Some(1))), Reason::NoisyHessian);
    s.algorithm = s
        .algorithm
        .with_lambda(propdp::inference::classical::sufficient_lambda(&s, d).unwrap());
    let f = fit(&rows, n, d, &y, &s, Some(1)).unwrap();
    assert_eq!(f.method, propdp::inference::Method::Classical);
    assert!(f.nuisance.is_none() && f.privacy.epsilon <= 8.0);
    assert_eq!(f.conf_int(0.05).unwrap().len(), d);
    assert!(f.intercept_int(0.05).unwrap().is_some());
    assert!(f.text().contains("method: classical"), "{}", f.text());
    assert!(f.privacy.releases.iter().any(|r| r.contains("Hessian")));
    let json = serde_json::to_value(&f).unwrap();
    assert_eq!(json["method"], "classical");
    assert!(f.intervals_csv(0.05).unwrap().contains("\nintercept,"));
    // Huber and output perturbation are served too; DP-SGD is not (its iterate is not the minimiser)
    let (rows, y, _) = data(3, n, d, 1.0, Glm::Huber { m: 1.0 }, NoiseLaw::Gaussian { sd: 0.5 });
    let mut h = spec(Glm::Huber { m: 1.0 }, output(1.0), 8.0);
    h.algorithm = h
        .algorithm
        .with_lambda(propdp::inference::classical::sufficient_lambda(&h, d).unwrap());
    assert_eq!(
        fit(&rows, n, d, &y, &h, Some(1)).unwrap().method,
        propdp::inference::Method::Classical
    );
    let sgd = Spec {
        ..spec(Glm::Huber { m: 1.0 }, dpsgd(1.0, 20, 1.0), 8.0)
    };
    assert_eq!(refusal(fit(&rows, n, d, &y, &sgd, Some(1))), Reason::TooFewFeatures);
}

/// Below the proportional minimum and at d/n above the classical
/// interval's 0.1: `too_few_features`, naming the minimum d and what was
/// spent — nothing under replace-one (n is public), the released count's ε
/// under add/remove.
#[test]
fn a_small_d_at_large_d_over_n_is_refused_naming_the_minimum_and_the_spend() {
    let (n, d) = (200, 30);
    let (rows, y, _) = data(3, n, d, 1.0, Glm::Logistic, NoiseLaw::Gaussian { sd: 0.0 });
    let s = spec(Glm::Logistic, objective(100.0), 8.0);
    let e = fit(&rows, n, d, &y, &s, Some(1)).unwrap_err();
    assert_eq!(e.refusal().map(|r| r.reason), Some(Reason::TooFewFeatures), "{e:#}");
    let text = format!("{e:#}");
    assert!(
        text.contains("minimum d = 200") && text.contains("budget spent: 0 (nothing released)"),
        "{text}"
    );
    let add_remove = Spec {
        neighbouring: Neighbouring::AddRemoveOne,
        ..s
    };
    let e = fit(&rows, n, d, &y, &add_remove, Some(1)).unwrap_err();
    let text = format!("{e:#}");
    assert_eq!(e.refusal().map(|r| r.reason), Some(Reason::TooFewFeatures), "{text}");
    let spent: f64 = text
        .split("budget spent: ε ≤ ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no spend in {text}"));
    assert!(spent > 0.0 && spent < 8.0, "{text}");
}

/// `standardize`: columns in wildly different units (×1000 and ×0.001)
/// are mapped by released means and scales, charged in the ledger, and the
/// classical fit that follows is served (d = 30, n = 3000, ε = 8: the
/// scales within a factor 2 of the truth; the raw rows at row_norm 1.5 are
/// refused for their shrink by the projection).
#[test]
fn standardize_releases_its_map_and_rescales_the_rows() {
    let (n, d) = (3000, 30);
    let (mut rows, y, _) = data(5, n, d, 1.0, Glm::Logistic, NoiseLaw::Gaussian { sd: 0.0 });
    for (k, v) in rows.iter_mut().enumerate() {
        *v *= if k % d < d / 2 { 1000.0 } else { 0.001 };
    }
    let mut s = spec(Glm::Logistic, objective(1.0), 8.0);
    s.row_norm = 1.5;
    s.standardize = true;
    s.algorithm = s
        .algorithm
        .with_lambda(propdp::inference::classical::sufficient_lambda(&s, d).unwrap());
    let raw = Spec {
        standardize: false,
        intercept: false,
        ..s
    };
    assert_eq!(refusal(fit(&rows, n, d, &y, &raw, Some(1))), Reason::RowsProjected);
    let f = fit(&rows, n, d, &y, &s, Some(1)).unwrap();
    let map = f.standardization.as_ref().expect("a released map");
    assert!(f.privacy.epsilon <= 8.0);
    assert!(f.privacy.releases.iter().any(|r| r.contains("standardisation")));
    let sd = 1.0 / (d as f64).sqrt();
    for (j, unit) in [(0, 1000.0), (d - 1, 0.001)] {
        let ratio = map.scale[j] / (unit * sd);
        assert!(
            (0.5..2.0).contains(&ratio),
            "column {j}: scale {} ({ratio} of the truth)",
            map.scale[j]
        );
        assert!(map.mean[j].abs() < unit * sd, "column {j}: mean {}", map.mean[j]);
    }
}

/// With an intercept, logistic labels from 50/50 to 85/15 (s² = 4,
/// b* = 0, 1.01, 2.75: P(y = 1) = 0.50, 0.65, 0.85; δ = 1, ε = 8): the
/// teacher's intercept pinned by the released mean label, the intervals
/// keep their level for objective and output perturbation and DP-SGD,
/// where without one unbalanced labels are refused.
#[test]
#[ignore = "slow: run with --include-ignored"]
fn with_an_intercept_unbalanced_logistic_labels_keep_their_level() {
    let g = NoiseLaw::Gaussian { sd: 0.0 };
    let with = |s: Spec| Spec { intercept: true, ..s };
    let sgd = Spec {
        ..spec(Glm::Logistic, dpsgd(1.0, 30, 0.5), 32.0)
    };
    for (name, s, sets) in [
        ("DP-SGD", sgd, 4),
        ("objective", spec(Glm::Logistic, objective(1.0), 8.0), 8),
        ("output", spec(Glm::Logistic, output(1.0), 8.0), 8),
    ] {
        for b in [0.0, 1.01, 2.75] {
            let c = coverage_with(&with(s), 1.0, 4.0, g, b, sets);
            assert_covers(&format!("logistic {name} with an intercept, b* = {b}"), c, 0.9);
        }
    }
}
