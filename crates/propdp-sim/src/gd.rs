//! DP full-batch gradient descent (docs/theory.md §1, §3):
//! θ₀ = 0, θ_{t+1} = θ_t − η(Xᵀℓ'(Xθ_t) + λθ_t + σ ξ_t), ξ_t ~ N(0, I_d) fresh;
//! and mini-batch DP-SGD (§3.1): a fresh Poisson batch B_t (each row with
//! probability q) and per-example gradients clipped to norm C,
//! θ_{t+1} = θ_t − η(Σ_{i∈B_t} clip_C(ℓ'ᵢ xᵢ) + λθ_t + σ ξ_t).

use nalgebra::{DMatrix, DVector};
use propdp_core::loss::Loss;
use rand::{Rng, RngExt};
use thiserror::Error;

use crate::data::fill_gaussian;
use crate::rows::dot;

/// Why a DP-GD run failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GdError {
    #[error("the descent (DP-GD/DP-SGD) diverged at step {step} (‖θ‖²/d = {norm2:e}); {advice}")]
    /// The iterates grew without bound (‖θ‖²/d non-finite or huge).
    Diverged {
        /// The step at which it was seen.
        step: usize,
        /// ‖θ_t‖²/d there.
        norm2: f64,
        /// What to change: σ when the privacy noise alone moves θ that far, η otherwise.
        advice: String,
    },
}

/// The descent's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Descent {
    /// The loss descended.
    pub loss: Loss,
    /// Ridge λ.
    pub lambda: f64,
    /// Gradient noise σ.
    pub sigma: f64,
    /// Step size η.
    pub eta: f64,
    /// Number of steps T.
    pub steps: usize,
    /// Poisson sample rate q (1: every row at every step, no draws).
    pub sample_rate: f64,
    /// Per-example clipping norm C (∞: none), applied to ‖ℓ'ᵢ xᵢ‖.
    pub clip: f64,
}

impl Descent {
    /// Run the descent; `observe(t, θ_t, train_loss_t)` is called for
    /// t = 0..=steps, where train_loss_t = (1/n) Σ ℓ(labelᵢ, (Xθ_t)ᵢ).
    /// `xt` is the design row by row (Xᵀ, d × n: column i is xᵢ); `labels`
    /// are yᵢ for standard losses and νᵢ = xᵢᵀθ* for conditional ones.
    pub fn run<R: Rng, F: FnMut(usize, &DVector<f64>, f64)>(
        &self,
        xt: &DMatrix<f64>,
        labels: &DVector<f64>,
        rng: &mut R,
        mut observe: F,
    ) -> Result<DVector<f64>, GdError> {
        let (d, n) = xt.shape();
        let mut theta = DVector::zeros(d);
        let row_norms: Vec<f64> = if self.clip.is_finite() {
            xt.column_iter().map(|row| row.norm()).collect()
        } else {
            Vec::new()
        };
        // buffers reused at every step: the loop allocates nothing
        let mut selected = vec![true; n];
        let (mut xi, mut grad) = (DVector::zeros(d), DVector::zeros(d));
        for t in 0..=self.steps {
            let last = t == self.steps;
            // the batch of this step (drawn before the pass; nothing else draws between)
            if !last && self.sample_rate < 1.0 {
                for s in selected.iter_mut() {
                    *s = rng.random_bool(self.sample_rate);
                }
            }
            // one pass over the rows: xᵢᵀθ, the loss, and clip_C(ℓ'ᵢ xᵢ) into the gradient,
            // where clip_C(ℓ'ᵢ xᵢ) = ℓ'ᵢ·min(1, C/(|ℓ'ᵢ|‖xᵢ‖)) xᵢ
            grad.fill(0.0);
            let (th, g) = (theta.as_slice(), grad.as_mut_slice());
            let mut loss = 0.0;
            for (i, row) in xt.as_slice().chunks_exact(d.max(1)).enumerate() {
                let (l, d1, _) = self.loss.eval(labels[i], dot(row, th));
                loss += l;
                if last || !selected[i] {
                    continue;
                }
                let norm = if self.clip.is_finite() {
                    d1.abs() * row_norms[i]
                } else {
                    0.0
                };
                let gi = if norm > self.clip { d1 * self.clip / norm } else { d1 };
                for (gj, &xj) in g.iter_mut().zip(row) {
                    *gj += gi * xj;
                }
            }
            let norm2 = theta.norm_squared() / d as f64;
            if !norm2.is_finite() || norm2 > 1e12 {
                // the noise alone adds (ησ)² per coordinate and step to ‖θ‖²/d
                let noise = (t + 1) as f64 * (self.eta * self.sigma).powi(2);
                let advice = if noise.is_nan() || noise >= 1e10 {
                    format!(
                        "the privacy noise alone moves θ by ησ = {:e} per coordinate and step: lower σ",
                        self.eta * self.sigma
                    )
                } else {
                    "lower η".to_string()
                };
                return Err(GdError::Diverged { step: t, norm2, advice });
            }
            observe(t, &theta, loss / n as f64);
            if last {
                break;
            }
            fill_gaussian(&mut xi, rng);
            grad.axpy(self.lambda, &theta, 1.0);
            grad.axpy(self.sigma, &xi, 1.0);
            theta.axpy(-self.eta, &grad, 1.0);
        }
        Ok(theta)
    }
}
