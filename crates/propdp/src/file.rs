//! Files written whole: to a temporary file beside the final one, synced,
//! then renamed — a reader (or a crash) sees the old file or the new one,
//! never a part.
//!
//! The temporary file is created exclusively (`O_CREAT | O_EXCL`, through
//! the `tempfile` crate) under an unpredictable hidden name in the target's
//! directory, so a user's file, or a symbolic link, that happens to carry
//! such a name is never opened, followed or overwritten; a temporary file
//! that is not renamed (a failed write or rename) is removed. It is
//! created with mode 0666 less the umask, as a file the user makes would
//! be (not tempfile's private 0600). The rename
//! replaces the final name itself: a symbolic link there is replaced, its
//! target left as it was.

use std::io::Write;
use std::path::Path;

use crate::error::{Context, Result};
use tempfile::NamedTempFile;

/// A new, empty temporary file beside `path`, created exclusively.
pub(crate) fn temporary(path: &Path) -> Result<NamedTempFile> {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().to_string());
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".propdp-tmp");
    // created with mode 0666, which the umask narrows as for any file the user makes (tempfile's
    // default 0600 left results unreadable to a team sharing them)
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file beside {}", path.display()))
}

/// `text` written to a new temporary file beside `path` and synced, naming
/// `path` on failure (the temporary file is then removed).
pub(crate) fn write_temporary(path: &Path, text: &str) -> Result<NamedTempFile> {
    let mut tmp = temporary(path)?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.as_file().sync_data())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(tmp)
}

/// Rename a temporary file from [`write_temporary`] to `path`; on failure
/// the temporary file is removed.
pub(crate) fn persist(tmp: NamedTempFile, path: &Path) -> Result<()> {
    tmp.persist(path).map(|_| ()).map_err(|e| {
        crate::error::Error::from(e.error).context(format!("renaming a temporary file to {}", path.display()))
    })
}

/// Write `text` to `path` whole: to a temporary file beside it, then
/// renamed; on failure no temporary file is left and `path` is as it was.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<()> {
    persist(write_temporary(path, text)?, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The written file has the permissions the umask gives a new file, not 0600.
    #[cfg(unix)]
    #[test]
    fn a_written_file_takes_the_umask_not_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let ours = dir.path().join("ours");
        write_atomic(&ours, "x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ours), mode(&plain), "what std::fs::write gives a new file");
        assert_ne!(
            mode(&ours) & 0o044,
            0,
            "readable beyond the owner under the usual umask 022"
        );
    }

    #[test]
    fn a_users_file_or_link_at_the_old_temporary_name_survives() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.csv");
        let theirs = dir.path().join("theirs.txt");
        std::fs::write(&theirs, "the user's\n").unwrap();
        // the fixed name earlier versions wrote through
        let old = dir.path().join(".t.csv.propdp-tmp");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&theirs, &old).unwrap();
        #[cfg(not(unix))]
        std::fs::write(&old, "the user's\n").unwrap();
        write_atomic(&target, "ours\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "ours\n");
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "the user's\n");
        assert!(
            std::fs::symlink_metadata(&old).is_ok(),
            "the user's entry is left in place"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".propdp-tmp") && n != ".t.csv.propdp-tmp")
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }

    #[test]
    fn a_link_at_the_final_name_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs.txt");
        std::fs::write(&theirs, "the user's\n").unwrap();
        let target = dir.path().join("out.csv");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&theirs, &target).unwrap();
        write_atomic(&target, "ours\n").unwrap();
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "the user's\n");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "ours\n");
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // a non-empty directory at the final name: the rename fails
        let target = dir.path().join("out");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), "").unwrap();
        assert!(write_atomic(&target, "ours\n").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out")]);
    }
}
