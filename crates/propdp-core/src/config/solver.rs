//! The `[solver]` table: numerical settings of the theory solvers, and the
//! part of them each solver receives.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// `[solver]` table: numerical settings of the theory solvers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SolverOptions {
    /// Convergence tolerance on the fixed-point residual.
    pub tol: f64,
    /// Iteration cap of the outer solver.
    pub max_iter: usize,
    /// Gauss–Hermite nodes over the teacher field ν of the logistic
    /// separability threshold (λ = 0); the logistic channel's rules are fixed
    /// (docs/theory.md §2.2).
    pub quad_nodes: usize,
    /// DP-GD theory: RQMC sample points per scramble (≤ 65536); when absent
    /// [`DMFT_POINTS`] for the full-memory state evolution, and for the
    /// long-horizon one as many as `precision` asks for.
    pub dmft_points: Option<usize>,
    /// DP-GD theory: independent scrambles (≥ 2; their spread is the stderr).
    pub dmft_scrambles: usize,
    /// Long-horizon theory: the relative standard error its metrics at the
    /// last step should reach (1e-4 ≤ precision ≤ 0.2); the paths follow
    /// from a pilot solve's spread (`propdp_theory::dynamics::long_horizon::
    /// precision`). Absent: [`DEFAULT_PRECISION`] when `dmft_points` is
    /// absent too; `dmft_points` fixes the paths instead (not both).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Wall-clock budget of one point's iterative solve, in seconds: past it
    /// the point is a typed error, not a wait.
    pub time_limit: f64,
    /// How DP-GD/DP-SGD trajectories are predicted: `auto` (unclipped least
    /// squares exactly as a spectral integral, the rest by the full-memory
    /// DMFT up to [`LONG_HORIZON_FROM`] steps and the long-horizon state
    /// evolution beyond — but for DP-SGD beyond the step-size limit 2/L_q,
    /// where the full-memory DMFT serves up to [`OSCILLATING_EXACT_MAX`]
    /// steps and longer horizons are refused), `exact` (the DMFT with its full memory for every
    /// model, O(N·T³), T ≤ 1000: the reference) or `long_horizon` (the
    /// long-horizon state evolution for every model).
    pub dmft: DmftMethod,
}

/// Default RQMC points per scramble of the full-memory state evolution.
pub const DMFT_POINTS: usize = 1 << 14;
/// The long-horizon state evolution's default relative standard error at
/// the last step (`solver.precision`), the largest over est_err2,
/// pred_err2, norm2, the training loss and the test error: what keeps it
/// below half a d = 1000, 40-repetition simulation's (docs/theory.md §3.3,
/// "Precision").
pub const DEFAULT_PRECISION: f64 = 0.02;
/// Horizons above which `dmft = "auto"` uses the long-horizon state evolution.
pub const LONG_HORIZON_FROM: usize = 100;
/// Longest horizon `dmft = "auto"` solves with the full-memory DMFT where
/// the long-horizon state evolution is not vouched for (a DP-SGD step size
/// beyond the mean step's limit 2/L_q, docs/theory.md §3.3): a few minutes
/// at O(N·T³); longer horizons there are refused.
pub const OSCILLATING_EXACT_MAX: usize = 300;

/// `solver.dmft`: the method of DP-GD/DP-SGD predictions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DmftMethod {
    /// The spectral solution for unclipped least squares; otherwise the
    /// full-memory DMFT up to [`LONG_HORIZON_FROM`] steps, the long-horizon
    /// state evolution beyond.
    #[default]
    Auto,
    /// The full-memory DMFT for every model (T ≤ 1000).
    Exact,
    /// The long-horizon state evolution for every model (refused for DP-SGD
    /// beyond the step-size limit 2/L_q, where it is not vouched for).
    LongHorizon,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            tol: 1e-10,
            max_iter: 500,
            quad_nodes: 96,
            dmft_points: None,
            dmft_scrambles: 4,
            precision: None,
            time_limit: 60.0,
            dmft: DmftMethod::Auto,
        }
    }
}

/// What the Huber fixed-point solver uses: tolerance and iteration cap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedPointOptions {
    /// Convergence tolerance on the fixed-point residual.
    pub tol: f64,
    /// Iteration cap.
    pub max_iter: usize,
}

/// What the logistic solver uses: the fixed-point settings and its quadrature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogisticOptions {
    /// Tolerance and iteration cap.
    pub fixed_point: FixedPointOptions,
    /// Gauss–Hermite nodes over the teacher field ν of the separability
    /// threshold.
    pub quad_nodes: usize,
    /// Wall-clock budget of one solve, in seconds.
    pub time_limit: f64,
}

/// What the DP-GD state evolution uses: its RQMC budget and method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DmftOptions {
    /// Scrambled Sobol points per scramble (absent: the method's default).
    pub points: Option<usize>,
    /// Independent scrambles (their spread is the standard error).
    pub scrambles: usize,
    /// The long-horizon solver's target relative standard error (absent:
    /// the default, unless `points` fixes the paths).
    pub precision: Option<f64>,
    /// The method.
    pub method: DmftMethod,
}

impl SolverOptions {
    /// Range checks, naming the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        if !(self.tol > 0.0 && self.tol <= 1e-4) {
            return Err(ConfigError::range("solver.tol", self.tol, "0 < tol ≤ 1e-4"));
        }
        if self.max_iter == 0 {
            return Err(ConfigError::range("solver.max_iter", 0, "≥ 1"));
        }
        if !(8..=256).contains(&self.quad_nodes) {
            return Err(ConfigError::range(
                "solver.quad_nodes",
                self.quad_nodes,
                "8 ≤ quad_nodes ≤ 256",
            ));
        }
        if let Some(points) = self.dmft_points
            && !(256..=65_536).contains(&points)
        {
            return Err(ConfigError::range(
                "solver.dmft_points",
                points,
                "256 ≤ dmft_points ≤ 65536",
            ));
        }
        if let Some(p) = self.precision {
            if !(1e-4..=0.2).contains(&p) {
                return Err(ConfigError::range(
                    "solver.precision",
                    p,
                    "1e-4 ≤ precision ≤ 0.2 (a relative standard error)",
                ));
            }
            if self.dmft_points.is_some() {
                return Err(ConfigError::range(
                    "solver.precision",
                    p,
                    "absent when solver.dmft_points is given: the points fix the paths, the precision chooses them",
                ));
            }
        }
        if !(self.time_limit >= 0.1 && self.time_limit <= 86_400.0) {
            return Err(ConfigError::range(
                "solver.time_limit",
                self.time_limit,
                "0.1 ≤ time_limit ≤ 86400 seconds",
            ));
        }
        if !(2..=64).contains(&self.dmft_scrambles) {
            return Err(ConfigError::range(
                "solver.dmft_scrambles",
                self.dmft_scrambles,
                "2 ≤ dmft_scrambles ≤ 64",
            ));
        }
        Ok(())
    }

    /// The Huber solver's part.
    ///
    /// ```
    /// use propdp_core::config::SolverOptions;
    /// let o = SolverOptions { tol: 1e-8, ..SolverOptions::default() };
    /// assert_eq!(o.fixed_point().tol, 1e-8);
    /// assert_eq!(o.logistic().quad_nodes, 96);
    /// assert_eq!(o.dmft().points, None);
    /// ```
    pub fn fixed_point(&self) -> FixedPointOptions {
        FixedPointOptions {
            tol: self.tol,
            max_iter: self.max_iter,
        }
    }

    /// The logistic solver's part.
    pub fn logistic(&self) -> LogisticOptions {
        LogisticOptions {
            fixed_point: self.fixed_point(),
            quad_nodes: self.quad_nodes,
            time_limit: self.time_limit,
        }
    }

    /// The DP-GD state evolution's part.
    pub fn dmft(&self) -> DmftOptions {
        DmftOptions {
            points: self.dmft_points,
            scrambles: self.dmft_scrambles,
            precision: self.precision,
            method: self.dmft,
        }
    }
}
