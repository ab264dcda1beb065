//! DMFT of DP-GD: the T = 1 closed form of docs/theory.md §3 and the long-time limit
//! (σ = 0: gradient descent converges to the static ridge solution); of DP-GD and
//! DP-SGD: the limits s² → ∞ and s² → 0 of the overlap's drift (§3.1).

use propdp_core::config::SolverOptions;
use propdp_core::loss::{Loss, sigmoid};
use propdp_core::{Algorithm, LossVariant, Model, NoiseLaw, Point};
use propdp_theory::dynamics::DmftParams;
use propdp_theory::dynamics::full_memory::solve;
use propdp_theory::numerics::gauss_hermite::NormalRule;
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
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
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
#[ignore = "slow: run with --include-ignored"]
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

/// The solves of the limit tests: DP-SGD at q = 0.2 clipped at C = 0.5, full-batch
/// DP-GD unclipped (losses with a bounded gradient: the overlap grows like s).
fn bounded_gradient_cases(s2: f64) -> Vec<DmftParams> {
    let (dpsgd, dpgd) = ((0.2, 0.5), (1.0, f64::INFINITY));
    [
        (Loss::Squared, dpsgd),
        (Loss::Huber { m: 1.0 }, dpsgd),
        (Loss::Huber { m: 1.0 }, dpgd),
        (Loss::Logistic, dpsgd),
        (Loss::Logistic, dpgd),
        (Loss::ConditionalLogistic, dpgd),
        (Loss::ConditionalHuber { m: 1.0, se: 0.5 }, dpgd),
    ]
    .into_iter()
    .map(|(loss, (sample_rate, clip))| DmftParams {
        sample_rate,
        clip,
        ..params(loss, 0.5, s2, 0.1, 0.5, 0.3, 8)
    })
    .collect()
}

/// `metric`/`scale` at every step t ≥ 1 of two solves: equal within 4 combined
/// standard errors and `approach`, the relative distance to the limit of the
/// nearer scale, each resolved to better than 1% (an overlap 0 ± 0 fails).
fn same_limit(a: &DmftParams, b: &DmftParams, metric: &str, scale: impl Fn(f64) -> f64, approach: f64) {
    let (pa, pb) = (solve(a).unwrap(), solve(b).unwrap());
    for t in 1..=a.steps {
        let (x, sx) = (pa.mean[metric][t] / scale(a.s2), pa.stderr[metric][t] / scale(a.s2));
        let (y, sy) = (pb.mean[metric][t] / scale(b.s2), pb.stderr[metric][t] / scale(b.s2));
        assert!(
            (x - y).abs() <= 4.0 * (sx * sx + sy * sy).sqrt() + approach * y.abs()
                && sx.max(sy) < 0.01 * x.abs().min(y.abs()),
            "{:?} {metric} t={t}: {x} ± {sx} at s² = {:e}, {y} ± {sy} at s² = {:e}",
            a.loss,
            a.s2,
            b.s2
        );
    }
}

/// s² → ∞ with a bounded (or clipped) gradient: ĝ_t tends to a function of
/// sign(ν), so overlap/s and norm2 have limits, approached like 1/s (norm2 of
/// the Huber DP-GD case: −7.7/s, 1.3e-6 of it at s² = 1e12); s² = 1e12 and
/// 1e16 share them. The pathwise and score estimates of M_g saw ν only on
/// windows of width ~1/s (overlap 0 ± 0 from s² = 1e9 on, clipped least squares).
#[test]
#[ignore = "slow: run with --include-ignored"]
fn large_prior_scale_has_a_limit() {
    for (a, b) in bounded_gradient_cases(1e12).iter().zip(&bounded_gradient_cases(1e16)) {
        same_limit(a, b, "overlap", f64::sqrt, 1e-5);
        same_limit(a, b, "norm2", |_| 1.0, 1e-5);
    }
}

/// s² → 0: overlap/s² has a limit (the linear response to ν), approached like
/// s² (2.5e-10 of it at s² = 1e-9, conditional logistic). Below
/// s² = 1e-10·(1 + sd²) the drift is pathwise (the Stein quotient would lose
/// s·z₀ in the rounding of the paths: overlap 0 ± 0 at s² = 1e-40); it must
/// meet the Stein drift's value at s² = 1e-9. There the Stein quotient weights
/// the paths by z₀² (ĝ_t − ĝ⁰_t ≈ s·z₀·∂_νĝ_t), whose RQMC error is skewed by the
/// outermost strata of z₀ (E_N[z₀²] − 1 is −3e-6 to −1.9e-4 in 13 of 16
/// scrambles of 2^14 points, +1.8e-4 to +3.8e-4 in the other 3): 32 scrambles
/// (of 2^12 points), for a spread that sees it.
#[test]
#[ignore = "slow: run with --include-ignored"]
fn small_prior_scale_has_a_limit() {
    let cases = |s2| {
        bounded_gradient_cases(s2).into_iter().map(|p| DmftParams {
            points: 1 << 12,
            scrambles: 32,
            ..p
        })
    };
    for (a, b) in cases(1e-9).zip(cases(1e-40)) {
        same_limit(&a, &b, "overlap", |s2| s2, 1e-8);
    }
}
