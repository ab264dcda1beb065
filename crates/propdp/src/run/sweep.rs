//! Running a config: every point of its sweep solved (warm-started from the
//! previous point within blocks of [`WARM_BLOCK`])
//! and, with a `[simulation]` table, simulated; each record appended to
//! `results.jsonl` as it finishes, failures to `errors.jsonl` with the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::Result;
use propdp_core::config::SimulationConfig;
use propdp_core::covariance::Covariance;
use propdp_core::record::{
    Failure, Provenance, Record, RecordKey, RepBlock, SimRecord, SolverReport, Source, TestMetrics,
};
use propdp_core::{Config, Model, Point};
use propdp_sim::real::RealData;
use propdp_sim::run::samples;
use propdp_sim::{Repetition, SimSettings, SimSummary, simulate_reps, summarise};
use propdp_theory::solve::{Solution, State, TheorySolver};
use std::sync::Arc;

use super::provenance::Manifest;
use super::rundir::{Existing, RUN, RunDir};
use super::shard::{Shard, Unit, WARM_BLOCK, owned};
use crate::progress::{Cancelled, Progress};

/// Points with more steps than this report their progress step by step.
const LONG_POINT_STEPS: usize = 100;

/// Which sources a run computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sources {
    /// Solve the theory at every point.
    pub theory: bool,
    /// Simulate every point (when the config has a `[simulation]` table).
    pub simulation: bool,
}

impl Default for Sources {
    fn default() -> Self {
        Sources {
            theory: true,
            simulation: true,
        }
    }
}

/// The default run directory of a config file: `results/<config stem>/`.
pub fn default_dir(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().to_string());
    PathBuf::from("results").join(stem)
}

/// A one-paragraph description of a config's sweep (what `propdp check` prints).
pub fn describe(label: &str, cfg: &Config) -> String {
    let mut s = format!("{label}: valid, {} points\n", cfg.sweep.points().len());
    for axis in &cfg.sweep.axes {
        let v = &axis.values;
        if v.len() == 1 {
            s += &format!("  {:<18} {}\n", axis.name, v[0]);
        } else {
            s += &format!(
                "  {:<18} {} values from {} to {}\n",
                axis.name,
                v.len(),
                v[0],
                v[v.len() - 1]
            );
        }
    }
    if let Some(c) = &cfg.covariance {
        let (lo, hi) = c.atoms().iter().fold((f64::INFINITY, 0.0f64), |(a, b), x| {
            (a.min(x.eigenvalue), b.max(x.eigenvalue))
        });
        s += &format!(
            "  covariance         {} atoms, eigenvalues {lo:.4}–{hi:.4} (mean 1; given with mean {:.4}), \
             teacher field ρ = {:.4}·s²{}\n",
            c.atoms().len(),
            c.scale(),
            c.teacher_field(),
            c.sha256()
                .map_or(String::new(), |h| format!(", file sha256 {}…", &h[..12]))
        );
    }
    if let Some(sim) = &cfg.raw.simulation {
        let rows = match &cfg.data {
            Some(d) => format!("rows of {}", d.path.display()),
            None => format!("{:?} design", sim.design),
        };
        s += &format!(
            "  simulation         d = {:?}, {} repetitions, {rows}, seed {}\n",
            sim.d, sim.reps, sim.seed
        );
    }
    s
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunSummary {
    /// The run directory.
    pub dir: PathBuf,
    /// Records written by this run.
    pub written: usize,
    /// Records already finished by an earlier run (kept).
    pub skipped: usize,
    /// Points that failed (in `errors.jsonl`).
    pub failed: usize,
}

impl RunSummary {
    /// The results file.
    pub fn results(&self) -> PathBuf {
        RunDir::results_path(&self.dir)
    }
}

/// Compute every missing record of `cfg`'s sweep into `dir`, appending each
/// as it finishes. `label` names the config in the manifest (its path).
///
/// ```no_run
/// use propdp::run::{load, run, Sources};
/// use propdp::rundir::Existing;
/// let cfg = load("configs/quick.toml".as_ref()).unwrap();
/// let s = run(&cfg, "configs/quick.toml", "results/quick".as_ref(), Existing::Resume, Sources::default(), &propdp::Silent).unwrap();
/// println!("{} records in {}", s.written + s.skipped, s.results().display());
/// ```
pub fn run(
    cfg: &Config,
    label: &str,
    dir: &Path,
    existing: Existing,
    sources: Sources,
    progress: &dyn Progress,
) -> crate::Result<RunSummary> {
    run_shard(cfg, label, dir, existing, sources, None, progress)
}

/// [`run`] restricted to shard K/N of the config's units of work
/// ([`super::shard`]); `None` runs them all. The manifest records the shard,
/// and `--resume` continues only the same shard.
pub fn run_shard(
    cfg: &Config,
    label: &str,
    dir: &Path,
    existing: Existing,
    sources: Sources,
    shard: Option<Shard>,
    progress: &dyn Progress,
) -> crate::Result<RunSummary> {
    if sources.simulation && !sources.theory && cfg.raw.simulation.is_none() {
        return Err(crate::error::Error::from(propdp_core::ConfigError::Missing {
            field: "simulation".into(),
            why: format!("--sim-only: {label} has no [simulation] table"),
        }));
    }
    let manifest = Manifest {
        shard,
        ..Manifest::of(label, cfg, cfg.sweep.points().len())
    };
    let units = owned(cfg, shard);
    let provenance = manifest.provenance();
    let unit_of: BTreeMap<RecordKey, &Unit> = units.iter().flat_map(|u| u.keys().map(move |k| (k, u))).collect();
    let check = |r: &Record| match unit_of.get(&r.key()) {
        Some(unit) => r.conforms(&expected(cfg, unit, r.index, &provenance)),
        None => Err(format!("{} is not a unit of this run", r.key())),
    };
    let (mut out, earlier) = RunDir::open(dir, RUN, &manifest, existing, &check)?;
    let done: BTreeSet<RecordKey> = earlier.records.iter().map(Record::key).collect();
    // failures of a source this run does not retry stay reported
    for f in earlier.failures.iter().filter(|f| match f.source {
        Source::Theory => !sources.theory,
        Source::Simulation => !sources.simulation,
    }) {
        out.write_failure(f)?;
    }
    let mut pass = Pass {
        out: &mut out,
        done: &done,
        manifest: &manifest,
        units,
        progress,
        summary: RunSummary {
            dir: dir.to_path_buf(),
            ..RunSummary::default()
        },
    };
    if sources.theory {
        pass.theory(cfg)?;
    }
    if sources.simulation
        && let Some(sim) = &cfg.raw.simulation
    {
        pass.simulation(cfg, sim)?;
    }
    let summary = pass.summary;
    out.sync()?;
    Ok(summary)
}

/// One run's state while it computes.
struct Pass<'a> {
    out: &'a mut RunDir,
    done: &'a BTreeSet<RecordKey>,
    manifest: &'a Manifest,
    /// The units of work this run computes (a shard's, or all).
    units: Vec<Unit>,
    progress: &'a dyn Progress,
    summary: RunSummary,
}

impl Pass<'_> {
    /// Write a finished record, or — when it failed or holds a number that is
    /// not finite — report it and write it to errors.jsonl. True when written.
    fn emit(&mut self, outcome: Result<Record, String>, failure: Failure, what: &str) -> Result<bool> {
        let checked = outcome.and_then(|r| match r.non_finite() {
            Some(path) => Err(format!("{path} is not a finite number; the point is not written")),
            None => Ok(r),
        });
        match checked {
            Ok(record) => {
                self.out.append(&record)?;
                self.summary.written += 1;
                Ok(true)
            }
            Err(error) => {
                self.progress.message(&format!("{what}: {error}"));
                self.out.write_failure(&Failure { error, ..failure })?;
                self.summary.failed += 1;
                Ok(false)
            }
        }
    }

    fn theory(&mut self, cfg: &Config) -> Result<()> {
        let points = cfg.sweep.points();
        let solver = TheorySolver::new(cfg.raw.solver).with_covariance(cfg.covariance.clone());
        let cfg_scrambles = cfg.raw.solver.dmft_scrambles;
        let mine: Vec<usize> = self
            .units
            .iter()
            .filter(|u| u.source == Source::Theory)
            .flat_map(|u| u.first..u.first + u.len)
            .collect();
        self.progress.begin("theory", mine.len() as u64);
        let mut warm: Option<State> = None;
        // a point of this block was kept from an earlier run: its state is not at hand
        let mut skipped = false;
        for index in mine {
            let point = &points[index];
            if self.progress.cancelled() {
                return Err(Cancelled.into());
            }
            if index % WARM_BLOCK == 0 {
                (warm, skipped) = (None, false); // a block solves the same in every run and shard
            }
            let key = RecordKey {
                source: Source::Theory,
                index,
                d: None,
                first_rep: None,
            };
            if self.done.contains(&key) {
                self.summary.skipped += 1;
                (warm, skipped) = (None, true);
                self.progress.advance(1);
                continue;
            }
            if skipped {
                // resumed: the warm start an uninterrupted run had, so the numbers are the same
                warm = replay_warm(&solver, &points[index - index % WARM_BLOCK..index], &|| {
                    self.progress.cancelled()
                });
                skipped = false;
            }
            let entry = failure(key, point, None);
            let provenance = self.manifest.provenance();
            let progress = self.progress;
            // the state evolution asks once per step and replicate: report every 1% of a long point
            let steps = point.algorithm().gradient_steps().map_or(0, |g| g.steps);
            let asked = std::sync::atomic::AtomicUsize::new(0);
            let per_percent = (steps * cfg_scrambles / 100).max(1);
            let check = || {
                let n = asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if steps > LONG_POINT_STEPS && n.is_multiple_of(per_percent) {
                    let done = (100 * n / (steps * cfg_scrambles)).min(100);
                    progress.detail(&format!("point {index}: {done}% of its {steps} steps"));
                }
                progress.cancelled()
            };
            let outcome = guarded(|| solver.solve_cancellable(point, warm, &check))
                .map(|sol| theory_record(point, index, sol, &provenance));
            if steps > LONG_POINT_STEPS {
                progress.detail("");
            }
            if progress.cancelled() {
                return Err(Cancelled.into());
            }
            let what = format!("theory, point {index}");
            warm = match outcome {
                Ok((record, state)) => self.emit(Ok(record), entry, &what)?.then_some(state),
                Err(e) => {
                    self.emit(Err(e), entry, &what)?;
                    None
                }
            };
            self.progress.advance(1);
        }
        self.progress.end();
        Ok(())
    }

    fn simulation(&mut self, cfg: &Config, sim: &SimulationConfig) -> Result<()> {
        let points = cfg.sweep.points();
        let mine: Vec<Unit> = self
            .units
            .iter()
            .filter(|u| u.source == Source::Simulation)
            .copied()
            .collect();
        let reps = |u: &Unit| u.reps.unwrap_or((0, sim.reps));
        let count: usize = mine.iter().map(|u| reps(u).1 - reps(u).0).sum();
        let real = load_real(cfg)?;
        self.progress.begin("simulation repetitions", count as u64);
        for unit in mine {
            let (index, d, (start, end)) = (unit.first, unit.d.expect("a simulated unit has d"), reps(&unit));
            let point = &points[index];
            if self.progress.cancelled() {
                return Err(Cancelled.into());
            }
            let key = RecordKey {
                source: Source::Simulation,
                index,
                d: Some(d),
                first_rep: unit.reps.map(|r| r.0),
            };
            if self.done.contains(&key) {
                self.summary.skipped += 1;
                self.progress.advance((end - start) as u64);
                continue;
            }
            let settings = sim_settings(sim, d, cfg.covariance.as_ref()).with_real(real.clone());
            let (progress, provenance) = (self.progress, self.manifest.provenance());
            let outcome =
                guarded(|| simulate_reps(point, &settings, index as u64, start..end, &|| progress.advance(1))).map(
                    |runs| {
                        let mut record = simulation_record(
                            point,
                            index,
                            summarise(samples(d, point.delta()), d, &runs),
                            &settings,
                            &provenance,
                        );
                        if let (Some(s), Some(_)) = (record.simulation.as_mut(), unit.reps) {
                            s.block = Some(RepBlock {
                                first: start,
                                per_step_per_rep: per_step_per_rep(&runs),
                            });
                        }
                        record
                    },
                );
            let entry = failure(key, point, unit.reps.map(|_| end - start));
            let mut what = format!("simulation, point {index}, d = {d}");
            if unit.reps.is_some() {
                what += &format!(", repetitions {start}..{end}");
            }
            self.emit(outcome, entry, &what)?;
        }
        self.progress.end();
        Ok(())
    }
}

/// The failure line of the unit `key` of `point` (its error filled in when
/// it fails); `reps`: a block's repetitions.
fn failure(key: RecordKey, point: &Point, reps: Option<usize>) -> Failure {
    Failure {
        block: key.first_rep.map(|first| propdp_core::record::BlockStart { first }),
        d: key.d,
        error: String::new(),
        index: key.index,
        params: point.params(),
        reps,
        source: key.source,
    }
}

/// The record a run of `cfg` writes for sweep point `index` of `unit`, but
/// for its numbers: what a record read back (on resume, from a shard) must
/// [`Record::conforms`] to.
pub(crate) fn expected(cfg: &Config, unit: &Unit, index: usize, provenance: &Provenance) -> Record {
    let point = &cfg.sweep.points()[index];
    let mut record = Record::new(unit.source, point, index, provenance);
    if let (Some(sim), Some(d)) = (&cfg.raw.simulation, unit.d) {
        let settings = sim_settings(sim, d, cfg.covariance.as_ref());
        record.simulation = Some(SimRecord {
            n: samples(d, point.delta()),
            d,
            reps: unit.reps.map_or(sim.reps, |(start, end)| end - start),
            seed: settings.seed,
            generator: propdp_sim::rng::GENERATOR.into(),
            design: settings.design,
            data: cfg.data.as_ref().map(|d| d.path.display().to_string()),
            labels: sim.data.as_ref().and_then(|d| d.labels.clone()),
            stderr: Default::default(),
            per_rep: Default::default(),
            block: unit.reps.map(|(first, _)| RepBlock {
                first,
                per_step_per_rep: None,
            }),
            // (the raw table: a merge reads the recorded config without resolving its file)
            test_metrics: Some(if sim.data.is_some() {
                TestMetrics::HeldOut
            } else {
                propdp_sim::run::test_metrics(point, &settings)
            }),
        });
    }
    record
}

/// The simulation settings of a config's `[simulation]` table at `d`, for
/// features of covariance `covariance` (none: isotropic).
pub fn sim_settings(sim: &SimulationConfig, d: usize, covariance: Option<&Covariance>) -> SimSettings {
    SimSettings {
        grad_tol: sim.grad_tol,
        ..SimSettings::new(d, sim.reps, sim.design, sim.prior, sim.seed)
    }
    .with_covariance(covariance.cloned())
}

/// Every check of a config that needs no solve beyond those of its
/// loading: the data file's rows against the config ([`real_data`]). What
/// `propdp check` (and Python's `check`) run before describing the sweep,
/// so a config they call valid is not refused by `run` for its data.
pub fn check(cfg: &Config) -> crate::Result<()> {
    real_data(cfg).map(|_| ())
}

/// The real rows of a config's `[simulation] data` (none without it), with
/// its covariance's teacher energies; refused, naming the field, when the
/// data cannot serve the config: `simulation.d` other than the data's
/// number of directions, or a δ needing as many rows as the data has.
pub fn real_data(cfg: &Config) -> crate::Result<Option<Arc<RealData>>> {
    load_real(cfg)
}

/// [`real_data`], its config errors at the root of the chain.
fn load_real(cfg: &Config) -> Result<Option<Arc<RealData>>> {
    let (Some(file), Some(sim)) = (&cfg.data, &cfg.raw.simulation) else {
        return Ok(None);
    };
    load_rows(file, sim, cfg.sweep.points(), cfg.covariance.as_ref()).map(Some)
}

/// The rows of a `[simulation] data` file read for `points` (a run's sweep,
/// or tune's problem points), with the covariance's teacher energies;
/// refused naming the field when they cannot serve them ([`real_data`]).
pub(crate) fn load_rows(
    file: &propdp_core::config::simulation::DataFile,
    sim: &SimulationConfig,
    points: &[propdp_core::Point],
    covariance: Option<&Covariance>,
) -> Result<Arc<RealData>> {
    let bad = |field: &str, value: String, allowed: String| {
        crate::error::Error::from(propdp_core::ConfigError::OutOfRange {
            field: field.into(),
            value: propdp_core::error::compact(value),
            allowed,
        })
    };
    let label = file.path.display().to_string();
    let (names, x) = propdp_sim::real::parse_data(&file.bytes, &file.path).map_err(|e| {
        bad(
            "simulation.data.file",
            label.clone(),
            format!("a numeric CSV with a header or a 2-D .npy array ({e})"),
        )
    })?;
    if let Some(c) = file.drop.iter().find(|c| !names.contains(c)) {
        return Err(bad(
            "simulation.data.drop",
            format!("{c:?}"),
            format!("a column of {label}: {}", names.join(", ")),
        ));
    }
    let own = match &file.labels {
        None => None,
        Some(col) => {
            let Some(j) = names.iter().position(|n| n == col) else {
                return Err(bad(
                    "simulation.data.labels",
                    format!("{col:?}"),
                    format!("a column of {label}: {}", names.join(", ")),
                ));
            };
            let standard = points.iter().all(|p| {
                p.algorithm()
                    .gradient_steps()
                    .is_none_or(|g| g.loss_variant == propdp_core::LossVariant::Standard)
            });
            let regression = points
                .iter()
                .all(|p| matches!(p.model(), Model::Huber { .. } | Model::LeastSquares { .. }));
            let logistic = points.iter().all(|p| matches!(p.model(), Model::Logistic));
            if !standard || !(regression || logistic) {
                return Err(bad(
                    "simulation.data.labels",
                    format!("{col:?}"),
                    "a model with its standard loss: regression (huber, least_squares), the labels fitted as \
                     y = xᵀθ + ε, or logistic, a two-valued label column"
                        .into(),
                ));
            }
            let y: Vec<f64> = x.column(j).iter().copied().collect();
            let labels = propdp_sim::real::own_labels(&y, logistic)
                .map_err(|e| bad("simulation.data.labels", format!("{col:?}"), e))?;
            Some((j, labels))
        }
    };
    let keep: Vec<usize> = (0..names.len())
        .filter(|&j| !file.drop.contains(&names[j]) && own.as_ref().is_none_or(|(l, _)| *l != j))
        .collect();
    let x = x.select_columns(&keep);
    let names: Vec<String> = keep.iter().map(|&j| names[j].clone()).collect();
    let centred = propdp_sim::real::Centred::new(&x, &names, file.standardize).map_err(|e| {
        bad(
            "simulation.data.file",
            label.clone(),
            format!("a data set with varying columns ({e})"),
        )
    })?;
    let rows = propdp_sim::real::RealRows::new(&centred);
    let (d, total) = (rows.d(), rows.rows());
    if sim.d != [d] {
        return Err(bad(
            "simulation.d",
            format!("{:?}", sim.d),
            format!("[{d}]: the number of directions of {label} (its columns, less constant and collinear ones)"),
        ));
    }
    if let Some(p) = points.iter().find(|p| samples(d, p.delta()) >= total) {
        return Err(bad(
            "problem.delta",
            p.delta().to_string(),
            format!(
                "δ > d/N = {d}/{total}: n = round(d/δ) = {} training rows must leave test rows of the {total} in {label}",
                samples(d, p.delta())
            ),
        ));
    }
    // two clusters' covariance is the within-class one, not the rows': their own labels need no teacher
    let covariance = covariance.filter(|_| points.iter().all(|p| p.two_cluster().is_none()));
    let real =
        RealData::new(rows, covariance).map_err(|e| bad("problem.covariance", "the spectrum given".into(), e))?;
    Ok(Arc::new(RealData {
        source: label,
        labels: own.map(|(_, y)| y),
        label_column: file.labels.clone(),
        ..real
    }))
}

/// DP-GD/DP-SGD: every metric at every step of every repetition (name →
/// `[repetition][step]`); `None` for fits.
fn per_step_per_rep(runs: &[Repetition]) -> Option<BTreeMap<String, Vec<Vec<f64>>>> {
    let first = runs.first()?.per_step.as_ref()?;
    Some(
        first[0]
            .keys()
            .map(|name| {
                let steps = runs
                    .iter()
                    .map(|r| {
                        r.per_step
                            .as_ref()
                            .expect("all reps are DP-GD")
                            .iter()
                            .map(|m| m[name])
                            .collect()
                    })
                    .collect();
                (name.clone(), steps)
            })
            .collect(),
    )
}

/// The state an uninterrupted run warm-starts the point after `before`
/// from: the static points of `before` (the block's earlier points, each
/// written by an earlier run) solved again in order, each from the last's
/// state; a DP-GD/DP-SGD point leaves no state to warm-start from
/// ([`State::Dmft`]), so it is not solved again. Only static points use a
/// warm start: a run of dynamics points replays nothing.
fn replay_warm(solver: &TheorySolver, before: &[Point], cancelled: &(dyn Fn() -> bool + Sync)) -> Option<State> {
    let mut warm = None;
    for p in before {
        warm = if p.algorithm().gradient_steps().is_some() {
            None
        } else {
            solver.solve_cancellable(p, warm, cancelled).ok().map(|s| s.state)
        };
    }
    warm
}

/// The theory record of `point` (sweep position `index`) from its solution,
/// and the solver state to warm-start the next point — what `run` writes.
pub fn theory_record(point: &Point, index: usize, sol: Solution, provenance: &Provenance) -> (Record, State) {
    let (per_step, per_step_stderr) = sol.per_step.map(|p| (p.mean, p.stderr)).unzip();
    let record = Record {
        metrics: sol.metrics,
        solver: sol.report,
        per_step,
        per_step_stderr,
        ..Record::new(Source::Theory, point, index, provenance)
    };
    (record, sol.state)
}

/// The simulation record of `point` (sweep position `index`) from its
/// summary under `settings` — what `run` writes.
pub fn simulation_record(
    point: &Point,
    index: usize,
    s: SimSummary,
    settings: &SimSettings,
    provenance: &Provenance,
) -> Record {
    let (per_step, per_step_stderr) = s.per_step.map(|p| (p.mean, p.stderr)).unzip();
    let per_step_at = per_step
        .as_ref()
        .and(point.algorithm().gradient_steps())
        .and_then(|g| propdp_sim::gd::evaluation_steps(g.steps));
    Record {
        metrics: s.mean,
        per_step,
        per_step_at,
        per_step_stderr,
        solver: SolverReport {
            converged: true,
            iterations: s.max_iterations,
            residual: s.max_grad_norm,
            ..Default::default()
        },
        simulation: Some(SimRecord {
            n: s.n,
            d: s.d,
            reps: s.reps,
            seed: settings.seed,
            generator: propdp_sim::rng::GENERATOR.into(),
            design: settings.design,
            data: settings.real.as_ref().map(|r| r.source.clone()),
            labels: settings.real.as_ref().and_then(|r| r.label_column.clone()),
            stderr: s.stderr,
            per_rep: s.per_rep,
            block: None,
            test_metrics: Some(propdp_sim::run::test_metrics(point, settings)),
        }),
        ..Record::new(Source::Simulation, point, index, provenance)
    }
}

/// Run a solver or a simulation, turning its error — or a panic, which is
/// a bug — into the message of a failed point, so the sweep goes on.
fn guarded<T, E: std::fmt::Display>(f: impl FnOnce() -> Result<T, E>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(format!("internal error (a bug; please report it): {msg}"))
        }
    }
}
