//! How DP-SGD's batches are drawn, and what each scheme's ε rests on.
//!
//! - *Poisson* (each example joins each batch independently with
//!   probability q): the certified PLD bracket ([`crate::epsilon`]; one run's
//!   tightened by its RDP and full-batch bounds).
//!   Add/remove-one: sensitivity C. Replace-one: the replaced example keeps
//!   its inclusion coin, so a step is (1 − q)N(s, σ²) + qN(s + g, σ²) against
//!   (1 − q)N(s, σ²) + qN(s + g', σ²), s the rest of the batch's sum and
//!   ‖g‖, ‖g'‖ ≤ C; it is dominated by the antipodal pair
//!   (1 − q)N(0, z²) + qN(∓1, z²) (Zhu, Dong, Wang 2022; dp-accounting's
//!   `REPLACE_ONE`), the tight replace-one curve.
//! - *Fixed-size batches* of b examples drawn without replacement from n
//!   (q = b/n): the relation is replace-one (n is public). When the replaced
//!   example is in the batch the sum of clipped gradients moves by at most
//!   2C, so the pair (N(2C, σ²), N(0, σ²)) dominates one unsampled step, and
//!   subsampling without replacement under substitution is dominated by
//!   (γP + (1 − γ)Q, Q) with γ = b/n, in either order (Zhu, Dong, Wang 2022,
//!   which tightens Balle, Barthe, Gaboardi 2018's
//!   (log(1 + γ(e^ε − 1)), γδ)). That is the Poisson add/remove pair at z/2:
//!   its bracket, both orders. The antipodal pair is not proven here: the
//!   rest of the batch is b − 1 examples when the replaced one is drawn
//!   and b when it is not, so the two outcomes do not share a centre s (an
//!   example drawn in its place can put the shift at 2C from it), and
//!   Lebeda, Regehr, Kamath, Steinke (2024) show that a single step's worst
//!   case need not decide the composition's; dp-accounting's PLD
//!   accountant offers no fixed-size event (its RDP accountant bounds it by
//!   Wang, Balle, Kasiviswanathan 2019).
//! - *Shuffled batches* (a permutation per epoch, cut into batches of q·n):
//!   no amplification by shuffling is known to be tight. An epoch holds
//!   k = ⌊1/q⌋ whole batches (a remainder of fewer than q·n rows dropped, or
//!   kept as one more batch: then k is larger, and the count below only
//!   looser), each example is in at most one batch of an epoch, and T steps
//!   touch ⌈T/k⌉ epochs: the run is at most m = ⌈T/⌊1/q⌋⌉ Gaussian
//!   mechanisms of sensitivity C (2C replace-one), μ = s·√m/z, exact. (⌈T·q⌉,
//!   used before, ignores the dropped remainder: at q = 0.4, T = 5 an epoch
//!   is two batches and an example can be in three.) The Poisson figure
//!   is reported beside it, as tensorflow_privacy's statement does, with the
//!   assumption it needs: that the batches had been Poisson-sampled.
//!
//! A schedule (segments i of T_i steps at (z_i, q_i)) is accounted the same
//! way, segment by segment in one composition: Poisson and fixed-size
//! batches by the certified bracket of the schedule (at z_i/2 for
//! fixed-size), shuffled batches as μ² = s² Σ_i m_i/z_i², each segment
//! starting a new epoch (a segment that starts mid-epoch may meet an example
//! once more: split it at the epoch boundary).
//!
//! # References
//! - Zhu, Dong, Wang (2022), *Optimal accounting of differential privacy
//!   via characteristic function*, AISTATS (dominating pairs of subsampling
//!   with and without replacement).
//! - Balle, Barthe, Gaboardi (2018), *Privacy amplification by subsampling:
//!   tight analyses via couplings and divergences*, NeurIPS.
//! - Lebeda, Regehr, Kamath, Steinke (2024), *Avoiding pitfalls for privacy
//!   accounting of subsampled mechanisms under composition*.
//! - Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang (2024), *How
//!   private are DP-SGD implementations?*, ICML (shuffled batches are not
//!   Poisson batches).

use crate::AccountantError;
use crate::account::segments_epsilon;
use crate::bracket::{BracketSettings, EpsilonBracket};
use crate::events::{Event, Segment, check_delta};
use crate::gaussian::gdp_to_eps;
use crate::neighbouring::{Neighbouring, relation_factor};

/// How DP-SGD's batches are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Each example joins each batch independently with probability q.
    Poisson,
    /// Batches of b examples without replacement from n, q = b/n (replace-one).
    FixedSize,
    /// A shuffle per epoch cut into batches of q·n.
    Shuffled,
}

impl Sampling {
    /// The scheme's name (`poisson`, `fixed_size`, `shuffled`).
    pub fn name(self) -> &'static str {
        match self {
            Sampling::Poisson => "poisson",
            Sampling::FixedSize => "fixed_size",
            Sampling::Shuffled => "shuffled",
        }
    }

    /// The scheme of a name (either `_` or `-`); `None` for anything else.
    pub fn parse(name: &str) -> Option<Sampling> {
        match name.replace('-', "_").as_str() {
            "poisson" => Some(Sampling::Poisson),
            "fixed_size" => Some(Sampling::FixedSize),
            "shuffled" => Some(Sampling::Shuffled),
            _ => None,
        }
    }
}

/// A run's ε under a sampling scheme, with what it assumes.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledEpsilon {
    /// The scheme.
    pub sampling: Sampling,
    /// The relation the guarantee holds for.
    pub neighbouring: Neighbouring,
    /// The shift one neighbour makes in one batch's sum, in units of C (1 or 2).
    pub sensitivity: f64,
    /// The guarantee to state (`None`: no finite ε).
    pub epsilon: Option<EpsilonBracket>,
    /// Shuffled batches: the Poisson figure, valid only if the batches had
    /// been Poisson-sampled.
    pub if_poisson: Option<EpsilonBracket>,
    /// What the guarantee rests on, in words.
    pub assumption: &'static str,
}

/// The ε at `delta` of the DP-SGD `event` (one run, or a schedule
/// composed as one run: its parts, [`Event::parts`]) with batches drawn by
/// `sampling` throughout, under `neighbouring` (see the module docs;
/// shuffled batches start a new epoch with each segment). Fixed-size
/// batches under add/remove-one are refused naming `neighbouring`;
/// objective releases naming `objective` (their noise is not sampled).
///
/// ```
/// use propdp_accountant::sampling::{Sampling, sampled_epsilon};
/// use propdp_accountant::bracket::BracketSettings;
/// use propdp_accountant::events::Event;
/// use propdp_accountant::Neighbouring;
/// let (n, s) = (Neighbouring::AddRemoveOne, BracketSettings::default());
/// let run = Event::dpsgd(1.0, 0.01, 1000);
/// let shuffled = sampled_epsilon(Sampling::Shuffled, &run, 1e-5, n, s).unwrap();
/// // ten epochs without amplification are far less private than the Poisson figure
/// assert!(shuffled.epsilon.unwrap().upper > 3.0 * shuffled.if_poisson.unwrap().upper);
/// let schedule = Event::Composed(vec![Event::dpsgd(1.0, 0.01, 500), Event::dpsgd(2.0, 0.02, 500)]);
/// let shuffled = sampled_epsilon(Sampling::Shuffled, &schedule, 1e-5, n, s).unwrap();
/// // ⌈5⌉ + ⌈10⌉ Gaussian releases: μ² = 5/1 + 10/4
/// let exact = propdp_accountant::gdp_to_eps((5.0f64 + 10.0 / 4.0).sqrt(), 1e-5).unwrap();
/// assert!((shuffled.epsilon.unwrap().upper / exact - 1.0).abs() < 1e-12);
/// ```
pub fn sampled_epsilon(
    sampling: Sampling,
    event: &Event,
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Result<SampledEpsilon, AccountantError> {
    let parts = event.parts()?;
    if !parts.objectives.is_empty() {
        return Err(AccountantError::range(
            "objective",
            parts.objectives.len(),
            "no objective releases: a sampling scheme draws DP-SGD's batches",
        ));
    }
    let segments = parts.segments.as_slice();
    check_delta(delta)?;
    // the certified ε of Poisson batches, as `epsilon` states it
    settings.check()?;
    let poisson = |run: &[Segment], relation: Neighbouring| segments_epsilon(run, delta, relation, settings);
    let s = relation_factor(neighbouring);
    Ok(match sampling {
        Sampling::Poisson => SampledEpsilon {
            sampling,
            neighbouring,
            sensitivity: s,
            epsilon: poisson(segments, neighbouring)?,
            if_poisson: None,
            assumption: match neighbouring {
                Neighbouring::AddRemoveOne => {
                    "Poisson sampling; one example added or removed moves a batch's sum by ≤ C"
                }
                Neighbouring::ReplaceOne => {
                    "Poisson sampling; a replaced example keeps its inclusion coin, and when drawn moves the batch's \
                     sum from one point within C of the rest to another (the pair (1 − q)N(0, z²) + qN(∓C, z²))"
                }
            },
        },
        Sampling::FixedSize => {
            if neighbouring != Neighbouring::ReplaceOne {
                return Err(AccountantError::range(
                    "neighbouring",
                    neighbouring.label(),
                    "replace-one with fixed-size batches (n is public: adding or removing an example changes \
                     the batch count)",
                ));
            }
            let shifted: Vec<Segment> = segments
                .iter()
                .map(|run| Segment {
                    noise_multiplier: run.noise_multiplier / 2.0,
                    ..*run
                })
                .collect();
            SampledEpsilon {
                sampling,
                neighbouring,
                sensitivity: 2.0,
                epsilon: poisson(&shifted, Neighbouring::AddRemoveOne)?,
                if_poisson: None,
                assumption: "batches of b = q·n drawn uniformly without replacement each step; a replaced example \
                             in the batch moves its sum by ≤ 2C (the subsampled pair at z/2, both orders)",
            }
        }
        Sampling::Shuffled => {
            // μ_i = √m_i/z_i per segment, μ = √Σμ_i² (one segment: μ_1 exactly)
            let mu = segments
                .iter()
                .map(|run| shuffled_batches(run.steps, run.sample_rate).sqrt() / run.noise_multiplier)
                .map(|m| m * m)
                .sum::<f64>()
                .sqrt();
            let e = gdp_to_eps(s * mu, delta);
            SampledEpsilon {
                sampling,
                neighbouring,
                sensitivity: s,
                epsilon: e.map(|e| EpsilonBracket {
                    lower: e,
                    upper: e,
                    grid: 0.0,
                    reached: true,
                }),
                if_poisson: poisson(segments, neighbouring)?,
                assumption: "shuffled batches, no amplification: each example is in at most ⌈T/⌊1/q⌋⌉ batches (per \
                             segment, each starting an epoch), each a Gaussian mechanism (the Poisson figure beside \
                             it holds only if the batches had been Poisson-sampled)",
            }
        }
    })
}
/// The most batches of shuffled epochs an example is in over `steps` steps
/// at rate `q`: ⌈T/⌊1/q⌋⌉ (module docs), ⌊1/q⌋ read to f64's precision.
///
/// ```
/// use propdp_accountant::sampling::shuffled_batches;
/// assert_eq!(shuffled_batches(5, 0.4), 3.0); // two batches an epoch: steps 1–2, 3–4, 5
/// assert_eq!(shuffled_batches(1000, 0.01), 10.0);
/// assert_eq!(shuffled_batches(7, 1.0), 7.0);
/// ```
pub fn shuffled_batches(steps: u64, q: f64) -> f64 {
    let per_epoch = (1.0 / q * (1.0 + 4.0 * f64::EPSILON)).floor().max(1.0);
    (steps as f64 / per_epoch).ceil().max(1.0)
}
