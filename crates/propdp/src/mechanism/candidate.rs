//! One candidate noise mechanism for a DP-SGD problem: its participation
//! (G cyclic groups at rate p inside the eligible group: p = q·G, so the
//! expected batch stays q·n, or p = 1 in the fixed order), its strategy,
//! the σ calibrated to the budget (Poisson DP-SGD over ⌈T/G⌉ rounds,
//! [`propdp_core::problem::rounds`], or in the fixed order one Gaussian
//! release of the strategy's sensitivity), the certified ε that σ reads
//! back, and the theory's prediction of the metric at step T.

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
    /// G ≥ 1/q groups in the fixed order (rate 1 inside the group), a
    /// buffered linear Toeplitz strategy minimising propdp's predicted metric.
    Blt,
}

impl Origin {
    /// The candidate's name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Origin::Dpsgd => "dpsgd",
            Origin::PrefixSum => "prefix-sum",
            Origin::Optimized => "optimized",
            Origin::Blt => "blt",
        }
    }
}

/// A BLT strategy's parameters in jax_privacy's names
/// (`buffered_toeplitz.BufferedToeplitz`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BltParameters {
    /// The buffers' decays θ.
    pub buf_decay: Vec<f64>,
    /// The buffers' output scales ω.
    pub output_scale: Vec<f64>,
}

impl BltParameters {
    /// The L2 sensitivity per unit of clip of the normalised BLT's noisy
    /// stream over `steps` steps in `groups` groups in the fixed order
    /// ([`Strategy::sensitivity`]).
    fn sensitivity(&self, steps: usize, groups: usize) -> f64 {
        Strategy::blt(&self.buf_decay, &self.output_scale).map_or(f64::NAN, |s| s.sensitivity(steps, groups))
    }
}

/// How a candidate's rows take part: G cyclic groups, only group t mod G
/// eligible at step t, each of its rows taken with probability
/// `sample_rate`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Participation {
    /// Cyclic groups G.
    pub groups: usize,
    /// The rate p inside the eligible group.
    pub sample_rate: f64,
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
    /// The strategy's first column c (‖c‖₂ = 1; `[1]`: independent noise);
    /// for a BLT its first T entries, the whole strategy over the run.
    pub coefficients: Vec<f64>,
    /// A BLT's parameters (None: banded).
    #[serde(default)]
    pub blt: Option<BltParameters>,
    /// The step size η of the run (the config's; in `propdp tune`, searched
    /// again for the correlated run).
    #[serde(default)]
    pub eta: Option<f64>,
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
    /// (p), `num_bands` (G) and the coefficients; for a BLT `buf_decay`,
    /// `output_scale` and `min_sep` (G) instead of `num_bands` and the
    /// coefficients, and the noise multiplier of the stream's one Gaussian
    /// release: noise std nm·C·sens(C) for jax_privacy's unnormalised C
    /// (c₀ = 1, docs/correlated_noise.md), so nm = σ/(C·s) with s the
    /// sensitivity of propdp's normalised one ([`Strategy::sensitivity`]).
    pub fn jax_privacy(&self, clip: f64) -> serde_json::Value {
        match &self.blt {
            None => serde_json::json!({
                "noise_multiplier": self.sigma / clip,
                "sampling_prob": self.sample_rate,
                "num_bands": self.groups,
                "coefficients": self.coefficients,
            }),
            Some(b) => serde_json::json!({
                "noise_multiplier": self.sigma / (clip * b.sensitivity(self.coefficients.len(), self.groups)),
                "sampling_prob": self.sample_rate,
                "min_sep": self.groups,
                "buf_decay": b.buf_decay,
                "output_scale": b.output_scale,
            }),
        }
    }

    /// The candidate's strategy.
    pub fn strategy(&self) -> crate::Result<Strategy> {
        Ok(match &self.blt {
            Some(b) => Strategy::blt(&b.buf_decay, &b.output_scale)?,
            None => Strategy::banded(&self.coefficients)?,
        })
    }

    /// The candidate's participation.
    pub fn participation(&self) -> Participation {
        Participation {
            groups: self.groups,
            sample_rate: self.sample_rate,
        }
    }
}

/// The fixed order (rate 1 inside the group) in the fewest groups whose
/// batch n/G is at most DP-SGD's expected q·n: G = ⌈1/q⌉; None when that is
/// more than the `steps` T (some rows would never be used).
pub fn fixed_order(q: f64, steps: usize) -> Option<Participation> {
    // 1/q within rounding of an integer is that integer
    let groups = ((1.0 / q) * (1.0 - 1e-12)).ceil().max(1.0) as usize;
    (groups <= steps).then_some(Participation {
        groups,
        sample_rate: 1.0,
    })
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

    /// DP-SGD's step size η.
    pub fn eta(&self) -> f64 {
        self.steps.eta
    }

    /// The problem with step size `eta` in place of the base point's.
    pub fn at_eta(&self, eta: f64) -> Problem<'a> {
        Problem {
            steps: GradientSteps { eta, ..self.steps },
            ..*self
        }
    }

    /// DP-SGD's expected batch fraction q, steps T and clip C (∞: none).
    pub fn dpsgd(&self) -> (f64, usize, f64) {
        (self.steps.sample_rate, self.steps.steps, self.steps.clip)
    }

    /// G groups at rate q·G: the expected batch q·n (amplified BandMF).
    pub fn amplified(&self, groups: usize) -> Participation {
        Participation {
            groups,
            sample_rate: self.steps.sample_rate * groups as f64,
        }
    }

    /// The fixed order for DP-SGD's q and T ([`fixed_order`]).
    pub fn fixed_order(&self) -> Option<Participation> {
        fixed_order(self.steps.sample_rate, self.steps.steps)
    }

    /// The point of participation `part` with `strategy` at noise `sigma`.
    fn point(&self, part: Participation, strategy: Strategy, sigma: f64) -> crate::Result<Point> {
        let g = self.steps;
        let algorithm = Algorithm::Dpsgd {
            lambda: g.lambda,
            sigma,
            eta: g.eta,
            steps: g.steps,
            loss_variant: g.loss_variant,
            sample_rate: part.sample_rate,
            clip: g.clip.is_finite().then_some(g.clip),
            groups: part.groups,
            strategy,
        };
        Ok(self.base.with_algorithm(algorithm)?)
    }

    /// σ meeting the budget with participation `part` and `strategy` (with
    /// at most G bands amplified, any: the guarantee does not depend on the
    /// coefficients; in the fixed order it scales with the strategy's
    /// sensitivity), and its certified ε; None when no σ does.
    pub fn calibrate(&self, part: Participation, strategy: Strategy) -> crate::Result<Option<(f64, f64)>> {
        let Some(sigma) = self.sigma(part, strategy)? else {
            return Ok(None);
        };
        let delta = match self.budget.target {
            Target::Approx { delta_priv, .. } => delta_priv,
            Target::Zcdp { .. } => return Ok(Some((sigma, f64::NAN))),
        };
        let unit = self.point(part, strategy, 1.0)?;
        let mech = unit
            .model()
            .mechanism(unit.algorithm().mechanism(), self.budget.neighbouring);
        let eps = epsilon(
            &mech.event(sigma),
            delta,
            self.budget.neighbouring,
            BracketSettings::default(),
        )?
        .map_or(f64::INFINITY, |b| b.upper);
        Ok(Some((sigma, eps)))
    }

    /// The σ of [`Problem::calibrate`] without its certified ε read back
    /// (the BLT search's per-point noise); None when no σ meets the budget.
    pub fn sigma(&self, part: Participation, strategy: Strategy) -> crate::Result<Option<f64>> {
        let unit = self.point(part, strategy, 1.0)?;
        Ok(self.budget.calibrate(&unit.model(), unit.algorithm().mechanism()))
    }

    /// The predicted metric and its standard error for participation
    /// `part`, `strategy` and noise `sigma`, by `solver`.
    pub fn predict(
        &self,
        solver: &TheorySolver,
        part: Participation,
        strategy: Strategy,
        sigma: f64,
    ) -> crate::Result<(f64, f64)> {
        let point = self.point(part, strategy, sigma)?;
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
        part: Participation,
        strategy: Strategy,
        (sigma, eps): (f64, f64),
    ) -> crate::Result<Candidate> {
        let (predicted, stderr) = self.predict(self.solver, part, strategy, sigma)?;
        Ok(Candidate {
            origin,
            groups: part.groups,
            sample_rate: part.sample_rate,
            coefficients: strategy
                .coefficients()
                .map_or_else(|| strategy.toeplitz(self.steps.steps), <[f64]>::to_vec),
            blt: strategy.blt_parameters().map(|(d, s)| BltParameters {
                buf_decay: d.to_vec(),
                output_scale: s.to_vec(),
            }),
            eta: Some(self.steps.eta),
            sigma,
            epsilon: eps,
            metric: self.metric.to_string(),
            predicted,
            stderr,
        })
    }
}
