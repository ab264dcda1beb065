//! The privacy events the accountant composes, as Google's dp_accounting
//! describes mechanisms before any accountant reads them (`DpEvent`):
//! one [`Event`] type, built from
//!
//! - [`Event::Gaussian`] — one release of the Gaussian mechanism with noise
//!   σ and add/remove sensitivity Δ, noise multiplier z = σ/Δ (μ = s·Δ/σ,
//!   s = 1 add/remove-one, 2 replace-one);
//! - [`Event::PoissonSampled`] — a Gaussian event run on a Poisson sample of
//!   rate q (one DP-SGD step);
//! - [`Event::SelfComposed`] — an event repeated `count` times (T steps);
//! - [`Event::Composed`] — events composed in order (a schedule, a ledger);
//! - [`Event::Objective`] — a model released by objective perturbation,
//!   through its privacy-loss bound c + A|Z| ([`ObjectiveBound`]).
//!
//! An accountant reads an event as its *parts*: DP-SGD [`Segment`]s (T_i
//! steps at (z_i, q_i); a Gaussian outside a sample is a segment at q = 1)
//! and objective releases, numbered in the order they appear, the
//! self-compositions multiplied out. This module is the one home of the
//! range checks: a part out of range is refused with
//! [`AccountantError::OutOfRange`] named `segment[i].field`
//! (`noise_multiplier`, `sample_rate`, `steps`) or `objective[i].field`
//! (`c0`, `a`), with its allowed range.
//!
//! # References
//! - Google, dp_accounting: `dp_event.py` (GaussianDpEvent,
//!   PoissonSampledDpEvent, SelfComposedDpEvent, ComposedDpEvent).

use crate::AccountantError;
use crate::neighbouring::{Neighbouring, relation_factor};
use crate::objective::ObjectiveBound;

/// A privacy event: a mechanism as the accountant reads it (module docs).
///
/// ```
/// use propdp_accountant::events::Event;
/// // 1000 DP-SGD steps at z = 1, q = 0.01, then ten Gaussian releases at σ/Δ = 5
/// let ledger = Event::Composed(vec![Event::dpsgd(1.0, 0.01, 1000), Event::gaussian(5.0).repeated(10)]);
/// assert_eq!(ledger.parts().unwrap().segments.len(), 2);
/// let bad = Event::Composed(vec![Event::dpsgd(1.0, 0.01, 1000), Event::dpsgd(1.0, 1.5, 10)]);
/// assert_eq!(bad.parts().unwrap_err().argument(), "segment[1].sample_rate");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// One release of the Gaussian mechanism: noise σ on a statistic of
    /// add/remove sensitivity Δ (noise multiplier z = σ/Δ).
    Gaussian {
        /// σ.
        noise: f64,
        /// Δ, the statistic's add/remove-one sensitivity (1 for a noise multiplier).
        sensitivity: f64,
    },
    /// A Gaussian event run on a Poisson sample: each example joins with
    /// probability q ∈ (0, 1].
    PoissonSampled {
        /// q.
        sample_rate: f64,
        /// The Gaussian event sampled.
        event: Box<Event>,
    },
    /// `event` composed with itself `count` ≥ 1 times.
    SelfComposed {
        /// The event repeated.
        event: Box<Event>,
        /// How many times.
        count: u64,
    },
    /// Events composed in order.
    Composed(Vec<Event>),
    /// A model released by objective perturbation, through its
    /// privacy-loss bound c + A|Z|.
    Objective(ObjectiveBound),
}

impl Event {
    /// The Gaussian mechanism at noise multiplier z (Δ = 1).
    pub fn gaussian(noise_multiplier: f64) -> Event {
        Event::Gaussian {
            noise: noise_multiplier,
            sensitivity: 1.0,
        }
    }

    /// `steps` steps of DP-SGD at noise multiplier z and Poisson rate q.
    pub fn dpsgd(noise_multiplier: f64, sample_rate: f64, steps: u64) -> Event {
        Event::PoissonSampled {
            sample_rate,
            event: Box::new(Event::gaussian(noise_multiplier)),
        }
        .repeated(steps)
    }

    /// DP-SGD segments composed in order.
    pub fn schedule(segments: &[Segment]) -> Event {
        Event::Composed(
            (segments.iter())
                .map(|s| Event::dpsgd(s.noise_multiplier, s.sample_rate, s.steps))
                .collect(),
        )
    }

    /// DP-SGD segments and objective-perturbation releases composed in
    /// order (a ledger).
    pub fn ledger(segments: &[Segment], objectives: &[ObjectiveBound]) -> Event {
        let Event::Composed(mut events) = Event::schedule(segments) else {
            unreachable!("a schedule is composed")
        };
        events.extend(objectives.iter().map(|&b| Event::Objective(b)));
        Event::Composed(events)
    }

    /// This event composed with itself `count` times.
    pub fn repeated(self, count: u64) -> Event {
        Event::SelfComposed {
            event: Box::new(self),
            count,
        }
    }

    /// The event's parts, checked: its Gaussian (and Poisson-sampled
    /// Gaussian) releases as DP-SGD segments and its objective releases, in
    /// order, each self-composition multiplied out. A part out of range is
    /// refused naming it (`segment[i].sample_rate`, `objective[i].a`); so
    /// are an event with no part, a Poisson-sampled event that is not a
    /// Gaussian one, and a total of steps and releases beyond 2⁶⁴ − 1.
    pub fn parts(&self) -> Result<Parts, AccountantError> {
        let mut parts = Parts {
            segments: Vec::new(),
            objectives: Vec::new(),
            gaussians: Vec::new(),
        };
        parts.add(self, 1, None)?;
        if parts.segments.is_empty() && parts.objectives.is_empty() {
            return Err(AccountantError::range(
                "segment",
                0,
                "at least one segment or objective release",
            ));
        }
        total_steps(&parts.segments, parts.objectives.len())?;
        Ok(parts)
    }
}

/// An [`Event`]'s parts ([`Event::parts`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    /// The Gaussian releases as DP-SGD segments (q = 1 outside a sample).
    pub segments: Vec<Segment>,
    /// The objective-perturbation releases.
    pub objectives: Vec<ObjectiveBound>,
    /// For each segment, its Gaussian's (σ, Δ) and whether it is sampled.
    pub(crate) gaussians: Vec<(f64, f64, bool)>,
}

impl Parts {
    fn add(&mut self, event: &Event, count: u64, sampled: Option<f64>) -> Result<(), AccountantError> {
        let i = self.segments.len();
        match event {
            Event::Gaussian { noise, sensitivity } => {
                let segment = Segment {
                    noise_multiplier: noise / sensitivity,
                    sample_rate: sampled.unwrap_or(1.0),
                    steps: count,
                };
                segment.check(&format!("segment[{i}]."))?;
                self.segments.push(segment);
                self.gaussians.push((*noise, *sensitivity, sampled.is_some()));
            }
            Event::PoissonSampled { sample_rate, event } => {
                if !matches!(**event, Event::Gaussian { .. }) {
                    return Err(AccountantError::range(
                        &format!("segment[{i}].event"),
                        "not a Gaussian event",
                        "a Poisson-sampled event is a Gaussian one (one DP-SGD step)",
                    ));
                }
                self.add(event, count, Some(*sample_rate))?;
            }
            Event::SelfComposed { event, count: k } => {
                // a count of 0 reaches the part's own check (`steps ≥ 1`)
                let total = count.checked_mul(*k).ok_or_else(|| {
                    AccountantError::range(
                        "steps",
                        u128::from(count) * u128::from(*k),
                        "a total number of steps below 2⁶⁴",
                    )
                })?;
                self.add(event, total, sampled)?;
            }
            Event::Composed(events) => {
                for e in events {
                    self.add(e, count, sampled)?;
                }
            }
            Event::Objective(b) => {
                let j = self.objectives.len();
                check_objective(j, b)?;
                if !(1..=MAX_RELEASES).contains(&count) {
                    return Err(AccountantError::range(
                        &format!("objective[{j}].count"),
                        count,
                        "1 ≤ count ≤ 10⁶ releases of one objective event",
                    ));
                }
                self.objectives.extend(std::iter::repeat_n(*b, count as usize));
            }
        }
        Ok(())
    }

    /// The zCDP ρ of the parts under `neighbouring`: Σ T_i·s²/(2z_i²) over
    /// the Gaussians (μ_i²/2, μ_i = s·√T_i·Δ_i/σ_i, z_i = σ_i/Δ_i; linear in
    /// T_i as written, so T steps are exactly T times one; subsampling gives
    /// zCDP no amplification: the subsampled Gaussian's RDP ε(α)/α → 1/(2z²)
    /// as α → ∞), and c0 + A√(2/π) + A²/2 per objective release (×4 under
    /// replace-one; [`ObjectiveBound::zcdp`]).
    pub fn rho(&self, neighbouring: Neighbouring) -> f64 {
        let s2 = relation_factor(neighbouring).powi(2);
        let gaussians =
            (self.segments.iter()).map(|s| s.steps as f64 * s2 / (2.0 * s.noise_multiplier * s.noise_multiplier));
        let scale = match neighbouring {
            Neighbouring::AddRemoveOne => 1.0,
            Neighbouring::ReplaceOne => 4.0,
        };
        let objectives = self.objectives.iter().map(|b| scale * b.zcdp());
        gaussians.chain(objectives).sum()
    }

    /// The one Gaussian (self-composed) outside any sample, as (σ, Δ, T):
    /// the event is exactly μ-GDP with μ = s·√T·Δ/σ.
    pub(crate) fn lone_gaussian(&self) -> Option<(f64, f64, u64)> {
        match (
            self.segments.as_slice(),
            self.gaussians.as_slice(),
            self.objectives.is_empty(),
        ) {
            ([s], [(noise, sensitivity, false)], true) => Some((*noise, *sensitivity, s.steps)),
            _ => None,
        }
    }

    /// The one DP-SGD run (a Poisson-sampled Gaussian, self-composed),
    /// nothing beside it, as its segment and its Gaussian's (σ, Δ).
    pub(crate) fn lone_sampled_run(&self) -> Option<(Segment, f64, f64)> {
        match (
            self.segments.as_slice(),
            self.gaussians.as_slice(),
            self.objectives.is_empty(),
        ) {
            ([s], [(noise, sensitivity, true)], true) => Some((*s, *noise, *sensitivity)),
            _ => None,
        }
    }

    /// The one objective release, nothing beside it.
    pub(crate) fn lone_objective(&self) -> Option<ObjectiveBound> {
        match (self.segments.as_slice(), self.objectives.as_slice()) {
            ([], [b]) => Some(*b),
            _ => None,
        }
    }
}

/// The most releases one objective event may be repeated into.
const MAX_RELEASES: u64 = 1_000_000;

/// An objective release's ranges, named `objective[j].c0` and `objective[j].a`.
fn check_objective(j: usize, b: &ObjectiveBound) -> Result<(), AccountantError> {
    if !(b.c0 >= 0.0 && b.c0.is_finite()) {
        return Err(AccountantError::range(
            &format!("objective[{j}].c0"),
            b.c0,
            "0 ≤ c0 = log(1 + βR²/λ) < ∞",
        ));
    }
    if !(b.a > 0.0 && b.a.is_finite()) {
        return Err(AccountantError::range(
            &format!("objective[{j}].a"),
            b.a,
            "0 < a = LR/σ < ∞",
        ));
    }
    Ok(())
}

/// One segment of a training run: `steps` steps of the Poisson-subsampled
/// Gaussian at noise multiplier z = σ/C and rate q — the part of an
/// [`Event`] the accountants compose (a run that changes its noise or
/// batch rate, or trains more epochs later, is several).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// z = σ/C, the noise over the sensitivity.
    pub noise_multiplier: f64,
    /// Poisson rate q ∈ (0, 1].
    pub sample_rate: f64,
    /// Number of steps, ≥ 1.
    pub steps: u64,
}

impl Segment {
    /// Range checks, naming the field with the segment's `prefix`
    /// (`segment[2].sample_rate`).
    pub(crate) fn check(&self, prefix: &str) -> Result<(), AccountantError> {
        let name = |n: &str| format!("{prefix}{n}");
        check_noise_multiplier(&name("noise_multiplier"), self.noise_multiplier)?;
        check_sample_rate(&name("sample_rate"), self.sample_rate)?;
        if self.steps == 0 {
            return Err(AccountantError::range(&name("steps"), self.steps, "steps ≥ 1"));
        }
        Ok(())
    }
}

/// The smallest noise multiplier the accountant takes: below it the loss
/// of one included example, about 1/(2z²), passes f64's largest number
/// (z² underflows near 1.5·10⁻¹⁵⁴), and no arithmetic on it is exact.
pub const MIN_NOISE_MULTIPLIER: f64 = 1e-150;

/// z = σ/C as argument `name`: [`MIN_NOISE_MULTIPLIER`] ≤ z < ∞.
pub(crate) fn check_noise_multiplier(name: &str, z: f64) -> Result<(), AccountantError> {
    if !(z.is_finite() && z >= MIN_NOISE_MULTIPLIER) {
        return Err(AccountantError::range(
            name,
            z,
            "1e-150 ≤ noise_multiplier < ∞ (below, one example's privacy loss 1/(2z²) passes the range of f64)",
        ));
    }
    Ok(())
}

/// q as argument `name`: 0 < q ≤ 1.
pub(crate) fn check_sample_rate(name: &str, q: f64) -> Result<(), AccountantError> {
    if !(q > 0.0 && q <= 1.0) {
        return Err(AccountantError::range(name, q, "0 < sample_rate ≤ 1"));
    }
    Ok(())
}

/// Range checks of DP-SGD segments as [`Event::schedule`]'s parts
/// (`segment[i].sample_rate`).
pub(crate) fn check_segments(segments: &[Segment]) -> Result<(), AccountantError> {
    Event::schedule(segments).parts().map(|_| ())
}

/// δ: 0 < δ < 1.
pub(crate) fn check_delta(delta: f64) -> Result<(), AccountantError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(AccountantError::range("delta", delta, "0 < delta < 1"));
    }
    Ok(())
}

/// The total steps of `segments` and `releases` more, refused naming
/// `steps` where it passes u64 (2⁶⁴ − 1).
pub(crate) fn total_steps(segments: &[Segment], releases: usize) -> Result<u64, AccountantError> {
    (segments.iter().map(|s| s.steps))
        .chain([releases as u64])
        .try_fold(0u64, u64::checked_add)
        .ok_or_else(|| {
            let sum = segments.iter().map(|s| u128::from(s.steps)).sum::<u128>() + releases as u128;
            AccountantError::range("steps", sum, "a total number of steps (and releases) below 2⁶⁴")
        })
}
