//! One entry point for a validated [`Point`]: dispatch to the model's solver,
//! handle output perturbation (solve at σ = 0, then shift by τ, docs/theory.md §2.3)
//! and carry warm starts along a sweep.

use propdp_core::config::{
    DEFAULT_PRECISION, DMFT_POINTS, DmftMethod, DmftOptions, FixedPointOptions, LONG_HORIZON_FROM,
    OSCILLATING_EXACT_MAX, SolverOptions,
};
use propdp_core::covariance::Covariance;
use propdp_core::metrics::Metrics;
use propdp_core::problem::DMFT_MAX_STEPS;
use propdp_core::record::{DynamicsMethod, SolverReport};
use propdp_core::{Model, Point, Shape};

use crate::dynamics::long_horizon;
use crate::dynamics::{DmftError, DmftParams, DmftPath, full_memory};
use crate::fixed_points::huber::{self, HuberParams, HuberState};
use crate::fixed_points::logistic::{LogisticError, LogisticParams, LogisticSolver, LogisticState};
use crate::solution_check::describe;
pub use crate::solution_check::{TheoryError, check_solution};

/// Solver state of either model, used to warm-start the next point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State {
    /// A Huber solution.
    Huber(HuberState),
    /// A logistic solution.
    Logistic(LogisticState),
    /// DP-GD and DP-SGD: the DMFT is solved forward from θ₀ = 0; nothing to warm-start.
    Dmft,
}

/// A converged prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// The predicted metrics.
    pub metrics: Metrics,
    /// Convergence of the solver.
    pub report: SolverReport,
    /// State to warm-start the next point.
    pub state: State,
    /// DP-GD: the prediction at every step.
    pub per_step: Option<DmftPath>,
}

/// Solves points; holds quadrature rules so they are built once per sweep.
#[derive(Debug, Clone)]
pub struct TheorySolver {
    huber: FixedPointOptions,
    logistic: LogisticSolver,
    dmft: DmftOptions,
    covariance: Option<Covariance>,
}

impl Default for TheorySolver {
    /// A solver with the default `[solver]` settings.
    fn default() -> Self {
        TheorySolver::new(SolverOptions::default())
    }
}

impl TheorySolver {
    /// A solver with the given numerical options.
    ///
    /// ```
    /// use propdp_core::{config::SolverOptions, Algorithm, Model, NoiseLaw, Point};
    /// use propdp_theory::solve::TheorySolver;
    /// let model = Model::Huber { huber_m: 1.0, noise: NoiseLaw::Gaussian { sd: 0.5 } };
    /// let obj = Point::new(0.5, 1.0, model, Algorithm::Objective { lambda: 1.0, sigma: 0.0 }).unwrap();
    /// let out = Point::new(0.5, 1.0, model, Algorithm::Output { lambda: 1.0, tau: 0.3 }).unwrap();
    /// let s = TheorySolver::new(SolverOptions::default());
    /// let (a, b) = (s.solve(&obj, None).unwrap(), s.solve(&out, None).unwrap());
    /// assert!((b.metrics["est_err2"] - a.metrics["est_err2"] - 0.09).abs() < 1e-12);
    /// ```
    pub fn new(opts: SolverOptions) -> Self {
        TheorySolver {
            huber: opts.fixed_point(),
            logistic: LogisticSolver::new(opts.logistic()),
            dmft: opts.dmft(),
            covariance: None,
        }
    }

    /// The same solver for features of covariance `covariance` (none:
    /// isotropic; docs/theory.md §2.4, §3.4). DP-GD and DP-SGD take the
    /// full-memory state evolution then (steps ≤ 1000), except unclipped
    /// least squares, solved exactly at any horizon (§3.2); the long-horizon
    /// solver refuses a spectrum ([`TheoryError::Covariance`]).
    pub fn with_covariance(self, covariance: Option<Covariance>) -> Self {
        TheorySolver {
            logistic: self.logistic.with_covariance(covariance.clone()),
            covariance,
            ..self
        }
    }

    /// The long-horizon solver's target relative standard error: the
    /// config's, or [`DEFAULT_PRECISION`] when it fixes no paths; `None`
    /// when `solver.dmft_points` fixes them.
    fn precision(&self) -> Option<f64> {
        match self.dmft.points {
            Some(_) => None,
            None => Some(self.dmft.precision.unwrap_or(DEFAULT_PRECISION)),
        }
    }

    fn dmft_params(&self, point: &Point, noise_sd: f64, default_points: usize) -> DmftParams {
        let propdp_core::GradientSteps {
            lambda,
            sigma,
            eta,
            steps,
            loss_variant,
            sample_rate,
            clip,
            groups,
            strategy,
        } = point
            .algorithm()
            .gradient_steps()
            .expect("called for DP-GD and DP-SGD points only");
        DmftParams {
            delta: point.delta(),
            s2: point.s2(),
            lambda,
            sigma,
            eta,
            steps,
            sample_rate,
            clip,
            loss: propdp_core::loss::Loss::for_dpgd(&point.model(), loss_variant),
            noise_sd,
            points: self.dmft.points.unwrap_or(default_points),
            scrambles: self.dmft.scrambles,
            seed: 1,
            groups,
            strategy,
        }
    }

    /// Solve a static (objective or output perturbation) point at noise σ
    /// (σ = 0 for output perturbation, docs/theory.md §2.3).
    fn solve_static(
        &self,
        point: &Point,
        warm: Option<State>,
        lambda: f64,
        sigma: f64,
    ) -> Result<(Static, SolverReport), TheoryError> {
        Ok(match point.model() {
            Model::Huber { huber_m, noise } => {
                let p = HuberParams {
                    delta: point.delta(),
                    s2: point.s2(),
                    huber_m,
                    noise,
                    lambda,
                    sigma,
                };
                let warm = match warm {
                    Some(State::Huber(h)) => Some(h),
                    _ => None,
                };
                let (st, report) = match &self.covariance {
                    Some(cov) => crate::fixed_points::spectral::solve_huber(&p, cov, &self.huber)?,
                    None => huber::solve(&p, &self.huber, warm)?,
                };
                // a learned intercept fits the teacher's exactly: the noise laws are symmetric (§2.6);
                // Point::check refuses a teacher's intercept that is not learned
                let beta = point
                    .intercept()
                    .map_or(0.0, |i| if i.learned { i.teacher } else { 0.0 });
                (Static::Huber(p, st, beta), report)
            }
            Model::Logistic => {
                let p = LogisticParams {
                    delta: point.delta(),
                    s2: point.s2(),
                    lambda,
                    sigma,
                };
                let warm = match warm {
                    Some(State::Logistic(l)) => Some(l),
                    _ => None,
                };
                let (st, beta, report) = match point.intercept() {
                    Some(i) => self.logistic.solve_intercept(&p, i.teacher, i.learned, warm)?,
                    None => {
                        let (st, report) = self.logistic.solve(&p, warm)?;
                        (st, 0.0, report)
                    }
                };
                (Static::Logistic(p, st, beta), report)
            }
            Model::LeastSquares { .. } => {
                unreachable!("least squares is refused for objective and output perturbation by Point::check")
            }
        })
    }

    /// The metrics that follow from the solver state alone (est_err2, est_err,
    /// overlap, norm2, bias_factor), without the quadratures of the others —
    /// for searches that call the solver many times.
    pub fn solve_light(&self, point: &Point, warm: Option<State>) -> Result<(Metrics, State), TheoryError> {
        let (Shape::Static { lambda, sigma, tau }, None, None) =
            (point.algorithm().shape(), &self.covariance, point.intercept())
        else {
            let sol = self.solve(point, warm)?;
            return Ok((sol.metrics, sol.state));
        };
        let (m, q, state) = match self.solve_static(point, warm, lambda, sigma)?.0 {
            Static::Huber(_, st, _) => {
                let m = point.s2() * (1.0 - lambda * st.v);
                (m, st.alpha2 + 2.0 * m - point.s2(), State::Huber(st))
            }
            Static::Logistic(_, st, _) => (st.m, st.q, State::Logistic(st)),
        };
        let q = q + tau * tau;
        let err2 = q - 2.0 * m + point.s2();
        let mut out = Metrics::new();
        out.insert(propdp_core::metrics::EST_ERR2.into(), err2);
        out.insert(propdp_core::metrics::EST_ERR.into(), err2.max(0.0).sqrt());
        out.insert(propdp_core::metrics::OVERLAP.into(), m);
        out.insert(propdp_core::metrics::NORM2.into(), q);
        out.insert(propdp_core::metrics::BIAS_FACTOR.into(), m / point.s2());
        check_solution(point, &out)?;
        Ok((out, state))
    }

    /// Solve one point; `warm` is the state of a nearby point of the same
    /// model. A solution is returned only when every metric is finite and
    /// consistent ([`check_solution`]).
    pub fn solve(&self, point: &Point, warm: Option<State>) -> Result<Solution, TheoryError> {
        self.solve_cancellable(point, warm, &|| false)
    }

    /// [`TheorySolver::solve`], stopping a DP-GD/DP-SGD solve (the long
    /// ones: minutes at T in the hundreds) at the first DMFT step at which
    /// `cancelled` returns true, with [`DmftError::Cancelled`]. The
    /// static solvers take milliseconds and are not interrupted.
    pub fn solve_cancellable(
        &self,
        point: &Point,
        warm: Option<State>,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<Solution, TheoryError> {
        let sol = self.solve_unchecked(point, warm, cancelled)?;
        check_solution(point, &sol.metrics)?;
        if let Some(path) = &sol.per_step {
            for (k, v) in path.mean.iter().chain(&path.stderr) {
                if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                    return Err(TheoryError::NotFinite {
                        metric: format!("{k} (per step)"),
                        value: *x,
                        params: describe(point),
                    });
                }
            }
        }
        Ok(sol)
    }

    fn solve_unchecked(
        &self,
        point: &Point,
        warm: Option<State>,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<Solution, TheoryError> {
        if let (Model::Logistic, Shape::Static { lambda, tau, .. }) = (point.model(), point.algorithm().shape())
            && tau > crate::fixed_points::logistic::MAX_NOISE_RATIO
        {
            return Err(LogisticError::OutOfRange {
                params: LogisticParams {
                    delta: point.delta(),
                    s2: point.s2(),
                    lambda,
                    sigma: 0.0,
                },
                reason: format!(
                    "τ = {tau:e} > {:e}: the test metrics' quadrature over the output noise grows like τ; \
                     there est_err2 ≈ τ² and the classifier is a coin flip",
                    crate::fixed_points::logistic::MAX_NOISE_RATIO
                ),
            }
            .into());
        }
        let (lambda, sigma, tau) = match point.algorithm().shape() {
            Shape::Static { lambda, sigma, tau } => (lambda, sigma, tau),
            Shape::Descent(_) => return self.solve_dmft(point, cancelled),
        };
        let (st, report) = self.solve_static(point, warm, lambda, sigma)?;
        let b_star = point.intercept().map_or(0.0, |i| i.teacher);
        let (Static::Huber(_, _, beta) | Static::Logistic(_, _, beta)) = st;
        let mut sol = match st {
            Static::Huber(p, st, _) => Solution {
                metrics: match &self.covariance {
                    Some(cov) => crate::fixed_points::spectral::huber_metrics(&p, cov, &st, tau),
                    None => huber::metrics(&p, &st, tau),
                },
                report,
                state: State::Huber(st),
                per_step: None,
            },
            Static::Logistic(p, st, beta) => Solution {
                metrics: match point.intercept() {
                    Some(_) => self.logistic.with_shift(beta, b_star).metrics(&p, &st, tau),
                    None => self.logistic.metrics(&p, &st, tau),
                },
                report,
                state: State::Logistic(st),
                per_step: None,
            },
        };
        // the intercept's field (§2.6): the release's own noise on it is O(1/√d)
        if point.intercept().is_some() {
            sol.metrics.insert(propdp_core::metrics::FITTED_INTERCEPT.into(), beta);
        }
        Ok(sol)
    }

    /// DP-GD and DP-SGD: the path of the state evolution [`TheorySolver::dynamics`]
    /// chooses; the point's summary is the last step. A point with an
    /// intercept (docs/theory.md §3.5) is solved by the same state evolutions
    /// with the intercept's field, isotropic or with the solver's covariance;
    /// unclipped least squares, whose exact trajectory (§3.2) has no
    /// intercept, by the full-memory DMFT up to [`LONG_HORIZON_FROM`] steps
    /// and the long horizon beyond; a two-cluster point (§3.6) by the same
    /// rule ([`TheorySolver::solve_two_cluster`]).
    fn solve_dmft(&self, point: &Point, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<Solution, TheoryError> {
        let noise_sd = self.label_noise_sd(point)?;
        let icp = point.intercept().map(|i| crate::dynamics::Intercept {
            teacher: i.teacher,
            learned: i.learned,
            lambda: 0.0,
        });
        let mut sol = match point.two_cluster() {
            Some(mix) => {
                self.check_correlated(point, DynamicsMethod::Dmft)?;
                self.solve_two_cluster(point, &mix, icp.as_ref(), cancelled)?
            }
            None => {
                let method = match self.dynamics(point, noise_sd)? {
                    DynamicsMethod::Spectral if icp.is_some() => {
                        let steps = point.algorithm().gradient_steps().map_or(0, |g| g.steps);
                        if steps > LONG_HORIZON_FROM {
                            DynamicsMethod::LongHorizon
                        } else {
                            DynamicsMethod::Dmft
                        }
                    }
                    method => method,
                };
                self.check_correlated(point, method)?;
                match method {
                    DynamicsMethod::Spectral => self.solve_least_squares(point, noise_sd)?,
                    DynamicsMethod::LongHorizon => self.solve_long_horizon(point, noise_sd, icp.as_ref(), cancelled)?,
                    DynamicsMethod::Dmft => self.solve_full_memory(point, noise_sd, icp.as_ref(), cancelled)?,
                }
            }
        };
        let label_variance = match point.model() {
            Model::Logistic => None,
            Model::Huber { .. } | Model::LeastSquares { .. } => Some(noise_sd * noise_sd),
        };
        let path = sol.per_step.take().expect("a DP-GD/DP-SGD solve has a path");
        let path = path.with_test_error(label_variance);
        sol.metrics = path.last();
        sol.per_step = Some(path);
        Ok(sol)
    }

    /// A point of the two-cluster data model (docs/theory.md §3.6),
    /// isotropic or with the solver's covariance, with a learned intercept if
    /// the point has one, by the state evolution [`TheorySolver::dynamics`]
    /// chooses (as for the teacher's model, XᵀX's spectrum scaled by κ²).
    fn solve_two_cluster(
        &self,
        point: &Point,
        mix: &propdp_core::problem::TwoCluster,
        icp: Option<&crate::dynamics::Intercept>,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<Solution, TheoryError> {
        let cov = self.covariance.as_ref();
        if self.dynamics(point, 0.0)? == DynamicsMethod::LongHorizon {
            let params = self.dmft_params(point, 0.0, long_horizon::precision::PILOT_POINTS);
            let r = match self.precision() {
                Some(target) => long_horizon::solve_to_precision(&params, cov, icp, Some(mix), target, cancelled)?,
                None => long_horizon::solve_two_cluster(&params, cov, mix, icp, cancelled)?,
            };
            return Ok(long_horizon_solution(r));
        }
        let params = self.dmft_params(point, 0.0, DMFT_POINTS);
        Ok(full_memory_solution(full_memory::solve_two_cluster(
            &params, cov, mix, icp, cancelled,
        )?))
    }

    /// Refuse a point with cyclic groups or a noise strategy whose state
    /// evolution `method` does not take them (docs/theory.md §3.7): the
    /// full-memory and long-horizon state evolutions take both, the exact
    /// least-squares trajectory a strategy with one group (`dynamics`
    /// sends groups elsewhere), the two-cluster model neither.
    fn check_correlated(&self, point: &Point, method: DynamicsMethod) -> Result<(), TheoryError> {
        let Shape::Descent(g) = point.algorithm().shape() else {
            return Ok(());
        };
        let refuse = |field: &str, what: &str| {
            Err(TheoryError::CorrelatedNoise {
                field: field.into(),
                what: what.into(),
                params: describe(point),
            })
        };
        if g.is_plain() {
            return Ok(());
        }
        if point.two_cluster().is_some() {
            let field = if g.groups > 1 {
                "algorithm.groups"
            } else {
                "algorithm.strategy"
            };
            return refuse(
                field,
                "the two-cluster data model's state evolutions take neither cyclic groups nor a noise strategy; \
                 use groups = 1 and the identity strategy, or run the simulation alone",
            );
        }
        match method {
            DynamicsMethod::LongHorizon | DynamicsMethod::Dmft => Ok(()),
            DynamicsMethod::Spectral if g.groups == 1 && point.intercept().is_none() => Ok(()),
            DynamicsMethod::Spectral => refuse(
                "algorithm.groups",
                "the exact least-squares trajectory takes no cyclic groups (they go to the state evolutions)",
            ),
        }
    }

    /// The sd of the Gaussian label noise a DP-GD/DP-SGD point draws (0 for
    /// logistic labels); other noise laws are refused.
    fn label_noise_sd(&self, point: &Point) -> Result<f64, TheoryError> {
        Ok(match point.model() {
            Model::Huber {
                noise: propdp_core::NoiseLaw::Gaussian { sd },
                ..
            }
            | Model::LeastSquares {
                noise: propdp_core::NoiseLaw::Gaussian { sd },
            } => sd,
            Model::Huber { .. } | Model::LeastSquares { .. } => {
                return Err(DmftError::Invalid {
                    what: "the DMFT draws regression labels with Gaussian noise only".into(),
                    params: Box::new(self.dmft_params(point, 0.0, DMFT_POINTS)),
                }
                .into());
            }
            Model::Logistic => 0.0,
        })
    }

    /// Which state evolution serves a DP-GD/DP-SGD point under
    /// `solver.dmft`: unclipped least squares exactly (§3.2,
    /// [`DynamicsMethod::Spectral`]), the long horizon beyond
    /// `LONG_HORIZON_FROM` steps (§3.3), the full-memory DMFT otherwise (§3,
    /// §3.4; two clusters, §3.6, alike) — or the refusal of a point none of
    /// them serves.
    fn dynamics(&self, point: &Point, noise_sd: f64) -> Result<DynamicsMethod, TheoryError> {
        let Shape::Descent(g) = point.algorithm().shape() else {
            unreachable!("static points are solved by solve_static")
        };
        let steps = g.steps;
        let method = self.dmft.method;
        let cov = self.covariance.as_ref();
        if cov.is_some() && method == DmftMethod::Exact && steps > DMFT_MAX_STEPS {
            return Err(TheoryError::Covariance {
                what: format!(
                    "the full-memory state evolution with a spectrum serves steps ≤ {DMFT_MAX_STEPS}; use \
                     solver.dmft = \"auto\" or \"long_horizon\" for steps = {steps}"
                ),
                params: describe(point),
            });
        }
        // unclipped least squares: the exact spectral integral, with or without a spectrum (§3.2)
        // (one group: cyclic groups are the long horizon's, §3.7)
        let spectral = matches!(point.model(), Model::LeastSquares { .. })
            && g.clip.is_infinite()
            && method == DmftMethod::Auto
            && g.groups == 1;
        if spectral {
            return Ok(DynamicsMethod::Spectral);
        }
        // otherwise, with or without a spectrum: the full-memory state evolution up to LONG_HORIZON_FROM
        // steps, the long horizon beyond (one mode per atom, docs/theory.md §3.4)
        let long = method == DmftMethod::LongHorizon || (method == DmftMethod::Auto && steps > LONG_HORIZON_FROM);
        // beyond the mean step's limit 2/L_q the iterates oscillate and the response kernels alternate in
        // sign, which the long horizon's block memory does not resolve (docs/theory.md §3.3, "Step sizes
        // beyond the limit"): the full-memory DMFT where it is affordable, a refusal beyond
        let q = g.sample_rate;
        // two clusters: the within-class covariance κ²Σ scales XᵀX's spectrum by κ²
        let curvature = point.model().curvature() * point.two_cluster().map_or(1.0, |m| m.within);
        // with G groups a step's batch comes from n/G rows: the mean step of a group at δ·G (§3.7)
        let limit = 2.0
            / propdp_core::problem::mean_step_smoothness_at(
                curvature,
                point.delta() * g.groups as f64,
                point.algorithm().lambda(),
                q,
                cov,
            );
        let eta = g.eta;
        let oscillating = long && eta >= limit;
        if oscillating && (method == DmftMethod::LongHorizon || steps > OSCILLATING_EXACT_MAX) {
            return Err(DmftError::Invalid {
                what: format!(
                    "algorithm.eta ≥ 2/L_q = {:.4} (the mean step's stability limit at δ = {:?}, q = {q:?}): the \
                     iterates oscillate, and the long-horizon state evolution is not vouched for there; lower \
                     algorithm.eta below the limit, or give steps ≤ {OSCILLATING_EXACT_MAX} (solver.dmft = \
                     \"auto\") or solver.dmft = \"exact\" (steps ≤ {DMFT_MAX_STEPS}; O(N·T³): T = 105 takes \
                     seconds, T = 1000 an hour or more)",
                    limit,
                    point.delta(),
                ),
                params: Box::new(self.dmft_params(point, noise_sd, long_horizon::precision::PILOT_POINTS)),
            }
            .into());
        }
        if long && !oscillating {
            return Ok(DynamicsMethod::LongHorizon);
        }
        if steps > DMFT_MAX_STEPS {
            return Err(DmftError::Invalid {
                what: format!(
                    "solver.dmft = \"exact\" serves steps ≤ {DMFT_MAX_STEPS} (O(N·T³): T = 1000 takes about half an \
                     hour); use dmft = \"auto\" or \"long_horizon\" for steps = {steps}"
                ),
                params: Box::new(self.dmft_params(point, noise_sd, DMFT_POINTS)),
            }
            .into());
        }
        Ok(DynamicsMethod::Dmft)
    }

    /// The long-horizon state evolution (§3.3), one mode per atom of the
    /// solver's covariance if any, with the intercept's field if any (§3.5),
    /// on the default paths for its cost.
    fn solve_long_horizon(
        &self,
        point: &Point,
        noise_sd: f64,
        icp: Option<&crate::dynamics::Intercept>,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<Solution, TheoryError> {
        let cov = self.covariance.as_ref();
        let params = self.dmft_params(point, noise_sd, long_horizon::precision::PILOT_POINTS);
        let r = match (self.precision(), icp) {
            (Some(target), _) => long_horizon::solve_to_precision(&params, cov, icp, None, target, cancelled)?,
            (None, Some(icp)) => long_horizon::solve_intercept(&params, cov, icp, cancelled)?,
            (None, None) => long_horizon::solve_spectrum(&params, cov, cancelled)?,
        };
        Ok(long_horizon_solution(r))
    }

    /// The full-memory state evolution (§3, §3.4 with the solver's
    /// covariance, §3.5 with the intercept's field if any).
    fn solve_full_memory(
        &self,
        point: &Point,
        noise_sd: f64,
        icp: Option<&crate::dynamics::Intercept>,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<Solution, TheoryError> {
        let params = self.dmft_params(point, noise_sd, DMFT_POINTS);
        let cov = self.covariance.as_ref();
        Ok(full_memory_solution(match icp {
            Some(icp) => full_memory::solve_intercept(&params, cov, icp, cancelled)?,
            None => full_memory::solve_spectral(&params, cov, cancelled)?,
        }))
    }

    /// Unclipped least squares: the exact trajectory ([`crate::dynamics::least_squares`]),
    /// with the solver's covariance if any.
    fn solve_least_squares(&self, point: &Point, noise_sd: f64) -> Result<Solution, TheoryError> {
        let g = point
            .algorithm()
            .gradient_steps()
            .expect("DP-GD and DP-SGD points only");
        let params = crate::dynamics::least_squares::LeastSquaresParams {
            delta: point.delta(),
            s2: point.s2(),
            noise_sd,
            lambda: g.lambda,
            sigma: g.sigma,
            eta: g.eta,
            sample_rate: g.sample_rate,
            steps: g.steps,
        };
        let r = crate::dynamics::least_squares::solve_correlated(&params, self.covariance.as_ref(), &g.strategy)?;
        Ok(Solution {
            metrics: r.path.last(),
            report: SolverReport {
                converged: true,
                iterations: g.steps,
                residual: 0.0,
                method: Some(DynamicsMethod::Spectral),
                approx_error: Some(r.approx_error),
                window: None,
                atoms: None,
                rqmc: None,
            },
            state: State::Dmft,
            per_step: Some(r.path),
        })
    }
}

/// A long-horizon path as a solution: its approximation error and window in the report.
fn long_horizon_solution(r: long_horizon::LongHorizonPath) -> Solution {
    Solution {
        metrics: r.path.last(),
        report: SolverReport {
            converged: true,
            iterations: r.path.mean.values().next().map_or(0, |v| v.len() - 1),
            residual: last_stderr(&r.path),
            method: Some(DynamicsMethod::LongHorizon),
            approx_error: Some(r.approx_error),
            window: Some(r.window),
            atoms: (r.modes > 1).then_some(r.modes),
            rqmc: Some(propdp_core::record::Rqmc {
                points: r.points,
                replicates: r.replicates,
                target: r.target,
                precision: long_horizon::precision::relative_stderr(&r.path),
            }),
        },
        state: State::Dmft,
        per_step: Some(r.path),
    }
}

/// A full-memory DMFT path as a solution: its last step, every step
/// solved, the largest last-step standard error as the residual.
fn full_memory_solution(path: DmftPath) -> Solution {
    Solution {
        metrics: path.last(),
        report: SolverReport {
            converged: true,
            iterations: path.mean.values().next().map_or(0, |v| v.len() - 1),
            residual: last_stderr(&path),
            method: Some(DynamicsMethod::Dmft),
            ..Default::default()
        },
        state: State::Dmft,
        per_step: Some(path),
    }
}

/// The largest standard error of any metric at the last step.
fn last_stderr(path: &DmftPath) -> f64 {
    path.stderr
        .values()
        .filter_map(|v| v.last())
        .fold(0.0, |a: f64, &b| a.max(b))
}

/// A solved static point: the model's parameters, its state and the
/// fitted intercept's field β (0 without one; docs/theory.md §2.6).
enum Static {
    Huber(HuberParams, HuberState, f64),
    Logistic(LogisticParams, LogisticState, f64),
}
