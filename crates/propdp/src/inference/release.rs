//! What a private fit releases and what it costs: the estimator's noise
//! calibrated so that everything released — θ̂ and, for Huber objective
//! perturbation, the two residual statistics of its nuisances, for
//! logistic regression the label sum (checked against the no-intercept
//! model's 0) — composes
//! to at most the budget in one certified ledger
//! ([`propdp_core::accountant::epsilon`] of [`Event::ledger`]).
//!
//! DP-SGD ([`propdp_core::Algorithm::Dpsgd`]) is the accountant's subsampled
//! Gaussian mechanism, its sensitivity min(C, L·R) in the rows' own scale.
//!
//! Rows are projected onto the ball ‖x‖ ≤ R; the accountant's conventions
//! are for R = 1, so a problem with rows in the R-ball, ridge λ and noise σ
//! (or τ) is accounted as the unit-ball problem of θ' = Rθ: ridge λ/R²,
//! noise σ/R (output perturbation: τ' = Rτ).
//!
//! The residual statistics are released as centred sums, Σᵢ(1{|rᵢ| < M} − ½)
//! and Σᵢ(ψ(rᵢ)² − M²/2), whose add/remove sensitivities are ½ and M²/2 and
//! replace-one sensitivities 1 and M² — the factor two the accountant's
//! replace-one pair assumes, so the ledger is exact for them.

use propdp_core::accountant::bracket::{BracketSettings, EpsilonBracket};
use propdp_core::accountant::calibrate::{Knob, Target, calibrate};
use propdp_core::accountant::epsilon;
use propdp_core::accountant::events::{Event, Segment};
use propdp_core::accountant::{ExtraRidge, Mechanism, Neighbouring, ObjectiveBound};

use propdp_core::{Algorithm, GradientSteps, Shape};

use super::{Glm, Spec};
use crate::error::Argument;

/// The share of the budget ε the nuisance releases alone would cost: their
/// noise multiplier is calibrated to ε·NUISANCE_SHARE at δ/10, then the
/// estimator's noise to the whole budget with them in the ledger.
pub const NUISANCE_SHARE: f64 = 0.1;

/// The noise of one private fit and what it certifies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// σ of objective perturbation's linear term or τ of output
    /// perturbation, in the rows' own scale.
    pub noise: f64,
    /// The noise multiplier z of the nuisance releases (noise standard
    /// deviation over add/remove sensitivity), if any.
    pub nuisance_z: Option<f64>,
    /// The certified ε of everything released, at `delta_priv`.
    pub bracket: EpsilonBracket,
    /// The ridge the estimator is fitted with: the spec's λ, plus the
    /// extra ridge Δ where objective perturbation's floor exceeded half the
    /// budget (`extra_ridge = auto`).
    pub lambda: f64,
    /// Δ (0: none).
    pub extra_ridge: f64,
}

/// (L, β) of the loss: |ℓ'| ≤ L, 0 ≤ ℓ'' ≤ β.
fn constants(spec: &Spec) -> (f64, f64) {
    match spec.model {
        Glm::Logistic => (1.0, 0.25),
        Glm::Huber { m } => (m, 1.0),
    }
}

/// The ledger of the estimator at `noise` (rows' scale) and `z`'s
/// (multiplier, count) nuisance releases.
fn ledger(spec: &Spec, noise: f64, z: Option<(f64, u64)>) -> Option<EpsilonBracket> {
    let (l, beta) = constants(spec);
    let r = spec.row_norm;
    let mut segments: Vec<Segment> = z
        .map(|(z, count)| Segment {
            noise_multiplier: z,
            sample_rate: 1.0,
            steps: count,
        })
        .into_iter()
        .collect();
    let mut objectives = Vec::new();
    match spec.algorithm {
        Algorithm::Dpgd { .. } | Algorithm::Dpsgd { .. } => {
            let g = descent(spec);
            // T steps of the subsampled Gaussian mechanism, sensitivity min(C, L·R) (C = ∞: none)
            let sensitivity = g.clip.min(l * r);
            segments.push(Segment {
                noise_multiplier: noise / sensitivity,
                sample_rate: g.sample_rate,
                steps: g.steps as u64,
            });
        }
        Algorithm::Objective { lambda, .. } => objectives.push(ObjectiveBound::new(l, beta, r, lambda, noise)),
        Algorithm::Output { lambda, .. } => {
            // output perturbation: the Gaussian mechanism with sensitivity LR/λ (add/remove)
            segments.push(Segment {
                noise_multiplier: noise * lambda / (l * r),
                sample_rate: 1.0,
                steps: 1,
            });
        }
    }
    composed(&segments, &objectives, spec.delta_priv, spec.neighbouring)
}

/// The certified ε of `segments` and `objectives` together: the tight
/// ledger, or where its grid cannot reach ε (objective perturbation beside
/// Gaussian releases at ε in the thousands) basic composition — each part
/// at δ/2, their upper ends summed; the lower end is the larger part's at δ
/// (the pair reveals at least what either does).
fn composed(
    segments: &[Segment],
    objectives: &[ObjectiveBound],
    delta: f64,
    neighbouring: propdp_core::accountant::Neighbouring,
) -> Option<EpsilonBracket> {
    let settings = BracketSettings::default();
    let at = |s: &[Segment], o: &[ObjectiveBound], delta: f64| {
        epsilon(&Event::ledger(s, o), delta, neighbouring, settings)
            .ok()
            .flatten()
    };
    let tight = at(segments, objectives, delta);
    if tight.is_some() || segments.is_empty() || objectives.is_empty() {
        return tight;
    }
    let (a, b) = (at(segments, &[], delta / 2.0)?, at(&[], objectives, delta / 2.0)?);
    let (la, lb) = (at(segments, &[], delta)?, at(&[], objectives, delta)?);
    Some(EpsilonBracket {
        lower: la.lower.max(lb.lower),
        upper: a.upper + b.upper,
        grid: a.grid.max(b.grid),
        reached: a.reached && b.reached,
    })
}

/// The estimator's noise for `spec`'s budget, with `nuisances` scalar
/// statistics released beside it (Huber objective perturbation: the two
/// residual statistics; logistic: the label sum).
pub fn plan(spec: &Spec, nuisances: u64) -> Result<Plan, Argument> {
    plan_with_share(spec, nuisances, NUISANCE_SHARE)
}

/// [`plan`] with the nuisance releases' noise multiplier calibrated to
/// ε·`share` alone (the classical interval's matrices take a larger share:
/// [`super::classical::SHARE`]). A release of a vector or matrix counts as
/// one: its noise is the multiplier times its ℓ2 sensitivity.
pub fn plan_with_share(spec: &Spec, nuisances: u64, share: f64) -> Result<Plan, Argument> {
    let (l, beta) = constants(spec);
    let r = spec.row_norm;
    // to the rows' scale: σ = Rσ' (objective), τ = τ'/R (output)
    let objective = match spec.algorithm {
        Algorithm::Objective { .. } => true,
        Algorithm::Output { .. } => false,
        Algorithm::Dpgd { .. } | Algorithm::Dpsgd { .. } => return descent_plan(spec, l * r, beta, nuisances),
    };
    // the unit ball's ridge λ/R²
    let kind = spec.algorithm.with_lambda(spec.lambda() / (r * r)).mechanism();
    let mechanism = Mechanism::new(kind, l, beta, spec.neighbouring);
    // the extra ridge, in the unit ball's scale λ/R² and back
    let extra = match spec.extra_ridge {
        ExtraRidge::Auto => mechanism.extra_ridge(spec.epsilon, false) * r * r,
        ExtraRidge::Refuse => 0.0,
    };
    if extra > 0.0 {
        let spec = spec.with_lambda(spec.lambda() + extra);
        let mut plan = plan_with_share(&spec, nuisances, share)?;
        plan.extra_ridge = extra;
        return Ok(plan);
    }
    let floor = mechanism.floor(false);
    if spec.epsilon <= floor {
        return Err(Argument::new(
            "epsilon",
            format!(
                " = {} is at or below objective perturbation's floor {} = {floor:.4} ({}): no noise reaches it; \
                 raise lambda or epsilon, lower row_norm, or let extra_ridge = \"auto\" (the default) add the \
                 ridge that halves the floor",
                spec.epsilon,
                if spec.neighbouring == propdp_core::accountant::Neighbouring::ReplaceOne {
                    "2·log(1 + βR²/λ)"
                } else {
                    "log(1 + βR²/λ)"
                },
                spec.neighbouring.label()
            ),
        ));
    }
    let unattainable = || {
        Argument::new(
            "epsilon",
            format!(
                " = {} at delta_priv = {:e} is not reachable by this release: raise epsilon",
                spec.epsilon, spec.delta_priv
            ),
        )
    };
    let to_rows = |unit: f64| if objective { unit * r } else { unit / r };
    let z = nuisance_multiplier(spec, nuisances, share).map_err(|()| unattainable())?;
    let Some(alone) = calibrated_noise(|s| mechanism.event(s), spec.neighbouring, spec.epsilon, spec.delta_priv) else {
        return Err(unattainable());
    };
    finish(spec, to_rows(alone), z, unattainable)
}

/// The smallest noise of `mechanism` meeting (ε, δ), its ε read back by
/// the certified accountant at most ε ([`calibrate`] of its event); `None`
/// when no noise does.
pub(super) fn calibrated_noise(
    make_event: impl Fn(f64) -> Event,
    neighbouring: Neighbouring,
    epsilon: f64,
    delta: f64,
) -> Option<f64> {
    let target = Target::Approx {
        epsilon,
        delta_priv: delta,
    };
    let settings = BracketSettings::default();
    calibrate(Knob::NoiseMultiplier, make_event, target, neighbouring, settings)
        .ok()
        .map(|c| c.value)
}

/// The noise multiplier of `count` nuisance releases at ε·`share` and
/// δ/10 (none when `count` = 0; `Err` when unreachable).
fn nuisance_multiplier(spec: &Spec, count: u64, share: f64) -> Result<Option<(f64, u64)>, ()> {
    if count == 0 {
        return Ok(None);
    }
    let share = spec.epsilon * share;
    let releases = |z: f64| Event::gaussian(z).repeated(count);
    match calibrated_noise(releases, spec.neighbouring, share, spec.delta_priv / 10.0) {
        Some(z) => Ok(Some((z, count))),
        None => Err(()),
    }
}

/// From the estimator's noise calibrated alone (`noise`), the smallest
/// noise whose ledger with the nuisance releases `z` is within the budget:
/// bracket, bisect (1e-4 relative), read back through the certified ledger.
fn finish(
    spec: &Spec,
    mut noise: f64,
    z: Option<(f64, u64)>,
    unattainable: impl Fn() -> Argument,
) -> Result<Plan, Argument> {
    if z.is_some() {
        // the ledger's ε falls with the estimator's noise
        let within = |noise: f64| ledger(spec, noise, z).is_some_and(|b| b.upper <= spec.epsilon);
        let (mut lo, mut hi) = (noise, noise * 2.0);
        let mut grown = 0;
        while !within(hi) {
            (lo, hi) = (hi, hi * 2.0);
            grown += 1;
            if grown > 40 {
                return Err(unattainable());
            }
        }
        while hi / lo - 1.0 > 1e-4 {
            let mid = 0.5 * (lo + hi);
            if within(mid) { hi = mid } else { lo = mid }
        }
        noise = hi;
    }
    let (noise, bracket) = within_budget(noise, spec.epsilon, |x| ledger(spec, x, z)).ok_or_else(unattainable)?;
    Ok(Plan {
        noise,
        nuisance_z: z.map(|(z, _)| z),
        bracket,
        lambda: spec.lambda(),
        extra_ridge: 0.0,
    })
}

/// DP-SGD's noise σ on the summed gradient for `spec`'s budget, with
/// `nuisances` scalar releases beside it: T steps of the Poisson-subsampled
/// Gaussian mechanism whose sensitivity is min(C, L·R) (`lipschitz` = L·R:
/// |ℓ'| ≤ L on rows of norm ≤ R), calibrated and read back through the
/// certified ledger.
fn descent_plan(spec: &Spec, lipschitz: f64, beta: f64, nuisances: u64) -> Result<Plan, Argument> {
    let g = descent(spec);
    let kind = spec.algorithm.mechanism();
    let mechanism = Mechanism::new(kind, lipschitz, beta, spec.neighbouring);
    let unattainable = || {
        Argument::new(
            "epsilon",
            format!(
                " = {} at delta_priv = {:e} is not reachable by {} steps of DP-SGD at sample rate {}: raise epsilon",
                spec.epsilon, spec.delta_priv, g.steps, g.sample_rate
            ),
        )
    };
    let z = nuisance_multiplier(spec, nuisances, NUISANCE_SHARE).map_err(|()| unattainable())?;
    let sigma = calibrated_noise(|s| mechanism.event(s), spec.neighbouring, spec.epsilon, spec.delta_priv)
        .ok_or_else(unattainable)?;
    finish(spec, sigma, z, unattainable)
}

/// The gradient steps of a DP-SGD spec.
fn descent(spec: &Spec) -> GradientSteps {
    match spec.algorithm.shape() {
        Shape::Descent(g) => g,
        Shape::Static { .. } => unreachable!("called for DP-SGD only"),
    }
}

/// The certified ε of `count` Gaussian releases at noise multiplier `z`
/// alone: what a fit refused after them has spent.
pub(super) fn spent(spec: &Spec, z: f64, count: u64) -> Option<EpsilonBracket> {
    let segment = Segment {
        noise_multiplier: z,
        sample_rate: 1.0,
        steps: count,
    };
    composed(&[segment], &[], spec.delta_priv, spec.neighbouring)
}

/// A closed-form calibration read back through the certified ledger: the
/// smallest noise·1.001ᵏ, k ≤ 200, whose certified ε (`certify`) is within
/// `epsilon`, with its bracket.
pub(super) fn within_budget(
    noise: f64,
    epsilon: f64,
    certify: impl Fn(f64) -> Option<EpsilonBracket>,
) -> Option<(f64, EpsilonBracket)> {
    let mut raised = noise;
    for _ in 0..=200 {
        if let Some(b) = certify(raised).filter(|b| b.upper <= epsilon) {
            return Some((raised, b));
        }
        raised *= 1.001;
    }
    None
}
