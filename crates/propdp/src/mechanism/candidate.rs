//! One candidate noise mechanism for a DP-SGD problem: its participation
//! (G cyclic groups at rate p = q·G inside the group, so the expected batch
//! stays q·n), its strategy, the σ calibrated to the budget (Poisson DP-SGD
//! over ⌈T/G⌉ rounds, [`propdp_core::problem::rounds`]), the certified ε
//! that σ reads back, and the theory's prediction of the metric at step T.

use propdp_core::accountant::bracket::BracketSettings;
use propdp_core::accountant::epsilon;
use propdp_core::problem::{Budget, Strategy, Target};
use propdp_core::{Algorithm, GradientSteps, Point, Shape};
use propdp_theory::solve::TheorySolver;
use serde::{Deserialize, Serialize};

/// How a candidate's strategy was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Independent noise, one group: DP-SGD.
    Dpsgd,
    /// G groups, G bands, the coefficients minimising the prefix sums'
    /// error (jax_privacy's `optimize_banded_toeplitz`).
    PrefixSum,
    /// G groups, G bands, the coefficients minimising propdp's predicted metric.
    Optimized,
}

/// A candidate and its prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// How its strategy was chosen.
    pub origin: Origin,
    /// Cyclic groups G.
    pub groups: usize,
    /// The rate p inside the eligible group (q·G).
    pub sample_rate: f64,
    /// The strategy's first column c (‖c‖₂ = 1; `[1]`: independent noise).
    pub coefficients: Vec<f64>,
    /// σ on the summed clipped gradient, calibrated to the budget.
    pub sigma: f64,
    /// The certified ε of that σ at the budget's δ (at most the target).
    pub epsilon: f64,
    /// The metric predicted.
    pub metric: String,
    /// Its predicted value at step T.
    pub predicted: f64,
    /// The prediction's RQMC standard error.
    pub stderr: f64,
}

impl Candidate {
    /// jax_privacy's names of the run: `noise_multiplier` (σ/C), `sampling_prob`
    /// (p), `num_bands` (G) and the coefficients.
    pub fn jax_privacy(&self, clip: f64) -> serde_json::Value {
        serde_json::json!({
            "noise_multiplier": self.sigma / clip,
            "sampling_prob": self.sample_rate,
            "num_bands": self.groups,
            "coefficients": self.coefficients,
        })
    }
}

/// A descent's gradient steps (None for a perturbed minimiser).
pub fn descent(point: &Point) -> Option<GradientSteps> {
    match point.algorithm().shape() {
        Shape::Descent(g) => Some(g),
        Shape::Static { .. } => None,
    }
}

/// The problem every candidate shares: the base point (its DP-SGD at the
/// user's q), its gradient steps, the budget, the metric and the solver.
pub struct Problem<'a> {
    /// The config's point (DP-SGD, q the expected batch fraction).
    base: Point,
    /// Its DP-SGD hyperparameters.
    steps: GradientSteps,
    /// The budget every candidate's σ meets.
    budget: Budget,
    /// The metric compared.
    metric: &'a str,
    /// The theory solver of the final predictions.
    solver: &'a TheorySolver,
}

impl<'a> Problem<'a> {
    /// The problem of `base`, whose algorithm must be DP-SGD (plain: one
    /// group, independent noise — the candidates choose those).
    pub fn new(base: Point, budget: Budget, metric: &'a str, solver: &'a TheorySolver) -> crate::Result<Self> {
        let refuse = |what: &str| -> crate::Error {
            propdp_core::ConfigError::OutOfRange {
                field: "algorithm.kind".into(),
                value: format!("\"{what}\""),
                allowed: "\"dpsgd\" (mechanism chooses DP-SGD's noise)".into(),
            }
            .into()
        };
        let steps = match base.algorithm() {
            Algorithm::Dpsgd { .. } => match base.algorithm().shape() {
                Shape::Descent(g) => g,
                Shape::Static { .. } => return Err(refuse("dpsgd")),
            },
            a @ (Algorithm::Objective { .. } | Algorithm::Output { .. } | Algorithm::Dpgd { .. }) => {
                return Err(refuse(a.name()));
            }
        };
        Ok(Problem {
            base,
            steps,
            budget,
            metric,
            solver,
        })
    }

    /// DP-SGD's expected batch fraction q, steps T and clip C (∞: none).
    pub fn dpsgd(&self) -> (f64, usize, f64) {
        (self.steps.sample_rate, self.steps.steps, self.steps.clip)
    }

    /// The point of `groups` groups (rate q·G) with `strategy` at noise `sigma`.
    fn point(&self, groups: usize, strategy: Strategy, sigma: f64) -> crate::Result<Point> {
        let g = self.steps;
        let algorithm = Algorithm::Dpsgd {
            lambda: g.lambda,
            sigma,
            eta: g.eta,
            steps: g.steps,
            loss_variant: g.loss_variant,
            sample_rate: g.sample_rate * groups as f64,
            clip: g.clip.is_finite().then_some(g.clip),
            groups,
            strategy,
        };
        Ok(self.base.with_algorithm(algorithm)?)
    }

    /// σ meeting the budget with `groups` groups (any strategy of at most
    /// G bands: the guarantee does not depend on the coefficients), and its
    /// certified ε; None when no σ does.
    pub fn calibrate(&self, groups: usize) -> crate::Result<Option<(f64, f64)>> {
        let unit = self.point(groups, Strategy::IDENTITY, 1.0)?;
        let model = unit.model();
        let kind = unit.algorithm().mechanism();
        let Some(sigma) = self.budget.calibrate(&model, kind) else {
            return Ok(None);
        };
        let delta = match self.budget.target {
            Target::Approx { delta_priv, .. } => delta_priv,
            Target::Zcdp { .. } => return Ok(Some((sigma, f64::NAN))),
        };
        let mech = model.mechanism(kind, self.budget.neighbouring);
        let eps = epsilon(
            &mech.event(sigma),
            delta,
            self.budget.neighbouring,
            BracketSettings::default(),
        )?
        .map_or(f64::INFINITY, |b| b.upper);
        Ok(Some((sigma, eps)))
    }

    /// The predicted metric and its standard error for `groups` groups,
    /// `strategy` and noise `sigma`, by `solver`.
    pub fn predict(
        &self,
        solver: &TheorySolver,
        groups: usize,
        strategy: Strategy,
        sigma: f64,
    ) -> crate::Result<(f64, f64)> {
        let point = self.point(groups, strategy, sigma)?;
        let sol = solver.solve(&point, None)?;
        let value = sol.metrics.get(self.metric).copied().ok_or_else(|| {
            crate::Error::compute(format!("the theory of this point does not predict {}", self.metric))
        })?;
        // a descent's state evolution reports its RQMC error per step: never a made-up 0
        let stderr = sol
            .per_step
            .as_ref()
            .and_then(|p| p.stderr.get(self.metric))
            .and_then(|s| s.last().copied())
            .ok_or_else(|| {
                crate::Error::compute(format!(
                    "the theory of this point gives no standard error of {}",
                    self.metric
                ))
            })?;
        Ok((value, stderr))
    }

    /// A candidate of `origin` with its prediction at the full budget.
    pub fn candidate(
        &self,
        origin: Origin,
        groups: usize,
        strategy: Strategy,
        (sigma, eps): (f64, f64),
    ) -> crate::Result<Candidate> {
        let (predicted, stderr) = self.predict(self.solver, groups, strategy, sigma)?;
        Ok(Candidate {
            origin,
            groups,
            sample_rate: self.steps.sample_rate * groups as f64,
            coefficients: strategy
                .coefficients()
                .expect("the candidates are banded strategies")
                .to_vec(),
            sigma,
            epsilon: eps,
            metric: self.metric.to_string(),
            predicted,
            stderr,
        })
    }
}
