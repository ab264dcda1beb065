//! DP-SGD's ε under a batch-sampling scheme other than Poisson
//! ([`assess_sampled`]), printed with its assumption.

use super::query::{NoiseLevel, Participation, Query, QueryArgs};
use crate::error::Argument;
use propdp_core::AlgorithmKind;
use propdp_core::accountant::bracket::{BracketSettings, EpsilonBracket};
use propdp_core::accountant::events::Event;
use propdp_core::accountant::sampling::{SampledEpsilon, Sampling, sampled_epsilon};

/// DP-SGD's ε under a sampling scheme other than Poisson (fixed-size or
/// shuffled batches; `propdp_accountant::sampling`), with the neighbouring
/// relation, the sensitivity it implies and the assumption stated.
#[derive(Debug, Clone)]
pub struct SampledReport {
    /// The query (its noise given).
    pub query: Query,
    /// The accountant's answer.
    pub sampled: SampledEpsilon,
}

/// The ε of `args` (DP-SGD, its noise given) under `sampling`.
pub fn assess_sampled(args: &QueryArgs, sampling: Sampling) -> crate::Result<SampledReport> {
    if args.algorithm != AlgorithmKind::Dpsgd {
        return Err(Argument::new("sampling", " applies to DP-SGD only (give --algorithm dpsgd)".into()).into());
    }
    let query = args.query()?;
    if query.participation != Participation::POISSON {
        return Err(Argument::new(
            "groups",
            format!(
                " applies to Poisson sampling only (cyclic groups are their own sampling scheme): leave it out \
                 with sampling {}",
                sampling.name()
            ),
        )
        .into());
    }
    let NoiseLevel::Given(noise) = query.noise else {
        return Err(Argument::new(
            "noise",
            format!(
                " is required with sampling {}: give the noise to assess",
                sampling.name()
            ),
        )
        .into());
    };
    let run = query.dpsgd_run(noise);
    let event = Event::dpsgd(run.noise_multiplier, run.sample_rate, run.steps);
    let sampled = sampled_epsilon(
        sampling,
        &event,
        query.delta_priv,
        query.neighbouring,
        BracketSettings::default(),
    )
    .map_err(|e| {
        Argument::new(
            if e.argument() == "neighbouring" {
                "neighbouring"
            } else {
                "noise"
            },
            format!(": {e}"),
        )
    })?;
    Ok(SampledReport { query, sampled })
}

impl SampledReport {
    /// The report as `propdp privacy --sampling` prints it.
    pub fn text(&self) -> String {
        let (q, r) = (&self.query, &self.sampled);
        let relation = r.neighbouring.label();
        let bracket = |b: Option<EpsilonBracket>| match b {
            Some(b) if b.lower == b.upper => format!("ε = {:.6}", b.upper),
            Some(b) => format!("{:.6} ≤ ε ≤ {:.6}", b.lower, b.upper),
            None => "no finite ε".into(),
        };
        let mut s = format!(
            "DP-SGD with {} batches (T = {}, q = {}), {} neighbours, sensitivity {}C:\n  {} at δ = {:e} ({relation})\n  assumes: {}\n",
            r.sampling.name().replace('_', "-"),
            q.steps,
            q.sample_rate,
            r.neighbouring.label(),
            r.sensitivity,
            bracket(r.epsilon),
            q.delta_priv,
            r.assumption
        );
        if let Some(p) = r.if_poisson {
            s += &format!(
                "  if the batches had been Poisson-sampled: {} ({relation})\n",
                bracket(Some(p))
            );
        }
        s
    }

    /// The report as one JSON object.
    pub fn json(&self) -> serde_json::Value {
        let r = &self.sampled;
        serde_json::json!({
            "algorithm": "dpsgd",
            "sampling": r.sampling.name(),
            "neighbouring": r.neighbouring.label(),
            "sensitivity": r.sensitivity,
            "steps": self.query.steps,
            "sample_rate": self.query.sample_rate,
            "delta_priv": self.query.delta_priv,
            "epsilon": r.epsilon.map(|b| b.upper),
            "epsilon_lower": r.epsilon.map(|b| b.lower),
            "epsilon_if_poisson": r.if_poisson.map(|b| b.upper),
            "assumption": r.assumption,
        })
    }
}
