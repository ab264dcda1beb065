//! `propdp infer`: its arguments, and a private fit with confidence
//! intervals written to a directory.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use propdp::core::accountant::{ExtraRidge, Neighbouring};

use crate::privacy::{parse_extra_ridge, parse_neighbouring};

/// Arguments of `propdp infer` (checks: `propdp::inference::Spec::check`).
#[derive(Debug, Args)]
pub(crate) struct InferArgs {
    /// The data: a CSV file with a header row, or a 2-D float64 .npy array
    /// (columns x0, x1, …); every column but the label is a feature.
    data: PathBuf,
    /// The label column (logistic: ±1 or 0/1).
    #[arg(long)]
    label: String,
    /// logistic | huber
    #[arg(long)]
    model: String,
    /// objective | output | dpsgd
    #[arg(long, default_value = "objective")]
    algorithm: String,
    /// DP-SGD: steps T [algorithm dpsgd].
    #[arg(long)]
    steps: Option<usize>,
    /// DP-SGD: step size η on the summed gradient [algorithm dpsgd].
    #[arg(long, allow_hyphen_values = true)]
    eta: Option<f64>,
    /// DP-SGD: Poisson sample rate q (1: full-batch DP-GD) [algorithm dpsgd; default 1].
    #[arg(long, allow_hyphen_values = true)]
    sample_rate: Option<f64>,
    /// DP-SGD: per-example clipping norm C [algorithm dpsgd; default none: L·row_norm bounds the gradient].
    #[arg(long, allow_hyphen_values = true)]
    clip: Option<f64>,
    /// Ridge λ.
    #[arg(long = "lambda", allow_hyphen_values = true)]
    lambda: f64,
    /// The budget ε of everything released.
    #[arg(long, allow_hyphen_values = true)]
    epsilon: f64,
    /// The budget's δ.
    #[arg(long, default_value_t = 1e-6, allow_hyphen_values = true)]
    delta_priv: f64,
    /// replace-one | add-remove-one
    #[arg(long, default_value = "replace-one", value_parser = parse_neighbouring)]
    neighbouring: Neighbouring,
    /// Rows with ‖x‖ above it are projected onto the ball (the mechanism's sensitivity needs the bound).
    #[arg(long, allow_hyphen_values = true)]
    row_norm: f64,
    /// Huber threshold M [model huber].
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    huber_m: f64,
    /// The label noise's law if known [model huber], as JSON in the config's
    /// spelling, e.g. '{"law": "student_t", "dof": 3, "scale": 0.5}'.
    #[arg(long)]
    noise: Option<String>,
    /// A public feature covariance Σ (d × d, .npy or CSV with a header row): the rows are whitened by it.
    #[arg(long)]
    covariance: Option<PathBuf>,
    /// The share of the rows held out of the fit, on which θ̂'s test error is released (0: none).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    holdout: f64,
    /// The clip B of the held-out squared error [model huber; default (3M)²].
    #[arg(long, allow_hyphen_values = true)]
    test_clip: Option<f64>,
    /// Objective perturbation whose floor 2·log(1 + βR²/λ) (add/remove:
    /// log(1 + βR²/λ)) exceeds half of ε: auto adds the extra ridge Δ that
    /// brings it to ε/2 and spends the other half on the noise (the standard
    /// algorithm; Δ and λ + Δ are reported); refuse keeps λ and refuses ε at
    /// or below the floor.
    #[arg(long, default_value = "auto", value_parser = parse_extra_ridge)]
    extra_ridge: ExtraRidge,
    /// Standardise the columns first: each clipped, centred and scaled by
    /// released means and standard deviations (three Gaussian releases
    /// charged to the ledger; the coefficients are then per released sd).
    #[arg(long)]
    standardize: bool,
    /// Fit an intercept (a constant feature) [default: true for logistic,
    /// false for huber]. Logistic labels off balance without one are refused.
    #[arg(long)]
    intercept: Option<bool>,
    /// The intervals' level.
    #[arg(long, default_value_t = 0.95, allow_hyphen_values = true)]
    level: f64,
    /// Seed of the privacy noise [default: fresh randomness]. The seed is
    /// never written to the report or printed: anyone holding it regenerates
    /// the noise and subtracts it, voiding the guarantee. To reproduce a
    /// release, choose a seed, keep it secret, and pass it again.
    #[arg(long)]
    seed: Option<u64>,
    /// Output directory (intervals.csv and report.json must not exist in it).
    #[arg(long)]
    out: PathBuf,
}

/// `propdp infer`.
pub(crate) fn infer(a: &InferArgs) -> propdp::Result<ExitCode> {
    use propdp::core::{Algorithm, LossVariant};
    use propdp::inference::{Glm, Spec};
    let bad = |arg: &str, v: &str, allowed: &str| -> propdp::Error {
        propdp::Error::compute(format!("--{arg} {v:?} is invalid: allowed {allowed}"))
    };
    let model = match a.model.as_str() {
        "logistic" => Glm::Logistic,
        "huber" => Glm::Huber { m: a.huber_m },
        v => return Err(bad("model", v, "logistic, huber")),
    };
    let lambda = a.lambda;
    let descent_flags = a.steps.is_some() || a.eta.is_some() || a.sample_rate.is_some() || a.clip.is_some();
    // the noise is 0 until the budget calibrates it
    let algorithm = match a.algorithm.as_str() {
        "objective" | "output" if descent_flags => {
            return Err(propdp::Error::compute(
                "--steps, --eta, --sample-rate and --clip apply to --algorithm dpsgd only",
            ));
        }
        "objective" => Algorithm::Objective { lambda, sigma: 0.0 },
        "output" => Algorithm::Output { lambda, tau: 0.0 },
        "dpsgd" => match (a.steps, a.eta) {
            (Some(steps), Some(eta)) => Algorithm::Dpsgd {
                lambda,
                sigma: 0.0,
                eta,
                steps,
                loss_variant: LossVariant::Standard,
                sample_rate: a.sample_rate.unwrap_or(1.0),
                clip: a.clip,
                groups: 1,
                strategy: propdp::core::problem::Strategy::IDENTITY,
            },
            _ => return Err(propdp::Error::compute("--algorithm dpsgd needs --steps and --eta")),
        },
        v => return Err(bad("algorithm", v, "objective, output, dpsgd")),
    };
    if !(a.level > 0.0 && a.level < 1.0) {
        return Err(bad("level", &a.level.to_string(), "0 < level < 1"));
    }
    let spec = Spec {
        model,
        algorithm,
        epsilon: a.epsilon,
        delta_priv: a.delta_priv,
        neighbouring: a.neighbouring,
        row_norm: a.row_norm,
        holdout: a.holdout,
        test_clip: a.test_clip,
        extra_ridge: a.extra_ridge,
        standardize: a.standardize,
        intercept: a.intercept.unwrap_or_else(|| Spec::default_intercept(model)),
        noise: match &a.noise {
            None => None,
            Some(text) => Some(
                serde_json::from_str(text)
                    .map_err(|e| propdp::Error::compute(format!("--noise {text:?} is not a noise law ({e})")))?,
            ),
        },
    };
    let fit = propdp::inference::fit_file(&a.data, &a.label, &spec, a.seed, a.covariance.as_deref())?;
    fit.write(&a.out, 1.0 - a.level)?;
    print!("{}", fit.text());
    eprintln!(
        "wrote {} and {}",
        a.out.join("intervals.csv").display(),
        a.out.join("report.json").display()
    );
    Ok(ExitCode::SUCCESS)
}
