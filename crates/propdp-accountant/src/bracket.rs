//! A certified two-sided ε for T steps of Poisson-subsampled DP-SGD
//! (docs/privacy.md, "Certified brackets"): every ε comes as
//! [lower, upper], and the grid is refined until the bracket is narrow.
//!
//! For each direction of the privacy loss — remove and add under
//! add/remove-one; under replace-one the one pair
//! P = (1 − q)N(0, z²) + qN(−1, z²), Q = (1 − q)N(0, z²) + qN(1, z²), which
//! dominates a replaced example (its inclusion coin is shared; Zhu, Dong,
//! Wang 2022) and is its own mirror image ([`crate::pld`]) — the pessimistic
//! (connect-the-dots) PLD of one step ([`SubsampledGaussian::pld`]) is
//! composed T times by FFT on a grid of width Δ. Nothing below depends on
//! which pair: connect-the-dots interpolates any pair's exact curve, and is
//! a randomised rounding of any pair's loss.
//!
//! *Upper end.* The connect-the-dots PLD dominates the true pair, so its
//! δ(ε) is an upper bound once the mass above the FFT window (counted at
//! +∞) and the FFT's round-off are added:
//! δ⁺(ε) = δ̃(ε) + P(∞) + m_above + √k·‖e‖₂, k the grid points above ε and
//! ‖e‖₂ the bound of [`crate::pld::roundoff_bound`]. From the second grid
//! on the FFT runs on exponentially tilted PMFs at the saddle point of the
//! last grid's ε ([`crate::pld::compose_tilted`]), so that this round-off is
//! relative to the mass near ε rather than to the largest mass.
//!
//! *Lower end, by coupling.* Connect-the-dots is a randomised rounding of
//! the true loss Y to the two grid points around it that preserves
//! E[e^{−Y'} | Y] = e^{−Y} (the split of each interval's P-mass that keeps
//! its Q-mass). So D = Y' − Y lies in an interval of length Δ given Y, with
//! 0 ≤ E[D | Y] ≤ Δ²/8 (Jensen; Hoeffding's lemma), and over T independent
//! steps Hoeffding's inequality gives P(ΣY' > ΣY + η + TΔ²/8) ≤
//! exp(−2η²/(TΔ²)) =: β. Where ΣY ≥ ΣY' − η', η' = η + TΔ²/8, the hockey
//! stick (1 − e^{ε−ΣY})₊ ≥ (1 − e^{ε+η'−ΣY'})₊, hence
//!
//!   δ(ε) ≥ δ_{Y'}(ε + η') − β − T·τ,
//!
//! and since |D| ≤ Δ always, also with η' = TΔ and β = 0 (better for a few
//! steps, and where δ(ε) is so flat that subtracting β moves ε far: one step
//! at q = 10⁻⁴),
//! τ the per-step chance of a rounding farther than Δ (to +∞ above the top
//! grid point, up from below the bottom one: at most twice the one-step
//! tail, min(10⁻¹⁵, 10⁻³δ/T)). δ_{Y'} is bounded below by the composed curve less
//! the mass aliased from below the window and the round-off. η is chosen
//! among β ∈ δ·{10⁻¹, …, 10⁻⁶} and the deterministic bound. Such a lower
//! end loses about Δ√(T log(1/β)/2): it shrinks like Δ√T, where simply
//! rounding every loss down would lose TΔ.
//!
//! *Lower end, to second order.* The coupling's rounding is centred (up to
//! Δ²/8), so its first-order effect on δ cancels. Write ΣY' = X + M + Z,
//! X = ΣY, M = E[ΣD | Y] ∈ [0, TΔ²/8], and Z, given Y, a sum of T
//! independent centred variables each within an interval of length Δ (the
//! roundings farther than Δ, probability ≤ T·τ, aside). With
//! f(x) = (1 − e^{ε−x})₊, concave on either side of its kink at ε, and
//! f'(x) = e^{ε−x}·1{x > ε}, f(x + s) ≤ f(x) + f'(x)s + r(x, s) for every
//! x, s, with r = (s − (ε − x))₊ for x ≤ ε and (−s − (x − ε))₊ for x > ε;
//! E[f'(X)Z] = 0 and f is non-decreasing, so
//!
//!   δ(ε) ≥ δ_{Y'}(ε + TΔ²/8) − E[r(X, Z)] − T·τ.
//!
//! Given Y, E[(±Z − a)₊] ≤ ψ(a) = min(½(√(v² + a²) − a), √(2π)·v·Φ̄(a/v)),
//! v² = TΔ²/4 (Scarf's bound E[(Z − a)₊] ≤ ½(√(E Z² + a²) − a) with
//! E[Z² | Y] ≤ v², and Hoeffding's tail integrated from a), so
//! the remainder is at most E[ψ(|X − ε|)]: by Abel summation over
//! a_j = jv/4, Σ_j (ψ(a_j) − ψ(a_{j+1}))·F(a_{j+1}) + ψ(a_J), with
//! F(a) ≥ P(|X − ε| ≤ a) read off the composed masses near ε
//! ([`Composed::mass_upper`]): |X − ε| ≤ a and |Z| ≤ η put ΣY' in
//! [ε − a − η, ε + a + η + TΔ²/8], and P(|Z| > η) ≤ 2e^{−η²/(2v²)}. The
//! remainder is about ρ·v²·(1 + 2η/v)/2, ρ the density of ΣY' at ε, second
//! order in Δ: in ε the bound loses about 5TΔ² (the issue's case,
//! T = 10⁴ at ε ≈ 8.5), where the Hoeffding ones lose
//! 2Δ√(T log(1/β)/2) ≈ 5Δ√T — less below Δ ≈ 1/√T. The lower end is the
//! largest of all these bounds.
//!
//! The true δ(ε) = max over directions lies between the two curves, so
//! ε(δ) lies in [ε⁻, ε⁺], ε^± the smallest ε where the curve is ≤ δ
//! (bisection to 1e-12 relative, each end rounded outwards). Starting at
//! Δ = 2·10⁻³ (doubled, up to 4, while a part's one-step PLD would take
//! more than a quarter of the point limit, counted before it is built; a
//! part too wide even then is refused naming it), Δ shrinks (to the width's prediction, the width taken as
//! ∝ Δ^p with p ∈ [1, 2] measured on the last two grids, 2 at first; at
//! least halving) until (ε⁺ − ε⁻) ≤ w·ε⁺ (default w = 10⁻³) or the window
//! would exceed the point limit (memory stays bounded by it: about 40
//! bytes a point); the bracket reached is returned either way, `reached`
//! saying which. Segments of equal (z, q) are one part raised to their
//! summed steps (a schedule of 10⁵ one-step segments at two settings costs
//! two one-step PLDs), and one objective release alone is its own curve in
//! closed form. Add/remove-one, a direction whose upper curve is at most
//! δ/2 from the last lower end on cannot decide ε⁺ on a finer grid: its
//! coarser composition is kept (its upper curve stays a bound; it leaves
//! the lower end's max) instead of being composed again.
//!
//! *One step* needs no grid: the subsampled Gaussian's loss is monotone in
//! the observation under either relation, so δ(ε) is a difference of normal
//! tails (`OneStep`), bracketed by its round-off.
//!
//! Both ends bound the true ε of the pair under either relation: replace-one
//! is the tight pair, not a bound on it (group privacy of size 2 on the
//! add/remove curves, used before, was 7–168% above it, and its lower end
//! above the true ε). At q = 1 the pair is the Gaussian mechanism with
//! μ = 2/z per step. An objective-perturbation release in a ledger enters
//! under replace-one as a pair that dominates its own group-privacy bound
//! ([`ObjectiveBound::replace_pld`]).
//!
//! # References
//! - Doroshenko, Ghazi, Kamath, Kumar, Manurangsi (2022), *Connect the dots:
//!   tighter discrete approximations of privacy loss distributions*, PoPETs.
//! - Zhu, Dong, Wang (2022), *Optimal accounting of differential privacy via
//!   characteristic function*, AISTATS (replace-one's dominating pair).
//! - Hoeffding (1963), *Probability inequalities for sums of bounded random
//!   variables*, JASA.
//! - Scarf (1958), *A min-max solution of an inventory problem*, in Studies
//!   in the Mathematical Theory of Inventory and Production (the bound on
//!   E[(Z − a)₊] from the mean and variance).
//! - Gopi, Lee, Wutschitz (2021), *Numerical composition of differential
//!   privacy*, NeurIPS (an ε with lower and upper bounds from a coupling of
//!   the discretised and the true privacy loss).
//! - Higham (2002), *Accuracy and Stability of Numerical Algorithms*, §24.1
//!   (the FFT's error).

use crate::pld::{Aim, Composed, Direction, MAX_REPLACE_LOSS, Pld, SubsampledGaussian, compose_tilted};
use crate::{AccountantError, Neighbouring, ObjectiveBound, gdp_to_eps, norm_cdf};

/// What the bracket is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BracketSettings {
    /// Largest accepted (upper − lower)/upper; > 0.
    pub relative_width: f64,
    /// Most points an FFT window may hold (memory: about 40 bytes each).
    pub max_points: usize,
}

impl Default for BracketSettings {
    /// Width 0.1%, windows up to 2²² points (~170 MB at once).
    fn default() -> Self {
        BracketSettings {
            relative_width: 1e-3,
            max_points: 1 << 22,
        }
    }
}

/// A certified ε: the true ε (of the stated accounting) is in [lower, upper].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpsilonBracket {
    /// A lower bound on ε.
    pub lower: f64,
    /// An upper bound on ε: the guarantee to state.
    pub upper: f64,
    /// The grid width Δ of the last refinement (0: closed form).
    pub grid: f64,
    /// Whether (upper − lower) ≤ relative_width·upper was reached (if not,
    /// the point limit stopped the refinement).
    pub reached: bool,
}

/// Tail mass each one-step PLD leaves out (pessimistically at +∞), at most;
/// smaller where δ asks for it (1e-3·δ/T: T·tail stays far below δ).
const TAIL: f64 = 1e-15;
/// The first grid width tried.
const FIRST_GRID: f64 = 2e-3;
/// The coarsest first grid (where a part's loss spans millions: ε is then
/// in the hundreds of thousands, and a grid of 4 still resolves it).
const COARSEST_GRID: f64 = 4.0;
/// The aliasing a tilted window may let in, relative to the δ the curves
/// are read at ([`crate::pld::Aim`]); it is charged to the lower end, where
/// the one-step tails (2·10⁻³δ at most) and β (from 10⁻⁶δ) stand beside it.
const ALIAS: f64 = 1e-5;
/// Relative precision of the bisection on ε.
const BISECTION: f64 = 1e-12;

/// One segment of a training run: `steps` steps of the Poisson-subsampled
/// Gaussian at noise multiplier z = σ/C and rate q (a run that changes its
/// noise or batch rate, or trains more epochs later, is several).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// z = σ/C, the noise over the sensitivity.
    pub noise_multiplier: f64,
    /// Poisson rate q ∈ (0, 1].
    pub sample_rate: f64,
    /// Number of steps, ≥ 1.
    pub steps: u64,
}

impl Segment {
    /// Range checks, naming the argument with the segment's `prefix`
    /// (`segment[2].sample_rate`; no prefix: the bare name).
    pub(crate) fn check(&self, prefix: &str) -> Result<(), AccountantError> {
        let name = |n: &str| format!("{prefix}{n}");
        let (z, q) = (self.noise_multiplier, self.sample_rate);
        if !(z > 0.0 && z.is_finite()) {
            return Err(AccountantError::range(
                &name("noise_multiplier"),
                z,
                "0 < noise_multiplier < ∞",
            ));
        }
        if !(q > 0.0 && q <= 1.0) {
            return Err(AccountantError::range(&name("sample_rate"), q, "0 < sample_rate ≤ 1"));
        }
        if self.steps == 0 {
            return Err(AccountantError::range(&name("steps"), self.steps, "steps ≥ 1"));
        }
        Ok(())
    }
}

/// The certified ε at `delta` of a schedule of DP-SGD segments, composed
/// in one FFT per direction (docs/theory.md §4, "Certified bracket"); as
/// [`dpsgd_epsilon_bracket`] otherwise. Arguments out of range are refused
/// naming the segment (`segment[1].sample_rate`).
///
/// ```
/// use propdp_accountant::bracket::{BracketSettings, Segment, schedule_epsilon_bracket};
/// use propdp_accountant::Neighbouring;
/// let run = [
///     Segment { noise_multiplier: 1.0, sample_rate: 0.01, steps: 500 },
///     Segment { noise_multiplier: 1.5, sample_rate: 0.02, steps: 500 },
/// ];
/// let b = schedule_epsilon_bracket(&run, 1e-5, Neighbouring::AddRemoveOne, BracketSettings::default())
///     .unwrap()
///     .unwrap();
/// assert!(b.lower <= b.upper && b.reached);
/// ```
pub fn schedule_epsilon_bracket(
    segments: &[Segment],
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Result<Option<EpsilonBracket>, AccountantError> {
    check_schedule(segments)?;
    Ok(bracket_of(segments, &[], delta, neighbouring, settings, None)?.map(|b| b.0))
}

/// The certified ε at `delta` of a ledger: DP-SGD `segments` (Gaussian
/// releases — DP-GD, output perturbation, a published statistic — are
/// segments at rate 1) and objective-perturbation releases, each given by
/// its privacy-loss bound, composed in one FFT per direction. An objective
/// release enters add/remove-one as the pair whose loss is its bound
/// c + A|Z| ([`ObjectiveBound::pld`]), which dominates it; replace-one as the
/// pair whose curve is the convex hull of its group-privacy bound
/// ([`ObjectiveBound::replace_pld`]), which dominates it in both orders, beside
/// the segments' replace-one pair.
/// Either list may be empty, not both; arguments out of range are refused
/// naming them (`segment[1].sample_rate`, `objective[0].a`).
///
/// ```
/// use propdp_accountant::bracket::{BracketSettings, Segment, ledger_epsilon_bracket};
/// use propdp_accountant::{Neighbouring, ObjectiveBound};
/// let run = [Segment { noise_multiplier: 1.0, sample_rate: 0.01, steps: 1000 }];
/// // a logistic model (L = 1, β = 1/4) fitted by objective perturbation beside it
/// let release = [ObjectiveBound::new(1.0, 0.25, 1.0, 10.0, 4.0)];
/// let s = BracketSettings::default();
/// let both = ledger_epsilon_bracket(&run, &release, 1e-5, Neighbouring::AddRemoveOne, s).unwrap().unwrap();
/// let alone = ledger_epsilon_bracket(&run, &[], 1e-5, Neighbouring::AddRemoveOne, s).unwrap().unwrap();
/// assert!(both.lower > alone.upper && both.lower <= both.upper && both.reached);
/// ```
pub fn ledger_epsilon_bracket(
    segments: &[Segment],
    objectives: &[ObjectiveBound],
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Result<Option<EpsilonBracket>, AccountantError> {
    if segments.is_empty() && objectives.is_empty() {
        return Err(AccountantError::range(
            "segment",
            0,
            "at least one segment or objective release",
        ));
    }
    for (i, s) in segments.iter().enumerate() {
        s.check(&format!("segment[{i}]."))?;
    }
    for (i, b) in objectives.iter().enumerate() {
        if !(b.c0 >= 0.0 && b.c0.is_finite()) {
            return Err(AccountantError::range(
                &format!("objective[{i}].c0"),
                b.c0,
                "0 ≤ c0 = log(1 + βR²/λ) < ∞",
            ));
        }
        if !(b.a > 0.0 && b.a.is_finite()) {
            return Err(AccountantError::range(
                &format!("objective[{i}].a"),
                b.a,
                "0 < a = LR/σ < ∞",
            ));
        }
    }
    Ok(bracket_of(segments, objectives, delta, neighbouring, settings, None)?.map(|b| b.0))
}

/// The certified ε at `delta` of `steps` steps of DP-SGD at noise
/// multiplier z and Poisson rate q under `neighbouring`; arguments out of
/// range are refused naming them. `Ok(None)` when no finite ε is reached
/// even by the upper bound's discretisation at the finest grid (δ below
/// what the composition resolves).
///
/// ```
/// use propdp_accountant::bracket::{BracketSettings, dpsgd_epsilon_bracket};
/// use propdp_accountant::Neighbouring;
/// let b = dpsgd_epsilon_bracket(1.0, 0.01, 1000, 1e-5, Neighbouring::AddRemoveOne, BracketSettings::default())
///     .unwrap()
///     .unwrap();
/// assert!(b.lower <= b.upper && b.upper - b.lower <= 1e-3 * b.upper && b.reached);
/// ```
pub fn dpsgd_epsilon_bracket(
    z: f64,
    q: f64,
    steps: u64,
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
) -> Result<Option<EpsilonBracket>, AccountantError> {
    let segment = Segment {
        noise_multiplier: z,
        sample_rate: q,
        steps,
    };
    segment.check("")?;
    Ok(bracket_of(&[segment], &[], delta, neighbouring, settings, None)?.map(|b| b.0))
}

/// [`schedule_epsilon_bracket`] of checked segments, and whether the
/// refinement stopped early at a bracket that `decide` lies outside (a
/// search asking only whether ε⁺ ≤ `decide` needs no finer grid then).
pub(crate) fn bracket_of(
    segments: &[Segment],
    objectives: &[ObjectiveBound],
    delta: f64,
    neighbouring: Neighbouring,
    settings: BracketSettings,
    decide: Option<f64>,
) -> Result<Option<(EpsilonBracket, bool)>, AccountantError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(AccountantError::range("delta", delta, "0 < delta < 1"));
    }
    if !(settings.relative_width > 0.0 && settings.relative_width.is_finite()) {
        return Err(AccountantError::range(
            "relative_width",
            settings.relative_width,
            "0 < relative_width < ∞",
        ));
    }
    if objectives.is_empty() && segments.iter().all(|s| s.sample_rate >= 1.0) {
        // full-batch steps are one Gaussian mechanism, μ² = Σ T_i(Δ/σ_i)²
        // (Δ = C add/remove, 2C replace): the closed form, no grid
        let shift = match neighbouring {
            Neighbouring::AddRemoveOne => 1.0,
            Neighbouring::ReplaceOne => 2.0,
        };
        let mu2: f64 = segments
            .iter()
            .map(|s| s.steps as f64 * (shift / s.noise_multiplier).powi(2))
            .sum();
        return Ok(gdp_to_eps(mu2.sqrt(), delta).map(|e| {
            let exact = EpsilonBracket {
                lower: e,
                upper: e,
                grid: 0.0,
                reached: true,
            };
            (exact, false)
        }));
    }
    if let [one] = segments
        && one.steps == 1
        && objectives.is_empty()
    {
        // one step: the closed form, no grid
        let exact = OneStep {
            z: one.noise_multiplier,
            q: one.sample_rate,
            neighbouring,
        };
        return Ok(exact.bracket(delta).map(|(lower, upper)| {
            let bracket = EpsilonBracket {
                lower,
                upper,
                grid: 0.0,
                reached: upper - lower <= settings.relative_width * upper,
            };
            (bracket, false)
        }));
    }
    if let ([], [release]) = (segments, objectives) {
        // one release alone: its own curve in closed form, no grid
        let log_delta = |e: f64| match neighbouring {
            Neighbouring::AddRemoveOne => release.log_delta(e),
            Neighbouring::ReplaceOne => release.log_delta_replace(e),
        };
        // the root (to 4 ulp), each end moved 10⁻¹² outwards for the rounding of the curve
        return Ok(crate::eps_at(log_delta, delta).map(|e| {
            let exact = EpsilonBracket {
                lower: e * (1.0 - 1e-12),
                upper: e * (1.0 + 1e-12),
                grid: 0.0,
                reached: true,
            };
            (exact, false)
        }));
    }
    let total = total_steps(segments, objectives.len())?;
    let tail = TAIL.min(1e-3 * delta / total as f64);
    let mut grid = first_grid(segments, objectives, neighbouring, settings.max_points, tail)?;
    let mut last: Option<EpsilonBracket> = None;
    // a tilt guessed from the discrete curve alone, when the untilted bounds cannot reach δ
    let mut guess: Option<f64> = None;
    // a direction whose coarser composition stays far below δ over the last bracket
    let mut kept: Vec<Option<Composed>> = Vec::new();
    loop {
        // tilt the FFT towards the ε the last grid found, the window serving down to its lower end
        let aim = |eps: f64, least: f64| Aim {
            eps,
            least,
            alias: ALIAS * delta,
        };
        let near = last.map(|b| aim(b.upper, b.lower)).or(guess.map(|e| aim(e, e)));
        let Some(curves) = Curves::refine(
            segments,
            objectives,
            neighbouring,
            grid,
            settings.max_points,
            near,
            tail,
            kept.clone(),
        ) else {
            // too many points: back off towards the last grid that fitted
            match last {
                Some(b) if grid < 0.8 * b.grid => {
                    grid = (grid * b.grid).sqrt();
                    continue;
                }
                _ => return Ok(last.map(|b| (EpsilonBracket { reached: false, ..b }, false))),
            }
        };
        let Some(bracket) = curves.bracket(delta) else {
            // the upper curve does not reach δ at this grid (at a tiny δ the
            // untilted round-off bound exceeds it): tilt towards the ε the
            // discrete curve reads, once; then a finer grid may
            if near.is_none()
                && let Some(e) = curves.discrete_epsilon(delta)
            {
                guess = Some(e);
                continue;
            }
            return match last {
                Some(b) => Ok(Some((EpsilonBracket { reached: false, ..b }, false))),
                None if grid > 1e-5 => {
                    grid /= 2.0;
                    continue;
                }
                None => Ok(None),
            };
        };
        let bracket = EpsilonBracket {
            grid,
            reached: bracket.1 - bracket.0 <= settings.relative_width * bracket.1,
            lower: bracket.0,
            upper: bracket.1,
        };
        // a finer grid can only tighten either end; keep the tighter of each
        let bracket = match last {
            Some(b) => EpsilonBracket {
                lower: bracket.lower.max(b.lower),
                upper: bracket.upper.min(b.upper),
                ..bracket
            },
            None => bracket,
        };
        let width = bracket.upper - bracket.lower;
        let target = settings.relative_width * bracket.upper;
        if width <= target {
            let reached = EpsilonBracket {
                reached: true,
                ..bracket
            };
            return Ok(Some((reached, false)));
        }
        if decide.is_some_and(|d| bracket.upper <= d || bracket.lower > d) {
            return Ok(Some((bracket, true)));
        }
        // the width goes as Δ^p: p = 2 where the second-order lower bound
        // holds it (the usual case), 1 where a Hoeffding one does; p is
        // measured from the last two grids, 2 until there are two
        let order = match last {
            Some(b) if b.upper - b.lower > width => ((b.upper - b.lower) / width).ln() / (b.grid / grid).ln(),
            Some(_) => 1.0,
            None => 2.0,
        }
        .clamp(1.0, 2.0);
        last = Some(bracket);
        // of two directions, one whose upper curve is at most δ/2 from the
        // lower end on cannot decide ε⁺ on any finer grid (ε⁺ ≥ the true ε ≥
        // the lower end), so its composition is kept rather than refined
        let small: Vec<bool> = (curves.composed.iter())
            .map(|c| c.delta_upper(bracket.lower) <= 0.5 * delta)
            .collect();
        kept = (curves.composed.iter().zip(&small))
            .map(|(c, &s)| (s && small.iter().any(|s| !s)).then(|| c.clone()))
            .collect();
        // aim at 80% of the target, at least halving, but no finer than the
        // window's point limit allows (its length is about proportional to 1/Δ)
        let finest = grid * curves.points() as f64 / settings.max_points as f64 * 1.25;
        let next = (grid * (0.8 * target / width).powf(1.0 / order).clamp(0.05, 0.5)).max(finest);
        if next > 0.9 * grid {
            return Ok(last.map(|b| (EpsilonBracket { reached: false, ..b }, false)));
        }
        grid = next;
    }
}

/// The distinct (z, q) of `segments` in order of first appearance, each
/// with its summed steps (checked segments: the total fits in u64, see
/// [`total_steps`]). T equal steps compose as one PLD raised to the power
/// T, so a schedule of 10⁵ one-step segments at a few settings costs a few
/// PLDs, not 10⁵.
fn distinct(segments: &[Segment]) -> Vec<(SubsampledGaussian, u64)> {
    let mut index = std::collections::HashMap::new();
    let mut groups: Vec<(SubsampledGaussian, u64)> = Vec::new();
    for s in segments {
        let key = (s.noise_multiplier.to_bits(), s.sample_rate.to_bits());
        let i = *index.entry(key).or_insert_with(|| {
            let m = SubsampledGaussian {
                z: s.noise_multiplier,
                q: s.sample_rate,
            };
            groups.push((m, 0));
            groups.len() - 1
        });
        groups[i].1 += s.steps;
    }
    groups
}

/// The total steps of `segments` and `releases` more, refused naming
/// `steps` where it passes u64 (2⁶⁴ − 1).
pub(crate) fn total_steps(segments: &[Segment], releases: usize) -> Result<u64, AccountantError> {
    (segments.iter().map(|s| s.steps))
        .chain([releases as u64])
        .try_fold(0u64, u64::checked_add)
        .ok_or_else(|| {
            let sum = segments.iter().map(|s| u128::from(s.steps)).sum::<u128>() + releases as u128;
            AccountantError::range("steps", sum, "a total number of steps (and releases) below 2⁶⁴")
        })
}

/// The first grid width: [`FIRST_GRID`], doubled until every part's
/// one-step PLD takes at most a quarter of the point budget (counted
/// before any is built), so that the composition's window has room. A
/// part that needs more than that even at Δ = [`COARSEST_GRID`] — an objective release of
/// huge A = LR/σ (its loss spans about A², or 2A√(2 log(1/tail)) under
/// add/remove-one, in units of Δ), or a tiny noise multiplier (about 1/(2z²))
/// — is refused naming it and what to change.
fn first_grid(
    segments: &[Segment],
    objectives: &[ObjectiveBound],
    neighbouring: Neighbouring,
    max_points: usize,
    tail: f64,
) -> Result<f64, AccountantError> {
    let budget = max_points / 4;
    let groups = distinct(segments);
    let fits = |grid: f64| -> Option<(String, f64)> {
        for (i, b) in objectives.iter().enumerate() {
            if b.points(grid, tail, neighbouring).is_none_or(|n| n > budget) {
                return Some((format!("objective[{i}].a"), b.a));
            }
        }
        for (m, _) in &groups {
            if Direction::of(neighbouring)
                .iter()
                .any(|&d| m.points(d, grid, tail) > budget)
            {
                let i = (segments.iter())
                    .position(|s| s.noise_multiplier == m.z && s.sample_rate == m.q)
                    .unwrap_or(0);
                let name = if segments.len() == 1 && objectives.is_empty() {
                    "noise_multiplier".to_string()
                } else {
                    format!("segment[{i}].noise_multiplier")
                };
                return Some((name, m.z));
            }
        }
        None
    };
    let mut grid = FIRST_GRID;
    while let Some((name, value)) = fits(grid) {
        grid *= 2.0;
        if grid > COARSEST_GRID {
            let allowed = if name.starts_with("objective") {
                format!(
                    "a = LR/σ small enough that the release's privacy-loss distribution fits in max_points/4 = \
                     {budget} grid points at grid width {COARSEST_GRID} (under replace-one, its group-privacy bound \
                     must also fall to the tail below a loss of {MAX_REPLACE_LOSS}); raise the noise σ, or lower the \
                     Lipschitz constant L"
                )
            } else {
                format!(
                    "a noise multiplier large enough that one step's privacy-loss distribution fits in max_points/4 \
                     = {budget} grid points at grid width {COARSEST_GRID}; raise the noise σ, or lower the clip C"
                )
            };
            return Err(AccountantError::range(&name, value, &allowed));
        }
    }
    Ok(grid)
}

/// Range checks of a schedule's segments, naming `segment[i].sample_rate`
/// (even for one segment); at least one segment, and a total of steps
/// that fits in u64.
pub(crate) fn check_schedule(segments: &[Segment]) -> Result<(), AccountantError> {
    if segments.is_empty() {
        return Err(AccountantError::range("segment", 0, "at least one segment"));
    }
    for (i, s) in segments.iter().enumerate() {
        s.check(&format!("segment[{i}]."))?;
    }
    total_steps(segments, 0).map(|_| ())
}

/// Range checks of a run's segments, naming `segment[i].sample_rate` (a
/// single segment: the bare `sample_rate`); at least one segment, and a
/// total of steps that fits in u64.
pub(crate) fn check_segments(segments: &[Segment]) -> Result<(), AccountantError> {
    if segments.is_empty() {
        return Err(AccountantError::range("segment", 0, "at least one segment"));
    }
    for (i, s) in segments.iter().enumerate() {
        let prefix = if segments.len() == 1 {
            String::new()
        } else {
            format!("segment[{i}].")
        };
        s.check(&prefix)?;
    }
    total_steps(segments, 0).map(|_| ())
}

/// An upper bound δ⁺(ε) on the privacy profile of a schedule at every ε
/// (both orders of the relation's pair): the untilted pessimistic
/// composition of one grid, with the mass above the window, the tails and
/// the FFT's round-off added ([`crate::pld::Composed::delta_upper`]). Each (ε, δ⁺(ε)) is a valid
/// (ε, δ) guarantee; the curve is as tight as its grid (ε within about Δ)
/// and never below the round-off floor (about 10⁻¹³ of the largest mass).
pub struct UpperProfile {
    curves: Curves,
}

impl UpperProfile {
    /// The profile of `segments` under `neighbouring` at grid Δ = 2·10⁻³
    /// (coarser, by doubling, where the window would exceed
    /// `settings.max_points`); arguments out of range are refused naming
    /// the segment.
    ///
    /// ```
    /// use propdp_accountant::bracket::{BracketSettings, Segment, UpperProfile};
    /// use propdp_accountant::Neighbouring;
    /// let run = [Segment { noise_multiplier: 1.0, sample_rate: 0.01, steps: 1000 }];
    /// let p = UpperProfile::new(&run, Neighbouring::AddRemoveOne, BracketSettings::default()).unwrap();
    /// assert!(p.delta_upper(0.5) >= p.delta_upper(1.0) && p.delta_upper(1.0) > 0.0);
    /// ```
    pub fn new(
        segments: &[Segment],
        neighbouring: Neighbouring,
        settings: BracketSettings,
    ) -> Result<UpperProfile, AccountantError> {
        check_segments(segments)?;
        let mut grid = FIRST_GRID;
        loop {
            if let Some(curves) = Curves::new(segments, neighbouring, grid, settings.max_points, None, TAIL) {
                return Ok(UpperProfile { curves });
            }
            grid *= 2.0;
            if grid > 1.0 {
                return Err(AccountantError::range(
                    "max_points",
                    settings.max_points,
                    "enough points for a window at grid 1",
                ));
            }
        }
    }

    /// δ⁺(ε) for ε ≥ 0, at most 1.
    pub fn delta_upper(&self, eps: f64) -> f64 {
        self.curves.delta_upper(eps).min(1.0)
    }

    /// The grid width Δ of the composition.
    pub fn grid(&self) -> f64 {
        self.curves.grid
    }
}

/// The β/δ tried for the lower end, and `None` for the deterministic
/// η' = TΔ, β = 0 (the better one for a few steps, where Hoeffding's
/// √(T log(1/β)/2) exceeds T, and for a flat δ(ε), where subtracting even
/// 10⁻³δ moves ε far).
const BETAS: [Option<f64>; 6] = [Some(1e-1), Some(1e-2), Some(1e-3), Some(1e-4), Some(1e-6), None];

/// The pessimistic compositions of one grid (remove and add, or replace),
/// all segments in one.
struct Curves {
    composed: Vec<Composed>,
    /// Whether each direction was composed on this grid (not kept from a coarser one).
    fresh: Vec<bool>,
    steps: u64,
    grid: f64,
    tail: f64,
}

impl Curves {
    fn new(
        segments: &[Segment],
        neighbouring: Neighbouring,
        grid: f64,
        max_points: usize,
        near: Option<Aim>,
        tail: f64,
    ) -> Option<Curves> {
        Curves::refine(segments, &[], neighbouring, grid, max_points, near, tail, Vec::new())
    }

    /// [`Curves::new`], a direction's composition from a coarser grid kept
    /// in place of composing it on this one where `kept` holds it: its upper
    /// curve stays a valid bound, and it takes no part in the lower end
    /// (leaving a direction out of the max only lowers it).
    #[allow(clippy::too_many_arguments)]
    fn refine(
        segments: &[Segment],
        objectives: &[ObjectiveBound],
        neighbouring: Neighbouring,
        grid: f64,
        max_points: usize,
        near: Option<Aim>,
        tail: f64,
        kept: Vec<Option<Composed>>,
    ) -> Option<Curves> {
        // equal segments are one part raised to their summed steps
        let groups = distinct(segments);
        // no part's PLD beyond the window's budget, counted before it is built
        let too_long = |n: Option<usize>| n.is_none_or(|n| n > max_points);
        let directions = Direction::of(neighbouring);
        if objectives.iter().any(|b| too_long(b.points(grid, tail, neighbouring)))
            || (groups.iter()).any(|g| directions.iter().any(|&d| too_long(Some(g.0.points(d, grid, tail)))))
        {
            return None;
        }
        // an objective release's bound is the same in both directions
        let released: Vec<Pld> = objectives
            .iter()
            .map(|b| match neighbouring {
                Neighbouring::AddRemoveOne => b.pld(grid, tail),
                Neighbouring::ReplaceOne => b.replace_pld(grid, tail),
            })
            .collect();
        let one = |d: Direction| {
            let plds: Vec<Pld> = groups.iter().map(|g| g.0.pld(d, grid, tail)).collect();
            let parts: Vec<(&Pld, u64)> = (plds.iter().zip(&groups).map(|(p, g)| (p, g.1)))
                .chain(released.iter().map(|p| (p, 1)))
                .collect();
            compose_tilted(&parts, tail, max_points, near)
        };
        let mut kept = kept;
        kept.resize(directions.len(), None);
        let fresh: Vec<bool> = kept.iter().map(Option::is_none).collect();
        let composed = (directions.iter().zip(kept))
            .map(|(&d, k)| match k {
                Some(c) => Some(c),
                None => one(d),
            })
            .collect::<Option<Vec<Composed>>>()?;
        Some(Curves {
            composed,
            fresh,
            steps: groups.iter().map(|g| g.1).sum::<u64>() + objectives.len() as u64,
            grid,
            tail,
        })
    }

    /// The ε at δ of the discrete curves alone (no round-off or
    /// aliasing bound): a guide for the tilt, not a bound.
    fn discrete_epsilon(&self, delta: f64) -> Option<f64> {
        self.composed
            .iter()
            .map(|c| c.pld.epsilon(delta))
            .try_fold(0.0f64, |worst, e| e.map(|e| worst.max(e)))
            .filter(|e| *e > 0.0)
    }

    /// The directions composed on this grid.
    fn fresh(&self) -> impl Iterator<Item = &Composed> {
        self.composed.iter().zip(&self.fresh).filter(|p| *p.1).map(|p| p.0)
    }

    /// The longest window composed on this grid.
    fn points(&self) -> usize {
        self.fresh().map(|c| c.pld.pmf.len()).max().unwrap_or(0)
    }

    /// The lower bound δ(ε) ≥ δ_{Y'}(ε + η') − β − T·τ at the β given
    /// (Hoeffding), or at β = 0, η' = TΔ (`None`: every rounding is below Δ).
    fn delta_lower(&self, eps: f64, beta: Option<f64>) -> f64 {
        let (t, grid) = (self.steps as f64, self.grid);
        let (eta, beta) = match beta {
            Some(beta) => (
                grid * (t * (1.0 / beta).ln() / 2.0).sqrt() + t * grid * grid / 8.0,
                beta,
            ),
            None => (t * grid, 0.0),
        };
        // a rounding to +∞ (mass above the top point, ≤ tail) or up from below
        // the bottom one (Φ(−k) ≤ tail, `pld::sds`)
        let far = t * 2.0 * self.tail;
        let composed = self.fresh().map(|c| c.delta_lower(eps + eta)).fold(0.0, f64::max);
        (composed - beta - far).max(0.0)
    }

    /// The second-order lower bound δ(ε) ≥ δ_{Y'}(ε + TΔ²/8) − E[(|Z| − |X − ε|)₊] − T·τ
    /// (module docs), the worse direction: the remainder bounded by
    /// [`remainder`] from the composed masses near ε. Below the lowest ε
    /// whose remainder stays inside a direction's window (a tilted window
    /// starts near ε), the bound at that ε is taken instead: δ is
    /// non-increasing.
    fn delta_lower_smooth(&self, eps: f64) -> f64 {
        let (t, grid) = (self.steps as f64, self.grid);
        let shift = t * grid * grid / 8.0;
        let far = t * 2.0 * self.tail;
        let v = grid * t.sqrt() / 2.0;
        let reach = (LEVELS as f64 / 4.0 + SMEARS[SMEARS.len() - 1]) * v;
        let mut best: f64 = 0.0;
        for c in self.fresh() {
            let eps = eps.max(c.pld.offset as f64 * grid + reach);
            let d = c.delta_lower(eps + shift) - far;
            // the remainder only lowers d: skip it where d cannot win
            if d > best {
                best = best.max(d - remainder(c, eps, v, shift, far));
            }
        }
        best
    }
}

/// The multiples c of v at which the smearing η = c·v is tried in [`remainder`].
const SMEARS: [f64; 11] = [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
/// The levels a_j = j·v/4, j ≤ 48, of [`remainder`]'s Abel sum.
const LEVELS: usize = 48;

/// A bound on E[r(X, Z)] (module docs), X the true composed loss of `c`'s
/// direction and Z (given the true one-step losses Y) a sum of T
/// independent centred roundings, each within an interval of length Δ:
/// r(x, s) ≤ (±s − |x − ε|)₊ (the sign towards ε), and
/// E[(±Z − a)₊ | Y] ≤ ψ(a) = min(½(√(v² + a²) − a), √(2π)·v·Φ̄(a/v)),
/// v² = TΔ²/4 (Scarf's bound with E[Z² | Y] ≤ v², and Hoeffding's
/// P(±Z > u | Y) ≤ e^{−u²/(2v²)} integrated from a), so by Abel summation
/// over a_j = j·v/4, E[ψ(|X − ε|)] ≤ Σ_j (ψ(a_j) − ψ(a_{j+1}))·F(a_{j+1}) +
/// ψ(a_J), F(a) ≥ P(|X − ε| ≤ a). X is seen through Y' = X + M + Z
/// (M ∈ [0, `shift`] the rounding's conditional mean): |X − ε| ≤ a and
/// |Z| ≤ η put Y' in [ε − a − η, ε + a + η + shift], so
/// F(a) = min_η P⁺(Y' there) + 2e^{−η²/(2v²)} + `far`, the composed
/// masses bounded by [`Composed::mass_upper`].
fn remainder(c: &Composed, eps: f64, v: f64, shift: f64, far: f64) -> f64 {
    let psi = |a: f64| {
        let hoeffding = std::f64::consts::TAU.sqrt() * v * norm_cdf(-a / v);
        (0.5 * (v.hypot(a) - a)).min(hoeffding)
    };
    let cdf = |a: f64| {
        SMEARS
            .iter()
            .map(|&k| {
                let eta = k * v;
                c.mass_upper(eps - a - eta, eps + a + eta + shift) + 2.0 * (-0.5 * k * k).exp()
            })
            .fold(1.0, f64::min)
            + far
    };
    let level = |j: usize| j as f64 * v / 4.0;
    let sum: f64 = (0..LEVELS)
        .map(|j| (psi(level(j)) - psi(level(j + 1))) * cdf(level(j + 1)).min(1.0))
        .sum();
    // enlarged by 10⁻¹² relative for the rounding of its hundred terms
    (sum + psi(level(LEVELS))) * (1.0 + 1e-12)
}

impl Profile for Curves {
    /// The upper bound δ⁺(ε), the worse direction.
    fn delta_upper(&self, eps: f64) -> f64 {
        self.composed.iter().map(|c| c.delta_upper(eps)).fold(0.0, f64::max)
    }

    /// ε⁻ at δ: the largest over the second-order bound and the β tried
    /// (each a valid lower bound).
    fn lower_end(&self, delta: f64) -> f64 {
        let smooth = smallest_eps(|e| self.delta_lower_smooth(e), delta).map_or(0.0, |b| b.0);
        BETAS
            .iter()
            .map(|f| smallest_eps(|e| self.delta_lower(e, f.map(|f| f * delta)), delta).map_or(0.0, |b| b.0))
            .fold(smooth, f64::max)
    }
}

/// Upper and lower bounds on the privacy profile δ(ε) (the worse
/// direction of the relation's pair), and the ε bracket they give.
trait Profile {
    /// δ⁺(ε) ≥ δ(ε).
    fn delta_upper(&self, eps: f64) -> f64;

    /// ε⁻ at δ: a lower bound on the smallest ε with δ(ε) ≤ δ.
    fn lower_end(&self, delta: f64) -> f64;

    /// [ε⁻, ε⁺] at δ; `None` when the upper curve never reaches δ.
    fn bracket(&self, delta: f64) -> Option<(f64, f64)> {
        let upper = smallest_eps(|e| self.delta_upper(e), delta)?.1;
        Some((self.lower_end(delta).min(upper), upper))
    }
}

/// One step of the Poisson-subsampled Gaussian, δ(ε) in closed form: its
/// privacy loss is monotone in the observation x, so the optimal set is a
/// threshold. In units of σ, with Δ = 1/z:
///
/// - remove (P = (1 − q)N(0, 1) + qN(Δ, 1), Q = N(0, 1)): L > ε ⇔ x > a,
///   a = ln((e^ε − 1 + q)/q)/Δ + Δ/2, and δ = q·Φ̄(a − Δ) − (e^ε − 1 + q)·Φ̄(a);
/// - add (P, Q swapped): L > ε ⇔ x < b, b = ln((e^{−ε} − 1 + q)/q)/Δ + Δ/2
///   (δ = 0 when e^{−ε} ≤ 1 − q), and δ = (1 − e^ε(1 − q))·Φ(b) − e^ε q·Φ(b − Δ);
/// - replace-one (P = (1 − q)N(0, z²) + qN(−1, z²) against
///   Q = (1 − q)N(0, z²) + qN(1, z²), in units of C): L > ε ⇔ x < x*,
///   x* = −z²(ε/2 + asinh ρ), ρ = (1 − q) sinh(ε/2) e^{1/(2z²)}/q, and
///   δ = qΦ((x* + 1)/z) − q e^ε Φ((x* − 1)/z) − (1 − q)(e^ε − 1)Φ(x*/z)
///   ([`SubsampledGaussian::delta`]).
///
/// Each term is within a few ulp (libm's erfc and exp), and an error h in
/// the threshold changes δ only at second order (the threshold is where
/// the integrand vanishes); the curves add and subtract 10⁻¹³ of the terms'
/// sum, so they bracket δ.
struct OneStep {
    z: f64,
    q: f64,
    neighbouring: Neighbouring,
}

impl OneStep {
    /// (δ̂, the error bound) of the worse direction at ε.
    fn delta(&self, eps: f64) -> (f64, f64) {
        if self.neighbouring == Neighbouring::ReplaceOne {
            let [t1, t2, t3] = SubsampledGaussian { z: self.z, q: self.q }.replace_terms(eps);
            return (t1 - t2 - t3, 1e-13 * (t1 + t2 + t3.abs()));
        }
        let (d, q) = (1.0 / self.z, self.q);
        let tail = |x: f64| norm_cdf(-x);
        let r = eps.exp_m1() + q; // e^ε − 1 + q
        let a = (r / q).ln() / d + d / 2.0;
        let (t1, t2) = (q * tail(a - d), r * tail(a));
        let remove = (t1 - t2, 1e-13 * (t1 + t2));
        let s = (-eps).exp_m1() + q; // e^{−ε} − 1 + q
        let add = if s > 0.0 {
            let b = (s / q).ln() / d + d / 2.0;
            let (u1, u2) = (-(eps.exp() * (1.0 - q)) + 1.0, eps.exp() * q);
            let (u1, u2) = (u1 * norm_cdf(b), u2 * norm_cdf(b - d));
            (u1 - u2, 1e-13 * (u1.abs() + u2))
        } else {
            (0.0, 0.0)
        };
        if remove.0 + remove.1 >= add.0 + add.1 {
            remove
        } else {
            add
        }
    }
}

impl Profile for OneStep {
    fn delta_upper(&self, eps: f64) -> f64 {
        let (d, err) = self.delta(eps);
        (d + err).clamp(0.0, 1.0)
    }

    fn lower_end(&self, delta: f64) -> f64 {
        smallest_eps(
            |e| {
                let (d, err) = self.delta(e);
                (d - err).max(0.0)
            },
            delta,
        )
        .map_or(0.0, |b| b.0)
    }
}

/// For a non-increasing δ(ε): (a, b) with δ(a) > target ≥ δ(b), b − a ≤
/// 1e-12·b (a = b = 0 when δ(0) ≤ target): the smallest ε with δ(ε) ≤
/// target lies in (a, b]. `None` when δ stays above the target up to ε = 10⁶.
fn smallest_eps<F: Fn(f64) -> f64>(delta_of: F, target: f64) -> Option<(f64, f64)> {
    if delta_of(0.0) <= target {
        return Some((0.0, 0.0));
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    while delta_of(hi) > target {
        lo = hi;
        hi *= 2.0;
        if hi > 1e6 {
            return None;
        }
    }
    // regula falsi (Illinois) on log δ − log target, which is close to
    // linear in ε; bisection where a value is not finite or the step stalls
    let g = |e: f64| delta_of(e).ln() - target.ln();
    let (mut g_lo, mut g_hi) = (g(lo), g(hi));
    let mut side = 0i8;
    while hi - lo > BISECTION * hi {
        let secant = lo + (hi - lo) * g_lo / (g_lo - g_hi);
        let width = hi - lo;
        let mid = if secant.is_finite() && secant > lo + 1e-3 * width && secant < hi - 1e-3 * width {
            secant
        } else {
            0.5 * (lo + hi)
        };
        let gm = g(mid);
        if gm > 0.0 {
            lo = mid;
            g_lo = gm;
            if side == -1 {
                g_hi *= 0.5;
            }
            side = -1;
        } else {
            hi = mid;
            g_hi = gm;
            if side == 1 {
                g_lo *= 0.5;
            }
            side = 1;
        }
    }
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// δ of two steps in one direction, E_{Y₁}[δ₁(ε − Y₁)] with Y₁ the first
    /// step's loss (the second step's hockey stick given the first), by
    /// Simpson's rule over the observation x (the loss is monotone in x, the
    /// integrand smooth): an independent reference at a peaked, far from
    /// Gaussian composed loss.
    fn two_steps(m: SubsampledGaussian, d: Direction, eps: f64) -> f64 {
        let z = m.z;
        let normal =
            |x: f64, mean: f64| (-(x - mean).powi(2) / (2.0 * z * z)).exp() / (z * std::f64::consts::TAU.sqrt());
        let (a, b, n) = (-1.0 - 14.0 * z, 1.0 + 14.0 * z, 200_000usize);
        let h = (b - a) / n as f64;
        let mut sum = 0.0;
        for i in 0..=n {
            let x = a + i as f64 * h;
            let w = match i {
                0 => 1.0,
                i if i == n => 1.0,
                i if i % 2 == 1 => 4.0,
                _ => 2.0,
            };
            let (density, y) = match d {
                Direction::Remove => ((1.0 - m.q) * normal(x, 0.0) + m.q * normal(x, 1.0), m.loss(x)),
                Direction::Add => (normal(x, 0.0), -m.loss(x)),
                Direction::Replace => ((1.0 - m.q) * normal(x, 0.0) + m.q * normal(x, -1.0), m.replace_loss(x)),
            };
            sum += w * density * m.delta(d, eps - y);
        }
        sum * h / 3.0
    }

    /// The second-order lower curve lies below the two-step δ(ε) at every ε
    /// of a sweep, under either relation — at small q the composed loss is
    /// two spikes, nothing like the smooth density the bound's Δ² order
    /// rests on — and, at Δ = 10⁻³, within 1% of it where δ ≥ 10⁻⁹ (below,
    /// the untilted round-off bound counts).
    #[test]
    fn the_second_order_lower_curve_is_below_the_two_step_curve() {
        let relations = [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne];
        for ((z, q), n) in [(0.8, 0.01), (0.5, 0.001), (1.0, 0.2), (0.4, 0.05)]
            .into_iter()
            .flat_map(|c| relations.map(|n| (c, n)))
        {
            let m = SubsampledGaussian { z, q };
            let run = [Segment {
                noise_multiplier: z,
                sample_rate: q,
                steps: 2,
            }];
            let sweep: Vec<(f64, f64)> = (0..20)
                .map(|k| {
                    let eps = 0.1 * k as f64 * (1.0 + 1.0 / z);
                    let exact = (Direction::of(n).iter())
                        .map(|&d| two_steps(m, d, eps))
                        .fold(0.0, f64::max);
                    (eps, exact)
                })
                .collect();
            for grid in [1e-2, 4e-3, 1e-3] {
                let curves = Curves::new(&run, n, grid, 1 << 22, None, TAIL).unwrap();
                for &(eps, exact) in &sweep {
                    let lower = curves.delta_lower_smooth(eps);
                    let case = format!("{n:?} z {z} q {q} Δ {grid} ε {eps}: {lower:e} vs {exact:e}");
                    assert!(lower <= exact * (1.0 + 1e-9), "{case}");
                    if grid == 1e-3 && exact >= 1e-9 && eps > 0.0 {
                        assert!(lower >= 0.99 * exact, "{case}");
                    }
                }
            }
        }
    }

    /// At q = 1 (forced through the PLD) the second-order lower end lies
    /// below the exact Gaussian ε at grids up to 2·10⁻², and its distance
    /// shrinks like Δ²: from Δ = 4·10⁻³ to 10⁻³ at least 8-fold, where the
    /// Hoeffding ends shrink 4-fold.
    #[test]
    fn the_second_order_lower_end_is_below_the_exact_gaussian_epsilon() {
        for (z, steps, delta) in [
            (1.0, 100u64, 1e-5),
            (10.0, 100, 1e-5),
            (0.8, 10, 1e-3),
            (30.0, 10_000, 1e-6),
            (0.5, 2, 1e-5),
        ] {
            let run = [Segment {
                noise_multiplier: z,
                sample_rate: 1.0,
                steps,
            }];
            let exact = gdp_to_eps((steps as f64).sqrt() / z, delta).unwrap();
            let mut gaps = Vec::new();
            for grid in [2e-2, 1e-2, 4e-3, 1e-3] {
                let curves = Curves::new(&run, Neighbouring::AddRemoveOne, grid, 1 << 22, None, TAIL).unwrap();
                let smooth = smallest_eps(|e| curves.delta_lower_smooth(e), delta).unwrap().0;
                assert!(smooth <= exact, "z {z} T {steps} Δ {grid}: {smooth} > {exact}");
                gaps.push(exact - smooth);
            }
            assert!(gaps[2] >= 8.0 * gaps[3], "z {z} T {steps}: gaps {gaps:?}");
        }
    }

    /// At q = 1 the PLD machinery (forced, not the closed-form shortcut)
    /// brackets the exact Gaussian ε, μ = √T/z (add/remove-one) or 2√T/z
    /// (replace-one): a test of the certificate itself.
    #[test]
    fn the_pld_bracket_contains_the_exact_gaussian_epsilon_at_q_1() {
        for (z, steps, delta) in [(1.0, 100u64, 1e-5), (3.0, 1000, 1e-8), (0.8, 10, 1e-3)] {
            let run = [Segment {
                noise_multiplier: z,
                sample_rate: 1.0,
                steps,
            }];
            for (n, shift) in [(Neighbouring::AddRemoveOne, 1.0), (Neighbouring::ReplaceOne, 2.0)] {
                let exact = gdp_to_eps(shift * (steps as f64).sqrt() / z, delta).unwrap();
                for grid in [4e-3, 1e-3] {
                    let curves = Curves::new(&run, n, grid, 1 << 22, None, TAIL).unwrap();
                    let (lo, hi) = curves.bracket(delta).unwrap();
                    assert!(
                        lo <= exact && exact <= hi,
                        "{n:?} z {z} T {steps} δ {delta} grid {grid}: [{lo}, {hi}] ∌ {exact}"
                    );
                    assert!(hi - lo < 0.05 * exact, "[{lo}, {hi}] too wide around {exact}");
                }
            }
        }
    }

    /// One step: the closed form's bracket (a few ulp wide) lies inside the
    /// FFT machinery's certified bracket at a fine grid, both relations.
    #[test]
    fn the_one_step_closed_form_lies_in_the_pld_bracket() {
        let mut compared = 0;
        for (z, q) in [(0.5, 0.01), (1.0, 0.2), (0.3, 1e-4), (2.0, 0.5), (0.8, 0.05)] {
            for delta in [1e-3, 1e-6, 1e-10] {
                for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
                    let run = [Segment {
                        noise_multiplier: z,
                        sample_rate: q,
                        steps: 1,
                    }];
                    let exact = OneStep { z, q, neighbouring: n }.bracket(delta);
                    let pld = Curves::new(&run, n, 1e-4, 1 << 22, None, TAIL).unwrap().bracket(delta);
                    let (Some((lo, hi)), Some((plo, phi))) = (exact, pld) else {
                        assert_eq!(exact.is_some(), pld.is_some(), "z {z}, q {q}, δ {delta}, {n:?}");
                        continue;
                    };
                    assert!(
                        hi - lo <= 1e-9 * hi.max(1e-300),
                        "z {z}, q {q}, δ {delta}: [{lo}, {hi}]"
                    );
                    assert!(
                        plo <= lo && hi <= phi,
                        "z {z}, q {q}, δ {delta}, {n:?}: [{lo}, {hi}] not in [{plo}, {phi}]"
                    );
                    compared += usize::from(hi > 0.0);
                }
            }
        }
        assert!(
            compared >= 20,
            "only {compared} of 30 cases have a positive ε to compare"
        );
    }

    /// The lower curve is below the upper one at every ε, and the round-off
    /// bound is far below the δ the tests ask for.
    #[test]
    fn the_lower_curve_stays_below_the_upper_one() {
        let run = [Segment {
            noise_multiplier: 0.8,
            sample_rate: 0.02,
            steps: 2000,
        }];
        let curves = Curves::new(&run, Neighbouring::AddRemoveOne, 2e-3, 1 << 22, None, TAIL).unwrap();
        for i in 0..60 {
            let e = 0.1 * i as f64;
            for beta in [Some(1e-9), None] {
                assert!(
                    curves.delta_lower(e, beta) <= curves.delta_upper(e),
                    "ε = {e}, β = {beta:?}"
                );
            }
        }
        for c in &curves.composed {
            assert!(c.roundoff < 1e-11, "round-off bound {:e}", c.roundoff);
        }
    }

    /// A schedule of two equal segments is the run of their total steps;
    /// a mixed one lies between the runs at either noise throughout.
    #[test]
    fn schedules_compose_like_the_runs_they_split() {
        let s = BracketSettings::default();
        let n = Neighbouring::AddRemoveOne;
        let seg = |z: f64, steps: u64| Segment {
            noise_multiplier: z,
            sample_rate: 0.02,
            steps,
        };
        let whole = dpsgd_epsilon_bracket(1.0, 0.02, 1000, 1e-5, n, s).unwrap().unwrap();
        let split = schedule_epsilon_bracket(&[seg(1.0, 300), seg(1.0, 700)], 1e-5, n, s)
            .unwrap()
            .unwrap();
        assert!(
            split.lower <= whole.upper && whole.lower <= split.upper,
            "{split:?} vs {whole:?}"
        );
        let mixed = schedule_epsilon_bracket(&[seg(1.0, 500), seg(2.0, 500)], 1e-5, n, s)
            .unwrap()
            .unwrap();
        let loud = dpsgd_epsilon_bracket(2.0, 0.02, 1000, 1e-5, n, s).unwrap().unwrap();
        assert!(
            loud.upper < mixed.lower && mixed.upper < whole.lower,
            "{loud:?} {mixed:?} {whole:?}"
        );
        // full-batch segments: the Gaussian mechanism with μ² = Σ T_i/z_i²
        let full = |z: f64, steps: u64| Segment {
            sample_rate: 1.0,
            ..seg(z, steps)
        };
        let g = schedule_epsilon_bracket(&[full(1.0, 4), full(2.0, 16)], 1e-5, n, s)
            .unwrap()
            .unwrap();
        assert_eq!(g.lower, gdp_to_eps((4.0f64 + 16.0 / 4.0).sqrt(), 1e-5).unwrap());
    }

    #[test]
    fn bad_arguments_are_refused_by_name() {
        let s = BracketSettings::default();
        let err = |r: Result<Option<EpsilonBracket>, AccountantError>| r.unwrap_err().argument().to_string();
        let n = Neighbouring::AddRemoveOne;
        assert_eq!(err(dpsgd_epsilon_bracket(1.0, 1.5, 10, 1e-5, n, s)), "sample_rate");
        assert_eq!(err(dpsgd_epsilon_bracket(0.0, 0.5, 10, 1e-5, n, s)), "noise_multiplier");
        assert_eq!(err(dpsgd_epsilon_bracket(1.0, 0.5, 0, 1e-5, n, s)), "steps");
        assert_eq!(err(dpsgd_epsilon_bracket(1.0, 0.5, 10, 1.0, n, s)), "delta");
        let zero = BracketSettings {
            relative_width: 0.0,
            ..s
        };
        assert_eq!(
            err(dpsgd_epsilon_bracket(1.0, 0.5, 10, 1e-5, n, zero)),
            "relative_width"
        );
        let bad = [
            Segment {
                noise_multiplier: 1.0,
                sample_rate: 0.1,
                steps: 5,
            },
            Segment {
                noise_multiplier: 1.0,
                sample_rate: 0.0,
                steps: 5,
            },
        ];
        assert_eq!(
            err(schedule_epsilon_bracket(&bad, 1e-5, n, s)),
            "segment[1].sample_rate"
        );
        assert_eq!(err(schedule_epsilon_bracket(&[], 1e-5, n, s)), "segment");
    }
}
