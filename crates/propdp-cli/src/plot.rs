//! `propdp plot` and the figures drawn at the end of `propdp run`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use propdp_core::Config;
use propdp_core::config::PlotSpec;

use crate::output::Manifest;

/// The `[plot]` table of the config recorded in the run's manifest (beside
/// the results file), or the defaults when there is none.
fn spec_for(results: &Path) -> Result<PlotSpec> {
    let manifest = results.with_file_name("manifest.json");
    if !manifest.exists() {
        return Ok(PlotSpec::default());
    }
    let m: Manifest = serde_json::from_str(&std::fs::read_to_string(&manifest)?)
        .with_context(|| format!("parsing {}", manifest.display()))?;
    let cfg = Config::from_toml_str(&m.config_text).with_context(|| format!("config in {}", manifest.display()))?;
    Ok(cfg.raw.plot)
}

/// Draw the figures of a results file into `out` (default: figures/ beside it).
pub fn plot(results: &Path, out: Option<PathBuf>) -> Result<Vec<PathBuf>> {
    let spec = spec_for(results)?;
    let out = out.unwrap_or_else(|| results.with_file_name("figures"));
    Ok(propdp_plot::plot_file(results, &spec, &out)?)
}

/// `propdp plot`.
pub fn command(results: &Path, out: Option<PathBuf>) -> Result<ExitCode> {
    for f in plot(results, out)? {
        println!("wrote {}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}
