//! How long a search will take: each cell's estimated seconds of one core
//! (its search and its simulated check), the wall time on this machine,
//! and the refusal of a search above `tune.max_hours`.

use anyhow::Result;
use propdp_core::AlgorithmKind;

use super::{Plan, descent};
use crate::run::Shard;

impl Plan {
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
                let descent = matches!(kind, AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd);
                let search = if descent {
                    self.candidates(kind)
                        .cost(self.cfg.solver, t.lambda_min, t.lambda_max, &self.points[p])
                } else {
                    5e-3
                };
                let check = self.cfg.simulation.as_ref().map_or(0.0, |sim| {
                    // the dearest horizon any sample rate may win with
                    let longest = self
                        .candidates(kind)
                        .sample_rates
                        .iter()
                        .filter_map(|&q| Some((*self.horizons.at(q).last()?, q)))
                        .max_by(|a, b| (a.0 as f64 * a.1).total_cmp(&(b.0 as f64 * b.1)));
                    let steps = if descent { longest } else { None };
                    crate::run::simulation_cost(sim.reps, sim.d[0], self.points[p].delta(), steps)
                });
                (search, check)
            })
            .collect()
    }
}

/// The cores this process may use.
pub(super) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}
