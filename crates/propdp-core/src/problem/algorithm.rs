//! DP learning algorithms (docs/theory.md §1): F(θ) = Σᵢ ℓᵢ(θ) + (λ/2)‖θ‖².

use serde::{Deserialize, Serialize};

use super::Strategy;
use crate::accountant::MechanismKind;

/// The family of an algorithm, by its config name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlgorithmKind {
    /// Objective perturbation.
    Objective,
    /// Output perturbation.
    Output,
    /// DP full-batch gradient descent.
    Dpgd,
    /// Mini-batch DP-SGD: Poisson-subsampled batches (of cyclic groups),
    /// per-example clipping, noise independent or correlated by a strategy.
    Dpsgd,
}

impl AlgorithmKind {
    /// The mechanism of this kind, from what its guarantee depends on — the
    /// one place an algorithm is mapped to its mechanism: λ for objective
    /// and output perturbation, T for DP-GD, T, q and C (none: the loss's
    /// Lipschitz constant bounds the gradient) for DP-SGD. A kind ignores
    /// the values it does not take.
    ///
    /// ```
    /// use propdp_core::AlgorithmKind;
    /// use propdp_core::accountant::MechanismKind;
    /// assert_eq!(AlgorithmKind::Dpgd.mechanism(0.1, 50, 1.0, None), MechanismKind::Dpgd { steps: 50 });
    /// ```
    pub fn mechanism(self, lambda: f64, steps: usize, sample_rate: f64, clip: Option<f64>) -> MechanismKind {
        match self {
            AlgorithmKind::Objective => MechanismKind::Objective { lambda },
            AlgorithmKind::Output => MechanismKind::Output { lambda },
            AlgorithmKind::Dpgd => MechanismKind::Dpgd { steps },
            AlgorithmKind::Dpsgd => MechanismKind::Dpsgd {
                steps,
                sample_rate,
                clip,
            },
        }
    }

    /// Every algorithm, in config-name order.
    pub const ALL: [AlgorithmKind; 4] = [
        AlgorithmKind::Objective,
        AlgorithmKind::Output,
        AlgorithmKind::Dpgd,
        AlgorithmKind::Dpsgd,
    ];

    /// Every config name, quoted, in [`AlgorithmKind::ALL`]'s order: what an
    /// error lists as allowed.
    ///
    /// ```
    /// use propdp_core::AlgorithmKind;
    /// assert_eq!(AlgorithmKind::allowed(), r#""objective", "output", "dpgd", "dpsgd""#);
    /// ```
    pub fn allowed() -> String {
        let names: Vec<String> = AlgorithmKind::ALL.iter().map(|k| format!("{:?}", k.name())).collect();
        names.join(", ")
    }

    /// Config name: `objective`, `output`, `dpgd` or `dpsgd`.
    ///
    /// ```
    /// use propdp_core::AlgorithmKind;
    /// assert_eq!(AlgorithmKind::Dpgd.name(), "dpgd");
    /// assert_eq!("output".parse::<AlgorithmKind>(), Ok(AlgorithmKind::Output));
    /// assert!("sgd".parse::<AlgorithmKind>().unwrap_err().contains("\"dpgd\""));
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmKind::Objective => "objective",
            AlgorithmKind::Output => "output",
            AlgorithmKind::Dpgd => "dpgd",
            AlgorithmKind::Dpsgd => "dpsgd",
        }
    }

    /// Whether the algorithm runs T steps of noisy gradient descent (DP-GD,
    /// DP-SGD): its records carry per-step metrics, its theory is the DMFT.
    ///
    /// ```
    /// use propdp_core::AlgorithmKind;
    /// assert!(AlgorithmKind::Dpsgd.is_iterative() && !AlgorithmKind::Output.is_iterative());
    /// ```
    pub fn is_iterative(self) -> bool {
        match self {
            AlgorithmKind::Objective | AlgorithmKind::Output => false,
            AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd => true,
        }
    }

    /// Name in prose: "objective perturbation", "output perturbation", "DP gradient descent".
    pub fn title(self) -> &'static str {
        match self {
            AlgorithmKind::Objective => "objective perturbation",
            AlgorithmKind::Output => "output perturbation",
            AlgorithmKind::Dpgd => "DP gradient descent",
            AlgorithmKind::Dpsgd => "mini-batch DP-SGD",
        }
    }

    /// Config name of the privacy noise: `tau` (the output's noise) for
    /// output perturbation, `sigma` (the objective's or gradient's) otherwise.
    ///
    /// ```
    /// use propdp_core::AlgorithmKind;
    /// assert_eq!(AlgorithmKind::Output.noise_param(), "tau");
    /// assert_eq!(AlgorithmKind::Dpgd.noise_param(), "sigma");
    /// ```
    pub fn noise_param(self) -> &'static str {
        match self {
            AlgorithmKind::Output => "tau",
            AlgorithmKind::Objective | AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd => "sigma",
        }
    }
}

impl std::fmt::Display for AlgorithmKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for AlgorithmKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        AlgorithmKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown algorithm {s:?}: allowed {}", AlgorithmKind::allowed()))
    }
}

/// Whether a parameter name is an algorithm's privacy noise (`sigma`, `tau`).
pub fn is_noise_param(name: &str) -> bool {
    AlgorithmKind::ALL.iter().any(|k| k.noise_param() == name)
}

/// The non-private predicate of a parameter value: a privacy noise of 0.
/// (λ = 0 or any other parameter at 0 says nothing about privacy.)
///
/// ```
/// use propdp_core::problem::is_non_private;
/// assert!(is_non_private("sigma", 0.0) && is_non_private("tau", 0.0));
/// assert!(!is_non_private("lambda", 0.0) && !is_non_private("sigma", 0.5));
/// ```
pub fn is_non_private(param: &str, value: f64) -> bool {
    is_noise_param(param) && value == 0.0
}

/// A DP learning algorithm with its hyperparameters.
// DP-SGD holds its noise strategy inline (up to MAX_BANDS coefficients) so
// that an algorithm stays `Copy`, as every sweep point, record and solver
// takes it; the other variants are small
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Algorithm {
    /// θ̂ = argmin F(θ) + σ bᵀθ.
    Objective {
        /// Ridge strength λ.
        lambda: f64,
        /// Noise level σ of the linear term.
        sigma: f64,
    },
    /// θ̂ = argmin F(θ) + τ b.
    Output {
        /// Ridge strength λ.
        lambda: f64,
        /// Noise level τ added to the minimiser.
        tau: f64,
    },
    /// DP full-batch gradient descent: θ₀ = 0,
    /// θ_{t+1} = θ_t − η(∇F(θ_t) + σ ξ_t), t = 0..steps−1 (docs/theory.md §3).
    Dpgd {
        /// Ridge strength λ.
        lambda: f64,
        /// Noise level σ of each gradient.
        sigma: f64,
        /// Step size η.
        eta: f64,
        /// Number of steps T.
        steps: usize,
        /// Which loss is descended.
        loss_variant: LossVariant,
    },
    /// Mini-batch DP-SGD (docs/theory.md §3.1, §3.7): θ₀ = 0, the rows split
    /// into G balanced cyclic groups; at step t a Poisson batch B_t of group
    /// t mod G (each of its rows with probability q),
    /// θ_{t+1} = (1 − ηλ)θ_t − η Σ_{i∈B_t} clip_C(ℓ'ᵢ xᵢ) − ησ w_t, w = C⁻¹z
    /// with the strategy C (identity: w = ξ independent; G = 1: plain Poisson).
    Dpsgd {
        /// Ridge strength λ.
        lambda: f64,
        /// Noise level σ on the summed clipped gradient.
        sigma: f64,
        /// Step size η.
        eta: f64,
        /// Number of steps T.
        steps: usize,
        /// Which loss is descended.
        loss_variant: LossVariant,
        /// Poisson sample rate q ∈ (0, 1].
        sample_rate: f64,
        /// Per-example clipping norm C (none: no clipping).
        clip: Option<f64>,
        /// Cyclic participation groups G ≥ 1 (1: every row eligible at every step).
        #[serde(default = "one_group", skip_serializing_if = "is_one_group")]
        groups: usize,
        /// The noise strategy (identity: independent noise).
        #[serde(default, skip_serializing_if = "Strategy::is_identity")]
        strategy: Strategy,
    },
}

/// `groups`' default: one group, plain Poisson sampling.
fn one_group() -> usize {
    1
}

/// Whether `groups` is its default (records of plain DP-SGD omit it).
fn is_one_group(groups: &usize) -> bool {
    *groups == 1
}

/// The rounds an example can take part in over `steps` steps of DP-SGD in
/// `groups` cyclic groups, ⌈T/G⌉: with a noise strategy of at most G
/// bands, the release is Poisson DP-SGD over that many rounds
/// (Choquette-Choo et al. 2023, *(Amplified) banded matrix factorizations*,
/// Thm. 4; jax_privacy's `amplified_bandmf_event`).
///
/// ```
/// use propdp_core::problem::rounds;
/// assert_eq!((rounds(1024, 4), rounds(1000, 3), rounds(7, 1)), (256, 334, 7));
/// ```
pub fn rounds(steps: usize, groups: usize) -> usize {
    steps.div_ceil(groups.max(1))
}

/// Which loss DP-GD descends (docs/theory.md §3).
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

/// An algorithm by its shape: what the theory solves and the simulation runs.
/// Code that branches on static versus iterative algorithms matches on this
/// (exhaustively), so a new kind is placed by [`Algorithm::shape`] alone.
// the descent's strategy is inline, as in `Algorithm`
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// θ̂ = argmin F(θ) + σ bᵀθ + τ b: a perturbed minimiser (objective
    /// perturbation: τ = 0; output perturbation: σ = 0).
    Static {
        /// Ridge strength λ.
        lambda: f64,
        /// Noise σ of the objective's linear term.
        sigma: f64,
        /// Noise τ added to the minimiser.
        tau: f64,
    },
    /// T steps of noisy (sub-sampled, clipped) gradient descent.
    Descent(GradientSteps),
}

/// The hyperparameters of a gradient method (DP-GD: q = 1, C = ∞, G = 1,
/// identity strategy), in the form the DMFT and the simulation take: T
/// steps of size η, each on a batch of the eligible group t mod G drawn at
/// sample rate q, its per-example gradients clipped at C, plus noise σ·w_t
/// correlated in time by the strategy (docs/theory.md §3.7).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradientSteps {
    /// Ridge λ.
    pub lambda: f64,
    /// Noise σ.
    pub sigma: f64,
    /// Step size η.
    pub eta: f64,
    /// Number of steps T.
    pub steps: usize,
    /// Which loss is descended.
    pub loss_variant: LossVariant,
    /// Poisson sample rate q (1 for DP-GD).
    pub sample_rate: f64,
    /// Clipping threshold C (∞: none).
    pub clip: f64,
    /// Cyclic participation groups G (1 for DP-GD and plain DP-SGD).
    pub groups: usize,
    /// The noise strategy (identity for DP-GD).
    pub strategy: Strategy,
}

impl GradientSteps {
    /// Whether the steps are plain DP-GD/DP-SGD: one group and independent noise.
    pub fn is_plain(&self) -> bool {
        self.groups == 1 && self.strategy.is_identity()
    }
}

impl Algorithm {
    /// The algorithm's shape: (λ, σ, τ) of a perturbed minimiser, or the
    /// hyperparameters of its gradient steps.
    ///
    /// ```
    /// use propdp_core::{Algorithm, LossVariant, Shape};
    /// let out = Algorithm::Output { lambda: 1.0, tau: 0.5 };
    /// assert_eq!(out.shape(), Shape::Static { lambda: 1.0, sigma: 0.0, tau: 0.5 });
    /// let gd = Algorithm::Dpgd { lambda: 1.0, sigma: 0.5, eta: 0.1, steps: 3, loss_variant: LossVariant::Standard };
    /// let Shape::Descent(g) = gd.shape() else { panic!("DP-GD descends") };
    /// assert_eq!((g.sample_rate, g.clip), (1.0, f64::INFINITY));
    /// ```
    pub fn shape(&self) -> Shape {
        match *self {
            Algorithm::Objective { lambda, sigma } => Shape::Static {
                lambda,
                sigma,
                tau: 0.0,
            },
            Algorithm::Output { lambda, tau } => Shape::Static {
                lambda,
                sigma: 0.0,
                tau,
            },
            Algorithm::Dpgd {
                lambda,
                sigma,
                eta,
                steps,
                loss_variant,
            } => Shape::Descent(GradientSteps {
                lambda,
                sigma,
                eta,
                steps,
                loss_variant,
                sample_rate: 1.0,
                clip: f64::INFINITY,
                groups: 1,
                strategy: Strategy::IDENTITY,
            }),
            Algorithm::Dpsgd {
                lambda,
                sigma,
                eta,
                steps,
                loss_variant,
                sample_rate,
                clip,
                groups,
                strategy,
            } => Shape::Descent(GradientSteps {
                lambda,
                sigma,
                eta,
                steps,
                loss_variant,
                sample_rate,
                clip: clip.unwrap_or(f64::INFINITY),
                groups,
                strategy,
            }),
        }
    }

    /// DP-GD's and DP-SGD's hyperparameters ([`Shape::Descent`]); `None`
    /// for the static algorithms.
    ///
    /// ```
    /// use propdp_core::{Algorithm, LossVariant};
    /// let gd = Algorithm::Dpgd { lambda: 1.0, sigma: 0.5, eta: 0.1, steps: 3, loss_variant: LossVariant::Standard };
    /// assert_eq!(gd.gradient_steps().map(|g| g.steps), Some(3));
    /// assert!(Algorithm::Output { lambda: 1.0, tau: 1.0 }.gradient_steps().is_none());
    /// ```
    pub fn gradient_steps(&self) -> Option<GradientSteps> {
        match self.shape() {
            Shape::Descent(g) => Some(g),
            Shape::Static { .. } => None,
        }
    }

    /// The mechanism the accountant charges for this algorithm, with what its
    /// guarantee depends on (λ; T; q and C; [`AlgorithmKind::mechanism`]).
    /// The noise level is not part of it. DP-SGD in G cyclic groups with a
    /// strategy of at most G bands is Poisson DP-SGD over ⌈T/G⌉ rounds
    /// ([`rounds`]); with more bands than groups (or a BLT) in the fixed
    /// order (sample rate 1) the stream is one Gaussian release of the
    /// strategy's sensitivity ([`super::Strategy::sensitivity`]); sampled,
    /// they have no certified ε, and a budget is refused for them before
    /// any calibration reads this.
    ///
    /// ```
    /// use propdp_core::Algorithm;
    /// use propdp_core::accountant::MechanismKind;
    /// let out = Algorithm::Output { lambda: 0.5, tau: 1.0 };
    /// assert_eq!(out.mechanism(), MechanismKind::Output { lambda: 0.5 });
    /// ```
    pub fn mechanism(&self) -> MechanismKind {
        if let Algorithm::Dpsgd {
            steps,
            sample_rate,
            clip,
            groups,
            strategy,
            ..
        } = *self
            && sample_rate >= 1.0
            && strategy.bands().is_none_or(|b| b > groups)
        {
            // overlapping rows of C in the fixed order: one Gaussian release of the stream
            return MechanismKind::FixedOrder {
                sensitivity: strategy.sensitivity(steps, groups),
                clip,
            };
        }
        let (steps, sample_rate, clip) = match *self {
            Algorithm::Dpgd { steps, .. } => (steps, 1.0, None),
            Algorithm::Dpsgd {
                steps,
                sample_rate,
                clip,
                groups,
                ..
            } => (rounds(steps, groups), sample_rate, clip),
            Algorithm::Objective { .. } | Algorithm::Output { .. } => (0, 1.0, None),
        };
        self.kind().mechanism(self.lambda(), steps, sample_rate, clip)
    }

    /// The algorithm's family.
    pub fn kind(&self) -> AlgorithmKind {
        match self {
            Algorithm::Objective { .. } => AlgorithmKind::Objective,
            Algorithm::Output { .. } => AlgorithmKind::Output,
            Algorithm::Dpgd { .. } => AlgorithmKind::Dpgd,
            Algorithm::Dpsgd { .. } => AlgorithmKind::Dpsgd,
        }
    }

    /// Config name: `objective`, `output`, `dpgd` or `dpsgd`.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// Ridge strength λ.
    pub fn lambda(&self) -> f64 {
        match *self {
            Algorithm::Objective { lambda, .. }
            | Algorithm::Output { lambda, .. }
            | Algorithm::Dpgd { lambda, .. }
            | Algorithm::Dpsgd { lambda, .. } => lambda,
        }
    }

    /// The privacy noise: σ, or τ for output perturbation.
    pub fn noise(&self) -> f64 {
        match *self {
            Algorithm::Objective { sigma, .. } | Algorithm::Dpgd { sigma, .. } | Algorithm::Dpsgd { sigma, .. } => {
                sigma
            }
            Algorithm::Output { tau, .. } => tau,
        }
    }

    /// The same algorithm with another ridge λ.
    ///
    /// ```
    /// use propdp_core::Algorithm;
    /// let out = Algorithm::Output { lambda: 1.0, tau: 0.5 }.with_lambda(2.0);
    /// assert_eq!(out, Algorithm::Output { lambda: 2.0, tau: 0.5 });
    /// ```
    pub fn with_lambda(mut self, value: f64) -> Algorithm {
        match &mut self {
            Algorithm::Objective { lambda, .. }
            | Algorithm::Output { lambda, .. }
            | Algorithm::Dpgd { lambda, .. }
            | Algorithm::Dpsgd { lambda, .. } => *lambda = value,
        }
        self
    }

    /// The same algorithm with another noise level.
    pub fn with_noise(mut self, noise: f64) -> Algorithm {
        match &mut self {
            Algorithm::Objective { sigma, .. } | Algorithm::Dpgd { sigma, .. } | Algorithm::Dpsgd { sigma, .. } => {
                *sigma = noise
            }
            Algorithm::Output { tau, .. } => *tau = noise,
        }
        self
    }
}
