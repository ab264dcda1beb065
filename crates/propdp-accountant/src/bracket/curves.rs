//! The curves a bracket is read from: the pessimistic compositions of one
//! grid with their upper curve δ⁺(ε) and lower curves (by coupling, to
//! second order; the module docs of [`crate::bracket`]), one step's closed
//! form, and [`UpperProfile`], the upper curve alone.

use super::settings::BracketSettings;
use crate::AccountantError;
use crate::events::{Segment, check_segments};
use crate::gaussian::norm_cdf;
use crate::neighbouring::Neighbouring;
use crate::objective::ObjectiveBound;
use crate::pld::{Aim, Composed, Direction, Pld, SubsampledGaussian, compose_tilted};

/// Tail mass each one-step PLD leaves out (pessimistically at +∞), at most;
/// smaller where δ asks for it (1e-3·δ/T: T·tail stays far below δ).
pub(crate) const TAIL: f64 = 1e-15;
/// The first grid width tried.
pub(super) const FIRST_GRID: f64 = 2e-3;
/// Relative precision of the bisection on ε.
const BISECTION: f64 = 1e-12;

/// The distinct (z, q) of `segments` in order of first appearance, each
/// with its summed steps (checked segments: the total fits in u64, see
/// [`total_steps`]). T equal steps compose as one PLD raised to the power
/// T, so a schedule of 10⁵ one-step segments at a few settings costs a few
/// PLDs, not 10⁵.
pub(super) fn distinct(segments: &[Segment]) -> Vec<(SubsampledGaussian, u64)> {
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
    /// use propdp_accountant::bracket::{BracketSettings, UpperProfile};
    /// use propdp_accountant::events::Segment;
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

/// An estimate of what the one-step PLDs' rounding may move a
/// composition's δ(ε) by. Part i's rounding moved mass w up across
/// intervals whose top loss is l (`Pld::connect_the_dots`); replacing one
/// step's PMF changes the composed δ(ε) by Σ w·g'(ξ), g(l) the other steps'
/// δ at ε − l, whose slope e^{ε−l}Q(L > ε − l) is at most P(L > ε − l) ≤
/// min(1, δ(ε − l − 1)/(1 − e⁻¹)) (δ(x − 1) ≥ (1 − e⁻¹)P(L > x)), and the
/// other steps' δ is at most the whole composition's (dropping a step's
/// output is post-processing), bounded by its upper curve. So T_i steps
/// move δ(ε) by at most T_i Σ w·min(1, 1.582·δ⁺(ε − l − 1)) — times 4
/// here for the noise the carry leaves unseen: the moved mass is the
/// visible part of floating-point noise, so this is an estimate, not a
/// bound. The refinement stops at the grid where it would reach a
/// hundredth of δ ([`crate::bracket`]), since it grows as Δ⁻² (at
/// z = 30.81, q = 1.01·10⁻⁴, T = 10⁵ a bracket read at Δ = 6·10⁻⁹ once
/// lay entirely above the one read at 9·10⁻⁹).
#[derive(Debug, Clone, Default)]
pub(super) struct Rounding {
    /// (top loss l, Σ_i T_i × mass-distance moved below l).
    moved: Vec<(f64, f64)>,
}

impl Rounding {
    /// The estimate at ε, given the composition's upper curve.
    fn at(&self, eps: f64, delta_upper: impl Fn(f64) -> f64) -> f64 {
        let spread = 1.0 / (1.0 - (-1.0f64).exp());
        4.0 * (self.moved.iter())
            .map(|&(l, w)| w * (spread * delta_upper(eps - l - 1.0)).min(1.0))
            .sum::<f64>()
    }

    /// The parts (their moved mass-distances, their steps).
    fn of<'a>(parts: impl Iterator<Item = (&'a [(f64, f64)], u64)>) -> Rounding {
        let mut moved: Vec<(f64, f64)> = Vec::new();
        for (m, steps) in parts {
            moved.extend(m.iter().map(|&(l, w)| (l, steps as f64 * w)));
        }
        Rounding { moved }
    }
}

/// A direction's composition and its rounding charge, kept from a coarser
/// grid in place of composing it again ([`Curves::refine`]).
pub(super) type Kept = Option<(Composed, Rounding)>;

/// The pessimistic compositions of one grid (remove and add, or replace),
/// all segments in one; read through [`Profile`] and the methods below.
pub(super) struct Curves {
    /// Each direction's composition.
    composed: Vec<Composed>,
    /// Each direction's estimate of what the one-step PLDs' rounding may
    /// move its δ by ([`Rounding`]): the refinement stops before it matters.
    rounding: Vec<Rounding>,
    /// Whether each direction was composed on this grid (not kept from a coarser one).
    fresh: Vec<bool>,
    steps: u64,
    grid: f64,
    tail: f64,
}

impl Curves {
    pub(super) fn new(
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
    pub(super) fn refine(
        segments: &[Segment],
        objectives: &[ObjectiveBound],
        neighbouring: Neighbouring,
        grid: f64,
        max_points: usize,
        near: Option<Aim>,
        tail: f64,
        kept: Vec<Kept>,
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
        // an objective release's bound is the same in both directions (its
        // replace-one hull has exact slopes: nothing clamped)
        let released: Vec<(Pld, Vec<(f64, f64)>)> = objectives
            .iter()
            .map(|b| match neighbouring {
                Neighbouring::AddRemoveOne => b.pld_moved(grid, tail),
                Neighbouring::ReplaceOne => (b.replace_pld(grid, tail), Vec::new()),
            })
            .collect();
        let one = |d: Direction| {
            let plds: Vec<(Pld, Vec<(f64, f64)>)> = groups.iter().map(|g| g.0.pld_moved(d, grid, tail)).collect();
            let parts: Vec<(&Pld, u64)> = (plds.iter().zip(&groups).map(|(p, g)| (&p.0, g.1)))
                .chain(released.iter().map(|p| (&p.0, 1)))
                .collect();
            let rounding = Rounding::of(
                (plds.iter().zip(&groups).map(|(p, g)| (p.1.as_slice(), g.1)))
                    .chain(released.iter().map(|p| (p.1.as_slice(), 1))),
            );
            compose_tilted(&parts, tail, max_points, near).map(|c| (c, rounding))
        };
        let mut kept = kept;
        kept.resize(directions.len(), None);
        let fresh: Vec<bool> = kept.iter().map(Option::is_none).collect();
        let (composed, rounding) = (directions.iter().zip(kept))
            .map(|(&d, k)| match k {
                Some(c) => Some(c),
                None => one(d),
            })
            .collect::<Option<Vec<(Composed, Rounding)>>>()?
            .into_iter()
            .unzip();
        Some(Curves {
            composed,
            rounding,
            fresh,
            steps: groups.iter().map(|g| g.1).sum::<u64>() + objectives.len() as u64,
            grid,
            tail,
        })
    }

    /// The ε at δ of the discrete curves alone (no round-off or
    /// aliasing bound): a guide for the tilt, not a bound.
    pub(super) fn discrete_epsilon(&self, delta: f64) -> Option<f64> {
        self.composed
            .iter()
            .map(|c| c.pld.epsilon(delta))
            .try_fold(0.0f64, |worst, e| e.map(|e| worst.max(e)))
            .filter(|e| *e > 0.0)
    }

    /// The directions composed on this grid, each with its rounding charge.
    pub(super) fn fresh(&self) -> impl Iterator<Item = (&Composed, &Rounding)> {
        (self.composed.iter().zip(&self.rounding).zip(&self.fresh))
            .filter(|p| *p.1)
            .map(|(p, _)| p)
    }

    /// The largest rounding charge at ε of a direction composed on this grid.
    pub(super) fn rounding(&self, eps: f64) -> f64 {
        let delta_upper = |e: f64| self.delta_upper(e);
        self.fresh().map(|f| f.1.at(eps, delta_upper)).fold(0.0, f64::max)
    }

    /// The compositions to keep for the next grid: a direction whose upper
    /// curve is at most δ/2 from `least` on (the last lower end) cannot
    /// decide ε⁺ on any finer grid (ε⁺ ≥ the true ε ≥ `least`), so it is
    /// kept rather than composed again, when another direction is not.
    pub(super) fn kept(&self, least: f64, delta: f64) -> Vec<Kept> {
        let small: Vec<bool> = (self.composed.iter().zip(&self.rounding))
            .map(|(c, _)| c.delta_upper(least) <= 0.5 * delta)
            .collect();
        (self.composed.iter().zip(&self.rounding).zip(&small))
            .map(|((c, r), &s)| (s && small.iter().any(|s| !s)).then(|| (c.clone(), r.clone())))
            .collect()
    }

    /// The longest window composed on this grid.
    pub(super) fn points(&self) -> usize {
        self.fresh().map(|c| c.0.pld.pmf.len()).max().unwrap_or(0)
    }

    /// The lower bound δ(ε) ≥ δ_{Y'}(ε + η') − β − T·τ at the β given
    /// (Hoeffding), or at β = 0, η' = TΔ (`None`: every rounding is below Δ).
    pub(super) fn delta_lower(&self, eps: f64, beta: Option<f64>) -> f64 {
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
        let composed = (self.fresh())
            .map(|(c, _)| c.delta_lower(eps + eta))
            .fold(0.0, f64::max);
        (composed - beta - far).max(0.0)
    }

    /// The second-order lower bound δ(ε) ≥ δ_{Y'}(ε + TΔ²/8) − E[(|Z| − |X − ε|)₊] − T·τ
    /// (module docs), the worse direction: the remainder bounded by
    /// [`remainder`] from the composed masses near ε. Below the lowest ε
    /// whose remainder stays inside a direction's window (a tilted window
    /// starts near ε), the bound at that ε is taken instead: δ is
    /// non-increasing.
    pub(super) fn delta_lower_smooth(&self, eps: f64) -> f64 {
        let (t, grid) = (self.steps as f64, self.grid);
        let shift = t * grid * grid / 8.0;
        let far = t * 2.0 * self.tail;
        let v = grid * t.sqrt() / 2.0;
        let reach = (LEVELS as f64 / 4.0 + SMEARS[SMEARS.len() - 1]) * v;
        let mut best: f64 = 0.0;
        for (c, _) in self.fresh() {
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
    /// log δ⁺(ε), the worse direction.
    fn log_delta_upper(&self, eps: f64) -> f64 {
        self.delta_upper(eps).ln()
    }

    /// ε⁻ at δ: the largest over the second-order bound and the β tried
    /// (each a valid lower bound).
    fn lower_end(&self, delta: f64) -> f64 {
        let smooth = smallest_eps(|e| self.delta_lower_smooth(e).ln(), delta.ln()).map_or(0.0, |b| b.0);
        BETAS
            .iter()
            .map(|f| smallest_eps(|e| self.delta_lower(e, f.map(|f| f * delta)).ln(), delta.ln()).map_or(0.0, |b| b.0))
            .fold(smooth, f64::max)
    }
}

impl Curves {
    /// The upper bound δ⁺(ε), the worse direction.
    pub(super) fn delta_upper(&self, eps: f64) -> f64 {
        self.composed.iter().map(|c| c.delta_upper(eps)).fold(0.0, f64::max)
    }
}

/// Upper and lower bounds on the privacy profile δ(ε) (the worse
/// direction of the relation's pair), and the ε bracket they give; in logs,
/// so that a δ below f64's smallest number, or a term e^ε beyond its
/// largest, is never formed.
pub(super) trait Profile {
    /// log δ⁺(ε) ≥ log δ(ε).
    fn log_delta_upper(&self, eps: f64) -> f64;

    /// ε⁻ at δ: a lower bound on the smallest ε with δ(ε) ≤ δ.
    fn lower_end(&self, delta: f64) -> f64;

    /// [ε⁻, ε⁺] at δ; `None` when the upper curve does not reach δ below
    /// ε = [`MAX_EPSILON`].
    fn bracket(&self, delta: f64) -> Option<(f64, f64)> {
        let upper = smallest_eps(|e| self.log_delta_upper(e), delta.ln())?.1;
        Some((self.lower_end(delta).min(upper), upper))
    }
}

/// One step of the Poisson-subsampled Gaussian, δ(ε) in closed form: its
/// privacy loss is monotone in the observation x, so the optimal set is a
/// threshold, and δ(ε) is a signed sum of normal tails in each direction
/// (remove, add; or replace-one's pair), evaluated in logs with a bound on
/// each term's error ([`SubsampledGaussian::log_terms`], the module docs of
/// `pld::terms`): the true δ lies between the bounds at every ε, e^ε beyond
/// f64 included. Under add/remove-one δ is the larger direction's, and so
/// are both bounds.
pub(super) struct OneStep {
    pub(super) z: f64,
    pub(super) q: f64,
    pub(super) neighbouring: Neighbouring,
}

impl OneStep {
    /// (log of a lower bound, log of an upper bound) on δ(ε), the worse direction.
    pub(super) fn log_delta_bounds(&self, eps: f64) -> (f64, f64) {
        let m = SubsampledGaussian { z: self.z, q: self.q };
        Direction::of(self.neighbouring)
            .iter()
            .map(|&d| m.log_terms(d, eps).log_bounds())
            .fold((f64::NEG_INFINITY, f64::NEG_INFINITY), |(lo, hi), (l, h)| {
                (lo.max(l), hi.max(h))
            })
    }
}

impl Profile for OneStep {
    fn log_delta_upper(&self, eps: f64) -> f64 {
        self.log_delta_bounds(eps).1.min(0.0)
    }

    fn lower_end(&self, delta: f64) -> f64 {
        smallest_eps(|e| self.log_delta_bounds(e).0, delta.ln()).map_or(0.0, |b| b.0)
    }
}

/// The largest ε a bracket is searched to: beyond, no finite ε is reported
/// (as [`crate::gdp_to_eps`] does beyond 10¹⁵).
pub(super) const MAX_EPSILON: f64 = 1e15;

/// For a non-increasing log δ(ε) (`log_delta_of`, −∞ where δ = 0): (a, b)
/// with log δ(a) > `log_target` ≥ log δ(b), b − a ≤ 1e-12·b (a = b = 0 when
/// log δ(0) ≤ `log_target`): the smallest ε with δ(ε) ≤ δ lies in (a, b].
/// A value that is not a number counts as above the target. `None` when
/// δ stays above the target up to ε = [`MAX_EPSILON`].
pub(super) fn smallest_eps<F: Fn(f64) -> f64>(log_delta_of: F, log_target: f64) -> Option<(f64, f64)> {
    let below = |e: f64| log_delta_of(e) <= log_target;
    if below(0.0) {
        return Some((0.0, 0.0));
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    while !below(hi) {
        lo = hi;
        hi *= 2.0;
        if hi > MAX_EPSILON {
            return None;
        }
    }
    // regula falsi (Illinois) on log δ − log target, which is close to
    // linear in ε; bisection where a value is not finite or the step stalls
    let g = |e: f64| {
        let g = log_delta_of(e) - log_target;
        if g.is_nan() { f64::INFINITY } else { g }
    };
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
