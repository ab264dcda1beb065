//! A Gaussian design's exact test metrics ([`TestSet::Population`],
//! docs/theory.md §1) against the held-out estimate they replace: the same
//! fitted θ̂ evaluated both ways over many repetitions, with and without a
//! feature covariance. The difference (held-out − exact) has mean zero:
//! its mean must lie within 4 standard errors of 0 for every test metric.

use nalgebra::DVector;
use propdp_core::covariance::{Covariance, TeacherShape};
use propdp_core::loss::Loss;
use propdp_core::{Model, NoiseLaw};
use propdp_sim::data::{self, Coordinates, Dataset};
use propdp_sim::evaluate::{self, TestSet};
use propdp_sim::objective::Objective;
use propdp_sim::rng::stream;
use propdp_sim::{Design, Prior};

const D: usize = 120;
const N: usize = 240;
const REPS: u64 = 60;

/// Per test metric: mean and standard error of (held-out − exact) over the repetitions.
fn differences(model: &Model, cov: Option<&Covariance>, seed: u64) -> Vec<(String, f64, f64)> {
    let noise_variance = match model {
        Model::Huber { noise, .. } | Model::LeastSquares { noise } => noise.variance(),
        Model::Logistic => None,
    };
    let mut diffs: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for rep in 0..REPS {
        let mut rng = stream(seed, &[rep]);
        let coords = cov.map(|c| Coordinates::draw(c, D, &mut rng));
        let train = data::draw_dataset_in(
            model,
            N,
            D,
            1.0,
            Design::Gaussian,
            Prior::Gaussian,
            coords.as_ref(),
            &mut rng,
        );
        let b = data::draw_gaussian_vector(D, &mut rng);
        let fit = Objective {
            xt: &train.xt,
            y: &train.y,
            loss: Loss::of(model),
            lambda: 0.5,
            sigma: 1.0,
            b: &b,
        };
        let (theta, _) = fit.minimize(1e-9, 100).expect("the fit converges");
        // a large held-out sample: 20n rows
        let xt = data::draw_design_in(20 * N, D, Design::Gaussian, coords.as_ref(), &mut rng);
        let y = data::draw_labels(model, &xt.tr_mul(&train.theta_star), &mut rng);
        let test = Dataset {
            xt,
            y,
            theta_star: train.theta_star.clone(),
        };
        let held = evaluate::metrics(model, &train, TestSet::Rows(&test), &theta, &b, coords.as_ref());
        let exact = evaluate::metrics(
            model,
            &train,
            TestSet::Population { noise_variance },
            &theta,
            &b,
            coords.as_ref(),
        );
        for name in ["test_mse", "test_class_err", "test_logloss"] {
            if let (Some(h), Some(e)) = (held.get(name), exact.get(name)) {
                diffs.entry(name.into()).or_default().push(h - e);
            }
        }
    }
    diffs
        .into_iter()
        .map(|(name, v)| {
            let (mean, se) = propdp_core::metrics::mean_stderr(&v);
            (name, mean, se)
        })
        .collect()
}

fn check(model: Model, cov: Option<&Covariance>, seed: u64, metrics: usize) {
    let found = differences(&model, cov, seed);
    assert_eq!(found.len(), metrics, "{found:?}");
    for (name, mean, se) in found {
        eprintln!(
            "{model:?} cov={}: {name}: held-out − exact = {mean:.2e} ± {se:.2e}",
            cov.is_some()
        );
        assert!(se > 0.0 && mean.abs() <= 4.0 * se, "{name}: {mean} ± {se}");
    }
}

#[test]
fn logistic_test_error_and_loss_are_the_held_out_estimates_mean() {
    check(Model::Logistic, None, 1, 2);
    let cov = Covariance::power_law(1.0, 30.0, 6, TeacherShape::Aligned)
        .unwrap()
        .unwrap();
    check(Model::Logistic, Some(&cov), 2, 2);
}

#[test]
fn huber_test_mse_is_the_held_out_estimates_mean() {
    let noise = NoiseLaw::Contaminated {
        sd: 0.5,
        p: 0.1,
        outlier_sd: 3.0,
    };
    check(Model::Huber { huber_m: 1.0, noise }, None, 3, 1);
    let cov = Covariance::power_law(1.0, 30.0, 6, TeacherShape::Spread)
        .unwrap()
        .unwrap();
    check(Model::Huber { huber_m: 1.0, noise }, Some(&cov), 4, 1);
}

/// At θ̂ = θ* the only test error left is the label noise: test_mse = Var ε.
#[test]
fn the_teachers_exact_test_mse_is_the_noise_variance() {
    let star = DVector::from_fn(D, |j, _| if j % 2 == 0 { 1.0 } else { -1.0 });
    let train = Dataset {
        xt: nalgebra::DMatrix::zeros(D, 1),
        y: DVector::zeros(1),
        theta_star: star.clone(),
    };
    let model = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let m = evaluate::metrics(
        &model,
        &train,
        TestSet::Population {
            noise_variance: Some(0.25),
        },
        &star,
        &DVector::zeros(D),
        None,
    );
    assert!((m["test_mse"] - 0.25).abs() < 1e-12, "{}", m["test_mse"]);
}
