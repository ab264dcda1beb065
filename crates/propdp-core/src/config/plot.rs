//! The `[plot]` table: what the figures show.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// `[plot]` table: what the figures show.
///
/// ```toml
/// [plot]
/// x = "delta"                           # parameter on the x axis
/// metrics = ["est_err2", "train_resid_trunc"]   # one panel each
/// series = "sigma"                      # one curve per value
/// x_log = true                          # default: log when x spans ≥ 20×
/// y_log = false
/// title = "DP Huber regression"
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Parameter on the x axis (a swept parameter, "d" or "t").
    pub x: Option<String>,
    /// Metrics, one panel each.
    pub metrics: Option<Vec<String>>,
    /// Parameter with one curve per value ("algorithm" on tune figures).
    pub series: Option<String>,
    /// Log x axis (default: when x spans ≥ 20×).
    pub x_log: Option<bool>,
    /// Log y axis.
    #[serde(default)]
    pub y_log: bool,
    /// Figure title.
    pub title: Option<String>,
}

impl PlotSpec {
    /// Every metric named must be a metric name.
    pub fn check(&self) -> Result<(), ConfigError> {
        for m in self.metrics.iter().flatten() {
            if crate::metrics::describe(m).is_none() {
                return Err(ConfigError::range(
                    "plot.metrics",
                    m,
                    "metric names of docs/theory.md §1, e.g. \"est_err2\"",
                ));
            }
        }
        Ok(())
    }
}
