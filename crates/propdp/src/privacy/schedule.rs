//! DP-SGD training schedules (`propdp privacy --schedule FILE`, Python's
//! `propdp.accounting`): a run whose noise, batch rate or clipping changes
//! between segments, or that trains more epochs later, accounted as one
//! composition with a certified [lower, upper] ε (docs/theory.md §4,
//! "Certified bracket"; docs/privacy.md, "Schedules").
//!
//! A schedule file is TOML, one `[[segment]]` table per segment:
//!
//! ```toml
//! [[segment]]
//! noise = 1.0          # σ, the Gaussian noise's standard deviation
//! sample_rate = 0.01   # Poisson rate q, 0 < q ≤ 1
//! steps = 2000         # T ≥ 1
//! clip = 1.0           # optional: C (the noise multiplier is σ/min(C, L))
//! groups = 4           # optional: G cyclic groups (amplified BandMF, ≤ G bands): ⌈T/G⌉ rounds
//!
//! [[objective]]        # optional: a model released by objective perturbation
//! lambda = 10.0        # its ridge λ > 0
//! noise = 4.0          # σ of its perturbation b
//! ```
//!
//! An objective release (rows ‖x‖ ≤ 1, the model's L and β) enters the same
//! certified composition as its privacy-loss bound c + A|Z|
//! (`propdp_accountant::epsilon` of `Event::ledger`); a schedule may
//! hold releases only.
//!
//! Unknown keys, a missing key, a negative or fractional step count and a
//! rate outside (0, 1] are refused naming the segment and key
//! (`segment[1].sample_rate`) and the file. The batches may be Poisson
//! (`--sampling poisson`, the default), fixed-size or shuffled throughout
//! (`propdp_accountant::sampling`): the report names the relation, the
//! sensitivity and the assumption, and for shuffled batches gives the
//! Poisson figure beside the guarantee.

use std::path::Path;

use crate::error::Context;
use propdp_core::ConfigError;
use propdp_core::Model;
use propdp_core::accountant::Neighbouring;
use propdp_core::accountant::bracket::{BracketSettings, EpsilonBracket};
use propdp_core::accountant::epsilon;
use propdp_core::accountant::events::{Event, Segment};
use propdp_core::accountant::sampling::{SampledEpsilon, Sampling, sampled_epsilon};
use propdp_core::accountant::{ObjectiveBound, relation_factor};
use serde::Deserialize;

use crate::Result;

/// One segment as written: the noise σ, the rate q, T steps and an
/// optional clipping norm C.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSegment {
    /// σ, the Gaussian noise's standard deviation.
    pub noise: f64,
    /// Poisson rate q ∈ (0, 1].
    pub sample_rate: f64,
    /// T ≥ 1 steps.
    pub steps: i64,
    /// Clipping norm C (none: the loss's Lipschitz constant bounds the gradient).
    pub clip: Option<f64>,
    /// Cyclic participation groups G (amplified BandMF with at most G
    /// bands; none: 1): ⌈T/G⌉ Poisson rounds ([`propdp_core::problem::rounds`]).
    #[serde(default)]
    pub groups: Option<i64>,
}

/// One model released by objective perturbation, as written: its ridge λ
/// and the noise σ of its perturbation.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleObjective {
    /// Ridge strength λ > 0.
    pub lambda: f64,
    /// σ, the perturbation's standard deviation.
    pub noise: f64,
}

/// A schedule file: DP-SGD segments and objective releases.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// The `[[segment]]` tables.
    #[serde(default)]
    pub segment: Vec<ScheduleSegment>,
    /// The `[[objective]]` tables.
    #[serde(default)]
    pub objective: Vec<ScheduleObjective>,
}

/// A schedule file, or the error naming the file and the key at fault.
pub fn read(path: &Path) -> Result<Schedule> {
    let text = propdp_core::input::read_regular_text(path)
        .with_context(|| format!("reading the schedule {}", path.display()))?;
    let file: Schedule = toml::from_str(&text)
        .map_err(|e| ConfigError::Parse(e.to_string()))
        .with_context(|| format!("the schedule {}", path.display()))?;
    Ok(file)
}

/// A schedule's guarantee: the segments' noise multipliers and the
/// certified ε.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleReport {
    /// The segments as given.
    pub segments: Vec<ScheduleSegment>,
    /// The objective releases as given.
    pub objectives: Vec<ScheduleObjective>,
    /// Each segment's noise multiplier σ/min(C, L).
    pub noise_multipliers: Vec<f64>,
    /// The neighbouring relation.
    pub neighbouring: Neighbouring,
    /// How the batches were drawn.
    pub sampling: Sampling,
    /// The shift one neighbour makes in one batch's sum, in units of C.
    pub sensitivity: f64,
    /// What the guarantee rests on, in words.
    pub assumption: &'static str,
    /// δ of the guarantee.
    pub delta_priv: f64,
    /// The certified bracket; `None` when no finite ε reaches δ.
    pub epsilon: Option<EpsilonBracket>,
    /// Shuffled batches: the Poisson figure, valid only if the batches had
    /// been Poisson-sampled.
    pub if_poisson: Option<EpsilonBracket>,
}

/// The certified ε at `delta_priv` of `schedule` for `model`'s loss (its
/// Lipschitz constant L bounds an unclipped gradient; L and β bound an
/// objective release) under `neighbouring`, the batches drawn by
/// `sampling` (Poisson only beside objective releases).
///
/// ```
/// use propdp::privacy::schedule::{assess, Schedule, ScheduleObjective, ScheduleSegment};
/// use propdp::core::{accountant::{Neighbouring, sampling::Sampling}, Model};
/// let mut run = Schedule {
///     segment: vec![
///         ScheduleSegment { noise: 1.0, sample_rate: 0.01, steps: 1000, clip: Some(1.0), groups: None },
///         ScheduleSegment { noise: 2.0, sample_rate: 0.02, steps: 500, clip: Some(1.0), groups: None },
///     ],
///     objective: vec![],
/// };
/// let r = assess(&run, &Model::Logistic, Neighbouring::AddRemoveOne, Sampling::Poisson, 1e-5).unwrap();
/// let b = r.epsilon.unwrap();
/// assert!(b.lower <= b.upper && b.reached);
/// // a model released by objective perturbation on the same data costs more
/// run.objective.push(ScheduleObjective { lambda: 10.0, noise: 4.0 });
/// let both = assess(&run, &Model::Logistic, Neighbouring::AddRemoveOne, Sampling::Poisson, 1e-5).unwrap();
/// assert!(both.epsilon.unwrap().lower > b.upper);
/// ```
pub fn assess(
    schedule: &Schedule,
    model: &Model,
    neighbouring: Neighbouring,
    sampling: Sampling,
    delta_priv: f64,
) -> Result<ScheduleReport> {
    certify(schedule, model, neighbouring, sampling, delta_priv)
}

/// [`read`] and [`assess`] a schedule file, its errors naming the file.
pub fn assess_file(
    path: &Path,
    model: &Model,
    neighbouring: Neighbouring,
    sampling: Sampling,
    delta_priv: f64,
) -> Result<ScheduleReport> {
    let schedule = read(path)?;
    certify(&schedule, model, neighbouring, sampling, delta_priv)
        .with_context(|| format!("the schedule {}", path.display()))
}

fn certify(
    schedule: &Schedule,
    model: &Model,
    neighbouring: Neighbouring,
    sampling: Sampling,
    delta_priv: f64,
) -> crate::error::Result<ScheduleReport> {
    let range = |field: String, value: String, allowed: &str| ConfigError::OutOfRange {
        field,
        value,
        allowed: allowed.to_string(),
    };
    let (segments, objectives) = (&schedule.segment, &schedule.objective);
    if segments.is_empty() && objectives.is_empty() {
        return Err(range(
            "segment".into(),
            "none".into(),
            "at least one [[segment]] or [[objective]]",
        )
        .into());
    }
    let mut releases = Vec::with_capacity(objectives.len());
    for (i, o) in objectives.iter().enumerate() {
        let field = |k: &str| format!("objective[{i}].{k}");
        if !(o.lambda > 0.0 && o.lambda.is_finite()) {
            return Err(range(field("lambda"), format!("{:?}", o.lambda), "0 < lambda < ∞").into());
        }
        if !(o.noise > 0.0 && o.noise.is_finite()) {
            return Err(range(field("noise"), format!("{:?}", o.noise), "0 < noise < ∞").into());
        }
        if !model.lipschitz().is_finite() {
            return Err(range(
                field("noise"),
                format!("{:?}", o.noise),
                "a model with a Lipschitz loss: objective perturbation's bound needs L < ∞",
            )
            .into());
        }
        releases.push(ObjectiveBound::new(
            model.lipschitz(),
            model.curvature(),
            1.0,
            o.lambda,
            o.noise,
        ));
    }
    if !releases.is_empty() && sampling != Sampling::Poisson {
        return Err(range(
            "sampling".into(),
            sampling.name().into(),
            "poisson beside [[objective]] releases",
        )
        .into());
    }
    let mut plan = Vec::with_capacity(segments.len());
    for (i, s) in segments.iter().enumerate() {
        let field = |k: &str| format!("segment[{i}].{k}");
        if s.steps < 1 {
            return Err(range(field("steps"), s.steps.to_string(), "steps ≥ 1").into());
        }
        if let Some(c) = s.clip
            && !(c > 0.0 && c.is_finite())
        {
            return Err(range(field("clip"), format!("{c:?}"), "0 < clip < ∞").into());
        }
        let sensitivity = s.clip.map_or(model.lipschitz(), |c| c.min(model.lipschitz()));
        if !sensitivity.is_finite() {
            return Err(range(
                field("clip"),
                "none".into(),
                "a clipping norm: this model's gradient is unbounded (L = ∞)",
            )
            .into());
        }
        let groups = match s.groups {
            None => 1,
            Some(g) if g >= 1 => g as usize,
            Some(g) => return Err(range(field("groups"), g.to_string(), "groups ≥ 1").into()),
        };
        plan.push(Segment {
            noise_multiplier: s.noise / sensitivity,
            sample_rate: s.sample_rate,
            steps: propdp_core::problem::rounds(s.steps as usize, groups) as u64,
        });
    }
    // each segment's steps fit in i64; their total need not (two of 2⁶³ − 1 printed "-2 steps")
    if plan
        .iter()
        .try_fold(0u64, |total, s| total.checked_add(s.steps))
        .is_none()
    {
        let total: u128 = plan.iter().map(|s| u128::from(s.steps)).sum();
        return Err(range(
            "steps".into(),
            total.to_string(),
            "a schedule of at most 2⁶⁴ − 1 = 18446744073709551615 steps in all (the sum over its segments)",
        )
        .into());
    }
    let settings = BracketSettings::default();
    let sampled = if releases.is_empty() {
        sampled_epsilon(sampling, &Event::schedule(&plan), delta_priv, neighbouring, settings)
    } else {
        epsilon(&Event::ledger(&plan, &releases), delta_priv, neighbouring, settings).map(|epsilon| SampledEpsilon {
            sampling,
            neighbouring,
            sensitivity: relation_factor(neighbouring),
            epsilon,
            if_poisson: None,
            assumption: "Poisson sampling (replace-one: the pair (1 − q)N(0, z²) + qN(∓1, z²)); each objective \
                         release through its privacy-loss bound c + A|Z| (rows ‖x‖ ≤ 1; replace-one: group privacy \
                         of size 2 on it)",
        })
    }
    .map_err(|e| {
        // the accountant names segment[i].noise_multiplier: the file's key is `noise`
        let field = e.argument().replace("noise_multiplier", "noise");
        match e {
            propdp_core::accountant::AccountantError::OutOfRange { value, allowed, .. } => {
                range(field, value, &allowed.replace("noise_multiplier", "noise/min(clip, L)"))
            }
            // only calibrations are unattainable; a schedule is not calibrated
            propdp_core::accountant::AccountantError::Unattainable { detail, .. } => {
                range(field, String::new(), &detail)
            }
        }
    })?;
    Ok(ScheduleReport {
        segments: segments.to_vec(),
        objectives: objectives.to_vec(),
        noise_multipliers: plan.iter().map(|s| s.noise_multiplier).collect(),
        neighbouring,
        sampling,
        sensitivity: sampled.sensitivity,
        assumption: sampled.assumption,
        delta_priv,
        epsilon: sampled.epsilon,
        if_poisson: sampled.if_poisson,
    })
}

impl ScheduleReport {
    /// The report as `propdp privacy --schedule` prints it.
    pub fn text(&self) -> String {
        // in u128: the segments' i64 steps can sum past i64
        let steps: u128 = self.segments.iter().map(|s| s.steps as u128).sum();
        let mut s = format!(
            "DP-SGD schedule of {} segments ({steps} steps), {} batches, {} neighbours, sensitivity {}C:\n",
            self.segments.len(),
            self.sampling.name().replace('_', "-"),
            self.neighbouring.label(),
            self.sensitivity
        );
        for (i, (seg, z)) in self.segments.iter().zip(&self.noise_multipliers).enumerate() {
            s += &format!(
                "  segment {i}: σ = {:?}, q = {:?}, T = {}{}, {} → noise multiplier {z:.6}\n",
                seg.noise,
                seg.sample_rate,
                seg.steps,
                seg.groups.filter(|&g| g > 1).map_or(String::new(), |g| format!(
                    " in {g} groups ({} rounds)",
                    propdp_core::problem::rounds(seg.steps as usize, g as usize)
                )),
                seg.clip.map_or("no clipping".to_string(), |c| format!("C = {c:?}"))
            );
        }
        for (i, o) in self.objectives.iter().enumerate() {
            s += &format!(
                "  objective release {i}: λ = {:?}, σ = {:?} (its privacy-loss bound)\n",
                o.lambda, o.noise
            );
        }
        let relation = self.neighbouring.label();
        s += &match self.epsilon {
            Some(b) => format!(
                "  (ε, δ)-DP: ε = {:.6} at δ = {:?} ({relation})\n  certified bracket: {:.6} ≤ ε ≤ {:.6} \
                 ({relation}; width {:.2}%{})\n",
                b.upper,
                self.delta_priv,
                b.lower,
                b.upper,
                if b.upper > 0.0 {
                    100.0 * (b.upper - b.lower) / b.upper
                } else {
                    0.0
                },
                if b.reached {
                    ""
                } else {
                    "; the 0.1% width was not reached within the memory limit or the grid's rounding"
                }
            ),
            None => format!(
                "  (ε, δ)-DP: no finite ε reaches δ = {:?} ({relation})\n",
                self.delta_priv
            ),
        };
        s += &format!("  assumes: {}\n", self.assumption);
        if let Some(p) = self.if_poisson {
            s += &format!(
                "  if the batches had been Poisson-sampled: {:.6} ≤ ε ≤ {:.6} ({relation})\n",
                p.lower, p.upper
            );
        }
        s
    }

    /// The report as data (`--json`, Python).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "algorithm": "dpsgd",
            "neighbouring": self.neighbouring.label(),
            "sampling": self.sampling.name(),
            "sensitivity": self.sensitivity,
            "assumption": self.assumption,
            "delta_priv": self.delta_priv,
            "segments": self.segments.iter().zip(&self.noise_multipliers).map(|(s, z)| serde_json::json!({
                "noise": s.noise, "sample_rate": s.sample_rate, "steps": s.steps, "clip": s.clip,
                "groups": s.groups.unwrap_or(1), "noise_multiplier": z,
            })).collect::<Vec<_>>(),
            "objectives": self.objectives.iter().map(|o| serde_json::json!({"lambda": o.lambda, "noise": o.noise}))
                .collect::<Vec<_>>(),
            "epsilon": self.epsilon.map(|b| b.upper),
            "epsilon_lower": self.epsilon.map(|b| b.lower),
            "bracket_grid": self.epsilon.map(|b| b.grid),
            "bracket_reached": self.epsilon.map(|b| b.reached),
            "epsilon_if_poisson": self.if_poisson.map(|b| b.upper),
        })
    }
}
