//! The privacy guarantee of an algorithm's noise in every notion, or the
//! smallest noise meeting a target (ε, δ) or ρ (docs/theory.md §4) — what
//! `propdp privacy` prints.

use anyhow::{Result, anyhow, bail};
use propdp_core::accountant::{Mechanism, MechanismKind, Neighbouring, ObjectiveBound, mu_dpgd, mu_output};
use propdp_core::{AlgorithmKind, Model};

/// The noise to assess: given, or calibrated to a target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoiseLevel {
    /// σ (objective, DP-GD) or τ (output).
    Given(f64),
    /// The smallest noise meeting (ε, δ_priv).
    Epsilon(f64),
    /// The smallest noise meeting ρ-zCDP.
    Rho(f64),
}

/// A mechanism and its noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Query {
    /// The algorithm.
    pub algorithm: AlgorithmKind,
    /// The model (its loss constants L and β enter the guarantee).
    pub model: Model,
    /// Ridge λ (objective and output perturbation).
    pub lambda: f64,
    /// DP-GD steps T.
    pub steps: usize,
    /// The neighbouring relation.
    pub neighbouring: Neighbouring,
    /// δ of the (ε, δ) guarantee.
    pub delta_priv: f64,
    /// The noise.
    pub noise: NoiseLevel,
}

/// The guarantee of a noise level in every notion.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The query.
    pub query: Query,
    /// The noise assessed (calibrated when the query gave a target).
    pub noise: f64,
    /// μ of μ-GDP (output perturbation, DP-GD).
    pub mu: Option<f64>,
    /// ρ of ρ-zCDP.
    pub rho: f64,
    /// Objective perturbation's privacy-loss bound c + A|Z| (add/remove-one): (c, A).
    pub objective_bound: Option<(f64, f64)>,
    /// Objective perturbation's RDP ε(α) at α = 2, 8, 32 (add/remove-one).
    pub rdp: Vec<(f64, f64)>,
    /// ε at `delta_priv`; `None` when no finite ε reaches it.
    pub epsilon: Option<f64>,
}

impl Query {
    fn mechanism(&self) -> Mechanism {
        let kind = match self.algorithm {
            AlgorithmKind::Objective => MechanismKind::Objective { lambda: self.lambda },
            AlgorithmKind::Output => MechanismKind::Output { lambda: self.lambda },
            AlgorithmKind::Dpgd => MechanismKind::Dpgd { steps: self.steps },
        };
        Mechanism::new(&self.model, kind, self.neighbouring)
    }
}

/// Range checks of a query's mechanism, naming the argument: 0 < δ < 1, and
/// λ > 0 for objective and output perturbation (their sensitivity bounds
/// need a ridge).
pub fn check(algorithm: AlgorithmKind, lambda: f64, delta_priv: f64) -> Result<()> {
    if !(delta_priv > 0.0 && delta_priv < 1.0) {
        bail!("--delta-priv = {delta_priv} is invalid: allowed 0 < δ < 1");
    }
    if let Err(e) = algorithm.check_lambda(lambda, true) {
        bail!("--lambda = {lambda} is invalid: {e}");
    }
    Ok(())
}

/// The guarantee of the query's noise (calibrated first when it names a target).
///
/// ```
/// use propdp::privacy::{assess, NoiseLevel, Query};
/// use propdp::core::{accountant::Neighbouring, AlgorithmKind, Model};
/// let q = Query {
///     algorithm: AlgorithmKind::Output, model: Model::Logistic, lambda: 1.0, steps: 1,
///     neighbouring: Neighbouring::ReplaceOne, delta_priv: 1e-6, noise: NoiseLevel::Epsilon(1.0),
/// };
/// let r = assess(&q).unwrap();
/// assert!((r.epsilon.unwrap() - 1.0).abs() < 1e-9);
/// assert!((r.mu.unwrap() - 2.0 / r.noise).abs() < 1e-12); // μ = 2LR/(λτ)
/// ```
pub fn assess(q: &Query) -> Result<Report> {
    check(q.algorithm, q.lambda, q.delta_priv)?;
    let mech = q.mechanism();
    let noise = match q.noise {
        NoiseLevel::Given(n) if n > 0.0 => n,
        NoiseLevel::Given(n) => bail!("--noise = {n} is invalid: allowed > 0"),
        NoiseLevel::Rho(rho) => mech.calibrate_rho(rho).ok_or_else(|| {
            anyhow!(
                "--rho = {rho}: no noise level reaches ρ-zCDP (allowed ρ > 0, and above the objective-perturbation floor)"
            )
        })?,
        NoiseLevel::Epsilon(eps) if eps >= 0.0 => mech
            .calibrate(eps, q.delta_priv)
            .ok_or_else(|| anyhow!("no noise level reaches (ε = {eps}, δ = {}) ", q.delta_priv))?,
        NoiseLevel::Epsilon(eps) => bail!("--epsilon = {eps} is invalid: allowed ε ≥ 0"),
    };
    let (l, beta) = (mech.lipschitz, mech.smoothness);
    let (mu, objective_bound, rdp) = match q.algorithm {
        AlgorithmKind::Output => (Some(mu_output(l, 1.0, q.lambda, noise, q.neighbouring)), None, vec![]),
        AlgorithmKind::Dpgd => (Some(mu_dpgd(l, 1.0, q.steps, noise, q.neighbouring)), None, vec![]),
        AlgorithmKind::Objective => {
            let b = ObjectiveBound::new(l, beta, 1.0, q.lambda, noise);
            let rdp = [2.0, 8.0, 32.0].iter().map(|&a| (a, b.rdp(a))).collect();
            (None, Some((b.c(), b.a)), rdp)
        }
    };
    Ok(Report {
        query: *q,
        noise,
        mu,
        rho: mech.rho(noise),
        objective_bound,
        rdp,
        epsilon: mech.epsilon(noise, q.delta_priv),
    })
}

impl Report {
    /// The report as `propdp privacy` prints it.
    pub fn text(&self) -> String {
        let q = &self.query;
        let mut s = match q.noise {
            NoiseLevel::Given(_) => String::new(),
            NoiseLevel::Epsilon(eps) => format!(
                "calibrated noise for (ε = {eps}, δ = {}): {:.6}\n",
                q.delta_priv, self.noise
            ),
            NoiseLevel::Rho(rho) => format!("calibrated noise for ρ = {rho} (zCDP): {:.6}\n", self.noise),
        };
        let model = match q.model.kind() {
            propdp_core::ModelKind::Huber => "Huber",
            propdp_core::ModelKind::Logistic => "Logistic",
        };
        let what = match q.algorithm {
            AlgorithmKind::Dpgd => "DP-GD",
            a => a.title(),
        };
        s += &format!(
            "{what} of a {model} model, noise {}, {} neighbours:\n",
            self.noise,
            q.neighbouring.label()
        );
        if let Some(mu) = self.mu {
            s += &format!("  μ-GDP: μ = {mu:.6}\n");
            s += &format!("  zCDP: ρ = μ²/2 = {:.6}\n", self.rho);
        }
        if let Some((c, a)) = self.objective_bound {
            s += &format!("  loss bound c + A|Z|: c = {c:.6}, A = {a:.6} (add/remove-one)\n");
            s += &format!("  zCDP: ρ = {:.6}\n", self.rho);
            let parts: Vec<String> = self.rdp.iter().map(|(a, e)| format!("ε({a}) = {e:.6}")).collect();
            s += &format!("  RDP (add/remove-one): {}\n", parts.join(", "));
        }
        s += &match self.epsilon {
            Some(e) => format!("  (ε, δ)-DP: ε = {e:.6} at δ = {}\n", q.delta_priv),
            None => format!("  (ε, δ)-DP: no finite ε reaches δ = {}\n", q.delta_priv),
        };
        s
    }
}
