//! The privacy guarantee of an algorithm's noise in every notion, or the
//! smallest noise meeting a target (ε, δ) or ρ (docs/theory.md §4) — what
//! `propdp privacy` prints.

use anyhow::{Result, bail};
use propdp_core::accountant::bracket::{BracketSettings, EpsilonBracket};
use propdp_core::accountant::calibrate::{Knob, Target, calibrate};
use propdp_core::accountant::events::{Events, Segment};
use propdp_core::accountant::sampling::{SampledEpsilon, Sampling, sampled_epsilon};
use propdp_core::accountant::tradeoff::{gaussian_tpr, gdp_mu, tpr_from_profile, tpr_upper};
use propdp_core::accountant::{Mechanism, MechanismKind, Neighbouring, ObjectiveBound, mu_dpgd, mu_output};
use propdp_core::parameters;
use propdp_core::{AlgorithmKind, Model, ModelKind, NoiseLaw};

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

impl NoiseLevel {
    /// The argument that gives it: `noise`, `epsilon` or `rho`.
    pub fn argument(&self) -> &'static str {
        match self {
            NoiseLevel::Given(_) => "noise",
            NoiseLevel::Epsilon(_) => "epsilon",
            NoiseLevel::Rho(_) => "rho",
        }
    }
}

pub use crate::error::Argument;
pub use propdp_core::parameters::python_keyword;

/// The arguments of a privacy query as a front end receives them — the
/// command line's flags, Python's keywords — before defaults and checks:
/// [`QueryArgs::query`] is the one place that turns them into a [`Query`],
/// so both front ends accept and refuse the same things.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryArgs {
    /// The algorithm.
    pub algorithm: AlgorithmKind,
    /// The model.
    pub model: ModelKind,
    /// Huber threshold M (model huber only; default 1).
    pub huber_m: Option<f64>,
    /// Ridge λ (objective and output perturbation only; default 1).
    pub lambda: Option<f64>,
    /// Steps T (DP-GD and DP-SGD only; default 1).
    pub steps: Option<u64>,
    /// Poisson sample rate q (DP-SGD only, required there).
    pub sample_rate: Option<f64>,
    /// Clipping norm C (DP-SGD only).
    pub clip: Option<f64>,
    /// The neighbouring relation.
    pub neighbouring: Neighbouring,
    /// δ of the (ε, δ) guarantee (default 1e-6).
    pub delta_priv: Option<f64>,
    /// A noise to assess …
    pub noise: Option<f64>,
    /// … or an ε to calibrate it to …
    pub epsilon: Option<f64>,
    /// … or a zCDP ρ.
    pub rho: Option<f64>,
}

impl QueryArgs {
    /// No argument given but the algorithm and model.
    pub fn new(algorithm: AlgorithmKind, model: ModelKind) -> QueryArgs {
        QueryArgs {
            algorithm,
            model,
            huber_m: None,
            lambda: None,
            steps: None,
            sample_rate: None,
            clip: None,
            neighbouring: Neighbouring::ReplaceOne,
            delta_priv: None,
            noise: None,
            epsilon: None,
            rho: None,
        }
    }

    /// The query, or the first argument at fault: one that does not apply
    /// to the algorithm or model (it would be silently ignored), a missing
    /// sample rate for DP-SGD, two of noise/epsilon/rho, then the range
    /// checks of [`check`].
    ///
    /// ```
    /// use propdp::privacy::QueryArgs;
    /// use propdp::core::{AlgorithmKind, ModelKind};
    /// let mut a = QueryArgs::new(AlgorithmKind::Dpsgd, ModelKind::Logistic);
    /// a.sample_rate = Some(0.01);
    /// a.noise = Some(1.0);
    /// a.epsilon = Some(1.0);
    /// assert_eq!(a.query().unwrap_err().to_string(), "--noise and --epsilon are both given: give one (a noise to assess, or a target to calibrate it to)");
    /// a.epsilon = None;
    /// a.lambda = Some(0.5);
    /// assert!(a.query().unwrap_err().to_string().starts_with("--lambda does not apply"));
    /// ```
    pub fn query(&self) -> Result<Query, Argument> {
        let (kind, dpsgd) = (self.algorithm, self.algorithm == AlgorithmKind::Dpsgd);
        let not_for = |what: &str| format!(" does not apply to {what}: leave it out");
        let alg = format!("--algorithm {}", kind.name());
        for (key, given, applies, what) in [
            (
                "huber_m",
                self.huber_m.is_some(),
                self.model == ModelKind::Huber,
                format!("model {}", self.model.name()),
            ),
            (
                "lambda",
                self.lambda.is_some(),
                !kind.is_iterative(),
                format!("{alg} (its guarantee does not depend on λ)"),
            ),
            ("steps", self.steps.is_some(), kind.is_iterative(), alg.clone()),
            ("sample_rate", self.sample_rate.is_some(), dpsgd, alg.clone()),
            ("clip", self.clip.is_some(), dpsgd, alg.clone()),
        ] {
            if given && !applies {
                return Err(Argument::new(key, not_for(&what)));
            }
        }
        let targets: Vec<&'static str> = [("noise", self.noise), ("epsilon", self.epsilon), ("rho", self.rho)]
            .into_iter()
            .filter_map(|(k, v)| v.map(|_| k))
            .collect();
        if let [a, b, ..] = targets[..] {
            return Err(Argument::both(
                a,
                b,
                " are both given: give one (a noise to assess, or a target to calibrate it to)".into(),
            ));
        }
        let sample_rate = match self.sample_rate {
            Some(q) => q,
            None if dpsgd => {
                return Err(Argument::new(
                    "sample_rate",
                    format!(
                        " is required with algorithm dpsgd: allowed {}",
                        parameters::parameter("sample_rate")
                            .expect("a parameter")
                            .domain
                            .allowed("sample_rate")
                    ),
                ));
            }
            None => 1.0,
        };
        let steps = self.steps.unwrap_or(1);
        let model = match self.model {
            ModelKind::Huber => Model::Huber {
                huber_m: self.huber_m.unwrap_or(1.0),
                noise: NoiseLaw::Gaussian { sd: 1.0 },
            },
            ModelKind::Logistic => Model::Logistic,
            // the label noise does not enter the guarantee
            ModelKind::LeastSquares => Model::LeastSquares {
                noise: NoiseLaw::Gaussian { sd: 1.0 },
            },
        };
        let query = |noise| Query {
            algorithm: kind,
            model,
            lambda: self.lambda.unwrap_or(1.0),
            steps: usize::try_from(steps).unwrap_or(usize::MAX),
            sample_rate,
            clip: self.clip,
            neighbouring: self.neighbouring,
            delta_priv: self.delta_priv.unwrap_or(1e-6),
            noise,
        };
        let q = match (self.noise, self.epsilon, self.rho) {
            (Some(n), _, _) => query(NoiseLevel::Given(n)),
            (_, Some(e), _) => query(NoiseLevel::Epsilon(e)),
            (_, _, Some(r)) => query(NoiseLevel::Rho(r)),
            (None, None, None) => {
                // name a bad mechanism argument first, then the missing noise
                check(&query(NoiseLevel::Given(1.0)))?;
                return Err(Argument::new(
                    "noise",
                    " is missing: give a noise to assess, or epsilon (> 0) or rho (> 0) to calibrate it".into(),
                ));
            }
        };
        check(&q)?;
        Ok(q)
    }
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
    /// DP-GD and DP-SGD steps T.
    pub steps: usize,
    /// DP-SGD's Poisson sample rate q (1 for the other algorithms).
    pub sample_rate: f64,
    /// DP-SGD's clipping norm C (none: the loss's Lipschitz constant bounds the gradient).
    pub clip: Option<f64>,
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
    /// ε at `delta_priv`, a certified upper bound; `None` when no finite ε
    /// reaches it (DP-SGD: the upper end of the PLD bracket, or the RDP or
    /// full-batch bound where smaller).
    pub epsilon: Option<f64>,
    /// A certified lower bound on ε at `delta_priv` (= `epsilon` for the
    /// closed-form curves; DP-SGD: the lower end of the PLD bracket).
    pub epsilon_lower: Option<f64>,
    /// DP-SGD: the grid width of the PLD bracket and whether it reached the
    /// requested relative width (0.1%).
    pub bracket: Option<(f64, bool)>,
    /// DP-SGD: the RDP accountant's ε at `delta_priv` (looser; a cross-check).
    pub rdp_epsilon: Option<f64>,
}

impl Query {
    fn mechanism(&self) -> Mechanism {
        let kind = match self.algorithm {
            AlgorithmKind::Objective => MechanismKind::Objective { lambda: self.lambda },
            AlgorithmKind::Output => MechanismKind::Output { lambda: self.lambda },
            AlgorithmKind::Dpgd => MechanismKind::Dpgd { steps: self.steps },
            AlgorithmKind::Dpsgd => MechanismKind::Dpsgd {
                steps: self.steps,
                sample_rate: self.sample_rate,
                clip: self.clip,
            },
        };
        self.model.mechanism(kind, self.neighbouring)
    }

    /// DP-SGD's run at `noise`: z = noise/min(C, L), the query's q and T.
    fn dpsgd_run(&self, noise: f64) -> Segment {
        Segment {
            noise_multiplier: noise / self.mechanism().dpsgd_sensitivity(self.clip),
            sample_rate: self.sample_rate,
            steps: self.steps as u64,
        }
    }
}

/// `value` of argument `name` in its parameter's domain
/// ([`propdp_core::parameters`]), or the error naming the argument.
fn in_domain(name: &'static str, value: f64) -> Result<(), Argument> {
    let domain = parameters::parameter(name).expect("a parameter").domain;
    if domain.contains(value) {
        Ok(())
    } else {
        Err(Argument::new(
            name,
            format!(" = {value:?} is invalid: allowed {}", domain.allowed(name)),
        ))
    }
}

/// Range checks of a query, naming the argument: the model's parameters
/// (M > 0), 0 < δ < 1, λ > 0 and finite for objective and output
/// perturbation (their sensitivity bounds need a ridge), 1 ≤ T ≤ 10⁹ for
/// DP-GD and DP-SGD, 0 < q ≤ 1 and 0 < C < ∞ for DP-SGD (C required for a
/// loss that is not Lipschitz), and a noise (or target) that is positive and finite.
pub fn check(q: &Query) -> Result<(), Argument> {
    if let Err(e) = q.model.check() {
        return Err(Argument::new("huber_m", format!(": {e}")));
    }
    if q.model.lipschitz().is_infinite() && !(q.algorithm == AlgorithmKind::Dpsgd && q.clip.is_some()) {
        return Err(Argument::new(
            "model",
            format!(
                " = {}: its loss is not Lipschitz, so only DP-SGD with clipping is private (--algorithm dpsgd --clip C)",
                q.model.name()
            ),
        ));
    }
    in_domain("delta_priv", q.delta_priv)?;
    match q.algorithm {
        AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd if !(1..=1_000_000_000).contains(&q.steps) => {
            return Err(Argument::new(
                "steps",
                format!(" = {} is invalid: allowed 1 ≤ T ≤ 1e9", q.steps),
            ));
        }
        AlgorithmKind::Dpgd => {}
        AlgorithmKind::Dpsgd => {
            in_domain("sample_rate", q.sample_rate)?;
            if let Some(c) = q.clip {
                in_domain("clip", c)?;
            }
        }
        _ => {
            if !(q.lambda > 0.0 && q.lambda.is_finite()) {
                return Err(Argument::new(
                    "lambda",
                    format!(
                        " = {:?} is invalid: allowed 0 < λ < ∞ (the sensitivity bounds need a ridge)",
                        q.lambda
                    ),
                ));
            }
        }
    }
    let x = match q.noise {
        NoiseLevel::Given(x) | NoiseLevel::Epsilon(x) | NoiseLevel::Rho(x) => x,
    };
    if !(x > 0.0 && x.is_finite()) {
        return Err(Argument::new(
            q.noise.argument(),
            format!(" = {x:?} is invalid: allowed > 0 and finite"),
        ));
    }
    Ok(())
}

/// Why no noise was calibrated to a target: below objective perturbation's
/// floor, too strict for the largest noise of the calibrated range, or so
/// loose that its smallest noise meets it.
fn unreachable(arg: &'static str, level: f64, q: &Query, mech: &Mechanism, zcdp: bool) -> Argument {
    let floor = mech.floor(zcdp);
    // subsampled DP-SGD to (ε, δ): the certified search over its noise multipliers
    let certified = !zcdp && q.algorithm == AlgorithmKind::Dpsgd && q.sample_rate < 1.0;
    let (range, largest, smallest) = if certified {
        let (lo, hi) = Knob::NoiseMultiplier.limits();
        let s = mech.dpsgd_sensitivity(q.clip);
        (format!("noise multiplier in [{lo:e}, {hi:e}]"), hi * s, lo * s)
    } else {
        ("noise in [e^-200, e^40]".to_string(), 40f64.exp(), (-200f64).exp())
    };
    let strict = if zcdp {
        mech.rho(largest) > level
    } else if certified {
        mech.epsilon_bracket(largest, q.delta_priv, BracketSettings::default())
            .is_none_or(|b| b.upper > level)
    } else {
        !mech.meets(largest, level, q.delta_priv)
    };
    if level <= floor {
        Argument::new(
            arg,
            format!(
                " = {level:?} is unreachable: objective perturbation cannot go below {floor:.4} \
                 (log(1 + βR²/λ) per neighbour) whatever the noise; raise λ or the target"
            ),
        )
    } else if strict {
        Argument::new(
            arg,
            format!(
                " = {level:?} is too strict: even the largest {range}, {largest:e}, does not meet it \
                 (at δ = {:?}); no noise is calibrated",
                q.delta_priv
            ),
        )
    } else {
        Argument::new(
            arg,
            format!(
                " = {level:?} is so loose that every {range} meets it, down to {smallest:e}: no smallest \
                 noise exists to calibrate"
            ),
        )
    }
}

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
    let sampled = Events::run(run)
        .and_then(|events| {
            sampled_epsilon(
                sampling,
                &events,
                query.delta_priv,
                query.neighbouring,
                BracketSettings::default(),
            )
        })
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
        let bracket = |b: Option<EpsilonBracket>| match b {
            Some(b) if b.lower == b.upper => format!("ε = {:.6}", b.upper),
            Some(b) => format!("{:.6} ≤ ε ≤ {:.6}", b.lower, b.upper),
            None => "no finite ε".into(),
        };
        let mut s = format!(
            "DP-SGD with {} batches (T = {}, q = {}), {} neighbours, sensitivity {}C:\n  {} at δ = {:e}\n  assumes: {}\n",
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
            s += &format!("  if the batches had been Poisson-sampled: {}\n", bracket(Some(p)));
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

/// What a report's guarantee means for membership inference
/// (`propdp_accountant::tradeoff`): the largest TPR any attack reaches at
/// each FPR of [`FPRS`], and μ-GDP where it applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Membership {
    /// (FPR, the largest TPR at it).
    pub tpr: Vec<(f64, f64)>,
    /// μ of μ-GDP and whether it is exact (the Gaussian mechanisms) or the
    /// central-limit approximation (subsampled DP-SGD); `None` for
    /// objective perturbation.
    pub mu: Option<(f64, bool)>,
    /// How the TPR was bounded.
    pub method: &'static str,
}

/// The false positive rates [`membership`] reports the TPR at.
pub const FPRS: [f64; 5] = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1];

/// The membership-inference reading of `report`: exact for the Gaussian
/// mechanisms (output perturbation, DP-GD, full-batch DP-SGD:
/// Φ(Φ⁻¹(α) + μ)); from the certified upper profile for subsampled DP-SGD;
/// from the (ε, δ) curve for objective perturbation.
///
/// ```
/// use propdp::privacy::{assess, membership, NoiseLevel, Query};
/// use propdp::core::{accountant::Neighbouring, AlgorithmKind, Model};
/// let q = Query {
///     algorithm: AlgorithmKind::Dpsgd, model: Model::Logistic, lambda: 1.0, steps: 1000, sample_rate: 0.01,
///     clip: Some(1.0), neighbouring: Neighbouring::AddRemoveOne, delta_priv: 1e-5, noise: NoiseLevel::Given(1.0),
/// };
/// let m = membership(&assess(&q).unwrap()).unwrap();
/// assert!(m.tpr.iter().all(|&(fpr, tpr)| fpr < tpr && tpr < 1.0));
/// ```
pub fn membership(report: &Report) -> crate::Result<Membership> {
    let q = &report.query;
    if q.algorithm == AlgorithmKind::Dpsgd && q.sample_rate < 1.0 {
        let run = q.dpsgd_run(report.noise);
        let tpr = tpr_upper(&[run], q.neighbouring, &FPRS, BracketSettings::default())
            .map_err(|e| Argument::new("noise", format!(": {e}")))?;
        return Ok(Membership {
            tpr: FPRS.iter().copied().zip(tpr).collect(),
            mu: gdp_mu(&[run], q.neighbouring),
            method: "min over ε of min(e^ε·α + δ⁺(ε), 1 − e^{−ε}(1 − α − δ⁺(ε))), δ⁺ the certified upper profile",
        });
    }
    if let Some(mu) = report.mu {
        return Ok(Membership {
            tpr: FPRS.iter().map(|&a| (a, gaussian_tpr(mu, a))).collect(),
            mu: Some((mu, true)),
            method: "exact: Φ(Φ⁻¹(α) + μ) of μ-GDP",
        });
    }
    let mech = q.mechanism();
    Ok(Membership {
        tpr: FPRS
            .iter()
            .map(|&a| (a, tpr_from_profile(|e| mech.delta(e, report.noise), a)))
            .collect(),
        mu: None,
        method: "min over ε of min(e^ε·α + δ(ε), 1 − e^{−ε}(1 − α − δ(ε))), δ the mechanism's curve",
    })
}

impl Membership {
    /// The reading as `propdp privacy --membership-inference` prints it.
    pub fn text(&self) -> String {
        let mut s = String::from(
            "membership inference: the largest TPR any attack reaches at each FPR
",
        );
        for &(fpr, tpr) in &self.tpr {
            s += &format!(
                "  FPR {fpr:<7e} TPR ≤ {tpr:.6}
"
            );
        }
        match self.mu {
            Some((mu, true)) => {
                s += &format!(
                    "  μ-GDP (exact): μ = {}
",
                    num(mu)
                )
            }
            Some((mu, false)) => {
                s += &format!(
                    "  μ-GDP (central-limit approximation, not a bound): μ ≈ {}
",
                    num(mu)
                )
            }
            None => {}
        }
        s + &format!(
            "  ({})
",
            self.method
        )
    }

    /// The reading as one JSON object.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "fpr": self.tpr.iter().map(|t| t.0).collect::<Vec<_>>(),
            "tpr_upper": self.tpr.iter().map(|t| t.1).collect::<Vec<_>>(),
            "mu": self.mu.map(|m| m.0),
            "mu_exact": self.mu.map(|m| m.1),
            "method": self.method,
        })
    }
}

/// DP-SGD's steps or sample rate calibrated to the target of `args`
/// (`epsilon` with `delta_priv`, or `rho`) at the noise it gives, on the
/// certified ε (`propdp_accountant::calibrate`; the ε read back is at most
/// the target): the report of the calibrated run. `args` gives the noise
/// and the other knob; the calibrated one is left out.
///
/// ```no_run
/// use propdp::privacy::{calibrate_knob, QueryArgs};
/// use propdp::core::{accountant::calibrate::Knob, AlgorithmKind, ModelKind};
/// let mut a = QueryArgs::new(AlgorithmKind::Dpsgd, ModelKind::Logistic);
/// (a.noise, a.sample_rate, a.epsilon, a.delta_priv) = (Some(1.0), Some(0.01), Some(2.0), Some(1e-5));
/// let r = calibrate_knob(&a, Knob::Steps).unwrap();
/// assert!(r.epsilon.unwrap() <= 2.0);
/// ```
pub fn calibrate_knob(args: &QueryArgs, knob: Knob) -> crate::Result<Report> {
    if knob == Knob::NoiseMultiplier {
        return assess(&args.query()?);
    }
    let name = knob.name();
    if args.algorithm != AlgorithmKind::Dpsgd {
        return Err(Argument::new(
            "calibrate",
            format!(" = {name}: only DP-SGD's steps and sample rate are calibrated (give --algorithm dpsgd)"),
        )
        .into());
    }
    let given = match knob {
        Knob::Steps => args.steps.is_some(),
        _ => args.sample_rate.is_some(),
    };
    if given {
        return Err(Argument::new(
            name,
            format!(" is given: it is what --calibrate {name} solves for; leave it out"),
        )
        .into());
    }
    let Some(noise) = args.noise else {
        return Err(Argument::new("noise", format!(" is required to calibrate {name}")).into());
    };
    let target = match (args.epsilon, args.rho) {
        (Some(epsilon), None) => Target::Epsilon {
            epsilon,
            delta: args.delta_priv.unwrap_or(1e-6),
        },
        (None, Some(rho)) => Target::Rho(rho),
        _ => {
            return Err(Argument::new(
                "epsilon",
                format!(" or rho (one of them) is required to calibrate {name}"),
            )
            .into());
        }
    };
    // the query with a placeholder for the knob: its ranges and the model's sensitivity checked
    let mut q = QueryArgs {
        epsilon: None,
        rho: None,
        ..args.clone()
    };
    match knob {
        Knob::Steps => q.steps = Some(1),
        _ => q.sample_rate = Some(1.0),
    }
    let query = q.query()?;
    let run = query.dpsgd_run(noise);
    let c = calibrate(knob, run, target, query.neighbouring, BracketSettings::default()).map_err(|e| {
        Argument::new(
            if e.argument() == "sample_rate" {
                "rho"
            } else {
                "epsilon"
            },
            format!(": {e}"),
        )
    })?;
    assess(&Query {
        steps: c.run.steps as usize,
        sample_rate: c.run.sample_rate,
        ..query
    })
}

/// The guarantee of the query's noise (calibrated first when it names a target).
///
/// ```
/// use propdp::privacy::{assess, NoiseLevel, Query};
/// use propdp::core::{accountant::Neighbouring, AlgorithmKind, Model};
/// let q = Query {
///     algorithm: AlgorithmKind::Output, model: Model::Logistic, lambda: 1.0, steps: 1, sample_rate: 1.0, clip: None,
///     neighbouring: Neighbouring::ReplaceOne, delta_priv: 1e-6, noise: NoiseLevel::Epsilon(1.0),
/// };
/// let r = assess(&q).unwrap();
/// assert!((r.epsilon.unwrap() - 1.0).abs() < 1e-9);
/// assert!((r.mu.unwrap() - 2.0 / r.noise).abs() < 1e-12); // μ = 2LR/(λτ)
/// ```
pub fn assess(q: &Query) -> crate::Result<Report> {
    check(q)?;
    let mech = q.mechanism();
    let noise = match q.noise {
        NoiseLevel::Given(n) => n,
        NoiseLevel::Rho(rho) => mech
            .calibrate_rho(rho)
            .ok_or_else(|| unreachable("rho", rho, q, &mech, true))?,
        NoiseLevel::Epsilon(eps) => mech
            .calibrate(eps, q.delta_priv)
            .ok_or_else(|| unreachable("epsilon", eps, q, &mech, false))?,
    };
    let (l, beta) = (mech.lipschitz, mech.curvature);
    let (mu, objective_bound, rdp) = match q.algorithm {
        AlgorithmKind::Output => (Some(mu_output(l, 1.0, q.lambda, noise, q.neighbouring)), None, vec![]),
        AlgorithmKind::Dpgd => (Some(mu_dpgd(l, 1.0, q.steps, noise, q.neighbouring)), None, vec![]),
        // q = 1 is the Gaussian mechanism with sensitivity min(C, L)
        AlgorithmKind::Dpsgd => (
            (q.sample_rate >= 1.0)
                .then(|| mu_dpgd(mech.dpsgd_sensitivity(q.clip), 1.0, q.steps, noise, q.neighbouring)),
            None,
            vec![],
        ),
        AlgorithmKind::Objective => {
            let b = ObjectiveBound::new(l, beta, 1.0, q.lambda, noise);
            let rdp = [2.0, 8.0, 32.0].iter().map(|&a| (a, b.rdp(a))).collect();
            (None, Some((b.c(), b.a)), rdp)
        }
    };
    // the certified ε; a calibrated noise meets the target by construction
    // (subsampled DP-SGD: the search on the bracket's upper end itself)
    let eps = mech.epsilon_bracket(noise, q.delta_priv, BracketSettings::default());
    if let (NoiseLevel::Epsilon(target), Some(b)) = (q.noise, eps)
        && b.upper > target
    {
        let msg = format!(
            "internal error: the noise {noise:?} calibrated to ε = {target:?} reads back ε ≤ {:?}",
            b.upper
        );
        return Err(anyhow::anyhow!(msg).into());
    }
    let dpsgd_grid = (q.algorithm == AlgorithmKind::Dpsgd && q.sample_rate < 1.0)
        .then(|| eps.map(|b| (b.grid, b.reached)))
        .flatten();
    let report = Report {
        query: *q,
        noise,
        mu,
        rho: mech.rho(noise),
        objective_bound,
        rdp,
        epsilon: eps.map(|b| b.upper),
        epsilon_lower: eps.map(|b| b.lower),
        bracket: dpsgd_grid,
        rdp_epsilon: mech.rdp_epsilon(noise, q.delta_priv),
    };
    report.check()?;
    Ok(report)
}

impl Report {
    /// Every number finite and consistent: noise > 0, μ > 0, ρ > 0, and
    /// ε = 0 only where the mechanism's δ(0) is already within δ_priv.
    fn check(&self) -> Result<()> {
        let numbers = [
            Some(self.noise),
            self.mu,
            Some(self.rho),
            self.epsilon,
            self.rdp_epsilon,
        ]
        .into_iter()
        .flatten()
        .chain(self.objective_bound.iter().flat_map(|(c, a)| [*c, *a]))
        .chain(self.rdp.iter().map(|r| r.1));
        let q = &self.query;
        let underflow = !(self.noise > 0.0 && self.rho > 0.0 && self.mu.is_none_or(|m| m > 0.0));
        if let (AlgorithmKind::Dpsgd, Some(c)) = (q.algorithm, q.clip)
            && (underflow || numbers.clone().any(|x| !x.is_finite()))
        {
            // the guarantee depends on σ/min(C, L): name both
            return Err(Argument::both(
                q.noise.argument(),
                "clip",
                format!(
                    ": the noise multiplier σ/min(C, L) = {:?}/{c:?} is beyond the range of the accountant \
                     (ρ = {:?}, μ = {:?}): no guarantee can be stated",
                    self.noise, self.rho, self.mu
                ),
            )
            .into());
        }
        if let Some(x) = numbers.into_iter().find(|x| !x.is_finite()) {
            return Err(Argument::new(
                self.query.noise.argument(),
                format!(
                    ": the guarantee is not a finite number ({x:?}); the arguments are beyond the accountant's range"
                ),
            )
            .into());
        }
        if underflow {
            return Err(Argument::new(
                self.query.noise.argument(),
                format!(
                    ": the noise {:?} gives ρ = {:?}, μ = {:?} (beyond the range of f64): no guarantee can be stated",
                    self.noise, self.rho, self.mu
                ),
            )
            .into());
        }
        // (subsampled DP-SGD: ε⁺ = 0 is the certified curve's own δ⁺(0) ≤ δ_priv, which the fixed-grid δ(0) may exceed)
        let subsampled = self.query.algorithm == AlgorithmKind::Dpsgd && self.query.sample_rate < 1.0;
        if !subsampled
            && self.epsilon == Some(0.0)
            && self.query.mechanism().log_delta(0.0, self.noise) > self.query.delta_priv.ln()
        {
            bail!("internal error: ε = 0 reported while δ(0) exceeds δ_priv");
        }
        Ok(())
    }

    /// The report as data (`propdp privacy --json`, the Python package):
    /// every number of [`Report::text`] under a stable key, `null` where a
    /// notion does not apply.
    pub fn json(&self) -> serde_json::Value {
        let q = &self.query;
        let dpsgd = q.algorithm == AlgorithmKind::Dpsgd;
        let (target, level) = match q.noise {
            NoiseLevel::Given(_) => (None, None),
            NoiseLevel::Epsilon(e) => (Some("epsilon"), Some(e)),
            NoiseLevel::Rho(r) => (Some("rho"), Some(r)),
        };
        serde_json::json!({
            "algorithm": q.algorithm.name(),
            "model": q.model.kind().name(),
            "neighbouring": q.neighbouring.label(),
            "lambda": (!q.algorithm.is_iterative()).then_some(q.lambda),
            "steps": q.algorithm.is_iterative().then_some(q.steps),
            "sample_rate": dpsgd.then_some(q.sample_rate),
            "clip": if dpsgd { q.clip } else { None },
            "calibrated_to": target,
            "target": level,
            "noise": self.noise,
            "delta_priv": q.delta_priv,
            "epsilon": self.epsilon,
            "epsilon_lower": self.epsilon_lower,
            "bracket_grid": self.bracket.map(|b| b.0),
            "bracket_reached": self.bracket.map(|b| b.1),
            "rdp_epsilon": self.rdp_epsilon,
            "rho": self.rho,
            "mu": self.mu,
            "objective_bound": self.objective_bound,
            "rdp": self.rdp,
        })
    }

    /// The report as `propdp privacy` prints it.
    pub fn text(&self) -> String {
        let q = &self.query;
        let delta_priv = format!("{:?}", q.delta_priv);
        let mut s = match q.noise {
            NoiseLevel::Given(_) => String::new(),
            NoiseLevel::Epsilon(eps) => {
                format!(
                    "calibrated noise for (ε = {eps:?}, δ = {delta_priv}): {}\n",
                    num(self.noise)
                )
            }
            NoiseLevel::Rho(rho) => format!("calibrated noise for ρ = {rho:?} (zCDP): {}\n", num(self.noise)),
        };
        let model = match q.model.kind() {
            propdp_core::ModelKind::Huber => "Huber",
            propdp_core::ModelKind::Logistic => "Logistic",
            propdp_core::ModelKind::LeastSquares => "least-squares",
        };
        let what = match q.algorithm {
            AlgorithmKind::Dpgd => "DP-GD".to_string(),
            AlgorithmKind::Dpsgd => format!(
                "DP-SGD (T = {}, q = {:?}, {})",
                q.steps,
                q.sample_rate,
                q.clip.map_or("no clipping".to_string(), |c| format!("clip C = {c:?}"))
            ),
            a => a.title().to_string(),
        };
        s += &format!(
            "{what} of a {model} model, noise {:?}, {} neighbours:\n",
            self.noise,
            q.neighbouring.label()
        );
        if let Some(mu) = self.mu {
            s += &format!("  μ-GDP: μ = {}\n", num(mu));
            s += &format!("  zCDP: ρ = μ²/2 = {}\n", num(self.rho));
        }
        if let Some((c, a)) = self.objective_bound {
            s += &format!(
                "  loss bound c + A|Z|: c = {}, A = {} (add/remove-one)\n",
                num(c),
                num(a)
            );
            s += &format!("  zCDP: ρ = {}\n", num(self.rho));
            let parts: Vec<String> = self.rdp.iter().map(|(a, e)| format!("ε({a}) = {}", num(*e))).collect();
            s += &format!("  RDP (add/remove-one): {}\n", parts.join(", "));
        }
        if q.algorithm == AlgorithmKind::Dpsgd && self.mu.is_none() {
            s += &format!(
                "  zCDP: ρ = {} (subsampling gives zCDP no amplification)\n",
                num(self.rho)
            );
        }
        let accountant = if q.algorithm == AlgorithmKind::Dpsgd && q.sample_rate < 1.0 {
            " (PLD, or RDP where tighter)"
        } else {
            ""
        };
        s += &match self.epsilon {
            Some(e) => format!("  (ε, δ)-DP{accountant}: ε = {} at δ = {delta_priv}\n", num(e)),
            None => format!("  (ε, δ)-DP{accountant}: no finite ε reaches δ = {delta_priv}\n"),
        };
        if let (Some(lo), Some(hi), Some((grid, reached))) = (self.epsilon_lower, self.epsilon, self.bracket) {
            s += &format!(
                "  certified bracket: {} ≤ ε ≤ {} (width {:.2}%, {}{})\n",
                num(lo),
                num(hi),
                if hi > 0.0 { 100.0 * (hi - lo) / hi } else { 0.0 },
                if grid > 0.0 {
                    format!("grid {grid:.1e}")
                } else {
                    "closed form".to_string()
                },
                if reached {
                    ""
                } else {
                    "; the 0.1% width was not reached (the memory limit, or ε beyond the PLD's range)"
                }
            );
        }
        if let Some(e) = self.rdp_epsilon {
            s += &format!("  (ε, δ)-DP (RDP, looser): ε = {} at δ = {delta_priv}\n", num(e));
        }
        if q.algorithm == AlgorithmKind::Dpsgd {
            // the same run in a training loop's knobs (docs/training_loop.md)
            let run = q.dpsgd_run(self.noise);
            s += &format!(
                "  as a training loop (Opacus): noise_multiplier = {} (the noise over the per-example bound {}), \
                 max_grad_norm = {}, sample_rate = {} (Poisson batches of q·n rows on average), epochs = q·T = {}\n",
                num(run.noise_multiplier),
                num(self.noise / run.noise_multiplier),
                num(self.noise / run.noise_multiplier),
                q.sample_rate,
                num(q.sample_rate * q.steps as f64)
            );
        }
        s
    }
}

/// A number for people: 6 decimals between 1e-3 and 1e6, 6 significant
/// digits in exponent form outside (a small ε never reads as 0.000000).
fn num(x: f64) -> String {
    if x == 0.0 || (1e-3..1e6).contains(&x.abs()) {
        format!("{x:.6}")
    } else {
        format!("{x:.5e}")
    }
}
