//! Logistic regression under objective perturbation: the three-equation
//! system of docs/theory.md §2.2 in the unknowns (m, q, V).
//!
//! Channel: ν ~ N(0, s²), ω = (m/s²)ν + τ_⊥ξ with τ_⊥² = q − m²/s²,
//! p₊ = prox_{Vρ}(−ω) (root of p + V·sigmoid(p) = −ω). Using the symmetry
//! (ν, ξ, y) → (−ν, −ξ, −y), the y = −1 terms equal the y = +1 terms, so
//! with a = 1/δ
//!
//! - q̂ = 2a E[sigmoid(ν) sigmoid(p₊)²]
//! - V̂ = 2a E[sigmoid(ν) h(p₊)],  h(p) = ρ''(p)/(1 + Vρ''(p))
//! - m̂ = 2a E[sigmoid'(ν) sigmoid(p₊)]
//!
//! closed by m = m̂s²/(λ+V̂), q = (m̂²s² + q̂ + σ²)/(λ+V̂)², V = 1/(λ+V̂).
//!
//! *One dimension.* p₊ depends on ω alone, and (ν, ω) is jointly Gaussian
//! with Var ν = s², Cov(ν, ω) = m, Var ω = q, so ν | ω ~ N(μ(ω), κ²) with
//! μ(ω) = (m/q)ω and κ² = s² − m²/q = s²τ_⊥²/q. Conditioning on ω,
//!
//! - q̂ = 2a E_ω[L₀(ω) sigmoid(p₊)²],  V̂ = 2a E_ω[L₀(ω) h(p₊)],
//! - m̂ = 2a E_ω[L₁(ω) sigmoid(p₊)],
//!
//! with ω ~ N(0, q) and L₀ = E_z sigmoid(μ(ω) + κz), L₁ = E_z sigmoid'(μ(ω) + κz),
//! z ~ N(0, 1): logistic-normal integrals, which need sigmoids but no prox.
//! The ω integral is in prox space ([`field_nodes`], 16-node Gauss–Legendre
//! panels, one prox solve per panel end, 10–31 panels over the grid of
//! configs/logistic_objective.toml and s² ∈ {1, 9}), the z integral by
//! Gauss–Hermite or panels chosen by κ (`conditional_rule`): a few dozen
//! prox solves per evaluation instead of the ~1300 of a tensor rule over
//! (ν, ξ). Against an independent, refined 2-D integration over
//! (ν, ξ) the hats agree to 5e-15 at 14 points from the bench point to
//! σ/λ = 1e4 and s² = 100 (unit test
//! `hats_match_a_refined_two_dimensional_reference`, which asserts 1e-13).
//! The Jacobian in (b, τ_⊥, V) uses the same conditioning, with E[f(ν)ν | ω]
//! for ∂ω/∂b = ν and ∂ω/∂τ_⊥ = ξ = (ω − bν)/τ_⊥. With a feature covariance
//! s² is replaced by the teacher field's variance ρ = s²⟨ωe⟩ (docs/theory.md
//! §2.4); the test and training log-losses reduce the same way.
//!
//! Solution method: a few damped fixed-point steps, then Newton on the
//! residual x − F(x) in the coordinates x = (m/s, ln τ_⊥², ln V) (which keep
//! q ≥ m²/s² and V > 0) with the analytic 3×3 Jacobian (evaluated with a
//! line search's first trial, and with a backtracked one once accepted) and
//! backtracking, checking the time limit before every trial. If that fails from a cold start, continuation in λ from
//! λ = max(1, λ) down to the target, warm-starting each step — this is what
//! handles the hard region of docs/theory.md §5.3 (λ = 1e-3, δ = 2, s² = 4). There the
//! solution is V = 636.32, not the V ≈ 740 once quoted for it (docs/theory.md §5.3): the
//! simulated linear response −∂(θ̂ᵀb/d)/∂σ at σ = 0 is 640 ± 8 at d = 800
//! (test `logistic_hard_region_response_at_zero_noise_matches_simulation`).
//!
//! For λ = 0 (only allowed with σ = 0) the unregularized MLE exists iff
//! δ < h(s²) = min_t E[(Z − t·y·ν)₊²] (Candès & Sur); beyond it the solver
//! returns [`LogisticError::NoSolution`].
//!
//! # References
//! - Sur, Candès (2019), *A modern maximum-likelihood theory for
//!   high-dimensional logistic regression*, PNAS.
//! - Candès, Sur (2020), *The phase transition for the existence of the
//!   maximum likelihood estimate in high-dimensional logistic regression*, AoS.
//! - Salehi, Abbasi, Hassibi (2019), *The impact of regularization on
//!   high-dimensional logistic regression*, NeurIPS.
//! - Trefethen (2008), *Is Gauss quadrature better than Clenshaw–Curtis?*,
//!   SIAM Review (Gauss–Legendre convergence for functions analytic in a
//!   Bernstein ellipse, behind the panel widths here).

use thiserror::Error;

mod metrics;
mod quadrature;
mod solver;

pub use propdp_core::loss::{sigmoid, softplus};
pub use propdp_core::population::{softplus_mean, test_class_error, test_logloss};
pub use quadrature::{field_nodes, prox};
pub use solver::{LogisticSolver, MAX_NOISE_RATIO};

/// Parameters of one logistic point (σ = 0: non-private ridge logistic).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogisticParams {
    /// δ = d/n.
    pub delta: f64,
    /// Prior energy s².
    pub s2: f64,
    /// Ridge λ.
    pub lambda: f64,
    /// Noise σ of the linear term.
    pub sigma: f64,
}

/// The parameters as a user set them (config keys), for error messages.
impl std::fmt::Display for LogisticParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "delta = {}, s2 = {}, lambda = {}, sigma = {}",
            self.delta, self.s2, self.lambda, self.sigma
        )
    }
}

/// Solution (m, q, V): overlap, norm2, response.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogisticState {
    /// Overlap m = θ̂ᵀθ*/d.
    pub m: f64,
    /// Norm q = ‖θ̂‖²/d.
    pub q: f64,
    /// Response V.
    pub v: f64,
}

/// Failures of the logistic solver; every variant carries the parameters.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LogisticError {
    #[error("logistic: no solution at {params}: {reason}")]
    /// The system has no solution (e.g. the MLE beyond the separability threshold).
    NoSolution {
        /// The parameters.
        params: LogisticParams,
        /// Why not.
        reason: String,
    },
    #[error("logistic: outside the solver's validated range at {params}: {reason}")]
    /// The parameters are outside the range the solver is validated for.
    OutOfRange {
        /// The parameters.
        params: LogisticParams,
        /// Which bound, and why.
        reason: String,
    },
    #[error("logistic: no solution within the time limit of {seconds} s ([solver] time_limit) at {params}")]
    /// The solver ran out of its wall-clock budget.
    TimeLimit {
        /// The parameters.
        params: LogisticParams,
        /// The budget in seconds.
        seconds: f64,
    },
    #[error("logistic: not converged at {params} after {iterations} iterations (residual {residual:e})")]
    /// The solver did not meet its tolerance.
    NotConverged {
        /// The parameters.
        params: LogisticParams,
        /// Iterations taken.
        iterations: usize,
        /// Final residual.
        residual: f64,
    },
}
