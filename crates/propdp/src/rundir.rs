//! The run directory: `manifest.json` (config text, hash, versions),
//! `results.jsonl` (one record per finished point, appended and flushed as
//! computed) and `errors.jsonl` (points that failed, with the reason).

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use propdp_core::record::{Record, Source};

use crate::provenance::Manifest;

/// What to do with the results of an earlier run in the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Existing {
    /// Refuse to touch them (the default): an error says to resume or overwrite.
    #[default]
    Refuse,
    /// Keep the finished records and compute only the missing ones.
    Resume,
    /// Discard them and start over.
    Overwrite,
}

/// An exclusive advisory lock on a run directory (`DIR/.propdp.lock`, an
/// OS file lock released when the holder exits, even by a crash): a second
/// propdp on the same directory refuses instead of interleaving its writes.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Lock `dir` (created if missing), or fail naming the directory.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(".propdp.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(DirLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => bail!(
                "{} is in use by another propdp run (lock {}): wait for it to finish or use another --out",
                dir.display(),
                path.display()
            ),
            Err(fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", path.display())),
        }
    }
}

/// The files propdp writes into a run directory (figures are listed in
/// `figures/index.json`); nothing else there is ever removed.
const OWN_FILES: [&str; 3] = ["results.jsonl", "errors.jsonl", "validation.csv"];

/// Whether `dir` holds a run of propdp (its manifest.json parses as one).
fn owned(dir: &Path) -> bool {
    fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
        .is_some()
}

/// Remove what an earlier run wrote in `dir`: its results, errors,
/// validation table and the figures listed in figures/index.json.
fn clear(dir: &Path) -> Result<()> {
    for name in OWN_FILES {
        let f = dir.join(name);
        if f.exists() {
            fs::remove_file(&f).with_context(|| format!("removing {}", f.display()))?;
        }
    }
    crate::figures::remove_listed(&dir.join("figures"))
}

/// An open run directory, locked for the run.
#[derive(Debug)]
pub struct RunDir {
    /// The directory.
    pub dir: PathBuf,
    results: File,
    errors: File,
    /// When results.jsonl was last synced to disk (group commit).
    synced: Instant,
    _lock: DirLock,
}

/// Longest time a written record waits for its `fsync` (group commit): every
/// record is written to the file at once (a killed process loses nothing
/// written), and synced with the records around it at most this long after;
/// an OS crash or power loss can lose at most that much work, and a torn last
/// line is dropped on `--resume` ([`read_lines`]). One `sync_data` per record
/// cost 3.8 ms on ext4, 90× a Huber point.
pub const SYNC_INTERVAL: Duration = Duration::from_millis(100);

impl RunDir {
    /// The results file of a run directory.
    pub fn results_path(dir: &Path) -> PathBuf {
        dir.join("results.jsonl")
    }

    /// Open and lock `dir` for a run of `manifest` computing `sources`.
    /// Returns the keys of the records already finished (non-empty only with
    /// [`Existing::Resume`]). Refuses a directory whose results.jsonl or
    /// errors.jsonl propdp did not write (no propdp manifest.json beside them).
    pub fn open(
        dir: &Path,
        manifest: &Manifest,
        existing: Existing,
        sources: crate::run::Sources,
    ) -> Result<(RunDir, BTreeSet<Key>)> {
        let lock = DirLock::acquire(dir)?;
        let results = Self::results_path(dir);
        let errors_path = dir.join("errors.jsonl");
        let manifest_path = dir.join("manifest.json");
        let foreign = OWN_FILES.iter().map(|n| dir.join(n)).find(|f| f.exists());
        if let Some(f) = foreign.filter(|_| !owned(dir)) {
            bail!(
                "{} was not written by propdp (no propdp manifest.json beside it): nothing is removed; use another --out",
                f.display()
            );
        }
        let mut done = BTreeSet::new();
        let mut kept_errors = Vec::new();
        if results.exists() && existing == Existing::Refuse {
            bail!(
                "{} already exists: pass --resume to finish that run or --overwrite to start over",
                results.display()
            );
        }
        if existing == Existing::Resume && results.exists() {
            let old: Manifest = serde_json::from_str(
                &fs::read_to_string(&manifest_path).with_context(|| format!("reading {}", manifest_path.display()))?,
            )
            .with_context(|| format!("parsing {}", manifest_path.display()))?;
            if old.shard != manifest.shard {
                let name =
                    |s: Option<crate::shard::Shard>| s.map_or("the whole run".to_string(), |s| format!("shard {s}"));
                bail!(
                    "cannot resume: {} holds {}, not {}; use --overwrite or another --out",
                    dir.display(),
                    name(old.shard),
                    name(manifest.shard)
                );
            }
            if old.config_sha256 != manifest.config_sha256 {
                bail!(
                    "cannot resume: {} was produced by a different config (sha256 {} ≠ {}); use --overwrite or another --out",
                    dir.display(),
                    old.config_sha256,
                    manifest.config_sha256
                );
            }
            for r in read_lines::<Record>(&results)? {
                let k = key(&r);
                if !done.insert(k) {
                    bail!(
                        "{} holds the {} record of point {}{}{} twice (written by two runs at once?): \
                         use --overwrite or another --out",
                        results.display(),
                        k.0.name(),
                        k.1,
                        k.2.map_or(String::new(), |d| format!(", d = {d}")),
                        k.3.map_or(String::new(), |r| format!(", repetitions from {r}"))
                    );
                }
            }
            // failures of a source this run does not retry stay reported
            if errors_path.exists() {
                kept_errors = read_lines::<serde_json::Value>(&errors_path)?
                    .into_iter()
                    .filter(|e| match e["source"].as_str() {
                        Some("theory") => !sources.theory,
                        Some("simulation") => !sources.simulation,
                        _ => false,
                    })
                    .collect();
            }
        } else {
            clear(dir)?;
        }
        fs::write(&manifest_path, serde_json::to_string_pretty(manifest)? + "\n")
            .with_context(|| format!("writing {}", manifest_path.display()))?;
        let append = |p: PathBuf| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .with_context(|| format!("opening {}", p.display()))
        };
        // errors of an earlier attempt are retried, so start that file afresh
        let errors = File::create(&errors_path).with_context(|| format!("creating {}", errors_path.display()))?;
        let mut out = RunDir {
            dir: dir.to_path_buf(),
            results: append(results)?,
            errors,
            synced: Instant::now(),
            _lock: lock,
        };
        for e in &kept_errors {
            out.write_error(e)?;
        }
        Ok((out, done))
    }

    /// Append one record: written to the file at once, synced to disk at
    /// most [`SYNC_INTERVAL`] later (group commit) and when the run ends. A
    /// record holding a number that is not finite is refused
    /// ([`Record::non_finite`]): JSON would write it as `null`.
    pub fn write(&mut self, record: &Record) -> Result<()> {
        if let Some(path) = record.non_finite() {
            bail!("{path} is not a finite number: not written");
        }
        let path = Self::results_path(&self.dir);
        writeln!(self.results, "{}", serde_json::to_string(record)?)
            .with_context(|| format!("writing {}", path.display()))?;
        if self.synced.elapsed() >= SYNC_INTERVAL {
            self.sync()?;
        }
        Ok(())
    }

    /// Sync results.jsonl to disk (also done when the `RunDir` is dropped).
    pub fn sync(&mut self) -> Result<()> {
        self.results
            .sync_data()
            .with_context(|| format!("syncing {}", Self::results_path(&self.dir).display()))?;
        self.synced = Instant::now();
        Ok(())
    }

    /// Append one failure.
    pub fn write_error(&mut self, value: &serde_json::Value) -> Result<()> {
        let path = self.dir.join("errors.jsonl");
        writeln!(self.errors, "{value}")
            .and_then(|()| self.errors.flush())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }
}

impl Drop for RunDir {
    /// The last records synced however the run ends (an error here has no
    /// one to report to; the records are written, only their sync failed).
    fn drop(&mut self) {
        let _ = self.results.sync_data();
    }
}

/// Identity of a record within a run: source, sweep index, (simulation) d
/// and (a shard's block of repetitions) its first repetition.
pub type Key = (Source, usize, Option<usize>, Option<usize>);

/// The key of a record.
pub fn key(r: &Record) -> Key {
    let sim = r.simulation.as_ref();
    (
        r.source,
        r.index,
        sim.map(|s| s.d),
        sim.and_then(|s| s.block.as_ref()).map(|b| b.first),
    )
}

/// The lines of a JSON-lines file written incrementally. Every line is
/// written whole with its newline, so only a last line without its newline
/// can be an interrupted write: it is dropped and truncated from the file, so
/// appending continues cleanly. Any other unreadable line (another format, a
/// corrupted file, a complete line that is not a record) is an error, and
/// the file is left as it is.
pub fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let (complete, torn) = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(i) => (&bytes[..=i], &bytes[i + 1..]),
        None => (&bytes[..0], &bytes[..]),
    };
    let mut out = Vec::new();
    for (no, line) in complete[..complete.len().saturating_sub(1)]
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|_| !complete.is_empty())
    {
        match serde_json::from_slice::<T>(line) {
            Ok(r) => out.push(r),
            Err(e) => bail!(
                "{}:{}: a complete line that is not a record of this version ({e}); \
                 use --overwrite or another --out",
                path.display(),
                no + 1
            ),
        }
    }
    if !torn.is_empty() {
        match serde_json::from_slice::<T>(torn) {
            // a whole record whose newline was lost: keep it, end the line
            Ok(r) => {
                out.push(r);
                OpenOptions::new()
                    .append(true)
                    .open(path)
                    .and_then(|mut f| f.write_all(b"\n"))
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            Err(e) => {
                eprintln!("warning: {}: dropping a torn last line ({e})", path.display());
                OpenOptions::new()
                    .write(true)
                    .open(path)
                    .and_then(|f| f.set_len(complete.len() as u64))
                    .with_context(|| format!("truncating {}", path.display()))?;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::read_lines;

    #[test]
    fn only_a_torn_last_line_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        std::fs::write(&p, "1\n2\n{\"tor").unwrap();
        assert_eq!(read_lines::<u32>(&p).unwrap(), vec![1, 2]);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\n2\n", "torn tail truncated");
        std::fs::write(&p, "1\n2").unwrap();
        assert_eq!(read_lines::<u32>(&p).unwrap(), vec![1, 2]);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\n2\n", "newline restored");
        std::fs::write(&p, "1\nold format\n3\n").unwrap();
        let e = read_lines::<u32>(&p).unwrap_err().to_string();
        assert!(e.contains("x.jsonl:2") && e.contains("--overwrite"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "1\nold format\n3\n",
            "left as it is"
        );
        // D13: a complete last line that is not a record is not a torn write
        std::fs::write(&p, "1\n2\n{\"note\": 1}\n").unwrap();
        assert!(read_lines::<u32>(&p).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\n2\n{\"note\": 1}\n", "kept");
    }
}
