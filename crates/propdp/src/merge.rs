//! `propdp merge`: the shards of one sharded run (`propdp run --shard K/N`)
//! combined into the results a single run writes — every record and failure
//! of every unit exactly once, in the single run's order. Whole records are
//! copied byte for byte; a simulated point split into blocks of repetitions
//! is recomputed from its blocks' per-repetition values, in repetition order,
//! by the summary a single run uses ([`propdp_sim::summarise`]).
//!
//! Refused, naming the shard, with nothing written: a shard directory
//! without a manifest or not a shard, shards of different configs or of
//! different N, a shard given twice, a missing shard, a unit computed by two
//! shards or by none, and an output directory that already holds results.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use propdp_core::Config;
use propdp_core::record::{Record, Source};
use propdp_sim::{Repetition, summarise};

use crate::provenance::Manifest;
use crate::run::{sim_settings, simulation_record};
use crate::rundir::Key;
use crate::shard::{Shard, Unit, assign, costs, units};

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
    lines: Vec<(Key, String, bool)>,
}

/// The complete lines of a JSON-lines file (a torn last line — an
/// interrupted write — is left out, and the file untouched), each with its key.
fn keyed_lines(path: &Path) -> Result<Vec<(Key, String)>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let complete = text.rfind('\n').map_or("", |i| &text[..i]);
    complete
        .split('\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(no, l)| {
            let v: serde_json::Value =
                serde_json::from_str(l).with_context(|| format!("{}:{}: not a JSON line", path.display(), no + 1))?;
            let k = line_key(&v).with_context(|| format!("{}:{}: no source/index", path.display(), no + 1))?;
            Ok((k, l.to_string()))
        })
        .collect()
}

/// The manifest of a shard directory, and its shard.
fn read_manifest(dir: &Path) -> Result<(Manifest, Shard)> {
    let mpath = dir.join("manifest.json");
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(&mpath).with_context(|| format!("reading {}", mpath.display()))?)
            .with_context(|| format!("parsing {}", mpath.display()))?;
    let Some(shard) = manifest.shard else {
        bail!(
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
        bail!("merge: no shard directories given");
    };
    let (first, s0) = read_manifest(first_dir)?;
    let mut shards = vec![s0];
    for d in &dirs[1..] {
        let (m, s) = read_manifest(d)?;
        if m.config_sha256 != first.config_sha256 {
            bail!(
                "{} (shard {s}) was run from a different config (sha256 {} ≠ {} of {})",
                d.display(),
                m.config_sha256,
                first.config_sha256,
                first_dir.display()
            );
        }
        if s.count != s0.count {
            bail!(
                "{} is shard {s} of a {}-way split, {} of a {}-way split",
                d.display(),
                s.count,
                first_dir.display(),
                s0.count
            );
        }
        if let Some(i) = shards.iter().position(|o| *o == s) {
            bail!("shard {s} is given twice: {} and {}", dirs[i].display(), d.display());
        }
        shards.push(s);
    }
    let count = s0.count;
    if let Some(k) = (0..count).find(|k| !shards.iter().any(|s| s.index == *k)) {
        bail!("shard {k}/{count} is missing (given: {} of {count})", shards.len());
    }
    Ok((first, shards))
}

/// The key (source, index, d, first repetition of a block) of a record or failure line.
fn line_key(e: &serde_json::Value) -> Option<Key> {
    let source = match e["source"].as_str()? {
        "theory" => Source::Theory,
        "simulation" => Source::Simulation,
        _ => return None,
    };
    let d = e["d"].as_u64().map(|d| d as usize);
    let first_rep = e["block"]["first"].as_u64().map(|r| r as usize);
    Some((source, e["index"].as_u64()? as usize, d, first_rep))
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
    for (unit, (line, _)) in blocks {
        let record: Record =
            serde_json::from_str(line).with_context(|| format!("point {index}, d = {d}: not a record"))?;
        let (start, end) = unit.reps.expect("a block");
        let sim = record.simulation.as_ref().filter(|s| s.reps == end - start);
        let Some((sim, block)) = sim.and_then(|s| Some((s, s.block.as_ref()?))) else {
            bail!("point {index}, d = {d}: the block of repetitions {start}..{end} is malformed");
        };
        n = sim.n;
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
    let record = simulation_record(
        &points[index],
        index,
        summarise(n, d, &runs),
        &sim_settings(sim, d),
        provenance,
    );
    Ok((serde_json::to_string(&record)?, false))
}

/// Merge the shard directories `dirs` into `out` (results.jsonl,
/// errors.jsonl, manifest.json; the caller draws the figures).
pub fn merge(out: &Path, dirs: &[PathBuf]) -> Result<MergeSummary> {
    let (manifest, shard_of) = check_shards(dirs)?;
    let mut shards = Vec::new();
    for (dir, shard) in dirs.iter().zip(shard_of) {
        let mut lines: Vec<(Key, String, bool)> = keyed_lines(&dir.join("results.jsonl"))?
            .into_iter()
            .map(|(k, l)| (k, l, false))
            .collect();
        lines.extend(
            keyed_lines(&dir.join("errors.jsonl"))?
                .into_iter()
                .map(|(k, l)| (k, l, true)),
        );
        shards.push(ShardDir {
            path: dir.clone(),
            shard,
            lines,
        });
    }
    let count = shards[0].shard.count;
    let cfg = Config::from_toml_str(&manifest.config_text).context("the shards' config")?;
    let all = units(&cfg, count);
    let owner = assign(&costs(&all), count);
    // the unit of every record key
    let unit_of: BTreeMap<Key, usize> = all
        .iter()
        .enumerate()
        .flat_map(|(u, unit)| unit.keys().map(move |k| (k, u)))
        .collect();
    // every key once, from the shard that owns its unit
    let mut found: BTreeMap<Key, (String, bool)> = BTreeMap::new();
    for s in &shards {
        for (k, line, failure) in &s.lines {
            let Some(&u) = unit_of.get(k) else {
                bail!(
                    "{} (shard {}) holds {k:?}, which is not a unit of this config",
                    s.path.display(),
                    s.shard
                );
            };
            if owner[u] != s.shard.index {
                bail!(
                    "{} (shard {}) holds {k:?}, which shard {}/{count} owns",
                    s.path.display(),
                    s.shard,
                    owner[u]
                );
            }
            if found.insert(*k, (line.clone(), *failure)).is_some() {
                bail!("{} (shard {}) holds {k:?} twice", s.path.display(), s.shard);
            }
        }
    }
    if let Some((k, u)) = unit_of.iter().find(|(k, _)| !found.contains_key(k)) {
        bail!(
            "{k:?} is in no shard (shard {}/{count} owns it: interrupted? finish it with --resume)",
            owner[*u]
        );
    }
    // the single run's order (the units' order); blocks of one point combined
    let merged = Manifest {
        shard: None,
        ..manifest
    };
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
        ordered.push(combine(&cfg, &merged.provenance(), &blocks)?);
        u = end;
    }
    let results = out.join("results.jsonl");
    if results.exists() {
        bail!(
            "{} already exists: merge writes into a new directory",
            results.display()
        );
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
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
    std::fs::write(out.join("manifest.json"), serde_json::to_string_pretty(&merged)? + "\n")?;
    std::fs::write(out.join("errors.jsonl"), failures)?;
    std::fs::write(&results, lines).with_context(|| format!("writing {}", results.display()))?;
    Ok(MergeSummary {
        dir: out.to_path_buf(),
        records,
        failed,
    })
}
