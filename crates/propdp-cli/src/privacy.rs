//! `propdp privacy`: the guarantee of an algorithm's noise in every notion,
//! or the smallest noise meeting a target (ε, δ) (SPEC.md §4).

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use propdp_core::accountant::*;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Alg {
    Objective,
    Output,
    Dpgd,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModelArg {
    Huber,
    Logistic,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Relation {
    ReplaceOne,
    AddRemoveOne,
}

/// Arguments of `propdp privacy`.
#[derive(Debug, Args)]
pub struct PrivacyArgs {
    #[arg(long, value_enum)]
    algorithm: Alg,
    #[arg(long, value_enum)]
    model: ModelArg,
    /// Huber threshold M (Lipschitz constant of the Huber loss).
    #[arg(long, default_value_t = 1.0)]
    huber_m: f64,
    /// Ridge λ (objective and output perturbation).
    #[arg(long, default_value_t = 1.0)]
    lambda: f64,
    /// The noise: σ (objective, DP-GD) or τ (output). Omit to calibrate it to --epsilon.
    #[arg(long)]
    noise: Option<f64>,
    /// DP-GD steps T.
    #[arg(long, default_value_t = 1)]
    steps: usize,
    #[arg(long, value_enum, default_value_t = Relation::ReplaceOne)]
    neighbouring: Relation,
    /// Target ε (with --delta-priv) for calibration.
    #[arg(long)]
    epsilon: Option<f64>,
    /// δ of the (ε, δ) guarantee.
    #[arg(long, default_value_t = 1e-6)]
    delta_priv: f64,
    /// Target zCDP ρ for calibration (instead of --epsilon).
    #[arg(long, conflicts_with = "epsilon")]
    rho: Option<f64>,
}

impl PrivacyArgs {
    fn relation(&self) -> Neighbouring {
        match self.neighbouring {
            Relation::ReplaceOne => Neighbouring::ReplaceOne,
            Relation::AddRemoveOne => Neighbouring::AddRemoveOne,
        }
    }

    fn mechanism(&self) -> Mechanism {
        let model = match self.model {
            ModelArg::Huber => propdp_core::Model::Huber {
                huber_m: self.huber_m,
                noise: propdp_core::NoiseLaw::Gaussian { sd: 1.0 },
            },
            ModelArg::Logistic => propdp_core::Model::Logistic,
        };
        let kind = match self.algorithm {
            Alg::Objective => MechanismKind::Objective { lambda: self.lambda },
            Alg::Output => MechanismKind::Output { lambda: self.lambda },
            Alg::Dpgd => MechanismKind::Dpgd { steps: self.steps },
        };
        Mechanism::new(&model, kind, self.relation())
    }
}

pub fn command(a: &PrivacyArgs) -> Result<ExitCode> {
    if !(a.delta_priv > 0.0 && a.delta_priv < 1.0) {
        bail!("--delta-priv = {} is invalid: allowed 0 < δ < 1", a.delta_priv);
    }
    if matches!(a.algorithm, Alg::Objective | Alg::Output) && a.lambda <= 0.0 {
        bail!(
            "--lambda = {} is invalid: allowed λ > 0 (the sensitivity bounds need a ridge)",
            a.lambda
        );
    }
    let noise = match (a.noise, a.epsilon, a.rho) {
        (Some(n), _, _) if n > 0.0 => n,
        (Some(n), _, _) => bail!("--noise = {n} is invalid: allowed > 0"),
        (None, None, Some(rho)) => {
            let n = a
                .mechanism()
                .calibrate_rho(rho)
                .ok_or_else(|| anyhow::anyhow!("--rho = {rho}: no noise level reaches ρ-zCDP (allowed ρ > 0, and above the objective-perturbation floor)"))?;
            println!("calibrated noise for ρ = {rho} (zCDP): {n:.6}");
            n
        }
        (None, Some(eps), _) if eps >= 0.0 => {
            let n = a
                .mechanism()
                .calibrate(eps, a.delta_priv)
                .ok_or_else(|| anyhow::anyhow!("no noise level reaches (ε = {eps}, δ = {}) ", a.delta_priv))?;
            println!("calibrated noise for (ε = {eps}, δ = {}): {n:.6}", a.delta_priv);
            n
        }
        _ => bail!("give --noise, or --epsilon (≥ 0) or --rho (> 0) to calibrate the noise"),
    };
    let rel = match a.relation() {
        Neighbouring::ReplaceOne => "replace-one",
        Neighbouring::AddRemoveOne => "add/remove-one",
    };
    let what = match a.algorithm {
        Alg::Objective => "objective perturbation",
        Alg::Output => "output perturbation",
        Alg::Dpgd => "DP-GD",
    };
    println!("{what} of a {:?} model, noise {noise}, {rel} neighbours:", a.model);
    let mech = a.mechanism();
    let (l, beta) = (mech.lipschitz, mech.smoothness);
    match a.algorithm {
        Alg::Output | Alg::Dpgd => {
            let mu = match a.algorithm {
                Alg::Output => mu_output(l, 1.0, a.lambda, noise, a.relation()),
                _ => mu_dpgd(l, 1.0, a.steps, noise, a.relation()),
            };
            println!("  μ-GDP: μ = {mu:.6}");
            println!("  zCDP: ρ = μ²/2 = {:.6}", mech.rho(noise));
        }
        Alg::Objective => {
            let b = ObjectiveBound::new(l, beta, 1.0, a.lambda, noise);
            println!(
                "  loss bound c + A|Z|: c = {:.6}, A = {:.6} (add/remove-one)",
                b.c(),
                b.a
            );
            println!("  zCDP: ρ = {:.6}", mech.rho(noise));
            println!(
                "  RDP (add/remove-one): ε(2) = {:.6}, ε(8) = {:.6}, ε(32) = {:.6}",
                b.rdp(2.0),
                b.rdp(8.0),
                b.rdp(32.0)
            );
        }
    }
    match mech.epsilon(noise, a.delta_priv) {
        Some(e) => println!("  (ε, δ)-DP: ε = {e:.6} at δ = {}", a.delta_priv),
        None => println!("  (ε, δ)-DP: no finite ε reaches δ = {}", a.delta_priv),
    }
    Ok(ExitCode::SUCCESS)
}
