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

/// Draw the figures of a results file into `out` (default: figures/ beside
/// it); returns the files written (PNG and SVG).
pub fn draw(results: &Path, out: Option<PathBuf>) -> Result<Vec<PathBuf>> {
    let spec = spec_for(results)?;
    let out = out.unwrap_or_else(|| results.with_file_name("figures"));
    Ok(propdp_plot::plot_file(results, &spec, &out)?)
}
