//! Sanity limits and reference values of the static solvers (docs/theory.md §2, §5).

use propdp_core::{Algorithm, Model, NoiseLaw, Point, config::SolverOptions};
use propdp_theory::fixed_points::huber::{self, HuberParams};
use propdp_theory::fixed_points::logistic::{LogisticParams, LogisticSolver};
use propdp_theory::solve::{State, TheorySolver};

fn opts() -> SolverOptions {
    SolverOptions::default()
}

fn huber_point(delta: f64, m: f64, sd: f64, lambda: f64, sigma: f64) -> HuberParams {
    HuberParams {
        delta,
        s2: 1.0,
        huber_m: m,
        noise: NoiseLaw::Gaussian { sd },
        lambda,
        sigma,
    }
}

#[test]
fn least_squares_limit() {
    for &delta in &[0.1, 0.3, 0.5, 0.8, 0.95] {
        let p = huber_point(delta, 1e6, 0.7, 1e-10, 0.0);
        let (st, rep) = huber::solve(&p, &opts().fixed_point(), None).unwrap();
        let exact = delta * 0.49 / (1.0 - delta);
        assert!(rep.converged);
        assert!(
            (st.alpha2 - exact).abs() < 1e-6 * exact,
            "δ={delta}: {} vs {exact}",
            st.alpha2
        );
    }
}

/// Ridge error from the Marchenko–Pastur law: XᵀX has the law of x/δ with
/// x ~ MP(δ) (atom 1 − 1/δ at 0 when δ > 1), and objective perturbation is
/// ridge towards −(σ/λ)b, so
/// est_err2 = ∫ (λ²s² + σ² + sd²μ)/(μ + λ)² dF(μ). Independent of CGMT.
fn ridge_mp(delta: f64, s2: f64, sd: f64, lambda: f64, sigma: f64) -> f64 {
    let (a, b) = ((1.0 - delta.sqrt()).powi(2), (1.0 + delta.sqrt()).powi(2));
    let f = |mu: f64| (lambda * lambda * s2 + sigma * sigma + sd * sd * mu) / (mu + lambda).powi(2);
    let dens = |x: f64| ((b - x) * (x - a)).max(0.0).sqrt() / (2.0 * std::f64::consts::PI * delta * x);
    let cont = quadrature::integrate(|x| dens(x) * f(x / delta), a, b, 1e-13).integral;
    let atom = if delta > 1.0 { (1.0 - 1.0 / delta) * f(0.0) } else { 0.0 };
    cont + atom
}

#[test]
fn ridge_limit_matches_marchenko_pastur_including_privacy_noise() {
    for &delta in &[0.3, 0.8, 1.5, 3.0] {
        for &lambda in &[0.1, 1.0] {
            for &sigma in &[0.0, 1.0, 3.0] {
                let p = HuberParams {
                    s2: 2.0,
                    ..huber_point(delta, 1e4, 0.5, lambda, sigma)
                };
                let (st, _) = huber::solve(&p, &opts().fixed_point(), None).unwrap();
                let mp = ridge_mp(delta, 2.0, 0.5, lambda, sigma);
                assert!(
                    (st.alpha2 - mp).abs() < 1e-7 * mp,
                    "δ={delta} λ={lambda} σ={sigma}: {} vs {mp}",
                    st.alpha2
                );
            }
        }
    }
}

#[test]
fn error_grows_with_privacy_noise() {
    let solver = TheorySolver::new(opts());
    let models = [
        Model::Huber {
            huber_m: 1.0,
            noise: NoiseLaw::Laplace { scale: 0.5 },
        },
        Model::Logistic,
    ];
    for model in models {
        for &delta in &[0.2, 1.0, 3.0] {
            let mut last = f64::NEG_INFINITY;
            for &sigma in &[0.0, 0.25, 0.5, 1.0, 2.0, 4.0] {
                let p = Point::new(delta, 1.0, model, Algorithm::Objective { lambda: 0.5, sigma }).unwrap();
                let e = solver.solve(&p, None).unwrap().metrics["est_err2"];
                assert!(e > last, "{model:?} δ={delta} σ={sigma}: {e} ≤ {last}");
                last = e;
            }
        }
    }
}

#[test]
fn huge_ridge_shrinks_estimate_to_zero() {
    let solver = TheorySolver::new(opts());
    for model in [
        Model::Huber {
            huber_m: 1.0,
            noise: NoiseLaw::Gaussian { sd: 0.5 },
        },
        Model::Logistic,
    ] {
        for &s2 in &[0.25, 4.0] {
            let p = Point::new(
                1.0,
                s2,
                model,
                Algorithm::Objective {
                    lambda: 1e7,
                    sigma: 1.0,
                },
            )
            .unwrap();
            let m = solver.solve(&p, None).unwrap().metrics;
            assert!(
                (m["est_err2"] - s2).abs() < 1e-5 * s2,
                "{model:?}: {} vs s² = {s2}",
                m["est_err2"]
            );
            assert!(m["norm2"] < 1e-6);
        }
    }
}

/// Sur & Candès' unregularized MLE, s² = γ² = 5 (docs/theory.md §5.2 reference values).
#[test]
fn sur_candes_unregularized_mle_bias() {
    let solver = LogisticSolver::new(opts().logistic());
    for &(delta, expected) in &[(0.1, 1.168), (0.2, 1.499)] {
        let p = LogisticParams {
            delta,
            s2: 5.0,
            lambda: 0.0,
            sigma: 0.0,
        };
        let (st, rep) = solver.solve(&p, None).unwrap();
        assert!(rep.converged);
        assert!(
            (st.m / 5.0 - expected).abs() < 1e-3,
            "δ={delta}: {} vs {expected}",
            st.m / 5.0
        );
    }
}

/// Cover (1965): pure-noise labels are separable iff δ > 1/2, and the MLE
/// exists exactly below the Candès–Sur threshold.
#[test]
fn mle_threshold_and_no_solution_beyond_it() {
    let solver = LogisticSolver::new(opts().logistic());
    assert!((solver.mle_threshold(1e-12) - 0.5).abs() < 1e-9);
    let h = solver.mle_threshold(5.0);
    assert!(h > 0.2 && h < 0.5);
    let below = LogisticParams {
        delta: 0.97 * h,
        s2: 5.0,
        lambda: 0.0,
        sigma: 0.0,
    };
    let (st, _) = solver.solve(&below, None).unwrap();
    assert!(st.v > 10.0, "response should be large near the threshold: {}", st.v);
    let above = LogisticParams {
        delta: 1.01 * h,
        ..below
    };
    let err = solver.solve(&above, None).unwrap_err().to_string();
    assert!(err.contains("separable") && err.contains("delta"), "{err}");
}

#[test]
fn regions_without_solution_are_typed_errors() {
    let solver = TheorySolver::new(opts());
    // λ = 0, σ > 0 through the solver API (config validation rejects it earlier)
    let e = huber::solve(&huber_point(0.5, 1.0, 0.5, 0.0, 1.0), &opts().fixed_point(), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unbounded"), "{e}");
    let e = LogisticSolver::new(opts().logistic())
        .solve(
            &LogisticParams {
                delta: 0.5,
                s2: 1.0,
                lambda: 0.0,
                sigma: 1.0,
            },
            None,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("unbounded"), "{e}");
    // Huber interpolation: λ = 0, δ ≥ 1
    let p = Point::new(
        1.2,
        1.0,
        Model::Huber {
            huber_m: 1.0,
            noise: NoiseLaw::Gaussian { sd: 0.5 },
        },
        Algorithm::Objective {
            lambda: 0.0,
            sigma: 0.0,
        },
    )
    .unwrap();
    let e = solver.solve(&p, None).unwrap_err().to_string();
    assert!(e.contains("interpolates") && e.contains("1.2"), "{e}");
}

#[test]
fn warm_start_reaches_the_cold_solution() {
    let solver = TheorySolver::new(opts());
    for model in [
        Model::Huber {
            huber_m: 1.0,
            noise: NoiseLaw::StudentT { dof: 3.0, scale: 0.5 },
        },
        Model::Logistic,
    ] {
        let mut warm: Option<State> = None;
        for i in 0..10 {
            let delta = 0.1 * 1.5f64.powi(i);
            let p = Point::new(
                delta,
                1.0,
                model,
                Algorithm::Objective {
                    lambda: 0.1,
                    sigma: 1.0,
                },
            )
            .unwrap();
            let hot = solver.solve(&p, warm).unwrap();
            let cold = solver.solve(&p, None).unwrap();
            let (a, b) = (hot.metrics["est_err2"], cold.metrics["est_err2"]);
            assert!((a - b).abs() < 1e-8 * b, "{model:?} δ={delta}: warm {a} cold {b}");
            warm = Some(hot.state);
        }
    }
}

/// Cold-start convergence over the default grids (δ ∈ [0.05, 5], σ ∈ [0, 5],
/// λ ∈ [0.01, 10], s² ∈ [0.25, 9]); the full 12×4×4×4 grid per model is in
/// `examples/grid.rs`.
#[test]
fn solvers_converge_across_the_default_grid() {
    let solver = TheorySolver::new(opts());
    let models = [
        Model::Huber {
            huber_m: 1.0,
            noise: NoiseLaw::Gaussian { sd: 0.5 },
        },
        Model::Huber {
            huber_m: 0.5,
            noise: NoiseLaw::Contaminated {
                sd: 0.3,
                p: 0.1,
                outlier_sd: 5.0,
            },
        },
        Model::Logistic,
    ];
    let deltas = [0.05, 0.2, 0.7, 1.0, 2.0, 5.0];
    for model in models {
        for &s2 in &[0.25, 9.0] {
            for &lambda in &[0.01, 0.3, 10.0] {
                for &sigma in &[0.0, 1.0, 5.0] {
                    for &delta in &deltas {
                        let p = Point::new(delta, s2, model, Algorithm::Objective { lambda, sigma }).unwrap();
                        let s = solver.solve(&p, None).unwrap_or_else(|e| panic!("{e}"));
                        assert!(
                            s.report.converged && s.report.residual <= 1e-10,
                            "{p:?}: {:?}",
                            s.report
                        );
                        assert!(s.metrics.values().all(|v| v.is_finite()), "{p:?}: {:?}", s.metrics);
                    }
                }
            }
        }
    }
}

/// The theory predicts exactly the metrics `metrics::offered` names (which
/// configs and tune check their keys against) for every model and algorithm.
#[test]
fn predicted_metrics_are_the_offered_ones() {
    use propdp_core::metrics::offered;
    use propdp_core::{AlgorithmKind, LossVariant};
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let solver = propdp_theory::solve::TheorySolver::default();
    for model in [huber, Model::Logistic] {
        for kind in AlgorithmKind::ALL {
            let algorithm = match kind {
                AlgorithmKind::Objective => Algorithm::Objective {
                    lambda: 1.0,
                    sigma: 0.5,
                },
                AlgorithmKind::Output => Algorithm::Output { lambda: 1.0, tau: 0.5 },
                AlgorithmKind::Dpgd => Algorithm::Dpgd {
                    lambda: 1.0,
                    sigma: 0.5,
                    eta: 0.1,
                    steps: 2,
                    loss_variant: LossVariant::Standard,
                },
                AlgorithmKind::Dpsgd => Algorithm::Dpsgd {
                    lambda: 1.0,
                    sigma: 0.5,
                    eta: 0.1,
                    steps: 2,
                    loss_variant: LossVariant::Standard,
                    sample_rate: 0.5,
                    clip: Some(0.5),
                    groups: 1,
                    strategy: propdp_core::problem::Strategy::IDENTITY,
                },
            };
            let p = Point::new(0.5, 1.0, model, algorithm).unwrap();
            let metrics = solver.solve(&p, None).unwrap().metrics;
            let got: Vec<&str> = metrics.keys().map(|k| k.as_str()).collect();
            assert_eq!(got, offered(model.kind(), kind), "{model:?} {kind}");
        }
    }
}
