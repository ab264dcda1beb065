//! A privacy query: the arguments as a front end receives them
//! ([`QueryArgs`]), and the checked [`Query`] they make (defaults, ranges,
//! and targets no noise can reach refused naming the argument).

use crate::error::Argument;
use crate::error::Result;
use propdp_core::accountant::events::Segment;
use propdp_core::accountant::{ExtraRidge, Mechanism, Neighbouring};
use propdp_core::parameters;
use propdp_core::{AlgorithmKind, Model, ModelKind, NoiseLaw};

/// DP-SGD's participation pattern: the rows split into `groups` cyclic
/// groups (only group t mod G is eligible at step t, each of its rows taken
/// with probability q) and the number of `bands` of the noise strategy
/// (1: independent noise). With bands ≤ groups an example's participations
/// are at least G steps apart and meet disjoint rows of the strategy, so
/// the release is Poisson DP-SGD over ⌈T/G⌉ rounds at the same rate and
/// noise multiplier (amplified BandMF: Choquette-Choo et al. 2023, Thm. 4).
/// With more bands than groups no certified ε is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Participation {
    /// Cyclic groups G ≥ 1 (1: plain Poisson sampling).
    pub groups: usize,
    /// Bands b ≥ 1 of the noise strategy, at most G.
    pub bands: usize,
}

impl Participation {
    /// Plain Poisson sampling with independent noise.
    pub const POISSON: Participation = Participation { groups: 1, bands: 1 };

    /// The rounds an example can take part in over `steps` steps: ⌈T/G⌉.
    ///
    /// ```
    /// use propdp::privacy::Participation;
    /// assert_eq!(Participation { groups: 4, bands: 4 }.rounds(1024), 256);
    /// assert_eq!(Participation { groups: 3, bands: 1 }.rounds(1000), 334);
    /// assert_eq!(Participation::POISSON.rounds(7), 7);
    /// ```
    pub fn rounds(&self, steps: usize) -> usize {
        propdp_core::problem::rounds(steps, self.groups)
    }
}

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
    /// Cyclic participation groups G (DP-SGD only; default 1).
    pub groups: Option<u64>,
    /// Bands of the noise strategy (DP-SGD only; default 1, at most G).
    pub bands: Option<u64>,
    /// The neighbouring relation (default [`QueryArgs::default_neighbouring`]).
    pub neighbouring: Option<Neighbouring>,
    /// δ of the (ε, δ) guarantee (default 1e-6).
    pub delta_priv: Option<f64>,
    /// A noise to assess …
    pub noise: Option<f64>,
    /// … or an ε to calibrate it to …
    pub epsilon: Option<f64>,
    /// … or a zCDP ρ.
    pub rho: Option<f64>,
    /// Objective perturbation calibrated to a target below twice its floor:
    /// add the extra ridge (default) or refuse.
    pub extra_ridge: Option<ExtraRidge>,
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
            groups: None,
            bands: None,
            neighbouring: None,
            delta_priv: None,
            noise: None,
            epsilon: None,
            rho: None,
            extra_ridge: None,
        }
    }

    /// The relation when none is given: replace-one, the stronger; for
    /// DP-SGD in cyclic groups, add/remove-one, the relation amplified
    /// BandMF's guarantee and jax_privacy's `amplified_bandmf_event` are
    /// stated in (Choquette-Choo et al. 2023), so that its ε reads as
    /// theirs (the report names the relation either way).
    pub fn default_neighbouring(&self) -> Neighbouring {
        match self.groups {
            Some(_) => Neighbouring::AddRemoveOne,
            None => Neighbouring::ReplaceOne,
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
            ("groups", self.groups.is_some(), dpsgd, alg.clone()),
            ("bands", self.bands.is_some(), dpsgd, alg.clone()),
            (
                "extra_ridge",
                self.extra_ridge.is_some(),
                kind == AlgorithmKind::Objective && self.noise.is_none(),
                format!("{alg} with a given noise (it applies to objective perturbation calibrated to a target)"),
            ),
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
            participation: Participation {
                groups: usize::try_from(self.groups.unwrap_or(1)).unwrap_or(usize::MAX),
                bands: usize::try_from(self.bands.unwrap_or(1)).unwrap_or(usize::MAX),
            },
            neighbouring: self.neighbouring.unwrap_or(self.default_neighbouring()),
            delta_priv: self.delta_priv.unwrap_or(1e-6),
            noise,
            extra_ridge: self.extra_ridge.unwrap_or_default(),
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
    /// DP-SGD's cyclic groups and noise bands ([`Participation::POISSON`] otherwise).
    pub participation: Participation,
    /// The neighbouring relation.
    pub neighbouring: Neighbouring,
    /// δ of the (ε, δ) guarantee.
    pub delta_priv: f64,
    /// The noise.
    pub noise: NoiseLevel,
    /// Objective perturbation calibrated to a target whose floor exceeds
    /// half of it: add the extra ridge Δ (`Auto`) or refuse.
    pub extra_ridge: ExtraRidge,
}

impl Query {
    pub(super) fn mechanism(&self) -> Mechanism {
        let kind = self
            .algorithm
            .mechanism(self.lambda, self.rounds(), self.sample_rate, self.clip);
        self.model.mechanism(kind, self.neighbouring)
    }

    /// The rounds the guarantee composes: ⌈T/G⌉ for DP-SGD in G cyclic
    /// groups ([`Participation`]), T otherwise.
    pub fn rounds(&self) -> usize {
        self.participation.rounds(self.steps)
    }

    /// DP-SGD's run at `noise`: z = noise/min(C, L), the query's q and its rounds.
    pub(super) fn dpsgd_run(&self, noise: f64) -> Segment {
        Segment {
            noise_multiplier: noise / self.mechanism().dpsgd_sensitivity(self.clip),
            sample_rate: self.sample_rate,
            steps: self.rounds() as u64,
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

/// 1 ≤ G ≤ 10⁹ groups and 1 ≤ b ≤ G bands: more bands than groups meet
/// overlapping rows of the strategy, whose certified ε is not computed.
fn check_participation(p: Participation) -> Result<(), Argument> {
    if !(1..=1_000_000_000).contains(&p.groups) {
        return Err(Argument::new(
            "groups",
            format!(" = {} is invalid: allowed 1 ≤ G ≤ 1e9", p.groups),
        ));
    }
    if p.bands < 1 {
        return Err(Argument::new(
            "bands",
            " = 0 is invalid: allowed 1 ≤ bands ≤ groups".into(),
        ));
    }
    if p.bands > p.groups {
        return Err(Argument::both(
            "bands",
            "groups",
            format!(
                " ({} > {}): no certified ε for this pattern. With more bands than groups an example's \
                 participations meet overlapping rows of the strategy, whose amplified guarantee (MMCC) propdp \
                 does not compute; propdp run still predicts the error at a given sigma. Use bands ≤ groups \
                 (amplified BandMF)",
                p.bands, p.groups
            ),
        ));
    }
    Ok(())
}

/// Range checks of a query, naming the argument: the model's parameters
/// (M > 0), 0 < δ < 1, λ > 0 and finite for objective and output
/// perturbation (their sensitivity bounds need a ridge), 1 ≤ T ≤ 10⁹ for
/// DP-GD and DP-SGD, 0 < q ≤ 1, 0 < C < ∞ and 1 ≤ bands ≤ groups for DP-SGD (C required for a
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
            check_participation(q.participation)?;
        }
        AlgorithmKind::Objective | AlgorithmKind::Output => {
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
