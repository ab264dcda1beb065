//! The one entry point of the accountant: the certified ε of composed
//! [`Events`] at δ under a neighbouring relation ([`epsilon`], by the PLD
//! bracket of [`crate::bracket`]); and a single DP-SGD run's certified ε,
//! that bracket tightened by the run's other valid upper bounds (the RDP
//! accountant's and the full batch's), which calibration and Poisson
//! sampling read.

use crate::AccountantError;
use crate::bracket::{BracketSettings, EpsilonBracket, bracket_of};
use crate::dpsgd::rdp_epsilon;
use crate::events::{Events, Segment, check_delta};
use crate::gaussian::{gdp_to_eps, mu_dpgd};
use crate::neighbouring::Neighbouring;

/// The certified ε at `delta` (0 < δ < 1, else refused naming `delta`) of
/// `events` under `neighbouring`, composed in one FFT per direction of the
/// relation's pair (docs/privacy.md, "Certified brackets"; [`crate::bracket`]).
/// An objective release enters add/remove-one as the pair whose loss is its
/// bound c + A|Z| ([`crate::ObjectiveBound::pld`]), which dominates it;
/// replace-one as the pair whose curve is the convex hull of its
/// group-privacy bound ([`crate::ObjectiveBound::replace_pld`]), which
/// dominates it in both orders, beside the segments' replace-one pair.
/// `Ok(None)` when no finite ε is reached even by the upper bound's
/// discretisation at the finest grid (δ below what the composition resolves).
/// One DP-SGD run alone is the bracket with its upper end tightened by
/// the run's other valid upper bounds (the RDP accountant's, the full
/// batch's), the figure `propdp privacy` states for it — one code
/// path for every front end (the Python package's `accounting.epsilon`
/// read the bare bracket: ≤ 0.0231 where the command line stated 0.0104).
///
/// ```
/// use propdp_accountant::events::{Events, Segment};
/// use propdp_accountant::bracket::BracketSettings;
/// use propdp_accountant::{epsilon, Neighbouring, ObjectiveBound};
/// let (n, s) = (Neighbouring::AddRemoveOne, BracketSettings::default());
/// let run = Segment::new(1.0, 0.01, 1000).unwrap();
/// let b = epsilon(&Events::run(run).unwrap(), 1e-5, n, s).unwrap().unwrap();
/// assert!(b.lower <= b.upper && b.upper - b.lower <= 1e-3 * b.upper && b.reached);
/// // a logistic model (L = 1, β = 1/4) fitted by objective perturbation beside it
/// let release = [ObjectiveBound::new(1.0, 0.25, 1.0, 10.0, 4.0)];
/// let both = epsilon(&Events::ledger(&[run], &release).unwrap(), 1e-5, n, s).unwrap().unwrap();
/// assert!(both.lower > b.upper && both.lower <= both.upper && both.reached);
/// ```
pub fn epsilon(
    events: &Events,
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Result<Option<EpsilonBracket>, AccountantError> {
    if let ([run], []) = (events.segments(), events.objectives()) {
        check_delta(delta)?;
        settings.check()?;
        return Ok(certified(run, delta, neighbouring, settings));
    }
    Ok(bracket_of(
        events.segments(),
        events.objectives(),
        delta,
        neighbouring,
        settings,
        None,
    )?
    .map(|b| b.0))
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
    let upper = [pld.map(|b| b.upper), rdp, full]
        .into_iter()
        .flatten()
        .reduce(f64::min)?;
    let bracket = match pld {
        Some(b) => EpsilonBracket {
            lower: b.lower.min(upper),
            upper,
            ..b
        },
        // no PLD bracket: the other bounds give an upper end only
        None => EpsilonBracket {
            lower: 0.0,
            upper,
            grid: 0.0,
            reached: false,
        },
    };
    Some((bracket, early))
}
