//! `propdp privacy`: its arguments, and the guarantee of a noise level,
//! the noise of a budget or the certified ε of a DP-SGD schedule.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use propdp::Result;
use propdp::core::accountant::Neighbouring;
use propdp::core::accountant::calibrate::Knob;
use propdp::core::accountant::sampling::Sampling;
use propdp::core::{AlgorithmKind, ModelKind};
use propdp::privacy::{Query, QueryArgs};

/// Arguments of `propdp privacy` (defaults and checks: `propdp::privacy::QueryArgs`).
#[derive(Debug, Args)]
pub(crate) struct PrivacyArgs {
    /// objective | output | dpgd | dpsgd
    #[arg(long)]
    algorithm: AlgorithmKind,
    /// huber | logistic | least_squares [required, except for DP-SGD with --clip (or a --schedule of clipped
    /// segments), whose guarantee is the clip's whatever the model]
    #[arg(long)]
    model: Option<ModelKind>,
    /// Huber threshold M, the Huber loss's Lipschitz constant [model huber only; default 1].
    #[arg(long, allow_hyphen_values = true)]
    huber_m: Option<f64>,
    /// Ridge λ [objective and output perturbation only; default 1].
    #[arg(long, allow_hyphen_values = true)]
    lambda: Option<f64>,
    /// The noise: σ (objective, DP-GD, DP-SGD) or τ (output). Omit to calibrate it to --epsilon or --rho.
    #[arg(long, allow_hyphen_values = true)]
    noise: Option<f64>,
    /// Steps T [DP-GD and DP-SGD only; default 1].
    #[arg(long)]
    steps: Option<u64>,
    /// DP-SGD's Poisson sample rate q, 0 < q ≤ 1 [DP-SGD only, required there].
    #[arg(long, allow_hyphen_values = true)]
    sample_rate: Option<f64>,
    /// DP-SGD's per-example clipping norm C (default: none; the loss's Lipschitz constant bounds the gradient).
    #[arg(long, allow_hyphen_values = true)]
    clip: Option<f64>,
    /// DP-SGD in G cyclic groups (amplified BandMF): only group t mod G is eligible at step t, each of its rows
    /// taken with probability --sample-rate; certified as Poisson DP-SGD over ⌈T/G⌉ rounds [DP-SGD only;
    /// default 1].
    #[arg(long)]
    groups: Option<u64>,
    /// The bands of DP-SGD's correlated-noise strategy, at most --groups [DP-SGD only; default 1: independent
    /// noise]; more bands than groups have no certified ε here.
    #[arg(long)]
    bands: Option<u64>,
    /// Print the report as one JSON object (for scripts).
    #[arg(long)]
    json: bool,
    /// replace-one | add-remove-one (or replace_one | add_remove_one) [default: replace-one; add-remove-one with
    /// --groups, amplified BandMF's relation and jax_privacy's]
    #[arg(long, value_parser = parse_neighbouring)]
    neighbouring: Option<Neighbouring>,
    /// Target ε (with --delta-priv) for calibration.
    #[arg(long, allow_hyphen_values = true)]
    epsilon: Option<f64>,
    /// δ of the (ε, δ) guarantee [default 1e-6].
    #[arg(long, allow_hyphen_values = true)]
    delta_priv: Option<f64>,
    /// Target zCDP ρ for calibration (instead of --epsilon).
    #[arg(long, allow_hyphen_values = true)]
    rho: Option<f64>,
    /// Objective perturbation calibrated to a target whose floor exceeds half of it: auto (default) adds the
    /// extra ridge Δ that brings the floor to half the target (the mechanism runs at λ + Δ, reported);
    /// refuse keeps λ.
    #[arg(long, value_parser = parse_extra_ridge)]
    extra_ridge: Option<propdp::core::accountant::ExtraRidge>,
    /// A DP-SGD schedule: a TOML file of [[segment]] tables with noise, sample_rate, steps and optional clip,
    /// and [[objective]] tables (lambda, noise) for models released by objective perturbation
    /// (instead of --noise/--sample-rate/--steps/--clip; its certified ε at --delta-priv; nothing is
    /// calibrated, so not with --calibrate).
    #[arg(
        long,
        conflicts_with_all = ["noise", "epsilon", "rho", "steps", "sample_rate", "clip", "lambda", "calibrate", "groups", "bands"]
    )]
    schedule: Option<PathBuf>,
    /// What --epsilon or --rho calibrates: noise (default), or DP-SGD's steps or sample-rate (give the noise and
    /// the other one); on the certified ε, never above the target.
    #[arg(long, value_parser = parse_knob)]
    calibrate: Option<Knob>,
    /// DP-SGD's batches: poisson (default), fixed-size (b of n without replacement; replace-one) or shuffled
    /// (no amplification, the Poisson figure beside it); with --noise, or with --schedule for every segment.
    #[arg(long, value_parser = parse_sampling, conflicts_with_all = ["calibrate"])]
    sampling: Option<Sampling>,
    /// Also print what the guarantee means for membership inference: the largest TPR any attack reaches at
    /// FPR 1e-5 … 0.1, and μ-GDP (exact for the Gaussian mechanisms, the central-limit approximation for DP-SGD).
    #[arg(long, conflicts_with_all = ["schedule", "sampling"])]
    membership_inference: bool,
}

pub(crate) fn parse_sampling(s: &str) -> std::result::Result<Sampling, String> {
    Sampling::parse(s).ok_or_else(|| format!("{s:?}: allowed poisson, fixed-size, shuffled"))
}

pub(crate) fn parse_knob(s: &str) -> std::result::Result<Knob, String> {
    Knob::parse(s).ok_or_else(|| format!("{s:?}: allowed noise, steps, sample-rate"))
}

/// `propdp privacy --schedule FILE`: the certified ε of a DP-SGD schedule.
pub(crate) fn privacy_schedule(args: &PrivacyArgs) -> Result<ExitCode> {
    let path = args.schedule.as_deref().expect("called with a schedule");
    if args.algorithm != AlgorithmKind::Dpsgd {
        return Err(propdp::Error::compute(format!(
            "--schedule is a DP-SGD schedule: give --algorithm dpsgd (not {})",
            args.algorithm.name()
        )));
    }
    let mut q = QueryArgs::new(args.algorithm, args.model()?);
    q.huber_m = args.huber_m;
    // the model's loss constants, checked as for any query (a placeholder rate, noise and clip:
    // each segment's own clip is checked by the schedule, naming it — a least-squares schedule
    // is private when every segment clips)
    q.sample_rate = Some(1.0);
    q.noise = Some(1.0);
    q.clip = Some(1.0);
    let model = q.query()?.model;
    let report = propdp::privacy::schedule::assess_file(
        path,
        &model,
        args.neighbouring.unwrap_or(Neighbouring::ReplaceOne),
        args.sampling.unwrap_or(Sampling::Poisson),
        args.delta_priv.unwrap_or(1e-6),
    )?;
    if args.json {
        println!("{}", report.json());
    } else {
        print!("{}", report.text());
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn parse_neighbouring(s: &str) -> Result<Neighbouring, String> {
    match s {
        "replace-one" | "replace_one" => Ok(Neighbouring::ReplaceOne),
        "add-remove-one" | "add_remove_one" => Ok(Neighbouring::AddRemoveOne),
        _ => Err(format!("{s:?}: allowed replace-one, add-remove-one")),
    }
}

/// `--extra-ridge`: auto or refuse.
pub(crate) fn parse_extra_ridge(s: &str) -> Result<propdp::core::accountant::ExtraRidge, String> {
    propdp::core::accountant::ExtraRidge::from_name(s).ok_or_else(|| format!("{s:?} is invalid: allowed auto, refuse"))
}

impl PrivacyArgs {
    /// The model: `--model`, or without it for DP-SGD that clips (`--clip`,
    /// or a schedule, whose segments must each clip) a loss that is not
    /// Lipschitz — least squares, L = ∞, so the sensitivity min(C, L) is the
    /// clip C: the guarantee any model gets; otherwise refused naming `model`.
    fn model(&self) -> Result<ModelKind> {
        if let Some(m) = self.model {
            return Ok(m);
        }
        if self.algorithm == AlgorithmKind::Dpsgd && (self.clip.is_some() || self.schedule.is_some()) {
            return Ok(ModelKind::LeastSquares);
        }
        Err(propdp::privacy::Argument {
            argument: "model",
            also: None,
            text: " is required (huber | logistic | least_squares): the guarantee depends on the loss's Lipschitz \
                   constant, except for DP-SGD with --clip, whose guarantee is the clip's"
                .to_string(),
        }
        .into())
    }

    fn query(&self) -> Result<Query> {
        Ok(self.query_args()?.query()?)
    }

    fn query_args(&self) -> Result<QueryArgs> {
        Ok(QueryArgs {
            huber_m: self.huber_m,
            lambda: self.lambda,
            steps: self.steps,
            sample_rate: self.sample_rate,
            clip: self.clip,
            groups: self.groups,
            bands: self.bands,
            neighbouring: self.neighbouring,
            delta_priv: self.delta_priv,
            noise: self.noise,
            epsilon: self.epsilon,
            rho: self.rho,
            extra_ridge: self.extra_ridge,
            ..QueryArgs::new(self.algorithm, self.model()?)
        })
    }
}

/// `propdp privacy`: a schedule's certified ε, ε under another sampling
/// scheme, or the guarantee (or calibrated knob) of one run, printed as
/// text or JSON (with the membership-inference reading if asked).
pub(crate) fn privacy(args: &PrivacyArgs) -> Result<ExitCode> {
    if args.schedule.is_some() {
        return privacy_schedule(args);
    }
    if let Some(sampling) = args.sampling.filter(|s| *s != Sampling::Poisson) {
        return propdp::privacy::assess_sampled(&args.query_args()?, sampling).map(|r| {
            if args.json {
                println!("{}", r.json());
            } else {
                print!("{}", r.text());
            }
            ExitCode::SUCCESS
        });
    }
    let r = match args.calibrate {
        Some(knob) => args
            .query_args()
            .and_then(|a| propdp::privacy::calibrate_knob(&a, knob)),
        None => args.query().and_then(|q| propdp::privacy::assess(&q)),
    }?;
    let membership = args
        .membership_inference
        .then(|| propdp::privacy::membership(&r))
        .transpose()?;
    if args.json {
        let mut j = r.json();
        if args.model.is_none() {
            // the guarantee of any model: none was named
            j["model"] = serde_json::Value::Null;
        }
        if let Some(m) = &membership {
            j["membership_inference"] = m.json();
        }
        println!("{j}");
    } else {
        print!("{}", r.text());
        if let Some(m) = &membership {
            print!("{}", m.text());
        }
    }
    Ok(ExitCode::SUCCESS)
}
