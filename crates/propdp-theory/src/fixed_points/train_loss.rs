//! The long-horizon solver's training loss, with a control variate
//! (docs/theory.md §3.3, "Training loss").
//!
//! The training loss at step t is E ℓ(y, r_t) over the sample process, with
//! r_t = A_tν + θ̃_t − ηO_t. Its path mean has a per-path spread of the order
//! of the loss itself (logistic: sd ≈ 0.66 at a mean of 0.64), far above the
//! spread the kernels' estimation leaves in the other metrics, which are
//! propagated exactly. The surrogate
//!
//!   s = ℓ(y, w_t),   w_t = A_tν + θ̃_t,
//!
//! (the loss at the field, without the Onsager term) tracks ℓ(y, r_t) closely
//! (correlation 0.94 on clipped logistic DP-SGD), and its mean is a
//! one-dimensional Gaussian integral: θ̃_t ~ N(0, V_t) is independent of the
//! sample's (ν, y), with V_t its exact variance under the replicate's kernels.
//!
//! - Huber / squared: y − w ~ N(0, v), v = (1 − A)²s² + σ_e² + V, and
//!   E ρ_M(y − w) is the Gaussian-smoothed Huber loss in closed form.
//! - Logistic (labels P(y = 1 | ν) = σ(ν)) and its conditional form:
//!   E_y ℓ(y, w) = softplus(w) − σ(ν)w, so E s = E softplus(W) − A·E[νσ(ν)],
//!   W ~ N(0, A²s² + V).
//! - With an intercept (docs/theory.md §3.5: labels of ν + b*, fields
//!   shifted by β) the surrogate is ℓ(y, w_t + β): y − w − β ~ N(b* − β, v),
//!   and E s = E softplus(W + β) − A·E[νσ(ν + b*)] − β·E σ(ν + b*).
//!
//! The estimate of replicate j is ℓ̄_j − β_{−j}(s̄_j − E s_j), with the
//! regression slope β_{−j} = Σ_{k≠j} Cov_k(ℓ, s) / Σ_{k≠j} Var_k(s) pooled
//! over the *other* replicates (cross-fitting), so that β is independent of
//! replicate j and the correction adds no bias; the replicates' spread stays
//! the standard error.
//!
//! # References
//! - Glasserman (2003), *Monte Carlo Methods in Financial Engineering*, §4.1
//!   (control variates).
//! - Chernozhukov et al. (2018), *Double/debiased machine learning*, §3
//!   (cross-fitting).

use propdp_core::loss::{Loss, sigmoid, softplus};

use propdp_core::panels::normal_expect;

/// Widest quadrature panel of the logistic surrogate's integrals (σ and
/// softplus bend on a scale of 1, their poles at ±iπ): 16-node
/// Gauss–Legendre on panels of 2 agrees with panels of 0.1 to 4·10⁻¹⁴
/// relative for field sd 0.01–30 and means −3 to 2, as panels of 0.5 did
/// (session 41; a quarter of their cost).
const PANEL: f64 = 2.0;

/// A replicate's path averages at one step: the loss, the surrogate, their
/// covariance over paths, and the surrogate's exact mean.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LossMoments {
    loss: f64,
    surrogate: f64,
    cov: f64,
    var: f64,
    exact: f64,
}

/// Accumulates (ℓ, s) over the paths of one step.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LossSums {
    n: f64,
    l: f64,
    s: f64,
    ls: f64,
    ss: f64,
}

impl LossSums {
    /// Add one path's loss `l` and surrogate `s`.
    pub(crate) fn add(&mut self, l: f64, s: f64) {
        self.n += 1.0;
        self.l += l;
        self.s += s;
        self.ls += l * s;
        self.ss += s * s;
    }

    /// The path mean of the loss (the plain estimate).
    pub(crate) fn mean_loss(&self) -> f64 {
        self.l / self.n
    }

    /// The step's moments, with the surrogate's exact mean `exact`.
    pub(crate) fn moments(&self, exact: f64) -> LossMoments {
        let (l, s) = (self.l / self.n, self.s / self.n);
        LossMoments {
            loss: l,
            surrogate: s,
            cov: self.ls / self.n - l * s,
            var: (self.ss / self.n - s * s).max(0.0),
            exact,
        }
    }
}

/// The surrogate's fit at a path, A·ν + θ̃ (θ̃ with the intercept's β, if
/// any): the surrogate is the loss there, ℓ(y, A·ν + θ̃).
pub(crate) fn surrogate_fit(amp: f64, nu: f64, theta: f64) -> f64 {
    amp * nu + theta
}

/// E ℓ(y, Aν + θ̃ + β) for ν ~ N(0, s²), θ̃ ~ N(0, v_theta) independent, and the
/// model's labels: y = ν + b* + e, e ~ N(0, noise_sd²) (Huber, squared), y = ±1
/// with P(y = 1 | ν) = σ(ν + b*) (logistic), y = ν (the conditional losses, b* = 0);
/// b* the teacher's intercept (docs/theory.md §3.5; 0 without one). Logistic:
/// E_y ℓ(y, w) = softplus(w) − σ(ν + b*)w, so
/// E s = E softplus(W + β) − A·E[νσ(ν + b*)] − β·E σ(ν + b*); regression:
/// y − w ~ N(b* − β, v). The label's two expectations do not change along a
/// trajectory: they are computed once, at construction.
pub(crate) struct SurrogateMean {
    loss: Loss,
    s2: f64,
    noise_sd: f64,
    b_star: f64,
    /// Logistic: E[νσ(ν + b*)] and E σ(ν + b*).
    label_slope: f64,
    balance: f64,
}

impl SurrogateMean {
    pub(crate) fn new(loss: Loss, s2: f64, noise_sd: f64, b_star: f64) -> Self {
        let (label_slope, balance) = match loss {
            Loss::Logistic | Loss::ConditionalLogistic => {
                let sd = s2.sqrt();
                (
                    normal_expect(0.0, sd, &[0.0 - b_star], PANEL, |x| x * sigmoid(x + b_star)),
                    normal_expect(0.0, sd, &[-b_star], PANEL, |x| sigmoid(x + b_star)),
                )
            }
            _ => (0.0, 0.0),
        };
        SurrogateMean {
            loss,
            s2,
            noise_sd,
            b_star,
            label_slope,
            balance,
        }
    }

    /// The mean at amplitude A, Var θ̃ = `v_theta` and the intercept's field β.
    pub(crate) fn at(&self, amp: f64, v_theta: f64, beta: f64) -> f64 {
        let (s2, noise_sd) = (self.s2, self.noise_sd);
        let miss = (1.0 - amp).powi(2) * s2 + v_theta;
        let offset = self.b_star - beta;
        match self.loss {
            Loss::Squared => 0.5 * (miss + noise_sd * noise_sd + offset * offset),
            // the Gaussian-smoothed Huber loss E ρ_M(Z), Z ~ N(b* − β, v), is the conditional Huber loss at b* − β
            Loss::Huber { m } => smoothed_huber(m, offset, (miss + noise_sd * noise_sd).sqrt()),
            Loss::ConditionalHuber { m, se } => smoothed_huber(m, offset, (miss + se * se).sqrt()),
            Loss::Logistic | Loss::ConditionalLogistic => {
                let field_sd = (amp * amp * s2 + v_theta).sqrt();
                let softplus_mean = normal_expect(beta, field_sd, &[0.0], PANEL, softplus);
                let balance = if beta == 0.0 { 0.0 } else { beta * self.balance };
                softplus_mean - amp * self.label_slope - balance
            }
        }
    }
}

/// E ρ_M(Z), Z ~ N(mean, sd²).
fn smoothed_huber(m: f64, mean: f64, sd: f64) -> f64 {
    Loss::ConditionalHuber { m, se: sd }.eval(mean, 0.0).0
}

/// Each replicate's control-variate estimate of the training loss at every
/// step, the slope cross-fitted over the other replicates (`runs[j][t]`:
/// replicate j, step t; at least two replicates).
pub(crate) fn cross_fitted(runs: &[Vec<LossMoments>]) -> Vec<Vec<f64>> {
    let steps = runs[0].len();
    let total = |t: usize| -> (f64, f64) { runs.iter().fold((0.0, 0.0), |(c, v), r| (c + r[t].cov, v + r[t].var)) };
    let totals: Vec<(f64, f64)> = (0..steps).map(total).collect();
    runs.iter()
        .map(|r| {
            r.iter()
                .zip(&totals)
                .map(|(m, &(c, v))| {
                    let (c, v) = (c - m.cov, v - m.var);
                    // no spread in the surrogate (t = 0: θ̃ = 0, A = 0): nothing to correct
                    let beta = if v > 1e-300 { c / v } else { 0.0 };
                    m.loss - beta * (m.surrogate - m.exact)
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use propdp_sim::rng::stream;
    use rand::RngExt;
    use rand_distr::StandardNormal;

    /// The exact means against plain Monte Carlo over (ν, y, θ̃) drawn from
    /// the stated law, for every loss (5 SE); the standard losses also with
    /// an intercept (β, b*) = (0.7, −1.2).
    #[test]
    fn the_surrogate_means_match_monte_carlo_over_the_stated_law() {
        let mut rng = stream(7, &[0]);
        let (s2, sd, amp, v): (f64, f64, f64, f64) = (1.7, 0.6, 0.45, 0.8);
        let none = (0.0, 0.0);
        let cases = [
            (Loss::Squared, none),
            (Loss::Huber { m: 0.7 }, none),
            (Loss::ConditionalHuber { m: 0.7, se: sd }, none),
            (Loss::Logistic, none),
            (Loss::ConditionalLogistic, none),
            (Loss::Squared, (0.7, -1.2)),
            (Loss::Huber { m: 0.7 }, (0.7, -1.2)),
            (Loss::Logistic, (0.7, -1.2)),
        ];
        for (loss, (beta, b_star)) in cases {
            let n = 400_000;
            let (mut sum, mut sum2) = (0.0, 0.0);
            for _ in 0..n {
                let nu = s2.sqrt() * rng.sample::<f64, _>(StandardNormal);
                let theta = v.sqrt() * rng.sample::<f64, _>(StandardNormal);
                let label = match loss {
                    Loss::Huber { .. } | Loss::Squared => nu + b_star + sd * rng.sample::<f64, _>(StandardNormal),
                    Loss::Logistic => {
                        if rng.random::<f64>() < sigmoid(nu + b_star) {
                            1.0
                        } else {
                            -1.0
                        }
                    }
                    _ => nu,
                };
                let x = loss.value(label, surrogate_fit(amp, nu, theta + beta));
                sum += x;
                sum2 += x * x;
            }
            let mean = sum / n as f64;
            let se = ((sum2 / n as f64 - mean * mean) / n as f64).sqrt();
            let exact = SurrogateMean::new(loss, s2, sd, b_star).at(amp, v, beta);
            assert!(
                (mean - exact).abs() < 5.0 * se,
                "{loss:?} at (β, b*) = ({beta}, {b_star}): MC {mean} ± {se}, exact {exact}"
            );
        }
    }

    /// Cross-fitting: replicate j's slope uses only the others, so a
    /// replicate whose own moments are perturbed keeps its slope.
    #[test]
    fn the_slope_of_a_replicate_comes_from_the_others_only() {
        let m = |loss, surrogate, cov, var| LossMoments {
            loss,
            surrogate,
            cov,
            var,
            exact: 1.0,
        };
        let runs = vec![
            vec![m(2.0, 1.5, 0.3, 0.5)],
            vec![m(2.1, 0.9, 0.5, 0.5)],
            vec![m(1.9, 1.2, 100.0, 0.01)],
        ];
        let est = cross_fitted(&runs);
        // replicate 0: β = (0.5 + 100) / (0.5 + 0.01)
        let beta0 = 100.5 / 0.51;
        assert!((est[0][0] - (2.0 - beta0 * 0.5)).abs() < 1e-12);
        // replicate 2: β = (0.3 + 0.5) / (0.5 + 0.5) = 0.8, its own wild moments unused
        assert!((est[2][0] - (1.9 - 0.8 * 0.2)).abs() < 1e-12);
        // no spread in the others' surrogate: no correction
        let flat = vec![vec![m(2.0, 1.5, 0.0, 0.0)], vec![m(2.2, 1.5, 0.0, 0.0)]];
        assert_eq!(cross_fitted(&flat), vec![vec![2.0], vec![2.2]]);
    }
}
