//! Sweep expansion: the Cartesian product of every parameter's values.
//!
//! Axes are ordered with δ innermost, so consecutive points trace one curve
//! in δ and solvers can warm-start along it.

use std::collections::BTreeMap;

use crate::accountant::{Mechanism, MechanismKind, Neighbouring};
use crate::config::{AlgorithmKind, ModelKind, NoiseKind, RawConfig};
use crate::error::ConfigError;
use crate::problem::{Algorithm, Budget, Model, NoiseLaw, Point, Target};

/// One swept (or fixed) parameter: its config name and values.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<f64>,
}

/// The expanded sweep of a config.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Outermost first; `delta` is last.
    pub axes: Vec<Axis>,
    points: Vec<Point>,
}

impl Sweep {
    /// Expand and validate every point of a structurally checked config.
    pub fn from_raw(raw: &RawConfig) -> Result<Sweep, ConfigError> {
        let mut axes = Vec::new();
        let mut push = |name: &str, spec: &crate::param::ParamSpec| -> Result<(), ConfigError> {
            let field = config_field(name);
            axes.push(Axis {
                name: name.to_string(),
                values: spec.values(&field)?,
            });
            Ok(())
        };
        let p = &raw.problem;
        push("s2", &p.s2)?;
        if let Some(m) = &p.huber_m {
            push("huber_m", m)?;
        }
        if let Some(noise) = &p.noise {
            for (name, spec) in noise.fields() {
                if let Some(spec) = spec {
                    push(&format!("noise.{name}"), spec)?;
                }
            }
        }
        let a = &raw.algorithm;
        push("lambda", &a.lambda)?;
        if let Some(s) = &a.sigma {
            push("sigma", s)?;
        }
        if let Some(t) = &a.tau {
            push("tau", t)?;
        }
        if let Some(e) = &a.epsilon {
            push("epsilon", e)?;
        }
        if let Some(r) = &a.rho {
            push("rho", r)?;
        }
        if let Some(e) = &a.eta {
            push("eta", e)?;
        }
        if let Some(t) = &a.steps {
            push("steps", t)?;
        }
        push("delta", &p.delta)?;

        let kinds = Kinds {
            model: p.model,
            noise: p.noise.as_ref().map(|n| n.law),
            algorithm: a.kind,
            loss_variant: a.loss_variant.unwrap_or_default(),
            delta_priv: a.delta_priv,
            neighbouring: a.neighbouring.unwrap_or(Neighbouring::ReplaceOne),
        };
        let total: usize = axes.iter().map(|a| a.values.len()).product();
        let mut points = Vec::with_capacity(total);
        let mut idx = vec![0usize; axes.len()];
        for _ in 0..total {
            let map: BTreeMap<&str, f64> = axes
                .iter()
                .zip(&idx)
                .map(|(ax, &i)| (ax.name.as_str(), ax.values[i]))
                .collect();
            points.push(kinds.point(&map)?);
            // odometer, last axis fastest
            for k in (0..axes.len()).rev() {
                idx[k] += 1;
                if idx[k] < axes[k].values.len() {
                    break;
                }
                idx[k] = 0;
            }
        }
        Ok(Sweep { axes, points })
    }

    /// The points, δ varying fastest.
    pub fn points(&self) -> &[Point] {
        &self.points
    }

    /// Names of the axes that take more than one value.
    pub fn swept_axes(&self) -> Vec<&str> {
        self.axes
            .iter()
            .filter(|a| a.values.len() > 1)
            .map(|a| a.name.as_str())
            .collect()
    }
}

/// Field path in the config file of a parameter name.
fn config_field(name: &str) -> String {
    match name {
        "lambda" | "sigma" | "tau" | "eta" | "steps" | "epsilon" | "rho" => format!("algorithm.{name}"),
        _ => format!("problem.{name}"),
    }
}

struct Kinds {
    model: ModelKind,
    noise: Option<NoiseKind>,
    algorithm: AlgorithmKind,
    loss_variant: crate::problem::LossVariant,
    /// δ of an (ε, δ) budget.
    delta_priv: Option<f64>,
    /// Relation of a budget (ε or ρ) the noise is calibrated to.
    neighbouring: Neighbouring,
}

impl Kinds {
    fn point(&self, v: &BTreeMap<&str, f64>) -> Result<Point, ConfigError> {
        let mut v = v.clone();
        let target = match (self.delta_priv, v.get("epsilon"), v.get("rho")) {
            (Some(delta_priv), Some(&epsilon), _) => Some(Target::Approx { epsilon, delta_priv }),
            (_, _, Some(&rho)) => Some(Target::Zcdp { rho }),
            _ => None,
        };
        let budget = match target {
            Some(target) => {
                let noise = self.calibrated_noise(&v, target)?;
                v.insert(
                    if self.algorithm == AlgorithmKind::Output {
                        "tau"
                    } else {
                        "sigma"
                    },
                    noise,
                );
                Some(Budget {
                    target,
                    neighbouring: self.neighbouring,
                })
            }
            None => None,
        };
        let g = |k: &str| v[k];
        let model = match self.model {
            ModelKind::Logistic => Model::Logistic,
            ModelKind::Huber => {
                let noise = match self.noise.expect("huber config checked to have noise") {
                    NoiseKind::Gaussian => NoiseLaw::Gaussian { sd: g("noise.sd") },
                    NoiseKind::StudentT => NoiseLaw::StudentT {
                        dof: g("noise.dof"),
                        scale: g("noise.scale"),
                    },
                    NoiseKind::Laplace => NoiseLaw::Laplace {
                        scale: g("noise.scale"),
                    },
                    NoiseKind::Contaminated => NoiseLaw::Contaminated {
                        sd: g("noise.sd"),
                        p: g("noise.p"),
                        outlier_sd: g("noise.outlier_sd"),
                    },
                };
                Model::Huber {
                    huber_m: g("huber_m"),
                    noise,
                }
            }
        };
        let algorithm = match self.algorithm {
            AlgorithmKind::Objective => Algorithm::Objective {
                lambda: g("lambda"),
                sigma: g("sigma"),
            },
            AlgorithmKind::Output => Algorithm::Output {
                lambda: g("lambda"),
                tau: g("tau"),
            },
            AlgorithmKind::Dpgd => {
                let steps = g("steps");
                if !(steps >= 1.0 && steps.fract() == 0.0 && steps <= 10_000.0) {
                    return Err(ConfigError::range(
                        "algorithm.steps",
                        steps,
                        "an integer, 1 ≤ steps ≤ 10000",
                    ));
                }
                Algorithm::Dpgd {
                    lambda: g("lambda"),
                    sigma: g("sigma"),
                    eta: g("eta"),
                    steps: steps as usize,
                    loss_variant: self.loss_variant,
                }
            }
        };
        let mut point = Point::new(g("delta"), g("s2"), model, algorithm)?;
        point.budget = budget;
        Ok(point)
    }

    /// The smallest noise meeting the budget at this point's λ (and steps).
    fn calibrated_noise(&self, v: &BTreeMap<&str, f64>, target: Target) -> Result<f64, ConfigError> {
        let neighbouring = self.neighbouring;
        let (field, level) = match target {
            Target::Approx { epsilon, .. } => ("algorithm.epsilon", epsilon),
            Target::Zcdp { rho } => ("algorithm.rho", rho),
        };
        if !(level > 0.0 && level.is_finite()) {
            return Err(ConfigError::range(field, level, "> 0 and finite"));
        }
        let lambda = v["lambda"];
        let kind = match self.algorithm {
            AlgorithmKind::Objective => MechanismKind::Objective { lambda },
            AlgorithmKind::Output => MechanismKind::Output { lambda },
            AlgorithmKind::Dpgd => MechanismKind::Dpgd {
                steps: v["steps"].max(1.0) as usize,
            },
        };
        if lambda <= 0.0 && self.algorithm != AlgorithmKind::Dpgd {
            return Err(ConfigError::range(
                "algorithm.lambda",
                lambda,
                "λ > 0 to calibrate noise to a budget",
            ));
        }
        let (l, beta) = match self.model {
            ModelKind::Huber => (v["huber_m"], 1.0),
            ModelKind::Logistic => (1.0, 0.25),
        };
        let mech = Mechanism {
            kind,
            lipschitz: l,
            smoothness: beta,
            neighbouring,
        };
        if let MechanismKind::Objective { lambda } = kind {
            // the privacy loss keeps log(1 + βR²/λ) however large σ is
            let c0 = (beta / lambda).ln_1p();
            let (floor, what) = match (target, neighbouring) {
                (Target::Approx { .. }, Neighbouring::ReplaceOne) => (2.0 * c0, "ε"),
                (Target::Approx { .. }, Neighbouring::AddRemoveOne) => (c0, "ε"),
                (Target::Zcdp { .. }, Neighbouring::ReplaceOne) => (4.0 * c0, "ρ"),
                (Target::Zcdp { .. }, Neighbouring::AddRemoveOne) => (c0, "ρ"),
            };
            if level <= floor {
                return Err(ConfigError::range(
                    field,
                    level,
                    &format!(
                        "{what} > {floor:.4}: objective perturbation cannot go below log(1 + βR²/λ) per neighbour \
                         (λ = {lambda}, β = {beta}) whatever σ; raise λ or {what}"
                    ),
                ));
            }
        }
        let noise = match target {
            Target::Approx { epsilon, delta_priv } => mech.calibrate(epsilon, delta_priv),
            Target::Zcdp { rho } => mech.calibrate_rho(rho),
        };
        noise.ok_or_else(|| ConfigError::range(field, level, "a budget some noise level meets"))
    }
}
