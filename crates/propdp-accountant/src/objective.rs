//! Objective perturbation's privacy-loss bound c + A|Z| (add/remove-one),
//! its (ε, δ) curve, RDP and zCDP, and group privacy for replace-one; its
//! privacy-loss distributions are in [`crate::pld`].

use crate::gaussian::{log_delta_gaussian, log_norm_cdf, softplus};

/// Objective perturbation, add/remove-one: privacy loss ≤ c + A|Z| with
/// A = LR/σ, c = log(1 + βR²/λ) + A²/2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectiveBound {
    /// log(1 + βR²/λ).
    pub c0: f64,
    /// A = LR/σ.
    pub a: f64,
}

impl ObjectiveBound {
    /// The bound for loss constants (L, β), ‖x‖ ≤ R, ridge λ and noise σ.
    pub fn new(l: f64, beta: f64, r: f64, lambda: f64, sigma: f64) -> Self {
        ObjectiveBound {
            c0: (beta * r * r / lambda).ln_1p(),
            a: l * r / sigma,
        }
    }

    /// c = c0 + A²/2.
    pub fn c(&self) -> f64 {
        self.c0 + 0.5 * self.a * self.a
    }

    /// δ(ε) = E[(1 − e^{ε − c − A|Z|})₊]: `exp` of [`ObjectiveBound::log_delta`].
    pub fn delta(&self, eps: f64) -> f64 {
        self.log_delta(eps).exp()
    }

    /// log δ(ε): 2·δ_G(ε − c0; A) for ε ≥ c and, where the integrand is
    /// positive for every Z, 1 − 2e^{ε − c + A²/2}Φ(−A) (from
    /// E e^{−A|Z|} = 2e^{A²/2}Φ(−A)); the two agree at ε = c.
    pub fn log_delta(&self, eps: f64) -> f64 {
        if eps >= self.c() {
            std::f64::consts::LN_2 + log_delta_gaussian(eps - self.c0, self.a)
        } else {
            let log_term = std::f64::consts::LN_2 + eps - self.c() + 0.5 * self.a * self.a + log_norm_cdf(-self.a);
            if log_term < 0.0 {
                (-log_term.exp_m1()).ln()
            } else {
                f64::NEG_INFINITY
            }
        }
    }

    /// RDP of order α > 1: c0 + αA²/2 + log(2Φ((α−1)A))/(α−1).
    pub fn rdp(&self, alpha: f64) -> f64 {
        self.c0 + alpha * self.a * self.a / 2.0 + (2.0f64.ln() + log_norm_cdf((alpha - 1.0) * self.a)) / (alpha - 1.0)
    }

    /// zCDP ρ = c0 + A√(2/π) + A²/2.
    pub fn zcdp(&self) -> f64 {
        self.c0 + self.a * (2.0 / std::f64::consts::PI).sqrt() + 0.5 * self.a * self.a
    }
}

/// Objective perturbation under replace-one: group privacy of size 2 applied
/// to the add/remove guarantee (ε, δ) → (2ε, (1 + e^ε)δ), the product
/// taken in logs (e^ε leaves f64 beyond ε ≈ 709 while δ is tiny there) and
/// capped at 1.
pub fn objective_replace_one(bound: &ObjectiveBound, eps_add_remove: f64) -> (f64, f64) {
    let log_delta = softplus(eps_add_remove) + bound.log_delta(eps_add_remove);
    (2.0 * eps_add_remove, log_delta.min(0.0).exp())
}
