//! From records to figures: choose the x axis, the series and the facets,
//! and collect theory curves and simulated points per panel.

use std::collections::{BTreeMap, BTreeSet};

use propdp_core::config::PlotSpec;
use propdp_core::metrics;
use propdp_core::problem::{AlgorithmKind, ModelKind, is_noise_param, is_non_private};
use propdp_core::record::Record;

use crate::PlotError;

/// A simulated point: x, mean, standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimPoint {
    /// x coordinate.
    pub x: f64,
    /// Mean over repetitions.
    pub mean: f64,
    /// Standard error of the mean.
    pub stderr: f64,
}

/// One series (one value of the series parameter) in one panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The value of the series parameter (None: a single curve).
    pub series_value: Option<f64>,
    /// That value as the legend shows it: rounded, with the fewest digits
    /// (at least [`SHOWN_DIGITS`]) that tell this figure's series apart.
    pub series_text: Option<String>,
    /// Theory, sorted by x.
    pub theory: Vec<(f64, f64)>,
    /// Simulation at the largest d available, sorted by x.
    pub sim: Vec<SimPoint>,
    /// d of the simulated points.
    pub sim_d: Option<usize>,
    /// Legend text overriding "parameter = value" (e.g. an algorithm's name).
    pub label: Option<String>,
    /// A non-private estimator (a noise σ or τ of 0, or tune's reference): drawn black.
    pub non_private: bool,
}

/// One metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// The metric shown.
    pub metric: String,
    /// One curve per series value.
    pub curves: Vec<Curve>,
    /// Horizontal reference line: the trivial estimator θ̂ = 0 (est_err2 = s²).
    pub reference: Option<f64>,
}

/// One output figure (PNG + SVG).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// File stem.
    pub name: String,
    /// Figure title.
    pub title: String,
    /// The x parameter ("delta", any swept parameter, "d" or "t").
    pub x: String,
    /// Log-scaled x axis.
    pub x_log: bool,
    /// Log-scaled y axis.
    pub y_log: bool,
    /// The series parameter, if any.
    pub series: Option<String>,
    /// One panel per metric.
    pub panels: Vec<Panel>,
}

fn default_title(model: ModelKind, algorithm: AlgorithmKind) -> String {
    format!("{}, {}", model.title(), algorithm.title())
}

/// Default metrics per model.
fn default_metrics(model: ModelKind, algorithm: AlgorithmKind) -> Vec<String> {
    let m: &[&str] = match (model, algorithm.is_iterative()) {
        (ModelKind::Logistic, true) => &[metrics::EST_ERR2, metrics::TRAIN_LOSS, metrics::TEST_CLASS_ERR],
        (ModelKind::Huber | ModelKind::LeastSquares, true) => {
            &[metrics::EST_ERR2, metrics::OVERLAP, metrics::TRAIN_LOSS]
        }
        (ModelKind::Huber, false) => &[metrics::EST_ERR2, metrics::TRAIN_RESID_TRUNC],
        (ModelKind::Logistic | ModelKind::LeastSquares, false) => {
            &[metrics::EST_ERR2, metrics::BIAS_FACTOR, metrics::TEST_CLASS_ERR]
        }
    };
    m.iter().map(|s| s.to_string()).collect()
}

/// Names, quoted and comma-separated, for an error message.
fn names<'a>(names: impl IntoIterator<Item = &'a String>) -> String {
    names
        .into_iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parameters that take more than one value over the records.
fn varying(records: &[Record]) -> Vec<String> {
    let mut values: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
    for r in records {
        for (k, v) in &r.params {
            values.entry(k.as_str()).or_default().insert(v.to_bits());
        }
    }
    values
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(k, _)| k.to_string())
        .collect()
}

/// Group records into figures. With `series = "algorithm"` records of
/// several algorithms share the panels, one curve per algorithm.
pub fn build(records: &[Record], spec: &PlotSpec) -> Result<Vec<Figure>, PlotError> {
    if spec.series.as_deref() == Some("algorithm") {
        return build_by_algorithm(records, spec);
    }
    let first = &records[0];
    if let Some(r) = records
        .iter()
        .find(|r| r.model != first.model || r.algorithm != first.algorithm)
    {
        return Err(PlotError::Spec(format!(
            "records mix {}/{} with {}/{}",
            first.model, first.algorithm, r.model, r.algorithm
        )));
    }
    let look = Look {
        name: format!("{}_{}", first.model, first.algorithm),
        title: default_title(first.model, first.algorithm),
        metrics: default_metrics(first.model, first.algorithm),
    };
    grouped(records, spec, &look)
}

/// The names and defaults of one build's figures.
struct Look {
    /// File-name stem before the facet suffix.
    name: String,
    /// Title when the spec gives none.
    title: String,
    /// Metrics when the spec names none.
    metrics: Vec<String>,
}

/// Figures of records that share a model (and, but for tune's frontiers, an algorithm).
fn grouped(records: &[Record], spec: &PlotSpec, look: &Look) -> Result<Vec<Figure>, PlotError> {
    let first = &records[0];
    let vary = varying(records);
    let per_step = records.iter().all(|r| r.per_step.is_some());
    let x = match &spec.x {
        Some(x) if x == "t" && !per_step => {
            return Err(PlotError::Layout {
                key: "x",
                text: "\"t\" (the step) needs per-step (DP-GD, DP-SGD) records".into(),
            });
        }
        Some(x) if x == "t" => x.clone(),
        None if per_step => "t".into(),
        Some(x) if x == "d" => {
            if !records.iter().any(|r| r.simulation.is_some()) {
                return Err(PlotError::Layout {
                    key: "x",
                    text: "\"d\" needs simulation records".into(),
                });
            }
            x.clone()
        }
        Some(x) if first.params.contains_key(x) => x.clone(),
        Some(x) => {
            return Err(PlotError::Layout {
                key: "x",
                text: format!(
                    "\"{x}\" is not a parameter of these results (they have {})",
                    names(first.params.keys())
                ),
            });
        }
        None if vary.iter().any(|v| v == "delta") => "delta".into(),
        // a swept knob first; a budget level (or, with a budget, the noise it
        // calibrates) only when nothing else varies
        None => vary
            .iter()
            .min_by_key(|v| match v.as_str() {
                "epsilon" | "rho" => 1,
                v if is_noise_param(v) => 2,
                _ => 0,
            })
            .cloned()
            .ok_or_else(|| PlotError::Spec("the results hold a single point: nothing varies to plot against".into()))?,
    };
    // with a budget the noise (σ or τ) is a function of ε (or ρ) and λ: never a series or facet
    let budgeted = first.params.contains_key("epsilon") || first.params.contains_key("rho");
    let series = match &spec.series {
        Some(s) if first.params.contains_key(s) => Some(s.clone()),
        Some(s) => {
            return Err(PlotError::Layout {
                key: "series",
                text: format!(
                    "\"{s}\" is not a parameter of these results (they have {})",
                    names(first.params.keys())
                ),
            });
        }
        // a budget level first, then the privacy noise
        None => vary
            .iter()
            .filter(|v| **v != x)
            .min_by_key(|v| match v.as_str() {
                "epsilon" | "rho" => 0,
                v if is_noise_param(v) => 1,
                _ => 2,
            })
            .filter(|v| matches!(v.as_str(), "epsilon" | "rho") || (!budgeted && is_noise_param(v)))
            .cloned(),
    };
    let facets: Vec<&String> = vary
        .iter()
        .filter(|v| **v != x && Some(*v) != series.as_ref() && !(budgeted && is_noise_param(v)))
        .collect();
    let metric_names = spec.metrics.clone().unwrap_or_else(|| look.metrics.clone());
    let x_log = spec.x_log.unwrap_or_else(|| {
        if x == "t" {
            // a long run's transient and its tail on one axis
            return records
                .iter()
                .any(|r| r.params.get("steps").is_some_and(|&t| t >= LOG_TIME_FROM));
        }
        let xs: Vec<f64> = records.iter().filter_map(|r| x_value(r, &x)).collect();
        let (lo, hi) = xs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        lo > 0.0 && hi / lo >= 20.0
    });
    let mut groups: BTreeMap<Vec<(String, u64)>, Vec<&Record>> = BTreeMap::new();
    for r in records {
        let key = facets.iter().map(|f| ((*f).clone(), r.params[*f].to_bits())).collect();
        groups.entry(key).or_default().push(r);
    }
    // facet values in names and titles, series values in legends: rounded,
    // with as many digits as tell the values apart
    let facet_digits: Vec<usize> = facets
        .iter()
        .map(|f| distinct_digits(records.iter().map(|r| r.params[*f])))
        .collect();
    let series_digits = series.as_ref().map_or(SHOWN_DIGITS, |s| {
        distinct_digits(records.iter().filter_map(|r| r.params.get(s).copied()))
    });
    let mut figures = Vec::new();
    for (key, group) in groups {
        let shown: Vec<(&str, String)> = key
            .iter()
            .zip(&facet_digits)
            .map(|((k, bits), &digits)| (k.as_str(), rounded(f64::from_bits(*bits), digits)))
            .collect();
        let suffix: String = shown.iter().map(|(k, v)| format!("_{k}={v}")).collect();
        let facet_text: Vec<String> = shown
            .iter()
            .map(|(k, v)| format!("{} = {v}", propdp_core::parameters::symbol(k)))
            .collect();
        let panels = metric_names
            .iter()
            .filter(|m| group.iter().any(|r| r.metrics.contains_key(*m)))
            .map(|m| panel(&group, m, &x, series.as_deref().map(|s| (s, series_digits))))
            .collect::<Vec<_>>();
        if panels.is_empty() {
            let have: BTreeSet<&String> = group.iter().flat_map(|r| r.metrics.keys()).collect();
            return Err(PlotError::Layout {
                key: "metrics",
                text: format!("{metric_names:?}: none is in the results (they have {})", names(have)),
            });
        }
        let mut title = spec.title.clone().unwrap_or_else(|| look.title.clone());
        if !facet_text.is_empty() {
            title = format!("{title} ({})", facet_text.join(", "));
        }
        figures.push(Figure {
            name: format!("{}{suffix}", look.name),
            title,
            x: x.clone(),
            x_log,
            y_log: spec.y_log,
            series: series.clone(),
            panels,
        });
    }
    Ok(figures)
}

/// The fewest significant digits a value in a file name, title or legend shows.
pub const SHOWN_DIGITS: usize = 4;

/// A value with `digits` significant digits, trailing zeros dropped
/// (`rounded(8.785872961194482, 4)` reads "8.786", `rounded(50.0, 4)` "50").
pub fn rounded(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if !(1e-4..1e6).contains(&a) {
        let s = format!("{v:.*e}", digits.saturating_sub(1));
        let (mantissa, exp) = s.split_once('e').expect("scientific notation");
        let mantissa = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        return format!("{mantissa}e{exp}");
    }
    let decimals = (digits as i32 - 1 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The fewest significant digits, at least [`SHOWN_DIGITS`], at which the
/// distinct values stay distinct once [`rounded`].
fn distinct_digits(values: impl Iterator<Item = f64>) -> usize {
    let values: BTreeSet<u64> = values.map(f64::to_bits).collect();
    (SHOWN_DIGITS..17)
        .find(|&digits| {
            let shown: BTreeSet<String> = values.iter().map(|&b| rounded(f64::from_bits(b), digits)).collect();
            shown.len() == values.len()
        })
        .unwrap_or(17)
}

/// The legend name of the non-private reference curve on tune's frontiers.
pub const NON_PRIVATE: &str = "non-private";

/// One curve per algorithm: each record is tagged with its algorithm's
/// index as a synthetic series parameter, then the curves are relabelled.
/// Indices follow the algorithms' names alphabetically from 1 (palette colours 0, 1, …);
/// the non-private reference ([`Record::non_private_reference`]) takes 0,
/// the black curve.
fn build_by_algorithm(records: &[Record], spec: &PlotSpec) -> Result<Vec<Figure>, PlotError> {
    let curve_of = |r: &Record| (!r.non_private_reference).then_some(r.algorithm);
    let mut kinds: Vec<AlgorithmKind> = records.iter().filter_map(curve_of).collect();
    kinds.sort_unstable_by_key(|a| a.name());
    kinds.dedup();
    let names: Vec<Option<AlgorithmKind>> = std::iter::once(None).chain(kinds.into_iter().map(Some)).collect();
    let tagged: Vec<Record> = records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            let i = names.iter().position(|n| *n == curve_of(&r)).expect("collected above");
            r.params.insert("algorithm_index".into(), i as f64);
            r
        })
        .collect();
    let model = records[0].model;
    let look = Look {
        name: format!("{model}_by_algorithm"),
        title: format!("{}, by algorithm", model.title()),
        metrics: default_metrics(model, AlgorithmKind::Objective),
    };
    let mut figures = grouped(
        &tagged,
        &PlotSpec {
            series: Some("algorithm_index".into()),
            ..spec.clone()
        },
        &look,
    )?;
    for f in &mut figures {
        f.series = Some("algorithm".into());
        for c in f.panels.iter_mut().flat_map(|p| p.curves.iter_mut()) {
            let name = c.series_value.map(|v| names[v as usize]);
            c.label = name.map(|n| n.map_or(NON_PRIVATE.to_string(), |a| a.name().to_string()));
            c.non_private = name == Some(None);
        }
    }
    Ok(figures)
}

/// The x coordinate of a record: a parameter, or the simulation's d for
/// x = "d" (theory records have none there).
fn x_value(r: &Record, x: &str) -> Option<f64> {
    if x == "d" {
        r.simulation.as_ref().map(|s| s.d as f64)
    } else {
        r.params.get(x).copied()
    }
}

/// Per series: theory points (x, y) and, per x (as bits), the simulated point
/// at the largest d with that d.
type SeriesData = (Vec<(f64, f64)>, BTreeMap<u64, (usize, SimPoint)>);

/// Runs of at least this many steps are drawn against a log time axis by default.
const LOG_TIME_FROM: f64 = 1000.0;

/// One metric's curves; `series` is the series parameter and the digits its values show.
fn panel(group: &[&Record], metric: &str, x: &str, series: Option<(&str, usize)>) -> Panel {
    let digits = series.map(|s| s.1);
    let series = series.map(|s| s.0);
    let mut by_series: BTreeMap<Option<u64>, SeriesData> = BTreeMap::new();
    if x == "t" {
        // DP-GD: each record is a whole path over steps t = 0..=T
        for r in group {
            let Some(path) = r.per_step.as_ref().and_then(|p| p.get(metric)) else {
                continue;
            };
            // the step of each value: `per_step_at`, or every step
            let step = |i: usize| r.per_step_at.as_ref().map_or(i, |at| at[i]) as f64;
            let entry = by_series.entry(series.map(|s| r.params[s].to_bits())).or_default();
            match &r.simulation {
                None => entry.0.extend(path.iter().enumerate().map(|(i, &v)| (step(i), v))),
                Some(sim) => {
                    let se = r.per_step_stderr.as_ref().and_then(|p| p.get(metric));
                    for (i, &v) in path.iter().enumerate() {
                        let stderr = se.map_or(0.0, |s| s[i]);
                        let p = SimPoint {
                            x: step(i),
                            mean: v,
                            stderr,
                        };
                        let slot = entry.1.entry(step(i).to_bits()).or_insert((sim.d, p));
                        if sim.d >= slot.0 {
                            *slot = (sim.d, p);
                        }
                    }
                }
            }
        }
    }
    for r in group.iter().filter(|_| x != "t") {
        let Some(&y) = r.metrics.get(metric) else { continue };
        let s = series.map(|s| r.params[s].to_bits());
        let entry = by_series.entry(s).or_default();
        match &r.simulation {
            // with x = "d" a theory value is a flat line, drawn below
            None => entry.0.push((x_value(r, x).unwrap_or(f64::NAN), y)),
            Some(sim) => {
                let xv = x_value(r, x).expect("simulation records have every x");
                let p = SimPoint {
                    x: xv,
                    mean: y,
                    stderr: sim.stderr.get(metric).copied().unwrap_or(0.0),
                };
                let slot = entry.1.entry(xv.to_bits()).or_insert((sim.d, p));
                if sim.d >= slot.0 {
                    *slot = (sim.d, p);
                }
            }
        }
    }
    if x == "d" {
        // theory is independent of d: a flat line over the simulated range
        for (theory, sims) in by_series.values_mut() {
            let (lo, hi) = sims.values().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v.1.x), b.max(v.1.x))
            });
            *theory = match theory.first() {
                Some(&(_, y)) if lo.is_finite() => vec![(lo, y), (hi, y)],
                _ => Vec::new(),
            };
        }
    }
    let curves = by_series
        .into_iter()
        .map(|(s, (mut theory, sims))| {
            theory.sort_by(|a, b| a.0.total_cmp(&b.0));
            let sim_d = if x == "d" {
                None
            } else {
                sims.values().map(|v| v.0).max()
            };
            let mut sim: Vec<SimPoint> = sims.into_values().map(|v| v.1).collect();
            sim.sort_by(|a, b| a.x.total_cmp(&b.x));
            let series_value = s.map(f64::from_bits);
            Curve {
                series_value,
                series_text: series_value.zip(digits).map(|(v, digits)| rounded(v, digits)),
                theory,
                sim,
                sim_d,
                label: None,
                non_private: series.zip(series_value).is_some_and(|(s, v)| is_non_private(s, v)),
            }
        })
        .collect();
    let s2: BTreeSet<u64> = group
        .iter()
        .filter_map(|r| r.params.get("s2"))
        .map(|v| v.to_bits())
        .collect();
    let reference = (metric == metrics::EST_ERR2 && s2.len() == 1).then(|| f64::from_bits(*s2.first().unwrap()));
    Panel {
        metric: metric.to_string(),
        curves,
        reference,
    }
}
