//! The two-cluster data model in the long-horizon state evolution
//! (docs/theory.md §3.6, "At long horizons"): centred rows x = ỹ·μ + g,
//! ỹ = y − (2p − 1), g ~ N(0, Σ_w/d), Σ_w = κ²Σ, μ = Σ_wθ*/d, labels
//! P(y = +1) = p independent of g — the full-memory equations of §3.6 on
//! the long horizon's per-path processes (§3.3):
//!
//! - the coordinate modes are Σ_w's (eigenvalues κ²ω_k), ν the Gaussian
//!   part's teacher field of variance ρ_w = κ²s²Σ_k w_kω_ke_k;
//! - every path draws its label from its uniform coordinate (y = +1 below
//!   p), independent of (ν, w), and evaluates its loss at
//!   r_t + ỹ·m_t + β_t, m_t = ρ_w·(m_t/ρ_w) the class-mean overlap μᵀθ_t;
//! - no label depends on ν, so the drift of every amplitude is pathwise,
//!   D_t = Σ_k R_g(t,k)·m_k/ρ_w + a·q·E\[c_t ỹ\] (the selection
//!   Rao–Blackwellised), without a Stein quotient or baseline paths;
//! - the training loss's control variate is ℓ(y, w_t + ỹ·m_t + β_t), whose
//!   mean is exact since w_t ~ N(0, C_w(t,t)) is independent of y:
//!   p·E softplus(−W − 2(1 − p)m_t − β_t) + (1 − p)·E softplus(W − 2p·m_t + β_t);
//! - the metrics are the full-memory solver's (`modes::two_cluster_metrics`,
//!   `population::two_cluster_class_error`).
//!
//! DP-SGD's clip of the per-example gradient ĝᵢxᵢ, ‖xᵢ‖ → κ, acts on ℓ' at
//! C/κ ([`super::solve_two_cluster`]).
//!
//! # References
//! - Mignacco, Krzakala, Urbani, Zdeborová (2020), *Dynamical mean-field theory
//!   for stochastic gradient descent in Gaussian mixture classification*.
//! - Loureiro, Sicuro, Gerbelot, Pacco, Krzakala, Zdeborová (2021), *Learning
//!   Gaussian mixtures with generalised linear models: precise asymptotics in
//!   high dimensions*.

use propdp_core::covariance::Atom;
use propdp_core::loss::softplus;
use propdp_core::metrics::Metrics;
use propdp_core::panels::normal_expect;
use propdp_core::population::two_cluster_class_error;
use propdp_core::problem::TwoCluster;

use crate::dynamics::modes::two_cluster_metrics;
use crate::dynamics::path::{DmftError, DmftParams, INTERCEPT, Intercept};

/// Widest quadrature panel of the control variate's integrals (softplus
/// bends on a scale of 1).
const PANEL: f64 = 0.5;

/// The within-class covariance's atoms: Σ's with eigenvalues κ²ω_k, or
/// without one the isotropic atom of eigenvalue κ².
pub(super) fn within_atoms(mix: &TwoCluster, atoms: Option<&[Atom]>) -> Vec<Atom> {
    let scaled = |a: &Atom| Atom {
        eigenvalue: mix.within * a.eigenvalue,
        ..*a
    };
    match atoms {
        Some(a) => a.iter().map(scaled).collect(),
        None => vec![Atom {
            eigenvalue: mix.within,
            weight: 1.0,
            teacher: 1.0,
        }],
    }
}

/// Every path's label (+1 where its uniform `u` is below p) and centred
/// label ỹ = y − (2p − 1).
pub(super) fn labels(mix: &TwoCluster, u: impl Iterator<Item = f64>) -> (Vec<f64>, Vec<f64>) {
    let centre = 2.0 * mix.balance - 1.0;
    u.map(|x| {
        let y = if x < mix.balance { 1.0 } else { -1.0 };
        (y, y - centre)
    })
    .unzip()
}

/// D_t = Σ_{l<W} R_g(t, t − l)·(m/ρ)_{t−l} + a·q·E[c_t ỹ]: the Gaussian part's
/// response to the class-mean overlap and the class mean's own drift
/// (`rg[l]` = R_g(t, t − l), `amp_w[s]` = m_s/ρ_w, `c` the clipped slopes).
pub(super) fn drift(rg: &[f64], amp_w: &[f64], t: usize, c: &[f64], centred: &[f64], a: f64, q: f64) -> f64 {
    let response: f64 = rg.iter().enumerate().map(|(l, r)| r * amp_w[t - l]).sum();
    let mean: f64 = c.iter().zip(centred).map(|(c, y)| c * y).sum::<f64>() / c.len() as f64;
    response + a * q * mean
}

/// The exact mean of the training loss's control variate ℓ(y, w + ỹ·m + β),
/// w ~ N(0, c_tt) independent of y (module docs).
pub(super) fn surrogate_mean(mix: &TwoCluster, m: f64, c_tt: f64, beta: f64) -> f64 {
    let (p, sd) = (mix.balance, c_tt.max(0.0).sqrt());
    let plus = normal_expect(-(2.0 * (1.0 - p) * m + beta), sd, &[0.0], PANEL, softplus);
    let minus = normal_expect(-2.0 * p * m + beta, sd, &[0.0], PANEL, softplus);
    p * plus + (1.0 - p) * minus
}

/// Step t's metrics (docs/theory.md §3.6): test_class_err from the class
/// means of the field 2(1 − p)m_t + β_t, −2p·m_t + β_t and its Gaussian
/// variance C_w(t,t); train_loss (the plain path mean); norm2 = q₀,
/// overlap = m₀ (parameter space); fitted_intercept = β_t if learned.
#[allow(clippy::too_many_arguments)]
pub(super) fn metrics(
    p: &DmftParams,
    t: usize,
    mix: &TwoCluster,
    (m_t, c_tt): (f64, f64),
    (m0, q0): (f64, f64),
    train_loss: f64,
    icp: Option<&Intercept>,
    beta: f64,
) -> Result<Metrics, DmftError> {
    let err = two_cluster_class_error(mix.balance, m_t, c_tt, beta);
    let mut mt = two_cluster_metrics(p, t, c_tt, m0, q0, train_loss, err)?;
    if icp.is_some_and(|c| c.learned) {
        mt.insert(INTERCEPT.into(), beta);
    }
    Ok(mt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use propdp_core::loss::Loss;

    /// The control variate's mean against a fine midpoint rule over the
    /// Gaussian and the two labels.
    #[test]
    fn the_control_variates_mean_is_the_mixture_of_the_two_classes() {
        let mix = TwoCluster {
            balance: 0.75,
            within: 0.7,
        };
        let (m, c_tt, beta): (f64, f64, f64) = (0.8, 1.7, -0.4);
        let (k, width) = (400_000, 16.0);
        let mut direct = 0.0;
        for i in 0..k {
            let z = -width / 2.0 + width * (i as f64 + 0.5) / k as f64;
            let phi = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt() * width / k as f64;
            let w = c_tt.sqrt() * z;
            for (y, prob) in [(1.0, mix.balance), (-1.0, 1.0 - mix.balance)] {
                let centred = y - (2.0 * mix.balance - 1.0);
                direct += phi * prob * Loss::Logistic.value(y, w + centred * m + beta);
            }
        }
        let exact = surrogate_mean(&mix, m, c_tt, beta);
        assert!((exact - direct).abs() < 1e-9, "{exact} vs {direct}");
        // t = 0: the field is 0, the loss log 2
        assert!((surrogate_mean(&mix, 0.0, 0.0, 0.0) - 2f64.ln()).abs() < 1e-15);
    }
}
