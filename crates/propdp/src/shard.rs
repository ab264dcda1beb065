//! Deterministic sharding of a run for job arrays and clusters: the units of
//! work of a config — blocks of [`WARM_BLOCK`] consecutive theory points (the
//! theory warm-starts only within a block, so a block solves the same
//! wherever it runs) and simulated (point, d) pairs — are split into N
//! shards by estimated cost (longest first, each to the least loaded shard;
//! ties by position), a partition that depends only on the config and N.
//! `propdp run --shard K/N` computes shard K; [`crate::merge`] combines the
//! shards into the records a single run writes.

use std::str::FromStr;

use anyhow::{Result, bail};
use propdp_core::Config;
use propdp_core::record::Source;

use crate::rundir::Key;

/// Theory points per warm-start block: the solver warm-starts from the
/// previous point only inside a block, in every run, so shards reproduce a
/// single run exactly.
pub const WARM_BLOCK: usize = 8;

/// Shard K of N (0 ≤ K < N).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// K, from 0.
    pub index: usize,
    /// N.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = anyhow::Error;

    /// "K/N" with 0 ≤ K < N.
    ///
    /// ```
    /// use propdp::shard::Shard;
    /// assert_eq!("1/3".parse::<Shard>().unwrap(), Shard { index: 1, count: 3 });
    /// assert!("3/3".parse::<Shard>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Shard> {
        let parsed = s
            .split_once('/')
            .and_then(|(k, n)| Some((k.trim().parse::<usize>().ok()?, n.trim().parse::<usize>().ok()?)));
        match parsed {
            Some((index, count)) if index < count => Ok(Shard { index, count }),
            _ => bail!("--shard {s:?}: expected K/N with 0 ≤ K < N, e.g. 0/4"),
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A unit of work: theory points `first..first + len`, or one simulated (point, d).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    /// Theory (a block of points) or simulation (one point at one d).
    pub source: Source,
    /// The first sweep index.
    pub first: usize,
    /// Points in the unit (1 for simulation).
    pub len: usize,
    /// Simulation: the number of features.
    pub d: Option<usize>,
    /// Estimated seconds on one core (only ratios matter).
    pub cost: f64,
}

/// Every unit of `cfg`, in the order a single run computes them.
pub fn units(cfg: &Config) -> Vec<Unit> {
    let points = cfg.sweep.points();
    let s = cfg.raw.solver;
    let theory_cost = |i: usize| match points[i].algorithm().gradient_steps() {
        // the DMFT: RQMC paths × T² memory terms
        Some(g) => 4e-9 * (s.dmft_points * s.dmft_scrambles) as f64 * (g.steps * g.steps) as f64,
        None => 1e-4,
    };
    let mut out: Vec<Unit> = (0..points.len())
        .step_by(WARM_BLOCK)
        .map(|first| {
            let len = WARM_BLOCK.min(points.len() - first);
            Unit {
                source: Source::Theory,
                first,
                len,
                d: None,
                cost: (first..first + len).map(theory_cost).sum(),
            }
        })
        .collect();
    if let Some(sim) = &cfg.raw.simulation {
        for (i, p) in points.iter().enumerate() {
            for &d in &sim.d {
                let n = (d as f64 / p.delta()).round();
                // a fit: ~30 passes over X; DP-GD/DP-SGD: two per step
                let passes = p.algorithm().gradient_steps().map_or(30.0, |g| 2.0 * g.steps as f64);
                out.push(Unit {
                    source: Source::Simulation,
                    first: i,
                    len: 1,
                    d: Some(d),
                    cost: 2e-9 * sim.reps as f64 * n * d as f64 * passes,
                });
            }
        }
    }
    out
}

/// The shard of every unit: longest first, each to the least loaded shard
/// (the lowest K on ties); deterministic in the units and N.
pub fn assign(units: &[Unit], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| units[b].cost.total_cmp(&units[a].cost).then(a.cmp(&b)));
    let mut load = vec![0.0f64; count];
    let mut owner = vec![0; units.len()];
    for u in order {
        let k = (0..count)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .expect("N ≥ 1");
        owner[u] = k;
        load[k] += units[u].cost;
    }
    owner
}

/// The record keys (source, index, d) of `units`.
pub fn owned_keys(units: &[Unit]) -> std::collections::BTreeSet<Key> {
    units
        .iter()
        .flat_map(|u| (u.first..u.first + u.len).map(move |i| (u.source, i, u.d)))
        .collect()
}

/// The units shard `shard` computes; all units without a shard.
pub fn owned(cfg: &Config, shard: Option<Shard>) -> Vec<Unit> {
    let all = units(cfg);
    match shard {
        None => all,
        Some(s) => {
            let owner = assign(&all, s.count);
            all.into_iter()
                .zip(owner)
                .filter(|(_, k)| *k == s.index)
                .map(|(u, _)| u)
                .collect()
        }
    }
}
