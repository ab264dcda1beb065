//! A public feature covariance: rows x ~ N(0, Σ/d) with Σ known (from
//! public data, a design, or a published population), for which the
//! isotropic intervals would be wrong. The fit is made in Σ's whitened
//! coordinates, x' = Σ^{-1/2}x ~ N(0, I/d), where the isotropic theory
//! holds exactly; the coefficients there are θ'* = Σ^{1/2}θ*, so
//!
//!   θ*_j = ⟨Σ^{-1/2}e_j, θ'*⟩,  ⟨a, θ*⟩ = ⟨Σ^{-1/2}a, θ'*⟩,
//!
//! and every interval for θ* is a contrast of the whitened fit (whose
//! delta-method width carries α̂'s error). The released estimate in the
//! rows' own coordinates is θ̂ = Σ^{-1/2}θ̂' (post-processing). Whitening is
//! a public map of each row, so the mechanism's guarantee is unchanged; the
//! fit it makes is the private ridge of the whitened problem — in the rows'
//! coordinates a generalised ridge with penalty (λ/2)θᵀΣθ, and the row bound
//! ‖Σ^{-1/2}x‖ ≤ R — not the plain ridge (λ/2)‖θ‖², whose debiasing
//! m̂⁻¹(λΣ⁻¹ + V̂)θ̂ needs the data-dependent V̂ and q̂ under Σ, which would
//! each cost a private release (docs/inference.md).
//!
//! # References
//! - Celentano, Montanari, Wei (2023), *The Lasso with general Gaussian
//!   designs with applications to hypothesis testing*, AoS (inference
//!   under a known Σ by reduction to the isotropic design).

use nalgebra::{DMatrix, SymmetricEigen};

use crate::error::Argument;

/// Eigenvalues of Σ below this fraction of its largest are refused: Σ^{-1/2}
/// would amplify the rows' rounding beyond what the intervals can carry.
pub const MIN_CONDITION: f64 = 1e-10;

/// Σ^{-1/2} of a public covariance.
#[derive(Debug, Clone, PartialEq)]
pub struct Whitening {
    w: DMatrix<f64>,
}

impl Whitening {
    /// From Σ, d × d row-major (symmetric positive definite), or the
    /// argument `covariance` at fault.
    pub fn new(sigma: &[f64], d: usize) -> Result<Self, Argument> {
        let bad = |text: String| Argument::new("covariance", text);
        if sigma.len() != d * d {
            return Err(bad(format!(
                " has {} entries; a {d} × {d} matrix (one row and column per feature) has {}",
                sigma.len(),
                d * d
            )));
        }
        if let Some(i) = sigma.iter().position(|v| !v.is_finite()) {
            return Err(bad(format!("[{}, {}] = {} is not finite", i / d, i % d, sigma[i])));
        }
        let m = DMatrix::from_row_slice(d, d, sigma);
        let scale = m.amax().max(f64::MIN_POSITIVE);
        for i in 0..d {
            for j in 0..i {
                if (m[(i, j)] - m[(j, i)]).abs() > 1e-9 * scale {
                    return Err(bad(format!(
                        " is not symmetric: [{i}, {j}] = {} but [{j}, {i}] = {}",
                        m[(i, j)],
                        m[(j, i)]
                    )));
                }
            }
        }
        let eig = SymmetricEigen::new(m);
        let (lo, hi) = eig
            .eigenvalues
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        if !(hi > 0.0 && lo > MIN_CONDITION * hi) {
            return Err(bad(format!(
                " is not positive definite enough to whiten: eigenvalues from {lo:e} to {hi:e} (allowed: all above \
                 {MIN_CONDITION:e} × the largest)"
            )));
        }
        let inv_sqrt = eig.eigenvalues.map(|v| 1.0 / v.sqrt());
        let w = &eig.eigenvectors * DMatrix::from_diagonal(&inv_sqrt) * eig.eigenvectors.transpose();
        Ok(Whitening { w })
    }

    /// Σ^{-1/2}v.
    pub fn apply(&self, v: &[f64]) -> Vec<f64> {
        (&self.w * nalgebra::DVector::from_column_slice(v))
            .iter()
            .copied()
            .collect()
    }

    /// The n rows (row-major) whitened: Σ^{-1/2}x per row.
    pub fn rows(&self, rows: &[f64], d: usize) -> Vec<f64> {
        let x = DMatrix::from_row_slice(rows.len() / d, d, rows);
        // (XΣ^{-1/2})ᵀ = Σ^{-1/2}Xᵀ, column-major: row-major XΣ^{-1/2}
        (&self.w * x.transpose()).as_slice().to_vec()
    }

    /// Row j of Σ^{-1/2} (= Σ^{-1/2}e_j: Σ^{-1/2} is symmetric).
    pub fn row(&self, j: usize) -> Vec<f64> {
        self.w.row(j).iter().copied().collect()
    }
}
