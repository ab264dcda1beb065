//! DMFT of DP-GD: the T = 1 closed form of docs/theory.md §3 and the long-time limit
//! (σ = 0: gradient descent converges to the static ridge solution).

use propdp_core::config::SolverOptions;
use propdp_core::loss::{Loss, sigmoid};
use propdp_core::{Algorithm, LossVariant, Model, NoiseLaw, Point};
use propdp_theory::dmft::{DmftParams, solve};
use propdp_theory::gauss_hermite::NormalRule;
use propdp_theory::solve::TheorySolver;

/// (E[g₀ | ν], E[g₀² | ν]) over the label given the teacher field.
type GivenNu = dyn Fn(f64) -> (f64, f64);

fn params(loss: Loss, delta: f64, s2: f64, lambda: f64, sigma: f64, eta: f64, steps: usize) -> DmftParams {
    DmftParams {
        delta,
        sample_rate: 1.0,
        clip: f64::INFINITY,
        s2,
        lambda,
        sigma,
        eta,
        steps,
        loss,
        noise_sd: 0.5,
        points: 1 << 14,
        scrambles: 4,
        seed: 3,
    }
}

/// m₁ = −ηa E[ν g₀], C_θ(1,1) = η²(a E[g₀²] + (a E[ν g₀])²/s² + σ²) with
/// g₀ = ℓ'(0; label), expectations by 200-node Gauss–Hermite over ν.
#[test]
fn one_step_matches_the_closed_form() {
    let rule = NormalRule::new(200);
    let (delta, s2, lambda, sigma, eta): (f64, f64, f64, f64, f64) = (0.8, 1.5, 0.3, 1.2, 0.4);
    let a = 1.0 / delta;
    let s = s2.sqrt();
    // E over the label given ν of (g₀, g₀²), per loss
    let cases: [(Loss, &GivenNu); 3] = [
        (Loss::ConditionalLogistic, &|nu: f64| {
            let g = 0.5 - sigmoid(nu);
            (g, g * g)
        }),
        // y = ±1 with P(+1) = sigmoid(ν): g₀ = −y/2
        (Loss::Logistic, &|nu: f64| (-(2.0 * sigmoid(nu) - 1.0) / 2.0, 0.25)),
        (Loss::ConditionalHuber { m: 1.0, se: 0.5 }, &|nu: f64| {
            let g = Loss::ConditionalHuber { m: 1.0, se: 0.5 }.eval(nu, 0.0).1;
            (g, g * g)
        }),
    ];
    for (loss, g0) in cases {
        let e_nu_g = rule.expect(|z| s * z * g0(s * z).0);
        let e_g2 = rule.expect(|z| g0(s * z).1);
        let m1 = -eta * a * e_nu_g;
        let c11 = eta * eta * (a * e_g2 + (a * e_nu_g).powi(2) / s2 + sigma * sigma);
        let path = solve(&params(loss, delta, s2, lambda, sigma, eta, 1)).unwrap();
        let (m, q) = (path.mean["overlap"][1], path.mean["norm2"][1]);
        let (sm, sq) = (path.stderr["overlap"][1], path.stderr["norm2"][1]);
        assert!((m - m1).abs() <= 5.0 * sm + 1e-5, "{loss:?}: m₁ {m} ± {sm} vs {m1}");
        assert!(
            (q - c11).abs() <= 5.0 * sq + 1e-5 * c11,
            "{loss:?}: C(1,1) {q} ± {sq} vs {c11}"
        );
    }
}

/// σ = 0, T large: DP-GD converges to the ridge minimiser, so the DMFT's
/// last step must match the static fixed-point solution.
#[test]
fn long_time_limit_is_the_static_ridge_solution() {
    let solver = TheorySolver::new(SolverOptions::default());
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    for (model, eta) in [(Model::Logistic, 0.5), (huber, 0.25)] {
        let lambda = 1.0;
        let gd = Point::new(
            0.5,
            1.0,
            model,
            Algorithm::Dpgd {
                lambda,
                sigma: 0.0,
                eta,
                steps: 80,
                loss_variant: LossVariant::Standard,
            },
        )
        .unwrap();
        let stat = Point::new(0.5, 1.0, model, Algorithm::Objective { lambda, sigma: 0.0 }).unwrap();
        let dyn_ = solver.solve(&gd, None).unwrap();
        let path = dyn_.per_step.as_ref().unwrap();
        let fixed = solver.solve(&stat, None).unwrap().metrics;
        for name in ["est_err2", "overlap", "norm2"] {
            let (d, se, f) = (dyn_.metrics[name], *path.stderr[name].last().unwrap(), fixed[name]);
            assert!(
                (d - f).abs() <= 5.0 * se + 2e-4 * f.abs(),
                "{model:?} {name}: DMFT {d} ± {se} vs static {f}"
            );
        }
    }
}
