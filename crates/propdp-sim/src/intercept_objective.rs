//! An unpenalised intercept for the static estimators (docs/theory.md
//! §2.6): [`InterceptObjective`], [`Objective`] with a constant feature
//! appended to the rows, minimised jointly by L-BFGS.

use nalgebra::DVector;

use crate::lbfgs::{Smooth, lbfgs};
use crate::objective::{FitError, FitReport, Objective};

/// [`Objective`] with an unpenalised intercept (docs/theory.md §2.6): rows
/// get a constant feature c, the fit is (θ, b) with field xᵢᵀθ + c·b, and
///
///   F(θ, b) = Σᵢ ℓ(yᵢ, xᵢᵀθ + c·b) + (λ/2)‖θ‖² + σ bᵀθ + σ ξ_b·b,
///
/// the intercept getting its own noise coordinate ξ_b (the noise vector of
/// the augmented row (xᵢ, c)) and no ridge. Minimised jointly by L-BFGS
/// over the d + 1 coordinates.
pub struct InterceptObjective<'a> {
    /// The objective of θ (rows, labels, loss, λ, σ, noise vector).
    pub base: &'a Objective<'a>,
    /// The constant feature c.
    pub c: f64,
    /// The intercept's noise coordinate ξ_b.
    pub noise: f64,
}

impl InterceptObjective<'_> {
    /// Minimise from (θ, b) = 0 until ‖∇F‖₂/√(d + 1) ≤ `tol`, in at most
    /// 50·`max_iter` L-BFGS iterations: (θ̂, b̂) and the report.
    pub fn minimize(&self, tol: f64, max_iter: usize) -> Result<(DVector<f64>, f64, FitReport), FitError> {
        let d = self.base.xt.nrows();
        let (x, report) = lbfgs(self, d + 1, tol, 50 * max_iter)?;
        Ok((x.rows(0, d).into_owned(), x[d], report))
    }
}

impl Smooth for InterceptObjective<'_> {
    fn value_grad(&self, x: &DVector<f64>) -> (f64, DVector<f64>) {
        let o = self.base;
        let d = o.xt.nrows();
        let theta = x.rows(0, d);
        let shift = self.c * x[d];
        let fields = o.xt.tr_mul(&theta);
        let mut d1 = DVector::zeros(fields.len());
        let mut data = 0.0;
        for ((g, &f), &y) in d1.iter_mut().zip(fields.iter()).zip(o.y.iter()) {
            let (l, dl, _) = o.loss.eval(y, f + shift);
            data += l;
            *g = dl;
        }
        let value = data + 0.5 * o.lambda * theta.norm_squared() + o.sigma * (o.b.dot(&theta) + self.noise * x[d]);
        let mut grad = DVector::zeros(d + 1);
        grad.rows_mut(0, d)
            .copy_from(&(o.xt * &d1 + o.lambda * theta + o.sigma * o.b));
        grad[d] = self.c * d1.sum() + o.sigma * self.noise;
        (value, grad)
    }
}
