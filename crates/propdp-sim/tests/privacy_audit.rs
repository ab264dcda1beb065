//! Empirical privacy audit of output perturbation (issue 6).
//!
//! Method: fit the non-private ridge-logistic estimator θ̂₀ on a dataset D and
//! on a replace-one neighbour D' (row 0's label flipped; rows are Rademacher so
//! ‖xᵢ‖ = 1 = R exactly). The mechanism releases θ̂₀ + τb with τ calibrated by
//! the accountant to (ε, δ) = (1, 1e-5). From M releases under each dataset,
//! the statistic S = uᵀθ̃/‖u‖ with u = θ̂₀(D') − θ̂₀(D) gives, for each threshold
//! t, FPR = P_D(S > t) and TPR = P_D'(S > t); any (ε, δ)-DP mechanism obeys
//! TPR ≤ e^ε FPR + δ, so ε_lb = max_t ln((TPR − c − δ)/(FPR + c)) is a lower
//! bound on the true ε with probability ≥ 1 − α, where c is a Hoeffding margin
//! over the whole threshold grid. The audit passes when ε_lb ≤ ε.

use nalgebra::DVector;
use propdp_core::accountant::{Mechanism, MechanismKind, Neighbouring};
use propdp_core::loss::Loss;
use propdp_core::{Design, Model, Prior};
use propdp_sim::data::{draw_dataset, draw_gaussian_vector};
use propdp_sim::newton::Objective;
use propdp_sim::rng::stream;

#[test]
fn output_perturbation_audit_stays_below_the_accountant() {
    let (n, d, lambda) = (8, 20, 1.0);
    let (eps, delta) = (1.0, 1e-5);
    let mut rng = stream(99, &[0]);
    let data = draw_dataset(
        &Model::Logistic,
        n,
        d,
        1.0,
        Design::Rademacher,
        Prior::Gaussian,
        &mut rng,
    );
    let mut y2 = data.y.clone();
    y2[0] = -y2[0];
    let zero = DVector::zeros(d);
    let fit = |y: &DVector<f64>| {
        Objective {
            x: &data.x,
            y,
            loss: Loss::Logistic,
            lambda,
            sigma: 0.0,
            b: &zero,
        }
        .minimize(1e-12, 100)
        .unwrap()
        .0
    };
    let (t0, t1) = (fit(&data.y), fit(&y2));
    let u = &t1 - &t0;
    let shift = u.norm();
    let mech = Mechanism::new(
        &Model::Logistic,
        MechanismKind::Output { lambda },
        Neighbouring::ReplaceOne,
    );
    let tau = mech.calibrate(eps, delta).unwrap();
    assert!(shift <= 2.0 / lambda, "sensitivity bound 2LR/λ violated: ‖u‖ = {shift}");
    // M releases under each dataset; S = uᵀ(θ̂₀ + τb)/‖u‖ − uᵀθ̂₀(D)/‖u‖
    let m: usize = 400_000;
    let dir = &u / shift;
    let release = |base: &DVector<f64>, rep: u64| {
        let b = draw_gaussian_vector(d, &mut stream(7, &[rep]));
        dir.dot(&(base + tau * b)) - dir.dot(&t0)
    };
    let mut s0: Vec<f64> = (0..m as u64).map(|r| release(&t0, r)).collect();
    let mut s1: Vec<f64> = (0..m as u64).map(|r| release(&t1, r + m as u64)).collect();
    s0.sort_by(f64::total_cmp);
    s1.sort_by(f64::total_cmp);
    let thresholds: Vec<f64> = (1..200).map(|i| s0[i * m / 200]).collect();
    let alpha = 0.01;
    let c = ((2.0 * thresholds.len() as f64 / alpha).ln() / (2.0 * m as f64)).sqrt();
    let above = |s: &[f64], t: f64| (s.len() - s.partition_point(|v| *v <= t)) as f64 / s.len() as f64;
    let eps_lb = thresholds
        .iter()
        .map(|&t| {
            let (fpr, tpr) = (above(&s0, t) + c, above(&s1, t) - c - delta);
            if tpr > 0.0 { (tpr / fpr).ln() } else { f64::NEG_INFINITY }
        })
        .fold(f64::NEG_INFINITY, f64::max);
    eprintln!(
        "audit: ‖u‖ = {shift:.4} (bound {}), τ = {tau:.4}, ε_lb = {eps_lb:.4} vs accountant ε = {eps}",
        2.0 / lambda
    );
    assert!(
        eps_lb <= eps,
        "empirical ε lower bound {eps_lb} exceeds the accountant's {eps}"
    );
    assert!(eps_lb > 0.0, "the audit detected nothing (ε_lb = {eps_lb}): no power");
}
