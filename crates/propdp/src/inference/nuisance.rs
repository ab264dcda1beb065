//! The nuisances of a private fit's law θ̂ ≈ α·θ* + σ_eff·Z (docs/theory.md
//! §6): the bias factor α and the effective noise σ_eff, estimated from what
//! the release makes public.
//!
//! - **Logistic** (and any model whose only unknown is the signal strength
//!   s² = ‖θ*‖²/d): the fixed point maps s² to the curve
//!   (q(s²), α(s²), σ_eff(s²)), q = E‖θ̂‖²/d. The released θ̂ gives
//!   q_obs = ‖θ̂‖²/d for free (post-processing); ŝ² solves q(s²) = q_obs by
//!   Brent's method in log s². Given θ*, q_obs fluctuates around q with
//!   variance (2σ_eff⁴ + 4α²s²σ_eff²)/d; α̂'s error is read off the curve
//!   between the roots of q = q_obs ± that standard deviation.
//! - **Logistic with an intercept** (docs/theory.md §6, *With an intercept*): the teacher's
//!   intercept b* is a second unknown, pinned by the released mean label
//!   ȳ: E[tanh((ν + b*)/2)] = ȳ with ν = xᵀθ* ~ N(0, s²) gives b*(s²)
//!   ([`teacher_intercept`]), and the curve is the fixed point with that
//!   teacher's intercept and a learned one. ȳ's standard deviation (its
//!   sampling and its release noise) is carried into α̂'s error by the
//!   roots of q = q_obs on the curves at ȳ ± one standard deviation.
//! - **Huber** with an unknown noise law: the fraction P of training
//!   residuals inside ±M and β² = mean ψ(rᵢ)², both at the public θ̂,
//!   released by the Gaussian mechanism. The fixed point's second equation
//!   is the Marchenko–Pastur resolvent of the rows with unclipped residuals,
//!   V·P/(1 + V) = δ(1 − λV); then α = 1 − λV and
//!   σ_eff² = V²(σ² + β²/δ) — no noise law needed.
//!
//! # References
//! - Sur, Candès (2019), *A modern maximum-likelihood theory for
//!   high-dimensional logistic regression*, PNAS (α, σ from the fixed point).
//! - Yadlowsky, Yun, McLean, D'Amour (2021), *SLOE: a faster method for
//!   statistical inference in high-dimensional logistic regression*
//!   (the signal strength from ‖θ̂‖², reparametrised).
//! - El Karoui (2018), *On the impact of predictor geometry on the
//!   performance of high-dimensional ridge-regularized generalized robust
//!   regression estimators*, PTRF (the M-estimation fixed point).

use propdp_core::parameters::MAX_INTERCEPT;
use propdp_core::problem::Intercept;
use propdp_core::{Algorithm, Model, Point};
use propdp_numerics::roots::brent_absolute;
use propdp_theory::solve::{State, TheorySolver};
use std::cell::RefCell;

use super::Refusal;

/// The smallest and largest signal strength s² the logistic search covers.
pub const S2_RANGE: (f64, f64) = (1e-3, 400.0);

/// A logistic fit is refused as near separable when ‖θ̂‖²/d exceeds
/// q(S2_SEPARABLE) by more than SEPARABLE_SDS of its standard deviations:
/// every s² ≤ S2_SEPARABLE (xᵀθ* of standard deviation up to 5.5) is
/// rejected, the labels are nearly a function of the rows, and θ*'s scale
/// is hardly determined by them. Where q(s²) is flat instead — the privacy
/// noise swamps the signal — ‖θ̂‖²/d lands above the curve's top by noise
/// alone (about one fit in ten at δ = 0.2, ε = 2 exceeds it by a standard
/// deviation); 4 standard deviations keep those (one in 3·10⁴), whose ŝ² is
/// weakly identified and whose interval carries α̂'s error (capped, see
/// [`super::MAX_RELATIVE_ERROR`]).
pub const S2_SEPARABLE: f64 = 30.0;

/// See [`S2_SEPARABLE`].
pub const SEPARABLE_SDS: f64 = 4.0;

/// Points of the log-s² grid on which q(s²)'s monotonicity is checked.
const GRID: usize = 17;

/// What the nuisance estimate delivers.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Nuisance {
    /// α̂.
    pub alpha: f64,
    /// The standard error of α̂.
    pub alpha_se: f64,
    /// σ̂_eff.
    pub sigma_eff: f64,
    /// ŝ², the signal strength ‖θ*‖²/d.
    pub s2: f64,
    /// The range of s² within one standard deviation of ‖θ̂‖²/d (logistic),
    /// or `None` (Huber: ŝ² follows from α̂ and σ̂_eff).
    pub s2_range: Option<(f64, f64)>,
    /// The RQMC standard error of σ̂_eff (DP-SGD's state evolution; 0 for
    /// the fixed points), carried into the intervals' width. The RQMC error
    /// of α̂ is in `alpha_se`.
    pub sigma_eff_se: f64,
}

/// RQMC points per scramble of the state evolution behind a DP-SGD
/// release's curve (its root search solves it some 30–60 times).
pub const DESCENT_POINTS: usize = 4096;

/// s² ↦ (q, α, σ_eff²) of the fixed point of one static release.
pub struct Curve<'a> {
    solver: &'a TheorySolver,
    delta: f64,
    model: Model,
    algorithm: Algorithm,
    /// The released mean label and its standard deviation: the fit learns
    /// an intercept and the teacher's is b*(s²) ([`teacher_intercept`]).
    mean_label: Option<(f64, f64)>,
    warm: RefCell<Option<State>>,
}

/// The mean label E[tanh((ν + b)/2)], ν ~ N(0, s²), of a logistic teacher
/// with intercept b on isotropic rows (increasing in b).
pub fn mean_label(s2: f64, b: f64) -> f64 {
    propdp_core::panels::normal_expect(b, s2.sqrt(), &[0.0], 1.0, |x| (0.5 * x).tanh())
}

/// The teacher's intercept b* with [`mean_label`]`(s², b*) = mean`, or
/// `None` when it lies beyond ±[`MAX_INTERCEPT`] (the theory's range).
pub fn teacher_intercept(s2: f64, mean: f64) -> Option<f64> {
    let f = |b: f64| mean_label(s2, b) - mean;
    if f(-MAX_INTERCEPT) > 0.0 || f(MAX_INTERCEPT) < 0.0 {
        return None;
    }
    brent_absolute(-MAX_INTERCEPT, MAX_INTERCEPT, f, 1e-12, 200)
}

/// The largest s² in [`S2_RANGE`] whose teacher's intercept for labels of
/// mean `mean` lies within ±[`MAX_INTERCEPT`] (|b*(s²)| grows with s²: a
/// stronger signal spreads the labels' probabilities towards 0 and 1), or
/// `None` when none does.
fn intercept_s2_max(mean: f64) -> Option<f64> {
    let (lo, hi) = S2_RANGE;
    let edge = |s2: f64| mean_label(s2, MAX_INTERCEPT.copysign(mean)).abs() - mean.abs();
    if edge(lo) < 0.0 {
        return None;
    }
    if edge(hi) >= 0.0 {
        return Some(hi);
    }
    // the lower end of the bracket's final step keeps |b*| within range
    brent_absolute(lo.ln(), hi.ln(), |u: f64| edge(u.exp()), 1e-10, 200).map(|u| (u.exp() * (1.0 - 1e-9)).max(lo))
}

impl<'a> Curve<'a> {
    /// The curve of `model` released by `algorithm` at aspect ratio `delta`.
    pub fn new(solver: &'a TheorySolver, delta: f64, model: Model, algorithm: Algorithm) -> Self {
        Curve {
            solver,
            delta,
            model,
            algorithm,
            mean_label: None,
            warm: RefCell::new(None),
        }
    }

    /// The curve of a fit that learns an intercept, the teacher's pinned by
    /// the released mean label (`mean`, with standard deviation `sd`).
    pub fn with_mean_label(self, mean: f64, sd: f64) -> Self {
        Curve {
            mean_label: Some((mean, sd)),
            ..self
        }
    }

    /// The point at s²: with the teacher's intercept b*(s²) and a learned
    /// one when the fit has an intercept.
    fn point(&self, s2: f64) -> crate::error::Result<Point> {
        let point = Point::new(self.delta, s2, self.model, self.algorithm)?;
        let Some((mean, _)) = self.mean_label else {
            return Ok(point);
        };
        let teacher = teacher_intercept(s2, mean).ok_or_else(|| {
            crate::error::Error::compute(format!(
                "no teacher's intercept within ±{MAX_INTERCEPT} gives labels of mean {mean:+.4} at s2 = {s2:e}"
            ))
        })?;
        Ok(point.with_intercept(Intercept { teacher, learned: true })?)
    }

    /// (q, α, σ_eff²) at s².
    pub(crate) fn at(&self, s2: f64) -> crate::error::Result<(f64, f64, f64)> {
        let point = self.point(s2)?;
        let warm = self.warm.borrow_mut().take();
        let (metrics, state) = self.solver.solve_light(&point, warm).map_err(|e| {
            crate::error::Error::compute(format!("the fixed point at s2 = {s2:e}, delta = {}: {e}", self.delta))
        })?;
        *self.warm.borrow_mut() = Some(state);
        let q = metrics[propdp_core::metrics::NORM2];
        // the state evolution reports the overlap m = αs² only
        let alpha = metrics
            .get(propdp_core::metrics::BIAS_FACTOR)
            .copied()
            .unwrap_or_else(|| metrics[propdp_core::metrics::OVERLAP] / s2);
        Ok((q, alpha, (q - alpha * alpha * s2).max(0.0)))
    }

    /// The RQMC standard errors of (α, σ_eff) at s², where the curve gave
    /// α and σ_eff² = `v` (DP-GD/DP-SGD's state evolution, from its
    /// replicates' spread at the last step; (0, 0) for the fixed points,
    /// solved to a residual far below them): se(α) = se(m)/s², and
    /// σ_eff² = q − α²s² by the delta method, the two errors added in
    /// quadrature.
    pub(crate) fn rqmc_errors(&self, s2: f64, alpha: f64, v: f64) -> crate::error::Result<(f64, f64)> {
        if self.algorithm.gradient_steps().is_none() {
            return Ok((0.0, 0.0));
        }
        let point = self.point(s2)?;
        let sol = self.solver.solve(&point, None).map_err(|e| {
            crate::error::Error::compute(format!(
                "the state evolution at s2 = {s2:e}, delta = {}: {e}",
                self.delta
            ))
        })?;
        let path = sol.per_step.expect("the state evolution reports every step");
        let last = |k: &str| path.stderr.get(k).and_then(|v| v.last().copied()).unwrap_or(0.0);
        let (se_m, se_q) = (last(propdp_core::metrics::OVERLAP), last(propdp_core::metrics::NORM2));
        let se_alpha = se_m / s2;
        let se_v = se_q.hypot(2.0 * alpha * s2 * se_alpha);
        Ok((se_alpha, se_v / (2.0 * v.sqrt()).max(f64::MIN_POSITIVE)))
    }

    /// The s² in `range` with q(s²) = `target` (q increasing there), the
    /// range's start where `target` lies below it (`Ok(None)` above it).
    fn root(&self, target: f64, range: (f64, f64), ends: (f64, f64)) -> crate::error::Result<Option<f64>> {
        if target <= ends.0 {
            return Ok(Some(range.0));
        }
        if target >= ends.1 {
            return Ok(None);
        }
        let failure = RefCell::new(None);
        let f = |u: f64| match self.at(u.exp()) {
            Ok((q, _, _)) => q - target,
            Err(e) => {
                failure.borrow_mut().get_or_insert(e);
                f64::NAN
            }
        };
        let found = brent_absolute(range.0.ln(), range.1.ln(), f, 1e-9, 200);
        if let Some(e) = failure.into_inner() {
            return Err(e);
        }
        let u = found.ok_or_else(|| {
            crate::error::Error::compute(format!(
                "the search for s2 with q(s2) = {target:e}: Brent's method found no root in {range:?}"
            ))
        })?;
        Ok(Some(u.exp()))
    }

    /// The nuisances at observed q_obs = ‖θ̂‖²/d with `d` features.
    pub(crate) fn estimate(&self, q_obs: f64, d: usize) -> crate::error::Result<Result<Nuisance, Refusal>> {
        let lo = S2_RANGE.0;
        // with an intercept, the signal strengths whose teacher's intercept is within the theory's range
        let hi = match self.mean_label {
            None => S2_RANGE.1,
            Some((mean, _)) => match intercept_s2_max(mean) {
                Some(hi) => hi,
                None => return Ok(Err(unbalanced(mean, lo))),
            },
        };
        let sd_at = |s2: f64, alpha: f64, v: f64| ((2.0 * v * v + 4.0 * alpha * alpha * s2 * v) / d as f64).sqrt();
        // q(s²) on a log grid: where it rises to a peak and falls after (small λ), a q_obs the
        // falling branch also reaches does not determine s²
        let mut grid = Vec::with_capacity(GRID);
        for k in 0..GRID {
            let s2 = lo * (hi / lo).powf(k as f64 / (GRID - 1) as f64);
            let (q, alpha, v) = self.at(s2)?;
            grid.push((s2, q, sd_at(s2, alpha, v)));
        }
        let peak = (0..GRID).fold(0, |best, k| if grid[k].1 > grid[best].1 { k } else { best });
        let (top, q_top, sd_top) = grid[peak];
        let q_end = grid[GRID - 1].1;
        if peak + 1 < GRID && q_obs + sd_top >= q_end {
            return Ok(Err(Refusal::new(
                super::Reason::Unidentified,
                format!(
                    "q(s²) = E‖θ̂‖²/d rises to {q_top:.4} at s² ≈ {top:.3} and falls to {q_end:.4} at s² = {hi}: the \
                     observed ‖θ̂‖²/d = {q_obs:.4} (standard deviation {sd_top:.4}) is reached on both sides, so the \
                     signal strength and the bias factor are not determined; raise lambda"
                ),
            )));
        }
        let range = (lo, top);
        let ends = (grid[0].1, q_top);
        let s2 = self.root(q_obs, range, ends)?.unwrap_or(top);
        let (_, alpha, v) = self.at(s2)?;
        let sd = sd_at(s2, alpha, v);
        if hi < S2_RANGE.1 && q_obs - SEPARABLE_SDS * sd > q_top {
            // beyond the curve's top, where a larger s² would need a larger teacher's intercept
            let mean = self.mean_label.map_or(0.0, |(m, _)| m);
            return Ok(Err(unbalanced(mean, hi)));
        }
        let s2_lo = self.root(q_obs - sd, range, ends)?.unwrap_or(top);
        let s2_hi = self.root(q_obs + sd, range, ends)?.unwrap_or(top);
        let q_sep = self.at(S2_SEPARABLE.min(top))?.0;
        if matches!(self.model, Model::Logistic) && q_obs - SEPARABLE_SDS * sd > q_sep {
            return Ok(Err(Refusal::new(
                super::Reason::NearSeparable,
                format!(
                    "‖θ̂‖²/d = {q_obs:.4} exceeds q = {q_sep:.4} at signal strength ‖θ*‖²/d = {S2_SEPARABLE} by more \
                     than {SEPARABLE_SDS} standard deviations ({sd:.4}): only a stronger signal fits, the labels are \
                     near a function of the rows (near separable), and θ*'s scale is hardly determined by them; raise \
                     lambda or use fewer features"
                ),
            )));
        }
        let (a_lo, a_hi) = (self.at(s2_hi)?.1, self.at(s2_lo)?.1);
        if alpha <= 0.0 {
            return Ok(Err(Refusal::new(
                super::Reason::Unidentified,
                format!("the bias factor α = {alpha:e} at ŝ² = {s2:.4} is not positive: θ̂ carries no sign of θ*"),
            )));
        }
        let (rqmc_alpha, rqmc_sigma) = self.rqmc_errors(s2, alpha, v)?;
        let label_alpha = self.label_error(q_obs, range, alpha)?;
        Ok(Ok(Nuisance {
            alpha,
            alpha_se: (0.5 * (a_hi - a_lo).abs()).hypot(rqmc_alpha).hypot(label_alpha),
            sigma_eff: v.sqrt(),
            s2,
            s2_range: Some((s2_lo, s2_hi)),
            sigma_eff_se: rqmc_sigma,
        }))
    }

    /// The error of α̂ from the released mean label's (the fit with an
    /// intercept; 0 without): half the spread of α at the roots of
    /// q = q_obs on the curves at ȳ ± its standard deviation.
    fn label_error(&self, q_obs: f64, range: (f64, f64), alpha: f64) -> crate::error::Result<f64> {
        let Some((mean, sd)) = self.mean_label else {
            return Ok(0.0);
        };
        let mut spread = [alpha; 2];
        for (k, shifted) in [mean - sd, mean + sd].into_iter().enumerate() {
            let shifted = shifted.clamp(-1.0 + 1e-12, 1.0 - 1e-12);
            let curve = Curve {
                mean_label: Some((shifted, sd)),
                warm: RefCell::new(None),
                ..*self
            };
            // a shifted mean may push the range's end beyond the intercept's limit: search within its own
            let hi = intercept_s2_max(shifted).map_or(range.0, |h| h.min(range.1));
            if hi <= range.0 {
                continue;
            }
            // its own ends: q_obs between them brackets the root
            let ends = (curve.at(range.0)?.0, curve.at(hi)?.0);
            let s2 = curve.root(q_obs, (range.0, hi), ends)?.unwrap_or(hi);
            spread[k] = curve.at(s2)?.1;
        }
        Ok(0.5 * (spread[1] - spread[0]).abs())
    }
}

/// The refusal of labels whose released mean no teacher's intercept within
/// ±[`MAX_INTERCEPT`] gives at signal strengths above `s2`.
fn unbalanced(mean: f64, s2: f64) -> Refusal {
    Refusal::new(
        super::Reason::UnbalancedLabels,
        format!(
            "the released mean label {mean:+.4} and ‖θ̂‖²/d need a teacher's intercept beyond ±{MAX_INTERCEPT} \
             (the theory's range) at every signal strength above s² = {s2:.3}: the labels are nearly all of one \
             class; rebalance them or fit without the rare class"
        ),
    )
}

/// V solving V·P/(1 + V) = δ(1 − λV), the positive root of
/// δλV² + (P − δ + δλ)V − δ = 0.
pub fn huber_v(p: f64, delta: f64, lambda: f64) -> f64 {
    let b = p - delta + delta * lambda;
    let disc = b * b + 4.0 * delta * delta * lambda;
    // the stable form of (−b + √disc)/(2δλ)
    2.0 * delta / (b + disc.sqrt())
}

/// The Huber nuisances from the released P̂ (fraction of the unperturbed
/// fit's residuals inside ±M) with its standard deviation and β̂² (their
/// mean clipped square), at objective noise σ and output noise τ (one of
/// them 0): σ_eff² = V²(σ² + β²/δ) + τ².
pub fn huber(
    (p, p_sd): (f64, f64),
    beta2: f64,
    delta: f64,
    lambda: f64,
    sigma: f64,
    tau: f64,
    q_obs: f64,
) -> Result<Nuisance, Refusal> {
    // below its own noise the released fraction says only "about none inside": there α̂ is
    // near 0 and the interval, however wide, keeps its level (its centre's error (α − α̂)θ*_j
    // is small beside σ_eff)
    let p = p.max(p_sd);
    if p <= 0.0 {
        return Err(Refusal::new(
            super::Reason::Unidentified,
            format!("the fraction of residuals inside ±M is {p:.4}, released without noise: every residual is clipped"),
        ));
    }
    let v = huber_v(p, delta, lambda);
    let alpha = 1.0 - lambda * v;
    // dα/dP by the implicit function: ∂/∂V of VP/(1+V) − δ(1 − λV) is P/(1+V)² + δλ
    let dv_dp = -(v / (1.0 + v)) / (p / (1.0 + v).powi(2) + delta * lambda);
    let sigma_eff2 = v * v * (sigma * sigma + beta2 / delta) + tau * tau;
    Ok(Nuisance {
        alpha,
        alpha_se: (lambda * dv_dp * p_sd).abs(),
        sigma_eff: sigma_eff2.sqrt(),
        s2: ((q_obs - sigma_eff2) / (alpha * alpha)).max(0.0),
        s2_range: None,
        sigma_eff_se: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mean label is tanh(b/2) without a signal, odd in b, and
    /// [`teacher_intercept`] inverts it; a signal pulls it towards 0.
    #[test]
    fn the_teacher_intercept_inverts_the_mean_label() {
        for b in [0.0, 0.7, 2.5, 9.0] {
            let flat = mean_label(1e-12, b) - (0.5 * b).tanh();
            assert!(flat.abs() < 1e-10, "{b}: {flat:e}");
            for s2 in [0.1, 4.0, 100.0] {
                let m = mean_label(s2, b);
                assert!((m + mean_label(s2, -b)).abs() < 1e-12, "odd: {s2} {b}");
                assert!(m.abs() <= (0.5 * b).tanh().abs() + 1e-15, "attenuated: {s2} {b}");
                let back = teacher_intercept(s2, m).expect("within range");
                assert!((back - b).abs() < 1e-8, "s2 {s2}: b {b} came back {back}");
            }
        }
        assert_eq!(teacher_intercept(1.0, 0.99999), None, "beyond ±10");
    }

    /// Labels nearly all of one class: no s² serves beyond tanh(5), the
    /// mean label at b* = 10 without a signal; below it the search's end is
    /// where b*(s²) reaches 10.
    #[test]
    fn the_search_ends_where_the_teacher_intercept_leaves_its_range() {
        assert_eq!(intercept_s2_max(0.99995), None);
        assert_eq!(intercept_s2_max(-0.99995), None);
        assert_eq!(intercept_s2_max(0.3), Some(S2_RANGE.1));
        let hi = intercept_s2_max(0.9).expect("served at small s²");
        assert!(hi < S2_RANGE.1, "{hi}");
        let b = teacher_intercept(hi, 0.9).expect("within range at the end");
        assert!((b - MAX_INTERCEPT).abs() < 1e-3, "b*(hi = {hi}) = {b}");
    }

    #[test]
    fn huber_v_solves_its_equation() {
        for (p, delta, lambda) in [(0.8, 0.5, 1.0), (0.3, 2.0, 0.01), (1.0, 1.0, 10.0)] {
            let v = huber_v(p, delta, lambda);
            let residual = v * p / (1.0 + v) - delta * (1.0 - lambda * v);
            assert!(
                v > 0.0 && residual.abs() < 1e-12,
                "{p} {delta} {lambda}: V = {v}, residual {residual:e}"
            );
        }
    }

    /// Least squares is Huber with every residual inside: V is the
    /// ridge resolvent of the Marchenko–Pastur law, 1 − λV its shrinkage,
    /// which the theory's Huber fixed point at a huge M must reproduce.
    #[test]
    fn huber_nuisances_match_the_fixed_point_when_nothing_is_clipped() {
        let (delta, lambda, sigma, s2, sd) = (0.5, 1.0, 0.5, 1.0, 0.3);
        let model = Model::Huber {
            huber_m: 1e3,
            noise: propdp_core::NoiseLaw::Gaussian { sd },
        };
        let point = Point::new(delta, s2, model, Algorithm::Objective { lambda, sigma }).unwrap();
        let (m, _) = TheorySolver::default().solve_light(&point, None).unwrap();
        let alpha_theory = m[propdp_core::metrics::BIAS_FACTOR];
        let v = huber_v(1.0, delta, lambda);
        assert!(
            (1.0 - lambda * v - alpha_theory).abs() < 1e-6,
            "{} vs {alpha_theory}",
            1.0 - lambda * v
        );
        // the prox residual of the squared loss is (ε + √e·Z)/(1 + V), e = est_err2: its mean
        // square is β², and V²(σ² + β²/δ) must be the fixed point's σ_eff² = q − α²s²
        let beta2 = (sd * sd + m[propdp_core::metrics::EST_ERR2]) / (1.0 + v).powi(2);
        let q = m[propdp_core::metrics::NORM2];
        let sigma_eff2 = q - alpha_theory * alpha_theory * s2;
        let ours = v * v * (sigma * sigma + beta2 / delta);
        assert!(
            (ours / sigma_eff2 - 1.0).abs() < 1e-5,
            "σ_eff²: {ours} vs the fixed point's {sigma_eff2}"
        );
    }
}
