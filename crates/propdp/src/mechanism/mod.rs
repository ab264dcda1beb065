//! Which noise for this problem (`propdp mechanism`): DP-SGD's independent
//! noise against matrix-factorization noise (BandMF in G cyclic groups),
//! every candidate's σ calibrated to the same (ε, δ) by the certified
//! accountant, ranked by propdp's predicted metric at step T — not by the
//! error of noisy prefix sums that prefix-sum-optimal strategies minimise.
//!
//! The candidates, at the config's expected batch fraction q = B/n:
//! 1. DP-SGD: one group, independent noise, rate q.
//! 2. BandMF in G ∈ {2, 3, 4, 6, 8, …, 48, 64} groups (q·G ≤ 1, G ≤ T/2) at rate
//!    p = q·G inside the eligible group, with G bands of prefix-sum-optimal
//!    coefficients (jax_privacy's `optimize_banded_toeplitz`).
//! 3. For the best of 2, the G-band strategy whose coefficients minimise
//!    the predicted metric (Nelder–Mead from the
//!    prefix-sum-optimal coefficients, over every ratio up to 5 bands and a
//!    three-parameter warp beyond, on a coarse RQMC budget, then solved at
//!    the config's).
//! 4. A buffered linear Toeplitz (BLT) strategy of two buffers in the
//!    fixed order: G = ⌈1/q⌉ groups at rate 1 (a batch of at most q·n),
//!    its (θ, ω) minimising the predicted metric (Nelder–Mead from the BLT
//!    nearest the prefix-sum-optimal G-band strategy, coarse budget, σ
//!    calibrated at every point), then solved at the config's.
//!
//! With b ≤ G bands an example's participations meet disjoint rows of the
//! strategy, so candidates 1–3 are certified as Poisson DP-SGD over ⌈T/G⌉
//! rounds (Choquette-Choo et al. 2023, Thm. 4): σ depends on G, not on the
//! coefficients. A BLT's rows overlap: with no sampling (the fixed order)
//! the noisy stream is one Gaussian release of the strategy's sensitivity
//! (its min-sep sensitivity, Dvijotham et al. 2024), so its σ follows its
//! coefficients; sampled, it has no certified ε here.
//!
//! # References
//! - Choquette-Choo, McMahan, Rush, Thakurta (2023), *(Amplified) banded
//!   matrix factorization: a unified approach to private training*, arXiv 2306.08153.
//! - Choquette-Choo, Dvijotham, Pillutla, Ganesh, Steinke, Thakurta (2023),
//!   *Correlated noise provably beats independent noise for differentially
//!   private learning*, arXiv 2310.06771.
//! - Dvijotham, McMahan, Pillutla, Steinke, Thakurta (2024), *Efficient and
//!   near-optimal noise generation for streaming differential privacy*,
//!   arXiv 2404.16706 (BLTs).

mod candidate;
mod optimize;
mod step_size;

use propdp_core::config::SolverOptions;
use propdp_core::problem::{Budget, MAX_BANDS, Strategy, Target};
use propdp_core::{Config, ModelKind};
use propdp_theory::solve::TheorySolver;
use serde::Serialize;

use candidate::Problem;
pub use candidate::{BltParameters, Candidate, Origin, Participation};
pub use optimize::blt_start;
use step_size::STEP_SOLVES;
pub(crate) use step_size::search_step;

use crate::progress::Progress;

/// Coarse solves the coefficient search may spend.
pub const SEARCH_SOLVES: usize = 60;
/// Coarse solves the BLT search may spend.
pub const BLT_SOLVES: usize = 40;

/// The searches a comparison runs beside DP-SGD and the prefix-sum BandMF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Searches {
    /// The banded coefficients minimising the predicted metric.
    pub optimized: bool,
    /// The BLT in the fixed order minimising it.
    pub blt: bool,
}

impl Searches {
    /// Every search (`propdp mechanism`).
    pub const ALL: Searches = Searches {
        optimized: true,
        blt: true,
    };
}
/// The coarse RQMC budget of the search: points per scramble and scrambles.
const COARSE: (usize, usize) = (1024, 2);

/// The candidates, ranked, and the best.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    /// The candidate of least predicted metric.
    pub best: Candidate,
    /// Every candidate, in the order tried.
    pub candidates: Vec<Candidate>,
    /// The budget's relation.
    pub neighbouring: &'static str,
    /// The clip C (noise multipliers are σ/C), if any.
    pub clip: Option<f64>,
}

impl Choice {
    /// The choice as `propdp mechanism --json` prints it.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "best": self.best,
            "candidates": self.candidates,
            "neighbouring": self.neighbouring,
            "clip": self.clip,
            "jax_privacy": self.clip.map(|c| self.best.jax_privacy(c)),
        })
    }

    /// The choice as a table.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{:<12} {:>6} {:>8} {:>10} {:>10} {:>12} {:>10}  coefficients\n",
            "candidate", "groups", "rate", "sigma", "epsilon", self.best.metric, "stderr"
        );
        let list = |v: &[f64]| v.iter().map(|v| format!("{v:.4}")).collect::<Vec<String>>().join(", ");
        for c in &self.candidates {
            let coefs = match &c.blt {
                Some(b) => format!(
                    "buf_decay [{}], output_scale [{}]",
                    list(&b.buf_decay),
                    list(&b.output_scale)
                ),
                None => format!("[{}]", list(&c.coefficients)),
            };
            s += &format!(
                "{:<12} {:>6} {:>8.4} {:>10.5} {:>10.5} {:>12.6} {:>10.2e}  {}{}\n",
                c.origin.label(),
                c.groups,
                c.sample_rate,
                c.sigma,
                c.epsilon,
                c.predicted,
                c.stderr,
                coefs,
                if c == &self.best { "  ← best" } else { "" }
            );
        }
        if let Some(clip) = self.clip {
            let jax = self.best.jax_privacy(clip);
            let participation = match &self.best.blt {
                Some(_) => format!("min_sep = {}", self.best.groups),
                None => format!("num_bands = {}", self.best.groups),
            };
            s += &format!(
                "jax_privacy: noise_multiplier = {:.6}, sampling_prob = {}, {participation} (relation {})\n",
                jax["noise_multiplier"].as_f64().unwrap_or(f64::NAN),
                self.best.sample_rate,
                self.neighbouring
            );
        }
        s
    }
}

/// The config of `text` (read from `dir`) with its noise replaced by the
/// budget (`epsilon`, `delta_priv`): `sigma`, `epsilon`, `delta_priv` and
/// `rho` of `[algorithm]` give way to it, so a config may give none. Its
/// relation is the config's `neighbouring`, or add/remove-one — the
/// relation of amplified BandMF's guarantee, of jax_privacy and of
/// dp_accounting, so that the σ of every candidate is theirs.
pub fn load(text: &str, dir: Option<&std::path::Path>, epsilon: f64, delta_priv: f64) -> crate::Result<Config> {
    let mut table: toml::Table = text
        .parse()
        .map_err(|e| propdp_core::ConfigError::Parse(format!("{e}")))?;
    let algorithm = table
        .entry("algorithm")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let toml::Value::Table(algorithm) = algorithm else {
        return Err(propdp_core::ConfigError::Parse("[algorithm] is not a table".into()).into());
    };
    for key in ["sigma", "rho"] {
        algorithm.remove(key);
    }
    algorithm.insert("epsilon".into(), toml::Value::Float(epsilon));
    algorithm.insert("delta_priv".into(), toml::Value::Float(delta_priv));
    algorithm
        .entry("neighbouring")
        .or_insert_with(|| toml::Value::String("add_remove_one".into()));
    Ok(Config::from_toml_str_in(
        &toml::to_string(&table).map_err(|e| crate::Error::compute(e.to_string()))?,
        dir,
    )?)
}

/// The metric compared by default: the estimation error for regression,
/// the test classification error for logistic regression.
pub fn default_metric(model: ModelKind) -> &'static str {
    match model {
        ModelKind::Logistic => "test_class_err",
        ModelKind::Huber | ModelKind::LeastSquares => "est_err2",
    }
}

/// The groups tried, about √2 apart (2, 3, 4, 6, …, 48, 64): those with
/// q·G ≤ 1, G ≤ T/2 and G ≤ 64 (the strategy's bands).
const GROUPS: [usize; 11] = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

/// The groups tried for rate `q` and `steps` steps ([`GROUPS`]).
fn group_counts(q: f64, steps: usize) -> Vec<usize> {
    GROUPS
        .into_iter()
        .filter(|&g| q * g as f64 <= 1.0 && 2 * g <= steps && g <= MAX_BANDS)
        .collect()
}

/// The estimated seconds of one core a choice takes: each candidate's
/// solve at the config's RQMC budget and the search's coarse solves, by the
/// shards' cost model of a solve (`run::dmft_cost`).
pub fn cost_seconds(cfg: &Config) -> f64 {
    let Some((q, steps)) = rate_and_steps(cfg) else {
        return 0.0;
    };
    let atoms = cfg.covariance.as_ref().map_or(1, |c| c.atoms().len());
    let solver = &cfg.raw.solver;
    let refine = final_options(*solver).map_or(0.0, |_| {
        REFINE_PILOTS * crate::run::dmft_cost(solver, steps, q.min(1.0), atoms, false)
    });
    choice_seconds(solver, q, steps, atoms, Searches::ALL) + refine
}

/// A final prediction's cost in pilot solves: (1.2%/0.4%)², a typical
/// pilot's precision at step T in docs/correlated_noise.md's study against
/// [`FINAL_PRECISION`].
const REFINE_PILOTS: f64 = 9.0;

/// The DP-SGD rate q and steps T of a choice's config (its first point).
fn rate_and_steps(cfg: &Config) -> Option<(f64, usize)> {
    cfg.sweep
        .points()
        .first()
        .and_then(candidate::descent)
        .map(|g| (g.sample_rate, g.steps))
}

/// The estimated seconds of one core of [`compare`] at rate `q` and `steps`
/// steps with `atoms` atoms: each candidate's solve by `solver` and the
/// coarse solves of the `searches`.
pub(crate) fn choice_seconds(solver: &SolverOptions, q: f64, steps: usize, atoms: usize, searches: Searches) -> f64 {
    let coarse = coarse_options(*solver);
    let solve = |opts: &SolverOptions, rate: f64| crate::run::dmft_cost(opts, steps, rate.min(1.0), atoms, false);
    let groups = group_counts(q, steps);
    let candidates: f64 = std::iter::once(1)
        .chain(groups.iter().copied())
        .map(|g| solve(solver, q * g as f64))
        .sum();
    let search = groups.last().filter(|_| searches.optimized).map_or(0.0, |&g| {
        SEARCH_SOLVES as f64 * solve(&coarse, q * g as f64) + solve(solver, q * g as f64)
    });
    let blt = candidate::fixed_order(q, steps)
        .filter(|_| searches.blt)
        .map_or(0.0, |_| BLT_SOLVES as f64 * solve(&coarse, 1.0) + solve(solver, 1.0));
    candidates + search + blt
}

/// The estimated seconds of one core of [`search_step`] at rate `q` and
/// `steps` steps with `atoms` atoms: its typical solves (half its most,
/// rounded up) at a candidate's mean cost.
pub(crate) fn step_search_seconds(solver: &SolverOptions, q: f64, steps: usize, atoms: usize) -> f64 {
    let solve = |rate: f64| crate::run::dmft_cost(solver, steps, rate.min(1.0), atoms, false);
    let rates: Vec<f64> = std::iter::once(1)
        .chain(group_counts(q, steps))
        .map(|g| q * g as f64)
        .collect();
    let mean = rates.iter().map(|&r| solve(r)).sum::<f64>() / rates.len() as f64;
    STEP_SOLVES.div_ceil(2) as f64 * mean
}

/// The solver of the coefficient search: `opts` at the coarse RQMC budget.
pub(crate) fn coarse_solver(
    opts: SolverOptions,
    covariance: Option<propdp_core::covariance::Covariance>,
) -> TheorySolver {
    TheorySolver::new(coarse_options(opts)).with_covariance(covariance)
}

/// The coarse solver options of the coefficient search.
fn coarse_options(opts: SolverOptions) -> SolverOptions {
    SolverOptions {
        dmft_points: Some(COARSE.0),
        dmft_scrambles: COARSE.1,
        // fixed paths take no precision target
        precision: None,
        ..opts
    }
}

/// The solves a choice makes (for the cost estimate and the progress bar):
/// a calibration and a solve per candidate, then the searches', then the
/// final prediction's (typically one).
pub fn planned_solves(cfg: &Config) -> usize {
    let Some((q, steps)) = rate_and_steps(cfg) else {
        return 0;
    };
    let groups = group_counts(q, steps).len();
    let blt = candidate::fixed_order(q, steps).map_or(0, |_| BLT_SOLVES + 1);
    let refine = usize::from(final_options(cfg.raw.solver).is_some());
    1 + groups + usize::from(groups > 0) * (SEARCH_SOLVES + 1) + blt + refine
}

/// The best noise for the config's one DP-SGD point at (`epsilon`,
/// `delta_priv`) by the predicted `metric` (default [`default_metric`]).
/// The config's `[algorithm]` gives DP-SGD's λ, η, T, clip and q (the
/// expected batch fraction); its noise is replaced by the calibrated one,
/// under its budget's relation (replace-one when it has no budget; [`load`]
/// gives it one under add/remove-one).
pub fn choose(
    cfg: &Config,
    epsilon: f64,
    delta_priv: f64,
    metric: Option<&str>,
    progress: &dyn Progress,
) -> crate::Result<Choice> {
    let points = cfg.sweep.points();
    let base = match points {
        [one] => *one,
        _ => {
            let axis = cfg.sweep.swept_axes().first().map_or("problem".to_string(), |a| {
                let table = propdp_core::parameters::parameter(a).map_or("problem", |p| p.table);
                format!("{table}.{a}")
            });
            return Err(propdp_core::ConfigError::NotApplicable {
                field: axis,
                why: format!(
                    "the config sweeps {} points, and mechanism chooses the noise of one problem: give one value",
                    points.len()
                ),
            }
            .into());
        }
    };
    let neighbouring = base
        .budget()
        .map_or(propdp_core::accountant::Neighbouring::ReplaceOne, |b| b.neighbouring);
    for (name, value) in [("epsilon", epsilon), ("delta_priv", delta_priv)] {
        propdp_core::parameters::check(name, name, value)
            .map_err(|e| crate::error::Argument::new(name, format!(": {e}")))?;
    }
    let budget = Budget::new(Target::Approx { epsilon, delta_priv }, neighbouring);
    let metric = metric.unwrap_or(default_metric(base.model().kind()));
    let offered = propdp_core::metrics::offered(base.model().kind(), base.algorithm().kind());
    if !offered.contains(&metric) {
        return Err(crate::error::Argument::new(
            "metric",
            format!(
                " = {metric:?} is not predicted for this model: allowed {}",
                offered.join(", ")
            ),
        )
        .into());
    }
    let solver = TheorySolver::new(cfg.raw.solver).with_covariance(cfg.covariance.clone());
    progress.begin("mechanism", planned_solves(cfg) as u64);
    let coarse = coarse_solver(cfg.raw.solver, cfg.covariance.clone());
    let mut candidates = compare(base, budget, metric, &solver, &coarse, Searches::ALL, progress)?;
    if let Some(opts) = final_options(cfg.raw.solver) {
        let precise = TheorySolver::new(opts).with_covariance(cfg.covariance.clone());
        refine(
            &mut candidates,
            &Problem::new(base, budget, metric, &precise)?,
            progress,
        )?;
    }
    progress.end();
    let best = candidates[least(&candidates)].clone();
    let clip = candidate::descent(&base).map_or(f64::INFINITY, |g| g.clip);
    Ok(Choice {
        best,
        candidates,
        neighbouring: neighbouring.label(),
        clip: clip.is_finite().then_some(clip),
    })
}

/// The relative standard error of the returned prediction at step T
/// (`solver.precision`, unless the config's is smaller or it fixes the
/// paths): half a d = 1000, 40-repetition simulation's, 0.8–0.9% on
/// est_err2 at T in docs/correlated_noise.md's study, which the default
/// precision (2%, met at the pilot with 1.1–1.7% there) does not reach.
pub const FINAL_PRECISION: f64 = 0.004;

/// The solver options of the final predictions ([`FINAL_PRECISION`]);
/// None when `opts` fixes the paths (`dmft_points`).
fn final_options(opts: SolverOptions) -> Option<SolverOptions> {
    opts.dmft_points.is_none().then(|| SolverOptions {
        precision: Some(opts.precision.map_or(FINAL_PRECISION, |p| p.min(FINAL_PRECISION))),
        ..opts
    })
}

/// The index of the least predicted candidate.
fn least(candidates: &[Candidate]) -> usize {
    (0..candidates.len())
        .min_by(|&a, &b| candidates[a].predicted.total_cmp(&candidates[b].predicted))
        .expect("DP-SGD is always a candidate")
}

/// Solves the least predicted candidate again by `precise`'s solver, and
/// again while the least is one not yet solved so (a race: each solve
/// advances `progress` by one); the others keep their predictions.
fn refine(candidates: &mut [Candidate], precise: &Problem, progress: &dyn Progress) -> crate::Result<()> {
    let mut done = vec![false; candidates.len()];
    loop {
        let i = least(candidates);
        if done[i] {
            return Ok(());
        }
        if progress.cancelled() {
            return Err(crate::progress::Cancelled.into());
        }
        let c = &candidates[i];
        let noise = (c.sigma, c.epsilon);
        candidates[i] = precise.candidate(c.origin, c.participation(), c.strategy()?, noise)?;
        done[i] = true;
        progress.advance(1);
    }
}

/// The candidates for DP-SGD point `base` at `budget`, in order: DP-SGD,
/// BandMF in each of the groups tried with prefix-sum-optimal coefficients,
/// then as `searches` asks the coefficients searched for the best of those
/// and the BLT searched in the fixed order (by `coarse`,
/// [`coarse_solver`]). Each solve advances `progress` by one.
pub(crate) fn compare(
    base: propdp_core::Point,
    budget: Budget,
    metric: &str,
    solver: &TheorySolver,
    coarse: &TheorySolver,
    searches: Searches,
    progress: &dyn Progress,
) -> crate::Result<Vec<Candidate>> {
    let problem = Problem::new(base, budget, metric, solver)?;
    let (q, steps, _) = problem.dpsgd();
    let stop = || -> crate::Result<()> {
        match progress.cancelled() {
            true => Err(crate::progress::Cancelled.into()),
            false => Ok(()),
        }
    };
    let unreachable = |groups: usize| {
        crate::Error::from(crate::error::Argument::new(
            "epsilon",
            format!(" = {:?} is met by no noise with {groups} group(s)", budget.target),
        ))
    };
    let mut candidates = Vec::new();
    let noise = problem
        .calibrate(problem.amplified(1), Strategy::IDENTITY)?
        .ok_or_else(|| unreachable(1))?;
    candidates.push(problem.candidate(Origin::Dpsgd, problem.amplified(1), Strategy::IDENTITY, noise)?);
    progress.advance(1);
    let mut banded: Option<(Candidate, (f64, f64))> = None;
    for groups in group_counts(q, steps) {
        stop()?;
        let part = problem.amplified(groups);
        let Some(noise) = problem.calibrate(part, Strategy::IDENTITY)? else {
            progress.message(&format!("{groups} groups: no noise meets the budget"));
            progress.advance(1);
            continue;
        };
        let strategy = Strategy::prefix_sum_optimal(groups, steps)?;
        let c = problem.candidate(Origin::PrefixSum, part, strategy, noise)?;
        progress.advance(1);
        if banded.as_ref().is_none_or(|(b, _)| c.predicted < b.predicted) {
            banded = Some((c.clone(), noise));
        }
        candidates.push(c);
    }
    let tick = || progress.advance(1);
    if let Some((b, noise)) = banded.filter(|_| searches.optimized) {
        stop()?;
        let start = Strategy::prefix_sum_optimal(b.groups, steps)?;
        let part = b.participation();
        let fixed = optimize::Noise::Fixed(noise.0);
        let (strategy, _) = optimize::optimise(&problem, coarse, part, fixed, start, SEARCH_SOLVES, &tick)?;
        candidates.push(problem.candidate(Origin::Optimized, part, strategy, noise)?);
        progress.advance(1);
    }
    if let Some(part) = problem.fixed_order().filter(|_| searches.blt) {
        stop()?;
        let start = optimize::blt_start(part.groups, steps)?;
        let calibrated = optimize::Noise::Calibrated;
        let (strategy, _) = optimize::optimise(&problem, coarse, part, calibrated, start, BLT_SOLVES, &tick)?;
        match problem.calibrate(part, strategy)? {
            Some(noise) => candidates.push(problem.candidate(Origin::Blt, part, strategy, noise)?),
            None => progress.message(&format!("BLT in {} groups: no noise meets the budget", part.groups)),
        }
        progress.advance(1);
    }
    Ok(candidates)
}
