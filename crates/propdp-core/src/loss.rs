//! Per-sample GLM losses ℓ(y, r) of SPEC.md §1 as functions of the fitted
//! field r = xᵀθ, with their first two derivatives in r, and the logistic
//! helpers shared by theory and simulation.

use crate::problem::Model;

/// The loss of a model (SPEC.md §1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loss {
    /// ρ_M(y − r).
    Huber { m: f64 },
    /// log(1 + exp(−y r)).
    Logistic,
}

impl Loss {
    /// The loss used by `model`.
    pub fn of(model: &Model) -> Loss {
        match *model {
            Model::Huber { huber_m, .. } => Loss::Huber { m: huber_m },
            Model::Logistic => Loss::Logistic,
        }
    }

    /// (ℓ, ∂ℓ/∂r, ∂²ℓ/∂r²).
    pub fn eval(&self, y: f64, r: f64) -> (f64, f64, f64) {
        match *self {
            Loss::Huber { m } => {
                let e = y - r;
                if e.abs() <= m {
                    (0.5 * e * e, -e, 1.0)
                } else {
                    (m * e.abs() - 0.5 * m * m, -m * e.signum(), 0.0)
                }
            }
            Loss::Logistic => {
                let t = -y * r;
                let s = sigmoid(t);
                (softplus(t), -y * s, s * (1.0 - s))
            }
        }
    }
}

/// σ(x) without overflow.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// log(1 + eˣ) without overflow.
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}
