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

use std::time::{Duration, Instant};

use nalgebra::{Matrix3, Vector3};
use propdp_core::config::LogisticOptions;
use propdp_core::metrics::{self, Metrics};
use propdp_core::record::SolverReport;
use thiserror::Error;

use crate::gauss_hermite::NormalRule;
use crate::gaussian::cdf;
use crate::panels::{WINDOW, for_each_panel, legendre16, normal_expect};
use crate::root::brent;
use crate::spectral::Regulariser;
use propdp_core::covariance::Covariance;
pub use propdp_core::loss::{sigmoid, softplus};

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
    #[error("logistic: no solution at {params:?}: {reason}")]
    /// The system has no solution (e.g. the MLE beyond the separability threshold).
    NoSolution {
        /// The parameters.
        params: LogisticParams,
        /// Why not.
        reason: String,
    },
    #[error("logistic: outside the solver's validated range at {params:?}: {reason}")]
    /// The parameters are outside the range the solver is validated for.
    OutOfRange {
        /// The parameters.
        params: LogisticParams,
        /// Which bound, and why.
        reason: String,
    },
    #[error("logistic: no solution within the time limit of {seconds} s ([solver] time_limit) at {params:?}")]
    /// The solver ran out of its wall-clock budget.
    TimeLimit {
        /// The parameters.
        params: LogisticParams,
        /// The budget in seconds.
        seconds: f64,
    },
    #[error("logistic: not converged at {params:?} after {iterations} iterations (residual {residual:e})")]
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

pub use propdp_core::population::{softplus_mean, test_class_error, test_logloss};

/// prox_{Vρ}(u): the root of p + V·sigmoid(p) = u, which lies in (u − V, u).
/// Newton safeguarded by bisection on that bracket.
pub fn prox(u: f64, v: f64) -> f64 {
    prox_impl(u, v, u - v * sigmoid(u - 0.5 * v))
}

fn prox_impl(u: f64, v: f64, start: f64) -> f64 {
    if !(u.is_finite() && v.is_finite() && v >= 0.0) {
        return f64::NAN;
    }
    let (mut lo, mut hi) = (u - v, u);
    let mut p = start.clamp(lo, hi);
    let scale = 1e-15 * (1.0 + u.abs());
    let mut f_prev = f64::INFINITY;
    // Newton's method cycles on this sigmoid-shaped equation for some (u, V):
    // bisect whenever the step leaves the bracket or |f| fails to halve.
    for _ in 0..300 {
        let s = sigmoid(p);
        let f = p + v * s - u;
        if f.abs() <= scale {
            return p;
        }
        if f > 0.0 {
            hi = p;
        } else {
            lo = p;
        }
        if hi - lo <= 4.0 * f64::EPSILON * (1.0 + p.abs()) {
            return 0.5 * (lo + hi);
        }
        let newton = p - f / (1.0 + v * s * (1.0 - s));
        p = if newton > lo && newton < hi && f.abs() <= 0.5 * f_prev {
            newton
        } else {
            0.5 * (lo + hi)
        };
        f_prev = f.abs();
    }
    p
}

/// Quadrature for expectations over the estimator's field ω ~ N(0, q),
/// written in prox space: with u = −ω and p = prox_{Vρ}(u), i.e.
/// u(p) = p + V·sigmoid(p),
///
///   E[A(p, ω)] = ∫ A(p, −u(p)) φ(u(p)/√q)/√q · (1 + Vρ''(p)) dp.
///
/// The prox has kinks of width O(1) in u near p ≈ ∓ln V, far narrower than √q
/// when σ/λ is large, where Gauss–Hermite in ω does not converge. Panels are
/// cut in u at the images of p ∈ {−40, −36, …, 40} (so p-width ≤ 4 through the
/// kinks and the exponential tails of sigmoid(p) and h(p), which are within
/// e^{−40} of their limits beyond: breaks only to |p| = 20 left 3e-9 in q at
/// σ/λ = 1e4), to u-width ≤ 2√q, and within |u| < `zone.0` to u-width ≤
/// `zone.1` (`TeacherGivenField::zone`); each is mapped to p by the prox and
/// integrated with 16-node Gauss–Legendre. Fills `out` with
/// (p, sigmoid(p), ω, weight), skipping weights below `PRUNE` (1e-18).
pub fn field_nodes(q: f64, v: f64, zone: (f64, f64), out: &mut Vec<(f64, f64, f64, f64)>) {
    out.clear();
    let rule = legendre16();
    let sd = q.sqrt();
    let u_of = |p: f64| p + v * sigmoid(p);
    let breaks: [f64; 21] = std::array::from_fn(|i| u_of(-40.0 + 4.0 * i as f64));
    let norm = 1.0 / (sd * (2.0 * std::f64::consts::PI).sqrt());
    // (u, prox(u)) at the last panel's upper end, which is usually the next one's lower end
    let mut last = (f64::NAN, f64::NAN);
    let mut panel = |ua: f64, ub: f64| {
        let pa = if ua == last.0 { last.1 } else { prox(ua, v) };
        let pb = prox(ub, v);
        last = (ub, pb);
        let (mid, half) = (0.5 * (pa + pb), 0.5 * (pb - pa));
        for &(x, w) in rule {
            let p = mid + half * x;
            let sp = sigmoid(p);
            let u = p + v * sp;
            let z = u / sd;
            let weight = half * w * (1.0 + v * sp * (1.0 - sp)) * norm * (-0.5 * z * z).exp();
            if weight >= PRUNE {
                out.push((p, sp, -u, weight));
            }
        }
    };
    let (end, inner) = (WINDOW * sd, zone.0.min(WINDOW * sd));
    for (a, b, width) in [
        (-end, -inner, 2.0 * sd),
        (-inner, inner, zone.1.min(2.0 * sd)),
        (inner, end, 2.0 * sd),
    ] {
        if b > a {
            for_each_panel(a, b, &breaks, width, &mut panel);
        }
    }
}

/// The teacher field given the estimator's: for (ν, ω) jointly Gaussian with
/// Var ν = ρ, Cov(ν, ω) = m, Var ω = q, ν | ω ~ N(μ(ω), κ²) with μ = (m/q)·ω
/// and κ² = ρ − m²/q. Holds a rule for E over z ~ N(0, 1) of functions of
/// ν = μ + κz ([`conditional_rule`] at κ), as (κz, e^{−κz}, weight), so that
/// sigmoid(μ + κz) = 1/(1 + e^{−μ}e^{−κz}) costs one division per node.
struct TeacherGivenField {
    slope: f64,
    kappa: f64,
    nodes: Vec<(f64, f64, f64)>,
    /// max |κz| over the nodes.
    reach: f64,
}

/// Nodes (z, weight) of E f(Z), Z ~ N(0, 1), for integrands sigmoid(μ + κZ)
/// and sigmoid'(μ + κZ) at any μ (poles at distance π/κ from the real axis
/// in z): Gauss–Hermite with 24, 64 or 96 nodes while κ ≤ 0.5, 1 or 1.5
/// (each within 4e-15 over |μ| ≤ 5; 96 nodes are 3e-12 off at κ = 2), beyond
/// 16-node Gauss–Legendre panels of width 4 in μ + κz (4/κ in z, at most 2)
/// over |z| ≤ 8.5 (unit test `conditional_rule_is_exact`).
fn conditional_rule(kappa: f64) -> Vec<(f64, f64)> {
    if kappa <= 1.5 {
        let n = if kappa <= 0.5 {
            24
        } else if kappa <= 1.0 {
            64
        } else {
            96
        };
        let rule = NormalRule::shared(n);
        return rule.nodes.iter().copied().zip(rule.weights.iter().copied()).collect();
    }
    // at most TEACHER_PANELS panels
    normal_panels((4.0 / kappa).clamp(2.0 * WINDOW / TEACHER_PANELS, 2.0))
}

/// Nodes (z, weight) of E f(Z), Z ~ N(0, 1): 16-node Gauss–Legendre panels
/// of `width` in z over |z| ≤ [`WINDOW`], weighted by the normal density.
fn normal_panels(width: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    for_each_panel(-WINDOW, WINDOW, &[0.0], width, |lo, hi| {
        let (mid, half) = (0.5 * (lo + hi), 0.5 * (hi - lo));
        for &(x, w) in legendre16() {
            let z = mid + half * x;
            out.push((z, half * w * norm * (-0.5 * z * z).exp()));
        }
    });
    out
}

/// Largest |μ| + |κz| for the product form e^{−μ}·e^{−κz} (no overflow).
const PRODUCT_REACH: f64 = 600.0;

impl TeacherGivenField {
    fn new(rho: f64, m: f64, q: f64) -> Self {
        let kappa = (rho - m * m / q).max(0.0).sqrt();
        let nodes: Vec<(f64, f64, f64)> = conditional_rule(kappa)
            .into_iter()
            .filter(|&(_, w)| w >= PRUNE)
            .map(|(z, w)| (kappa * z, (-kappa * z).exp(), w))
            .collect();
        let reach = nodes.iter().fold(0.0, |a: f64, n| a.max(n.0.abs()));
        TeacherGivenField {
            slope: m / q,
            kappa,
            nodes,
            reach,
        }
    }

    /// At ω: [E sigmoid(ν), E sigmoid'(ν)] and, if `first`, also
    /// [E ν·sigmoid(ν), E ν·sigmoid'(ν)] (else zeros), all given ω.
    fn moments(&self, omega: f64, first: bool) -> [f64; 4] {
        let mu = self.slope * omega;
        if mu.abs() > self.saturation() {
            return if mu > 0.0 { [1.0, 0.0, mu, 0.0] } else { [0.0; 4] };
        }
        let mut acc = [0.0; 4];
        if mu.abs() + self.reach <= PRODUCT_REACH {
            let e = (-mu).exp();
            for &(kz, f, w) in &self.nodes {
                let t = e * f;
                let s = 1.0 / (1.0 + t);
                let ds = t * s * s;
                acc[0] += w * s;
                acc[1] += w * ds;
                if first {
                    acc[2] += w * (mu + kz) * s;
                    acc[3] += w * (mu + kz) * ds;
                }
            }
        } else {
            for &(kz, _, w) in &self.nodes {
                let nu = mu + kz;
                let e = (-nu.abs()).exp();
                let r = 1.0 / (1.0 + e);
                let s = if nu >= 0.0 { r } else { e * r };
                let ds = e * r * r;
                acc[0] += w * s;
                acc[1] += w * ds;
                if first {
                    acc[2] += w * nu * s;
                    acc[3] += w * nu * ds;
                }
            }
        }
        acc
    }

    /// |μ| beyond which the moments are their limits: sigmoid(μ + κz) is
    /// within e^{−40} of 0 or 1 over |z| ≤ 8.5.
    fn saturation(&self) -> f64 {
        40.0 + WINDOW * self.kappa
    }

    /// The zone |u| < u₀ of [`field_nodes`] where the moments vary, and the
    /// widest u-panel there that resolves them: 4·max(1, κ) in μ (sigmoid(μ)
    /// has poles at distance π from the real axis, so half-width 2 converges
    /// like 3.4^{−32}; given ω, ν is spread over κ, which smooths the moments
    /// on that scale).
    fn zone(&self) -> (f64, f64) {
        let slope = self.slope.abs();
        (self.saturation() / slope, 4.0 * self.kappa.max(1.0) / slope)
    }
}

/// Solver holding its quadrature rule; reuse it along a sweep.
#[derive(Debug, Clone)]
pub struct LogisticSolver {
    rule: std::sync::Arc<NormalRule>,
    opts: LogisticOptions,
    /// The feature covariance (docs/theory.md §2.4); isotropic when `None`.
    covariance: Option<Covariance>,
}

type X = Vector3<f64>;

/// Largest σ/λ the solver accepts: its iterations grow with σ/λ (δ = 1,
/// s² = 1: 47 Newton steps, 3 ms, at 1e3; 506 with continuation, 0.12 s, at
/// 1e4, on one core), and beyond it the noise dominates every metric.
pub const MAX_NOISE_RATIO: f64 = 1e4;

/// Largest variance ρ of the teacher field for which [`LogisticSolver::teacher_rule`]
/// (the ν rule of the separability threshold) is Gauss–Hermite: the
/// integrands vary on the scale of sigmoid(ν), 1/√ρ in standard units, which
/// 96 Gauss–Hermite nodes resolve to ~1e-11 at ρ = 4 but only to 4e-4 at
/// ρ = 24 (found against an independent integration,
/// scripts/gcm_reference.py); beyond, composite Gauss–Legendre.
const HERMITE_MAX_FIELD: f64 = 4.0;

/// Most panels of [`LogisticSolver::teacher_rule`] and [`conditional_rule`]
/// (ρ up to 3.6e4 and κ up to 240 get their full resolution; the solver's
/// time limit bounds the rest).
const TEACHER_PANELS: f64 = 1024.0;

/// Nodes of [`field_nodes`] and [`conditional_rule`] whose weight is below
/// this are skipped: their total weight is below 1e-15.
const PRUNE: f64 = 1e-18;

impl LogisticSolver {
    /// A solver whose separability threshold integrates ν with
    /// `opts.quad_nodes` Gauss–Hermite nodes (the channel's rules are fixed:
    /// [`field_nodes`] and `conditional_rule`).
    ///
    /// ```
    /// use propdp_core::config::SolverOptions;
    /// use propdp_theory::logistic::{LogisticParams, LogisticSolver};
    /// let solver = LogisticSolver::new(SolverOptions::default().logistic());
    /// let p = LogisticParams { delta: 0.5, s2: 1.0, lambda: 1.0, sigma: 1.0 };
    /// let (st, rep) = solver.solve(&p, None).unwrap();
    /// assert!(rep.converged && st.v > 0.0 && st.q > st.m * st.m);
    /// ```
    pub fn new(opts: LogisticOptions) -> Self {
        LogisticSolver {
            rule: NormalRule::shared(opts.quad_nodes),
            opts,
            covariance: None,
        }
    }

    /// The same solver for features of covariance `covariance` (none:
    /// isotropic). The state is then in prediction space: m = θ*ᵀΣθ̂/d,
    /// q = θ̂ᵀΣθ̂/d ([`crate::spectral`]).
    pub fn with_covariance(self, covariance: Option<Covariance>) -> Self {
        LogisticSolver { covariance, ..self }
    }

    /// Nodes (z, weight) of E f(Z), Z ~ N(0, 1), for integrands of the
    /// teacher field ν = √ρ·Z: the Gauss–Hermite rule up to ρ =
    /// [`HERMITE_MAX_FIELD`]; beyond, 16-node Gauss–Legendre panels of width
    /// 2/√ρ in z over |z| ≤ 8.5, at most [`TEACHER_PANELS`] (sigmoid(ν) is analytic within π of the real
    /// axis in ν: a panel of half-width 1 in ν converges like 6.4^{−32}).
    fn teacher_rule(&self, rho: f64) -> Vec<(f64, f64)> {
        if rho <= HERMITE_MAX_FIELD {
            return self
                .rule
                .nodes
                .iter()
                .copied()
                .zip(self.rule.weights.iter().copied())
                .collect();
        }
        // at most TEACHER_PANELS panels: at extreme ρ (1e6 and beyond) wider ones
        normal_panels((2.0 / rho.sqrt()).max(2.0 * WINDOW / TEACHER_PANELS))
    }

    /// The variance ρ of the teacher field xᵀθ*: s², or s²⟨ωe⟩ with a covariance.
    fn field(&self, p: &LogisticParams) -> f64 {
        match &self.covariance {
            Some(c) => p.s2 * c.teacher_field(),
            None => p.s2,
        }
    }

    /// Channel side: the hats (m̂, q̂, V̂) at state (b = m/ρ, τ_⊥, V) and, if
    /// asked, their 3×3 Jacobian with respect to (b, τ_⊥, V) (rows m̂, q̂, V̂).
    /// One integral over ω ~ N(0, q) ([`field_nodes`]), the teacher field
    /// integrated out given ω ([`TeacherGivenField`]): for ν-factor f,
    /// E[f(ν)·A(p)] = E_ω[E[f(ν) | ω]·A(p)]. The Jacobian is by the chain rule
    /// through the prox, ∂p/∂ω = −k, ∂p/∂V = −sigmoid(p)·k with
    /// k = 1/(1 + Vρ''(p)), and ∂ω/∂b = ν, ∂ω/∂τ_⊥ = ξ = (ω − bν)/τ_⊥, whose
    /// conditional moments E[f(ν)ν | ω] are integrated with the same rule.
    fn hats(&self, p: &LogisticParams, b: f64, tp: f64, v: f64, jac: bool) -> ([f64; 3], [[f64; 3]; 3]) {
        let rho = self.field(p);
        let (m, q) = (b * rho, b * b * rho + tp * tp);
        let teacher = TeacherGivenField::new(rho, m, q);
        let mut nodes = Vec::new();
        field_nodes(q, v, teacher.zone(), &mut nodes);
        let mut h = [0.0; 3];
        let mut j = [[0.0; 3]; 3];
        for &(_, sp, omega, w) in &nodes {
            let [l0, l1, n0, n1] = teacher.moments(omega, jac);
            let r2 = sp * (1.0 - sp);
            let k = 1.0 / (1.0 + v * r2);
            let hv = r2 * k;
            h[0] += w * l1 * sp;
            h[1] += w * l0 * sp * sp;
            h[2] += w * l0 * hv;
            if jac {
                let r3 = r2 * (1.0 - 2.0 * sp);
                // d/dp of sp, sp², h and explicit ∂h/∂V
                let g = [r2, 2.0 * sp * r2, r3 * k * k];
                let hv_v = -hv * hv;
                let dp_domega = -k;
                let dp_dv = -sp * k;
                // E[f(ν) | ω] and E[f(ν)ν | ω] for the row's f: sigmoid' for m̂, sigmoid otherwise
                for (row, l, n) in [(0, l1, n1), (1, l0, n0), (2, l0, n0)] {
                    let wg = w * g[row] * dp_domega;
                    j[row][0] += wg * n;
                    j[row][1] += wg * (omega * l - b * n) / tp;
                    j[row][2] += w * l * (g[row] * dp_dv + if row == 2 { hv_v } else { 0.0 });
                }
            }
        }
        let a2 = 2.0 / p.delta;
        for (hi, ji) in h.iter_mut().zip(j.iter_mut()) {
            *hi *= a2;
            ji.iter_mut().for_each(|x| *x *= a2);
        }
        (h, j)
    }

    /// F in solver coordinates x = (m/s, ln τ_⊥², ln V), with its Jacobian dF/dx.
    fn map_x(&self, p: &LogisticParams, x: &X, jac: bool) -> (X, Matrix3<f64>) {
        if let Some(cov) = &self.covariance {
            return self.map_x_spectral(p, cov, x, jac);
        }
        let s = p.s2.sqrt();
        let (b, tp, v) = (x[0] / s, (0.5 * x[1]).exp(), x[2].exp());
        let ([mh, qh, vh], jh) = self.hats(p, b, tp, v, jac);
        let den = p.lambda + vh;
        let qs = qh + p.sigma * p.sigma;
        let fx = X::new(mh * s / den, qs.ln() - 2.0 * den.ln(), -den.ln());
        if !jac {
            return (fx, Matrix3::zeros());
        }
        let d_in = Matrix3::from_diagonal(&X::new(1.0 / s, 0.5 * tp, v));
        let jh = Matrix3::from_fn(|r, c| jh[r][c]);
        // rows x'0, x'1, x'2; columns m̂, q̂, V̂
        let d_out = Matrix3::new(
            s / den,
            0.0,
            -mh * s / (den * den),
            0.0,
            1.0 / qs,
            -2.0 / den,
            0.0,
            0.0,
            -1.0 / den,
        );
        (fx, d_out * jh * d_in)
    }

    /// [`Self::map_x`] with a covariance: the channel at ρ = s²⟨ωe⟩ and the
    /// regulariser side over the atoms ([`crate::spectral::Regulariser`]),
    /// in the coordinates x = (m/√ρ, ln(q − m²/ρ), ln V) of prediction space.
    fn map_x_spectral(&self, p: &LogisticParams, cov: &Covariance, x: &X, jac: bool) -> (X, Matrix3<f64>) {
        let reg = Regulariser::new(cov, p.s2, p.lambda, p.sigma);
        let rho = reg.rho();
        let r = rho.sqrt();
        let (b, tp, v) = (x[0] / r, (0.5 * x[1]).exp(), x[2].exp());
        let ([mh, qh, vh], jh) = self.hats(p, b, tp, v, jac);
        let o = reg.overlaps(mh, qh, vh);
        let perp = o.q - o.m * o.m / rho;
        let fx = X::new(o.m / r, perp.ln(), o.v.ln());
        if !jac {
            return (fx, Matrix3::zeros());
        }
        let d_in = Matrix3::from_diagonal(&X::new(1.0 / r, 0.5 * tp, v));
        let jh = Matrix3::from_fn(|r, c| jh[r][c]);
        let jr = reg.jacobian(mh, qh, vh);
        // rows x'0 = m/√ρ, x'1 = ln(q − m²/ρ), x'2 = ln V; columns m̂, q̂, V̂
        let d_out = Matrix3::from_fn(|row, c| match row {
            0 => jr[0][c] / r,
            1 => (jr[1][c] - 2.0 * o.m / rho * jr[0][c]) / perp,
            _ => jr[2][c] / o.v,
        });
        (fx, d_out * jh * d_in)
    }

    /// The map F: state → denoiser(channel(state)).
    fn map(&self, p: &LogisticParams, st: &LogisticState) -> LogisticState {
        self.state_at(p, &self.map_x(p, &self.to_x(p, st), false).0)
    }

    fn to_x(&self, p: &LogisticParams, st: &LogisticState) -> X {
        let rho = self.field(p);
        let tp2 = st.q - st.m * st.m / rho;
        X::new(st.m / rho.sqrt(), tp2.max(1e-300).ln(), st.v.ln())
    }

    fn state_at(&self, p: &LogisticParams, x: &X) -> LogisticState {
        let rho = self.field(p);
        let m = x[0] * rho.sqrt();
        LogisticState {
            m,
            q: x[1].exp() + m * m / rho,
            v: x[2].exp(),
        }
    }

    /// Residual x − F(x) in the solver's coordinates, and its Jacobian I − dF/dx.
    fn resid(&self, p: &LogisticParams, x: &X, jac: bool) -> Option<(X, Matrix3<f64>)> {
        let (f, jf) = self.map_x(p, x, jac);
        let r = x - f;
        r.iter().all(|v| v.is_finite()).then_some((r, Matrix3::identity() - jf))
    }

    /// Solve the system. `warm`: a nearby solution (previous sweep point).
    pub fn solve(
        &self,
        p: &LogisticParams,
        warm: Option<LogisticState>,
    ) -> Result<(LogisticState, SolverReport), LogisticError> {
        if p.lambda > 0.0 && p.sigma / p.lambda > MAX_NOISE_RATIO {
            return Err(LogisticError::OutOfRange {
                params: *p,
                reason: format!(
                    "σ/λ = {:e} > {MAX_NOISE_RATIO:e}: the solver's cost grows with σ/λ; \
                     there the estimator is dominated by the noise (est_err2 ≳ (σ/λ)²·δ)",
                    p.sigma / p.lambda
                ),
            });
        }
        if p.lambda == 0.0 && p.sigma > 0.0 {
            return Err(LogisticError::NoSolution {
                params: *p,
                reason: "λ = 0 with σ > 0: the perturbed objective is unbounded below".into(),
            });
        }
        if p.lambda == 0.0 {
            let h = self.mle_threshold(self.field(p));
            if p.delta >= h {
                return Err(LogisticError::NoSolution {
                    params: *p,
                    reason: format!(
                        "λ = 0: the data are separable (δ = {} ≥ Candès–Sur threshold h(s²) = {h:.6}), the MLE does not exist",
                        p.delta
                    ),
                });
            }
        }
        let deadline = Instant::now() + Duration::from_secs_f64(self.opts.time_limit);
        if let Some(w) = warm
            && let Ok(ok) = self.newton(p, w, deadline)
        {
            return Ok(ok);
        }
        let cold = self.cold_start(p);
        match self.newton(p, cold, deadline) {
            Ok(ok) => Ok(ok),
            Err(e @ LogisticError::TimeLimit { .. }) => Err(e),
            Err(first) => self.homotopy(p, deadline).map_err(|e| match e {
                LogisticError::TimeLimit { .. } => e,
                _ => first,
            }),
        }
    }

    /// A crude start: V from E[ρ''] ≈ 1/4, q ≥ σ²V² from the denoiser, then a
    /// few damped fixed-point steps.
    fn cold_start(&self, p: &LogisticParams) -> LogisticState {
        let v0 = 1.0 / (p.lambda + 0.25 / p.delta);
        let mut st = LogisticState {
            m: 0.3 * self.field(p),
            q: 0.39 * self.field(p) + p.sigma * p.sigma * v0 * v0,
            v: v0,
        };
        let mut x = self.to_x(p, &st);
        for _ in 0..4 {
            let f = self.to_x(p, &self.map(p, &st));
            x = 0.5 * x + 0.5 * f;
            st = self.state_at(p, &x);
        }
        st
    }

    /// Homotopy from an easy problem (λ₀ = max(1, λ), σ₀ = 0) to the target:
    /// λ moves geometrically and σ linearly in t ∈ [0, 1]; each step is
    /// warm-started from the last and halved when it fails. For a λ = 0
    /// target the path ends at λ = 1e-8 and a last Newton solve takes λ to 0.
    fn homotopy(&self, p: &LogisticParams, deadline: Instant) -> Result<(LogisticState, SolverReport), LogisticError> {
        let lam_end = if p.lambda > 0.0 { p.lambda } else { 1e-8 };
        let lam0 = lam_end.max(1.0);
        let at = |t: f64| LogisticParams {
            lambda: (lam0.ln() + t * (lam_end.ln() - lam0.ln())).exp(),
            sigma: t * p.sigma,
            ..*p
        };
        let (mut st, rep) = self.newton(&at(0.0), self.cold_start(&at(0.0)), deadline)?;
        let (mut t, mut dt, mut total): (f64, f64, usize) = (0.0, 0.125, rep.iterations);
        while t < 1.0 {
            let tn = (t + dt).min(1.0);
            match self.newton(&at(tn), st, deadline) {
                Err(LogisticError::TimeLimit { .. }) => return Err(self.time_limit(p)),
                Ok((s, rep)) => {
                    st = s;
                    t = tn;
                    total += rep.iterations;
                    dt = (dt * 1.5).min(0.25);
                }
                Err(e) => {
                    dt *= 0.5;
                    if dt < 1e-4 {
                        return Err(e);
                    }
                }
            }
        }
        if p.lambda == 0.0 {
            let (s, rep) = self.newton(p, st, deadline)?;
            st = s;
            total += rep.iterations;
        }
        let residual = self
            .resid(p, &self.to_x(p, &st), false)
            .map_or(f64::INFINITY, |r| r.0.amax());
        Ok((
            st,
            SolverReport {
                converged: true,
                iterations: total,
                residual,
                ..Default::default()
            },
        ))
    }

    /// The time-limit error at `p`.
    fn time_limit(&self, p: &LogisticParams) -> LogisticError {
        LogisticError::TimeLimit {
            params: *p,
            seconds: self.opts.time_limit,
        }
    }

    /// Newton with the analytic Jacobian and backtracking from `start`,
    /// giving up at `deadline`.
    fn newton(
        &self,
        p: &LogisticParams,
        start: LogisticState,
        deadline: Instant,
    ) -> Result<(LogisticState, SolverReport), LogisticError> {
        let tol = self.opts.fixed_point.tol;
        let mut x = self.to_x(p, &start);
        let fail = |iterations, residual| LogisticError::NotConverged {
            params: *p,
            iterations,
            residual,
        };
        let (mut r, mut jac) = self.resid(p, &x, true).ok_or_else(|| fail(0, f64::NAN))?;
        for it in 0..self.opts.fixed_point.max_iter.min(100) {
            if Instant::now() > deadline {
                return Err(self.time_limit(p));
            }
            let norm = r.amax();
            if norm <= tol {
                let st = self.state_at(p, &x);
                return Ok((
                    st,
                    SolverReport {
                        converged: true,
                        iterations: it,
                        residual: norm,
                        ..Default::default()
                    },
                ));
            }
            if x[1] > 60.0 || x[2] > 60.0 {
                return Err(LogisticError::NoSolution {
                    params: *p,
                    reason: format!(
                        "the estimator's norm or response diverges (ln q⊥ = {:.1}, ln V = {:.1})",
                        x[1], x[2]
                    ),
                });
            }
            let step = jac.lu().solve(&(-r)).ok_or_else(|| fail(it, norm))?;
            // backtracking on the max-norm of the residual; cap each step
            let cap = 2.0 / step.amax().max(2.0);
            let mut t = cap.min(1.0);
            let mut accepted = false;
            for trial in 0..30 {
                if Instant::now() > deadline {
                    return Err(self.time_limit(p));
                }
                let xn = x + t * step;
                // the Jacobian with the first trial, which is usually accepted;
                // a backtracked trial gets it only once accepted
                let first = trial == 0;
                if let Some((rn, jn)) = self.resid(p, &xn, first)
                    && rn.amax() < (1.0 - 1e-4 * t) * norm
                {
                    jac = if first {
                        jn
                    } else {
                        self.resid(p, &xn, true).ok_or_else(|| fail(it, norm))?.1
                    };
                    x = xn;
                    r = rn;
                    accepted = true;
                    break;
                }
                t *= 0.5;
            }
            if !accepted {
                // Newton direction useless here: one damped fixed-point step
                let xn = x - 0.5 * r;
                let (rn, jn) = self.resid(p, &xn, true).ok_or_else(|| fail(it, norm))?;
                x = xn;
                r = rn;
                jac = jn;
            }
        }
        Err(fail(self.opts.fixed_point.max_iter.min(100), r.amax()))
    }

    /// Candès–Sur threshold h(s²) = min_t E[(Z − t·y·ν)₊²]: the unregularized
    /// MLE exists iff δ < h. Uses E[(Z − a)₊²] = (1 + a²)Φ(−a) − aφ(a) and a
    /// 1-D Gauss–Hermite rule over ν.
    pub fn mle_threshold(&self, s2: f64) -> f64 {
        let s = s2.sqrt();
        // E[(Z−a)₊²] derivative in a: −2E[(Z−a)₊] = −2(φ(a) − aΦ(−a)); y·ν has
        // law: ν w.p. sigmoid(ν), −ν otherwise.
        let teacher = self.teacher_rule(s2);
        let expect = |f: &dyn Fn(f64) -> f64| teacher.iter().map(|&(z, w)| w * f(z)).sum::<f64>();
        let obj = |t: f64| {
            expect(&|z| {
                let nu = s * z;
                let sn = sigmoid(nu);
                let f = |a: f64| (1.0 + a * a) * cdf(-a) - a * crate::gaussian::pdf(a);
                sn * f(t * nu) + (1.0 - sn) * f(-t * nu)
            })
        };
        let dobj = |t: f64| {
            expect(&|z| {
                let nu = s * z;
                let sn = sigmoid(nu);
                let g = |a: f64| -2.0 * (crate::gaussian::pdf(a) - a * cdf(-a));
                sn * g(t * nu) * nu - (1.0 - sn) * g(-t * nu) * nu
            })
        };
        // convex in t, minimiser t* ≥ 0 (the signal pushes y·ν positive)
        if dobj(0.0) >= 0.0 {
            return obj(0.0);
        }
        let mut hi = 1.0;
        while dobj(hi) < 0.0 && hi < 1e6 {
            hi *= 2.0;
        }
        let t = brent(0.0, hi, dobj, 1e-14, 200).map_or(hi, |(t, _)| t);
        obj(t)
    }

    /// Metrics of docs/theory.md §1 at a solution; `tau` > 0 gives output
    /// perturbation (state must be the σ = 0 solution).
    pub fn metrics(&self, p: &LogisticParams, st: &LogisticState, tau: f64) -> Metrics {
        let rho = self.field(p);
        let s = rho.sqrt();
        let b = st.m / rho;
        // the output noise τb adds τ²⟨ω⟩ = τ² to the fitted field's variance
        let q_out = st.q + tau * tau;
        let tp_test = (q_out - st.m * st.m / rho).max(0.0).sqrt();
        let tp = (st.q - st.m * st.m / rho).max(0.0).sqrt();
        let pred_err2 = q_out - 2.0 * st.m + rho;
        // fresh test point: ω = bν + τ_test ξ; by symmetry 2E[sigmoid(ν)·(y = +1 term)]
        let step = if b != 0.0 {
            (2.0 * tp_test / b.abs()).clamp(1e-3, 1.0)
        } else {
            1.0
        };
        let test_class_err = 2.0
            * normal_expect(0.0, s, &[0.0], step, |nu| {
                let prob_neg = if tp_test > 0.0 {
                    cdf(-b * nu / tp_test)
                } else {
                    f64::from(u8::from(b * nu < 0.0))
                };
                sigmoid(nu) * prob_neg
            });
        // 2E[sigmoid(ν) ρ(−ω)], ω ~ N(0, q + τ²), with ν integrated out given ω;
        // panels of width ≤ 4 through ρ's kink, |ω| ≤ 40 (beyond, ρ(−ω) is linear to 4e-18)
        let teacher = TeacherGivenField::new(rho, st.m, q_out);
        let kink: [f64; 21] = std::array::from_fn(|i| -40.0 + 4.0 * i as f64);
        let test_logloss = 2.0
            * normal_expect(0.0, q_out.sqrt(), &kink, teacher.zone().1, |omega| {
                teacher.moments(omega, false)[0] * softplus(-omega)
            });
        // training margin is −p₊ (+ τ xᵢᵀb for output perturbation): loss ρ(p₊ − τG), ω ~ N(0, q)
        let teacher = TeacherGivenField::new(rho, st.m, st.q);
        let mut nodes = Vec::new();
        field_nodes(st.q, st.v, teacher.zone(), &mut nodes);
        let train_logloss = 2.0
            * nodes
                .iter()
                .map(|&(pp, _, omega, w)| w * teacher.moments(omega, false)[0] * softplus_mean(pp, tau))
                .sum::<f64>();
        // parameter space: the same in isotropic features; over the atoms otherwise
        let (m0, q0, noise_corr) = match &self.covariance {
            None => (st.m, st.q, -p.sigma * st.v),
            Some(cov) => {
                let ([mh, qh, vh], _) = self.hats(p, b, tp, st.v, false);
                let o = Regulariser::new(cov, p.s2, p.lambda, p.sigma).overlaps(mh, qh, vh);
                (o.m0, o.q0, -p.sigma * o.inv)
            }
        };
        let est_err2 = q0 + tau * tau - 2.0 * m0 + p.s2;
        let mut out = Metrics::new();
        out.insert(metrics::EST_ERR2.into(), est_err2);
        out.insert(metrics::EST_ERR.into(), est_err2.max(0.0).sqrt());
        out.insert(metrics::PRED_ERR2.into(), pred_err2);
        out.insert(metrics::OVERLAP.into(), m0);
        out.insert(metrics::NORM2.into(), q0 + tau * tau);
        out.insert(metrics::BIAS_FACTOR.into(), m0 / p.s2);
        out.insert(
            metrics::NOISE_CORR.into(),
            if tau > 0.0 { tau } else { 0.0 + noise_corr },
        );
        out.insert(metrics::TEST_CLASS_ERR.into(), test_class_err);
        out.insert(metrics::TEST_LOGLOSS.into(), test_logloss);
        out.insert(metrics::TRAIN_LOGLOSS.into(), train_logloss);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prox_solves_its_equation_to_machine_precision() {
        for k in 0..200 {
            let v = 1e-3 * 1.08f64.powi(k);
            let mut last = f64::NEG_INFINITY;
            for i in 0..4000 {
                let u = -300.0 + 0.1537 * i as f64;
                let p = prox(u, v);
                let f = p + v * sigmoid(p) - u;
                assert!(f.abs() <= 1e-12 * (1.0 + u.abs()), "u={u} v={v} residual {f}");
                assert!(p >= last, "prox not monotone at u={u} v={v}");
                last = p;
            }
        }
    }

    /// The analytic Jacobian of the map against central finite differences.
    #[test]
    fn analytic_jacobian_matches_finite_differences() {
        let solver = LogisticSolver::new(propdp_core::config::SolverOptions::default().logistic());
        let cases = [
            (
                LogisticParams {
                    delta: 0.5,
                    s2: 1.0,
                    lambda: 1.0,
                    sigma: 1.0,
                },
                X::new(0.4, -0.5, -0.3),
            ),
            (
                LogisticParams {
                    delta: 0.94,
                    s2: 1.0,
                    lambda: 0.01,
                    sigma: 0.0,
                },
                X::new(0.8, 1.0, 3.0),
            ),
            (
                LogisticParams {
                    delta: 0.9369087114301919,
                    s2: 1.0,
                    lambda: 0.01,
                    sigma: 0.0,
                },
                X::new(1.35826, 2.65838, 3.64628),
            ),
            (
                LogisticParams {
                    delta: 0.1,
                    s2: 9.0,
                    lambda: 0.01,
                    sigma: 5.0,
                },
                X::new(20.0, 9.0, 3.0),
            ),
        ];
        for (p, x) in cases {
            let (_, j) = solver.map_x(&p, &x, true);
            for c in 0..3 {
                let h = 1e-5 * (1.0 + x[c].abs());
                let (mut xp, mut xm) = (x, x);
                xp[c] += h;
                xm[c] -= h;
                let fd = (solver.map_x(&p, &xp, false).0 - solver.map_x(&p, &xm, false).0) / (2.0 * h);
                for r in 0..3 {
                    let tol = 1e-5 * (1.0 + fd[r].abs());
                    assert!(
                        (j[(r, c)] - fd[r]).abs() < tol,
                        "{p:?} d{r}/d{c}: analytic {} fd {}",
                        j[(r, c)],
                        fd[r]
                    );
                }
            }
        }
    }

    /// The hats by an independent, refined 2-D quadrature over (ν, ξ), the
    /// form before the teacher field is integrated out given ω: ν by 16-node
    /// Gauss–Legendre panels of width 1/`refine` over |ν| ≤ 10√ρ; at each ν the
    /// expectation over ξ in prox space, u = −bν − τ_⊥ξ, with panels of
    /// u-width 2τ_⊥/`refine` cut at the images of p ∈ (4/`refine`)ℤ ∩ [−40, 40],
    /// over |ξ| ≤ 10.
    fn reference_hats(solver: &LogisticSolver, p: &LogisticParams, b: f64, tp: f64, v: f64, refine: f64) -> [f64; 3] {
        const L: f64 = 10.0;
        let rho = solver.field(p);
        let s = rho.sqrt();
        let rule = legendre16();
        let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        let breaks: Vec<f64> = (0..)
            .map(|i| -40.0 + 4.0 / refine * f64::from(i))
            .take_while(|&x| x <= 40.0)
            .map(|p| p + v * sigmoid(p))
            .collect();
        let mut h = [0.0; 3];
        for_each_panel(-L * s, L * s, &[], 1.0 / refine, |na, nb| {
            let (nmid, nhalf) = (0.5 * (na + nb), 0.5 * (nb - na));
            for &(x1, w1) in rule {
                let nu = nmid + nhalf * x1;
                let w_nu = nhalf * w1 * norm / s * (-0.5 * nu * nu / rho).exp();
                let sn = sigmoid(nu);
                let dsn = sn * sigmoid(-nu);
                let c = -b * nu;
                let mut inner = [0.0; 3];
                for_each_panel(c - L * tp, c + L * tp, &breaks, 2.0 * tp / refine, |ua, ub| {
                    let (pa, pb) = (prox(ua, v), prox(ub, v));
                    let (mid, half) = (0.5 * (pa + pb), 0.5 * (pb - pa));
                    for &(x2, w2) in rule {
                        let pp = mid + half * x2;
                        let sp = sigmoid(pp);
                        let r2 = sp * (1.0 - sp);
                        let xi = (c - (pp + v * sp)) / tp;
                        let w = half * w2 * (1.0 + v * r2) * norm / tp * (-0.5 * xi * xi).exp();
                        inner[0] += w * sp;
                        inner[1] += w * sp * sp;
                        inner[2] += w * r2 / (1.0 + v * r2);
                    }
                });
                h[0] += w_nu * dsn * inner[0];
                h[1] += w_nu * sn * inner[1];
                h[2] += w_nu * sn * inner[2];
            }
        });
        h.map(|x| x * 2.0 / p.delta)
    }

    /// The 1-D channel (ν integrated out given ω) against the 2-D reference,
    /// at the solutions of points across the solver's range: the bench point,
    /// the hard region, the MLE, σ/λ up to 1e4, teacher fields of variance up
    /// to 100 and tiny ones. The reference moves by at most 3e-15 from
    /// `refine` = 2 to 4.
    #[test]
    fn hats_match_a_refined_two_dimensional_reference() {
        let solver = LogisticSolver::new(propdp_core::config::SolverOptions::default().logistic());
        let cases = [
            (0.5, 1.0, 1.0, 1.0),
            (2.0, 4.0, 1e-3, 0.0),
            (0.05, 4.0, 0.1, 5.0),
            (5.0, 4.0, 1.0, 0.0),
            (0.2, 5.0, 0.0, 0.0),
            (0.3, 9.0, 0.01, 2.0),
            (0.05, 9.0, 1.0, 0.0),
            (1.0, 1.0, 1e-3, 1.0),
            (1.0, 1.0, 1e-4, 1.0),
            (0.5, 4.0, 1e-3, 10.0),
            (0.3, 24.0, 0.1, 1.0),
            (0.5, 100.0, 0.1, 1.0),
            (0.01, 1.0, 10.0, 0.0),
            (10.0, 0.01, 0.01, 0.0),
        ];
        for (delta, s2, lambda, sigma) in cases {
            let p = LogisticParams {
                delta,
                s2,
                lambda,
                sigma,
            };
            let (st, _) = solver.solve(&p, None).unwrap();
            let b = st.m / s2;
            let tp = (st.q - st.m * st.m / s2).sqrt();
            let (h, _) = solver.hats(&p, b, tp, st.v, false);
            let r = reference_hats(&solver, &p, b, tp, st.v, 2.0);
            for i in 0..3 {
                let rel = (h[i] - r[i]).abs() / r[i].abs();
                assert!(rel < 1e-13, "{p:?} hat {i}: {} vs reference {} ({rel:e})", h[i], r[i]);
            }
        }
    }

    /// The rule for the teacher field given ω against fine Gauss–Legendre
    /// panels (width 1/8 in z over |z| ≤ 12), for both integrands.
    #[test]
    fn conditional_rule_is_exact() {
        let reference = |mu: f64, kappa: f64| {
            let mut acc = [0.0; 2];
            for_each_panel(-12.0, 12.0, &[], 0.125, |a, b| {
                let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
                for &(x, w) in legendre16() {
                    let z = mid + half * x;
                    let wt = half * w * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
                    let s = sigmoid(mu + kappa * z);
                    acc[0] += wt * s;
                    acc[1] += wt * s * sigmoid(-mu - kappa * z);
                }
            });
            acc
        };
        for kappa in [0.0, 0.1, 0.5, 0.75, 1.0, 1.25, 1.5, 1.6, 2.0, 3.0, 5.0, 10.0] {
            let rule = conditional_rule(kappa);
            let mut worst: f64 = 0.0;
            for i in 0..=200 {
                let mu = -5.0 + 0.05 * f64::from(i);
                let r = reference(mu, kappa);
                let g0: f64 = rule.iter().map(|&(z, w)| w * sigmoid(mu + kappa * z)).sum();
                let g1: f64 = rule
                    .iter()
                    .map(|&(z, w)| w * sigmoid(mu + kappa * z) * sigmoid(-mu - kappa * z))
                    .sum();
                worst = worst.max((g0 - r[0]).abs()).max((g1 - r[1]).abs());
            }
            assert!(worst < 1e-14, "κ = {kappa}: {worst:e}");
        }
    }
}
