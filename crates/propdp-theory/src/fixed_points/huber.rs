//! Huber (robust linear regression) under objective perturbation:
//! the two-equation system of docs/theory.md §2.1 in the unknowns (α², V).
//!
//! With z = ε + αG, c = M(1+V), P = P(|z| ≤ c) and
//! β² = E[clip(z/(1+V), −M, M)²] = E[z²1{|z|≤c}]/(1+V)² + M²(1 − P):
//!
//! - (H1) δα² = δV²(λ²s² + σ²) + V²β²
//! - (H2) V·P/(1+V) = δ(1 − λV)
//!
//! Solution method: a damped Newton iteration on (H1)–(H2) jointly, in
//! (ln α², ln V), from the warm start or from the ridge guess (P = 1 in (H2),
//! α² = s²; for Laplace and Student-t noise, from the solution with Gaussian
//! noise of the same scale). One step needs P, E[z²1{|z|≤c}] and their
//! derivatives in α² and c in one pass over the noise law
//! ([`crate::fixed_points::noise::truncated_jet`]); with
//! R₁ = 1 − Ψ/α², R₂ = V·P/(uδ(1 − λV)) − 1 (both relative, so that 1 − λV
//! keeps its digits when λV → 1) and u = 1 + V, c = Mu:
//! - ∂β²/∂α² = ∂ₐT/u² − M²∂ₐP, ∂β²/∂V = −2T/u³ (the c-derivatives cancel:
//!   ∂T/∂c = c²∂P/∂c);
//! - Ψ = V²(λ²s²+σ²) + V²β²/δ, ∂R₁/∂ln α² = Ψ/α² − ∂Ψ/∂α²,
//!   ∂R₁/∂ln V = −V·∂Ψ/∂V/α²;
//! - ∂R₂/∂ln α² = (1 + R₂)α²∂ₐP/P,
//!   ∂R₂/∂ln V = (1 + R₂)(1 + VM∂_cP/P − V/u + λV/(1 − λV)).
//!
//! A step is halved until max(|R₁|, |R₂|) decreases; it stops at 1e-3 × the
//! tolerance: about 7 evaluations from the ridge guess, 5 from the Gaussian
//! start of a Student-t point, 3–5 warm along a sweep.
//!
//! The bracketed method below is the reference and the fallback when Newton
//! stalls (e.g. exact recovery, α² = 0): for fixed α², the left side of (H2)
//! increases in V and the right side decreases, so V(α²) is the unique
//! bracketed root in (0, 1/λ) (for λ = 0 it exists iff δ < 1). (H1) then
//! reads α² = Ψ(α²); we bracket its smallest root by scanning up from α² = 0
//! (the physical branch, the limit of the monotone iteration α² ← Ψ(α²) from
//! 0) and polish it with Brent. The two agree to 1e-10 over a grid of every
//! noise law, δ, λ, σ and M (unit test `newton_matches_the_bracketed_solution`).
//! All expectations are closed form for Gaussian and contaminated noise and a
//! fixed rule over the mixing variance otherwise ([`crate::fixed_points::noise`]).
//!
//! # References
//! - El Karoui, Bean, Bickel, Lim, Yu (2013), *On robust regression with
//!   high-dimensional predictors*, PNAS — the non-private system.
//! - Thrampoulidis, Abbasi, Hassibi (2018), *Precise error analysis of
//!   regularized M-estimators in high dimensions*, IEEE Trans. Inf. Theory.

use propdp_core::NoiseLaw;
use propdp_core::config::FixedPointOptions;
use propdp_core::metrics::{self, Metrics};
use propdp_core::record::SolverReport;
use thiserror::Error;

use crate::fixed_points::noise::{truncated_jet, truncated_moments, truncated_probability};
use crate::numerics::roots::brent;

/// Parameters of one Huber point (objective perturbation with σ; σ = 0 is
/// the non-private ridge-Huber estimator).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HuberParams {
    /// δ = d/n.
    pub delta: f64,
    /// Prior energy s².
    pub s2: f64,
    /// Huber threshold M.
    pub huber_m: f64,
    /// Law of the label noise.
    pub noise: NoiseLaw,
    /// Ridge λ.
    pub lambda: f64,
    /// Noise σ of the linear term.
    pub sigma: f64,
}

/// The parameters as a user set them (config keys), for error messages.
impl std::fmt::Display for HuberParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "delta = {}, s2 = {}, huber_m = {}, noise = {}, lambda = {}, sigma = {}",
            self.delta, self.s2, self.huber_m, self.noise, self.lambda, self.sigma
        )
    }
}

/// Solution of (H1)–(H2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HuberState {
    /// α² = est_err2.
    pub alpha2: f64,
    /// Response V.
    pub v: f64,
    /// β² = E[clip(z/(1+V), −M, M)²] at the solution (train_resid_trunc).
    pub beta2: f64,
}

/// Failures of the Huber solver; every variant carries the parameters.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum HuberError {
    #[error("huber: no solution at {params}: {reason}")]
    /// The system has no solution at these parameters (e.g. λ = 0 with δ ≥ 1).
    NoSolution {
        /// The parameters.
        params: HuberParams,
        /// Why not.
        reason: String,
    },
    #[error("huber: not converged at {params} after {iterations} iterations (residual {residual:e})")]
    /// The solver did not meet its tolerance.
    NotConverged {
        /// The parameters.
        params: HuberParams,
        /// Iterations taken.
        iterations: usize,
        /// Final residual.
        residual: f64,
    },
}

/// Newton steps before falling back to the bracketed solver.
const NEWTON_MAX_ITER: usize = 60;

struct Eval {
    v: f64,
    p: f64,
    beta2: f64,
}

impl HuberParams {
    fn no_solution(&self, reason: &str) -> HuberError {
        HuberError::NoSolution {
            params: *self,
            reason: reason.to_string(),
        }
    }

    /// V(α²) from (H2), then P and β² at that V.
    fn eval(&self, alpha2: f64) -> Result<Eval, HuberError> {
        let (d, l, m) = (self.delta, self.lambda, self.huber_m);
        let h2 = |v: f64| v / (1.0 + v) * truncated_probability(&self.noise, alpha2, m * (1.0 + v)) - d * (1.0 - l * v);
        let hi = if l > 0.0 {
            1.0 / l
        } else {
            let mut hi: f64 = 1.0;
            while h2(hi) <= 0.0 {
                hi *= 4.0;
                if hi > 1e16 {
                    return Err(self.no_solution("response V diverges: (H2) has no root"));
                }
            }
            hi
        };
        let (v, _) = brent(0.0, hi, h2, 1e-15, 200).ok_or_else(|| self.no_solution("(H2) root not bracketed"))?;
        let (p, beta2) = self.loss_side(alpha2, v);
        Ok(Eval { v, p, beta2 })
    }

    /// The loss side at (α², V), z = ε + αG: P = P(|z| ≤ M(1 + V)) and
    /// β² = E[clip(z/(1 + V), ±M)²] = E[z²1{|z| ≤ c}]/(1 + V)² + M²(1 − P).
    pub(crate) fn loss_side(&self, alpha2: f64, v: f64) -> (f64, f64) {
        let m = self.huber_m;
        let (p, t2) = truncated_moments(&self.noise, alpha2, m * (1.0 + v));
        (p, t2 / ((1.0 + v) * (1.0 + v)) + m * m * (1.0 - p))
    }

    /// The residuals (R₁, R₂) at (α², V) and their Jacobian in (ln α², ln V)
    /// (module docs).
    fn newton_system(&self, alpha2: f64, v: f64) -> ([f64; 2], [[f64; 2]; 2], Eval) {
        let (d, l, m) = (self.delta, self.lambda, self.huber_m);
        let u = 1.0 + v;
        let j = truncated_jet(&self.noise, alpha2, m * u);
        let beta2 = j.t2 / (u * u) + m * m * (1.0 - j.p);
        let dbeta2_da = j.dt2_dv / (u * u) - m * m * j.dp_dv;
        let dbeta2_dv = -2.0 * j.t2 / (u * u * u);
        let lead = l * l * self.s2 + self.sigma * self.sigma;
        let psi = v * v * (lead + beta2 / d);
        let dpsi_da = v * v * dbeta2_da / d;
        let dpsi_dv = 2.0 * v * (lead + beta2 / d) + v * v * dbeta2_dv / d;
        let b = 1.0 - l * v;
        let ratio = v * j.p / (u * d * b);
        let r = [1.0 - psi / alpha2, ratio - 1.0];
        let jac = [
            [psi / alpha2 - dpsi_da, -v * dpsi_dv / alpha2],
            [
                ratio * alpha2 * j.dp_dv / j.p,
                ratio * (1.0 + v * m * j.dp_dc / j.p - v / u + l * v / b),
            ],
        ];
        (r, jac, Eval { v, p: j.p, beta2 })
    }

    /// The cold start (α², V): for Laplace and Student-t noise, the solution
    /// with Gaussian noise of the same scale (one Gaussian expectation per
    /// pass instead of the mixing rule's 50–400; it saves about two passes
    /// over the rule); otherwise [`Self::ridge_start`].
    fn cold_start(&self, tol: f64) -> (f64, f64) {
        let sd = match self.noise {
            NoiseLaw::Laplace { scale } => std::f64::consts::SQRT_2 * scale,
            NoiseLaw::StudentT { scale, .. } => scale,
            NoiseLaw::Gaussian { .. } | NoiseLaw::Contaminated { .. } => return self.ridge_start(),
        };
        let gaussian = HuberParams {
            noise: NoiseLaw::Gaussian { sd },
            ..*self
        };
        match gaussian.newton(gaussian.ridge_start(), tol) {
            Some((alpha2, e, _)) => (alpha2, e.v),
            None => self.ridge_start(),
        }
    }

    /// A start (α², V) from no other solution: V from (H2) with P = 1 (the
    /// ridge response), α² = s².
    fn ridge_start(&self) -> (f64, f64) {
        let (d, l) = (self.delta, self.lambda);
        // V/(1+V) = δ(1 − λV) ⇔ δλV² + (1 − δ + δλ)V − δ = 0
        let b = 1.0 - d + d * l;
        let v = if l > 0.0 {
            2.0 * d / (b + (b * b + 4.0 * d * d * l).sqrt())
        } else {
            d / (1.0 - d)
        };
        (self.s2.max(1e-3), v)
    }

    /// Damped Newton on (H1)–(H2) from `start` until max |Rᵢ| ≤ 1e-3·`tol`
    /// (or, at the round-off floor, ≤ `tol`); `None` when it stalls above
    /// that or leaves the domain (the caller then falls back to the
    /// bracketed solver).
    fn newton(&self, (alpha2, v): (f64, f64), tol: f64) -> Option<(f64, Eval, usize)> {
        let norm = |r: &[f64; 2]| r[0].abs().max(r[1].abs());
        let (mut x, mut y) = (alpha2.ln(), v.ln());
        let v_max = if self.lambda > 0.0 {
            1.0 / self.lambda
        } else {
            f64::INFINITY
        };
        let (mut r, mut jac, mut e) = self.newton_system(alpha2, v);
        for iteration in 0..NEWTON_MAX_ITER {
            if !(norm(&r).is_finite() && jac.iter().flatten().all(|j| j.is_finite())) {
                return None;
            }
            if norm(&r) <= 1e-3 * tol {
                return Some((x.exp(), e, iteration));
            }
            let det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0];
            let mut step = [
                -(jac[1][1] * r[0] - jac[0][1] * r[1]) / det,
                -(jac[0][0] * r[1] - jac[1][0] * r[0]) / det,
            ];
            // at most a factor e² in either unknown per step
            let size = step[0].abs().max(step[1].abs());
            if !size.is_finite() {
                return None;
            }
            if size > 2.0 {
                step = [step[0] * 2.0 / size, step[1] * 2.0 / size];
            }
            let size = size.min(2.0);
            let mut t = 1.0;
            loop {
                let (nx, ny) = (x + t * step[0], y + t * step[1]);
                if ny.exp() < v_max {
                    let (nr, njac, ne) = self.newton_system(nx.exp(), ny.exp());
                    if norm(&nr) < norm(&r) {
                        (x, y, r, jac, e) = (nx, ny, nr, njac, ne);
                        break;
                    }
                }
                t *= 0.5;
                // the step is below round-off of (ln α², ln V) or keeps failing
                if t < 1e-6 || t * size <= 1e-15 * (1.0 + x.abs().max(y.abs())) {
                    return (norm(&r) <= tol).then_some((x.exp(), e, iteration));
                }
            }
        }
        None
    }

    /// Ψ(α²) − α² ... as α² − Ψ(α²).
    fn gap(&self, alpha2: f64) -> Result<f64, HuberError> {
        let e = self.eval(alpha2)?;
        Ok(alpha2 - self.psi(&e))
    }

    fn psi(&self, e: &Eval) -> f64 {
        let l2 = self.lambda * self.lambda * self.s2 + self.sigma * self.sigma;
        e.v * e.v * (l2 + e.beta2 / self.delta)
    }

    /// Relative residuals of (H1) and (H2) at a candidate solution.
    fn residual(&self, alpha2: f64, e: &Eval) -> f64 {
        let d = self.delta;
        let h1 = (d * alpha2
            - d * e.v * e.v * (self.lambda * self.lambda * self.s2 + self.sigma * self.sigma)
            - e.v * e.v * e.beta2)
            .abs()
            / (d * alpha2.max(1e-12));
        let h2 = (e.v * e.p / (1.0 + e.v) - d * (1.0 - self.lambda * e.v)).abs() / d;
        h1.max(h2)
    }
}

/// Solve (H1)–(H2). `warm` (a nearby solution, e.g. the previous sweep
/// point) narrows the initial bracket.
///
/// ```
/// use propdp_core::{NoiseLaw, config::SolverOptions};
/// use propdp_theory::fixed_points::huber::{solve, HuberParams};
/// // least squares limit: M huge, λ → 0, σ = 0 gives α² = δ sd²/(1 − δ)
/// let p = HuberParams { delta: 0.5, s2: 1.0, huber_m: 1e6, noise: NoiseLaw::Gaussian { sd: 1.0 }, lambda: 1e-9, sigma: 0.0 };
/// let (st, rep) = solve(&p, &SolverOptions::default().fixed_point(), None).unwrap();
/// assert!(rep.converged && (st.alpha2 - 1.0).abs() < 1e-6);
/// ```
pub fn solve(
    p: &HuberParams,
    opts: &FixedPointOptions,
    warm: Option<HuberState>,
) -> Result<(HuberState, SolverReport), HuberError> {
    if p.lambda == 0.0 && p.sigma > 0.0 {
        return Err(p.no_solution("λ = 0 with σ > 0: the perturbed objective is unbounded below"));
    }
    if p.lambda == 0.0 && p.delta >= 1.0 {
        return Err(p.no_solution("λ = 0 with δ ≥ 1: the unregularized Huber estimator interpolates (V → ∞)"));
    }
    let start = warm
        .filter(|w| w.alpha2 > 0.0 && w.v > 0.0 && w.v * p.lambda < 1.0)
        .map_or_else(|| p.cold_start(opts.tol), |w| (w.alpha2, w.v));
    if let Some((alpha2, e, iterations)) = p.newton(start, opts.tol) {
        let residual = p.residual(alpha2, &e);
        if residual <= opts.tol {
            let st = HuberState {
                alpha2,
                v: e.v,
                beta2: e.beta2,
            };
            let report = SolverReport {
                converged: true,
                iterations,
                residual,
                ..Default::default()
            };
            return Ok((st, report));
        }
    }
    solve_bracketed(p, opts, warm)
}

/// The bracketed solver of the module docs: Brent in α² over V(α²) from
/// Brent in V.
fn solve_bracketed(
    p: &HuberParams,
    opts: &FixedPointOptions,
    warm: Option<HuberState>,
) -> Result<(HuberState, SolverReport), HuberError> {
    let g0 = p.gap(0.0)?;
    if g0 >= 0.0 {
        // Ψ(0) = 0: exact recovery (noiseless, non-private, δ < 1).
        let e = p.eval(0.0)?;
        let residual = p.residual(0.0, &e);
        return Ok((
            HuberState {
                alpha2: 0.0,
                v: e.v,
                beta2: e.beta2,
            },
            SolverReport {
                converged: true,
                iterations: 0,
                residual,
                ..Default::default()
            },
        ));
    }
    let (lo, hi, scans) = bracket(p, warm, g0, opts.max_iter)?;
    let gap = |a2: f64| p.gap(a2).unwrap_or(f64::NAN);
    let rel = (opts.tol * 1e-3).max(1e-15);
    let (alpha2, iters) = brent(lo, hi, gap, rel, opts.max_iter).ok_or(HuberError::NotConverged {
        params: *p,
        iterations: opts.max_iter,
        residual: f64::NAN,
    })?;
    let e = p.eval(alpha2)?;
    let residual = p.residual(alpha2, &e);
    let report = SolverReport {
        converged: residual <= opts.tol,
        iterations: scans + iters,
        residual,
        ..Default::default()
    };
    if !report.converged {
        return Err(HuberError::NotConverged {
            params: *p,
            iterations: report.iterations,
            residual,
        });
    }
    Ok((
        HuberState {
            alpha2,
            v: e.v,
            beta2: e.beta2,
        },
        report,
    ))
}

/// A bracket [lo, hi] with gap(lo) < 0 ≤ gap(hi) around the smallest root.
fn bracket(
    p: &HuberParams,
    warm: Option<HuberState>,
    g0: f64,
    max_iter: usize,
) -> Result<(f64, f64, usize), HuberError> {
    // warm: grow a bracket upwards from just below the nearby solution
    if let Some(w) = warm.filter(|w| w.alpha2 > 0.0) {
        let lo = w.alpha2 / 1.25;
        if p.gap(lo)? < 0.0 {
            let (mut lo, mut hi, mut scans) = (lo, w.alpha2 * 1.25, 1);
            while p.gap(hi)? < 0.0 && scans < 200 {
                lo = hi;
                hi *= 2.0;
                scans += 1;
            }
            if scans < 200 {
                return Ok((lo, hi, scans));
            }
        }
    }
    // cold: scan up from 0 geometrically starting at Ψ(0) = −gap(0)
    let (mut lo, mut hi) = (0.0, -g0);
    let mut scans = 0;
    while p.gap(hi)? < 0.0 {
        scans += 1;
        if scans > max_iter.min(200) {
            return Err(p.no_solution("α² = Ψ(α²) has no root below 2^200·Ψ(0): the error diverges"));
        }
        lo = hi;
        hi *= 2.0;
    }
    Ok((lo, hi, scans))
}

/// Metrics of docs/theory.md §1 predicted at a solution. `tau` > 0 gives output
/// perturbation (state must then be the σ = 0 solution).
pub fn metrics(p: &HuberParams, st: &HuberState, tau: f64) -> Metrics {
    let bias = 1.0 - p.lambda * st.v;
    let overlap = p.s2 * bias;
    let est_err2 = st.alpha2 + tau * tau;
    let mut out = Metrics::new();
    out.insert(metrics::EST_ERR2.into(), est_err2);
    out.insert(metrics::EST_ERR.into(), est_err2.sqrt());
    // isotropic features: the prediction error is the parameter error
    out.insert(metrics::PRED_ERR2.into(), est_err2);
    out.insert(metrics::OVERLAP.into(), overlap);
    out.insert(metrics::BIAS_FACTOR.into(), bias);
    out.insert(metrics::NORM2.into(), est_err2 + 2.0 * overlap - p.s2);
    out.insert(
        metrics::NOISE_CORR.into(),
        if tau > 0.0 { tau } else { 0.0 - p.sigma * st.v },
    );
    let trunc = if tau > 0.0 {
        output_train_resid_trunc(p, st, tau)
    } else {
        st.beta2
    };
    out.insert(metrics::TRAIN_RESID_TRUNC.into(), trunc);
    if let Some(var) = p.noise.variance() {
        out.insert(metrics::TEST_MSE.into(), var + est_err2);
    }
    out
}

/// Output perturbation: training residuals are prox_{Vρ_M}(z) − τ xᵢᵀb with
/// xᵢᵀb ≈ N(0, 1) independent of z, so
/// train_resid_trunc = E_z E_G[clip(prox(z) + τG, ±M)²]. The inner mean is
/// closed form; the outer one is split at the kinks of prox (|z| = M(1+V))
/// and integrated adaptively over each z-variance of the noise mixture.
pub(crate) fn output_train_resid_trunc(p: &HuberParams, st: &HuberState, tau: f64) -> f64 {
    let (m, v) = (p.huber_m, st.v);
    let c = m * (1.0 + v);
    let prox = |z: f64| {
        if z.abs() <= c {
            z / (1.0 + v)
        } else {
            z - v * m * z.signum()
        }
    };
    crate::fixed_points::noise::expect_over_variance(&p.noise, st.alpha2, |w| {
        let s = w.sqrt();
        let f = |z: f64| {
            crate::numerics::gaussian::pdf(z / s) / s * crate::numerics::gaussian::clipped_square_mean(prox(z), tau, m)
        };
        // by symmetry, twice the integral over z ≥ 0: [0, c] and [c, ∞)
        let inner = quadrature::integrate(f, 0.0, c, 1e-13).integral;
        let outer = quadrature::integrate(
            |t: f64| {
                if t >= 1.0 {
                    return 0.0;
                }
                let om = 1.0 - t;
                f(c + t / om) / (om * om)
            },
            0.0,
            1.0,
            1e-13,
        )
        .integral;
        2.0 * (inner + outer)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Newton (cold and warm) lands on the bracketed solver's (physical)
    /// solution over every noise law, δ below and above 1, λ from 0 to 10,
    /// σ from 0 to 5 and M from 0.1 to 10, without falling back.
    #[test]
    fn newton_matches_the_bracketed_solution() {
        let laws = [
            NoiseLaw::Gaussian { sd: 0.5 },
            NoiseLaw::Contaminated {
                sd: 0.3,
                p: 0.1,
                outlier_sd: 5.0,
            },
            NoiseLaw::Laplace { scale: 0.7 },
            NoiseLaw::StudentT { dof: 1.0, scale: 1.0 },
            NoiseLaw::StudentT { dof: 3.0, scale: 0.5 },
            NoiseLaw::StudentT { dof: 10.0, scale: 0.5 },
        ];
        let opts = FixedPointOptions {
            tol: 1e-10,
            max_iter: 500,
        };
        let (mut points, mut steps) = (0, 0);
        for noise in laws {
            for delta in [0.1, 0.5, 0.9, 2.0, 5.0] {
                for lambda in [0.0, 1e-3, 0.1, 1.0, 10.0] {
                    for sigma in [0.0, 1.0, 5.0] {
                        for huber_m in [0.1, 1.0, 10.0] {
                            if lambda == 0.0 && (delta >= 1.0 || sigma > 0.0) {
                                continue;
                            }
                            let p = HuberParams {
                                delta,
                                s2: 1.0,
                                huber_m,
                                noise,
                                lambda,
                                sigma,
                            };
                            let (reference, _) = solve_bracketed(&p, &opts, None).unwrap();
                            let (alpha2, cold, n) = p
                                .newton(p.cold_start(opts.tol), opts.tol)
                                .unwrap_or_else(|| panic!("Newton stalled at {p:?}"));
                            let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * b;
                            assert!(
                                close(alpha2, reference.alpha2)
                                    && close(cold.v, reference.v)
                                    && close(cold.beta2, reference.beta2),
                                "{p:?}: Newton {alpha2}, V = {} vs bracketed {reference:?}",
                                cold.v
                            );
                            // warm from a point 20% off, as along a sweep
                            let near = (reference.alpha2 * 1.2, reference.v * 0.9);
                            let (warm, ..) = p.newton(near, opts.tol).expect("warm Newton");
                            assert!(close(warm, reference.alpha2), "{p:?} warm: {warm}");
                            points += 1;
                            steps += n;
                        }
                    }
                }
            }
        }
        eprintln!(
            "{points} points, {:.1} Newton steps per cold solve",
            steps as f64 / points as f64
        );
    }
}
