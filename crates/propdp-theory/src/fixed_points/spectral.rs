//! The static systems with a feature covariance Σ (docs/theory.md §2.4): the
//! regulariser side over the atoms of Σ's spectrum, and the Huber system
//! closed on it.
//!
//! With u = Σ^{1/2}θ the loss sees isotropic features, so the loss side of
//! §2 holds in u with the teacher field's variance ρ = s²Σ_k w_k ω_k e_k in
//! place of s², and the overlaps are those of u: m = u*ᵀû/d, q = ûᵀû/d.
//! The regulariser becomes λu²/(2ω_k) + σbu/√ω_k per coordinate of atom k,
//! whose scalar problem is closed form; with D_k = λ + V̂ω_k and ⟨·⟩ the
//! w-weighted mean over atoms,
//!
//!   V = ⟨ω/D⟩,   m = m̂s²⟨ω²e/D⟩,   q = ⟨(m̂²s²ω³e + q̂ω² + σ²ω)/D²⟩,
//!
//! and in parameter space m₀ = θ̂ᵀθ*/d = m̂s²⟨ωe/D⟩,
//! q₀ = ‖θ̂‖²/d = ⟨(m̂²s²ω²e + q̂ω + σ²)/D²⟩, θ̂ᵀb/d = −σ⟨1/D⟩. With one atom
//! (ω = e = 1) these are §2's m = m̂s²V, q = (m̂²s² + q̂ + σ²)V², V = 1/(λ + V̂).
//!
//! *Huber.* The loss side depends on the prediction error α_p² = q − 2m + ρ
//! and V only: with z = ε + α_pG, P = P(|z| ≤ M(1 + V)),
//! β² = E[clip(z/(1 + V), ±M)²], it gives V̂ = m̂ = P/(δ(1 + V)) and
//! q̂ = β²/δ. The system in (α_p², V) is solved as §2.1's bracketed method:
//! for fixed α_p², V is the root of V − ⟨ω/(λ + ω·P/(δ(1 + V)))⟩ in
//! (0, 1/λ]; then α_p² = Ψ(α_p²) = q − 2m + ρ is bracketed from 0 up
//! (smallest root, the physical branch) and polished by Brent. With one atom
//! this is (H1)–(H2).
//!
//! # References
//! - B. Loureiro et al., "Learning curves of generic features maps for
//!   realistic datasets with a teacher-student model", NeurIPS (2021).
//! - C. Thrampoulidis, E. Abbasi, B. Hassibi, "Precise error analysis of
//!   regularized M-estimators in high dimensions", IEEE Trans. Inf. Theory (2018).

use propdp_core::config::FixedPointOptions;
use propdp_core::covariance::{Atom, Covariance};
use propdp_core::metrics::{self, Metrics};
use propdp_core::record::SolverReport;

use crate::fixed_points::huber::{HuberError, HuberParams, HuberState};
use crate::fixed_points::noise::truncated_probability;
use crate::numerics::roots::brent;

/// The regulariser side of one point over a spectrum.
#[derive(Debug, Clone, Copy)]
pub struct Regulariser<'a> {
    /// The atoms (normalised).
    pub atoms: &'a [Atom],
    /// Prior energy s².
    pub s2: f64,
    /// Ridge λ.
    pub lambda: f64,
    /// Noise σ of the linear term.
    pub sigma: f64,
}

/// The overlaps the regulariser side returns for given conjugates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overlaps {
    /// m = u*ᵀû/d (prediction space).
    pub m: f64,
    /// q = ûᵀû/d.
    pub q: f64,
    /// The response V = ⟨ω/D⟩.
    pub v: f64,
    /// m₀ = θ̂ᵀθ*/d (parameter space).
    pub m0: f64,
    /// q₀ = ‖θ̂‖²/d.
    pub q0: f64,
    /// ⟨1/D⟩: θ̂ᵀb/d = −σ⟨1/D⟩.
    pub inv: f64,
}

impl<'a> Regulariser<'a> {
    /// The regulariser side of `cov` at (s², λ, σ).
    pub fn new(cov: &'a Covariance, s2: f64, lambda: f64, sigma: f64) -> Self {
        Regulariser {
            atoms: cov.atoms(),
            s2,
            lambda,
            sigma,
        }
    }

    /// ρ = s²⟨ωe⟩, the variance of the teacher field.
    pub fn rho(&self) -> f64 {
        self.s2
            * self
                .atoms
                .iter()
                .map(|a| a.weight * a.eigenvalue * a.teacher)
                .sum::<f64>()
    }

    /// V = ⟨ω/(λ + V̂ω)⟩ alone.
    pub fn response(&self, vh: f64) -> f64 {
        self.atoms
            .iter()
            .map(|a| a.weight * a.eigenvalue / (self.lambda + vh * a.eigenvalue))
            .sum()
    }

    /// Every overlap at conjugates (m̂, q̂, V̂).
    pub fn overlaps(&self, mh: f64, qh: f64, vh: f64) -> Overlaps {
        let (s2, s) = (self.s2, self.sigma * self.sigma);
        let mut o = Overlaps {
            m: 0.0,
            q: 0.0,
            v: 0.0,
            m0: 0.0,
            q0: 0.0,
            inv: 0.0,
        };
        for a in self.atoms {
            let (w, om, e) = (a.weight, a.eigenvalue, a.teacher);
            let d = self.lambda + vh * om;
            let d2 = d * d;
            let signal = mh * mh * s2 * e;
            o.v += w * om / d;
            o.m += w * mh * s2 * om * om * e / d;
            o.q += w * om * (signal * om * om + qh * om + s) / d2;
            o.m0 += w * mh * s2 * om * e / d;
            o.q0 += w * (signal * om * om + qh * om + s) / d2;
            o.inv += w / d;
        }
        o
    }

    /// ∂(m, q, V)/∂(m̂, q̂, V̂): rows m, q, V; columns m̂, q̂, V̂.
    pub fn jacobian(&self, mh: f64, qh: f64, vh: f64) -> [[f64; 3]; 3] {
        let (s2, s) = (self.s2, self.sigma * self.sigma);
        let mut j = [[0.0; 3]; 3];
        for a in self.atoms {
            let (w, om, e) = (a.weight, a.eigenvalue, a.teacher);
            let d = self.lambda + vh * om;
            let (d2, d3) = (d * d, d * d * d);
            j[0][0] += w * s2 * om * om * e / d;
            j[0][2] -= w * mh * s2 * om * om * om * e / d2;
            j[1][0] += w * 2.0 * mh * s2 * om * om * om * e / d2;
            j[1][1] += w * om * om / d2;
            j[1][2] -= w * 2.0 * om * om * (mh * mh * s2 * om * om * e + qh * om + s) / d3;
            j[2][2] -= w * om * om / d2;
        }
        j
    }
}

/// The regulariser-side overlaps of a Huber solution (its conjugates
/// V̂ = m̂ = P/(δ(1 + V)), q̂ = β²/δ).
pub fn huber_overlaps(p: &HuberParams, cov: &Covariance, st: &HuberState) -> Overlaps {
    let (prob, beta2) = p.loss_side(st.alpha2, st.v);
    let vh = prob / (p.delta * (1.0 + st.v));
    Regulariser::new(cov, p.s2, p.lambda, p.sigma).overlaps(vh, beta2 / p.delta, vh)
}

/// V at a given α_p²: the root of V − ⟨ω/(λ + ωP/(δ(1 + V)))⟩.
fn huber_response(p: &HuberParams, reg: &Regulariser, alpha2: f64) -> Result<f64, HuberError> {
    let h = |v: f64| {
        let prob = truncated_probability(&p.noise, alpha2, p.huber_m * (1.0 + v));
        v - reg.response(prob / (p.delta * (1.0 + v)))
    };
    let no = |why: &str| HuberError::NoSolution {
        params: *p,
        reason: why.to_string(),
    };
    let hi = if p.lambda > 0.0 {
        1.0 / p.lambda
    } else {
        let mut hi: f64 = 1.0;
        while h(hi) <= 0.0 {
            hi *= 4.0;
            if hi > 1e16 {
                return Err(no("response V diverges: no root of V = ⟨ω/D⟩"));
            }
        }
        hi
    };
    if h(hi) <= 0.0 {
        return Ok(hi);
    }
    brent(0.0, hi, h, 1e-15, 200)
        .map(|(v, _)| v)
        .ok_or_else(|| no("V = ⟨ω/D⟩ not bracketed"))
}

/// α_p² − Ψ(α_p²) and V at α_p².
fn huber_gap(p: &HuberParams, reg: &Regulariser, rho: f64, alpha2: f64) -> Result<(f64, f64), HuberError> {
    let v = huber_response(p, reg, alpha2)?;
    let (prob, beta2) = p.loss_side(alpha2, v);
    let vh = prob / (p.delta * (1.0 + v));
    let o = reg.overlaps(vh, beta2 / p.delta, vh);
    Ok((alpha2 - (o.q - 2.0 * o.m + rho), v))
}

/// Solve the Huber system with a covariance (module docs). The state's
/// `alpha2` is the prediction error α_p².
///
/// ```
/// use propdp_core::{NoiseLaw, config::SolverOptions, covariance::Covariance};
/// use propdp_theory::fixed_points::{huber::HuberParams, spectral};
/// let cov = Covariance::from_columns(&[3.0, 0.5], &[0.25, 0.75], &[1.0, 1.0], "c").unwrap().unwrap();
/// let p = HuberParams { delta: 0.5, s2: 1.0, huber_m: 1.0, noise: NoiseLaw::Gaussian { sd: 0.5 }, lambda: 0.5, sigma: 1.0 };
/// let (st, rep) = spectral::solve_huber(&p, &cov, &SolverOptions::default().fixed_point()).unwrap();
/// assert!(rep.converged && rep.residual < 1e-9 && st.alpha2 > 0.0);
/// ```
pub fn solve_huber(
    p: &HuberParams,
    cov: &Covariance,
    opts: &FixedPointOptions,
) -> Result<(HuberState, SolverReport), HuberError> {
    if p.lambda == 0.0 && p.sigma > 0.0 {
        return Err(HuberError::NoSolution {
            params: *p,
            reason: "λ = 0 with σ > 0: the perturbed objective is unbounded below".into(),
        });
    }
    if p.lambda == 0.0 && p.delta >= 1.0 {
        return Err(HuberError::NoSolution {
            params: *p,
            reason: "λ = 0 with δ ≥ 1: the unregularized Huber estimator interpolates (V → ∞)".into(),
        });
    }
    let reg = Regulariser::new(cov, p.s2, p.lambda, p.sigma);
    let rho = reg.rho();
    let gap = |a: f64| huber_gap(p, &reg, rho, a);
    let (g0, _) = gap(0.0)?;
    let (alpha2, iterations) = if g0 >= 0.0 {
        (0.0, 0)
    } else {
        let (mut lo, mut hi, mut scans) = (0.0, -g0, 0);
        while gap(hi)?.0 < 0.0 {
            scans += 1;
            if scans > opts.max_iter.min(200) {
                return Err(HuberError::NoSolution {
                    params: *p,
                    reason: "α_p² = Ψ(α_p²) has no root below 2^200·Ψ(0): the error diverges".into(),
                });
            }
            lo = hi;
            hi *= 2.0;
        }
        let f = |a: f64| gap(a).map_or(f64::NAN, |g| g.0);
        let (a, it) =
            brent(lo, hi, f, (opts.tol * 1e-3).max(1e-15), opts.max_iter).ok_or(HuberError::NotConverged {
                params: *p,
                iterations: opts.max_iter,
                residual: f64::NAN,
            })?;
        (a, scans + it)
    };
    let (g, v) = gap(alpha2)?;
    let (prob, beta2) = p.loss_side(alpha2, v);
    // relative residuals of both equations
    let r1 = g.abs() / alpha2.max(1e-12);
    let r2 = (v - reg.response(prob / (p.delta * (1.0 + v)))).abs() / v;
    let residual = r1.max(r2);
    let report = SolverReport {
        converged: residual <= opts.tol,
        iterations,
        residual,
        ..Default::default()
    };
    if !report.converged {
        return Err(HuberError::NotConverged {
            params: *p,
            iterations,
            residual,
        });
    }
    Ok((HuberState { alpha2, v, beta2 }, report))
}

/// Metrics of a Huber solution with a covariance; `tau` > 0 gives output
/// perturbation (the state is then the σ = 0 solution): θ̂ + τb adds τ² to
/// the parameter-space error and τ²⟨ω⟩ = τ² to the prediction error.
pub fn huber_metrics(p: &HuberParams, cov: &Covariance, st: &HuberState, tau: f64) -> Metrics {
    let o = huber_overlaps(p, cov, st);
    let t2 = tau * tau;
    let est_err2 = o.q0 - 2.0 * o.m0 + p.s2 + t2;
    let pred_err2 = st.alpha2 + t2;
    let mut out = Metrics::new();
    out.insert(metrics::EST_ERR2.into(), est_err2);
    out.insert(metrics::EST_ERR.into(), est_err2.max(0.0).sqrt());
    out.insert(metrics::PRED_ERR2.into(), pred_err2);
    out.insert(metrics::OVERLAP.into(), o.m0);
    out.insert(metrics::BIAS_FACTOR.into(), o.m0 / p.s2);
    out.insert(metrics::NORM2.into(), o.q0 + t2);
    out.insert(
        metrics::NOISE_CORR.into(),
        if tau > 0.0 { tau } else { 0.0 - p.sigma * o.inv },
    );
    out.insert(
        metrics::TRAIN_RESID_TRUNC.into(),
        if tau > 0.0 {
            crate::fixed_points::huber::output_train_resid_trunc(p, st, tau)
        } else {
            st.beta2
        },
    );
    if let Some(var) = p.noise.variance() {
        out.insert(metrics::TEST_MSE.into(), var + pred_err2);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use propdp_core::NoiseLaw;

    /// Two atoms of eigenvalue 1 with teacher energies 3/2 and 1/2 are the
    /// isotropic problem (every sum depends on e only through ⟨ωᵏe⟩ = 1)
    /// taken through the spectral code: the same solution as (H1)–(H2) to 1e-9.
    #[test]
    fn a_split_teacher_over_equal_eigenvalues_is_the_isotropic_huber_system() {
        let cov = Covariance::from_columns(&[1.0, 1.0], &[0.5, 0.5], &[1.5, 0.5], "c")
            .unwrap()
            .unwrap();
        let opts = FixedPointOptions {
            tol: 1e-12,
            max_iter: 500,
        };
        for (delta, lambda, sigma, m) in [(0.5, 1.0, 0.0, 1.0), (2.0, 0.1, 1.0, 0.5), (0.3, 0.0, 0.0, 2.0)] {
            let p = HuberParams {
                delta,
                s2: 1.0,
                huber_m: m,
                noise: NoiseLaw::Gaussian { sd: 0.5 },
                lambda,
                sigma,
            };
            let (iso, _) = crate::fixed_points::huber::solve(&p, &opts, None).unwrap();
            let (spec, _) = solve_huber(&p, &cov, &opts).unwrap();
            assert!(
                (iso.alpha2 - spec.alpha2).abs() <= 1e-9 * iso.alpha2 && (iso.v - spec.v).abs() <= 1e-9 * iso.v,
                "{p:?}: isotropic {iso:?} vs spectral {spec:?}"
            );
            for tau in [0.0, 0.3] {
                let a = crate::fixed_points::huber::metrics(&p, &iso, tau);
                let b = huber_metrics(&p, &cov, &spec, tau);
                for (k, v) in &a {
                    assert!((v - b[k]).abs() <= 1e-8 * (1.0 + v.abs()), "{k}: {v} vs {}", b[k]);
                }
            }
        }
    }

    /// The analytic Jacobian of the regulariser side against central differences.
    #[test]
    fn regulariser_jacobian_matches_finite_differences() {
        let cov = Covariance::power_law(1.0, 50.0, 20, propdp_core::covariance::TeacherShape::Aligned)
            .unwrap()
            .unwrap();
        let reg = Regulariser::new(&cov, 2.0, 0.3, 0.7);
        let x = [0.8, 1.3, 0.6];
        let j = reg.jacobian(x[0], x[1], x[2]);
        let f = |x: [f64; 3]| {
            let o = reg.overlaps(x[0], x[1], x[2]);
            [o.m, o.q, o.v]
        };
        for c in 0..3 {
            let h = 1e-6;
            let (mut xp, mut xm) = (x, x);
            xp[c] += h;
            xm[c] -= h;
            let (fp, fm) = (f(xp), f(xm));
            for r in 0..3 {
                let fd = (fp[r] - fm[r]) / (2.0 * h);
                assert!(
                    (j[r][c] - fd).abs() < 1e-7 * (1.0 + fd.abs()),
                    "({r},{c}): {} vs {fd}",
                    j[r][c]
                );
            }
        }
    }
}
