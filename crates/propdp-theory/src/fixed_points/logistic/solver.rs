//! The logistic system's solver: the map (m, q, V) → hats → (m, q, V),
//! damped fixed-point steps, Newton with backtracking, and continuation in λ.

use std::time::{Duration, Instant};

use nalgebra::{Matrix3, Vector3};
use propdp_core::config::LogisticOptions;
use propdp_core::covariance::Covariance;
use propdp_core::panels::WINDOW;
use propdp_core::record::SolverReport;

use super::quadrature::{TEACHER_PANELS, TeacherGivenField, field_nodes_shifted, normal_panels};
use super::{LogisticError, LogisticParams, LogisticState};
use crate::fixed_points::spectral::Regulariser;
use crate::numerics::gauss_hermite::NormalRule;

/// Solver holding its quadrature rule; reuse it along a sweep.
#[derive(Debug, Clone)]
pub struct LogisticSolver {
    rule: std::sync::Arc<NormalRule>,
    opts: LogisticOptions,
    /// The feature covariance (docs/theory.md §2.4); isotropic when `None`.
    pub(super) covariance: Option<Covariance>,
    /// The intercepts (β, b*) of docs/theory.md §2.6: the loss at the field
    /// ω + β, labels of ν + b*; (0, 0) without one.
    pub(super) shift: (f64, f64),
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
/// scripts/reference/gcm_reference.py); beyond, composite Gauss–Legendre.
const HERMITE_MAX_FIELD: f64 = 4.0;

impl LogisticSolver {
    /// A solver whose separability threshold integrates ν with
    /// `opts.quad_nodes` Gauss–Hermite nodes (the channel's rules are fixed:
    /// [`field_nodes`](super::field_nodes) and `conditional_rule`).
    ///
    /// ```
    /// use propdp_core::config::SolverOptions;
    /// use propdp_theory::fixed_points::logistic::{LogisticParams, LogisticSolver};
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
            shift: (0.0, 0.0),
        }
    }

    /// The same solver with the intercepts' fields fixed (docs/theory.md
    /// §2.6): the loss at ω + β, labels drawn at ν + b*. [`Self::solve`]
    /// then solves the three equations at this β;
    /// [`Self::solve_intercept`] solves for β as well.
    pub fn with_shift(&self, beta: f64, b_star: f64) -> Self {
        LogisticSolver {
            shift: (beta, b_star),
            ..self.clone()
        }
    }

    /// The same solver for features of covariance `covariance` (none:
    /// isotropic). The state is then in prediction space: m = θ*ᵀΣθ̂/d,
    /// q = θ̂ᵀΣθ̂/d ([`crate::fixed_points::spectral`]).
    pub fn with_covariance(self, covariance: Option<Covariance>) -> Self {
        LogisticSolver { covariance, ..self }
    }

    /// Nodes (z, weight) of E f(Z), Z ~ N(0, 1), for integrands of the
    /// teacher field ν = √ρ·Z: the Gauss–Hermite rule up to ρ =
    /// [`HERMITE_MAX_FIELD`]; beyond, 16-node Gauss–Legendre panels of width
    /// 2/√ρ in z over |z| ≤ 8.5, at most [`TEACHER_PANELS`] (sigmoid(ν) is analytic within π of the real
    /// axis in ν: a panel of half-width 1 in ν converges like 6.4^{−32}).
    pub(super) fn teacher_rule(&self, rho: f64) -> Vec<(f64, f64)> {
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
    pub(super) fn field(&self, p: &LogisticParams) -> f64 {
        match &self.covariance {
            Some(c) => p.s2 * c.teacher_field(),
            None => p.s2,
        }
    }

    /// Channel side: the hats (m̂, q̂, V̂) at state (b = m/ρ, τ_⊥, V) and, if
    /// asked, their 3×3 Jacobian with respect to (b, τ_⊥, V) (rows m̂, q̂, V̂).
    /// One integral over ω ~ N(0, q) ([`field_nodes`](super::field_nodes)), the teacher field
    /// integrated out given ω ([`TeacherGivenField`]): for ν-factor f,
    /// E[f(ν)·A(p)] = E_ω[E[f(ν) | ω]·A(p)]. The Jacobian is by the chain rule
    /// through the prox, ∂p/∂ω = −k, ∂p/∂V = −sigmoid(p)·k with
    /// k = 1/(1 + Vρ''(p)), and ∂ω/∂b = ν, ∂ω/∂τ_⊥ = ξ = (ω − bν)/τ_⊥, whose
    /// conditional moments E[f(ν)ν | ω] are integrated with the same rule.
    pub(super) fn hats(&self, p: &LogisticParams, b: f64, tp: f64, v: f64, jac: bool) -> ([f64; 3], [[f64; 3]; 3]) {
        let mut h = [0.0; 3];
        let mut j = [[0.0; 3]; 3];
        let (beta, b_star) = self.shift;
        // the y = −1 terms are the y = +1 terms at (−β, −b*) (docs/theory.md §2.6); equal without a shift
        if (beta, b_star) == (0.0, 0.0) {
            self.side(p, b, tp, v, (0.0, 0.0), jac, 2.0, &mut h, &mut j);
        } else {
            self.side(p, b, tp, v, (beta, b_star), jac, 1.0, &mut h, &mut j);
            self.side(p, b, tp, v, (-beta, -b_star), jac, 1.0, &mut h, &mut j);
        }
        (h, j)
    }

    /// The y = +1 terms of [`Self::hats`] with the loss at ω + β and labels
    /// of ν + b* (`shift` = (β, b*)), times `factor`/δ, added to `h` and `j`.
    #[allow(clippy::too_many_arguments)]
    fn side(
        &self,
        p: &LogisticParams,
        b: f64,
        tp: f64,
        v: f64,
        shift: (f64, f64),
        jac: bool,
        factor: f64,
        h: &mut [f64; 3],
        j: &mut [[f64; 3]; 3],
    ) {
        let rho = self.field(p);
        let (m, q) = (b * rho, b * b * rho + tp * tp);
        let teacher = TeacherGivenField::new(rho, m, q).with_offset(shift.1);
        let mut nodes = Vec::new();
        field_nodes_shifted(q, v, shift.0, -teacher.center() - shift.0, teacher.zone(), &mut nodes);
        let a = factor / p.delta;
        for &(_, sp, omega, w) in &nodes {
            let w = a * w;
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
    }

    /// The intercept's stationarity at a state (docs/theory.md §2.6):
    /// a·E\[g\] = a·E\[−ℓ'(y, prox(ω + β))\], the y = +1 side
    /// aE[sigmoid(ν + b*) sigmoid(p₊)] less the same at (−β, −b*); it
    /// decreases in β and vanishes at the fitted intercept.
    fn intercept_score(&self, p: &LogisticParams, st: &LogisticState) -> f64 {
        let rho = self.field(p);
        let (beta, b_star) = self.shift;
        let mut nodes = Vec::new();
        let mut side = |beta: f64, b_star: f64| {
            let teacher = TeacherGivenField::new(rho, st.m, st.q).with_offset(b_star);
            field_nodes_shifted(st.q, st.v, beta, -teacher.center() - beta, teacher.zone(), &mut nodes);
            nodes
                .iter()
                .map(|&(_, sp, omega, w)| w * teacher.moments(omega, false)[0] * sp)
                .sum::<f64>()
        };
        (side(beta, b_star) - side(-beta, -b_star)) / p.delta
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
    /// regulariser side over the atoms ([`crate::fixed_points::spectral::Regulariser`]),
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

    /// The system with an intercept (docs/theory.md §2.6): teacher's b*,
    /// and, if `learned`, the fitted intercept's field β, the root of the
    /// stationarity a·E\[g\] = 0 (`intercept_score`, decreasing in β)
    /// with (m, q, V) solved at each β (β = 0 when not learned). β is
    /// bracketed from [b* − 1, b* + 1], widened by doubling up to |β| ≤
    /// 1e3, and found by Brent to 1e-12; each inner solve is warm-started
    /// from the last. Returns the state, β and a report whose residual is
    /// the larger of the last inner residual and |a·E\[g\]| at β.
    pub fn solve_intercept(
        &self,
        p: &LogisticParams,
        b_star: f64,
        learned: bool,
        warm: Option<LogisticState>,
    ) -> Result<(LogisticState, f64, SolverReport), LogisticError> {
        if !learned {
            let (st, report) = self.with_shift(0.0, b_star).solve(p, warm)?;
            return Ok((st, 0.0, report));
        }
        let last = std::cell::RefCell::new((warm, 0usize, None::<LogisticError>));
        let score = |beta: f64| -> f64 {
            let solver = self.with_shift(beta, b_star);
            let mut l = last.borrow_mut();
            match solver.solve(p, l.0) {
                Ok((st, rep)) => {
                    l.0 = Some(st);
                    l.1 += rep.iterations;
                    solver.intercept_score(p, &st)
                }
                Err(e) => {
                    l.2.get_or_insert(e);
                    f64::NAN
                }
            }
        };
        let failed = |last: &std::cell::RefCell<(Option<LogisticState>, usize, Option<LogisticError>)>| {
            last.borrow_mut().2.take()
        };
        let (mut lo, mut hi) = (b_star - 1.0, b_star + 1.0);
        let (mut f_lo, mut f_hi) = (score(lo), score(hi));
        while f_lo.is_finite() && f_hi.is_finite() && f_lo * f_hi > 0.0 {
            let width = hi - lo;
            if width > 2e3 {
                return Err(LogisticError::NoSolution {
                    params: *p,
                    reason: format!(
                        "intercept = {b_star}: the fitted intercept's stationarity E[ℓ'] = 0 has no root with |β| ≤ 1e3 \
                         (the classes are separable along the intercept)"
                    ),
                });
            }
            if f_lo < 0.0 {
                lo -= width;
                f_lo = score(lo);
            } else {
                hi += width;
                f_hi = score(hi);
            }
        }
        if let Some(e) = failed(&last) {
            return Err(e);
        }
        let root = brent_absolute_counted(lo, hi, &score);
        if let Some(e) = failed(&last) {
            return Err(e);
        }
        let (beta, brent_iterations) = root.ok_or_else(|| LogisticError::NotConverged {
            params: *p,
            iterations: 200,
            residual: f_lo.abs().min(f_hi.abs()),
        })?;
        let solver = self.with_shift(beta, b_star);
        let (st, report) = solver.solve(p, last.borrow().0)?;
        let stationarity = solver.intercept_score(p, &st).abs();
        let iterations = last.borrow().1 + report.iterations + brent_iterations;
        Ok((
            st,
            beta,
            SolverReport {
                converged: true,
                iterations,
                residual: report.residual.max(stationarity),
                ..Default::default()
            },
        ))
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
}

/// Brent's root of `f` on [lo, hi] to 1e-12 absolute, with the iterations.
fn brent_absolute_counted(lo: f64, hi: f64, f: &dyn Fn(f64) -> f64) -> Option<(f64, usize)> {
    let count = std::cell::Cell::new(0usize);
    let root = crate::numerics::roots::brent_absolute(
        lo,
        hi,
        |x| {
            count.set(count.get() + 1);
            f(x)
        },
        1e-12,
        200,
    )?;
    Some((root, count.get()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed_points::logistic::prox;
    use propdp_core::loss::sigmoid;
    use propdp_core::panels::{for_each_panel, legendre16};

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
            assert_jacobian_matches(&solver, &p, &x, &format!("{p:?}"));
        }
    }

    /// The analytic Jacobian of the map at `x` against central differences
    /// (relative step 1e-5, tolerance 1e-5·(1 + |fd|)); `case` names it.
    fn assert_jacobian_matches(solver: &LogisticSolver, p: &LogisticParams, x: &X, case: &str) {
        let (_, j) = solver.map_x(p, x, true);
        for c in 0..3 {
            let h = 1e-5 * (1.0 + x[c].abs());
            let (mut xp, mut xm) = (*x, *x);
            xp[c] += h;
            xm[c] -= h;
            let fd = (solver.map_x(p, &xp, false).0 - solver.map_x(p, &xm, false).0) / (2.0 * h);
            for r in 0..3 {
                assert!(
                    (j[(r, c)] - fd[r]).abs() < 1e-5 * (1.0 + fd[r].abs()),
                    "{case} d{r}/d{c}: analytic {} fd {}",
                    j[(r, c)],
                    fd[r]
                );
            }
        }
    }

    /// With intercepts (β, b*) the analytic Jacobian of the map still matches
    /// central differences (the shift is fixed, the y = ±1 sides apart).
    #[test]
    fn analytic_jacobian_with_an_intercept_matches_finite_differences() {
        let base = LogisticSolver::new(propdp_core::config::SolverOptions::default().logistic());
        let p = LogisticParams {
            delta: 0.5,
            s2: 4.0,
            lambda: 0.5,
            sigma: 1.0,
        };
        for (beta, b_star) in [(0.7, 1.5), (-0.4, 0.8), (2.0, 2.3)] {
            let solver = base.with_shift(beta, b_star);
            let x = X::new(0.5, -0.2, -0.4);
            assert_jacobian_matches(&solver, &p, &x, &format!("(β, b*) = ({beta}, {b_star})"));
        }
    }

    /// At b* = 0 the learned intercept is 0 (the symmetry y → −y) and the
    /// state that of the system without one; at b* = 0.8 the stationarity
    /// holds at the returned β, which lies strictly between 0 and a few b*.
    #[test]
    fn the_intercepts_stationarity_is_solved() {
        let solver = LogisticSolver::new(propdp_core::config::SolverOptions::default().logistic());
        let p = LogisticParams {
            delta: 0.5,
            s2: 4.0,
            lambda: 0.5,
            sigma: 1.0,
        };
        let (plain, _) = solver.solve(&p, None).unwrap();
        let (st, beta, rep) = solver.solve_intercept(&p, 0.0, true, None).unwrap();
        assert!(beta.abs() < 1e-10 && rep.converged, "β = {beta}");
        assert!((st.q - plain.q).abs() < 1e-9 && (st.m - plain.m).abs() < 1e-9);
        let (st, beta, rep) = solver.solve_intercept(&p, 0.8, true, None).unwrap();
        assert!(beta > 0.0 && beta < 2.4, "β = {beta}");
        let score = solver.with_shift(beta, 0.8).intercept_score(&p, &st);
        assert!(
            score.abs() < 1e-10 && rep.residual < 1e-8,
            "a·E[g] = {score:e}, {rep:?}"
        );
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
}
