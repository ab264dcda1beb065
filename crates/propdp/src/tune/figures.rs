//! A whole search's figures: the frontier (the best metric against the
//! budget, one curve per algorithm) and the winner maps.

use std::path::PathBuf;

use crate::error::{Context, Result};
use propdp_core::config::PlotSpec;
use propdp_core::record::Record;

use super::plan::Plan;
use super::report::{Cell, budget_short, draw_winner_maps};
use crate::run::RunDir;

/// A whole search's figures, placed in `out`'s figures/: the frontier (best
/// metric against the budget, one curve per algorithm) when there are
/// several budgets, and the winner maps.
pub(super) fn draw(plan: &Plan, out: &RunDir, frontier: &[Record], cells: &[Cell]) -> Result<Vec<PathBuf>> {
    let t = &plan.cfg.tune;
    let first = plan.budgets[0];
    let param = first.target.param();
    // the budgets' relation in every title (one line: the short form)
    let note = budget_short(&first);
    crate::figure_files::place(&out.dir.join("figures"), |aside| {
        let mut files = Vec::new();
        if plan.budgets.len() > 1 && !frontier.is_empty() {
            // a log y axis when the best errors span more than a decade (small δ, large ε)
            let values = frontier.iter().filter_map(|r| r.metrics.get(&t.metric).copied());
            let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
            let spec = PlotSpec {
                x: Some(param.into()),
                metrics: Some(vec![t.metric.clone()]),
                series: Some("algorithm".into()),
                x_log: Some(true),
                y_log: lo > 0.0 && hi > 10.0 * lo,
                title: Some(format!("Best {} tuned; {note}", t.metric)),
            };
            files.extend(propdp_plot::plot_records(frontier, &spec, aside)?);
        }
        // DP-SGD: the best error against the batch rate, one curve per budget
        let model = plan.points[0].model().kind();
        let rates: Vec<Record> = cells
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some(c.best.as_ref()?.rate_records(model, i)))
            .flatten()
            .collect();
        if !rates.is_empty() {
            let spec = PlotSpec {
                x: Some("sample_rate".into()),
                metrics: Some(vec![t.metric.clone()]),
                series: Some(param.into()),
                x_log: Some(true),
                y_log: false,
                title: Some(format!("Best DP-SGD {} vs q; {note}", t.metric)),
            };
            files.extend(propdp_plot::plot_records(&rates, &spec, aside)?);
        }
        // DP-SGD: the frontier of the full batch against the best subsampled run
        let batches: Vec<Record> = cells
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some(c.best.as_ref()?.batch_records(model, i)))
            .flatten()
            .collect();
        if plan.budgets.len() > 1 && !batches.is_empty() {
            let spec = PlotSpec {
                x: Some(param.into()),
                metrics: Some(vec![t.metric.clone()]),
                series: Some("algorithm".into()),
                x_log: Some(true),
                y_log: false,
                title: Some(format!("Full batch vs best q < 1; {note}")),
            };
            // drawn aside under the frontier's name, then renamed
            let dir = aside.join("batches");
            for f in propdp_plot::plot_records(&batches, &spec, &dir)? {
                let name = f.file_name().expect("a drawn file").to_string_lossy();
                let to = aside.join(name.replacen("_by_algorithm", "_full_batch_vs_subsampled", 1));
                std::fs::rename(&f, &to).with_context(|| format!("moving {}", f.display()))?;
                files.push(to);
            }
            std::fs::remove_dir(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        files.extend(draw_winner_maps(
            cells,
            &t.algorithms,
            &t.metric,
            (param, first.target, first.neighbouring),
            aside,
        )?);
        Ok(files)
    })
}
