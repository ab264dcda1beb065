//! The (δ, budget) map of which algorithm predicts the lowest error after
//! tuning (budget ε or ρ): one coloured cell per value pair, labelled with the winner's
//! relative margin over the runner-up. Colours follow the frontier figures:
//! the compared algorithms in alphabetical order through the palette.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use propdp_core::AlgorithmKind;

use crate::PlotError;
use crate::render::{FONT, PALETTE, register_fonts, tick};

/// The winner at one (δ, budget).
#[derive(Debug, Clone, PartialEq)]
pub struct WinnerCell {
    /// δ.
    pub delta: f64,
    /// The budget's level: ε or ρ.
    pub budget: f64,
    /// The algorithm with the lowest predicted metric.
    pub winner: AlgorithmKind,
    /// (runner-up − winner)/winner of the minimised metric; ∞ when no other
    /// algorithm reaches the budget.
    pub margin: f64,
    /// The margin is within the prediction's numerical error: drawn grey,
    /// labelled "tie".
    pub tie: bool,
}

fn sorted_unique(v: impl Iterator<Item = f64>) -> Vec<f64> {
    let set: BTreeSet<u64> = v.map(f64::to_bits).collect();
    let mut out: Vec<f64> = set.into_iter().map(f64::from_bits).collect();
    out.sort_by(f64::total_cmp);
    out
}

/// What a map shows and how.
#[derive(Debug, Clone, Copy)]
pub struct MapSpec<'a> {
    /// Figure title.
    pub title: &'a str,
    /// A grey line under the legend (e.g. the fixed problem parameters).
    pub note: &'a str,
    /// The compared algorithms (the legend); every winner is one of them.
    pub algorithms: &'a [AlgorithmKind],
    /// Every algorithm of the study, alphabetically through the palette, so
    /// an algorithm keeps its colour across maps and frontier figures.
    pub palette_order: &'a [AlgorithmKind],
    /// The budget parameter on the vertical axis: "epsilon" or "rho".
    pub budget: &'a str,
}

/// Draw the map as `<name>.png` and `<name>.svg` in `dir`.
pub fn write(cells: &[WinnerCell], spec: &MapSpec, dir: &Path, name: &str) -> Result<Vec<PathBuf>, PlotError> {
    let algorithms = spec.algorithms;
    if let Some(a) = algorithms.iter().find(|a| !spec.palette_order.contains(a)) {
        return Err(PlotError::Spec(format!(
            "winner map: {a} is missing from the palette order {:?}",
            spec.palette_order
        )));
    }
    if cells.is_empty() {
        return Err(PlotError::Empty(format!("winner map {name}")));
    }
    if let Some(c) = cells.iter().find(|c| !algorithms.contains(&c.winner)) {
        return Err(PlotError::Spec(format!(
            "winner map: {} is not among the compared algorithms {algorithms:?}",
            c.winner
        )));
    }
    if let Some(c) = cells.iter().find(|c| !(c.delta > 0.0 && c.budget > 0.0)) {
        return Err(PlotError::Spec(format!(
            "winner map needs δ > 0 and a positive budget, got δ = {}, {} = {}",
            c.delta, spec.budget, c.budget
        )));
    }
    register_fonts();
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let size = (760, 640);
    let png = dir.join(format!("{name}.png"));
    let svg = dir.join(format!("{name}.svg"));
    let err = |p: &Path| {
        let path = p.display().to_string();
        move |message: String| PlotError::Draw {
            path: path.clone(),
            message,
        }
    };
    draw(BitMapBackend::new(&png, size).into_drawing_area(), cells, spec).map_err(err(&png))?;
    draw(SVGBackend::new(&svg, size).into_drawing_area(), cells, spec).map_err(err(&svg))?;
    Ok(vec![png, svg])
}

/// Cells where no winner can be declared.
const TIE: RGBColor = RGBColor(215, 215, 215);

/// The palette colour mixed with white (cells stay readable under labels).
fn pale(c: RGBColor) -> RGBColor {
    let mix = |v: u8| ((v as f64) * 0.55 + 255.0 * 0.45) as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// A margin as a percentage with two significant digits.
fn percent(margin: f64) -> String {
    if !margin.is_finite() {
        return "only".into();
    }
    let p = 100.0 * margin;
    let decimals = if p >= 10.0 {
        0
    } else {
        (1 - p.max(1e-6).log10().floor() as i32).max(1) as usize
    };
    format!("+{p:.decimals$}%")
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, cells: &[WinnerCell], spec: &MapSpec) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (top, body) = root.split_vertically(108);
    let mut order = spec.palette_order.to_vec();
    order.sort_unstable_by_key(|a| a.name());
    order.dedup();
    let colour = |n: &AlgorithmKind| PALETTE[order.iter().position(|m| m == n).expect("checked") % PALETTE.len()];
    let mut names = spec.algorithms.to_vec();
    names.sort_unstable_by_key(|a| a.name());
    names.dedup();
    top.draw(&Text::new(
        spec.title.to_string(),
        (14, 8),
        (FONT, 22).into_font().style(FontStyle::Bold),
    ))
    .map_err(e)?;
    let text = (FONT, 16).into_font();
    let mut x = 14;
    for n in &names {
        top.draw(&Rectangle::new([(x, 40), (x + 22, 56)], pale(colour(n)).filled()))
            .map_err(e)?;
        top.draw(&Text::new(format!("{n} wins"), (x + 28, 39), text.clone()))
            .map_err(e)?;
        x += 150;
    }
    if cells.iter().any(|c| c.tie) {
        top.draw(&Rectangle::new([(x, 40), (x + 22, 56)], TIE.filled()))
            .map_err(e)?;
        top.draw(&Text::new("tie (within numerical error)", (x + 28, 39), text.clone()))
            .map_err(e)?;
    }
    let grey = text.color(&RGBColor(80, 80, 80));
    top.draw(&Text::new(
        "label: margin over the runner-up, (runner-up − winner)/winner".to_string(),
        (14, 64),
        grey.clone(),
    ))
    .map_err(e)?;
    top.draw(&Text::new(spec.note.to_string(), (14, 84), grey)).map_err(e)?;
    let ds = sorted_unique(cells.iter().map(|c| c.delta));
    let es = sorted_unique(cells.iter().map(|c| c.budget));
    // one equal cell per (δ, ε) value, labelled with the value (a segmented
    // range 0..k holds k + 1 segments)
    let (nx, ny) = (ds.len() as i32, es.len() as i32);
    let mut chart = ChartBuilder::on(&body)
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(70)
        .build_cartesian_2d((0..nx - 1).into_segmented(), (0..ny - 1).into_segmented())
        .map_err(e)?;
    let label = |vals: &[f64], v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) => vals.get(*i as usize).map_or(String::new(), |x| tick(*x)),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(ds.len() + 1)
        .y_labels(es.len() + 1)
        .x_label_formatter(&|v| label(&ds, v))
        .y_label_formatter(&|v| label(&es, v))
        .x_desc("δ = d/n")
        .y_desc(crate::render::axis_label(spec.budget))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(e)?;
    let centred = TextStyle::from((FONT, 14).into_font()).pos(plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Center,
    ));
    for c in cells {
        let i = ds.iter().position(|v| *v == c.delta).expect("collected") as i32;
        let j = es.iter().position(|v| *v == c.budget).expect("collected") as i32;
        let corners = [
            (SegmentValue::Exact(i), SegmentValue::Exact(j)),
            (SegmentValue::Exact(i + 1), SegmentValue::Exact(j + 1)),
        ];
        let fill = if c.tie { TIE } else { pale(colour(&c.winner)) };
        chart
            .draw_series([
                Rectangle::new(corners.clone(), fill.filled()),
                Rectangle::new(corners, WHITE.stroke_width(2)),
            ])
            .map_err(e)?;
        let text = if c.tie { "tie".into() } else { percent(c.margin) };
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (SegmentValue::CenterOf(i), SegmentValue::CenterOf(j)),
                centred.clone(),
            )))
            .map_err(e)?;
    }
    root.present().map_err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margins_keep_two_significant_digits() {
        assert_eq!(percent(0.0572), "+5.7%");
        assert_eq!(percent(0.000123), "+0.012%");
        assert_eq!(percent(0.25), "+25%");
        assert_eq!(percent(f64::INFINITY), "only");
    }
}
