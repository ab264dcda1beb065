//! Deterministic sharding of a run for job arrays and clusters: the units of
//! work of a config — blocks of [`WARM_BLOCK`] consecutive theory points (the
//! theory warm-starts only within a block, so a block solves the same
//! wherever it runs; DMFT points, never warm-started, are units alone), simulated (point, d) pairs, and, when one simulated
//! point costs more than a fraction 1/([`BLOCKS_PER_SHARD`]·N) of the
//! run, blocks of at least 2 of its repetitions — are split into N shards by
//! estimated cost (longest first, each to the least loaded shard; ties by
//! position), a partition that depends only on the config and N.
//! `propdp run --shard K/N` computes shard K; [`super::merge`] combines the
//! shards into the records a single run writes (the repetitions of a split
//! point draw from their own streams, so its statistics are recomputed
//! exactly).

use std::str::FromStr;

use crate::error::Result;
use propdp_core::Config;
use propdp_core::record::Source;

use propdp_core::record::RecordKey;

/// Theory points per warm-start block: the solver warm-starts from the
/// previous point only inside a block, in every run, so shards reproduce a
/// single run exactly.
pub const WARM_BLOCK: usize = 8;

/// Units per shard a split aims at: a simulated point costing more than
/// 1/(`BLOCKS_PER_SHARD`·N) of the run is split into repetition blocks of
/// about that cost, so the longest-first assignment can balance the shards.
pub const BLOCKS_PER_SHARD: usize = 4;

/// Shard K of N (0 ≤ K < N ≤ [`MAX_SHARDS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "ShardFields")]
pub struct Shard {
    /// K, from 0.
    pub index: usize,
    /// N.
    pub count: usize,
}

/// Most shards a run or search can be split into: far more than any
/// cluster runs at once, and few enough that assigning the units stays fast.
pub const MAX_SHARDS: usize = 1_000_000;

/// A shard as stored in a manifest, before its range is checked.
#[derive(serde::Deserialize)]
struct ShardFields {
    index: usize,
    count: usize,
}

impl TryFrom<ShardFields> for Shard {
    type Error = String;
    fn try_from(f: ShardFields) -> Result<Shard, String> {
        Shard::new(f.index, f.count)
    }
}

impl Shard {
    /// Shard `index` of `count`, or an error naming `--shard` and the range.
    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        if count == 0 || count > MAX_SHARDS {
            return Err(format!(
                "--shard {index}/{count}: N must be 1 ≤ N ≤ {MAX_SHARDS} (units of work are split across at most that many jobs)"
            ));
        }
        if index >= count {
            return Err(format!("--shard {index}/{count}: K must be 0 ≤ K < N"));
        }
        Ok(Shard { index, count })
    }
}

impl FromStr for Shard {
    type Err = crate::error::Error;

    /// "K/N" with 0 ≤ K < N ≤ [`MAX_SHARDS`].
    ///
    /// ```
    /// use propdp::shard::Shard;
    /// assert_eq!("1/3".parse::<Shard>().unwrap(), Shard { index: 1, count: 3 });
    /// assert!("3/3".parse::<Shard>().is_err());
    /// assert!("0/18446744073709551615".parse::<Shard>().unwrap_err().to_string().contains("--shard"));
    /// ```
    fn from_str(s: &str) -> Result<Shard> {
        let parsed = s
            .split_once('/')
            .and_then(|(k, n)| Some((k.trim().parse::<usize>().ok()?, n.trim().parse::<usize>().ok()?)));
        match parsed {
            Some((index, count)) => Shard::new(index, count).map_err(crate::error::Error::compute),
            None => Err(crate::error::Error::compute(format!(
                "--shard {s:?}: expected K/N with 0 ≤ K < N ≤ {MAX_SHARDS}, e.g. 0/4"
            ))),
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A unit of work: theory points `first..first + len`, or one simulated
/// (point, d), whole or a block of its repetitions.
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
    /// Simulation split into blocks: the repetitions `start..end` of this block.
    pub reps: Option<(usize, usize)>,
    /// Estimated seconds on one core (only ratios matter).
    pub cost: f64,
}

impl Unit {
    /// The record keys (source, index, d, first repetition of a block) the unit writes.
    pub fn keys(&self) -> impl Iterator<Item = RecordKey> + '_ {
        (self.first..self.first + self.len).map(|index| RecordKey {
            source: self.source,
            index,
            d: self.d,
            first_rep: self.reps.map(|r| r.0),
        })
    }
}

/// Every unit of `cfg` for a split into `count` shards, in the order a
/// single run computes them; simulated points are split into repetition
/// blocks only when `count` > 1.
///
/// ```
/// use propdp::shard::units;
/// let text = r#"
/// [problem]
/// model = "huber"
/// delta = [0.5, 1.0]
/// s2 = 1.0
/// huber_m = 1.0
/// noise = { law = "gaussian", sd = 0.5 }
/// [algorithm]
/// kind = "objective"
/// lambda = 1.0
/// sigma = 1.0
/// [simulation]
/// d = [400]
/// reps = 20
/// seed = 1
/// "#;
/// let cfg = propdp_core::Config::from_toml_str(text).unwrap();
/// assert_eq!(units(&cfg, 1).len(), 1 + 2, "one theory block, two simulated points");
/// let split = units(&cfg, 4);
/// assert!(split.len() > 8, "the simulated points are split into repetition blocks");
/// ```
pub fn units(cfg: &Config, count: usize) -> Vec<Unit> {
    let points = cfg.sweep.points();
    let s = cfg.raw.solver;
    let atoms = cfg.covariance.as_ref().map_or(1, |c| c.atoms().len());
    let theory_cost = |i: usize| match points[i].algorithm().gradient_steps() {
        // the DMFT: RQMC paths × T² memory terms
        Some(g) => dmft_cost(
            &s,
            g.steps,
            g.sample_rate,
            atoms,
            matches!(points[i].model(), propdp_core::Model::LeastSquares { .. }) && g.clip.is_infinite(),
        ),
        None => 1e-4,
    };
    // the DMFT starts from θ₀ = 0 at every point (no warm start): one point per unit
    let block = if points.iter().any(|p| p.algorithm().gradient_steps().is_some()) {
        1
    } else {
        WARM_BLOCK
    };
    let mut out: Vec<Unit> = (0..points.len())
        .step_by(block)
        .map(|first| {
            let len = block.min(points.len() - first);
            Unit {
                source: Source::Theory,
                first,
                len,
                d: None,
                reps: None,
                cost: (first..first + len).map(theory_cost).sum(),
            }
        })
        .collect();
    let Some(sim) = &cfg.raw.simulation else {
        return out;
    };
    let mut simulated = Vec::new();
    for (i, p) in points.iter().enumerate() {
        for &d in &sim.d {
            let steps = p.algorithm().gradient_steps().map(|g| (g.steps, g.sample_rate));
            simulated.push(Unit {
                source: Source::Simulation,
                first: i,
                len: 1,
                d: Some(d),
                reps: None,
                cost: simulation_cost(sim.reps, d, p.delta(), steps),
            });
        }
    }
    let total: f64 = out.iter().chain(&simulated).map(|u| u.cost).sum();
    let target = total / (BLOCKS_PER_SHARD * count) as f64;
    for u in simulated {
        let blocks = if count > 1 {
            ((u.cost / target).ceil() as usize).clamp(1, sim.reps / 2)
        } else {
            1
        };
        if blocks == 1 {
            out.push(u);
            continue;
        }
        let (r, b) = (sim.reps, blocks);
        out.extend((0..b).map(|j| {
            let (start, end) = (j * r / b, (j + 1) * r / b);
            Unit {
                reps: Some((start, end)),
                cost: u.cost * (end - start) as f64 / r as f64,
                ..u
            }
        }));
    }
    out
}

/// Estimated seconds of a DMFT point with `steps` steps at sample rate `q`
/// on one core, measured on this machine (docs/performance.md, "Cost
/// estimates"):
/// - unclipped least squares under `solver.dmft = "auto"` (`spectral`): the
///   exact spectral solution, O(T·K) with K quadrature nodes that settle
///   early — 1.4 µs per step (T = 10⁴ and 10⁵: 0.02 and 0.14 s), plus
///   0.25 s with a spectrum (the two-point measure's quadrature);
/// - the full-memory state evolution: 0.4e-8 s × RQMC paths × T² (T = 100
///   at the default budget: ~2.6 s; refitted in session 35: 0.6e-8 was
///   1.4–1.6× the CPU seconds measured at T = 40–100 with 4096 × 2 and
///   16384 × 4 paths; with a feature covariance of `atoms` > 1
///   atoms about 2.5× the isotropic one, measured at T ≈ 110–250 with
///   10–20 atoms: 12 s and 60–110 s);
/// - the long-horizon one: its own model
///   ([`propdp_theory::dynamics::long_horizon::cost_seconds`], at the
///   paths a precision's pilot takes,
///   [`propdp_theory::dynamics::long_horizon::precision::PILOT_POINTS`], which
///   meets the default precision on the measured points),
///   which was fitted at T = 3000 and over-estimates shorter horizons —
///   measured 1.2× at T = 10⁴, 1.9× at 2000, 3× at 400–500 — corrected by
///   [`long_horizon_correction`];
/// - and 1 ms per solve of fixed work.
pub(crate) fn dmft_cost(
    solver: &propdp_core::config::SolverOptions,
    steps: usize,
    q: f64,
    atoms: usize,
    spectral: bool,
) -> f64 {
    use propdp_core::config::{DMFT_POINTS, DmftMethod, LONG_HORIZON_FROM};
    use propdp_theory::dynamics::long_horizon::cost_seconds;
    use propdp_theory::dynamics::long_horizon::precision::PILOT_POINTS;
    const FIXED: f64 = 1e-3;
    if spectral && solver.dmft == DmftMethod::Auto {
        let spectrum = if atoms > 1 { 0.25 } else { 0.0 };
        return FIXED + spectrum + 1.4e-6 * steps as f64;
    }
    let long = solver.dmft == DmftMethod::LongHorizon || (solver.dmft == DmftMethod::Auto && steps > LONG_HORIZON_FROM);
    let scrambles = solver.dmft_scrambles;
    FIXED
        + if long {
            let points = solver.dmft_points.unwrap_or(PILOT_POINTS);
            cost_seconds(points, scrambles, steps, q, atoms) * long_horizon_correction(steps)
        } else {
            let spectrum = if atoms > 1 { 2.5 } else { 1.0 };
            spectrum * 0.4e-8 * (solver.dmft_points.unwrap_or(DMFT_POINTS) * scrambles) as f64 * (steps * steps) as f64
        }
}

/// The measured over the modelled seconds of a long-horizon solve of `steps`
/// steps (the model is fitted at T = 3000): the ratios measured at T = 400–500,
/// 2000 and 10⁴ (1/3, 1/1.9, 1/1.25, clipped Huber at q from 0.002 to 0.05)
/// follow 0.065·T^0.27, taken as 1 where that exceeds 1 (T ≳ 2·10⁴, not measured).
pub(crate) fn long_horizon_correction(steps: usize) -> f64 {
    (0.065 * (steps as f64).powf(0.27)).min(1.0)
}

/// Estimated seconds of the theory of the units `units` on this machine
/// (the state evolution's cost model for DP-GD/DP-SGD points; static points are milliseconds).
pub fn theory_seconds(units: &[Unit]) -> f64 {
    units
        .iter()
        .filter(|u| u.source == Source::Theory)
        .map(|u| u.cost)
        .sum()
}

/// Estimated seconds of `reps` simulated repetitions at d features and
/// aspect ratio δ (n = d/δ): a fit makes ~30 passes over X, DP-GD/DP-SGD
/// with `steps` = (T, q) two per step — or, beyond 1000 steps, q per step
/// and two per evaluated step ([`propdp_sim::gd::evaluation_steps`]).
pub(crate) fn simulation_cost(reps: usize, d: usize, delta: f64, steps: Option<(usize, f64)>) -> f64 {
    let passes = steps.map_or(30.0, |(t, q)| match propdp_sim::gd::evaluation_steps(t) {
        None => 2.0 * t as f64,
        // a thinned run: its batches, and a full pass at each evaluated step
        Some(at) => q * t as f64 + 2.0 * at.len() as f64,
    });
    2e-9 * reps as f64 * (d as f64 / delta).round() * d as f64 * passes
}

/// The shard of every unit of work, given their estimated costs: longest
/// first, each to the least loaded shard (the lowest K on ties);
/// deterministic in the costs and N.
///
/// ```
/// assert_eq!(propdp::shard::assign(&[1.0, 5.0, 2.0, 2.0], 2), vec![1, 0, 1, 1]);
/// ```
pub fn assign(costs: &[f64], count: usize) -> Vec<usize> {
    use std::cmp::Reverse;
    /// A shard's load, ordered by load then index (a min-heap through `Reverse`).
    #[derive(PartialEq)]
    struct Load(f64, usize);
    impl Eq for Load {}
    impl PartialOrd for Load {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Load {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
        }
    }
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    // shards beyond the number of units stay empty: an empty shard of lower
    // index is always among the least loaded
    let used = count.min(costs.len()).max(1);
    let mut heap: std::collections::BinaryHeap<Reverse<Load>> = (0..used).map(|k| Reverse(Load(0.0, k))).collect();
    let mut owner = vec![0; costs.len()];
    for u in order {
        let Reverse(Load(load, k)) = heap.pop().expect("N ≥ 1");
        owner[u] = k;
        heap.push(Reverse(Load(load + costs[u], k)));
    }
    owner
}

/// The estimated cost of every unit.
pub fn costs(units: &[Unit]) -> Vec<f64> {
    units.iter().map(|u| u.cost).collect()
}

/// The units shard `shard` computes; all units without a shard.
pub fn owned(cfg: &Config, shard: Option<Shard>) -> Vec<Unit> {
    match shard {
        None => units(cfg, 1),
        Some(s) => {
            let all = units(cfg, s.count);
            let owner = assign(&costs(&all), s.count);
            all.into_iter()
                .zip(owner)
                .filter(|(_, k)| *k == s.index)
                .map(|(u, _)| u)
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 points of a d = 4000, 100-repetition study with theory.
    fn study() -> Config {
        Config::from_toml_str(
            r#"
[problem]
model = "huber"
delta = { from = 0.25, to = 4.0, steps = 16, scale = "log" }
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "objective"
lambda = 1.0
sigma = 1.0
[simulation]
d = [4000]
reps = 100
seed = 1
"#,
        )
        .unwrap()
    }

    #[test]
    fn blocks_cover_every_repetition_once_and_balance_64_shards() {
        let cfg = study();
        assert!(
            units(&cfg, 1).iter().all(|u| u.reps.is_none()),
            "a single run is not split"
        );
        let all = units(&cfg, 64);
        for i in 0..16 {
            let mut blocks: Vec<(usize, usize)> = all
                .iter()
                .filter(|u| u.source == Source::Simulation && u.first == i)
                .map(|u| u.reps.expect("split at N = 64"))
                .collect();
            blocks.sort();
            assert_eq!(blocks[0].0, 0);
            assert_eq!(blocks.last().unwrap().1, 100);
            assert!(blocks.windows(2).all(|w| w[0].1 == w[1].0), "point {i}: {blocks:?}");
            assert!(blocks.iter().all(|b| b.1 - b.0 >= 2), "point {i}: {blocks:?}");
        }
        let owner = assign(&costs(&all), 64);
        let mut load = [0.0; 64];
        for (u, k) in all.iter().zip(&owner) {
            load[*k] += u.cost;
        }
        let (max, mean) = (
            load.iter().cloned().fold(0.0, f64::max),
            load.iter().sum::<f64>() / 64.0,
        );
        assert!(
            max < 1.35 * mean,
            "the most loaded of 64 shards has {max} against a mean of {mean}"
        );
        // without blocks, the 16 simulated points would load 16 of the 64 shards
        let whole = units(&cfg, 1);
        let mut whole_load = [0.0; 64];
        for (u, k) in whole.iter().zip(assign(&costs(&whole), 64)) {
            whole_load[k] += u.cost;
        }
        let whole_max = whole_load.iter().cloned().fold(0.0, f64::max);
        assert!(whole_max > 3.0 * max, "blocks: {max}, whole points: {whole_max}");
    }
}
