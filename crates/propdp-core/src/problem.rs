//! A fully specified, validated problem instance: one sweep point.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error::ConfigError;

/// Law of the regression noise ε (SPEC.md §1). Every law here is a Gaussian
/// scale mixture ε = S·G, which the theory exploits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "law", rename_all = "snake_case")]
pub enum NoiseLaw {
    /// N(0, sd²).
    Gaussian { sd: f64 },
    /// scale · t_dof.
    StudentT { dof: f64, scale: f64 },
    /// Laplace with density e^{−|x|/scale}/(2·scale).
    Laplace { scale: f64 },
    /// (1−p)·N(0, sd²) + p·N(0, outlier_sd²).
    Contaminated { sd: f64, p: f64, outlier_sd: f64 },
}

impl NoiseLaw {
    /// Variance of ε, or `None` when infinite (Student-t with dof ≤ 2).
    ///
    /// ```
    /// use propdp_core::NoiseLaw;
    /// assert_eq!(NoiseLaw::Laplace { scale: 1.0 }.variance(), Some(2.0));
    /// assert_eq!(NoiseLaw::StudentT { dof: 2.0, scale: 1.0 }.variance(), None);
    /// ```
    pub fn variance(&self) -> Option<f64> {
        match *self {
            NoiseLaw::Gaussian { sd } => Some(sd * sd),
            NoiseLaw::StudentT { dof, scale } => (dof > 2.0).then(|| scale * scale * dof / (dof - 2.0)),
            NoiseLaw::Laplace { scale } => Some(2.0 * scale * scale),
            NoiseLaw::Contaminated { sd, p, outlier_sd } => Some((1.0 - p) * sd * sd + p * outlier_sd * outlier_sd),
        }
    }

    /// Range checks, naming the field (`noise.sd`, …).
    pub fn check(&self) -> Result<(), ConfigError> {
        match *self {
            NoiseLaw::Gaussian { sd } => nonneg("noise.sd", sd),
            NoiseLaw::StudentT { dof, scale } => {
                positive("noise.dof", dof)?;
                positive("noise.scale", scale)
            }
            NoiseLaw::Laplace { scale } => positive("noise.scale", scale),
            NoiseLaw::Contaminated { sd, p, outlier_sd } => {
                nonneg("noise.sd", sd)?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(ConfigError::range("noise.p", p, "0 ≤ p ≤ 1"));
                }
                positive("noise.outlier_sd", outlier_sd)
            }
        }
    }

    /// The law's parameters by config name (`noise.sd`, …).
    pub fn params(&self) -> Vec<(&'static str, f64)> {
        match *self {
            NoiseLaw::Gaussian { sd } => vec![("noise.sd", sd)],
            NoiseLaw::StudentT { dof, scale } => vec![("noise.dof", dof), ("noise.scale", scale)],
            NoiseLaw::Laplace { scale } => vec![("noise.scale", scale)],
            NoiseLaw::Contaminated { sd, p, outlier_sd } => {
                vec![("noise.sd", sd), ("noise.p", p), ("noise.outlier_sd", outlier_sd)]
            }
        }
    }

    /// Config name of the law.
    pub fn name(&self) -> &'static str {
        match self {
            NoiseLaw::Gaussian { .. } => "gaussian",
            NoiseLaw::StudentT { .. } => "student_t",
            NoiseLaw::Laplace { .. } => "laplace",
            NoiseLaw::Contaminated { .. } => "contaminated",
        }
    }
}

/// Law of the rows xᵢ (entries of variance 1/d).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// N(0, 1/d) entries.
    Gaussian,
    /// ±1/√d entries (‖xᵢ‖ = 1 exactly).
    Rademacher,
    /// Gaussian rows projected onto the unit ball.
    GaussianProjected,
}

/// Law of the coordinates of θ*, all with E[Θ²] = s².
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "law", rename_all = "snake_case", deny_unknown_fields)]
pub enum Prior {
    /// N(0, s²).
    #[default]
    Gaussian,
    /// ±s with probability ½ each.
    TwoPoint,
    /// N(0, s²/p) with probability p, else 0.
    Sparse { p: f64 },
}

/// Statistical model (SPEC.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Model {
    /// y = xᵀθ* + ε, loss ρ_M(y − xᵀθ) (Huber, threshold M).
    Huber { huber_m: f64, noise: NoiseLaw },
    /// P(y = +1 | x) = sigmoid(xᵀθ*), loss log(1 + exp(−y xᵀθ)).
    Logistic,
}

impl Model {
    /// Config name: `huber` or `logistic`.
    pub fn name(&self) -> &'static str {
        match self {
            Model::Huber { .. } => "huber",
            Model::Logistic => "logistic",
        }
    }
}

/// DP learning algorithm (SPEC.md §1), F(θ) = Σᵢ ℓᵢ(θ) + (λ/2)‖θ‖².
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Algorithm {
    /// θ̂ = argmin F(θ) + σ bᵀθ.
    Objective { lambda: f64, sigma: f64 },
    /// θ̂ = argmin F(θ) + τ b.
    Output { lambda: f64, tau: f64 },
    /// DP full-batch gradient descent: θ₀ = 0,
    /// θ_{t+1} = θ_t − η(∇F(θ_t) + σ ξ_t), t = 0..steps−1 (SPEC.md §1, DMFT.md).
    Dpgd {
        lambda: f64,
        sigma: f64,
        eta: f64,
        steps: usize,
        loss_variant: LossVariant,
    },
}

/// Which loss DP-GD descends (DMFT.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossVariant {
    /// The model's loss with random labels: ρ_M(y − r) or log(1 + e^{−yr}).
    #[default]
    Standard,
    /// The conditional-expectation loss given the teacher field ν:
    /// E_e ρ_M(ν + e − r) (Gaussian noise e) or log(1 + eʳ) − sigmoid(ν) r.
    Conditional,
}

impl Algorithm {
    /// Config name: `objective` or `output`.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Objective { .. } => "objective",
            Algorithm::Output { .. } => "output",
            Algorithm::Dpgd { .. } => "dpgd",
        }
    }

    /// Ridge strength λ.
    pub fn lambda(&self) -> f64 {
        match *self {
            Algorithm::Objective { lambda, .. } | Algorithm::Output { lambda, .. } | Algorithm::Dpgd { lambda, .. } => {
                lambda
            }
        }
    }
}

/// A privacy budget the point's noise was calibrated to (SPEC.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub target: Target,
    pub neighbouring: crate::accountant::Neighbouring,
}

/// The notion and level of a budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "notion", rename_all = "snake_case")]
pub enum Target {
    /// (ε, δ)-DP.
    Approx { epsilon: f64, delta_priv: f64 },
    /// ρ-zCDP.
    Zcdp { rho: f64 },
}

impl Target {
    /// The parameter name of the budget's level: "epsilon" or "rho".
    pub fn param(&self) -> &'static str {
        match self {
            Target::Approx { .. } => "epsilon",
            Target::Zcdp { .. } => "rho",
        }
    }

    /// The level: ε or ρ.
    pub fn level(&self) -> f64 {
        match *self {
            Target::Approx { epsilon, .. } => epsilon,
            Target::Zcdp { rho } => rho,
        }
    }
}

impl Budget {
    /// The smallest noise of `kind` on `model` meeting this budget, or None
    /// when no noise does.
    ///
    /// ```
    /// use propdp_core::accountant::{MechanismKind, Neighbouring};
    /// use propdp_core::problem::{Budget, Target};
    /// use propdp_core::Model;
    /// let b = Budget { target: Target::Zcdp { rho: 0.5 }, neighbouring: Neighbouring::ReplaceOne };
    /// // DP-GD, T = 10 steps: ρ = μ²/2 with μ = √T·2/σ
    /// let sigma = b.calibrate(&Model::Logistic, MechanismKind::Dpgd { steps: 10 }).unwrap();
    /// assert!((sigma / 40f64.sqrt() - 1.0).abs() < 1e-9);
    /// ```
    pub fn calibrate(&self, model: &Model, kind: crate::accountant::MechanismKind) -> Option<f64> {
        let mech = crate::accountant::Mechanism::new(model, kind, self.neighbouring);
        match self.target {
            Target::Approx { epsilon, delta_priv } => mech.calibrate(epsilon, delta_priv),
            Target::Zcdp { rho } => mech.calibrate_rho(rho),
        }
    }
}

/// One problem instance: aspect ratio δ = d/n, prior energy s² = E[Θ²],
/// model and algorithm (and the budget its noise was calibrated to, if any).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub delta: f64,
    pub s2: f64,
    pub model: Model,
    pub algorithm: Algorithm,
    #[serde(default)]
    pub budget: Option<Budget>,
}

impl Point {
    /// A validated point.
    ///
    /// ```
    /// use propdp_core::{Point, Model, Algorithm, NoiseLaw};
    /// let huber = Model::Huber { huber_m: 1.0, noise: NoiseLaw::Gaussian { sd: 0.5 } };
    /// let ok = Point::new(0.5, 1.0, huber, Algorithm::Objective { lambda: 1.0, sigma: 2.0 });
    /// assert!(ok.is_ok());
    /// // λ = 0 with σ > 0: the objective is unbounded below.
    /// let bad = Point::new(0.5, 1.0, huber, Algorithm::Objective { lambda: 0.0, sigma: 2.0 });
    /// assert!(bad.unwrap_err().to_string().contains("algorithm.lambda"));
    /// ```
    pub fn new(delta: f64, s2: f64, model: Model, algorithm: Algorithm) -> Result<Self, ConfigError> {
        let p = Point {
            delta,
            s2,
            model,
            algorithm,
            budget: None,
        };
        p.check()?;
        Ok(p)
    }

    /// Range checks of every field, naming the field, the value and the allowed range.
    pub fn check(&self) -> Result<(), ConfigError> {
        positive("problem.delta", self.delta)?;
        positive("problem.s2", self.s2)?;
        if let Model::Huber { huber_m, noise } = self.model {
            positive("problem.huber_m", huber_m)?;
            noise.check()?;
        }
        let (lambda, noise_name, noise) = match self.algorithm {
            Algorithm::Objective { lambda, sigma } => (lambda, "algorithm.sigma", sigma),
            Algorithm::Output { lambda, tau } => (lambda, "algorithm.tau", tau),
            Algorithm::Dpgd { lambda, sigma, .. } => (lambda, "algorithm.sigma", sigma),
        };
        nonneg("algorithm.lambda", lambda)?;
        nonneg(noise_name, noise)?;
        if lambda == 0.0 && noise > 0.0 {
            let allowed = match self.algorithm {
                Algorithm::Objective { .. } => {
                    "λ > 0 when σ > 0 (with λ = 0 the perturbed objective is unbounded below)"
                }
                Algorithm::Output { .. } => "λ > 0 when τ > 0 (output perturbation's sensitivity is 2LR/λ)",
                // DP-GD runs a fixed number of steps: λ = 0 is well defined
                Algorithm::Dpgd { .. } => return self.check_dpgd(),
            };
            return Err(ConfigError::range("algorithm.lambda", lambda, allowed));
        }
        self.check_dpgd()
    }

    /// Smoothness bound of F = Σℓ + (λ/2)‖θ‖² for Gaussian designs:
    /// L = β·λ_max(XᵀX) + λ with λ_max(XᵀX) → (1 + √δ)²/δ (Marchenko–Pastur
    /// edge) and β = sup ℓ'' (1 for Huber, 1/4 for logistic).
    pub fn smoothness(&self) -> f64 {
        let beta = match self.model {
            Model::Huber { .. } => 1.0,
            Model::Logistic => 0.25,
        };
        beta * (1.0 + self.delta.sqrt()).powi(2) / self.delta + self.algorithm.lambda()
    }

    /// DP-GD checks: η > 0 and below the divergence threshold 2/L of
    /// noiseless gradient descent, 1 ≤ steps ≤ 10000, and the conditional
    /// Huber loss only with Gaussian noise.
    fn check_dpgd(&self) -> Result<(), ConfigError> {
        let Algorithm::Dpgd {
            eta,
            steps,
            loss_variant,
            ..
        } = self.algorithm
        else {
            return Ok(());
        };
        positive("algorithm.eta", eta)?;
        let limit = 2.0 / self.smoothness();
        if eta >= limit {
            return Err(ConfigError::range(
                "algorithm.eta",
                eta,
                &format!(
                    "η < 2/L = {limit:.4} at δ = {} (noiseless gradient descent diverges above)",
                    self.delta
                ),
            ));
        }
        if !(1..=10_000).contains(&steps) {
            return Err(ConfigError::range("algorithm.steps", steps, "1 ≤ steps ≤ 10000"));
        }
        if loss_variant == LossVariant::Conditional
            && let Model::Huber { noise, .. } = self.model
            && !matches!(noise, NoiseLaw::Gaussian { .. })
        {
            return Err(ConfigError::range(
                "algorithm.loss_variant",
                "\"conditional\"",
                "\"standard\" unless noise.law = \"gaussian\" (the conditional Huber loss averages over Gaussian noise)",
            ));
        }
        Ok(())
    }

    /// Every parameter of the point by its config name.
    pub fn params(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        match self.budget.map(|b| b.target) {
            Some(Target::Approx { epsilon, delta_priv }) => {
                m.insert("epsilon".into(), epsilon);
                m.insert("delta_priv".into(), delta_priv);
            }
            Some(Target::Zcdp { rho }) => {
                m.insert("rho".into(), rho);
            }
            None => {}
        }
        m.insert("delta".into(), self.delta);
        m.insert("s2".into(), self.s2);
        if let Model::Huber { huber_m, noise } = self.model {
            m.insert("huber_m".into(), huber_m);
            for (k, v) in noise.params() {
                m.insert(k.into(), v);
            }
        }
        match self.algorithm {
            Algorithm::Objective { lambda, sigma } => {
                m.insert("lambda".into(), lambda);
                m.insert("sigma".into(), sigma);
            }
            Algorithm::Output { lambda, tau } => {
                m.insert("lambda".into(), lambda);
                m.insert("tau".into(), tau);
            }
            Algorithm::Dpgd {
                lambda,
                sigma,
                eta,
                steps,
                ..
            } => {
                m.insert("lambda".into(), lambda);
                m.insert("sigma".into(), sigma);
                m.insert("eta".into(), eta);
                m.insert("steps".into(), steps as f64);
            }
        }
        m
    }
}

pub(crate) fn positive(field: &str, x: f64) -> Result<(), ConfigError> {
    if x > 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::range(field, x, "> 0 and finite"))
    }
}

pub(crate) fn nonneg(field: &str, x: f64) -> Result<(), ConfigError> {
    if x >= 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::range(field, x, "≥ 0 and finite"))
    }
}
