//! Calibration of one knob of an [`Event`] — the noise (a DP-SGD run's
//! noise multiplier z, a Gaussian's or objective release's σ), the number
//! of steps T or the Poisson rate q — to a [`Target`] (ε, δ) or ρ, on the
//! certified ε ([`crate::epsilon`] of the event; a run's tightened by its
//! RDP and full-batch bounds), so that the value returned never
//! overshoots: the ε read back at it is ≤ the target, by construction.
//! [`calibrate`] takes the event as a function of the knob, `make_event`.
//!
//! *(ε, δ).* ε⁺(v), the upper end of the certified bracket at knob value v,
//! decreases in z and increases in T and q (up to the grid's rounding,
//! which the search does not rely on). The search keeps a *feasible* value
//! (ε⁺ ≤ target, evaluated) and an *infeasible* one (ε⁺ > target or no
//! finite ε), starting from a cheap estimate (the fixed-grid PLD for z, the
//! RDP bound for T and q) and stepping outwards until both are found, then
//! narrows them by regula falsi (Illinois) on log ε⁺ − log ε against log v,
//! which is close to linear, to 10⁻⁴ relative in z and q or to adjacent
//! step counts. Each probe's bracket is refined only until it lies on one
//! side of the target (all a feasibility test needs); the feasible end
//! returned is then refined to the width asked for, so reading ε back gives
//! exactly its bracket.
//!
//! *ρ (zCDP).* T steps of DP-SGD are T·s²/(2z²)-zCDP (s = 1 add/remove-one,
//! 2 replace-one; subsampling gives no zCDP amplification; an event's ρ is
//! the sum of its parts', [`crate::events::Parts::rho`]), solved for the
//! knob (the steps rounded down, the noise up: never above ρ); ρ does not depend
//! on q, so q cannot be calibrated to it.
//!
//! Every value is searched within stated limits — z ∈ [10⁻³, 10⁹],
//! T ∈ [1, 10⁹], q ∈ [10⁻¹², 1] — and a target no value in them meets is
//! refused ([`AccountantError::Unattainable`]) naming the knob; a target met
//! at the limit T = 10⁹ or q = 1 returns the limit, one met at z = 10⁻³ is
//! refused (no smallest noise exists).
//!
//! # References
//! - Dekker (1969) and Dowell, Jarratt (1971), *A modified regula falsi
//!   method* (the Illinois variant).
//! - Opacus issues #346, #566: calibrations whose ε read back overshot the
//!   target, or that ran for minutes; both regressions are in
//!   `tests/tracker_regressions.rs`.

use serde::{Deserialize, Serialize};

use crate::AccountantError;
use crate::account::deciding;
use crate::bracket::{BracketSettings, EpsilonBracket};
use crate::dpsgd::calibrate_dpsgd;
use crate::dpsgd::{fast_epsilon, rdp_epsilon};
use crate::events::{Event, Segment, check_delta};
use crate::gaussian::{gdp_to_eps, log_delta_gaussian, mu_dpgd, smallest_noise};
use crate::neighbouring::{Neighbouring, relation_factor};

/// The knob of a DP-SGD run that a calibration solves for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// The noise: the smallest z = σ/C of a DP-SGD run, or σ of a
    /// Gaussian or objective release, meeting the target.
    NoiseMultiplier,
    /// T: the most steps meeting the target.
    Steps,
    /// q: the largest Poisson rate meeting the target.
    SampleRate,
}

impl Knob {
    /// The knob's argument name (`noise_multiplier`, `steps`, `sample_rate`).
    pub fn name(self) -> &'static str {
        match self {
            Knob::NoiseMultiplier => "noise_multiplier",
            Knob::Steps => "steps",
            Knob::SampleRate => "sample_rate",
        }
    }

    /// The knob of an argument name (`noise`/`noise_multiplier`, `steps`,
    /// `sample_rate`/`sample-rate`); `None` for anything else.
    pub fn parse(name: &str) -> Option<Knob> {
        match name.replace('-', "_").as_str() {
            "noise" | "noise_multiplier" => Some(Knob::NoiseMultiplier),
            "steps" => Some(Knob::Steps),
            "sample_rate" => Some(Knob::SampleRate),
            _ => None,
        }
    }

    /// The run with the knob set to `v` (steps: `v` is a whole number).
    fn set(self, run: &Segment, v: f64) -> Segment {
        let mut r = *run;
        match self {
            Knob::NoiseMultiplier => r.noise_multiplier = v,
            Knob::Steps => r.steps = v as u64,
            Knob::SampleRate => r.sample_rate = v,
        }
        r
    }

    /// Whether ε falls as the knob grows (only the noise).
    fn private_upwards(self) -> bool {
        self == Knob::NoiseMultiplier
    }

    /// The range searched, [low, high].
    pub fn limits(self) -> (f64, f64) {
        match self {
            Knob::NoiseMultiplier => (1e-3, 1e9),
            Knob::Steps => (1.0, 1e9),
            Knob::SampleRate => (1e-12, 1.0),
        }
    }

    /// `v` made a value of the knob (steps: a whole number).
    fn snap(self, v: f64) -> f64 {
        let (lo, hi) = self.limits();
        let v = v.clamp(lo, hi);
        if self == Knob::Steps { v.round() } else { v }
    }
}

/// A privacy target, what a mechanism's noise or a run's knob is
/// calibrated to: (ε, δ)-DP or ρ-zCDP (in records tagged `notion`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "notion", rename_all = "snake_case")]
pub enum Target {
    /// (ε, δ)-DP: ε > 0, 0 < δ < 1.
    Approx {
        /// ε > 0.
        epsilon: f64,
        /// 0 < δ < 1 (named `delta_priv` to keep it apart from the aspect ratio δ = d/n).
        delta_priv: f64,
    },
    /// ρ-zCDP, ρ > 0.
    Zcdp {
        /// ρ.
        rho: f64,
    },
}

impl Target {
    /// The parameter name of the target's level: "epsilon" or "rho".
    pub fn param(&self) -> &'static str {
        match self {
            Target::Approx { .. } => "epsilon",
            Target::Zcdp { .. } => "rho",
        }
    }

    /// The level: ε or ρ.
    pub fn level(&self) -> f64 {
        match *self {
            Target::Approx { epsilon, .. } => epsilon,
            Target::Zcdp { rho } => rho,
        }
    }
}

/// A calibrated event and its guarantee read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibrated {
    /// The knob's calibrated value.
    pub value: f64,
    /// The event at it.
    pub event: Event,
    /// The certified ε at the target's δ (an (ε, δ) target; its upper end is
    /// ≤ the target ε).
    pub epsilon: Option<EpsilonBracket>,
    /// The event's zCDP ρ ([`crate::events::Parts::rho`]).
    pub rho: f64,
    /// Certified brackets evaluated by the search.
    pub evaluations: usize,
}

/// Calibrates `knob` to `target` under `neighbouring`: `make_event(v)` is
/// the event at knob value `v` — the noise σ of its Gaussian (noise
/// multiplier σ/Δ) or objective release, the steps T or the Poisson rate
/// q of its DP-SGD run. The value returned meets the target as
/// [`crate::epsilon`] reads the event back (never above it):
///
/// - (ε, δ), one DP-SGD run below the full batch (or its steps or rate):
///   the certified search of the module docs, on the run's noise
///   multiplier (σ = z·Δ, rounded up);
/// - (ε, δ), a Gaussian release (T-fold), a full-batch run or one
///   objective release: the closed form's smallest noise, raised (by
///   factors of 1.1 up to 10³, then bisection to 10⁻¹² relative) if its ε
///   read back exceeds the target;
/// - ρ: the smallest noise with ρ(σ) ≤ ρ (to an ulp), or the most steps with
///   ρ(T) ≤ ρ; ρ does not depend on q.
///
/// Arguments out of range are refused naming them (the event's parts as
/// [`Event::parts`] names them, at knob value 1); a target no value of the
/// knob meets — or, for the noise, one so loose that its smallest value
/// meets it — is [`AccountantError::Unattainable`]. An event with more
/// than one part is calibrated only if it is one of the above.
///
/// ```
/// use propdp_accountant::calibrate::{calibrate, Knob, Target};
/// use propdp_accountant::bracket::BracketSettings;
/// use propdp_accountant::events::Event;
/// use propdp_accountant::{epsilon, Neighbouring};
/// let (n, s) = (Neighbouring::AddRemoveOne, BracketSettings::default());
/// let target = Target::Approx { epsilon: 1.0, delta_priv: 1e-5 };
/// let c = calibrate(Knob::NoiseMultiplier, |z| Event::dpsgd(z, 0.01, 1000), target, n, s).unwrap();
/// // read back: never above the target
/// assert!(epsilon(&c.event, 1e-5, n, s).unwrap().unwrap().upper <= 1.0);
/// ```
pub fn calibrate(
    knob: Knob,
    make_event: impl Fn(f64) -> Event,
    target: Target,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Result<Calibrated, AccountantError> {
    // the knob's own value is not an input: check the event at a valid stand-in
    let parts = make_event(1.0).parts()?;
    settings.check()?;
    let rho_of = |v: f64| make_event(v).parts().map_or(f64::INFINITY, |p| p.rho(neighbouring));
    let done = |value: f64, epsilon: Option<EpsilonBracket>, evaluations: usize| {
        let event = make_event(value);
        let rho = event.parts().map_or(f64::INFINITY, |p| p.rho(neighbouring));
        Calibrated {
            value,
            event,
            epsilon,
            rho,
            evaluations,
        }
    };
    let run = match (parts.segments.as_slice(), parts.objectives.is_empty()) {
        ([run], true) => Some(*run),
        _ => None,
    };
    if run.is_none() && (knob != Knob::NoiseMultiplier || parts.lone_objective().is_none()) {
        return Err(AccountantError::range(
            knob.name(),
            "an event of several parts",
            "a knob of one DP-SGD run, one Gaussian release (T-fold) or one objective release",
        ));
    }
    match target {
        Target::Zcdp { rho } => {
            if !(rho > 0.0 && rho.is_finite()) {
                return Err(AccountantError::range("rho", rho, "0 < rho < ∞"));
            }
            let value = calibrate_rho(knob, rho, rho_of)?;
            Ok(done(value, None, 0))
        }
        Target::Approx {
            epsilon,
            delta_priv: delta,
        } => {
            if !(epsilon > 0.0 && epsilon.is_finite()) {
                return Err(AccountantError::range("epsilon", epsilon, "0 < epsilon < ∞"));
            }
            check_delta(delta)?;
            match run {
                Some(run) if knob != Knob::NoiseMultiplier || run.sample_rate < 1.0 => {
                    let search = Search {
                        knob,
                        run,
                        epsilon,
                        delta,
                        neighbouring,
                        settings,
                        evaluations: std::cell::Cell::new(0),
                    };
                    let found = search.run()?;
                    let value = match knob {
                        Knob::NoiseMultiplier => noise_of_multiplier(&make_event, found.value, parts.gaussians[0].1)
                            .ok_or_else(|| search.loose())?,
                        _ => found.value,
                    };
                    Ok(done(value, found.bracket, search.evaluations.get()))
                }
                _ => {
                    let closed = Closed {
                        make_event: &make_event,
                        epsilon,
                        delta,
                        neighbouring,
                        settings,
                        evaluations: std::cell::Cell::new(0),
                    };
                    let value = closed.smallest_noise(run, parts.gaussians.first().map(|g| g.1))?;
                    let bracket = closed.bracket(value);
                    Ok(done(value, bracket, closed.evaluations.get()))
                }
            }
        }
    }
}

/// The noise σ whose event's noise multiplier (σ/Δ) is at least `z`, the
/// run's calibrated one; `None` at the smallest multiplier searched (the
/// target is so loose that no smallest noise exists).
fn noise_of_multiplier(make_event: &impl Fn(f64) -> Event, z: f64, sensitivity: f64) -> Option<f64> {
    if z <= Knob::NoiseMultiplier.limits().0 {
        return None;
    }
    let multiplier = |noise: f64| {
        make_event(noise)
            .parts()
            .map_or(f64::INFINITY, |p| p.segments[0].noise_multiplier)
    };
    let mut noise = z * sensitivity;
    while multiplier(noise) < z {
        noise = noise.next_up();
    }
    Some(noise)
}

/// ρ(v) = `rho` solved for the knob: the noise by Brent's method on
/// log ρ(σ) (to 4 ulp), raised by ulps until ρ read back is at most the
/// target; the steps as the most with ρ(T) ≤ ρ.
fn calibrate_rho(knob: Knob, rho: f64, rho_of: impl Fn(f64) -> f64) -> Result<f64, AccountantError> {
    match knob {
        Knob::SampleRate => Err(AccountantError::unattainable(
            "sample_rate",
            "DP-SGD's zCDP ρ = T·s²/(2z²) does not depend on the sample rate (subsampling gives no zCDP \
             amplification): calibrate noise_multiplier or steps to ρ, or the sample rate to an (ε, δ)",
        )),
        Knob::NoiseMultiplier => {
            // objective perturbation keeps ρ ≥ log(1 + βR²/λ) (×4 replace-one) whatever σ is
            let floor = rho_of(f64::MAX.sqrt());
            let unmet = || {
                AccountantError::unattainable(
                    "rho",
                    &format!(
                        "rho = {rho:?} is not met by any noise in [e^-200, e^40] (ρ ≥ {floor:?} however large the noise)"
                    ),
                )
            };
            if floor >= rho {
                return Err(unmet());
            }
            let mut noise = smallest_noise(|s| rho_of(s).ln(), rho).ok_or_else(unmet)?;
            // Brent's root is within 4 ulp: raised until ρ read back is at most the target
            while rho_of(noise) > rho {
                noise = noise.next_up();
            }
            Ok(noise)
        }
        Knob::Steps => {
            let per_step = rho_of(1.0);
            let mut steps = (rho / per_step).floor().min(knob.limits().1);
            while steps >= 1.0 && rho_of(steps) > rho {
                steps -= 1.0;
            }
            if steps < 1.0 {
                return Err(AccountantError::unattainable(
                    "rho",
                    &format!("one step already has ρ = {per_step:?} > {rho:?}"),
                ));
            }
            Ok(steps)
        }
    }
}

/// The (ε, δ) calibration of the noise of an event with a closed-form
/// curve (module docs of [`calibrate`]).
struct Closed<'a, F: Fn(f64) -> Event> {
    make_event: &'a F,
    epsilon: f64,
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
    evaluations: std::cell::Cell<usize>,
}

impl<F: Fn(f64) -> Event> Closed<'_, F> {
    /// The certified ε of the event at noise `noise`.
    fn bracket(&self, noise: f64) -> Option<EpsilonBracket> {
        self.evaluations.set(self.evaluations.get() + 1);
        crate::epsilon(&(self.make_event)(noise), self.delta, self.neighbouring, self.settings)
            .ok()
            .flatten()
    }

    /// Whether `noise` meets the target as [`crate::epsilon`] reads it back.
    fn meets(&self, noise: f64) -> bool {
        self.bracket(noise).is_some_and(|b| b.upper <= self.epsilon)
    }

    /// log δ(ε) of the event at noise `noise` in closed form: a Gaussian
    /// release's curve at μ = s·√T·Δ/σ, or an objective release's.
    fn log_delta(&self, noise: f64) -> f64 {
        let (eps, n) = (self.epsilon, self.neighbouring);
        let Ok(parts) = (self.make_event)(noise).parts() else {
            return 0.0;
        };
        if let Some((sigma, sensitivity, steps)) = parts.lone_gaussian() {
            return log_delta_gaussian(eps, mu_dpgd(sensitivity, 1.0, steps as usize, sigma, n));
        }
        match (parts.lone_objective(), n) {
            (Some(b), Neighbouring::AddRemoveOne) => b.log_delta(eps),
            (Some(b), Neighbouring::ReplaceOne) => b.log_delta_replace(eps),
            (None, _) => 0.0,
        }
    }

    /// The smallest noise meeting the target: the closed form's (a
    /// full-batch `run`: DP-SGD's calibration at q = 1, times its
    /// sensitivity), raised until its ε read back meets the target.
    fn smallest_noise(&self, run: Option<Segment>, sensitivity: Option<f64>) -> Result<f64, AccountantError> {
        let unmet = || {
            AccountantError::unattainable(
                "epsilon",
                &format!(
                    "epsilon = {:?} at delta = {:?} is not met by a smallest noise in [e^-200, e^40]",
                    self.epsilon, self.delta
                ),
            )
        };
        let (eps, delta) = (self.epsilon, self.delta);
        let first = match (run, sensitivity) {
            (Some(run), Some(s)) if run.sample_rate >= 1.0 && !self.lone_gaussian() => {
                calibrate_dpsgd(eps, delta, run.sample_rate, run.steps as usize, self.neighbouring).map(|z| z * s)
            }
            _ => smallest_noise(|s| self.log_delta(s), delta),
        }
        .ok_or_else(unmet)?;
        if self.meets(first) {
            return Ok(first);
        }
        let mut hi = first;
        loop {
            hi *= 1.1;
            // the accountants agree to far better than 10³: beyond, refuse
            if !hi.is_finite() || hi > 1e3 * first {
                return Err(unmet());
            }
            if self.meets(hi) {
                break;
            }
        }
        let mut lo = hi / 1.1;
        while hi / lo > 1.0 + 1e-12 {
            let mid = (lo * hi).sqrt();
            if self.meets(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(hi)
    }

    /// Whether the event is a Gaussian release outside any sample.
    fn lone_gaussian(&self) -> bool {
        (self.make_event)(1.0)
            .parts()
            .is_ok_and(|p| p.lone_gaussian().is_some())
    }
}

/// A knob value and what the certified accountant says of it.
#[derive(Debug, Clone, Copy)]
struct Probe {
    value: f64,
    /// log ε⁺ − log target (+∞: no finite ε).
    gap: f64,
    /// ε⁺ ≤ target, compared as numbers (two ε one ulp apart can have
    /// equal logarithms).
    meets: bool,
    bracket: Option<EpsilonBracket>,
    /// The bracket's refinement stopped once it decided `meets`.
    early: bool,
}

impl Probe {
    /// The probe at knob value `v` of an upper bound `eps` on ε.
    fn new(v: f64, eps: Option<f64>, target: f64, bracket: Option<(EpsilonBracket, bool)>) -> Probe {
        Probe {
            value: v,
            gap: eps.map_or(f64::INFINITY, |e| e.ln() - target.ln()),
            meets: eps.is_some_and(|e| e <= target),
            bracket: bracket.map(|b| b.0),
            early: bracket.is_some_and(|b| b.1),
        }
    }

    fn feasible(&self) -> bool {
        self.meets
    }
}

/// The (ε, δ) search of one knob.
struct Search {
    knob: Knob,
    run: Segment,
    epsilon: f64,
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
    evaluations: std::cell::Cell<usize>,
}

impl Search {
    /// The certified ε at knob value `v`, refined until it decides whether
    /// the target is met (`settle`: to the width asked for).
    fn probe(&self, v: f64, settle: bool) -> Probe {
        self.evaluations.set(self.evaluations.get() + 1);
        let run = self.knob.set(&self.run, v);
        let decide = (!settle).then_some(self.epsilon);
        let bracket = deciding(&run, self.delta, self.neighbouring, self.settings, decide);
        Probe::new(v, bracket.map(|b| b.0.upper), self.epsilon, bracket)
    }

    /// A fast upper bound on ε at knob value `v`: the fixed-grid PLD
    /// (about 0.5% above the certified end at Δ = 10⁻³; the RDP bound where
    /// it does not fit) or the full batch's, whichever is smaller.
    fn fast(&self, v: f64) -> Option<f64> {
        let r = self.knob.set(&self.run, v);
        let (z, q, n) = (r.noise_multiplier, r.sample_rate, self.neighbouring);
        let full = gdp_to_eps(mu_dpgd(1.0, 1.0, r.steps as usize, z, n), self.delta);
        let pld = (q < 1.0)
            .then(|| {
                fast_epsilon(z, q, r.steps as usize, self.delta, n)
                    .or_else(|| Some(rdp_epsilon(z, q, r.steps, self.delta, n)).filter(|e| e.is_finite()))
            })
            .flatten();
        [pld, full].into_iter().flatten().reduce(f64::min)
    }

    /// A closed-form start for the search: the full batch's value for z
    /// and T (the Gaussian mechanism's μ* at the target: z = s√T/μ*,
    /// T = (μ*z/s)²), and for q the central-limit rate solving
    /// μ* = [`crate::tradeoff::clt_mu`] (Bu, Dong, Long, Su 2020; linear in q),
    /// clamped to the knob's limits.
    fn start(&self) -> f64 {
        let Some(noise) = smallest_noise(|x| log_delta_gaussian(self.epsilon, 1.0 / x), self.delta) else {
            return self.knob.snap(1.0);
        };
        let mu = 1.0 / noise;
        let s = relation_factor(self.neighbouring);
        let (z, t) = (self.run.noise_multiplier, self.run.steps as f64);
        self.knob.snap(match self.knob {
            Knob::NoiseMultiplier => s * t.sqrt() / mu,
            Knob::Steps => (mu * z / s).powi(2).floor(),
            Knob::SampleRate => mu / crate::tradeoff::clt_mu(z, 1.0, self.run.steps, self.neighbouring),
        })
    }

    /// One step from `v` by a factor e^{±s}, towards more privacy
    /// (`safer`) or less; the limit when past it, `None` at it.
    fn step(&self, v: f64, s: f64, safer: bool) -> Option<f64> {
        let up = safer == self.knob.private_upwards();
        let (lo, hi) = self.knob.limits();
        let mut next = self.knob.snap(v * if up { s.exp() } else { (-s).exp() });
        if next == v && self.knob == Knob::Steps {
            next = if up { v + 1.0 } else { v - 1.0 };
        }
        (next != v && (lo..=hi).contains(&next)).then_some(next)
    }

    /// Two stages from a closed-form start: the fast bound's crossing (to
    /// 10⁻³ in log v), then the certified one's from there (the fast bound
    /// is above the certified one, so its crossing is on the safe side).
    fn run(&self) -> Result<Probe, AccountantError> {
        let fast = self.boundary(
            |v| Probe::new(v, self.fast(v), self.epsilon, None),
            self.start(),
            0.1,
            1e-3,
        )?;
        let start = fast.value;
        let found = self.boundary(|v| self.probe(v, false), start, 0.002, 1e-4)?;
        if !found.early {
            return Ok(found);
        }
        // the answer's bracket refined to the width asked for (the grids
        // are the same up to the early stop and each end is kept at its
        // tightest, so it still meets the target)
        let settled = self.probe(found.value, true);
        debug_assert!(settled.meets);
        Ok(if settled.meets { settled } else { found })
    }

    /// The feasible side of the boundary of `eval` near `start`: steps
    /// outwards by factors growing from e^{s} until a feasible and an
    /// infeasible value are both known, then narrows them by regula falsi
    /// (Illinois) in log v until they are `tol` apart in log v (steps:
    /// adjacent) or the feasible end's ε⁺ is as near the target as its
    /// bracket can tell: within a quarter of the bracket's relative width
    /// (the width asked for, or the one reached where the point limit
    /// stopped it). A feasible value at the knob's limit is returned as it is.
    fn boundary<E: Fn(f64) -> Probe>(&self, eval: E, start: f64, s: f64, tol: f64) -> Result<Probe, AccountantError> {
        let (mut feasible, mut infeasible) = (None, None);
        let mut at = eval(start);
        // the first step about as far as the gap at the start says (log v
        // moves with log ε at a rate of order 1)
        let mut s = if at.gap.is_finite() {
            s.max(1.5 * at.gap.abs())
        } else {
            s
        };
        loop {
            if at.feasible() {
                feasible = Some(at);
            } else {
                infeasible = Some(at);
            }
            if feasible.is_some() && infeasible.is_some() {
                break;
            }
            // feasible: look for the infeasible side (less private), and back
            match self.step(at.value, s, !at.feasible()) {
                Some(v) => at = eval(v),
                None if at.feasible() => return Ok(at),
                None => return Err(self.unattainable()),
            }
            s *= 2.0;
        }
        let (mut f, mut i) = (feasible.unwrap(), infeasible.unwrap());
        let close = |a: f64, b: f64| match self.knob {
            Knob::Steps => (a - b).abs() <= 1.0,
            _ => (a.ln() - b.ln()).abs() <= tol,
        };
        let (mut gf, mut gi) = (f.gap, i.gap);
        let mut side = 0i8;
        for _ in 0..100 {
            // (a bracket stopped early is as wide as the decision needed, not as the grid allows)
            let near = |b: EpsilonBracket| {
                let width = self.settings.relative_width.max((b.upper - b.lower) / b.upper);
                b.upper >= self.epsilon * (1.0 - 0.25 * width)
            };
            if close(f.value, i.value) || (!f.early && f.bracket.is_some_and(near)) {
                break;
            }
            let (xf, xi) = (f.value.ln(), i.value.ln());
            let width = xi - xf;
            let secant = xf + width * gf / (gf - gi);
            let x = if secant.is_finite() && (secant - xf) / width > 1e-3 && (xi - secant) / width > 1e-3 {
                secant
            } else {
                0.5 * (xf + xi)
            };
            let mut v = self.knob.snap(x.exp());
            if self.knob == Knob::Steps {
                // strictly between two step counts more than 1 apart
                let (a, b) = (f.value.min(i.value), f.value.max(i.value));
                v = v.clamp(a + 1.0, b - 1.0);
            }
            if v == f.value || v == i.value {
                break;
            }
            let p = eval(v);
            if p.feasible() {
                f = p;
                gf = p.gap;
                if side == 1 {
                    gi *= 0.5;
                }
                side = 1;
            } else {
                i = p;
                gi = p.gap;
                if side == -1 {
                    gf *= 0.5;
                }
                side = -1;
            }
        }
        Ok(f)
    }

    /// A target met at the smallest noise multiplier searched: no smallest
    /// noise exists to calibrate.
    fn loose(&self) -> AccountantError {
        let (lo, hi) = self.knob.limits();
        AccountantError::unattainable(
            "epsilon",
            &format!(
                "epsilon = {:?} at delta = {:?} is met by every noise_multiplier in [{lo:e}, {hi:e}]: no smallest \
                 noise exists to calibrate",
                self.epsilon, self.delta
            ),
        )
    }

    fn unattainable(&self) -> AccountantError {
        let (lo, hi) = self.knob.limits();
        let edge = if self.knob.private_upwards() { hi } else { lo };
        AccountantError::unattainable(
            "epsilon",
            &format!(
                "epsilon = {:?} at delta = {:?} is not met by any {} in [{lo:e}, {hi:e}]: at {edge:e} the certified ε \
                 is above it",
                self.epsilon,
                self.delta,
                self.knob.name()
            ),
        )
    }
}
