//! The privacy events the accountant composes, as Google's dp_accounting
//! describes mechanisms before any accountant reads them: a DP-SGD
//! [`Segment`] (T steps of the Poisson-subsampled Gaussian at noise
//! multiplier z and rate q), and [`Events`] — one run, a schedule of
//! segments, or a ledger of segments and objective-perturbation releases.
//!
//! This module is the one home of the range checks on the noise multiplier,
//! the sample rate, the steps and δ: the constructors refuse an argument out
//! of range with [`AccountantError::OutOfRange`], naming it as the caller
//! gave it (`sample_rate` for one run, `segment[1].sample_rate` in a
//! schedule, `objective[0].a` in a ledger) with its allowed range.

use crate::AccountantError;
use crate::objective::ObjectiveBound;

/// One segment of a training run: `steps` steps of the Poisson-subsampled
/// Gaussian at noise multiplier z = σ/C and rate q (a run that changes its
/// noise or batch rate, or trains more epochs later, is several).
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
    /// The segment of `steps` steps at noise multiplier `noise_multiplier`
    /// (10⁻¹⁵⁰ ≤ z < ∞, [`MIN_NOISE_MULTIPLIER`]) and rate `sample_rate` (0 < q ≤ 1), refused naming the
    /// field otherwise.
    ///
    /// ```
    /// use propdp_accountant::events::Segment;
    /// assert!(Segment::new(1.0, 0.01, 1000).is_ok());
    /// let e = Segment::new(1.0, 1.5, 1000).unwrap_err().to_string();
    /// assert!(e.contains("sample_rate") && e.contains("0 < sample_rate ≤ 1"), "{e}");
    /// ```
    pub fn new(noise_multiplier: f64, sample_rate: f64, steps: u64) -> Result<Segment, AccountantError> {
        let segment = Segment {
            noise_multiplier,
            sample_rate,
            steps,
        };
        segment.check("")?;
        Ok(segment)
    }

    /// Range checks, naming the argument with the segment's `prefix`
    /// (`segment[2].sample_rate`; no prefix: the bare name).
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

/// δ: 0 < δ < 1.
pub(crate) fn check_delta(delta: f64) -> Result<(), AccountantError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(AccountantError::range("delta", delta, "0 < delta < 1"));
    }
    Ok(())
}

/// What [`crate::epsilon`] composes: DP-SGD segments (Gaussian releases —
/// DP-GD, output perturbation, a published statistic — are segments at
/// rate 1) and objective-perturbation releases, each given by its
/// privacy-loss bound. Built only by the checking constructors.
#[derive(Debug, Clone, PartialEq)]
pub struct Events {
    segments: Vec<Segment>,
    objectives: Vec<ObjectiveBound>,
}

impl Events {
    /// One DP-SGD run; a field out of range is refused by its bare name
    /// (`sample_rate`).
    ///
    /// ```
    /// use propdp_accountant::events::{Events, Segment};
    /// let run = Segment { noise_multiplier: 1.0, sample_rate: 0.01, steps: 0 };
    /// assert_eq!(Events::run(run).unwrap_err().argument(), "steps");
    /// ```
    pub fn run(segment: Segment) -> Result<Events, AccountantError> {
        segment.check("")?;
        Ok(Events {
            segments: vec![segment],
            objectives: Vec::new(),
        })
    }

    /// A schedule of DP-SGD segments composed as one run; a segment out of
    /// range is refused naming it (`segment[1].sample_rate`, even for one
    /// segment); at least one segment, and a total of steps below 2⁶⁴.
    pub fn schedule(segments: &[Segment]) -> Result<Events, AccountantError> {
        check_schedule(segments)?;
        Ok(Events {
            segments: segments.to_vec(),
            objectives: Vec::new(),
        })
    }

    /// A ledger: DP-SGD `segments` and objective-perturbation releases.
    /// Either list may be empty, not both; arguments out of range are
    /// refused naming them (`segment[1].sample_rate`, `objective[0].a`).
    pub fn ledger(segments: &[Segment], objectives: &[ObjectiveBound]) -> Result<Events, AccountantError> {
        if segments.is_empty() && objectives.is_empty() {
            return Err(AccountantError::range(
                "segment",
                0,
                "at least one segment or objective release",
            ));
        }
        for (i, s) in segments.iter().enumerate() {
            s.check(&format!("segment[{i}]."))?;
        }
        for (i, b) in objectives.iter().enumerate() {
            if !(b.c0 >= 0.0 && b.c0.is_finite()) {
                return Err(AccountantError::range(
                    &format!("objective[{i}].c0"),
                    b.c0,
                    "0 ≤ c0 = log(1 + βR²/λ) < ∞",
                ));
            }
            if !(b.a > 0.0 && b.a.is_finite()) {
                return Err(AccountantError::range(
                    &format!("objective[{i}].a"),
                    b.a,
                    "0 < a = LR/σ < ∞",
                ));
            }
        }
        Ok(Events {
            segments: segments.to_vec(),
            objectives: objectives.to_vec(),
        })
    }

    /// The DP-SGD segments, in order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The objective-perturbation releases, in order.
    pub fn objectives(&self) -> &[ObjectiveBound] {
        &self.objectives
    }
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

/// Range checks of a schedule's segments, naming `segment[i].sample_rate`
/// (even for one segment); at least one segment, and a total of steps
/// that fits in u64.
fn check_schedule(segments: &[Segment]) -> Result<(), AccountantError> {
    if segments.is_empty() {
        return Err(AccountantError::range("segment", 0, "at least one segment"));
    }
    for (i, s) in segments.iter().enumerate() {
        s.check(&format!("segment[{i}]."))?;
    }
    total_steps(segments, 0).map(|_| ())
}

/// Range checks of a run's segments, naming `segment[i].sample_rate` (a
/// single segment: the bare `sample_rate`); at least one segment, and a
/// total of steps that fits in u64.
pub(crate) fn check_segments(segments: &[Segment]) -> Result<(), AccountantError> {
    if segments.is_empty() {
        return Err(AccountantError::range("segment", 0, "at least one segment"));
    }
    for (i, s) in segments.iter().enumerate() {
        let prefix = if segments.len() == 1 {
            String::new()
        } else {
            format!("segment[{i}].")
        };
        s.check(&prefix)?;
    }
    total_steps(segments, 0).map(|_| ())
}
