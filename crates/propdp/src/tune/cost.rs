//! How long a search will take: each cell's estimated seconds of one core
//! (its search and its simulated check), the wall time on this machine,
//! the refusal of a search above `tune.max_hours`, the cells of a shard
//! (balanced by those estimates), and the estimate `propdp tune` prints
//! before searching ([`estimate`]).

use std::collections::BTreeSet;

use crate::error::Result;
use propdp_core::AlgorithmKind;

use super::descent;
use super::plan::{Method, Plan, check_metric};
use crate::run::{Shard, assign, simulation_cost};

/// What a tune config asks for, checked before any work: its cells and
/// the estimated time of the search ([`estimate`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TuneEstimate {
    /// Problem points (one per combination of the `[problem]` parameters).
    pub points: usize,
    /// Privacy budgets.
    pub budgets: usize,
    /// The algorithms compared.
    pub algorithms: Vec<AlgorithmKind>,
    /// Cells searched (of the shard, when given).
    pub cells: usize,
    /// Estimated wall seconds on this machine (the solves of every cell's
    /// search, one cell after another, and the simulated checks).
    pub wall_seconds: f64,
    /// The cores the search will use.
    pub cores: usize,
}

impl TuneEstimate {
    /// One line: the cells and the estimated wall time on this machine.
    pub fn text(&self) -> String {
        let names: Vec<&str> = self.algorithms.iter().map(|a| a.name()).collect();
        let time = crate::progress::duration(self.wall_seconds);
        format!(
            "estimate: {} cells ({} problem points × {} budgets × {}), about {time} on {} cores",
            self.cells,
            self.points,
            self.budgets,
            names.join(", "),
            self.cores
        )
    }
}

/// Check a tune config as [`tune`](crate::tune::tune()) does before
/// searching — its fields, the covariance and data files (relative to
/// `label`'s directory when it names the file), the metric against every
/// algorithm, `tune.max_hours` — and estimate the search (of shard
/// `shard`, when given).
pub fn estimate(text: &str, label: &str, shard: Option<Shard>) -> crate::Result<TuneEstimate> {
    let plan = Plan::new(text, label)?;
    if let Some(base) = plan.points.first() {
        for &kind in &plan.cfg.tune.algorithms {
            check_metric(base, kind, &plan.cfg.tune.metric)?;
        }
    }
    plan.check_cost(shard)?;
    let cells = plan.mine(shard).map_or(plan.cells.len(), |m| m.len());
    Ok(TuneEstimate {
        points: plan.points.len(),
        budgets: plan.budgets.len(),
        algorithms: plan.cfg.tune.algorithms.clone(),
        cells,
        wall_seconds: plan.wall_seconds(shard),
        cores: cores(),
    })
}

impl Plan {
    /// The cells of shard `shard` (every cell without one).
    pub(super) fn mine(&self, shard: Option<Shard>) -> Option<BTreeSet<usize>> {
        shard.map(|s| {
            let owner = assign(&self.costs(), s.count);
            (0..self.cells.len()).filter(|&c| owner[c] == s.index).collect()
        })
    }

    /// Refuse a search (of `shard`'s cells) whose estimated wall time on
    /// this machine ([`Plan::wall_seconds`]) exceeds `tune.max_hours`, with
    /// the estimate, whether the limit is the default, and how to raise it.
    pub(super) fn check_cost(&self, shard: Option<Shard>) -> Result<()> {
        let hours = self.wall_seconds(shard) / 3600.0;
        let limit = self.cfg.tune.max_hours()?;
        if hours > limit {
            let given = if self.cfg.tune.max_hours.is_some() {
                "as set"
            } else {
                "the default, as the config does not set it"
            };
            let cores = cores();
            return Err(propdp_core::error::ConfigError::OutOfRange {
                field: "tune.max_hours".into(),
                value: format!(
                    "{limit} ({given}; this search is estimated at {hours:.2} h of wall time on {cores} cores)"
                ),
                allowed: format!(
                    "at least the estimate: raise it, e.g. `max_hours = {}` in [tune], or use fewer candidates \
                     (tune.sample_rate, tune.epochs or tune.steps, tune.eta_fraction, tune.clip), a smaller \
                     solver.dmft_points, or shards (tune --shard K/N)",
                    (hours * 1.5).ceil()
                ),
            }
            .into());
        }
        Ok(())
    }

    /// Estimated wall seconds on this machine of the search (of `shard`'s
    /// cells): each cell's ([`Plan::cost_parts`]) through [`Plan::wall`].
    pub(super) fn wall_seconds(&self, shard: Option<Shard>) -> f64 {
        let parts = self.cost_parts();
        let wall = |c: usize| self.wall(parts[c].0) + self.wall_check(parts[c].1);
        match self.mine(shard) {
            Some(mine) => mine.iter().map(|&c| wall(c)).sum(),
            None => (0..parts.len()).map(wall).sum(),
        }
    }

    /// Wall seconds of `seconds` of one core of a cell's search: cells are
    /// searched one after another, and a DMFT solve runs its RQMC scrambles
    /// in parallel — the grid's [`descent::COARSE_SCRAMBLES`], which most
    /// of a search's time goes to — so it uses at most that many cores.
    pub(super) fn wall(&self, seconds: f64) -> f64 {
        seconds / cores().min(descent::COARSE_SCRAMBLES) as f64
    }

    /// Wall seconds of `seconds` of one core of a simulated check: its
    /// repetitions run in parallel on every core.
    pub(super) fn wall_check(&self, seconds: f64) -> f64 {
        seconds / cores().min(self.cfg.simulation.as_ref().map_or(1, |s| s.reps)) as f64
    }

    /// Estimated cost of every cell (seconds on one core): its search and
    /// its simulated check ([`Plan::cost_parts`]) together.
    pub(super) fn costs(&self) -> Vec<f64> {
        self.cost_parts().iter().map(|(search, check)| search + check).collect()
    }

    /// Estimated (search, check) seconds on one core of every cell: a few
    /// dozen static solves for λ alone; for DP-GD and DP-SGD the DMFT
    /// solves of the search ([`descent::Candidates::cost`]); and the
    /// simulated check of the optimum (at the longest horizon searched).
    pub(super) fn cost_parts(&self) -> Vec<(f64, f64)> {
        let t = &self.cfg.tune;
        self.cells
            .iter()
            .map(|&(p, _, kind)| {
                let search = match Method::of(kind) {
                    Method::Ridge(_) => 5e-3,
                    Method::Descent(kind) => {
                        self.candidates(kind)
                            .cost(self.cfg.solver, t.lambda_min, t.lambda_max, &self.points[p])
                            + self.strategies_cost(kind)
                    }
                };
                let check = self.cfg.simulation.as_ref().map_or(0.0, |sim| {
                    // the dearest horizon any sample rate may win with
                    let steps = match Method::of(kind) {
                        Method::Ridge(_) => None,
                        Method::Descent(kind) => self
                            .candidates(kind)
                            .sample_rates
                            .iter()
                            .filter_map(|&q| Some((*self.horizons.at(q).last()?, q)))
                            .max_by(|a, b| (a.0 as f64 * a.1).total_cmp(&(b.0 as f64 * b.1))),
                    };
                    simulation_cost(sim.reps, sim.d[0], self.points[p].delta(), steps)
                });
                (search, check)
            })
            .collect()
    }
}

impl Plan {
    /// Estimated seconds of one core of a DP-SGD cell's optimum rerun with
    /// correlated noise (`tune.strategies` beyond "identity"; 0 otherwise):
    /// a mechanism choice ([`crate::mechanism::choice_seconds`]) and the
    /// step size's search ([`crate::mechanism::step_search_seconds`]) at each
    /// sample rate's longest horizon, averaged over the rates (the optimum
    /// may end at any; the dearest, T = 2000 at q = 0.01 beside q = 0.25,
    /// put a 13 s search at 3 minutes).
    fn strategies_cost(&self, kind: descent::Kind) -> f64 {
        use propdp_core::config::tune::TuneStrategy;
        let strategies = &self.cfg.tune.strategies;
        if kind != descent::Kind::Dpsgd || strategies.iter().all(|s| *s == TuneStrategy::Identity) {
            return 0.0;
        }
        let atoms = self.covariance.as_ref().map_or(1, |c| c.atoms().len());
        let searches = crate::mechanism::Searches {
            optimized: strategies.contains(&TuneStrategy::Optimized),
            blt: strategies.contains(&TuneStrategy::Blt),
        };
        let choices: Vec<f64> = self
            .candidates(kind)
            .sample_rates
            .iter()
            .filter_map(|&q| Some((*self.horizons.at(q).last()?, q)))
            .map(|(steps, q)| {
                crate::mechanism::choice_seconds(&self.cfg.solver, q, steps, atoms, searches)
                    + crate::mechanism::step_search_seconds(&self.cfg.solver, q, steps, atoms)
            })
            .collect();
        choices.iter().sum::<f64>() / choices.len().max(1) as f64
    }
}

/// The cores this process may use.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}
