//! DP full-batch gradient descent (docs/theory.md §1, §3):
//! θ₀ = 0, θ_{t+1} = θ_t − η(Xᵀℓ'(Xθ_t) + λθ_t + σ ξ_t), ξ_t ~ N(0, I_d) fresh.

use nalgebra::{DMatrix, DVector};
use propdp_core::loss::Loss;
use rand::Rng;
use thiserror::Error;

use crate::data::draw_gaussian_vector;

/// Why a DP-GD run failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GdError {
    #[error("DP-GD diverged at step {step} (‖θ‖²/d = {norm2:e}); lower η")]
    /// The iterates grew without bound (‖θ‖²/d non-finite or huge).
    Diverged {
        /// The step at which it was seen.
        step: usize,
        /// ‖θ_t‖²/d there.
        norm2: f64,
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
}

impl Descent {
    /// Run the descent; `observe(t, θ_t, train_loss_t)` is called for
    /// t = 0..=steps, where train_loss_t = (1/n) Σ ℓ(labelᵢ, (Xθ_t)ᵢ).
    /// `labels` are yᵢ for standard losses and νᵢ = xᵢᵀθ* for conditional ones.
    pub fn run<R: Rng, F: FnMut(usize, &DVector<f64>, f64)>(
        &self,
        x: &DMatrix<f64>,
        labels: &DVector<f64>,
        rng: &mut R,
        mut observe: F,
    ) -> Result<DVector<f64>, GdError> {
        let (n, d) = x.shape();
        let mut theta = DVector::zeros(d);
        for t in 0..=self.steps {
            let r = x * &theta;
            let mut g = DVector::zeros(n);
            let mut loss = 0.0;
            for i in 0..n {
                let (l, d1, _) = self.loss.eval(labels[i], r[i]);
                loss += l;
                g[i] = d1;
            }
            let norm2 = theta.norm_squared() / d as f64;
            if !norm2.is_finite() || norm2 > 1e12 {
                return Err(GdError::Diverged { step: t, norm2 });
            }
            observe(t, &theta, loss / n as f64);
            if t == self.steps {
                break;
            }
            let xi = draw_gaussian_vector(d, rng);
            let grad = x.tr_mul(&g) + self.lambda * &theta + self.sigma * xi;
            theta -= self.eta * grad;
        }
        Ok(theta)
    }
}
