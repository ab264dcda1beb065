//! What a tune run reports: its outcome ([`TuneOutcome`], one [`Cell`]
//! per problem point, budget and algorithm), the verdict of each (δ,
//! budget) — its winner — the printed table and the winner maps.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Result;
use propdp_core::AlgorithmKind;
use propdp_core::accountant::Neighbouring;
use propdp_core::problem::{Budget, Target};

use super::best::{Best, NonPrivate, TrainingRun, sig3};
use super::types;

/// One tuned cell: a problem point, a budget and an algorithm.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The problem parameters other than δ (one winner map per facet).
    pub facet: String,
    /// δ.
    pub delta: f64,
    /// The budget level, ε or ρ.
    pub level: f64,
    /// The algorithm.
    pub algorithm: AlgorithmKind,
    /// The optimum; `None` when no hyperparameters reach the budget.
    pub best: Option<Best>,
}

/// What a tune search found.
#[derive(Debug)]
pub struct TuneOutcome {
    /// The output directory.
    pub dir: PathBuf,
    /// Every (problem point, budget, algorithm) cell, in search order.
    pub cells: Vec<Cell>,
    /// The non-private reference of each problem point.
    pub references: Vec<NonPrivate>,
    /// The metric minimised.
    pub metric: String,
    /// The budget's parameter: "epsilon" or "rho".
    pub param: &'static str,
    /// The first budget: its notion (and δ_priv) and neighbouring relation,
    /// which every budget of the search shares.
    pub budget: Budget,
    /// The algorithms compared.
    pub algorithms: Vec<AlgorithmKind>,
    /// The figures drawn (frontiers and winner maps).
    pub figures: Vec<PathBuf>,
}

impl TuneOutcome {
    /// The table `propdp tune` prints: per δ and budget, the best metric of
    /// each algorithm with its hyperparameters, the winner, its margin and
    /// the price of privacy.
    pub fn table(&self) -> String {
        table(&self.cells, &self.references, &self.metric, &self.budget)
    }

    /// The optimums file.
    pub fn file(&self) -> PathBuf {
        self.dir.join("tune.jsonl")
    }
}

/// Winner maps into `figures`: all algorithms, then (with three) each pair,
/// e.g. objective vs output; one map per facet of the problem parameters.
/// Returns the files written.
pub(super) fn draw_winner_maps(
    cells: &[Cell],
    names: &[AlgorithmKind],
    metric: &str,
    (param, target, neighbouring): (&str, Target, Neighbouring),
    figures: &Path,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut sets = vec![names.to_vec()];
    if names.len() > 2 {
        for (i, a) in names.iter().enumerate() {
            sets.extend(names[i + 1..].iter().map(|b| vec![*a, *b]));
        }
    }
    for set in sets.iter().filter(|s| s.len() > 1) {
        let subset: Vec<&Cell> = cells.iter().filter(|c| set.contains(&c.algorithm)).collect();
        let (stem, title) = if set.len() == names.len() {
            ("winner_map".to_string(), format!("Lowest predicted {metric}"))
        } else {
            let set: Vec<&str> = set.iter().map(|a| a.name()).collect();
            (
                format!("winner_map_{}", set.join("_vs_")),
                format!("Lowest predicted {metric}: {}", set.join(" vs ")),
            )
        };
        let relation = neighbouring.label();
        let notion = match target {
            Target::Approx { delta_priv, .. } => format!("δ_priv = {delta_priv}"),
            Target::Zcdp { .. } => "ρ-zCDP".to_string(),
        };
        for (k, (facet, map)) in winner_maps(&subset).into_iter().enumerate() {
            let name = if k == 0 { stem.clone() } else { format!("{stem}_{k}") };
            let note = [facet.as_str(), &format!("{notion}, {relation}")]
                .iter()
                .filter(|p| !p.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("; ");
            let spec = propdp_plot::winner_map::MapSpec {
                title: &title,
                note: &note,
                algorithms: set,
                palette_order: names,
                budget: param,
            };
            files.extend(propdp_plot::winner_map::write(&map, &spec, figures, &name)?);
        }
    }
    Ok(files)
}

/// The verdict at one (facet, δ, ε).
struct Verdict<'a> {
    /// The lowest predicted metric among the algorithms reaching the budget.
    winner: Option<&'a Cell>,
    /// (runner-up − winner)/winner; ∞ without a runner-up.
    margin: f64,
    /// The gap to the runner-up is within 2 combined RQMC standard errors of
    /// the DMFT predictions: no winner can be declared.
    tie: bool,
}

/// The verdict of each (facet, δ, ε) among the algorithms that reach the budget.
fn winners<'a>(cells: &[&'a Cell]) -> BTreeMap<(String, u64, u64), Verdict<'a>> {
    let mut groups: BTreeMap<(String, u64, u64), Vec<&Cell>> = BTreeMap::new();
    for &c in cells {
        groups
            .entry((c.facet.clone(), c.delta.to_bits(), c.level.to_bits()))
            .or_default()
            .push(c);
    }
    let se = |c: &Cell| c.best.as_ref().and_then(|b| b.tuned.stderr).unwrap_or(0.0);
    groups
        .into_iter()
        .map(|(k, group)| {
            let mut reached: Vec<&Cell> = group.into_iter().filter(|c| c.best.is_some()).collect();
            reached.sort_by(|a, b| value(a).total_cmp(&value(b)));
            let (margin, tie) = match reached.as_slice() {
                [w, r, ..] => (
                    (value(r) - value(w)) / value(w).abs(),
                    value(r) - value(w) <= 2.0 * se(w).hypot(se(r)),
                ),
                _ => (f64::INFINITY, false),
            };
            let winner = reached.first().copied();
            (k, Verdict { winner, margin, tie })
        })
        .collect()
}

fn value(c: &Cell) -> f64 {
    c.best.as_ref().map_or(f64::INFINITY, |b| b.tuned.value)
}

fn winner_maps(cells: &[&Cell]) -> Vec<(String, Vec<propdp_plot::winner_map::WinnerCell>)> {
    let mut maps: BTreeMap<String, Vec<propdp_plot::winner_map::WinnerCell>> = BTreeMap::new();
    for ((facet, _, _), v) in winners(cells) {
        if let Some(w) = v.winner {
            maps.entry(facet)
                .or_default()
                .push(propdp_plot::winner_map::WinnerCell {
                    delta: w.delta,
                    budget: w.level,
                    winner: w.algorithm,
                    margin: v.margin,
                    tie: v.tie,
                });
        }
    }
    maps.into_iter().collect()
}

/// The budgets' privacy notion and neighbouring relation, as every table
/// and figure of a search names them: "(ε, δ_priv = 1e-6)-DP, replace-one
/// neighbours" or "ρ-zCDP, replace-one neighbours".
pub(super) fn budget_note(budget: &Budget) -> String {
    let relation = budget.neighbouring.label();
    match budget.target {
        Target::Approx { delta_priv, .. } => format!("(ε, δ_priv = {delta_priv:e})-DP, {relation} neighbours"),
        Target::Zcdp { .. } => format!("ρ-zCDP, {relation} neighbours"),
    }
}

/// [`budget_note`] short enough for a figure's one-line title:
/// "replace-one, δ_priv = 1e-6" or "ρ-zCDP, replace-one".
pub(super) fn budget_short(budget: &Budget) -> String {
    let relation = budget.neighbouring.label();
    match budget.target {
        Target::Approx { delta_priv, .. } => format!("{relation}, δ_priv = {delta_priv:e}"),
        Target::Zcdp { .. } => format!("ρ-zCDP, {relation}"),
    }
}

fn table(cells: &[Cell], references: &[NonPrivate], metric: &str, budget: &Budget) -> String {
    let param = budget.target.param();
    let note = budget_note(budget);
    let mut out = format!(
        "budgets: {note}\n{:>7} {:>7}  best {metric} per algorithm: predicted [simulated ± se, when checked] (tuned hyperparameters)  winner (margin)  price (winner/non-private)\n",
        "δ",
        propdp_core::parameters::symbol(param)
    );
    let all: Vec<&Cell> = cells.iter().collect();
    let w = winners(&all);
    let mut facet: Option<&str> = None;
    let mut delta: Option<u64> = None;
    let mut reference_value: Option<f64> = None;
    // the cells of one (facet, δ, budget), consecutive in search order (a
    // shard holds only some of them)
    let same = |a: &Cell, b: &Cell| {
        (&a.facet, a.delta.to_bits(), a.level.to_bits()) == (&b.facet, b.delta.to_bits(), b.level.to_bits())
    };
    for group in cells.chunk_by(same) {
        let c0 = &group[0];
        if facet != Some(c0.facet.as_str()) {
            facet = Some(c0.facet.as_str());
            delta = None;
            let _ = writeln!(out, "── {} ──", c0.facet);
        }
        if delta != Some(c0.delta.to_bits()) {
            delta = Some(c0.delta.to_bits());
            let reference = references
                .iter()
                .find(|r| r.params["delta"] == c0.delta && types::facet(&r.params) == c0.facet);
            if let Some(r) = reference {
                let _ = writeln!(
                    out,
                    "{:>7.3} {:>7}  non-private {:.4} (λ={})",
                    c0.delta,
                    "∞",
                    r.value,
                    sig3(r.lambda)
                );
            }
            reference_value = reference.map(|r| r.value);
        }
        let text: Vec<String> = group
            .iter()
            .map(|c| match &c.best {
                Some(b) => format!("{} {}", c.algorithm, b.describe()),
                None => format!("{} unreachable", c.algorithm),
            })
            .collect();
        let v = &w[&(c0.facet.clone(), c0.delta.to_bits(), c0.level.to_bits())];
        let verdict = match v.winner {
            Some(x) if v.tie => format!("tie ({} +{:.3}%, within RQMC error)", x.algorithm, 100.0 * v.margin),
            Some(x) if v.margin.is_finite() => format!("{} (+{:.3}%)", x.algorithm, 100.0 * v.margin),
            Some(x) => x.algorithm.to_string(),
            None => "none".into(),
        };
        // the price of privacy: the winner's metric over the non-private one
        let price = match (v.winner.and_then(|x| x.best.as_ref()), reference_value) {
            (Some(b), Some(r)) if r > 0.0 => format!("  price ×{:.2}", b.tuned.value / r),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:>7.3} {:>7.3}  {}  {verdict}{price}",
            c0.delta,
            c0.level,
            text.join("  ")
        );
    }
    out += &training_table(cells, budget);
    out += &correlated_table(cells, metric);
    out += &epochs_table(cells, metric, budget);
    out += "(* optimum at the edge of the searched range: λ = lambda_min/lambda_max; DP-GD, DP-SGD: λ = lambda_max, \
            T = max of tune.steps (or of tune.epochs at that q) or η at a tenth of the smallest tune.eta_fraction; \
            DP-SGD: q = min of tune.sample_rate, or C = min or max of tune.clip)\n";
    out
}

/// The DP-SGD optima run with correlated noise (`tune.strategies`; empty
/// without): the best correlated run at the optimum's hyperparameters and
/// budget, its step size searched again, whether it beats the optimum, and
/// jax_privacy's names for it.
fn correlated_table(cells: &[Cell], metric: &str) -> String {
    let rows: Vec<(&Cell, &Best, &crate::mechanism::Candidate)> = cells
        .iter()
        .filter_map(|c| {
            c.best
                .as_ref()
                .and_then(|b| b.correlated_noise.as_ref().map(|k| (c, b, k)))
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "DP-SGD's optima with correlated noise (BandMF in G cyclic groups at rate q·G, the same expected batch and \
         budget, or a BLT in G = ⌈1/q⌉ groups in the fixed order; jax_privacy: noise_multiplier, sampling_prob, \
         num_bands or min_sep = G; η searched again from the optimum's):\n{:>7} {:>7}  {:>12} {:>12}  \
         {:>4} {:>10} {:>9} {:>9} {:>15} {:>13}  {}\n",
        "δ", "level", "DP-SGD", "correlated", "G", "origin", "η", "σ", "noise_mult.", "sampling_prob", metric
    );
    for (c, b, k) in rows {
        let clip = b.tuned.clip.unwrap_or(1.0);
        let origin = k.origin.label();
        let _ = writeln!(
            out,
            "{:>7.3} {:>7.3}  {:>12} {:>12}  {:>4} {:>10} {:>9} {:>9} {:>15} {:>13}  {}",
            c.delta,
            c.level,
            sig3(b.tuned.value),
            sig3(k.predicted),
            k.groups,
            origin,
            k.eta.map_or("–".into(), sig3),
            sig3(k.sigma),
            sig3(k.jax_privacy(clip)["noise_multiplier"].as_f64().unwrap_or(f64::NAN)),
            sig3(k.sample_rate),
            if k.predicted < b.tuned.value {
                "correlated noise wins"
            } else {
                "DP-SGD wins"
            }
        );
    }
    out
}

/// The DP-GD/DP-SGD optima as a training loop sets them (empty without
/// any), with the budget's relation named and, beside the budget, the same
/// run's ε (or ρ) under add/remove-one, the relation of Opacus, TF-Privacy
/// and dp_accounting.
fn training_table(cells: &[Cell], budget: &Budget) -> String {
    let param = budget.target.param();
    let symbol = propdp_core::parameters::symbol(param);
    let rows: Vec<(&Cell, &Best, &TrainingRun)> = cells
        .iter()
        .filter_map(|c| c.best.as_ref().and_then(|b| b.training.as_ref().map(|t| (c, b, t))))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let opt = |x: Option<f64>| x.map_or("—".to_string(), sig3);
    let relation = budget.neighbouring.label();
    let mut out = format!(
        "training runs at {} ({symbol} {relation}: the budget; {symbol} add/remove: the same run under \
         add/remove-one neighbours, as Opacus, TF-Privacy and dp_accounting report it, by propdp's accountant; \
         z = σ/min(C, L), the noise multiplier; B = q·n at n = d/δ of [simulation] d; \
         lr = η·B for a loop that averages the batch's gradients, rows with E‖x‖² = 1):\n{:>7} {:>13} {:>13}  {:9} \
         {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8}\n",
        budget_note(budget),
        "δ",
        format!("{symbol} {relation}"),
        format!("{symbol} add/remove"),
        "algorithm",
        "z",
        "B",
        "epochs",
        "T",
        "q",
        "C",
        "η",
        "λ",
        "σ/B",
        "lr"
    );
    for (c, b, t) in rows {
        let v = &b.tuned;
        let add_remove = match budget.target {
            Target::Approx { .. } => t.epsilon_add_remove,
            Target::Zcdp { .. } => t.rho_add_remove,
        };
        let _ = writeln!(
            out,
            "{:>7.3} {:>13.3} {:>13}  {:9} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8}",
            c.delta,
            c.level,
            add_remove.map_or("—".to_string(), |e| format!("{e:.3}")),
            c.algorithm.name(),
            opt(t.noise_multiplier),
            opt(t.batch_size),
            sig3(t.epochs),
            v.steps.unwrap_or(0),
            sig3(v.sample_rate.unwrap_or(1.0)),
            opt(v.clip),
            opt(v.eta),
            sig3(v.lambda),
            opt(t.noise_per_example),
            opt(t.learning_rate),
        );
    }
    out
}

/// DP-SGD's best run within each epochs budget (`tune.epochs`), every run
/// at the full privacy budget: the privacy–compute–utility table (empty
/// without several epochs).
fn epochs_table(cells: &[Cell], metric: &str, budget: &Budget) -> String {
    let param = budget.target.param();
    let rows: Vec<(&Cell, &Best)> = cells
        .iter()
        .filter_map(|c| c.best.as_ref().filter(|b| !b.per_epochs.is_empty()).map(|b| (c, b)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "best run per epochs budget E = q·T (each at the full privacy budget, {}):\n{:>7} {:>7}  {:9} {:>7} {:>10}  run\n",
        budget_note(budget),
        "δ",
        propdp_core::parameters::symbol(param),
        "algorithm",
        "epochs",
        metric
    );
    for (c, b) in rows {
        for v in &b.per_epochs {
            let epochs = v.sample_rate.unwrap_or(1.0) * v.steps.unwrap_or(0) as f64;
            let _ = writeln!(
                out,
                "{:>7.3} {:>7.3}  {:9} {:>7} {:>10.4}  {}",
                c.delta,
                c.level,
                c.algorithm.name(),
                sig3(epochs),
                v.value,
                v.run()
            );
        }
    }
    out
}
