//! Figures of a results file: theory as lines, simulation as points with
//! ±2 standard-error bars, laid out by the `[plot]` table of the config
//! recorded in the run's manifest.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use propdp_core::Config;
use propdp_core::config::PlotSpec;

use crate::provenance::Manifest;

/// The `[plot]` table of the config recorded in the run's manifest (beside
/// the results file), or the defaults when there is none.
fn spec_for(results: &Path) -> Result<PlotSpec> {
    let manifest = results.with_file_name("manifest.json");
    if !manifest.exists() {
        return Ok(PlotSpec::default());
    }
    let m: Manifest = serde_json::from_str(
        &std::fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?,
    )
    .with_context(|| format!("parsing {}", manifest.display()))?;
    let cfg = Config::from_toml_str(&m.config_text).with_context(|| format!("config in {}", manifest.display()))?;
    Ok(cfg.raw.plot)
}

/// The figures of one drawing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Drawn {
    /// The files written (PNG and SVG).
    pub files: Vec<PathBuf>,
    /// Why no figure could be drawn (e.g. a single point: nothing varies),
    /// when so; the results are complete all the same.
    pub skipped: Option<String>,
}

/// The list of figure files propdp wrote into a figures directory; only
/// these are removed when a run starts over.
const INDEX: &str = "index.json";

/// Draw the figures of a results file into `out` (default: figures/ beside
/// it). Results that make no figure (nothing varies, axes too wide) are not
/// an error: [`Drawn::skipped`] says why.
pub fn draw(results: &Path, out: Option<PathBuf>) -> Result<Drawn> {
    let spec = spec_for(results)?;
    let out = out.unwrap_or_else(|| results.with_file_name("figures"));
    match propdp_plot::plot_file(results, &spec, &out) {
        Ok(files) => {
            let index = out.join(INDEX);
            let mut names: Vec<String> = listed(&out);
            names.extend(
                files
                    .iter()
                    .filter_map(|f| f.file_name())
                    .map(|n| n.to_string_lossy().to_string()),
            );
            names.sort();
            names.dedup();
            std::fs::write(&index, serde_json::to_string_pretty(&names)? + "\n")
                .with_context(|| format!("writing {}", index.display()))?;
            Ok(Drawn { files, skipped: None })
        }
        Err(e @ (propdp_plot::PlotError::Spec(_) | propdp_plot::PlotError::Empty(_))) => Ok(Drawn {
            files: Vec::new(),
            skipped: Some(e.to_string()),
        }),
        Err(e) => Err(e.into()),
    }
}

/// The figure files listed in `dir`/index.json.
fn listed(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(INDEX))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Remove the figure files propdp listed in `dir`/index.json, and the index;
/// any other file in `dir` is left alone.
pub fn remove_listed(dir: &Path) -> Result<()> {
    for name in listed(dir) {
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
