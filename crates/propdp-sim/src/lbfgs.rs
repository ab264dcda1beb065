//! L-BFGS for [`Objective`], with a line search on the directional
//! derivative. One iteration costs O(nd) — xᵢᵀθ and ℓ'ᵢxᵢ in one pass over the rows — against
//! Newton's O(nd² + d³) per step.
//!
//! Written by hand rather than with argmin's `LBFGS`: its line searches
//! judge steps by F, whose round-off (about n·1e-16 for a summed loss) hides
//! the decrease of the last steps, so it stalled at ‖∇F‖/√d ≈ 3e-9 on every
//! fit tried (tolerance 1e-9), and spent ~25 evaluations per iteration there.
//! Here F is convex, so a step whose directional derivative φ'(t) = ∇F(θ +
//! tp)ᵀp lies in [−0.9|φ'(0)|, 0] decreases F and satisfies the strong Wolfe
//! curvature condition without looking at F; past the minimum along p
//! (φ'(t) > 0) the Armijo test on F decides, or, when F cannot resolve the
//! predicted decrease, the trapezoid estimate t(φ'(0) + φ'(t))/2 < 0
//! (exact for a quadratic). Otherwise the step is bracketed and refined by
//! safeguarded secant steps on φ'.
//!
//! # References
//! - Nocedal, Wright (2006), *Numerical Optimization*, §7.2 (two-loop
//!   recursion), §3.5 (line search and the Wolfe conditions).

use std::collections::VecDeque;

use nalgebra::DVector;

use crate::objective::{FitError, FitReport, Objective, stopping_rule};

/// Correction pairs kept.
const MEMORY: usize = 10;
/// Strong Wolfe curvature constant.
const C2: f64 = 0.9;
/// Armijo constant.
const C1: f64 = 1e-4;
/// Most derivative evaluations in one line search.
const MAX_PROBES: usize = 40;

/// A smooth convex function to minimise: its value and gradient at a point.
pub(crate) trait Smooth {
    /// F(x) and ∇F(x).
    fn value_grad(&self, x: &DVector<f64>) -> (f64, DVector<f64>);
}

impl Smooth for Objective<'_> {
    fn value_grad(&self, x: &DVector<f64>) -> (f64, DVector<f64>) {
        Objective::value_grad(self, x)
    }
}

impl Objective<'_> {
    /// Minimise from θ = 0 by L-BFGS until ‖∇F‖₂/√d ≤ `tol`, in at most
    /// `max_iter` iterations.
    pub fn lbfgs(&self, tol: f64, max_iter: usize) -> Result<(DVector<f64>, FitReport), FitError> {
        lbfgs(self, self.xt.nrows(), tol, max_iter)
    }
}

/// Minimise `obj` over ℝ^`d` from 0 by L-BFGS until ‖∇F‖₂/√d ≤ `tol`, in
/// at most `max_iter` iterations.
pub(crate) fn lbfgs<S: Smooth>(
    obj: &S,
    d: usize,
    tol: f64,
    max_iter: usize,
) -> Result<(DVector<f64>, FitReport), FitError> {
    let sqrt_d = (d as f64).sqrt();
    let mut theta = DVector::zeros(d);
    let (mut f, mut g) = obj.value_grad(&theta);
    let mut pairs: VecDeque<(DVector<f64>, DVector<f64>, f64)> = VecDeque::with_capacity(MEMORY);
    for it in 0..=max_iter {
        let gn = g.norm() / sqrt_d;
        if let Some(verdict) = stopping_rule(it, max_iter, gn, tol) {
            return verdict.map(|report| (theta, report));
        }
        let mut p = direction(&g, &pairs);
        let mut slope = g.dot(&p);
        if slope.is_nan() || slope >= 0.0 {
            pairs.clear();
            p = -&g / g.norm();
            slope = g.dot(&p);
        }
        let Some((t, f_t, g_t)) = line_search(obj, &theta, f, &p, slope) else {
            if pairs.is_empty() {
                return Err(FitError::NotConverged {
                    iterations: it,
                    grad_norm: gn,
                    tol,
                });
            }
            pairs.clear(); // a poor direction from old pairs: restart
            continue;
        };
        let s = t * &p;
        let y = &g_t - &g;
        let sy = s.dot(&y);
        if sy > f64::EPSILON * s.norm() * y.norm() {
            if pairs.len() == MEMORY {
                pairs.pop_front();
            }
            pairs.push_back((s, y, 1.0 / sy));
        }
        theta += t * &p;
        (f, g) = (f_t, g_t);
    }
    unreachable!("the loop returns at it == max_iter")
}

/// A step t along `p` from θ (F = `f`, φ'(0) = `slope` < 0) meeting the
/// conditions of the module docs, with F and ∇F there; `None` if none
/// is found in [`MAX_PROBES`] evaluations.
fn line_search<S: Smooth>(
    obj: &S,
    theta: &DVector<f64>,
    f: f64,
    p: &DVector<f64>,
    slope: f64,
) -> Option<(f64, f64, DVector<f64>)> {
    // bracket [lo, hi] of the minimum along p: φ'(lo) < 0 < φ'(hi)
    let (mut lo, mut d_lo) = (0.0, slope);
    let (mut hi, mut d_hi) = (f64::INFINITY, f64::NAN);
    let mut t = 1.0;
    for _ in 0..MAX_PROBES {
        let (f_t, g_t) = obj.value_grad(&(theta + t * p));
        let d_t = g_t.dot(p);
        if d_t <= 0.0 {
            if d_t >= -C2 * slope.abs() {
                return Some((t, f_t, g_t)); // decrease (convexity) and curvature
            }
            (lo, d_lo) = (t, d_t);
        } else {
            let unresolved = (t * slope).abs() <= 1e-10 * f.abs().max(1.0);
            let decrease = if unresolved {
                slope + d_t < 0.0 && d_t <= 0.5 * slope.abs()
            } else {
                f_t <= f + C1 * t * slope
            };
            if decrease && d_t <= C2 * slope.abs() {
                return Some((t, f_t, g_t));
            }
            (hi, d_hi) = (t, d_t);
        }
        t = if hi.is_infinite() {
            4.0 * t
        } else {
            // secant on φ', kept inside the middle 80% of the bracket
            let secant = lo + (hi - lo) * (-d_lo) / (d_hi - d_lo);
            secant.clamp(lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo))
        };
    }
    None
}

/// −H∇F by the two-loop recursion (H₀ = γI, γ = sᵀy/yᵀy of the last
/// pair; without pairs a unit-length steepest-descent step).
fn direction(g: &DVector<f64>, pairs: &VecDeque<(DVector<f64>, DVector<f64>, f64)>) -> DVector<f64> {
    let Some((s_last, y_last, _)) = pairs.back() else {
        return -g / g.norm();
    };
    let mut q = g.clone();
    let mut alpha = vec![0.0; pairs.len()];
    for (i, (s, y, rho)) in pairs.iter().enumerate().rev() {
        alpha[i] = rho * s.dot(&q);
        q.axpy(-alpha[i], y, 1.0);
    }
    q *= s_last.dot(y_last) / y_last.norm_squared();
    for (i, (s, y, rho)) in pairs.iter().enumerate() {
        let beta = rho * y.dot(&q);
        q.axpy(alpha[i] - beta, s, 1.0);
    }
    -q
}
