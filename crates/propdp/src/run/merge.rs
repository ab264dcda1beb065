//! `propdp merge`: the shards of one sharded run (`propdp run --shard K/N`)
//! combined into the results a single run writes — every record and failure
//! of every unit exactly once, in the single run's order. Whole records are
//! copied byte for byte; a simulated point split into blocks of repetitions
//! is recomputed from its blocks' per-repetition values, in repetition order,
//! by the summary a single run uses ([`propdp_sim::summarise`]).
//!
//! Every line is checked as a resumed run checks its own
//! ([`Record::conforms`]: a unit of this config, its parameters, converged,
//! finite). Refused, naming the shard (and file and line), with nothing
//! written: a shard directory without a manifest or not a shard, shards of
//! different configs or of different N, a shard given twice, a missing
//! shard, a unit computed by two shards or by none, a line that is not a
//! record this config's run writes, and an output directory that already
//! holds results or files propdp did not write. The output directory is
//! locked while merging and its files appear whole (`RunDir::publish`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Context, Result};
use propdp_core::Config;
use propdp_core::record::{Failure, Provenance, Record, RecordKey};
use propdp_sim::{Repetition, summarise};

use super::provenance::Manifest;
use super::rundir::{RUN, RunDir, refuse};
use super::shard::{Shard, Unit, assign, costs, units};
use super::sweep::{expected, sim_settings, simulation_record};
use crate::error::Advice;

/// What a merge wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSummary {
    /// The output directory.
    pub dir: PathBuf,
    /// Records written.
    pub records: usize,
    /// Failures carried over (errors.jsonl).
    pub failed: usize,
}

/// One shard directory, read.
struct ShardDir {
    path: PathBuf,
    shard: Shard,
    /// (key, line, is a failure) of every complete line of results.jsonl and errors.jsonl.
    lines: Vec<(RecordKey, String, bool)>,
}

/// The complete lines of a JSON-lines file (a torn last line — an
/// interrupted write — is left out, and the file untouched), each parsed by
/// `key`, which checks the line and returns its key (or the field at fault).
fn keyed_lines(path: &Path, key: &dyn Fn(&str) -> Result<RecordKey, String>) -> Result<Vec<(RecordKey, String)>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let complete = text.rfind('\n').map_or("", |i| &text[..i]);
    complete
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(no, l)| match key(l) {
            Ok(k) => Ok((k, l.to_string())),
            Err(why) => refuse!(
                "{}:{}: {why}; not a line this config's run writes (edited or damaged?)",
                path.display(),
                no + 1
            ),
        })
        .collect()
}

/// The manifest of a shard directory, and its shard.
fn read_manifest(dir: &Path) -> Result<(Manifest, Shard)> {
    let manifest = super::rundir::read_manifest(dir)?;
    let Some(shard) = manifest.shard else {
        refuse!(
            "{} is not a shard (its manifest has no \"shard\"): run it with --shard K/N",
            dir.display()
        );
    };
    Ok((manifest, shard))
}

/// The manifests of a sharded run's directories, checked to be every shard
/// K/N of one config and N exactly once; returns the first manifest and the
/// shard of each directory.
pub(crate) fn check_shards(dirs: &[PathBuf]) -> Result<(Manifest, Vec<Shard>)> {
    let Some(first_dir) = dirs.first() else {
        refuse!("merge: no shard directories given");
    };
    let (first, s0) = read_manifest(first_dir)?;
    let mut shards = vec![s0];
    for d in &dirs[1..] {
        let (m, s) = read_manifest(d)?;
        if m.config_sha256 != first.config_sha256 {
            refuse!(
                "{} (shard {s}) was run from a different config (sha256 {} ≠ {} of {})",
                d.display(),
                m.config_sha256,
                first.config_sha256,
                first_dir.display()
            );
        }
        if s.count != s0.count {
            refuse!(
                "{} is shard {s} of a {}-way split, {} of a {}-way split",
                d.display(),
                s.count,
                first_dir.display(),
                s0.count
            );
        }
        if let Some(i) = shards.iter().position(|o| *o == s) {
            refuse!("shard {s} is given twice: {} and {}", dirs[i].display(), d.display());
        }
        shards.push(s);
    }
    let count = s0.count;
    if let Some(k) = (0..count).find(|k| !shards.iter().any(|s| s.index == *k)) {
        refuse!("shard {k}/{count} is missing (given: {} of {count})", shards.len());
    }
    Ok((first, shards))
}

/// The record of a simulated point from the lines of its repetition blocks
/// (in repetition order): the single run's record, recomputed; or, when a
/// block failed, that block's failure.
fn combine(
    cfg: &Config,
    provenance: &propdp_core::record::Provenance,
    blocks: &[(&Unit, &(String, bool))],
) -> Result<(String, bool)> {
    if let Some((_, failed)) = blocks.iter().find(|(_, (_, failure))| *failure) {
        return Ok((*failed).clone());
    }
    let (index, d) = (blocks[0].0.first, blocks[0].0.d.expect("simulated"));
    let mut runs = Vec::new();
    let mut n = 0;
    // the data file, labels column and test metrics the blocks name (checked
    // against one another on reading)
    let mut source = (None, None, None);
    for (unit, (line, _)) in blocks {
        let record: Record =
            serde_json::from_str(line).with_context(|| format!("point {index}, d = {d}: not a record"))?;
        let (start, end) = unit.reps.expect("a block");
        let sim = record.simulation.as_ref().filter(|s| s.reps == end - start);
        let Some((sim, block)) = sim.and_then(|s| Some((s, s.block.as_ref()?))) else {
            refuse!("point {index}, d = {d}: the block of repetitions {start}..{end} is malformed");
        };
        n = sim.n;
        source = (sim.data.clone(), sim.labels.clone(), sim.test_metrics);
        for j in 0..sim.reps {
            let per_step = block.per_step_per_rep.as_ref().map(|m| {
                let steps = m.values().next().map_or(0, |v| v[j].len());
                (0..steps)
                    .map(|t| m.iter().map(|(k, v)| (k.clone(), v[j][t])).collect())
                    .collect()
            });
            runs.push(Repetition {
                metrics: sim.per_rep.iter().map(|(k, v)| (k.clone(), v[j])).collect(),
                per_step,
                // the block's largest; the record keeps the largest over blocks
                grad_norm: record.solver.residual,
                iterations: record.solver.iterations,
            });
        }
    }
    let sim = cfg.raw.simulation.as_ref().expect("a simulated config");
    let points = cfg.sweep.points();
    let mut record = simulation_record(
        &points[index],
        index,
        summarise(n, d, &runs),
        &sim_settings(sim, d, cfg.covariance.as_ref()),
        provenance,
    );
    if let Some(s) = record.simulation.as_mut() {
        (s.data, s.labels, s.test_metrics) = source;
    }
    Ok((serde_json::to_string(&record)?, false))
}

/// Merge the shard directories `dirs` into `out` (results.jsonl,
/// errors.jsonl, manifest.json; the caller draws the figures).
pub fn merge(out: &Path, dirs: &[PathBuf]) -> crate::Result<MergeSummary> {
    let (manifest, shard_of) = check_shards(dirs)?;
    let count = shard_of[0].count;
    let cfg = Config::from_recorded(&manifest.config_text).context("the shards' config")?;
    let all = units(&cfg, count);
    let owner = assign(&costs(&all), count);
    // the unit of every record key
    let unit_of: BTreeMap<RecordKey, usize> = all
        .iter()
        .enumerate()
        .flat_map(|(u, unit)| unit.keys().map(move |k| (k, u)))
        .collect();
    let shards = read_shards(&cfg, &all, &unit_of, &manifest.provenance(), dirs, shard_of)?;
    let found = owned_lines(&shards, &unit_of, &owner, count)?;
    let merged = Manifest {
        shard: None,
        ..manifest
    };
    let ordered = in_run_order(&cfg, &all, &found, &merged.provenance())?;
    let mut dir = RunDir::create(out, RUN)?;
    let (mut lines, mut failures) = (String::new(), String::new());
    let (mut records, mut failed) = (0, 0);
    for (line, failure) in &ordered {
        if *failure {
            failures += line;
            failures.push('\n');
            failed += 1;
        } else {
            lines += line;
            lines.push('\n');
            records += 1;
        }
    }
    dir.publish(&lines, &failures, &merged)?;
    Ok(MergeSummary {
        dir: out.to_path_buf(),
        records,
        failed,
    })
}

/// Every shard's lines (records and failures), each checked to be one its
/// config writes ([`Record::conforms`]) and keyed.
fn read_shards(
    cfg: &Config,
    all: &[Unit],
    unit_of: &BTreeMap<RecordKey, usize>,
    provenance: &Provenance,
    dirs: &[PathBuf],
    shard_of: Vec<Shard>,
) -> Result<Vec<ShardDir>> {
    let points = cfg.sweep.points();
    // the recorded config names its data file but is not resolved (the file
    // may have moved; the manifests' hash of it is checked): every record
    // must name the path the first one names
    let data_path = std::cell::OnceCell::new();
    let record_key = |line: &str| -> Result<RecordKey, String> {
        let r: Record = serde_json::from_str(line).map_err(|e| format!("not a record ({e})"))?;
        let u = *unit_of
            .get(&r.key())
            .ok_or_else(|| format!("{} is not a unit of this config", r.key()))?;
        let mut want = expected(cfg, &all[u], r.index, provenance);
        if let Some(sim) = want.simulation.as_mut()
            && cfg.raw.simulation.as_ref().is_some_and(|s| s.data.is_some())
        {
            let named = r.simulation.as_ref().and_then(|s| s.data.clone());
            sim.data = data_path.get_or_init(|| named).clone();
        }
        r.conforms(&want)?;
        Ok(r.key())
    };
    let failure_key = |line: &str| -> Result<RecordKey, String> {
        let f: Failure = serde_json::from_str(line).map_err(|e| format!("not a failure ({e})"))?;
        if !unit_of.contains_key(&f.key()) {
            return Err(format!("{} is not a unit of this config", f.key()));
        }
        if f.params != points[f.index].params() {
            return Err(format!("params are not those of point {}", f.index));
        }
        Ok(f.key())
    };
    let mut shards = Vec::new();
    for (dir, shard) in dirs.iter().zip(shard_of) {
        let mut lines: Vec<(RecordKey, String, bool)> = keyed_lines(&dir.join("results.jsonl"), &record_key)?
            .into_iter()
            .map(|(k, l)| (k, l, false))
            .collect();
        lines.extend(
            keyed_lines(&dir.join("errors.jsonl"), &failure_key)?
                .into_iter()
                .map(|(k, l)| (k, l, true)),
        );
        shards.push(ShardDir {
            path: dir.clone(),
            shard,
            lines,
        });
    }
    Ok(shards)
}

/// Every key once, from the shard that owns its unit: (line, is a failure).
fn owned_lines(
    shards: &[ShardDir],
    unit_of: &BTreeMap<RecordKey, usize>,
    owner: &[usize],
    count: usize,
) -> Result<BTreeMap<RecordKey, (String, bool)>> {
    let mut found: BTreeMap<RecordKey, (String, bool)> = BTreeMap::new();
    for s in shards {
        for (k, line, failure) in &s.lines {
            let Some(&u) = unit_of.get(k) else {
                refuse!(
                    "{} (shard {}) holds {k}, which is not a unit of this config",
                    s.path.display(),
                    s.shard
                );
            };
            if owner[u] != s.shard.index {
                refuse!(
                    "{} (shard {}) holds {k}, which shard {}/{count} owns",
                    s.path.display(),
                    s.shard,
                    owner[u]
                );
            }
            if found.insert(*k, (line.clone(), *failure)).is_some() {
                refuse!("{} (shard {}) holds {k} twice", s.path.display(), s.shard);
            }
        }
    }
    if let Some((k, u)) = unit_of.iter().find(|(k, _)| !found.contains_key(k)) {
        refuse!(Advice::FinishWithResume;
            "{k} is in no shard (shard {}/{count} owns it: interrupted?): ",
            owner[*u]
        );
    }
    Ok(found)
}

/// The lines in the single run's order (the units' order), the blocks of
/// repetitions of one point combined into one record.
fn in_run_order(
    cfg: &Config,
    all: &[Unit],
    found: &BTreeMap<RecordKey, (String, bool)>,
    provenance: &Provenance,
) -> Result<Vec<(String, bool)>> {
    let mut ordered: Vec<(String, bool)> = Vec::new();
    let mut u = 0;
    while u < all.len() {
        if all[u].reps.is_none() {
            ordered.extend(all[u].keys().map(|k| found[&k].clone()));
            u += 1;
            continue;
        }
        let same = |v: &Unit| v.reps.is_some() && (v.first, v.d) == (all[u].first, all[u].d);
        let end = u + all[u..].iter().take_while(|v| same(v)).count();
        let blocks: Vec<(&Unit, &(String, bool))> = all[u..end]
            .iter()
            .map(|unit| (unit, &found[&unit.keys().next().expect("one key")]))
            .collect();
        ordered.push(combine(cfg, provenance, &blocks)?);
        u = end;
    }
    Ok(ordered)
}
