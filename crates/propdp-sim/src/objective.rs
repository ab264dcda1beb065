//! The perturbed GLM objective every simulated estimator minimises,
//! F(θ) = Σᵢ ℓ(yᵢ, xᵢᵀθ) + (λ/2)‖θ‖² + σ bᵀθ, gradient Xᵀℓ' + λθ + σb, and
//! the choice of solver ([`Objective::minimize`]): damped Newton
//! ([`crate::newton`], O(nd² + d³) per step, a handful of steps) below
//! [`LBFGS_MIN_D`] features, L-BFGS ([`crate::lbfgs`], O(nd) per iteration,
//! tens to hundreds of iterations) from there, falling back to Newton if
//! L-BFGS fails (ill-conditioned, small-λ problems). Both stop at
//! ‖∇F‖₂/√d ≤ tol.

use nalgebra::{DMatrix, DVector};
use thiserror::Error;

use propdp_core::loss::Loss;

use crate::rows::{dot, dot4};

/// The objective to minimise.
pub struct Objective<'a> {
    /// The design row by row: Xᵀ (d × n), column i is the row xᵢ.
    pub xt: &'a DMatrix<f64>,
    /// Labels.
    pub y: &'a DVector<f64>,
    /// The per-sample loss.
    pub loss: Loss,
    /// Ridge λ.
    pub lambda: f64,
    /// Noise σ of the linear term.
    pub sigma: f64,
    /// The privacy noise vector b.
    pub b: &'a DVector<f64>,
}

/// Convergence report of one fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitReport {
    /// Newton steps or L-BFGS iterations taken.
    pub iterations: usize,
    /// ‖∇F(θ̂)‖₂/√d at the returned point.
    pub grad_norm: f64,
}

/// Why a fit failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum FitError {
    #[error("the fit did not reach ‖∇F‖/√d ≤ {tol:e} in {iterations} steps (final {grad_norm:e})")]
    /// The gradient tolerance was not met within the step cap.
    NotConverged {
        /// Steps taken.
        iterations: usize,
        /// Final ‖∇F‖/√d.
        grad_norm: f64,
        /// The tolerance.
        tol: f64,
    },
    #[error("Hessian not positive definite at step {iteration} (λ = 0 and too few active samples?)")]
    /// The Hessian was not positive definite.
    Singular {
        /// The Newton step.
        iteration: usize,
    },
    #[error("Newton's buffers of the rows ({bytes} bytes) could not be allocated")]
    /// Newton's two n × d buffers could not be allocated (asked for with
    /// `try_reserve_exact`: an error, not the allocator's abort).
    OutOfMemory {
        /// The size of one buffer in bytes.
        bytes: u128,
    },
}

/// The stopping rule of both solvers at iteration `it` with ‖∇F‖/√d =
/// `grad_norm`: converged at ≤ `tol`, else out of iterations at `max_iter`,
/// else go on (`None`).
pub(crate) fn stopping_rule(
    it: usize,
    max_iter: usize,
    grad_norm: f64,
    tol: f64,
) -> Option<Result<FitReport, FitError>> {
    if grad_norm <= tol {
        Some(Ok(FitReport {
            iterations: it,
            grad_norm,
        }))
    } else if it == max_iter {
        Some(Err(FitError::NotConverged {
            iterations: it,
            grad_norm,
            tol,
        }))
    } else {
        None
    }
}

/// Features from which [`Objective::minimize`] uses L-BFGS (measured:
/// `cargo bench -p propdp-sim --bench fit_crossover`).
pub const LBFGS_MIN_D: usize = 25;

impl Objective<'_> {
    pub(crate) fn value(&self, theta: &DVector<f64>) -> f64 {
        let r = self.xt.tr_mul(theta);
        let data: f64 = r
            .iter()
            .zip(self.y.iter())
            .map(|(&ri, &yi)| self.loss.eval(yi, ri).0)
            .sum();
        data + 0.5 * self.lambda * theta.norm_squared() + self.sigma * self.b.dot(theta)
    }

    /// F(θ) and ∇F(θ) in one pass over the rows, four at a time: xᵢᵀθ, then
    /// ℓ'ᵢ xᵢ added to the gradient while the rows are in cache — X is read
    /// from memory once per evaluation, not twice (Xθ, then Xᵀℓ'), which is
    /// what bounds a large fit, and θ and the gradient once per four rows.
    pub(crate) fn value_grad(&self, theta: &DVector<f64>) -> (f64, DVector<f64>) {
        let th = theta.as_slice();
        let d = th.len().max(1);
        let mut grad = DVector::zeros(th.len());
        let g = grad.as_mut_slice();
        let mut data = 0.0;
        // four rows at a time: θ and the gradient are loaded once per four rows
        let xs = self.xt.as_slice();
        let ys = self.y.as_slice();
        let quads = xs.len() / (4 * d);
        for (block, y4) in xs.chunks_exact(4 * d).zip(ys.chunks_exact(4)) {
            let (r0, rest) = block.split_at(d);
            let (r1, rest) = rest.split_at(d);
            let (r2, r3) = rest.split_at(d);
            let z = dot4([r0, r1, r2, r3], th);
            let mut a = [0.0; 4];
            for k in 0..4 {
                let (l, d1, _) = self.loss.eval(y4[k], z[k]);
                data += l;
                a[k] = d1;
            }
            for ((((gj, x0), x1), x2), x3) in g.iter_mut().zip(r0).zip(r1).zip(r2).zip(r3) {
                *gj += a[0] * x0 + a[1] * x1 + a[2] * x2 + a[3] * x3;
            }
        }
        for (row, &yi) in xs[quads * 4 * d..].chunks_exact(d).zip(&ys[quads * 4..]) {
            let (l, d1, _) = self.loss.eval(yi, dot(row, th));
            data += l;
            for (gj, &xj) in g.iter_mut().zip(row) {
                *gj += d1 * xj;
            }
        }
        let value = data + 0.5 * self.lambda * theta.norm_squared() + self.sigma * self.b.dot(theta);
        (value, grad + self.lambda * theta + self.sigma * self.b)
    }

    /// Minimise from θ = 0 until ‖∇F‖₂/√d ≤ `tol`: Newton (at most
    /// `max_iter` steps) below [`LBFGS_MIN_D`] features, else L-BFGS (at
    /// most 50·`max_iter` iterations) and Newton if that fails.
    pub fn minimize(&self, tol: f64, max_iter: usize) -> Result<(DVector<f64>, FitReport), FitError> {
        if self.xt.nrows() < LBFGS_MIN_D {
            return self.newton(tol, max_iter);
        }
        self.lbfgs(tol, 50 * max_iter).or_else(|_| self.newton(tol, max_iter))
    }
}
