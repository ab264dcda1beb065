//! The step size of a correlated-noise run searched again (`propdp tune`
//! with `tune.strategies`): at the run's strategy, participation and σ —
//! its guarantee does not depend on η — the predicted metric over η on a
//! ladder of factor √2 from the DP-SGD optimum's η, moving up (or, when
//! the first step up does not improve, down) while it improves, at most
//! [`STEP_MOVES`] moves; a failed prediction (an η past the mean step's
//! stability limit) ends a direction.
//!
//! The strategy stays the one chosen at DP-SGD's η: the coefficients'
//! search is not repeated at the new η.

use propdp_core::Point;
use propdp_core::problem::Budget;
use propdp_theory::solve::TheorySolver;

use super::candidate::{Candidate, Problem};
use crate::progress::Progress;

/// The ratio of neighbouring step sizes tried.
const STEP_FACTOR: f64 = std::f64::consts::SQRT_2;

/// The most moves in one direction.
pub const STEP_MOVES: usize = 4;

/// The most solves a search makes: one step up that does not improve, then
/// every move down.
pub const STEP_SOLVES: usize = STEP_MOVES + 1;

/// `run` (a candidate for DP-SGD point `base` at `budget`) at the step size
/// of least predicted `metric` on the ladder, by `solver`; each solve
/// advances `progress` by one.
pub(crate) fn search_step(
    base: Point,
    budget: Budget,
    metric: &str,
    solver: &TheorySolver,
    run: &Candidate,
    progress: &dyn Progress,
) -> crate::Result<Candidate> {
    let problem = Problem::new(base, budget, metric, solver)?;
    let (strategy, part, noise) = (run.strategy()?, run.participation(), (run.sigma, run.epsilon));
    let start = run.eta.unwrap_or(problem.eta());
    let mut best = run.clone();
    for factor in [STEP_FACTOR, 1.0 / STEP_FACTOR] {
        let mut eta = start;
        for _ in 0..STEP_MOVES {
            if progress.cancelled() {
                return Err(crate::progress::Cancelled.into());
            }
            eta *= factor;
            let tried = problem.at_eta(eta).candidate(run.origin, part, strategy, noise);
            progress.advance(1);
            match tried {
                Ok(c) if c.predicted < best.predicted => best = c,
                _ => break,
            }
        }
        if best.eta != Some(start) {
            break;
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::{Searches, compare, load};

    /// A step far below the best: the search climbs the ladder and predicts less.
    #[test]
    fn a_small_step_is_searched_upward() {
        let text = r#"
[problem]
model = "least_squares"
delta = 0.5
s2 = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "dpsgd"
lambda = 0.05
eta = 0.02
steps = 160
sample_rate = 0.1
clip = 1.0
[solver]
dmft_points = 1024
dmft_scrambles = 2
"#;
        let cfg = load(text, None, 4.0, 1e-5).unwrap();
        let base = cfg.sweep.points()[0];
        let budget = base.budget().unwrap();
        let solver = TheorySolver::new(cfg.raw.solver);
        let none = Searches {
            optimized: false,
            blt: false,
        };
        let runs = compare(base, budget, "est_err2", &solver, &solver, none, &crate::Silent).unwrap();
        let run = runs.last().unwrap();
        let moved = search_step(base, budget, "est_err2", &solver, run, &crate::Silent).unwrap();
        let eta = moved.eta.unwrap();
        assert!(eta > 0.02 * 1.4, "{moved:?}");
        assert!(moved.predicted < run.predicted, "{moved:?} against {run:?}");
        assert_eq!(
            (moved.sigma, moved.groups, &moved.coefficients),
            (run.sigma, run.groups, &run.coefficients)
        );
    }
}
