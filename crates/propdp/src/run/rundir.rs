//! The run directory — the one type through which `run`, `tune` and `merge`
//! open, lock, resume and write their output: `manifest.json` (config text,
//! hash, versions, shard), one records file (JSON lines: `results.jsonl` of a
//! run, `tune.jsonl` of a search) appended record by record with group
//! commit, the run's other files ([`Layout`]) and `figures/`.
//!
//! What it guarantees:
//! - **Only its own files.** A directory is propdp's when its
//!   `manifest.json` parses as a propdp [`Manifest`]. Any file of the layout
//!   (or `figures/index.json`) found in a directory that is not propdp's, or
//!   a `manifest.json` that is not propdp's, is refused before anything is
//!   written; starting over removes the layout's files and the figures
//!   listed in `figures/index.json`, nothing else.
//! - **One writer.** An OS lock on `.propdp.lock` ([`DirLock`]) for as long
//!   as the [`RunDir`] lives.
//! - **Resume re-validates.** Every record kept from an earlier run passes
//!   the caller's check (the same as a fresh record's: in the sweep, of this
//!   config, converged, finite) and appears once, or the resume is refused
//!   naming the file, line and field; only a torn last line (an interrupted
//!   write) is dropped (`read_lines`).
//! - **Whole files appear whole.** `manifest.json` and the other files are
//!   written to a new temporary file (created exclusively under an
//!   unpredictable name: a user's file or link is never written through,
//!   `crate::file`) and renamed (`RunDir::write_file`);
//!   `RunDir::publish` (merge) writes nothing under a final name unless
//!   every file was written.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Context, Result};
use propdp_core::record::Failure;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::provenance::Manifest;
use crate::error::Advice;
use crate::file::{persist, write_atomic, write_temporary};

pub use crate::error::Refused;

/// Refuse a run directory: return [`Refused`] with the formatted message,
/// and after it the advice if one is given first (`refuse!(Advice::OtherOut; "…", …)`).
macro_rules! refuse {
    ($advice:expr; $($arg:tt)*) => {
        return Err($crate::error::Refused::new(format!($($arg)*), Some($advice)).into())
    };
    ($($arg:tt)*) => {
        return Err($crate::error::Refused::new(format!($($arg)*), None).into())
    };
}
pub(crate) use refuse;

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

/// Creates the output directory `dir` if missing, or refuses naming what
/// stands in the way: a symbolic link that loops or points nowhere, a file
/// where the directory (or one of its parents) should be.
pub(crate) fn create_out_dir(dir: &Path) -> Result<()> {
    if dir.symlink_metadata().is_ok()
        && let Err(e) = dir.metadata()
    {
        let target = fs::read_link(dir).map(|t| t.display().to_string()).unwrap_or_default();
        if e.kind() == std::io::ErrorKind::NotFound {
            refuse!(Advice::CreateTargetOrOtherOut;
                "{} is a symbolic link to {target:?}, which does not exist: ",
                dir.display()
            );
        }
        refuse!(Advice::ChooseOtherOut;
            "{} is a symbolic link to {target:?} that cannot be followed ({}: a loop of links?): ",
            dir.display(),
            plain_io(&e)
        );
    }
    if dir.metadata().is_ok_and(|m| !m.is_dir()) {
        refuse!(Advice::ChooseOtherOut;
            "{} is a file, not a directory: the output goes to a directory (new, or one propdp wrote); ",
            dir.display()
        );
    }
    if let Some(file) = dir
        .ancestors()
        .skip(1)
        .find(|p| p.metadata().is_ok_and(|m| !m.is_dir()))
    {
        refuse!(Advice::ChooseOtherOut;
            "{} cannot be created: {} is a file, not a directory; ",
            dir.display(),
            file.display()
        );
    }
    fs::create_dir_all(dir).with_context(|| format!("creating the directory {}", dir.display()))
}

/// An I/O error's message without Rust's "(os error N)".
fn plain_io(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

impl DirLock {
    /// Lock `dir` (created if missing), or fail naming the directory
    /// ([`crate::ErrorKind::Directory`] when another run holds it).
    pub fn acquire(dir: &Path) -> crate::Result<DirLock> {
        Self::lock(dir)
    }

    pub(crate) fn lock(dir: &Path) -> Result<DirLock> {
        create_out_dir(dir)?;
        let path = dir.join(".propdp.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(DirLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => refuse!(Advice::WaitOrOtherOut;

                "{} is in use by another propdp run (lock {}): ",
                dir.display(),
                path.display()
            ),
            Err(fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", path.display())),
        }
    }
}

/// The files of one kind of run directory (besides `manifest.json`, the
/// lock and `figures/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The records file (JSON lines, appended).
    pub records: &'static str,
    /// The failures file (JSON lines of [`Failure`]), if the run has one.
    pub errors: Option<&'static str>,
    /// Other files the run writes whole.
    pub others: &'static [&'static str],
}

/// `propdp run` (and `merge` of its shards, `validate`).
pub const RUN: Layout = Layout {
    records: "results.jsonl",
    errors: Some("errors.jsonl"),
    others: &["validation.csv"],
};

/// `propdp tune` (and `merge` of its shards).
pub const TUNE: Layout = Layout {
    records: "tune.jsonl",
    errors: None,
    others: &["non_private.json", "complete.json"],
};

impl Layout {
    /// Every file of the layout, records first.
    fn files(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.records)
            .chain(self.errors)
            .chain(self.others.iter().copied())
    }
}

/// A line of a records file: serialisable, with a key naming it within the run.
pub trait Line: Serialize + DeserializeOwned {
    /// The line's identity within the run (one line per key).
    type Key: Ord + Clone + std::fmt::Debug;
    /// The key of this line.
    fn key(&self) -> Self::Key;
    /// The line as a message names it ("the theory record of point 3").
    fn describe(&self) -> String;
}

impl Line for propdp_core::record::Record {
    type Key = propdp_core::record::RecordKey;
    fn key(&self) -> Self::Key {
        propdp_core::record::Record::key(self)
    }
    fn describe(&self) -> String {
        self.key().to_string()
    }
}

/// Whether `dir` is propdp's: its manifest.json parses as a propdp manifest
/// (`Ok(false)`: there is none; an error: there is one propdp did not write).
fn owned(dir: &Path) -> Result<bool> {
    let path = dir.join("manifest.json");
    let text = match fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    match serde_json::from_slice::<Manifest>(&text) {
        Ok(_) => Ok(true),
        Err(e) => refuse!(Advice::OtherOut;

            "{} is not a propdp manifest ({e}): propdp leaves the directory as it is; ",
            path.display()
        ),
    }
}

/// The manifest of a propdp directory, or an error naming the file and
/// what is wrong with it.
pub(crate) fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join("manifest.json");
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            refuse!(
                "{} is missing: {} is not a propdp run directory",
                path.display(),
                dir.display()
            )
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    serde_json::from_str(&text).with_context(|| format!("{} is not a propdp manifest (corrupted?)", path.display()))
}

/// A run directory open for writing, locked for as long as it lives.
#[derive(Debug)]
pub struct RunDir {
    /// The directory.
    pub dir: PathBuf,
    layout: Layout,
    /// The records file, appended; `None` for a directory opened by
    /// [`RunDir::create`] (written whole by [`RunDir::publish`]).
    records: Option<File>,
    errors: Option<File>,
    /// When the records file was last synced to disk (group commit).
    synced: Instant,
    _lock: DirLock,
}

/// Longest time a written record waits for its `fsync` (group commit): every
/// record is written to the file at once (a killed process loses nothing
/// written), and synced with the records around it at most this long after;
/// an OS crash or power loss can lose at most that much work, and a torn last
/// line is dropped on `--resume` (`read_lines`). One `sync_data` per record
/// cost 3.8 ms on ext4, 90× a Huber point.
pub const SYNC_INTERVAL: Duration = Duration::from_millis(100);

/// What `RunDir::open` found of an earlier run.
#[derive(Debug)]
pub struct Earlier<T> {
    /// Its records, each checked, in file order (empty unless resuming).
    pub records: Vec<T>,
    /// Its failures (empty unless resuming); `errors.jsonl` starts afresh,
    /// so the caller writes back those it does not retry.
    pub failures: Vec<Failure>,
}

impl RunDir {
    /// The results file of a run directory.
    pub(crate) fn results_path(dir: &Path) -> PathBuf {
        dir.join(RUN.records)
    }

    /// Lock `dir` and refuse it if it holds a manifest propdp did not write,
    /// or — without a propdp manifest — a file of any run's layout (the
    /// first propdp run there would claim it); write nothing yet.
    fn lock(dir: &Path) -> Result<DirLock> {
        let lock = DirLock::lock(dir)?;
        if !owned(dir)? {
            let figures_index = Path::new("figures").join(crate::figure_files::INDEX);
            let found = RUN
                .files()
                .chain(TUNE.files())
                .map(PathBuf::from)
                .chain(std::iter::once(figures_index))
                .map(|f| dir.join(f))
                .find(|f| f.symlink_metadata().is_ok());
            if let Some(f) = found {
                refuse!(Advice::OtherOut;

                    "{} was not written by propdp (no propdp manifest.json beside it): nothing is touched; ",
                    f.display()
                );
            }
        }
        Ok(lock)
    }

    /// Open and lock `dir` for a run of `manifest` writing `layout`. With
    /// [`Existing::Resume`] the earlier records are read, each passed to
    /// `check` (an error is the field at fault) and refused if their key
    /// repeats; the earlier run must be of the same config and shard. With
    /// [`Existing::Overwrite`] the layout's files and listed figures are
    /// removed; with [`Existing::Refuse`] an existing records file is refused.
    /// Writes `manifest.json`.
    pub(crate) fn open<T: Line>(
        dir: &Path,
        layout: Layout,
        manifest: &Manifest,
        existing: Existing,
        check: &dyn Fn(&T) -> Result<(), String>,
    ) -> Result<(RunDir, Earlier<T>)> {
        let lock = Self::lock(dir)?;
        let records_path = dir.join(layout.records);
        let mut earlier = Earlier {
            records: Vec::new(),
            failures: Vec::new(),
        };
        let exists = records_path.exists();
        match existing {
            Existing::Refuse if exists => refuse!(Advice::ResumeOrOverwrite;

                "{} already exists: ",
                records_path.display()
            ),
            Existing::Resume if exists => {
                let old = read_manifest(dir).context("cannot resume")?;
                check_same_run(dir, &old, manifest)?;
                earlier.records = read_checked(&records_path, check, Some(Advice::OverwriteOrOtherOut))?;
                if let Some(errors) = layout.errors.map(|e| dir.join(e)).filter(|p| p.exists()) {
                    earlier.failures = read_lines(&errors)?;
                }
            }
            _ => clear(dir, layout)?,
        }
        write_atomic(
            &dir.join("manifest.json"),
            &(serde_json::to_string_pretty(manifest)? + "\n"),
        )?;
        let records = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&records_path)
            .with_context(|| format!("opening {}", records_path.display()))?;
        let errors = match layout.errors {
            Some(name) => {
                let p = dir.join(name);
                Some(File::create(&p).with_context(|| format!("creating {}", p.display()))?)
            }
            None => None,
        };
        let out = RunDir {
            dir: dir.to_path_buf(),
            layout,
            records: Some(records),
            errors,
            synced: Instant::now(),
            _lock: lock,
        };
        Ok((out, earlier))
    }

    /// Lock a new output directory (`merge`): refused if it holds a records
    /// file of `layout` (merge writes into a new directory) or files propdp
    /// did not write. Nothing is written until [`RunDir::publish`].
    pub(crate) fn create(dir: &Path, layout: Layout) -> Result<RunDir> {
        let lock = Self::lock(dir)?;
        let records = dir.join(layout.records);
        if records.symlink_metadata().is_ok() {
            refuse!(
                "{} already exists: merge writes into a new directory",
                records.display()
            );
        }
        Ok(RunDir {
            dir: dir.to_path_buf(),
            layout,
            records: None,
            errors: None,
            synced: Instant::now(),
            _lock: lock,
        })
    }

    /// Write the records file, the failures file (if the layout has one)
    /// and then `manifest.json` of a directory from [`RunDir::create`], each
    /// whole: all are written to temporary files first and renamed only when
    /// every one is written, so a failure (a full disk) leaves none of them
    /// and the merge can be retried.
    pub(crate) fn publish(&mut self, records: &str, failures: &str, manifest: &Manifest) -> Result<()> {
        let manifest_text = serde_json::to_string_pretty(manifest)? + "\n";
        let mut files = vec![(self.layout.records, records)];
        if let Some(e) = self.layout.errors {
            files.push((e, failures));
        }
        files.push(("manifest.json", &manifest_text));
        // every file written before any is renamed; a failure drops (removes) the temporary files
        let written = files
            .iter()
            .map(|(name, text)| write_temporary(&self.dir.join(name), text))
            .collect::<Result<Vec<_>>>()?;
        for ((name, _), tmp) in files.iter().zip(written) {
            persist(tmp, &self.dir.join(name))?;
        }
        Ok(())
    }

    /// Append one line to the records file: written at once, synced to disk
    /// at most [`SYNC_INTERVAL`] later (group commit) and when the run ends.
    pub(crate) fn append<T: Serialize>(&mut self, line: &T) -> Result<()> {
        let path = self.dir.join(self.layout.records);
        let file = self.records.as_mut().expect("a RunDir from open appends");
        writeln!(file, "{}", serde_json::to_string(line)?).with_context(|| format!("writing {}", path.display()))?;
        if self.synced.elapsed() >= SYNC_INTERVAL {
            self.sync()?;
        }
        Ok(())
    }

    /// Sync the records file to disk (also done when the `RunDir` is dropped).
    pub(crate) fn sync(&mut self) -> Result<()> {
        if let Some(f) = &self.records {
            f.sync_data()
                .with_context(|| format!("syncing {}", self.dir.join(self.layout.records).display()))?;
        }
        self.synced = Instant::now();
        Ok(())
    }

    /// Append one failure to the failures file.
    pub(crate) fn write_failure(&mut self, failure: &Failure) -> Result<()> {
        let name = self.layout.errors.expect("a layout with failures");
        let path = self.dir.join(name);
        let file = self.errors.as_mut().expect("opened with the layout");
        writeln!(file, "{}", serde_json::to_string(failure)?)
            .and_then(|()| file.flush())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    /// Write one of the layout's other files whole (temporary file, then
    /// rename).
    pub(crate) fn write_file(&self, name: &str, text: &str) -> Result<PathBuf> {
        assert!(self.layout.others.contains(&name), "{name} is not a file of the layout");
        let path = self.dir.join(name);
        write_atomic(&path, text)?;
        Ok(path)
    }

    /// Remove one of the layout's other files, if there.
    pub(crate) fn remove_file(&self, name: &str) -> Result<()> {
        assert!(self.layout.others.contains(&name), "{name} is not a file of the layout");
        let path = self.dir.join(name);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("removing {}", path.display()))
            }
            _ => Ok(()),
        }
    }
}

impl Drop for RunDir {
    /// The last records synced however the run ends (an error here has no
    /// one to report to; the records are written, only their sync failed).
    fn drop(&mut self) {
        if let Some(f) = &self.records {
            let _ = f.sync_data();
        }
    }
}

/// Refuses to resume, in `dir`, a run of another config or another shard
/// (or a whole run as a shard, or the reverse).
fn check_same_run(dir: &Path, old: &Manifest, new: &Manifest) -> Result<()> {
    if old.shard != new.shard {
        let name = |s: Option<super::shard::Shard>| s.map_or("the whole run".to_string(), |s| format!("shard {s}"));
        refuse!(Advice::OverwriteOrOtherOut;

            "cannot resume: {} holds {}, not {}; ",
            dir.display(),
            name(old.shard),
            name(new.shard)
        );
    }
    if old.data_sha256 != new.data_sha256 {
        refuse!(Advice::OverwriteOrOtherOut;

            "cannot resume: {} was produced from another data file (sha256 {:?} ≠ {:?}); ",
            dir.display(),
            old.data_sha256,
            new.data_sha256
        );
    }
    if old.covariance_sha256 != new.covariance_sha256 {
        refuse!(Advice::OverwriteOrOtherOut;

            "cannot resume: {} was produced from another covariance file (sha256 {:?} ≠ {:?}); ",
            dir.display(),
            old.covariance_sha256,
            new.covariance_sha256
        );
    }
    if old.config_sha256 != new.config_sha256 {
        refuse!(Advice::OverwriteOrOtherOut;

            "cannot resume: {} was produced by a different config (sha256 {} ≠ {}); ",
            dir.display(),
            old.config_sha256,
            new.config_sha256
        );
    }
    Ok(())
}

/// Remove what an earlier run wrote in `dir`: the layout's files and the
/// figures listed in figures/index.json.
fn clear(dir: &Path, layout: Layout) -> Result<()> {
    for name in layout.files() {
        let f = dir.join(name);
        if f.symlink_metadata().is_ok() {
            fs::remove_file(&f).with_context(|| format!("removing {}", f.display()))?;
        }
    }
    crate::figure_files::remove_listed(&dir.join("figures"))
}

/// The records of `path`, each passed to `check`, each key once; an error
/// names the file, the line and the field.
pub(crate) fn read_checked<T: Line>(
    path: &Path,
    check: &dyn Fn(&T) -> Result<(), String>,
    advice: Option<Advice>,
) -> Result<Vec<T>> {
    let records: Vec<T> = read_lines(path)?;
    let mut seen = BTreeSet::new();
    let refused = |text: String| -> crate::error::Error { crate::error::Refused::new(text, advice).into() };
    for (no, r) in records.iter().enumerate() {
        if let Err(why) = check(r) {
            let end = if advice.is_some() { ": " } else { "" };
            return Err(refused(format!(
                "{}:{}: {why}; this record is not one this run writes (edited or damaged?){end}",
                path.display(),
                no + 1
            )));
        }
        if !seen.insert(r.key()) {
            let end = if advice.is_some() { ": " } else { "" };
            return Err(refused(format!(
                "{}:{}: {} is written twice (by two runs at once, or edited?){end}",
                path.display(),
                no + 1,
                r.describe()
            )));
        }
    }
    Ok(records)
}

/// The lines of a JSON-lines file written incrementally. Every line is
/// written whole with its newline, so only a last line without its newline
/// can be an interrupted write: it is dropped and truncated from the file, so
/// appending continues cleanly. Any other unreadable line (another format, a
/// corrupted file, a complete line that is not a record) is an error, and
/// the file is left as it is.
pub(crate) fn read_lines<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
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
            Err(e) => refuse!(Advice::OverwriteOrOtherOut;

                "{}:{}: a complete line that is not a record of this version ({e}); ",
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
    use super::{create_out_dir, read_lines};

    /// What stands where the output directory should be is named, in words
    /// (no "File exists (os error 17)", no "does not exist" for a loop).
    #[cfg(unix)]
    #[test]
    fn an_output_directory_in_the_way_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (file, a, b) = (dir.path().join("f"), dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&file, "x").unwrap();
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let message = |p: &std::path::Path| format!("{:#}", create_out_dir(p).unwrap_err());
        let m = message(&file);
        assert!(
            m.contains("is a file, not a directory") && !m.contains("os error"),
            "{m}"
        );
        let m = message(&file.join("sub"));
        assert!(
            m.contains("f is a file, not a directory") && !m.contains("os error"),
            "{m}"
        );
        let m = message(&a);
        assert!(m.contains("cannot be followed") && !m.contains("does not exist"), "{m}");
        let dangling = dir.path().join("d");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(message(&dangling).contains("which does not exist"));
        create_out_dir(&dir.path().join("new/deeper")).unwrap();
        assert!(dir.path().join("new/deeper").is_dir());
    }

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
