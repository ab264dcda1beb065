//! The refinement of a certified bracket: from a first grid sized to the
//! point budget, compose, read [ε⁻, ε⁺] off the curves, and shrink the grid
//! (tilting the FFT towards the last ε) until the bracket is as narrow as
//! asked or the point limit stops it; closed forms where no grid is needed.

use super::curves::{Curves, FIRST_GRID, Kept, OneStep, Profile, TAIL, distinct};
use super::settings::{BracketSettings, EpsilonBracket};
use crate::AccountantError;
use crate::events::{Segment, check_delta, total_steps};
use crate::gaussian::{eps_at, gdp_to_eps};
use crate::neighbouring::Neighbouring;
use crate::objective::ObjectiveBound;
use crate::pld::{Aim, Direction, MAX_REPLACE_LOSS};

/// The coarsest first grid (where a part's loss spans millions: ε is then
/// in the hundreds of thousands, and a grid of 4 still resolves it).
const COARSEST_GRID: f64 = 4.0;
/// The aliasing a tilted window may let in, relative to the δ the curves
/// are read at ([`crate::pld::Aim`]); it is charged to the lower end, where
/// the one-step tails (2·10⁻³δ at most) and β (from 10⁻⁶δ) stand beside it.
const ALIAS: f64 = 1e-5;

/// The certified ε at `delta` of checked events ([`crate::epsilon`]), and whether the
/// refinement stopped early at a bracket that `decide` lies outside (a
/// search asking only whether ε⁺ ≤ `decide` needs no finer grid then).
pub(crate) fn bracket_of(
    segments: &[Segment],
    objectives: &[ObjectiveBound],
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
    decide: Option<f64>,
) -> Result<Option<(EpsilonBracket, bool)>, AccountantError> {
    check_delta(delta)?;
    settings.check()?;
    if objectives.is_empty() && segments.iter().all(|s| s.sample_rate >= 1.0) {
        // full-batch steps are one Gaussian mechanism, μ² = Σ T_i(Δ/σ_i)²
        // (Δ = C add/remove, 2C replace): the closed form, no grid
        let shift = match neighbouring {
            Neighbouring::AddRemoveOne => 1.0,
            Neighbouring::ReplaceOne => 2.0,
        };
        let mu2: f64 = segments
            .iter()
            .map(|s| s.steps as f64 * (shift / s.noise_multiplier).powi(2))
            .sum();
        return Ok(gdp_to_eps(mu2.sqrt(), delta).map(|e| {
            let exact = EpsilonBracket {
                lower: e,
                upper: e,
                grid: 0.0,
                reached: true,
            };
            (exact, false)
        }));
    }
    if let [one] = segments
        && one.steps == 1
        && objectives.is_empty()
    {
        // one step: the closed form, no grid
        let exact = OneStep {
            z: one.noise_multiplier,
            q: one.sample_rate,
            neighbouring,
        };
        return Ok(exact.bracket(delta).map(|(lower, upper)| {
            let bracket = EpsilonBracket {
                lower,
                upper,
                grid: 0.0,
                reached: upper - lower <= settings.relative_width * upper,
            };
            (bracket, false)
        }));
    }
    if let ([], [release]) = (segments, objectives) {
        // one release alone: its own curve in closed form, no grid
        let log_delta = |e: f64| match neighbouring {
            Neighbouring::AddRemoveOne => release.log_delta(e),
            Neighbouring::ReplaceOne => release.log_delta_replace(e),
        };
        // the root (to 4 ulp), each end moved 10⁻¹² outwards for the rounding of the curve
        return Ok(eps_at(log_delta, delta).map(|e| {
            let exact = EpsilonBracket {
                lower: e * (1.0 - 1e-12),
                upper: e * (1.0 + 1e-12),
                grid: 0.0,
                reached: true,
            };
            (exact, false)
        }));
    }
    let total = total_steps(segments, objectives.len())?;
    let tail = TAIL.min(1e-3 * delta / total as f64);
    let mut grid = first_grid(segments, objectives, neighbouring, settings.max_points, tail)?;
    let mut last: Option<EpsilonBracket> = None;
    // a tilt guessed from the discrete curve alone, when the untilted bounds cannot reach δ
    let mut guess: Option<f64> = None;
    // whether this grid was already run again at a better tilt
    let mut reaimed = false;
    // a direction whose coarser composition stays far below δ over the last bracket
    let mut kept: Vec<Kept> = Vec::new();
    loop {
        // tilt the FFT towards the ε the last grid found, the window serving down to its lower end
        let aim = |eps: f64, least: f64| Aim {
            eps,
            least,
            alias: ALIAS * delta,
        };
        // (at the discrete curve's ε where it lies in the last bracket: with
        // the large exponents of a narrow composed loss, a tilt aimed at a
        // loose upper end amplifies the round-off at the true ε by e^{λ·gap})
        let near = match (last, guess) {
            (Some(b), Some(e)) => Some(aim(e.clamp(b.lower, b.upper), b.lower)),
            (Some(b), None) => Some(aim(b.upper, b.lower)),
            (None, g) => g.map(|e| aim(e, e)),
        };
        let aimed = near.map(|a| a.eps);
        let Some(curves) = Curves::refine(
            segments,
            objectives,
            neighbouring,
            grid,
            settings.max_points,
            near,
            tail,
            kept.clone(),
        ) else {
            // too many points: back off towards the last grid that fitted
            match last {
                Some(b) if grid < 0.8 * b.grid => {
                    grid = (grid * b.grid).sqrt();
                    continue;
                }
                Some(b) => return Ok(Some((EpsilonBracket { reached: false, ..b }, false))),
                // the first composition's window does not fit: a coarser grid, up to the coarsest
                None if 2.0 * grid <= COARSEST_GRID => {
                    grid *= 2.0;
                    continue;
                }
                None => {
                    return Err(too_wide(
                        segments,
                        objectives,
                        neighbouring,
                        grid,
                        tail,
                        settings.max_points,
                    ));
                }
            }
        };
        let Some(bracket) = curves.bracket(delta) else {
            // the upper curve does not reach δ at this grid (at a tiny δ the
            // untilted round-off bound exceeds it): tilt towards the ε the
            // discrete curve reads, once; then a finer grid may
            if near.is_none()
                && let Some(e) = curves.discrete_epsilon(delta)
            {
                guess = Some(e);
                continue;
            }
            return match last {
                Some(b) => Ok(Some((EpsilonBracket { reached: false, ..b }, false))),
                None if grid > 1e-5 => {
                    grid /= 2.0;
                    continue;
                }
                None => Ok(None),
            };
        };
        let bracket = EpsilonBracket {
            grid,
            reached: bracket.1 - bracket.0 <= settings.relative_width * bracket.1,
            lower: bracket.0,
            upper: bracket.1,
        };
        // a finer grid can only tighten either end; keep the tighter of each
        let bracket = match last {
            Some(b) => EpsilonBracket {
                lower: bracket.lower.max(b.lower),
                upper: bracket.upper.min(b.upper),
                ..bracket
            },
            None => bracket,
        };
        let width = bracket.upper - bracket.lower;
        let target = settings.relative_width * bracket.upper;
        if width <= target {
            let reached = EpsilonBracket {
                reached: true,
                ..bracket
            };
            return Ok(Some((reached, false)));
        }
        if decide.is_some_and(|d| bracket.upper <= d || bracket.lower > d) {
            return Ok(Some((bracket, true)));
        }
        // the one-step PLDs' rounding grows as Δ⁻² (`Curves::rounding`): no
        // grid finer than the one where it would move δ by a hundredth
        let rounding = curves.rounding(bracket.upper);
        let noisiest = grid * (rounding / (0.01 * delta)).sqrt();
        // the width goes as Δ^p: p = 2 where the second-order lower bound
        // holds it (the usual case), 1 where a Hoeffding one does; p is
        // measured from the last two grids, 2 until there are two
        let order = match last {
            Some(b) if b.upper - b.lower > width => ((b.upper - b.lower) / width).ln() / (b.grid / grid).ln(),
            Some(_) => 1.0,
            None => 2.0,
        }
        .clamp(1.0, 2.0);
        last = Some(bracket);
        guess = curves.discrete_epsilon(delta);
        // of two directions, one that cannot decide ε⁺ on a finer grid is kept
        kept = curves.kept(bracket.lower, delta);
        // aim at 80% of the target, at least halving, but no finer than the
        // window's point limit allows (its length is about proportional to 1/Δ)
        let finest = grid * curves.points() as f64 / settings.max_points as f64 * 1.25;
        let next = (grid * (0.8 * target / width).powf(1.0 / order).clamp(0.05, 0.5))
            .max(finest)
            .max(noisiest);
        if next > 0.9 * grid {
            // no finer grid: once more at this one if the tilt was aimed far
            // from where the discrete curve now puts ε (its round-off there
            // was amplified), then stop
            let off = match (aimed, guess) {
                (Some(a), Some(g)) => (a - g.clamp(bracket.lower, bracket.upper)).abs() > 0.1 * width,
                _ => false,
            };
            if off && !reaimed {
                reaimed = true;
                continue;
            }
            return Ok(last.map(|b| (EpsilonBracket { reached: false, ..b }, false)));
        }
        reaimed = false;
        grid = next;
    }
}

/// The first grid width: [`FIRST_GRID`], doubled until every part's
/// one-step PLD takes at most a quarter of the point budget (counted
/// before any is built), so that the composition's window has room. A
/// part that needs more than that even at Δ = [`COARSEST_GRID`] — an objective release of
/// huge A = LR/σ (its loss spans about A², or 2A√(2 log(1/tail)) under
/// add/remove-one, in units of Δ), or a tiny noise multiplier (about 1/(2z²))
/// — is refused naming it and what to change.
pub(crate) fn first_grid(
    segments: &[Segment],
    objectives: &[ObjectiveBound],
    neighbouring: Neighbouring,
    max_points: usize,
    tail: f64,
) -> Result<f64, AccountantError> {
    let budget = max_points / 4;
    let groups = distinct(segments);
    let fits = |grid: f64| -> Option<(String, f64)> {
        for (i, b) in objectives.iter().enumerate() {
            if b.points(grid, tail, neighbouring).is_none_or(|n| n > budget) {
                return Some((format!("objective[{i}].a"), b.a));
            }
        }
        for (m, _) in &groups {
            if Direction::of(neighbouring)
                .iter()
                .any(|&d| m.points(d, grid, tail) > budget)
            {
                let i = (segments.iter())
                    .position(|s| s.noise_multiplier == m.z && s.sample_rate == m.q)
                    .unwrap_or(0);
                let name = if segments.len() == 1 && objectives.is_empty() {
                    "noise_multiplier".to_string()
                } else {
                    format!("segment[{i}].noise_multiplier")
                };
                return Some((name, m.z));
            }
        }
        None
    };
    let mut grid = FIRST_GRID;
    while let Some((name, value)) = fits(grid) {
        grid *= 2.0;
        if grid > COARSEST_GRID {
            let allowed = if name.starts_with("objective") {
                format!(
                    "a = LR/σ small enough that the release's privacy-loss distribution fits in max_points/4 = \
                     {budget} grid points at grid width {COARSEST_GRID} (under replace-one, its group-privacy bound \
                     must also fall to the tail below a loss of {MAX_REPLACE_LOSS}); raise the noise σ, or lower the \
                     Lipschitz constant L"
                )
            } else {
                format!(
                    "a noise multiplier large enough that one step's privacy-loss distribution fits in max_points/4 \
                     = {budget} grid points at grid width {COARSEST_GRID}; raise the noise σ, or lower the clip C"
                )
            };
            return Err(AccountantError::range(&name, value, &allowed));
        }
    }
    Ok(grid)
}

/// The refusal of a composition whose window passes `max_points` even at
/// the coarsest grid (its privacy loss spans about T/(2z²), or T·A²/2 for
/// objective releases): named after the part whose one-step loss is widest
/// (the first of equals).
fn too_wide(
    segments: &[Segment],
    objectives: &[ObjectiveBound],
    neighbouring: Neighbouring,
    grid: f64,
    tail: f64,
    max_points: usize,
) -> AccountantError {
    let directions = Direction::of(neighbouring);
    let widest_segment = (segments.iter().enumerate())
        .map(|(i, s)| {
            let m = crate::pld::SubsampledGaussian {
                z: s.noise_multiplier,
                q: s.sample_rate,
            };
            let points = directions.iter().map(|&d| m.points(d, grid, tail)).max().unwrap_or(0);
            (points, i)
        })
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let widest_objective = (objectives.iter().enumerate())
        .map(|(i, b)| (b.points(grid, tail, neighbouring).unwrap_or(usize::MAX), i))
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let steps = total_steps(segments, objectives.len()).unwrap_or(u64::MAX);
    let allowed = format!(
        "a composition whose privacy-loss distribution fits in max_points = {max_points} grid points at grid \
         width {COARSEST_GRID} (its {steps} steps and releases span more); raise the noise, lower the clip C \
         or the Lipschitz constant, or compose fewer steps"
    );
    let objective_wider = match (widest_segment, widest_objective) {
        (Some(s), Some(o)) => o.0 >= s.0,
        (None, o) => o.is_some(),
        (Some(_), None) => false,
    };
    match (widest_segment, widest_objective) {
        (_, Some((_, i))) if objective_wider => {
            AccountantError::range(&format!("objective[{i}].a"), objectives[i].a, &allowed)
        }
        (Some((_, i)), _) => {
            let name = if segments.len() == 1 && objectives.is_empty() {
                "noise_multiplier".to_string()
            } else {
                format!("segment[{i}].noise_multiplier")
            };
            AccountantError::range(&name, segments[i].noise_multiplier, &allowed)
        }
        _ => AccountantError::range("max_points", max_points, &allowed),
    }
}
