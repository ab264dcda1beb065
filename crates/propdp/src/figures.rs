//! Figures of a results file: theory as lines, simulation as points with
//! ±2 standard-error bars, laid out by the `[plot]` table of the config
//! recorded in the run's manifest.

use std::path::{Path, PathBuf};

use crate::error::{Context, Result};
use propdp_core::Config;
use propdp_core::config::PlotSpec;

use crate::figure_files::place;
pub use crate::figure_files::remove_listed;
use crate::run::{Manifest, Unit, expected, owned, read_checked, read_manifest};

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
    let cfg = Config::from_recorded(&m.config_text).with_context(|| format!("config in {}", manifest.display()))?;
    Ok(cfg.raw.plot)
}

/// The records of `results` read as a resumed run reads them: each a unit
/// of the run its manifest (beside it) records and conforming to it, none
/// twice (without a manifest: none twice) — a figure drawn from duplicate
/// or foreign records would show a run that never was.
fn check_records(results: &Path) -> Result<()> {
    use propdp_core::record::{Record, RecordKey};
    let no_check = |_: &Record| Ok(());
    let manifest = results.with_file_name("manifest.json");
    if !manifest.exists() {
        return read_checked(results, &no_check, None).map(|_| ());
    }
    let m = read_manifest(results.parent().unwrap_or(Path::new(".")))?;
    let cfg = Config::from_recorded(&m.config_text).with_context(|| format!("config in {}", manifest.display()))?;
    let units = owned(&cfg, m.shard);
    let provenance = m.provenance();
    let unit_of: std::collections::BTreeMap<RecordKey, &Unit> =
        units.iter().flat_map(|u| u.keys().map(move |k| (k, u))).collect();
    // the recorded config names its data file unresolved: the records name the path the first one names
    let data_path = std::cell::OnceCell::new();
    let check = |r: &Record| {
        let unit = unit_of
            .get(&r.key())
            .ok_or_else(|| format!("{} is not a unit of the run in {}", r.key(), manifest.display()))?;
        let mut want = expected(&cfg, unit, r.index, &provenance);
        if let Some(sim) = want.simulation.as_mut()
            && cfg.raw.simulation.as_ref().is_some_and(|s| s.data.is_some())
        {
            sim.data = data_path
                .get_or_init(|| r.simulation.as_ref().and_then(|s| s.data.clone()))
                .clone();
        }
        r.conforms(&want)
    };
    read_checked(results, &check, None).map(|_| ())
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

/// A layout chosen when drawing, over the config's `[plot]` table: each
/// key given replaces the config's (`propdp plot --x lambda --series epsilon`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    /// The x axis: a parameter of the results, "d" or "t".
    pub x: Option<String>,
    /// One curve per value of this parameter.
    pub series: Option<String>,
    /// The metrics, one panel each.
    pub metrics: Option<Vec<String>>,
    /// A log-scaled y axis.
    pub y_log: Option<bool>,
}

impl Layout {
    /// `spec` with this layout's keys in place of its own.
    fn over(&self, mut spec: PlotSpec) -> PlotSpec {
        spec.x = self.x.clone().or(spec.x);
        spec.series = self.series.clone().or(spec.series);
        spec.metrics = self.metrics.clone().or(spec.metrics);
        spec.y_log = self.y_log.unwrap_or(spec.y_log);
        spec
    }

    /// Whether any key is given.
    fn is_given(&self) -> bool {
        *self != Layout::default()
    }
}

/// Draw the figures of a results file into `out` (default: figures/ beside
/// it). Results that make no figure (nothing varies, axes too wide) are not
/// an error: [`Drawn::skipped`] says why. Nothing propdp did not write is
/// replaced (figures are drawn aside and moved in only when none would
/// replace a file not listed in `index.json`).
pub fn draw(results: &Path, out: Option<PathBuf>) -> crate::Result<Drawn> {
    draw_as(results, out, &Layout::default())
}

/// [`draw`] with the config's layout overridden by `layout`. A layout key
/// that names nothing in the results (a parameter, metric) is an error
/// naming it and what the results have, not a skipped drawing.
pub fn draw_as(results: &Path, out: Option<PathBuf>, layout: &Layout) -> crate::Result<Drawn> {
    check_records(results)?;
    let spec = layout.over(spec_for(results)?);
    let given = layout.is_given();
    let out = out.unwrap_or_else(|| results.with_file_name("figures"));
    let mut skipped = None;
    let files = place(&out, |aside| match propdp_plot::plot_file(results, &spec, aside) {
        Ok(files) => Ok(files),
        Err(propdp_plot::PlotError::Layout { key, text }) if given => {
            Err(crate::error::Argument::new(key, format!(" = {text}")).into())
        }
        Err(
            e @ (propdp_plot::PlotError::Spec(_)
            | propdp_plot::PlotError::Layout { .. }
            | propdp_plot::PlotError::Empty(_)),
        ) => {
            skipped = Some(e.to_string());
            Ok(Vec::new())
        }
        Err(e) => Err(e.into()),
    })?;
    Ok(Drawn { files, skipped })
}
