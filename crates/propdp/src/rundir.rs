//! The run directory: `manifest.json` (config text, hash, versions),
//! `results.jsonl` (one record per finished point, appended and flushed as
//! computed) and `errors.jsonl` (points that failed, with the reason).

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// An open run directory.
#[derive(Debug)]
pub struct RunDir {
    /// The directory.
    pub dir: PathBuf,
    results: File,
    errors: File,
}

impl RunDir {
    /// The results file of a run directory.
    pub fn results_path(dir: &Path) -> PathBuf {
        dir.join("results.jsonl")
    }

    /// Open `dir` for a run of `manifest`. Returns the keys of the records
    /// already finished (non-empty only with [`Existing::Resume`]).
    pub fn open(dir: &Path, manifest: &Manifest, existing: Existing) -> Result<(RunDir, BTreeSet<Key>)> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let results = Self::results_path(dir);
        let manifest_path = dir.join("manifest.json");
        let mut done = BTreeSet::new();
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
            if old.config_sha256 != manifest.config_sha256 {
                bail!(
                    "cannot resume: {} was produced by a different config (sha256 {} ≠ {}); use --overwrite or another --out",
                    dir.display(),
                    old.config_sha256,
                    manifest.config_sha256
                );
            }
            done = read_lines::<Record>(&results)?.iter().map(key).collect();
        } else {
            for f in [&results, &dir.join("errors.jsonl")] {
                if f.exists() {
                    fs::remove_file(f).with_context(|| format!("removing {}", f.display()))?;
                }
            }
            // figures of an earlier run would no longer match the results
            let figures = dir.join("figures");
            if figures.is_dir() {
                fs::remove_dir_all(&figures).with_context(|| format!("removing {}", figures.display()))?;
            }
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
        let errors = File::create(dir.join("errors.jsonl"))?;
        Ok((
            RunDir {
                dir: dir.to_path_buf(),
                results: append(results)?,
                errors,
            },
            done,
        ))
    }

    /// Append one record and flush it to disk. A record holding a number
    /// that is not finite is refused ([`Record::non_finite`]): JSON would
    /// write it as `null`.
    pub fn write(&mut self, record: &Record) -> Result<()> {
        if let Some(path) = record.non_finite() {
            bail!("{path} is not a finite number: not written");
        }
        let path = Self::results_path(&self.dir);
        writeln!(self.results, "{}", serde_json::to_string(record)?)
            .and_then(|()| self.results.sync_data())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    /// Append one failure.
    pub fn write_error(&mut self, value: &serde_json::Value) -> Result<()> {
        writeln!(self.errors, "{value}")?;
        self.errors.flush()?;
        Ok(())
    }
}

/// Identity of a record within a run: source, sweep index and (simulation) d.
pub type Key = (Source, usize, Option<usize>);

/// The key of a record.
pub fn key(r: &Record) -> Key {
    (r.source, r.index, r.simulation.as_ref().map(|s| s.d))
}

/// The lines of a JSON-lines file written incrementally. Only the last line
/// may be unreadable (a write torn by an interruption): it is dropped and
/// truncated from the file, so appending continues cleanly. An unreadable
/// line before others (another format, a corrupted file) is an error, and
/// the file is left as it is.
pub fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    let mut good_len = 0usize;
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    for (no, line) in lines.iter().enumerate() {
        if line.is_empty() && no + 1 == lines.len() {
            break;
        }
        match serde_json::from_slice::<T>(line) {
            Ok(r) => {
                out.push(r);
                good_len += line.len() + 1;
            }
            Err(e) if no + 1 == lines.len() || (no + 2 == lines.len() && lines[no + 1].is_empty()) => {
                eprintln!(
                    "warning: {}:{}: dropping a torn last line ({e})",
                    path.display(),
                    no + 1
                );
                break;
            }
            Err(e) => bail!(
                "{}:{}: unreadable line before the last ({e}): not an interrupted write of this version; \
                 use --overwrite or another --out",
                path.display(),
                no + 1
            ),
        }
    }
    if bytes.len() > good_len {
        OpenOptions::new().write(true).open(path)?.set_len(good_len as u64)?;
    } else if good_len == bytes.len() + 1 {
        // a complete last line without its newline: end it before appending
        OpenOptions::new().append(true).open(path)?.write_all(b"\n")?;
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
    }
}
