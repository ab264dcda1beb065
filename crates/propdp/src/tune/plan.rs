//! A `[tune]` config parsed into the plan of its search: its problem
//! points, budgets and candidates, its cells in search order, how each
//! algorithm kind is searched ([`Method`]), and the checks of a config and
//! of an optimum read back.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Context, Result};
use propdp_core::config::TuneConfig;
use propdp_core::config::tune::Horizons;
use propdp_core::problem::Budget;
use propdp_core::record::Provenance;
use propdp_core::{AlgorithmKind, Point};

use super::best::Best;
use super::descent;
use super::ridge::Perturbation;
use super::types::{CellKey, facet};
use crate::run::load_rows;

/// How a search tunes an algorithm kind: every kind listed, so a new kind
/// is a compile error here until it has a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    /// λ alone ([`super::ridge`]).
    Ridge(Perturbation),
    /// (q, T, η, C, λ) by descent over the candidates ([`descent`]).
    Descent(descent::Kind),
}

impl Method {
    /// The search of `kind`.
    pub(super) fn of(kind: AlgorithmKind) -> Method {
        match kind {
            AlgorithmKind::Objective => Method::Ridge(Perturbation::Objective),
            AlgorithmKind::Output => Method::Ridge(Perturbation::Output),
            AlgorithmKind::Dpgd => Method::Descent(descent::Kind::Dpgd),
            AlgorithmKind::Dpsgd => Method::Descent(descent::Kind::Dpsgd),
        }
    }
}

/// A parsed `[tune]` config and its cells, in search order (problem point,
/// then budget, then algorithm).
pub(super) struct Plan {
    /// The config text.
    pub(super) text: String,
    pub(super) cfg: TuneConfig,
    pub(super) points: Vec<Point>,
    pub(super) budgets: Vec<Budget>,
    pub(super) horizons: Horizons,
    pub(super) fractions: Vec<f64>,
    pub(super) sample_rates: Vec<f64>,
    pub(super) clips: Vec<Option<f64>>,
    /// The feature covariance (`problem.covariance`), or isotropic features.
    pub(super) covariance: Option<propdp_core::covariance::Covariance>,
    /// The rows of `[simulation] data` the optima are simulated on, or drawn rows.
    pub(super) real: Option<std::sync::Arc<propdp_sim::real::RealData>>,
    /// (problem point, budget, algorithm) of every cell.
    pub(super) cells: Vec<(usize, usize, AlgorithmKind)>,
}

impl Plan {
    pub(super) fn new(text: &str, label: &str) -> Result<Plan> {
        // a covariance file is read relative to the config's directory (when the label names the file)
        let path = std::path::Path::new(label);
        let dir = path.is_file().then(|| path.parent()).flatten();
        // s2 and noise from the covariance file's effective model, when the config leaves them out
        let text = &propdp_core::effective_model::complete(text, dir).with_context(|| format!("in config {label}"))?;
        let (cfg, points) = TuneConfig::from_toml_str(text).with_context(|| format!("in config {label}"))?;
        let covariance = cfg.covariance_in(dir).with_context(|| format!("in config {label}"))?;
        let real = match (
            cfg.data_in(dir).with_context(|| format!("in config {label}"))?,
            &cfg.simulation,
        ) {
            (Some(file), Some(sim)) => Some(
                load_rows(&file, sim, &points, covariance.as_ref()).with_context(|| format!("in config {label}"))?,
            ),
            _ => None,
        };
        let t = &cfg.tune;
        let budgets = t.budgets()?;
        if budgets.is_empty() {
            return Err(crate::error::Error::compute("tune: no budgets".to_string()));
        }
        let cells = (0..points.len())
            .flat_map(|p| (0..budgets.len()).flat_map(move |b| t.algorithms.iter().map(move |&k| (p, b, k))))
            .collect();
        Ok(Plan {
            text: text.to_string(),
            horizons: t.horizons()?,
            fractions: t.dpgd_eta_fractions()?,
            sample_rates: t.sample_rates()?,
            clips: t.clips()?,
            covariance,
            real,
            cfg,
            points,
            budgets,
            cells,
        })
    }

    /// The DP-GD or DP-SGD candidates of the search.
    /// The DP-GD or DP-SGD candidates of the search.
    pub(super) fn candidates(&self, kind: descent::Kind) -> descent::Candidates<'_> {
        let (sample_rates, clips): (&[f64], &[Option<f64>]) = match kind {
            descent::Kind::Dpgd => (&[1.0], &[None]),
            descent::Kind::Dpsgd => (&self.sample_rates, &self.clips),
        };
        descent::Candidates {
            kind,
            sample_rates,
            horizons: &self.horizons,
            fractions: &self.fractions,
            clips,
            search: self.cfg.tune.search,
            covariance: self.covariance.as_ref(),
        }
    }

    /// The cell of every key.
    pub(super) fn cell_of(&self) -> BTreeMap<CellKey, usize> {
        (0..self.cells.len()).map(|c| (self.key(c), c)).collect()
    }

    /// Whether an optimum read back (resume, merge) is one this search could
    /// have written: a cell of the plan (of `mine`, when given) and
    /// [`Best::conforms`] to it. Its cell, or the field at fault.
    pub(super) fn check(
        &self,
        b: &Best,
        cell_of: &BTreeMap<CellKey, usize>,
        mine: Option<&BTreeSet<usize>>,
        provenance: &Provenance,
    ) -> Result<usize, String> {
        let Some(&c) = cell_of.get(&b.key()) else {
            return Err("not a cell of this config (δ, budget, problem parameters or algorithm differ)".into());
        };
        if mine.is_some_and(|m| !m.contains(&c)) {
            return Err(format!("cell {c} belongs to another shard"));
        }
        let (p, budget, _) = self.cells[c];
        b.conforms(&self.points[p], self.budgets[budget], &self.cfg.tune.metric, provenance)?;
        Ok(c)
    }

    /// The key of cell `c`.
    pub(super) fn key(&self, c: usize) -> CellKey {
        let (p, b, kind) = self.cells[c];
        let base = &self.points[p];
        (
            facet(&base.problem_params()),
            base.delta().to_bits(),
            self.budgets[b].target.level().to_bits(),
            kind,
        )
    }
}

/// Whether `text` is a tune config: TOML with a top-level `[tune]` table.
pub fn is_tune_config(text: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("tune"))
}

/// Fails, naming `tune.metric` and the metrics on offer, when the theory of
/// `kind` does not predict `metric` for this model.
pub(super) fn check_metric(base: &Point, kind: AlgorithmKind, metric: &str) -> Result<()> {
    let offered = propdp_core::metrics::offered(base.model().kind(), kind);
    if !offered.contains(&metric) {
        return Err(propdp_core::ConfigError::OutOfRange {
            field: "tune.metric".into(),
            value: format!("\"{metric}\""),
            allowed: format!(
                "a metric the theory of {kind} predicts for this model: {}",
                offered.join(", ")
            ),
        }
        .into());
    }
    Ok(())
}
