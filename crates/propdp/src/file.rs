//! Files written whole: to a temporary name beside the final one, synced,
//! then renamed — a reader (or a crash) sees the old file or the new one,
//! never a part.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A temporary name beside `path` (hidden, same directory: renamed atomically).
pub(crate) fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().to_string());
    path.with_file_name(format!(".{name}.propdp-tmp"))
}

/// Write `text` to `path` and sync it, naming the file on failure.
pub(crate) fn write_synced(path: &Path, text: &str) -> Result<()> {
    let mut f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_data())
        .with_context(|| format!("writing {}", path.display()))
}

/// Write `text` to `path` whole: to a temporary name beside it, then
/// renamed; on failure the temporary file is removed and `path` is as it was.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = temporary(path);
    if let Err(e) = write_synced(&tmp, text) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}
