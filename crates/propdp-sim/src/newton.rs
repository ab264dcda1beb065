//! Damped Newton's method for the perturbed GLM objective
//! F(θ) = Σᵢ ℓ(yᵢ, xᵢᵀθ) + (λ/2)‖θ‖² + σ bᵀθ:
//! gradient Xᵀℓ' + λθ + σb, Hessian Xᵀ diag(ℓ'') X + λI (nalgebra Cholesky),
//! Armijo backtracking on F. Each step costs O(nd² + d³); at the sizes of the
//! tests (d ≤ 1000) it converges in ~5–15 steps, where L-BFGS would need
//! hundreds of O(nd) steps on these ill-conditioned (small λ) problems.

use nalgebra::{DMatrix, DVector};
use thiserror::Error;

use propdp_core::loss::Loss;

/// The objective to minimise.
pub struct Objective<'a> {
    /// Rows (n × d).
    pub x: &'a DMatrix<f64>,
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
    /// Newton steps taken.
    pub iterations: usize,
    /// ‖∇F(θ̂)‖₂/√d at the returned point.
    pub grad_norm: f64,
}

/// Why a fit failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum FitError {
    #[error("Newton did not reach ‖∇F‖/√d ≤ {tol:e} in {iterations} steps (final {grad_norm:e})")]
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
}

impl Objective<'_> {
    fn value(&self, theta: &DVector<f64>) -> f64 {
        let r = self.x * theta;
        let data: f64 = r
            .iter()
            .zip(self.y.iter())
            .map(|(&ri, &yi)| self.loss.eval(yi, ri).0)
            .sum();
        data + 0.5 * self.lambda * theta.norm_squared() + self.sigma * self.b.dot(theta)
    }

    /// Minimise from θ = 0 until ‖∇F‖₂/√d ≤ `tol`.
    pub fn minimize(&self, tol: f64, max_iter: usize) -> Result<(DVector<f64>, FitReport), FitError> {
        let (n, d) = self.x.shape();
        let sqrt_d = (d as f64).sqrt();
        let mut theta = DVector::zeros(d);
        let mut f = self.value(&theta);
        // Hessian buffers: rows of X scaled by √ℓ'', its transpose, and H.
        // H = (Xs)ᵀXs via an explicit transpose and `gemm` (matrixmultiply's
        // blocked kernel): 7× faster than `tr_mul`'s column dot products.
        let mut xs = DMatrix::zeros(n, d);
        let mut xst = DMatrix::zeros(d, n);
        let mut h = DMatrix::zeros(d, d);
        for it in 0..=max_iter {
            let r = self.x * &theta;
            let (mut g1, mut w) = (DVector::zeros(n), DVector::zeros(n));
            for i in 0..n {
                let (_, d1, d2) = self.loss.eval(self.y[i], r[i]);
                g1[i] = d1;
                w[i] = d2.sqrt();
            }
            let grad = self.x.tr_mul(&g1) + self.lambda * &theta + self.sigma * self.b;
            let gn = grad.norm() / sqrt_d;
            if gn <= tol {
                return Ok((
                    theta,
                    FitReport {
                        iterations: it,
                        grad_norm: gn,
                    },
                ));
            }
            if it == max_iter {
                return Err(FitError::NotConverged {
                    iterations: it,
                    grad_norm: gn,
                    tol,
                });
            }
            xs.copy_from(self.x);
            for (mut row, &wi) in xs.row_iter_mut().zip(w.iter()) {
                row *= wi;
            }
            xs.transpose_to(&mut xst);
            h.gemm(1.0, &xst, &xs, 0.0);
            for j in 0..d {
                h[(j, j)] += self.lambda;
            }
            let chol = h.clone().cholesky().ok_or(FitError::Singular { iteration: it })?;
            let step = -chol.solve(&grad);
            let slope = grad.dot(&step);
            if -slope <= 1e-12 * f.abs().max(1.0) {
                // predicted decrease below the resolution of F: Armijo cannot
                // judge it; in this (quadratic) regime the full step is right
                theta += step;
                f = self.value(&theta);
                continue;
            }
            let mut t = 1.0;
            loop {
                let cand = &theta + t * &step;
                let fc = self.value(&cand);
                if fc <= f + 1e-4 * t * slope || t < 1e-10 {
                    theta = cand;
                    f = fc;
                    break;
                }
                t *= 0.5;
            }
        }
        unreachable!("loop returns at it == max_iter")
    }
}
