//! The tests' shorthand over the event API: a checked event of DP-SGD
//! segments (and objective releases), and a mechanism's calibration and
//! certified ε at a noise level, each through the one [`epsilon`] and the
//! one [`calibrate`].
#![allow(dead_code)] // each test crate uses part of it

use propdp_accountant::bracket::{BracketSettings, EpsilonBracket, Method};
use propdp_accountant::calibrate::{Knob, Target, calibrate as calibrate_event};
use propdp_accountant::events::{Event, Segment};
use propdp_accountant::{AccountantError, Mechanism, Neighbouring, ObjectiveBound, epsilon};

/// Checked events of DP-SGD segments and objective releases.
pub struct Events;

impl Events {
    /// One DP-SGD run.
    pub fn run(s: Segment) -> Result<Event, AccountantError> {
        checked(Event::dpsgd(s.noise_multiplier, s.sample_rate, s.steps))
    }

    /// A schedule of DP-SGD segments.
    pub fn schedule(segments: &[Segment]) -> Result<Event, AccountantError> {
        checked(Event::schedule(segments))
    }

    /// A ledger of segments and objective releases.
    pub fn ledger(segments: &[Segment], objectives: &[ObjectiveBound]) -> Result<Event, AccountantError> {
        checked(Event::ledger(segments, objectives))
    }
}

fn checked(e: Event) -> Result<Event, AccountantError> {
    e.parts()?;
    Ok(e)
}

/// A mechanism's calibration and ε at a noise level, through its event.
pub trait MechanismExt {
    /// The smallest noise meeting (ε, δ).
    fn calibrate(&self, eps: f64, delta: f64) -> Option<f64>;
    /// The smallest noise meeting ρ-zCDP.
    fn calibrate_rho(&self, rho: f64) -> Option<f64>;
    /// The certified ε at `noise`.
    fn epsilon_bracket(&self, noise: f64, delta: f64, settings: BracketSettings) -> Option<EpsilonBracket>;
    /// Whether `noise` meets (ε, δ) as the certified ε reads it.
    fn meets(&self, noise: f64, eps: f64, delta: f64) -> bool;
    /// The fast ε (DP-SGD: the fixed-grid figure; else the exact one).
    fn epsilon(&self, noise: f64, delta: f64) -> Option<f64>;
}

impl MechanismExt for Mechanism {
    fn calibrate(&self, eps: f64, delta: f64) -> Option<f64> {
        let target = Target::Approx {
            epsilon: eps,
            delta_priv: delta,
        };
        calibrate_event(
            Knob::NoiseMultiplier,
            |s| self.event(s),
            target,
            self.neighbouring,
            BracketSettings::default(),
        )
        .ok()
        .map(|c| c.value)
    }

    fn calibrate_rho(&self, rho: f64) -> Option<f64> {
        let target = Target::Zcdp { rho };
        calibrate_event(
            Knob::NoiseMultiplier,
            |s| self.event(s),
            target,
            self.neighbouring,
            BracketSettings::default(),
        )
        .ok()
        .map(|c| c.value)
    }

    fn epsilon_bracket(&self, noise: f64, delta: f64, settings: BracketSettings) -> Option<EpsilonBracket> {
        epsilon(&self.event(noise), delta, self.neighbouring, settings)
            .ok()
            .flatten()
    }

    fn meets(&self, noise: f64, eps: f64, delta: f64) -> bool {
        self.epsilon_bracket(noise, delta, BracketSettings::default())
            .is_some_and(|b| b.upper <= eps)
    }

    fn epsilon(&self, noise: f64, delta: f64) -> Option<f64> {
        let fast = BracketSettings {
            method: Method::FixedGrid,
            ..BracketSettings::default()
        };
        (epsilon(&self.event(noise), delta, self.neighbouring, fast)
            .ok()
            .flatten()
            .map(|b| b.upper))
        .or_else(|| {
            self.epsilon_bracket(noise, delta, BracketSettings::default())
                .map(|b| b.upper)
        })
    }
}

/// A calibrated run, as [`calibrate`] reads it back.
#[derive(Debug)]
pub struct Calibrated {
    pub run: Segment,
    pub epsilon: Option<EpsilonBracket>,
    pub rho: f64,
    pub evaluations: usize,
}

/// [`propdp_accountant::calibrate::calibrate`] of `knob` of the DP-SGD
/// `run` (its other fields as given).
pub fn calibrate(
    knob: Knob,
    run: Segment,
    target: Target,
    n: Neighbouring,
    s: BracketSettings,
) -> Result<Calibrated, AccountantError> {
    let make_event = |v: f64| {
        let mut r = run;
        match knob {
            Knob::NoiseMultiplier => r.noise_multiplier = v,
            Knob::Steps => r.steps = v as u64,
            Knob::SampleRate => r.sample_rate = v,
        }
        Event::dpsgd(r.noise_multiplier, r.sample_rate, r.steps)
    };
    let c = calibrate_event(knob, make_event, target, n, s)?;
    Ok(Calibrated {
        run: c.event.parts()?.segments[0],
        epsilon: c.epsilon,
        rho: c.rho,
        evaluations: c.evaluations,
    })
}
