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
/// x_log = true                          # default: log when x spans ≥ 20× (x = "t": when T ≥ 1000)
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
    /// Every key names something the run will have, checked before any work:
    /// `x` a swept parameter (of `swept`, the sweep's axes), "d" (with a
    /// `[simulation]` table) or "t" (DP-GD); `series` a parameter; `metrics`
    /// the model's metrics.
    pub fn check_keys(
        &self,
        swept: &[&str],
        simulation: bool,
        problem: &super::RawProblem,
        algorithm: &super::RawAlgorithm,
    ) -> Result<(), ConfigError> {
        if self.x.is_none() && self.series.is_none() && self.metrics.is_none() {
            return Ok(());
        }
        let mut params: Vec<String> = swept.iter().map(|a| a.to_string()).collect();
        if swept.contains(&"epsilon") {
            params.push("delta_priv".into());
        }
        if swept.iter().any(|a| *a == "epsilon" || *a == "rho") {
            // the calibrated noise is recorded with every point
            params.push(algorithm.kind().noise_param().into());
        }
        let dpgd = algorithm.kind().is_iterative();
        let mut xs = params.clone();
        if simulation {
            xs.push("d".into());
        }
        if dpgd {
            xs.push("t".into());
        }
        let quoted = |v: &[String]| v.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(", ");
        if let Some(x) = self.x.as_ref().filter(|x| !xs.contains(x)) {
            return Err(ConfigError::range("plot.x", format!("\"{x}\""), &quoted(&xs)));
        }
        if let Some(s) = self.series.as_ref().filter(|s| !params.contains(s)) {
            return Err(ConfigError::range("plot.series", format!("\"{s}\""), &quoted(&params)));
        }
        let offered = crate::metrics::offered_for(problem.kind(), algorithm.kind(), problem.data_model());
        if let Some(m) = self.metrics.iter().flatten().find(|m| !offered.contains(&m.as_str())) {
            let names: Vec<String> = offered.iter().map(|m| m.to_string()).collect();
            return Err(ConfigError::range("plot.metrics", format!("\"{m}\""), &quoted(&names)));
        }
        Ok(())
    }

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
