//! Figures of propdp: predicted curves (theory, lines) against simulated
//! points (markers with ±2 standard-error bars), one panel per metric, PNG
//! and SVG, drawn with `plotters`. PNG text uses DejaVu Sans embedded from the
//! `dejavu` crate (through plotters' `ab_glyph` feature), so rendering needs
//! no system fonts.
//!
//! Flow: results.jsonl → [`data::load`] → [`figure::build`] (group by the
//! swept parameters: x axis, series, one figure per remaining combination) →
//! [`render::write`].

#![warn(missing_docs)]

pub mod data;
mod error;
pub mod figure;
pub mod render;
pub mod winner_map;

use std::path::{Path, PathBuf};

use propdp_core::config::PlotSpec;

pub use error::PlotError;

/// Draw every figure of a results file into `out_dir`; returns the files written.
pub fn plot_file(results: &Path, spec: &PlotSpec, out_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    plot_records(&data::load(results)?, spec, out_dir)
}

/// Draw every figure of in-memory records into `out_dir`.
pub fn plot_records(
    records: &[propdp_core::record::Record],
    spec: &PlotSpec,
    out_dir: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let figures = figure::build(records, spec)?;
    std::fs::create_dir_all(out_dir).map_err(|source| PlotError::Io {
        path: out_dir.display().to_string(),
        source,
    })?;
    let mut files = Vec::new();
    for fig in &figures {
        files.extend(render::write(fig, out_dir)?);
    }
    Ok(files)
}
