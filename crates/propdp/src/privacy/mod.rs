//! The privacy guarantee of an algorithm's noise in every notion, or the
//! smallest noise meeting a target (ε, δ) or ρ (docs/theory.md §4) — what
//! `propdp privacy` prints.

use anyhow::Result;
use propdp_core::accountant::bracket::{BracketSettings, Segment};
use propdp_core::accountant::calibrate::{Knob, Target, calibrate};
use propdp_core::accountant::{Mechanism, Neighbouring, ObjectiveBound, dpsgd_rdp_epsilon, mu_dpgd, mu_output};
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

mod membership;
mod report;
mod sampled;

pub use crate::error::Argument;
pub use membership::{FPRS, Membership, membership};
pub use propdp_core::parameters::python_keyword;
pub use sampled::{SampledReport, assess_sampled};

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
        let kind = self
            .algorithm
            .mechanism(self.lambda, self.steps, self.sample_rate, self.clip);
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
        rdp_epsilon: (q.algorithm == AlgorithmKind::Dpsgd)
            .then(|| {
                let z = noise / mech.dpsgd_sensitivity(q.clip);
                dpsgd_rdp_epsilon(z, q.sample_rate, q.steps as u64, q.delta_priv, q.neighbouring)
            })
            .filter(|e| e.is_finite()),
    };
    report.check()?;
    Ok(report)
}
