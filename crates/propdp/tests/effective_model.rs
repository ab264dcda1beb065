//! `propdp spectrum --model` (issue #60 item 1): the effective s² of
//! simulated data with a known answer is recovered within its stated
//! uncertainty, the checks flag data of another model, separable data and
//! labels that are not two classes are refused naming `label`, regression
//! labels are reported in units of sd(y), and `[problem]` takes s2 (and the
//! noise) from the file.

use nalgebra::{DMatrix, DVector};
use propdp::core::Config;
use propdp::data_spectrum::{DataSpectrum, ModelChoice, effective};
use propdp::effective_model::{DataModel, DataModelChoice};
use propdp::sim::data::draw_gaussian_vector;
use propdp::sim::rng::stream;
use rand::RngExt;

/// n rows of 40 Gaussian columns: the first 20 share a factor (xⱼ = gⱼ +
/// 0.8f, correlation 0.39 among them), the last 20 are independent; the
/// standardised spectrum has one eigenvalue ≈ 8.4, 19 ≈ 0.61 and 20 ≈ 1.
/// Returns the rows, the standardised field z·β of coefficients `beta` in
/// the population standardisation, and its population variance βᵀRβ.
fn factor_rows(n: usize, beta: &DVector<f64>, seed: u64) -> (DMatrix<f64>, DVector<f64>, f64) {
    let rng = &mut stream(seed, &[n as u64, 1]);
    let z = draw_gaussian_vector(n * 41, rng);
    let sd = |j: usize| if j < 20 { 1.64f64.sqrt() } else { 1.0 };
    let x = DMatrix::from_fn(n, 40, |i, j| {
        z[i * 41 + j] + if j < 20 { 0.8 * z[i * 41 + 40] } else { 0.0 }
    });
    let field = DVector::from_fn(n, |i, _| (0..40).map(|j| beta[j] * x[(i, j)] / sd(j)).sum());
    // R: unit diagonal, 0.64/1.64 between two of the first 20 columns
    let mut rho = 0.0;
    for a in 0..40 {
        for b in 0..40 {
            let r = if a == b {
                1.0
            } else if a < 20 && b < 20 {
                0.64 / 1.64
            } else {
                0.0
            };
            rho += beta[a] * r * beta[b];
        }
    }
    (x, field, rho)
}

/// The logistic model with a teacher's link (not two clusters).
const TEACHER: ModelChoice = ModelChoice::Logistic {
    data: DataModelChoice::Teacher,
};

fn names(p: usize) -> Vec<String> {
    (0..p).map(|j| format!("x{j}")).collect()
}

/// Labels 1 with probability sigmoid(t), else 0.
fn bernoulli(t: &DVector<f64>, seed: u64) -> DVector<f64> {
    let rng = &mut stream(seed, &[2]);
    t.map(|t| {
        if rng.random::<f64>() < 1.0 / (1.0 + (-t).exp()) {
            1.0
        } else {
            0.0
        }
    })
}

/// Known signal: n = 4000, d = 40 rows with a factor spectrum, labels
/// Bernoulli(sigmoid(t)), t of variance ρ = 4. The matched ρ (what s² is
/// for: ρ = s²·Σwωe) lies within three of its stated standard errors of
/// the truth; the checks pass; the file's effective line and summary say so.
#[test]
fn the_signal_strength_of_logistic_data_is_recovered_within_its_uncertainty() {
    let beta = draw_gaussian_vector(40, &mut stream(11, &[0]));
    let (x, t0, rho0) = factor_rows(4000, &beta, 11);
    // scale β so that ρ = 4
    let c = (4.0 / rho0).sqrt();
    let (t, rho_true) = (t0 * c, 4.0);
    let y = bernoulli(&t, 11);
    let s = effective(&x, &names(40), &y, TEACHER).unwrap();
    let e = s.effective.as_ref().unwrap();
    let (lo, hi) = e.s2_interval;
    let field = e.rho / e.s2;
    let half = (hi - lo) / 2.0 * field;
    assert!(
        half > 0.0 && half < 0.25 * rho_true,
        "interval of ρ {} to {}",
        lo * field,
        hi * field
    );
    assert!(
        (e.rho - rho_true).abs() <= 3.0 * half,
        "ρ = {} (one s.e. {half}) against the true {rho_true}",
        e.rho
    );
    assert!(e.describes(), "{:#?}", s.summary());
    let classes = s.classes.unwrap();
    assert_eq!((classes.negative, classes.positive), (0.0, 1.0));
    let text = s.to_csv("test rows");
    assert!(text.contains("\n# the model describes these data"), "{text}");
    assert!(
        text.contains(&format!("\n# effective model: model = logistic, s2 = {:e}\n", e.s2)),
        "{text}"
    );
}

/// A well-separated two-Gaussian mixture (x = y·μ + g, ‖μ‖² = 4): its
/// least-squares probe explains R² = ‖μ‖²/(1 + ‖μ‖²) = 0.8 of the labels,
/// more than any logistic model can (μ(ρ)²ρ < 2/π): flagged.
#[test]
fn a_gaussian_mixture_is_flagged_as_another_model() {
    let rng = &mut stream(12, &[0]);
    let mu = draw_gaussian_vector(40, rng);
    let mu = &mu * (2.0 / mu.norm());
    let g = draw_gaussian_vector(4000 * 40, rng);
    let y = DVector::from_fn(4000, |_, _| if rng.random::<bool>() { 1.0 } else { -1.0 });
    let x = DMatrix::from_fn(4000, 40, |i, j| y[i] * mu[j] + g[i * 40 + j]);
    let s = effective(&x, &names(40), &y, TEACHER).unwrap();
    let e = s.effective.as_ref().unwrap();
    assert!(!e.describes());
    let probe = &e.checks[0];
    assert!(probe.name.starts_with("linear probe"));
    assert!((probe.observed - 0.8).abs() < 0.05, "R² = {}", probe.observed);
    assert!(
        probe.predicted < 2.0 / std::f64::consts::PI && probe.z() > 3.0,
        "{probe:?}"
    );
    assert!(
        s.to_csv("mixture")
            .contains("\n# the model does not describe these data: linear probe"),
        "{:#?}",
        s.summary()
    );
}

/// Labels that are the sign of a column (separable) are refused; so are
/// three classes, naming `label` and the values found.
#[test]
fn separable_data_and_three_classes_are_refused_naming_label() {
    let beta = draw_gaussian_vector(40, &mut stream(13, &[0]));
    let (x, t, _) = factor_rows(1000, &beta, 13);
    let y = t.map(|t| if t > 0.0 { 1.0 } else { 0.0 });
    let e = effective(&x, &names(40), &y, TEACHER).unwrap_err();
    assert_eq!(e.field(), Some("label"), "{e:#}");
    assert!(format!("{e:#}").contains("separable"), "{e:#}");
    let y3 = t.map(|t| t.signum() + if t.abs() < 0.5 { 5.0 } else { 0.0 });
    let e = effective(&x, &names(40), &y3, TEACHER).unwrap_err();
    assert_eq!(e.field(), Some("label"));
    assert!(format!("{e:#}").contains("two distinct label values; found"), "{e:#}");
}

/// Regression with a known answer: y = 5·(t + σε), t of variance ρ = 2,
/// σ = 1: in units of sd(y) (√3 in the population) s² carries ρ/3 and the
/// noise sd is 1/√3; the held-out MSE of the ridge fit matches the
/// theory's (least squares and Huber).
#[test]
fn regression_s2_and_noise_are_in_units_of_the_labels_sd() {
    let beta = draw_gaussian_vector(40, &mut stream(14, &[0]));
    let (x, t0, rho0) = factor_rows(4000, &beta, 14);
    let t = t0 * (2.0 / rho0).sqrt();
    let y = 5.0 * (t + draw_gaussian_vector(4000, &mut stream(14, &[3])));
    for model in [ModelChoice::LeastSquares, ModelChoice::Huber { m: 1.0 }] {
        let s: DataSpectrum = effective(&x, &names(40), &y, model).unwrap();
        let e = s.effective.as_ref().unwrap();
        let fit = s.labels.unwrap();
        assert!(
            (fit.label_sd / (5.0 * 3f64.sqrt()) - 1.0).abs() < 0.05,
            "sd(y) = {}",
            fit.label_sd
        );
        assert!(
            (e.noise_sd.unwrap() * 3f64.sqrt() - 1.0).abs() < 0.05,
            "noise sd {}",
            e.noise_sd.unwrap()
        );
        assert!((e.rho / (2.0 / 3.0) - 1.0).abs() < 0.1, "ρ = {}", e.rho);
        assert!(e.describes(), "{model:?}: {:#?}", s.summary());
        assert!(s.to_csv("r").contains(&format!(
            "\n# effective model: model = {}, s2 = {:e}, noise_sd = {:e}\n",
            e.model.name(),
            e.s2,
            e.noise_sd.unwrap()
        )));
    }
}

/// `[problem] covariance = { file = … }` takes s2 (and for Huber the
/// noise) from the effective model; values in the config win; another
/// model is refused naming `problem.model`; a file without the line still
/// needs s2.
#[test]
fn the_config_takes_s2_and_noise_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let beta = draw_gaussian_vector(40, &mut stream(15, &[0]));
    let (x, t, rho0) = factor_rows(2000, &beta, 15);
    let y = bernoulli(&(&t * (3.0 / rho0).sqrt()), 15);
    let s = effective(&x, &names(40), &y, TEACHER).unwrap();
    std::fs::write(dir.path().join("eff.csv"), s.to_csv("rows")).unwrap();
    let s2 = s.effective.as_ref().unwrap().s2;
    let cfg = |problem: &str| {
        format!(
            "[problem]\n{problem}delta = 0.5\ncovariance = {{ file = \"eff.csv\" }}\n[algorithm]\nkind = \
             \"objective\"\nlambda = 1.0\nsigma = 0.5\n"
        )
    };
    let c = Config::from_toml_str_in(&cfg("model = \"logistic\"\n"), Some(dir.path())).unwrap();
    assert_eq!(c.sweep.points()[0].s2(), s2);
    assert!(c.text.contains("# the effective model of eff.csv"), "{}", c.text);
    // the recorded text needs no file
    assert_eq!(Config::from_recorded(&c.text).unwrap().sweep.points()[0].s2(), s2);
    let c = Config::from_toml_str_in(&cfg("model = \"logistic\"\ns2 = 2.5\n"), Some(dir.path())).unwrap();
    assert_eq!(c.sweep.points()[0].s2(), 2.5);
    let e = Config::from_toml_str_in(
        &cfg("model = \"huber\"\nhuber_m = 1.0\nnoise = { law = \"gaussian\", sd = 0.5 }\n"),
        Some(dir.path()),
    )
    .unwrap_err();
    assert_eq!(e.field(), Some("problem.model"), "{e}");
    // a regression file gives the noise too
    let yr = draw_gaussian_vector(2000, &mut stream(15, &[4])) + t;
    let r = effective(&x, &names(40), &yr, ModelChoice::Huber { m: 1.0 }).unwrap();
    std::fs::write(dir.path().join("eff.csv"), r.to_csv("rows")).unwrap();
    let c = Config::from_toml_str_in(&cfg("model = \"huber\"\nhuber_m = 1.0\n"), Some(dir.path())).unwrap();
    let e = r.effective.as_ref().unwrap();
    let p = &c.sweep.points()[0];
    assert_eq!(p.s2(), e.s2);
    assert_eq!(
        p.model(),
        propdp::core::Model::Huber {
            huber_m: 1.0,
            noise: propdp::core::NoiseLaw::Gaussian {
                sd: e.noise_sd.unwrap()
            }
        }
    );
    // without the line: s2 is required as before
    let plain = propdp::data_spectrum::spectrum(&x, &names(40), None, false).unwrap();
    std::fs::write(dir.path().join("eff.csv"), plain.to_csv("rows")).unwrap();
    let e = Config::from_toml_str_in(&cfg("model = \"logistic\"\n"), Some(dir.path())).unwrap_err();
    assert_eq!(e.field(), Some("problem.s2"), "{e}");
}

/// Two clusters with a known answer (docs/theory.md §3.6): n = 4000 rows
/// x = (y − (2p − 1))μ + g of 40 columns, p = 0.7, g with the factor
/// covariance of [`factor_rows`], the separation ρ_w = μᵀΣ_g⁻¹μ = 3 (a
/// Mahalanobis norm: standardising the columns and scaling the rows leave
/// it unchanged). The matched ρ_w lies within three of its stated standard
/// errors of the truth, the balance is the rows' own, the checks pass and
/// `auto` chooses the clusters (the teacher model has no place for a 70/30
/// balance); the file carries the data model for `[problem]`.
#[test]
fn the_separation_of_two_clusters_is_recovered_within_its_uncertainty() {
    let (n, p) = (4000, 0.7);
    let rng = &mut stream(16, &[0]);
    let cov = DMatrix::from_fn(40, 40, |a, b| {
        f64::from(u8::from(a == b)) + if a < 20 && b < 20 { 0.64 } else { 0.0 }
    });
    let dir = draw_gaussian_vector(40, rng);
    let mahalanobis = dir.dot(&cov.clone().cholesky().unwrap().solve(&dir));
    let mu = &dir * (3.0 / mahalanobis).sqrt();
    let y = DVector::from_fn(n, |_, _| if rng.random::<f64>() < p { 1.0 } else { -1.0 });
    let (x0, _, _) = factor_rows(n, &DVector::zeros(40), 16);
    let shift = 2.0 * p - 1.0;
    let x = DMatrix::from_fn(n, 40, |i, j| x0[(i, j)] + (y[i] - shift) * mu[j]);
    let s = effective(
        &x,
        &names(40),
        &y,
        ModelChoice::Logistic {
            data: DataModelChoice::Auto,
        },
    )
    .unwrap();
    let e = s.effective.as_ref().unwrap();
    let DataModel::TwoCluster { balance, within, .. } = e.data else {
        panic!("auto chose the teacher: {:#?}", s.summary());
    };
    let (lo, hi) = e.s2_interval;
    let half = (hi - lo) / 2.0 * e.rho / e.s2;
    assert!(half > 0.0 && half < 0.25 * 3.0, "interval of ρ_w {lo} to {hi} (s²)");
    assert!(
        (e.rho - 3.0).abs() <= 3.0 * half,
        "ρ_w = {} (one s.e. {half}) against the true 3",
        e.rho
    );
    let observed = y.iter().filter(|v| **v > 0.0).count() as f64 / n as f64;
    assert_eq!(balance, observed);
    assert!(within > 0.0 && within < 1.0, "within = {within}");
    assert!(e.describes(), "{:#?}", s.summary());
    let text = s.to_csv("clusters");
    assert!(
        text.contains(&format!(
            "\n# effective model: model = logistic, s2 = {:e}, data_model = two_cluster, balance = {balance:e}, \
             within = {within:e}\n",
            e.s2
        )),
        "{text}"
    );
    // the teacher model on the same rows: the class balance fails
    let t = effective(&x, &names(40), &y, TEACHER).unwrap();
    assert!(!t.effective.unwrap().describes());
}
