//! The accountant's entry point: the certified ε of any [`Event`] at δ
//! under a neighbouring relation ([`epsilon`], by the PLD bracket of
//! [`crate::bracket`]); a single DP-SGD run's bracket tightened by the
//! run's other valid upper bounds (the RDP accountant's and the full
//! batch's), which calibration and Poisson sampling read; or, by another
//! [`Method`], one run's fast fixed-grid or RDP upper bound.
//!
//! An event is read as its parts ([`Event::parts`]): a Gaussian release
//! (T-fold) alone is exactly μ-GDP, μ = s·√T·Δ/σ (s = 1 add/remove-one,
//! 2 replace-one), ε(δ) the root of δ = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2);
//! one objective release alone is the exact ε of its bound; everything
//! else is one composition of privacy-loss distributions.
//!
//! # References
//! - Google, dp_accounting: `pld/pld_privacy_accountant.py` (an
//!   accountant over `DpEvent`s).
//! - Koskela, Jälkö, Honkela (2020), *Computing tight differential privacy
//!   guarantees using FFT*, AISTATS (the composed PLD).
//! - Dong, Roth, Su (2022), *Gaussian differential privacy*, JRSS B (μ-GDP).

use crate::AccountantError;
use crate::bracket::{BracketSettings, EpsilonBracket, Method, bracket_of, first_grid};
use crate::dpsgd::{fixed_grid_epsilon, rdp_epsilon};
use crate::events::{Event, Segment, check_delta, total_steps};
use crate::gaussian::{eps_at, gdp_to_eps, mu_dpgd};
use crate::neighbouring::Neighbouring;

/// The certified ε at `delta` (0 < δ < 1, else refused naming `delta`) of
/// `event` under `neighbouring` (docs/privacy.md, "Certified brackets";
/// [`crate::bracket`]); the event's parts out of range are refused naming
/// them (`segment[1].sample_rate`, [`Event::parts`]).
///
/// - A Gaussian release (T-fold) alone: its exact ε, [ε, ε]; a bare
///   [`Event::Objective`]: the exact ε of its bound (replace-one: group privacy
///   of size 2 on it, [`crate::ObjectiveBound::log_delta_replace`]), [ε, ε].
/// - One DP-SGD run alone: the PLD bracket with its upper end tightened by
///   the run's other valid upper bounds (the RDP accountant's, the full
///   batch's) — the figure `propdp privacy` states for it; a schedule of
///   runs: its PLD bracket beside the full batch's bound.
/// - Objective releases beside anything: one FFT per direction of the
///   relation's pair, each release as the pair whose loss is its bound
///   c + A|Z| ([`crate::ObjectiveBound::pld`]; replace-one, the convex hull
///   of its group-privacy bound, [`crate::ObjectiveBound::replace_pld`]).
/// - With `settings.method` other than [`Method::Certified`]: one DP-SGD
///   run's faster upper bound, [0, ε], the fixed-grid PLD's or the RDP
///   accountant's ([`Method`]); another event is refused naming `method`.
///
/// `Ok(None)` when no finite ε is reached even by the upper bound's
/// discretisation at the finest grid (δ below what the composition resolves).
///
/// ```
/// use propdp_accountant::events::Event;
/// use propdp_accountant::bracket::BracketSettings;
/// use propdp_accountant::{epsilon, Neighbouring, ObjectiveBound};
/// let (n, s) = (Neighbouring::AddRemoveOne, BracketSettings::default());
/// let run = Event::dpsgd(1.0, 0.01, 1000);
/// let b = epsilon(&run, 1e-5, n, s).unwrap().unwrap();
/// assert!(b.lower <= b.upper && b.upper - b.lower <= 1e-3 * b.upper && b.reached);
/// // a logistic model (L = 1, β = 1/4) fitted by objective perturbation beside it
/// let release = Event::Objective(ObjectiveBound::new(1.0, 0.25, 1.0, 10.0, 4.0));
/// let both = epsilon(&Event::Composed(vec![run, release]), 1e-5, n, s).unwrap().unwrap();
/// assert!(both.lower > b.upper && both.lower <= both.upper && both.reached);
/// ```
pub fn epsilon(
    event: &Event,
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Result<Option<EpsilonBracket>, AccountantError> {
    check_delta(delta)?;
    settings.check()?;
    let parts = event.parts()?;
    if settings.method != Method::Certified {
        let (run, noise, sensitivity) = parts.lone_sampled_run().ok_or_else(|| {
            AccountantError::range(
                "method",
                format!("{:?}", settings.method),
                "Certified, for an event other than one DP-SGD run (a Poisson-sampled Gaussian, T-fold)",
            )
        })?;
        let upper = match settings.method {
            Method::Rdp => Some(rdp_epsilon(
                run.noise_multiplier,
                run.sample_rate,
                run.steps,
                delta,
                neighbouring,
            ))
            .filter(|e| e.is_finite()),
            _ => fixed_grid_epsilon(&run, noise, sensitivity, delta, neighbouring),
        };
        return Ok(upper.map(|upper| EpsilonBracket {
            lower: 0.0,
            upper,
            grid: 0.0,
            reached: false,
        }));
    }
    let exact = |e: f64| EpsilonBracket {
        lower: e,
        upper: e,
        grid: 0.0,
        reached: true,
    };
    if let Some((noise, sensitivity, steps)) = parts.lone_gaussian() {
        return Ok(gdp_to_eps(mu_dpgd(sensitivity, 1.0, steps as usize, noise, neighbouring), delta).map(exact));
    }
    // a bare objective event (a mechanism's): its curve in closed form; in a
    // composition, the composition's bracket (each end moved 10⁻¹² outwards)
    if let (Event::Objective(_), Some(release)) = (event, parts.lone_objective()) {
        let log_delta = |e: f64| match neighbouring {
            Neighbouring::AddRemoveOne => release.log_delta(e),
            Neighbouring::ReplaceOne => release.log_delta_replace(e),
        };
        return Ok(eps_at(log_delta, delta).map(exact));
    }
    if !parts.objectives.is_empty() {
        return Ok(bracket_of(&parts.segments, &parts.objectives, delta, neighbouring, settings, None)?.map(|b| b.0));
    }
    segments_epsilon(&parts.segments, delta, neighbouring, settings)
}

/// [`epsilon`] of checked DP-SGD segments alone (δ and the settings
/// checked): one run [`certified`]; a schedule's PLD bracket beside its
/// full batch's bound. Poisson sampling's figure (`crate::sampling`).
pub(crate) fn segments_epsilon(
    segments: &[Segment],
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Result<Option<EpsilonBracket>, AccountantError> {
    if let [run] = segments {
        return Ok(certified(run, delta, neighbouring, settings));
    }
    total_steps(segments, 0)?;
    // a schedule too wide for the point budget even at the coarsest grid
    // has no PLD bracket; its full batch's bound stands, as for one run
    let pld = bracket_of(segments, &[], delta, neighbouring, settings, None)
        .ok()
        .flatten()
        .map(|b| b.0);
    // subsampling never costs privacy: every segment at rate 1 is one
    // Gaussian mechanism, μ² = Σ T_i(s/z_i)², whose exact ε bounds the schedule
    let mu2: f64 = (segments.iter())
        .map(|s| s.steps as f64 * mu_dpgd(1.0, 1.0, 1, s.noise_multiplier, neighbouring).powi(2))
        .sum();
    let full = gdp_to_eps(mu2.sqrt(), delta);
    Ok(tightened(pld, full))
}

/// A PLD bracket (if any) with its upper end replaced by `other`, another
/// valid upper bound, where that is smaller (the lower end then no higher
/// than the upper); without a bracket, [0, `other`], not reached.
fn tightened(pld: Option<EpsilonBracket>, other: Option<f64>) -> Option<EpsilonBracket> {
    let upper = [pld.map(|b| b.upper), other].into_iter().flatten().reduce(f64::min)?;
    Some(match pld {
        Some(b) => EpsilonBracket {
            lower: b.lower.min(upper),
            upper,
            ..b
        },
        None => EpsilonBracket {
            lower: 0.0,
            upper,
            grid: 0.0,
            reached: false,
        },
    })
}

/// Whether [`epsilon`] takes `event` under `neighbouring` (at a δ of at
/// least 10⁻¹²·T, whose one-step tails are the default's), decided without
/// composing: the parts' ranges ([`Event::parts`]); DP-SGD segments alone
/// are always taken (where no grid fits, their full batch's bound stands);
/// beside objective releases, a part whose one-step PLD passes a quarter
/// of the point budget even at the coarsest grid is refused naming it.
/// What this cannot tell without composing: a ledger with objective
/// releases whose T-fold window passes the point budget at the coarsest
/// grid, which [`epsilon`] refuses naming the widest part.
///
/// ```
/// use propdp_accountant::events::Event;
/// use propdp_accountant::bracket::BracketSettings;
/// use propdp_accountant::{admits, Neighbouring, ObjectiveBound};
/// let tiny = Event::dpsgd(1e-6, 0.5, 10);
/// let (n, s) = (Neighbouring::AddRemoveOne, BracketSettings::default());
/// let two = Event::Composed(vec![tiny.clone(), Event::dpsgd(1.0, 0.5, 10)]);
/// assert!(admits(&two, n, s).is_ok());
/// let release = Event::Objective(ObjectiveBound::new(1.0, 0.25, 1.0, 10.0, 4.0));
/// let ledger = Event::Composed(vec![tiny, release]);
/// assert_eq!(admits(&ledger, n, s).unwrap_err().argument(), "segment[0].noise_multiplier");
/// ```
pub fn admits(event: &Event, neighbouring: Neighbouring, settings: BracketSettings) -> Result<(), AccountantError> {
    settings.check()?;
    let parts = event.parts()?;
    if parts.objectives.is_empty() {
        return Ok(());
    }
    let tail = crate::bracket::TAIL;
    first_grid(
        &parts.segments,
        &parts.objectives,
        neighbouring,
        settings.max_points,
        tail,
    )
    .map(|_| ())
}

/// The certified ε at `delta` of `run` under `neighbouring`: the PLD
/// bracket ([`epsilon`]) with its upper end replaced by the
/// full batch's exact Gaussian ε, or (where the bracket is not as narrow as
/// asked) the RDP bound, where those are smaller (both valid; the lower end
/// then no higher than the upper); at q = 1 the
/// exact Gaussian ε, [ε, ε]. `None` when no finite ε is reached.
pub(crate) fn certified(
    run: &Segment,
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Option<EpsilonBracket> {
    deciding(run, delta, neighbouring, settings, None).map(|b| b.0)
}

/// [`certified`], its refinement stopped early (the `bool`) once
/// the bracket lies on one side of `decide`.
pub(crate) fn deciding(
    run: &Segment,
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
    decide: Option<f64>,
) -> Option<(EpsilonBracket, bool)> {
    let (z, q, steps) = (run.noise_multiplier, run.sample_rate, run.steps);
    // subsampling never costs privacy: the full batch's exact ε bounds every q
    let full = gdp_to_eps(mu_dpgd(1.0, 1.0, steps as usize, z, neighbouring), delta);
    if q >= 1.0 {
        let exact = full.map(|e| EpsilonBracket {
            lower: e,
            upper: e,
            grid: 0.0,
            reached: true,
        });
        return exact.map(|b| (b, false));
    }
    let segment = [*run];
    let found = segment[0]
        .check("")
        .and_then(|()| bracket_of(&segment, &[], delta, neighbouring, settings, decide))
        .ok()
        .flatten();
    let (pld, early) = (found.map(|b| b.0), found.is_some_and(|b| b.1));
    // where the bracket was reached (or decided) the RDP bound cannot
    // improve the upper end by more than the width, or change the decision
    // (it is above the true ε): skip its cost
    let rdp = match pld {
        Some(b) if b.reached || early => None,
        _ => Some(rdp_epsilon(z, q, steps, delta, neighbouring)).filter(|e| e.is_finite()),
    };
    let other = [rdp, full].into_iter().flatten().reduce(f64::min);
    // no PLD bracket: the other bounds give an upper end only
    Some((tightened(pld, other)?, early))
}
