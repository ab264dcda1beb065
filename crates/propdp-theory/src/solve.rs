//! One entry point for a validated [`Point`]: dispatch to the model's solver,
//! handle output perturbation (solve at σ = 0, then shift by τ, SPEC.md §2.3)
//! and carry warm starts along a sweep.

use propdp_core::config::SolverOptions;
use propdp_core::metrics::Metrics;
use propdp_core::record::SolverReport;
use propdp_core::{Algorithm, Model, Point};
use thiserror::Error;

use crate::huber::{self, HuberError, HuberParams, HuberState};
use crate::logistic::{LogisticError, LogisticParams, LogisticSolver, LogisticState};

/// Solver state of either model, used to warm-start the next point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State {
    Huber(HuberState),
    Logistic(LogisticState),
}

/// A converged prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    pub metrics: Metrics,
    pub report: SolverReport,
    pub state: State,
}

/// Any theory failure.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TheoryError {
    #[error(transparent)]
    Huber(#[from] HuberError),
    #[error(transparent)]
    Logistic(#[from] LogisticError),
    /// The point's algorithm has no theory solver yet.
    #[error("no theory for {0} yet: the DP-GD state evolution (DMFT) solver is not implemented")]
    Unsupported(String),
}

/// Solves points; holds quadrature rules so they are built once per sweep.
#[derive(Debug, Clone)]
pub struct TheorySolver {
    opts: SolverOptions,
    logistic: LogisticSolver,
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
            opts,
            logistic: LogisticSolver::new(opts),
        }
    }

    /// Solve one point; `warm` is the state of a nearby point of the same model.
    pub fn solve(&self, point: &Point, warm: Option<State>) -> Result<Solution, TheoryError> {
        let (lambda, sigma, tau) = match point.algorithm {
            Algorithm::Objective { lambda, sigma } => (lambda, sigma, 0.0),
            Algorithm::Output { lambda, tau } => (lambda, 0.0, tau),
            Algorithm::Dpgd { .. } => return Err(TheoryError::Unsupported(format!("{:?}", point.algorithm))),
        };
        match point.model {
            Model::Huber { huber_m, noise } => {
                let p = HuberParams {
                    delta: point.delta,
                    s2: point.s2,
                    huber_m,
                    noise,
                    lambda,
                    sigma,
                };
                let warm = match warm {
                    Some(State::Huber(h)) => Some(h),
                    _ => None,
                };
                let (st, report) = huber::solve(&p, &self.opts, warm)?;
                Ok(Solution {
                    metrics: huber::metrics(&p, &st, tau),
                    report,
                    state: State::Huber(st),
                })
            }
            Model::Logistic => {
                let p = LogisticParams {
                    delta: point.delta,
                    s2: point.s2,
                    lambda,
                    sigma,
                };
                let warm = match warm {
                    Some(State::Logistic(l)) => Some(l),
                    _ => None,
                };
                let (st, report) = self.logistic.solve(&p, warm)?;
                Ok(Solution {
                    metrics: self.logistic.metrics(&p, &st, tau),
                    report,
                    state: State::Logistic(st),
                })
            }
        }
    }
}
