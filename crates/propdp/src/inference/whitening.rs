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

/// Rows whitened at a time by [`Whitening::whiten`]: a d × 512 buffer.
pub const WHITEN_BLOCK: usize = 512;

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
        let mut out = rows.to_vec();
        self.whiten(&mut out, d);
        out
    }

    /// The n rows (row-major) whitened in place, [`WHITEN_BLOCK`] rows at a
    /// time: row-major n × d is column-major Xᵀ, and Σ^{-1/2}Xᵀ is
    /// computed a block of its columns at a time into a d × block buffer,
    /// the only memory beside the rows. Each value is the same dot product,
    /// summed in the same order, as in the whole product (a block keeps
    /// more than nalgebra's 5 columns, below which it leaves `gemm`).
    pub fn whiten(&self, rows: &mut [f64], d: usize) {
        let n = rows.len() / d;
        let mut start = 0;
        while start < n {
            // the last block takes a short remainder along, never ≤ 5 columns on its own
            let mut len = WHITEN_BLOCK.min(n - start);
            if n - start - len <= 5 {
                len = n - start;
            }
            let block = &mut rows[start * d..(start + len) * d];
            let xt = nalgebra::DMatrixView::from_slice(&*block, d, len);
            let out = &self.w * xt;
            block.copy_from_slice(out.as_slice());
            start += len;
        }
    }

    /// Row j of Σ^{-1/2} (= Σ^{-1/2}e_j: Σ^{-1/2} is symmetric).
    pub fn row(&self, j: usize) -> Vec<f64> {
        self.w.row(j).iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block by block in place is the whole product Σ^{-1/2}Xᵀ bit for bit,
    /// for n below one block, a remainder of 5 taken along and one of 6 on its own.
    #[test]
    fn whitening_in_place_is_the_whole_product_bit_for_bit() {
        let d = 40;
        let a = DMatrix::from_fn(d, d, |i, j| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4);
        let sigma = &a * a.transpose() + DMatrix::identity(d, d);
        let w = Whitening::new(sigma.transpose().as_slice(), d).unwrap();
        for n in [3, WHITEN_BLOCK + 5, 2 * WHITEN_BLOCK + 5, 2 * WHITEN_BLOCK + 6] {
            let rows: Vec<f64> = (0..n * d)
                .map(|k| ((k * 2654435761) % 1000) as f64 / 500.0 - 1.0)
                .collect();
            let whole = &w.w * DMatrix::from_row_slice(n, d, &rows).transpose();
            let mut blocks = rows.clone();
            w.whiten(&mut blocks, d);
            let same = whole
                .as_slice()
                .iter()
                .zip(&blocks)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "n = {n}");
        }
    }
}
