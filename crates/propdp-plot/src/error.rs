//! The figure pipeline's one error type: every step of
//! [`crate::plot_file`] fails with a [`PlotError`] naming the file, key or
//! reason.

use thiserror::Error;

/// Failures of the figure pipeline.
#[derive(Debug, Error)]
pub enum PlotError {
    /// A file or directory cannot be read or written.
    #[error("reading {path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The results file cannot be read as records.
    #[error(transparent)]
    Read(#[from] propdp_core::record::ReadError),
    /// The results file holds no records.
    #[error("{0}: no result records to plot")]
    Empty(String),
    /// The records or the `[plot]` table do not make a figure.
    #[error("cannot plot: {0}")]
    Spec(String),
    /// A layout key (`x`, `series`, `metrics`) names nothing the records have.
    #[error("cannot plot: {key} = {text}")]
    Layout {
        /// The key: "x", "series" or "metrics".
        key: &'static str,
        /// Its value and what is wrong with it, to follow "key = ".
        text: String,
    },
    /// plotters failed.
    #[error("drawing {path}: {message}")]
    Draw {
        /// The figure file.
        path: String,
        /// plotters' reason.
        message: String,
    },
}
