//! Merging the directories of a sharded search (`propdp tune --shard K/N`)
//! into one, as a single search writes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{Context, Error, ErrorKind};

use super::best::Best;
use super::plan::Plan;
use super::report::TuneOutcome;
use super::search::{COMPLETE, Complete, Scope, search};
use super::types::CellKey;
use crate::progress::Progress;
use crate::run::{Manifest, RunDir, Shard, TUNE, check_shards};

/// Why the shards given to merge cannot be merged as they are
/// ([`ErrorKind::Directory`]): nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// The shard has no record of having finished.
    #[error(
        "{dir} (shard {shard}) has not finished (no {COMPLETE}): finish it with propdp tune --shard {shard} --resume"
    )]
    Unfinished {
        /// The shard's directory.
        dir: String,
        /// The shard.
        shard: Shard,
    },
    /// An optimum the shard's plan does not own or describe.
    #[error("{at}: {why}")]
    Foreign {
        /// File, line and shard.
        at: String,
        /// What does not match.
        why: String,
    },
    /// A cell's optimum appears twice.
    #[error("{at}: cell {cell} is written twice")]
    Twice {
        /// File, line and shard.
        at: String,
        /// The cell.
        cell: usize,
    },
    /// A cell both found and listed unreachable, or neither.
    #[error("{dir} (shard {shard}): {cell} is {state} (edited or damaged?): search the shard again with --overwrite")]
    Cell {
        /// The shard's directory.
        dir: String,
        /// The shard.
        shard: Shard,
        /// The cell, in words.
        cell: String,
        /// Found and listed unreachable, or neither.
        state: String,
    },
    /// The record of a finished shard counts other cells than its plan's.
    #[error("{path} does not describe shard {shard}'s {cells} cells (edited or damaged?)")]
    Complete {
        /// The record of the finished shard.
        path: String,
        /// The shard.
        shard: Shard,
        /// The cells its plan gives it.
        cells: usize,
    },
}

impl From<ShardError> for Error {
    fn from(e: ShardError) -> Self {
        Error::new(ErrorKind::Directory, None, e)
    }
}

/// Merge the directories of a sharded search (`propdp tune --shard K/N`,
/// every K of one config and N, each complete) into `out`: the optimums of
/// every cell in search order (lines copied byte for byte: the single
/// search's tune.jsonl), then the non-private references, table and figures
/// as a single search draws them. Refused, naming the shard, with nothing
/// written: what [`crate::run::merge::merge`] refuses, an unfinished shard, and
/// an optimum of a cell another shard owns.
pub fn merge(out: &Path, dirs: &[PathBuf], progress: &dyn Progress) -> crate::Result<TuneOutcome> {
    let (manifest, shards) = check_shards(dirs)?;
    let plan = Plan::new(&manifest.config_text, &manifest.config_path)?;
    let prov = manifest.provenance();
    let cell_of = plan.cell_of();
    let mut lines: BTreeMap<usize, String> = BTreeMap::new();
    let mut done: BTreeMap<CellKey, Best> = BTreeMap::new();
    for (dir, &shard) in dirs.iter().zip(&shards) {
        let complete_path = dir.join(COMPLETE);
        let complete: Complete = match std::fs::read_to_string(&complete_path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{} is not propdp's record of a finished shard", complete_path.display()))?,
            Err(_) => {
                return Err(ShardError::Unfinished {
                    dir: dir.display().to_string(),
                    shard,
                }
                .into());
            }
        };
        let mine = plan.mine(Some(shard)).unwrap_or_default();
        let file = dir.join("tune.jsonl");
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let mut found = BTreeSet::new();
        for (no, line) in text.lines().enumerate() {
            let at = || format!("{}:{} (shard {shard})", file.display(), no + 1);
            let best: Best = serde_json::from_str(line).with_context(|| format!("{}: not an optimum", at()))?;
            let c = plan
                .check(&best, &cell_of, Some(&mine), &prov)
                .map_err(|why| ShardError::Foreign { at: at(), why })?;
            if lines.insert(c, line.to_string()).is_some() {
                return Err(ShardError::Twice { at: at(), cell: c }.into());
            }
            found.insert(c);
            done.insert(best.key(), best);
        }
        let unreachable: BTreeSet<usize> = complete.unreachable.iter().copied().collect();
        if let Some(c) = mine.iter().find(|c| found.contains(c) == unreachable.contains(c)) {
            let (p, b, kind) = plan.cells[*c];
            let state = if found.contains(c) {
                "both in tune.jsonl and listed unreachable".to_string()
            } else {
                format!("missing from tune.jsonl and not listed unreachable in {COMPLETE}")
            };
            return Err(ShardError::Cell {
                dir: dir.display().to_string(),
                shard,
                cell: format!(
                    "the {kind} cell at δ = {}, {} = {}",
                    plan.points[p].delta(),
                    plan.budgets[b].target.param(),
                    plan.budgets[b].target.level()
                ),
                state,
            }
            .into());
        }
        if complete.cells != mine.len() || unreachable.iter().any(|c| !mine.contains(c)) {
            return Err(ShardError::Complete {
                path: complete_path.display().to_string(),
                shard,
                cells: mine.len(),
            }
            .into());
        }
    }
    let mut dir = RunDir::create(out, TUNE)?;
    let merged: String = lines.values().map(|l| format!("{l}\n")).collect();
    let whole = Manifest {
        shard: None,
        ..manifest
    };
    dir.publish(&merged, "", &whole)?;
    search(&plan, &mut dir, done, Scope::Assemble, progress)
}
