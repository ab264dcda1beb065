//! One tuned optimum as written to tune.jsonl, and its simulated check.

use std::collections::BTreeMap;

use crate::error::Result;
use propdp_core::accountant::bracket::{BracketSettings, Method};
use propdp_core::accountant::{Neighbouring, epsilon};
use propdp_core::problem::{Budget, Target};
use propdp_core::record::{Provenance, Record, SolverReport, Source};
use propdp_core::{Algorithm, AlgorithmKind, ModelKind};

use super::types::{CellKey, Optimum, facet};
use crate::run::{Line, sim_settings};

/// One optimum, as written to tune.jsonl (one line each).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Best {
    /// The algorithm.
    pub algorithm: AlgorithmKind,
    /// The problem parameters (not the algorithm's).
    pub params: BTreeMap<String, f64>,
    /// The budget: `notion` "approx" with `epsilon`, `delta_priv`, or "zcdp" with `rho`.
    #[serde(flatten)]
    pub budget: Target,
    /// The budget's neighbouring relation.
    pub neighbouring: Neighbouring,
    /// The tuned hyperparameters, the calibrated noise and the prediction.
    #[serde(flatten)]
    pub tuned: Variant,
    /// The metric minimised.
    pub metric: String,
    /// The optimum sits at the edge of the searched range (λ; for DP-GD and
    /// DP-SGD also the largest T, or η at a tenth of the smallest fraction;
    /// for DP-SGD the smallest q, or the smallest or largest of several C).
    pub at_boundary: bool,
    /// Other searched configurations whose prediction (re-solved at the
    /// full budget) is within 2 combined standard errors of the optimum: a
    /// flat optimum.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub runners_up: Vec<Variant>,
    /// DP-SGD with several candidate sample rates: the best configuration
    /// found at each q (error against the batch rate at equal privacy).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub per_sample_rate: Vec<Variant>,
    /// DP-SGD with several `tune.epochs`: the best configuration within
    /// each epochs budget E = q·T (what a compute limit buys).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub per_epochs: Vec<Variant>,
    /// With a `[simulation]` table: the simulated metric at the optimum.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub simulation: Option<SimCheck>,
    /// DP-GD, DP-SGD: the optimum in a training loop's terms.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub training: Option<TrainingRun>,
    /// DP-SGD with `tune.strategies` beyond "identity": the best
    /// correlated-noise run (BandMF in cyclic groups, or a BLT in the fixed
    /// order) at the optimum's λ, T, q, C and budget, its strategy chosen
    /// at the optimum's η and its step size `eta` then searched again; it
    /// beats the optimum when its `predicted` is below the optimum's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub correlated_noise: Option<crate::mechanism::Candidate>,
    /// What produced the line.
    pub provenance: Provenance,
}

/// A DP-GD or DP-SGD optimum in the terms of a training loop (Opacus,
/// TF-Privacy): what to set to run it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TrainingRun {
    /// The noise multiplier z = σ/min(C, L): the Gaussian noise on the sum
    /// of a batch's per-example gradients in units of one gradient's
    /// sensitivity (absent for unclipped least squares, which has none).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub noise_multiplier: Option<f64>,
    /// Epochs q·T.
    pub epochs: f64,
    /// The expected batch size B = q·n at n = round(d/δ) of `[simulation] d`
    /// (absent without one: B scales with n).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub batch_size: Option<f64>,
    /// σ/B: the noise's sd on the batch-averaged gradient (with `batch_size`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub noise_per_example: Option<f64>,
    /// η·B: the step size of a loop that averages the batch's gradients
    /// (propdp's η multiplies their sum; with `batch_size`). Rows scaled as
    /// propdp's, E‖x‖² = 1.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub learning_rate: Option<f64>,
    /// The ε of the same run (noise, q, T, C) under the add/remove-one
    /// relation at the budget's δ_priv — what Opacus, TF-Privacy and
    /// dp_accounting report, whose neighbours add or remove a row — by
    /// propdp's accountant (an ε-budget; absent for a ρ-budget, or where no
    /// finite ε is reached).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub epsilon_add_remove: Option<f64>,
    /// The ρ-zCDP of the same run under the add/remove-one relation (a
    /// ρ-budget).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rho_add_remove: Option<f64>,
}

impl TrainingRun {
    /// The training run of a DP-GD/DP-SGD optimum calibrated to `budget`;
    /// `n` samples when known.
    pub fn of(opt: &Optimum, budget: &Budget, n: Option<usize>) -> Option<TrainingRun> {
        let (sigma, steps, eta, q, clip) = match opt.point.algorithm() {
            Algorithm::Dpgd { sigma, steps, eta, .. } => (sigma, steps, eta, 1.0, None),
            Algorithm::Dpsgd {
                sigma,
                steps,
                eta,
                sample_rate,
                clip,
                ..
            } => (sigma, steps, eta, sample_rate, clip),
            Algorithm::Objective { .. } | Algorithm::Output { .. } => return None,
        };
        let sensitivity = clip.map_or(opt.point.model().lipschitz(), |c| c.min(opt.point.model().lipschitz()));
        let batch_size = n.map(|n| q * n as f64);
        // the same run under add/remove-one, by the accountant (its ε at the budget's δ, or its ρ)
        let model = opt.point.model();
        let add_remove = model.mechanism(opt.point.algorithm().mechanism(), Neighbouring::AddRemoveOne);
        let (epsilon_add_remove, rho_add_remove) = match budget.target {
            Target::Approx { delta_priv, .. } => {
                let (event, n) = (add_remove.event(sigma), Neighbouring::AddRemoveOne);
                // DP-SGD: the fast upper bound; DP-GD: its exact ε
                let fast = BracketSettings {
                    method: Method::FixedGrid,
                    ..BracketSettings::default()
                };
                let upper = |s| epsilon(&event, delta_priv, n, s).ok().flatten().map(|b| b.upper);
                let e = upper(fast).or_else(|| upper(BracketSettings::default()));
                (e, None)
            }
            Target::Zcdp { .. } => (None, Some(add_remove.rho(sigma)).filter(|r| r.is_finite())),
        };
        Some(TrainingRun {
            noise_multiplier: sensitivity.is_finite().then(|| sigma / sensitivity),
            epochs: q * steps as f64,
            batch_size,
            noise_per_example: batch_size.map(|b| sigma / b),
            learning_rate: batch_size.map(|b| eta * b),
            epsilon_add_remove,
            rho_add_remove,
        })
    }
}

/// A searched configuration: its hyperparameters, its calibrated noise and
/// its prediction at the full budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Variant {
    /// λ.
    pub lambda: f64,
    /// σ (objective, DP-GD, DP-SGD) or τ (output), calibrated to the budget.
    pub noise: f64,
    /// DP-GD, DP-SGD: the step size η.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub eta: Option<f64>,
    /// DP-GD, DP-SGD: the number of steps T.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub steps: Option<usize>,
    /// DP-SGD: the sample rate q.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sample_rate: Option<f64>,
    /// DP-SGD: the clipping norm C (absent: not clipped).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clip: Option<f64>,
    /// The predicted metric.
    pub value: f64,
    /// RQMC standard error of a DMFT prediction.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stderr: Option<f64>,
}

impl Variant {
    fn of(opt: &Optimum) -> Variant {
        let algorithm = opt.point.algorithm();
        let (eta, steps, sample_rate, clip) = match algorithm {
            Algorithm::Dpgd { eta, steps, .. } => (Some(eta), Some(steps), None, None),
            Algorithm::Dpsgd {
                eta,
                steps,
                sample_rate,
                clip,
                ..
            } => (Some(eta), Some(steps), Some(sample_rate), clip),
            Algorithm::Objective { .. } | Algorithm::Output { .. } => (None, None, None, None),
        };
        Variant {
            lambda: algorithm.lambda(),
            noise: algorithm.noise(),
            eta,
            steps,
            sample_rate,
            clip,
            value: opt.value,
            stderr: opt.stderr,
        }
    }
}

impl Best {
    /// The line of an optimum found for `budget`.
    pub fn new(opt: &Optimum, budget: Budget, metric: &str, provenance: &Provenance) -> Best {
        Best {
            algorithm: opt.point.algorithm().kind(),
            params: opt.point.problem_params(),
            budget: budget.target,
            neighbouring: budget.neighbouring,
            tuned: Variant::of(opt),
            runners_up: opt.runners_up.iter().map(Variant::of).collect(),
            per_sample_rate: opt.per_sample_rate.iter().map(Variant::of).collect(),
            per_epochs: opt.per_epochs.iter().map(Variant::of).collect(),
            metric: metric.into(),
            at_boundary: opt.at_boundary,
            simulation: None,
            training: None,
            correlated_noise: None,
            provenance: provenance.clone(),
        }
    }

    /// Whether a line read back (resume, merge) is one this search could
    /// have written for the cell of `base`, `budget` and `metric` under the
    /// config of `provenance`: the same problem parameters, budget, metric
    /// and config; finite hyperparameters and prediction, the metric within
    /// its range. The error names the field.
    pub(super) fn conforms(
        &self,
        base: &propdp_core::Point,
        budget: Budget,
        metric: &str,
        provenance: &Provenance,
    ) -> Result<(), String> {
        if self.params != base.problem_params() {
            let show = |m: &std::collections::BTreeMap<String, f64>| {
                m.iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "params {} are not the cell's {}",
                show(&self.params),
                show(&base.problem_params())
            ));
        }
        if (self.budget, self.neighbouring) != (budget.target, budget.neighbouring) {
            return Err(format!(
                "the budget {} = {} ({}) is not the cell's {} = {} ({})",
                self.budget.param(),
                self.budget.level(),
                self.neighbouring.label(),
                budget.target.param(),
                budget.target.level(),
                budget.neighbouring.label()
            ));
        }
        if self.metric != metric {
            return Err(format!("metric is {:?}, but tune.metric is {metric:?}", self.metric));
        }
        if self.provenance.config_sha256 != provenance.config_sha256 {
            return Err(format!(
                "provenance.config_sha256 is {}, not this config's {}",
                self.provenance.config_sha256, provenance.config_sha256
            ));
        }
        if let Some(v) = self.runners_up.iter().chain(&self.per_sample_rate).find(|v| {
            [v.lambda, v.noise, v.value]
                .iter()
                .chain(&v.stderr)
                .any(|x| !x.is_finite() || *x < 0.0)
        }) {
            return Err(format!("a runner-up or per-rate best is not finite and ≥ 0: {v:?}"));
        }
        let numbers = [
            ("lambda", Some(self.tuned.lambda)),
            ("noise", Some(self.tuned.noise)),
            ("eta", self.tuned.eta),
            ("sample_rate", self.tuned.sample_rate),
            ("clip", self.tuned.clip),
            ("value", Some(self.tuned.value)),
            ("stderr", self.tuned.stderr),
            ("simulation.mean", self.simulation.as_ref().map(|s| s.mean)),
            ("simulation.stderr", self.simulation.as_ref().map(|s| s.stderr)),
        ];
        if let Some((name, v)) = numbers
            .iter()
            .find(|(_, v)| v.is_some_and(|x| !x.is_finite() || x < 0.0))
        {
            return Err(format!("{name} = {v:?} is not a finite number ≥ 0"));
        }
        if let Some(range) = propdp_core::metrics::out_of_range(metric, self.tuned.value) {
            return Err(format!(
                "value = {:?} is outside the range of {metric}, {range}",
                self.tuned.value
            ));
        }
        let iterative = self.algorithm.is_iterative();
        if iterative != (self.tuned.eta.is_some() && self.tuned.steps.is_some())
            || (self.algorithm == AlgorithmKind::Dpsgd) != self.tuned.sample_rate.is_some()
        {
            return Err(format!("eta, steps and sample_rate do not fit {}", self.algorithm));
        }
        Ok(())
    }

    /// The cell this optimum belongs to (a line without δ belongs to none).
    pub(super) fn key(&self) -> CellKey {
        (
            facet(&self.params),
            self.params.get("delta").copied().unwrap_or(f64::NAN).to_bits(),
            self.budget.level().to_bits(),
            self.algorithm,
        )
    }

    /// Frontier-figure records: the prediction and, if simulated, the simulation.
    pub(super) fn records(&self, model: ModelKind, index: usize, design: propdp_core::Design) -> Vec<Record> {
        let theory = Record {
            source: Source::Theory,
            model,
            algorithm: self.algorithm,
            index,
            params: self
                .params
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .chain([(self.budget.param().to_string(), self.budget.level())])
                .collect(),
            metrics: [(self.metric.clone(), self.tuned.value)].into_iter().collect(),
            solver: SolverReport {
                converged: true,
                iterations: 0,
                residual: self.tuned.stderr.unwrap_or(0.0),
                ..Default::default()
            },
            provenance: self.provenance.clone(),
            per_step: None,
            per_step_at: None,
            per_step_stderr: None,
            privacy: None,
            simulation: None,
            non_private_reference: false,
        };
        let sim = self.simulation.as_ref().map(|c| Record {
            source: Source::Simulation,
            metrics: [(self.metric.clone(), c.mean)].into_iter().collect(),
            simulation: Some(propdp_core::record::SimRecord {
                n: c.n,
                d: c.d,
                reps: c.reps,
                seed: c.seed,
                generator: propdp_sim::rng::GENERATOR.into(),
                design,
                data: None,
                labels: None,
                stderr: [(self.metric.clone(), c.stderr)].into_iter().collect(),
                per_rep: BTreeMap::new(),
                block: None,
                // (tune.jsonl's check says how it simulated; these records only draw figures)
                test_metrics: None,
            }),
            ..theory.clone()
        });
        std::iter::once(theory).chain(sim).collect()
    }

    /// Records of the best prediction at each searched sample rate (x =
    /// `sample_rate`, with the budget's level), for the figure of the error
    /// against the batch rate at equal privacy.
    pub(super) fn rate_records(&self, model: ModelKind, index: usize) -> Vec<Record> {
        let base = self.records(model, index, propdp_core::Design::Gaussian).swap_remove(0);
        self.per_sample_rate
            .iter()
            .filter_map(|v| {
                let mut r = base.clone();
                r.params.insert("sample_rate".into(), v.sample_rate?);
                r.metrics.insert(self.metric.clone(), v.value);
                r.solver.residual = v.stderr.unwrap_or(0.0);
                Some(r)
            })
            .collect()
    }

    /// The full batch against the best subsampled run at this budget: the
    /// best at q = 1 (labelled DP-GD: full-batch DP-SGD is DP-GD with
    /// per-example clipping) and the best at q < 1 (DP-SGD); none unless both
    /// were searched.
    pub(super) fn batch_records(&self, model: ModelKind, index: usize) -> Vec<Record> {
        let full = self.per_sample_rate.iter().find(|v| v.sample_rate == Some(1.0));
        let sub = self
            .per_sample_rate
            .iter()
            .filter(|v| v.sample_rate.is_some_and(|q| q < 1.0))
            .min_by(|a, b| a.value.total_cmp(&b.value));
        let (Some(full), Some(sub)) = (full, sub) else {
            return Vec::new();
        };
        let base = self.records(model, index, propdp_core::Design::Gaussian).swap_remove(0);
        [(AlgorithmKind::Dpgd, full), (AlgorithmKind::Dpsgd, sub)]
            .into_iter()
            .map(|(algorithm, v)| {
                let mut r = base.clone();
                r.algorithm = algorithm;
                r.metrics.insert(self.metric.clone(), v.value);
                r.solver.residual = v.stderr.unwrap_or(0.0);
                r
            })
            .collect()
    }

    /// "value (λ=…, η=…, T=…, q=…)" with `*` at the edge of the searched
    /// range, and beside the prediction the simulated value when the
    /// optimum was simulated: "value [sim mean ± se] (…)".
    pub fn describe(&self) -> String {
        let star = if self.at_boundary { "*" } else { "" };
        let sim = self
            .simulation
            .as_ref()
            .map_or(String::new(), |s| format!(" [sim {:.4} ± {:.4}]", s.mean, s.stderr));
        format!("{:.4}{sim} ({}{star})", self.tuned.value, self.tuned.run())
    }
}

impl Variant {
    /// "λ=…" and for DP-GD/DP-SGD ", η=…, T=…" (", q=…, C=…").
    pub fn run(&self) -> String {
        let lambda = sig3(self.lambda);
        let q = self.sample_rate.map_or(String::new(), |q| format!(", q={}", sig3(q)))
            + &self.clip.map_or(String::new(), |c| format!(", C={}", sig3(c)));
        match (self.eta, self.steps) {
            (Some(eta), Some(t)) => format!("λ={lambda}, η={}, T={t}{q}", sig3(eta)),
            _ => format!("λ={lambda}"),
        }
    }
}

/// A hyperparameter with three significant digits.
pub(super) fn sig3(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if !(0.01..1e4).contains(&x.abs()) {
        format!("{x:.2e}")
    } else {
        let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

/// The simulated check of an optimum, as written to tune.jsonl.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SimCheck {
    /// Features.
    pub d: usize,
    /// Samples.
    pub n: usize,
    /// Repetitions.
    pub reps: usize,
    /// The seed.
    pub seed: u64,
    /// Simulated mean of the metric.
    pub mean: f64,
    /// Its standard error.
    pub stderr: f64,
    /// The docs/theory.md §5.1 verdict of the simulated mean against the
    /// prediction: `pass` (|z| ≤ 3), `finite-d` (|z| > 3 within the
    /// measured O(1/d) allowance), `fail`, or `inconclusive` when the
    /// combined standard error exceeds 5% of max(|prediction|, 0.1) — too
    /// wide to state agreement — even after the check grew its repetitions
    /// (up to 8× `simulation.reps`), or comes from fewer than 10.
    pub verdict: propdp_core::validation::Verdict,
    /// The data file whose rows were simulated on (`[simulation] data`);
    /// absent: drawn rows.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data: Option<String>,
}

impl Line for Best {
    type Key = CellKey;
    fn key(&self) -> CellKey {
        Best::key(self)
    }
    fn describe(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        format!(
            "the {} cell at {}, {} = {} ({})",
            self.algorithm.name(),
            params.join(", "),
            self.budget.param(),
            self.budget.level(),
            self.neighbouring.label()
        )
    }
}

/// Most times the config's `simulation.reps` that tune's check grows to
/// for a standard error the verdict can state agreement with.
const CHECK_REPS_GROWTH: usize = 8;

/// The repetitions whose standard error, combined with the prediction's
/// `pred_se`, meets the check's target ([`propdp_core::validation::MAX_RELATIVE_STDERR`]
/// of max(|value|, 0.1)) with 10% to spare, when `reps` repetitions gave
/// `se` and missed it; `None` when they met it or when the prediction's own
/// error alone misses it (no repetitions help).
fn reps_for_agreement(value: f64, se: f64, pred_se: f64, reps: usize) -> Option<usize> {
    let target = propdp_core::validation::MAX_RELATIVE_STDERR * value.abs().max(0.1);
    let room = target * target - pred_se * pred_se;
    if se.hypot(pred_se) <= target || room <= 0.0 || !se.is_finite() {
        return None;
    }
    Some((1.1 * reps.max(propdp_core::validation::MIN_REPS) as f64 * se * se / room).ceil() as usize)
}

/// Simulate a tuned point and compare with its prediction, with more
/// repetitions than the config's when they do not suffice to state
/// agreement ([`reps_for_agreement`]).
pub(super) fn simulate(
    opt: &Optimum,
    sim: &propdp_core::config::SimulationConfig,
    covariance: Option<&propdp_core::covariance::Covariance>,
    real: Option<std::sync::Arc<propdp_sim::real::RealData>>,
    metric: &str,
    index: u64,
) -> Result<SimCheck> {
    let data = real.as_ref().map(|r| r.source.clone());
    let mut settings = sim_settings(sim, sim.d[0], covariance).with_real(real);
    let mut s = propdp_sim::simulate(&opt.point, &settings, index)?;
    let pred_se = opt.stderr.unwrap_or(0.0);
    // too wide to state agreement: as many repetitions as the target needs (the first
    // ones are the same draws, by their streams; the estimate is redone from each larger
    // run's standard error, each run at least 1.5× the last), at most CHECK_REPS_GROWTH
    // times the config's
    let cap = CHECK_REPS_GROWTH * sim.reps;
    while let Some(reps) = reps_for_agreement(opt.value, s.stderr[metric], pred_se, s.reps)
        && s.reps < cap
    {
        settings.reps = reps.max(s.reps + s.reps.div_ceil(2)).min(cap);
        s = propdp_sim::simulate(&opt.point, &settings, index)?;
    }
    let (mean, se) = (s.mean[metric], s.stderr[metric]);
    let se_total = (se * se + pred_se * pred_se).sqrt();
    let check = SimCheck {
        d: s.d,
        n: s.n,
        reps: s.reps,
        seed: sim.seed,
        mean,
        stderr: se,
        verdict: propdp_core::validation::check(
            metric,
            opt.value,
            mean,
            se_total,
            s.reps,
            s.d,
            covariance.is_some() || data.is_some(),
        ),
        data,
    };
    Ok(check)
}

/// The non-private reference of a problem point: the ridge estimator with λ
/// tuned and no noise — what privacy costs is measured against it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NonPrivate {
    /// The problem parameters.
    pub params: BTreeMap<String, f64>,
    /// The tuned λ.
    pub lambda: f64,
    /// The metric.
    pub metric: String,
    /// Its predicted value.
    pub value: f64,
    /// What produced it.
    pub provenance: Provenance,
}

impl NonPrivate {
    /// Flat frontier curve: the reference at every budget level.
    pub(super) fn records(&self, model: ModelKind, param: &str, levels: &[f64]) -> Vec<Record> {
        levels
            .iter()
            .map(|&level| Record {
                source: Source::Theory,
                model,
                algorithm: AlgorithmKind::Objective,
                index: 0,
                params: self
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), *v))
                    .chain([(param.to_string(), level)])
                    .collect(),
                metrics: [(self.metric.clone(), self.value)].into_iter().collect(),
                solver: SolverReport {
                    converged: true,
                    iterations: 0,
                    residual: 0.0,
                    ..Default::default()
                },
                provenance: self.provenance.clone(),
                per_step: None,
                per_step_at: None,
                per_step_stderr: None,
                privacy: None,
                simulation: None,
                non_private_reference: true,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Target 0.05 at a value of 1: se 0.1 from 20 repetitions needs
    /// 4·1.1·20 = 88; met already, or missed by the prediction's own error, none.
    #[test]
    fn the_check_asks_for_the_repetitions_its_target_needs() {
        assert_eq!(reps_for_agreement(1.0, 0.1, 0.0, 20), Some(88));
        assert_eq!(reps_for_agreement(1.0, 0.01, 0.0, 20), None);
        assert_eq!(reps_for_agreement(1.0, 0.1, 0.06, 20), None);
        // values below 0.1 are held to 5% of 0.1
        assert_eq!(reps_for_agreement(0.01, 0.01, 0.0, 10), Some(44));
    }
}
