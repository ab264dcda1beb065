//! The figure files propdp wrote into a figures directory, listed in its
//! `index.json`: drawn aside and moved in only where they replace nothing
//! propdp did not write, and removed by that list alone (a user's file
//! beside them is never touched).

use std::path::{Path, PathBuf};

use crate::error::{Context, Result};

/// The list of figure files propdp wrote into a figures directory; only
/// these are ever replaced or removed.
pub(crate) const INDEX: &str = "index.json";

/// Figures drawn by `draw_into` into a directory aside (`out/.propdp-drawing/`),
/// then moved into `out` — only if none would replace a file propdp did not
/// write (one not listed in `out/index.json`): such a file is an error naming
/// it, and `out` is left as it was. The names drawn are added to the index.
pub(crate) fn place(out: &Path, draw_into: impl FnOnce(&Path) -> Result<Vec<PathBuf>>) -> Result<Vec<PathBuf>> {
    let mut names = listed(out)?;
    let aside = out.join(".propdp-drawing");
    if aside.exists() {
        std::fs::remove_dir_all(&aside).with_context(|| format!("removing {}", aside.display()))?;
    }
    let drawn = draw_into(&aside);
    let new: Vec<String> = match &drawn {
        Ok(files) => files
            .iter()
            .filter_map(|f| f.file_name())
            .map(|n| n.to_string_lossy().to_string())
            .collect(),
        Err(_) => Vec::new(),
    };
    let foreign = new
        .iter()
        .find(|n| !names.contains(n) && out.join(n).symlink_metadata().is_ok());
    if drawn.is_err() || foreign.is_some() || new.is_empty() {
        if aside.exists() {
            std::fs::remove_dir_all(&aside).with_context(|| format!("removing {}", aside.display()))?;
        }
        drawn?;
        if let Some(n) = foreign {
            return Err(crate::error::Error::compute(format!(
                "{} exists and propdp did not write it (it is not in {}): move it, or draw with propdp plot --out",
                out.join(n).display(),
                out.join(INDEX).display()
            )));
        }
        return Ok(Vec::new());
    }
    let mut placed = Vec::new();
    for n in &new {
        let (from, to) = (aside.join(n), out.join(n));
        std::fs::rename(&from, &to).with_context(|| format!("moving {} to {}", from.display(), to.display()))?;
        placed.push(to);
    }
    std::fs::remove_dir_all(&aside).with_context(|| format!("removing {}", aside.display()))?;
    names.extend(new);
    names.sort();
    names.dedup();
    crate::file::write_atomic(&out.join(INDEX), &(serde_json::to_string_pretty(&names)? + "\n"))?;
    Ok(placed)
}

/// The figure files listed in `dir`/index.json (none without one); an
/// index that is not propdp's list of names is an error naming it.
fn listed(dir: &Path) -> Result<Vec<String>> {
    let index = dir.join(INDEX);
    match std::fs::read_to_string(&index) {
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not propdp's list of figures: propdp leaves it as it is; draw with --out elsewhere",
                index.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", index.display())),
    }
}

/// Remove the figure files propdp listed in `dir`/index.json, and the index;
/// any other file in `dir` is left alone.
pub fn remove_listed(dir: &Path) -> crate::Result<()> {
    for name in listed(dir)? {
        // names only: never a path out of the directory
        if name.contains('/') || name.contains('\\') || name.starts_with('.') {
            continue;
        }
        let f = dir.join(&name);
        if f.is_file() {
            std::fs::remove_file(&f).with_context(|| format!("removing {}", f.display()))?;
        }
    }
    let index = dir.join(INDEX);
    if index.exists() {
        std::fs::remove_file(&index).with_context(|| format!("removing {}", index.display()))?;
    }
    Ok(())
}
