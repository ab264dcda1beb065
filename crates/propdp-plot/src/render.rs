//! Drawing a [`Figure`] with plotters: a top strip with the title and the
//! legend (so the legend never covers data), then one panel per metric.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::FontStyle;
use propdp_core::metrics;

use crate::PlotError;
use crate::figure::{Curve, Figure, Panel};

const PANEL_W: u32 = 540;
const PANEL_H: u32 = 470;
/// Height of the title strip without legend rows, and of one legend row.
const TOP_BASE_H: u32 = 76;
const LEGEND_ROW_H: u32 = 24;
pub(crate) const FONT: &str = "sans-serif";

/// Tableau-10 colours; a non-private curve is drawn black.
pub(crate) const PALETTE: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(crate) fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // DejaVu Sans is a valid TrueType font shipped by the `dejavu` crate.
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).ok();
        plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).ok();
    });
}

pub(crate) use propdp_core::parameters::{axis_label, symbol};

fn metric_label(m: &str) -> String {
    metrics::describe(m).map_or(m.to_string(), |d| format!("{m} = {d}"))
}

/// Black for the non-private curve; an algorithm curve
/// (labelled) takes the palette colour of its index, so an algorithm keeps
/// its colour whichever curves a figure has; other curves go by position.
fn color(curve: &Curve, i: usize) -> RGBColor {
    if curve.non_private {
        return BLACK;
    }
    match (curve.series_value, &curve.label) {
        (Some(v), Some(_)) => PALETTE[(v as usize - 1) % PALETTE.len()],
        _ => PALETTE[i % PALETTE.len()],
    }
}

fn series_label(series: &Option<String>, c: &Curve) -> String {
    if let Some(l) = &c.label {
        return l.clone();
    }
    match (series, &c.series_text) {
        (Some(s), Some(v)) if c.non_private => format!("{} = {v} (non-private)", symbol(s)),
        (Some(s), Some(v)) => format!("{} = {v}", symbol(s)),
        _ => "prediction".into(),
    }
}

/// Write `fig` as PNG and SVG into `dir`.
pub fn write(fig: &Figure, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    check_axes(fig)?;
    register_fonts();
    let width = PANEL_W * fig.panels.len() as u32 + 20;
    let top_h = TOP_BASE_H + LEGEND_ROW_H * legend_rows(fig, width);
    let size = (width, PANEL_H + top_h);
    let png = dir.join(format!("{}.png", fig.name));
    let svg = dir.join(format!("{}.svg", fig.name));
    let err = |p: &Path| {
        let path = p.display().to_string();
        move |message: String| PlotError::Draw {
            path: path.clone(),
            message,
        }
    };
    draw(BitMapBackend::new(&png, size).into_drawing_area(), fig, top_h).map_err(err(&png))?;
    draw(SVGBackend::new(&svg, size).into_drawing_area(), fig, top_h).map_err(err(&svg))?;
    Ok(vec![png, svg])
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, fig: &Figure, top_h: u32) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (top, body) = root.split_vertically(top_h);
    legend(&top, fig).map_err(e)?;
    let areas = body.split_evenly((1, fig.panels.len()));
    for (area, panel) in areas.iter().zip(&fig.panels) {
        draw_panel(area, fig, panel).map_err(e)?;
    }
    root.present().map_err(e)
}

/// Legend label of the dashed θ̂ = 0 reference line.
const REFERENCE_LABEL: &str = "θ̂ = 0 (est_err2 = s²)";

/// The legend's labels: one per curve, then the reference line if drawn.
fn legend_labels(fig: &Figure) -> Vec<String> {
    let mut labels: Vec<String> = fig.panels[0]
        .curves
        .iter()
        .map(|c| series_label(&fig.series, c))
        .collect();
    if fig.panels.iter().any(|p| p.reference.is_some()) {
        labels.push(REFERENCE_LABEL.into());
    }
    labels
}

/// The legend row of each entry in a strip `width` wide: entries flow left
/// to right and wrap (text width estimated at 9 px per character, an upper
/// bound for DejaVu Sans at 16 px).
fn legend_layout(labels: &[String], width: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(labels.len());
    let (mut x, mut row) = (14, 0);
    for l in labels {
        let w = 56 + 9 * l.chars().count() as i32;
        if x > 14 && x + w > width as i32 - 10 {
            (x, row) = (14, row + 1);
        }
        out.push(row);
        x += w;
    }
    out
}

fn legend_rows(fig: &Figure, width: u32) -> u32 {
    legend_layout(&legend_labels(fig), width).last().map_or(1, |r| r + 1)
}

fn legend<DB: DrawingBackend>(
    top: &DrawingArea<DB, Shift>,
    fig: &Figure,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    top.draw(&Text::new(
        fig.title.clone(),
        (14, 8),
        (FONT, 22).into_font().style(FontStyle::Bold),
    ))?;
    let text = (FONT, 16).into_font();
    let width = |s: &str| {
        top.estimate_text_size(s, &TextStyle::from(text.clone()))
            .map_or(9 * s.chars().count() as i32, |(w, _)| w as i32)
    };
    let labels = legend_labels(fig);
    // rows from the (conservative) estimate the strip height was sized with;
    // within a row, entries are spaced by their measured width
    let layout = legend_layout(&labels, top.dim_in_pixel().0);
    let row_y = |row: u32| 48 + (LEGEND_ROW_H * row) as i32;
    let curves = &fig.panels[0].curves;
    let (mut x, mut current) = (14, 0);
    for (i, (label, &row)) in labels.iter().zip(&layout).enumerate() {
        if row != current {
            (x, current) = (14, row);
        }
        let y = row_y(row);
        match curves.get(i) {
            Some(c) => {
                let col = color(c, i);
                top.draw(&PathElement::new(vec![(x, y), (x + 28, y)], col.stroke_width(2)))?;
                top.draw(&Circle::new((x + 14, y), 4, col.filled()))?;
            }
            None => top.draw(&DashedPathElement::new(
                vec![(x, y), (x + 28, y)],
                5,
                4,
                RGBColor(120, 120, 120).stroke_width(2),
            ))?,
        }
        top.draw(&Text::new(label.clone(), (x + 34, y - 9), text.clone()))?;
        x += 56 + width(label);
    }
    let y = row_y(layout.last().copied().unwrap_or(0));
    let d = fig.panels.iter().flat_map(|p| &p.curves).filter_map(|c| c.sim_d).max();
    let note = match d {
        Some(d) => format!("lines: theory   points: simulation ± 2 s.e. (d = {d})"),
        None if fig.x == "d" => "lines: theory (d → ∞)   points: simulation ± 2 s.e.".to_string(),
        None => "lines: theory".to_string(),
    };
    top.draw(&Text::new(note, (14, y + 20), text.color(&RGBColor(80, 80, 80))))?;
    Ok(())
}

/// A tick label with at most 3 significant digits and no float noise.
pub(crate) fn tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        return format!("{v:.1e}");
    }
    let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
    trimmed(&format!("{v:.decimals$}"))
}

fn trimmed(s: &str) -> String {
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// The labels of a linear axis over [lo, hi] with about `n` ticks: as many
/// decimals as the tick spacing needs, so that neighbouring ticks never read
/// the same (an axis over [0.4940, 0.4952] reads 0.4940, 0.4942, …, not
/// 0.494 five times).
fn linear_labels(lo: f64, hi: f64, n: usize) -> impl Fn(&f64) -> String {
    let step = (hi - lo).abs() / n.max(1) as f64;
    let top = lo.abs().max(hi.abs());
    let scientific = top > 0.0 && !(1e-3..1e5).contains(&top);
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).max(0.0) as usize + 1
    } else {
        3
    };
    // in scientific notation: the digits the spacing needs relative to the largest value
    let digits = if step > 0.0 && top > 0.0 {
        ((top / step).log10().ceil().max(1.0) as usize).min(12)
    } else {
        2
    };
    move |v: &f64| {
        if *v == 0.0 {
            "0".into()
        } else if scientific {
            format!("{v:.digits$e}")
        } else {
            trimmed(&format!("{v:.decimals$}"))
        }
    }
}

/// Log axes spanning fewer decades are labelled like linear ones.
const NARROW_DECADES: f64 = 0.4;

/// The labelled points of a log axis over [lo, hi]: every power of ten, and
/// within a short span (under three decades) the 1–2–5 (under one and a half:
/// 1–2–3–4–5–7) points between them, so an axis inside one decade (ε from 1
/// to 4; a test error from 0.11 to 0.14) still has labels.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = (hi / lo).log10();
    if decades < NARROW_DECADES {
        // as narrow as a linear axis: its 1–2–5 steps
        let raw = (hi - lo) / 6.0;
        let unit = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * unit)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * unit);
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        return (first..=last).map(|k| k as f64 * step).filter(|v| *v > 0.0).collect();
    }
    let mantissas: &[f64] = if decades < 1.5 {
        &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0]
    } else if decades < 3.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let stride = ((decades / 8.0).ceil() as i32).max(1);
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    let mut points: Vec<f64> = (first..=last)
        .filter(|e| mantissas.len() > 1 || (e - first) % stride == 0)
        .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
        .filter(|v| *v >= lo && *v <= hi)
        .collect();
    // at most ten labels: thin evenly
    if points.len() > 10 {
        let keep = points.len().div_ceil(10);
        points = points.into_iter().step_by(keep).collect();
    }
    points
}

/// (lo, hi) of the values to show on an axis.
/// The widest axes a figure can show: 60 decades on a log axis, a finite
/// span on a linear one (plotters' tick placement does not end on wider).
const MAX_DECADES: f64 = 60.0;

/// A figure whose axes cannot be drawn is refused before plotters runs.
fn check_axes(fig: &Figure) -> Result<(), PlotError> {
    for panel in &fig.panels {
        let xs = panel
            .curves
            .iter()
            .flat_map(|c| c.theory.iter().map(|p| p.0).chain(c.sim.iter().map(|p| p.x)));
        let ys = panel.curves.iter().flat_map(|c| {
            c.theory.iter().map(|p| p.1).chain(
                c.sim
                    .iter()
                    .flat_map(|p| [p.mean - 2.0 * p.stderr, p.mean + 2.0 * p.stderr]),
            )
        });
        for (axis, (lo, hi), log) in [
            (fig.x.as_str(), extent(xs, fig.x_log), fig.x_log),
            (panel.metric.as_str(), extent(ys, fig.y_log), fig.y_log),
        ] {
            let too_wide = if log {
                (hi / lo).log10() > MAX_DECADES
            } else {
                !(hi - lo).is_finite()
            };
            if too_wide || !(lo.is_finite() && hi.is_finite()) {
                return Err(PlotError::Spec(format!(
                    "the {axis} axis of {} spans [{lo:e}, {hi:e}]: too wide to draw (at most {MAX_DECADES} decades on a log axis)",
                    fig.name
                )));
            }
        }
    }
    Ok(())
}

fn extent(vals: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (lo, hi) = vals
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        return if log { (0.1, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        return (lo / 1.1, hi * 1.1);
    }
    let pad = 0.05 * (hi - lo).max(1e-9 * hi.abs().max(1.0));
    let lo2 = if lo >= 0.0 { (lo - pad).max(0.0) } else { lo - pad };
    (lo2, hi + pad)
}

macro_rules! with_chart {
    ($area:expr, $caption:expr, $xr:expr, $yr:expr, $xlog:expr, $ylog:expr, |$chart:ident| $body:block) => {{
        let builder = |a| {
            let mut b = ChartBuilder::on(a);
            b.margin(14)
                .x_label_area_size(52)
                .y_label_area_size(74)
                .caption($caption, (FONT, 17));
            b
        };
        match ($xlog, $ylog) {
            (true, true) => {
                let mut $chart = builder($area).build_cartesian_2d(
                    ($xr.0..$xr.1).log_scale().with_key_points(log_ticks($xr.0, $xr.1)),
                    ($yr.0..$yr.1).log_scale().with_key_points(log_ticks($yr.0, $yr.1)),
                )?;
                $body
            }
            (true, false) => {
                let mut $chart = builder($area).build_cartesian_2d(
                    ($xr.0..$xr.1).log_scale().with_key_points(log_ticks($xr.0, $xr.1)),
                    $yr.0..$yr.1,
                )?;
                $body
            }
            (false, true) => {
                let mut $chart = builder($area).build_cartesian_2d(
                    $xr.0..$xr.1,
                    ($yr.0..$yr.1).log_scale().with_key_points(log_ticks($yr.0, $yr.1)),
                )?;
                $body
            }
            (false, false) => {
                let mut $chart = builder($area).build_cartesian_2d($xr.0..$xr.1, $yr.0..$yr.1)?;
                $body
            }
        }
    }};
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
    panel: &Panel,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let xs = panel
        .curves
        .iter()
        .flat_map(|c| c.theory.iter().map(|p| p.0).chain(c.sim.iter().map(|p| p.x)));
    let xr = extent(xs, fig.x_log);
    let ys = panel.curves.iter().flat_map(|c| {
        c.theory.iter().map(|p| p.1).chain(
            c.sim
                .iter()
                .flat_map(|p| [p.mean - 2.0 * p.stderr, p.mean + 2.0 * p.stderr]),
        )
    });
    let yr = extent(ys.chain(panel.reference), fig.y_log);
    let caption = panel.metric.clone();
    // a log axis narrower than NARROW_DECADES has linear steps (`log_ticks`): label them so
    let linear = |log: bool, r: (f64, f64)| !log || (r.1 / r.0).log10() < NARROW_DECADES;
    let (x_lin, y_lin) = (linear(fig.x_log, xr), linear(fig.y_log, yr));
    let (x_linear, y_linear) = (linear_labels(xr.0, xr.1, 6), linear_labels(yr.0, yr.1, 6));
    let x_label = |v: &f64| if x_lin { x_linear(v) } else { tick(*v) };
    let y_label = |v: &f64| if y_lin { y_linear(v) } else { tick(*v) };
    with_chart!(area, caption, xr, yr, fig.x_log, fig.y_log, |chart| {
        chart
            .configure_mesh()
            .x_labels(7)
            .y_labels(8)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc(axis_label(&fig.x))
            .y_desc(metric_label(&panel.metric))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw()?;
        if let Some(r) = panel.reference {
            chart.draw_series(std::iter::once(DashedPathElement::new(
                vec![(xr.0, r), (xr.1, r)],
                5,
                4,
                RGBColor(120, 120, 120).stroke_width(2),
            )))?;
        }
        for (i, c) in panel.curves.iter().enumerate() {
            let col = color(c, i);
            let keep = |y: f64| !fig.y_log || y > 0.0;
            let keep_x = |x: f64| !fig.x_log || x > 0.0;
            chart.draw_series(LineSeries::new(
                c.theory.iter().copied().filter(|p| keep_x(p.0) && keep(p.1)),
                col.stroke_width(2),
            ))?;
            // a one-point curve draws no line: mark the point
            if let [p] = c.theory[..]
                && keep_x(p.0)
                && keep(p.1)
            {
                chart.draw_series(std::iter::once(Cross::new(p, 6, col.stroke_width(2))))?;
            }
            let sim = || c.sim.iter().filter(|p| keep_x(p.x));
            chart.draw_series(sim().filter(|p| keep(p.mean - 2.0 * p.stderr)).map(|p| {
                ErrorBar::new_vertical(
                    p.x,
                    p.mean - 2.0 * p.stderr,
                    p.mean,
                    p.mean + 2.0 * p.stderr,
                    col.stroke_width(2),
                    8,
                )
            }))?;
            chart.draw_series(
                sim()
                    .filter(|p| keep(p.mean))
                    .map(|p| Circle::new((p.x, p.mean), 4, col.filled())),
            )?;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The labels of issue #44: a bias factor between 0.0459 and 0.0460
    /// read "0.0459" five times, a linear axis over [0.494, 0.495] repeated
    /// its labels.
    #[test]
    fn neighbouring_linear_ticks_read_differently() {
        for (lo, hi) in [
            (0.4940, 0.4952),
            (0.04590, 0.04598),
            (0.0, 1.0),
            (120.0, 121.0),
            (2e-5, 3e-5),
        ] {
            let label = linear_labels(lo, hi, 8);
            let step = (hi - lo) / 8.0;
            let texts: Vec<String> = (0..=8).map(|k| label(&(lo + step * f64::from(k)))).collect();
            for w in texts.windows(2) {
                assert_ne!(w[0], w[1], "[{lo}, {hi}]: {texts:?}");
            }
        }
    }

    /// Inside one decade a log axis still has labels: ε from 1 to 4, a test
    /// error from 0.11 to 0.14; over many decades one label per decade or fewer.
    #[test]
    fn log_axes_inside_a_decade_have_labels() {
        let eps = log_ticks(1.0 / 1.1, 4.0 * 1.1);
        assert!(eps.len() >= 4 && eps.contains(&2.0) && eps.contains(&4.0), "{eps:?}");
        let err = log_ticks(0.11, 0.14);
        assert!(err.len() >= 3, "{err:?}");
        let wide = log_ticks(1e-8, 1e8);
        assert!(
            wide.len() <= 10 && wide.iter().all(|v| (v.log10() - v.log10().round()).abs() < 1e-9),
            "{wide:?}"
        );
        for w in [eps, err, wide] {
            let labels: Vec<String> = w.iter().map(|v| tick(*v)).collect();
            let mut unique = labels.clone();
            unique.dedup();
            assert_eq!(unique, labels);
        }
    }
}
