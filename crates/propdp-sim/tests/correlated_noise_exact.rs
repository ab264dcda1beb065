//! Correlated-noise DP-GD on one fixed design, exactly (docs/theory.md
//! §3.7): with M = (1 − ηλ)I − ηXᵀX = V diag(mᵢ) Vᵀ (λᵢ the eigenvalues of
//! XᵀX, rows xᵢ ~ N(0, I/d) as the simulation draws them), K = C⁻¹C⁻ᵀ,
//! vᵢ(s) = mᵢ^{T−1−s} and Sᵢ = Σ_{k<T} mᵢᵏ, full batch, no clipping, θ₀ = 0,
//!
//!   d·E[est_err2] = Σᵢ (Sᵢηλᵢ − 1)² s² + Σᵢ Sᵢ²η²λᵢ sd² + η²σ² Σᵢ vᵢᵀKvᵢ,
//!
//! the expectation over θ* ~ N(0, s²I), the label noise and the privacy
//! noise. The formula is evaluated here from the eigendecomposition (no
//! code under test), and the real algorithm (`propdp_sim::gd::Descent`:
//! noise by the banded recurrence) is simulated on the same X.

use nalgebra::{DMatrix, SymmetricEigen};
use propdp_core::loss::Loss;
use propdp_core::problem::Strategy;
use propdp_core::{Design, GradientSteps, LossVariant, Model, NoiseLaw};
use propdp_sim::data::{draw_design_in, draw_gaussian_vector};
use propdp_sim::gd::{Descent, Partition};
use propdp_sim::rng::stream;
use rayon::prelude::*;

/// jax_privacy's prefix-sum-optimal 4-band coefficients at T = 1024.
const BANDS4: [f64; 4] = [0.5863, 0.5036, 0.4685, 0.4279];

struct Case {
    d: usize,
    n: usize,
    lambda: f64,
    eta: f64,
    sigma: f64,
    steps: usize,
    s2: f64,
    sd: f64,
}

const CASE: Case = Case {
    d: 200,
    n: 400,
    lambda: 0.01,
    eta: 0.3,
    sigma: 1.0,
    steps: 200,
    s2: 1.0,
    sd: 0.5,
};

/// The formula's est_err2 for design `xt` (d × n) and strategy `c` (its
/// coefficients normalised here, independently of `Strategy`).
fn formula(case: &Case, xt: &DMatrix<f64>, c: &[f64]) -> f64 {
    let norm = c.iter().map(|x| x * x).sum::<f64>().sqrt();
    let c: Vec<f64> = c.iter().map(|x| x / norm).collect();
    let gram = xt * xt.transpose();
    let eig = SymmetricEigen::new(gram);
    let (eta, tt) = (case.eta, case.steps);
    let mut total = 0.0;
    for &li in eig.eigenvalues.iter() {
        let m = 1.0 - eta * case.lambda - eta * li;
        let s: f64 = (0..tt).map(|k| m.powi(k as i32)).sum();
        let v: Vec<f64> = (0..tt).map(|s| m.powi((tt - 1 - s) as i32)).collect();
        // vᵀKv = ‖C⁻ᵀv‖²: solve Cᵀu = v backwards, u_s = (v_s − Σ_{k≥1} c_k u_{s+k}) / c₀
        let mut u = vec![0.0; tt];
        for s in (0..tt).rev() {
            let later: f64 = (1..c.len()).filter(|k| s + k < tt).map(|k| c[k] * u[s + k]).sum();
            u[s] = (v[s] - later) / c[0];
        }
        let quad: f64 = u.iter().map(|x| x * x).sum();
        total += (s * eta * li - 1.0).powi(2) * case.s2
            + s * s * eta * eta * li * case.sd * case.sd
            + eta * eta * case.sigma * case.sigma * quad;
    }
    total / case.d as f64
}

/// (mean, standard error) of the simulated est_err2 over `reps` draws of
/// θ*, labels and noise on the fixed design `xt`.
fn simulated(case: &Case, xt: &DMatrix<f64>, c: &[f64], reps: u64) -> (f64, f64) {
    let gradient = GradientSteps {
        lambda: case.lambda,
        sigma: case.sigma,
        eta: case.eta,
        steps: case.steps,
        loss_variant: LossVariant::Standard,
        sample_rate: 1.0,
        clip: f64::INFINITY,
        groups: 1,
        strategy: Strategy::banded(c).expect("valid coefficients"),
    };
    let model = Model::LeastSquares {
        noise: NoiseLaw::Gaussian { sd: case.sd },
    };
    let descent = Descent {
        loss: Loss::for_dpgd(&model, LossVariant::Standard),
        gradient,
    };
    let errs: Vec<f64> = (0..reps)
        .into_par_iter()
        .map(|r| {
            let rng = &mut stream(11, &[1, r]);
            let theta_star = draw_gaussian_vector(case.d, rng) * case.s2.sqrt();
            let y = xt.tr_mul(&theta_star) + draw_gaussian_vector(case.n, rng) * case.sd;
            let theta = descent
                .run(xt, &y, &Partition::single(), rng, |_, _, _| {})
                .expect("converges");
            (theta - &theta_star).norm_squared() / case.d as f64
        })
        .collect();
    let k = errs.len() as f64;
    let mean = errs.iter().sum::<f64>() / k;
    let var = errs.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (mean, (var / k).sqrt())
}

fn design(case: &Case, seed: u64) -> DMatrix<f64> {
    draw_design_in(case.n, case.d, Design::Gaussian, None, &mut stream(seed, &[0]))
}

#[test]
fn banded_noise_on_a_fixed_design_matches_the_exact_expectation() {
    let xt = design(&CASE, 3);
    for c in [&BANDS4[..], &[1.0][..]] {
        let want = formula(&CASE, &xt, c);
        let (mean, se) = simulated(&CASE, &xt, c, 120);
        let z = (mean - want) / se;
        eprintln!(
            "bands {}: formula {want:.4}, simulation {mean:.4} ± {se:.4}, z = {z:.2}",
            c.len()
        );
        assert!(
            z.abs() < 4.0,
            "bands {}: formula {want:.4}, sim {mean:.4} ± {se:.4}",
            c.len()
        );
    }
    // the strategy matters at this size: the two expectations are far apart
    let (banded, plain) = (formula(&CASE, &xt, &BANDS4), formula(&CASE, &xt, &[1.0]));
    assert!(banded > 1.5 * plain, "{banded} vs {plain}");
}

#[test]
fn the_deterministic_equivalent_is_the_fixed_design_average() {
    // the exact least-squares trajectory with a strategy (the d → ∞ limit)
    // against the fixed-design formula averaged over 8 designs: O(1/d) apart
    use propdp_theory::dynamics::least_squares::{LeastSquaresParams, solve_correlated};
    let p = LeastSquaresParams {
        delta: CASE.d as f64 / CASE.n as f64,
        s2: CASE.s2,
        noise_sd: CASE.sd,
        lambda: CASE.lambda,
        sigma: CASE.sigma,
        eta: CASE.eta,
        sample_rate: 1.0,
        steps: CASE.steps,
    };
    for c in [&BANDS4[..], &[1.0][..]] {
        let theory = solve_correlated(&p, None, &Strategy::banded(c).unwrap())
            .unwrap()
            .path
            .mean["est_err2"][CASE.steps];
        let designs: Vec<f64> = (0..8).map(|s| formula(&CASE, &design(&CASE, 100 + s), c)).collect();
        let mean = designs.iter().sum::<f64>() / 8.0;
        eprintln!(
            "bands {}: theory {theory:.4}, designs' mean {mean:.4} {designs:.4?}",
            c.len()
        );
        assert!(
            (theory - mean).abs() < 0.02 * mean,
            "bands {}: {theory} vs {mean}",
            c.len()
        );
    }
}
