//! The dominating pairs of one step and their privacy-loss distributions:
//! the Poisson-subsampled Gaussian in either direction of add/remove-one or
//! replace-one's pair (closed-form δ(ε), connect-the-dots PLD), and an
//! objective-perturbation release's pairs under either relation.

use super::distribution::{MAX_ALLOCATION, Pld, sds};
use crate::AccountantError;
use crate::events::{check_delta, check_noise_multiplier, check_sample_rate};
use crate::gaussian::gdp_to_eps;
use crate::neighbouring::Neighbouring;
use crate::objective::ObjectiveBound;

/// Which hockey-stick divergence of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// H_ε(μ₁‖μ₀): the dataset with the example against the one without.
    Remove,
    /// H_ε(μ₀‖μ₁).
    Add,
    /// Replace-one: H_ε(P‖Q), P = (1 − q)N(0, z²) + qN(−1, z²),
    /// Q = (1 − q)N(0, z²) + qN(1, z²) (the other order is the same curve).
    Replace,
}

impl Direction {
    /// The directions whose worse curve is the relation's: remove and add
    /// (add/remove-one), or the one replace-one pair.
    pub fn of(neighbouring: Neighbouring) -> &'static [Direction] {
        match neighbouring {
            Neighbouring::AddRemoveOne => &[Direction::Remove, Direction::Add],
            Neighbouring::ReplaceOne => &[Direction::Replace],
        }
    }
}

/// log(e^a + e^b), exact where either is −∞.
fn log_add_exp(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// One step of the Poisson-subsampled Gaussian: noise multiplier z, rate q.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubsampledGaussian {
    /// z = σ/C.
    pub z: f64,
    /// Sampling rate q ∈ (0, 1].
    pub q: f64,
}

impl SubsampledGaussian {
    /// The mechanism of noise multiplier z = σ/C > 0 (finite) and rate
    /// 0 < q ≤ 1, refused naming the field otherwise.
    ///
    /// ```
    /// use propdp_accountant::pld::SubsampledGaussian;
    /// assert!(SubsampledGaussian::new(1.0, 0.01).is_ok());
    /// let e = SubsampledGaussian::new(1.0, 1.5).unwrap_err().to_string();
    /// assert!(e.contains("sample_rate") && e.contains("0 < sample_rate ≤ 1"), "{e}");
    /// assert!(SubsampledGaussian::new(f64::INFINITY, 0.5).unwrap_err().to_string().contains("noise_multiplier"));
    /// ```
    pub fn new(z: f64, q: f64) -> Result<Self, AccountantError> {
        check_noise_multiplier("noise_multiplier", z)?;
        check_sample_rate("sample_rate", q)?;
        Ok(SubsampledGaussian { z, q })
    }

    /// ε at `delta` after T steps (add/remove-one, the worse direction),
    /// from PLDs on a grid of width `grid` with tails of mass `tail`
    /// treated pessimistically, composed directly (no FFT round-off; the
    /// fixed-grid figure, not a certified bracket); `None` when no finite ε
    /// reaches `delta`; out-of-range arguments refused naming them
    /// (`noise_multiplier`, `sample_rate`, `steps`, `delta`, `grid`). At
    /// q = 1 the T steps are exactly the Gaussian mechanism with μ = √T/z,
    /// whose curve is used instead of a grid.
    ///
    /// ```
    /// use propdp_accountant::pld::SubsampledGaussian;
    /// let m = SubsampledGaussian { z: 1.0, q: 0.01 };
    /// let e = m.epsilon(1000, 1e-5, 1e-3, 1e-15).unwrap().unwrap();
    /// // the fixed-grid PLD reads a finite ε (an upper bound, to the grid's rounding)
    /// assert!(e > 0.0 && e.is_finite());
    /// assert_eq!(m.epsilon(0, 1e-5, 1e-3, 1e-15).unwrap_err().argument(), "steps");
    /// ```
    pub fn epsilon(&self, steps: u64, delta: f64, grid: f64, tail: f64) -> Result<Option<f64>, AccountantError> {
        let m = SubsampledGaussian::new(self.z, self.q)?;
        if steps == 0 {
            return Err(AccountantError::range("steps", steps, "steps ≥ 1"));
        }
        check_delta(delta)?;
        if !(grid > 0.0 && grid <= 0.1) {
            return Err(AccountantError::range("grid", grid, "0 < Δ ≤ 0.1"));
        }
        if m.q >= 1.0 {
            return Ok(gdp_to_eps((steps as f64).sqrt() / m.z, delta));
        }
        for direction in [Direction::Remove, Direction::Add] {
            let n = m.points(direction, grid, tail);
            if n > MAX_ALLOCATION {
                let needs = if n == usize::MAX {
                    format!("more than {}", 2 * MAX_ALLOCATION)
                } else {
                    n.to_string()
                };
                return Err(AccountantError::range(
                    "noise_multiplier",
                    m.z,
                    &format!(
                        "a noise multiplier whose one-step PLD fits in {MAX_ALLOCATION} points at grid {grid} (it needs {needs}): raise it, or coarsen the grid"
                    ),
                ));
            }
        }
        let mut worst: f64 = 0.0;
        for direction in [Direction::Remove, Direction::Add] {
            match m.pld(direction, grid, tail).self_compose(steps, tail).epsilon(delta) {
                Some(e) => worst = worst.max(e),
                None => return Ok(None),
            }
        }
        Ok(Some(worst))
    }

    /// The exact δ(ε) of one step in one direction.
    ///
    /// With u = (2x − 1)/(2z²), the loss of the remove direction is
    /// L(x) = log(1 − q + q e^u) at x ~ μ₁, increasing in x, so
    /// δ = μ₁(x > x*) − e^ε μ₀(x > x*) with L(x*) = ε; the add direction's loss
    /// is −L(x) at x ~ μ₀, and δ = μ₀(x < x*) − e^ε μ₁(x < x*) with −L(x*) = ε.
    /// Replace-one's loss is decreasing in x, and δ = P(x < x*) − e^ε Q(x < x*)
    /// with x* = −z²(ε/2 + asinh ρ) (module docs). Each is a signed sum of
    /// normal tails weighted by q, e^ε, …, evaluated in logs (the sibling
    /// module `terms`): finite and accurate at every ε, e^ε beyond f64 included.
    ///
    /// ```
    /// use propdp_accountant::pld::{Direction, SubsampledGaussian};
    /// use propdp_accountant::delta_gaussian;
    /// // q = 1 is the Gaussian mechanism with μ = 1/z, in both directions,
    /// // and with μ = 2/z under replace-one
    /// let m = SubsampledGaussian { z: 0.8, q: 1.0 };
    /// for d in [Direction::Remove, Direction::Add] {
    ///     assert!((m.delta(d, 0.7) - delta_gaussian(0.7, 1.25)).abs() < 1e-12);
    /// }
    /// assert!((m.delta(Direction::Replace, 0.7) - delta_gaussian(0.7, 2.5)).abs() < 1e-12);
    /// ```
    pub fn delta(&self, direction: Direction, eps: f64) -> f64 {
        self.log_terms(direction, eps).log_value().exp()
    }

    /// The replace-one threshold x* with L(x*) = ε (module docs):
    /// x* = −z²(ε/2 + asinh ρ), ρ = (1 − q) sinh(ε/2) e^{1/(2z²)}/q, ρ taken
    /// in logs (it overflows at small z) and asinh ρ = log 2ρ where ρ > e³⁰.
    pub(crate) fn replace_threshold(&self, eps: f64) -> f64 {
        let (z, q) = (self.z, self.q);
        let half = 0.5 * eps.abs();
        // log sinh(|ε|/2), without overflow
        let log_sinh = if half > 20.0 {
            half - std::f64::consts::LN_2
        } else {
            half.sinh().ln()
        };
        let log_rho = (-q).ln_1p() + log_sinh + 0.5 / (z * z) - q.ln();
        let asinh = if log_rho > 30.0 {
            log_rho + std::f64::consts::LN_2
        } else {
            log_rho.exp().asinh()
        };
        -z * z * (0.5 * eps + asinh.copysign(eps))
    }

    /// The grid points k_lo..k_lo + n of one step's PLD: the top is the first
    /// point where δ ≤ `tail` (the rest goes to +∞ in the pessimistic PLD),
    /// the bottom the remove direction's least loss log(1 − q), or (add,
    /// replace, q = 1) a point below which lies mass Φ(−k) ≤ `tail`,
    /// k = max(8.5, √(2 log(1/tail))) (Φ(−8.5) ≈ 1e-17).
    /// `None` where it would pass [`MAX_ALLOCATION`] points (a tiny z: the
    /// loss of an included example is about 1/(2z²)), counted without
    /// stepping that far.
    fn support(&self, direction: Direction, grid: f64, tail: f64) -> Option<(i64, usize)> {
        let z = self.z;
        let lower = match direction {
            Direction::Remove if self.q < 1.0 => (1.0 - self.q).ln(),
            Direction::Remove => self.loss(1.0 - sds(tail) * z),
            Direction::Add => -self.loss(sds(tail) * z),
            // P's components sit at 0 and −1: P(x > kz) ≤ Φ(−k)
            Direction::Replace => self.replace_loss(sds(tail) * z),
        };
        let first = (lower / grid).floor() - 1.0;
        let most = 2.0 * MAX_ALLOCATION as f64;
        if first.is_nan() || first.abs() > most {
            return None;
        }
        let k_lo = first as i64;
        // (a δ that is not a number never counts as below the tail)
        let mut k_hi = 1i64;
        loop {
            let d = self.delta(direction, k_hi as f64 * grid);
            if d <= tail {
                break;
            }
            k_hi *= 2;
            if (k_hi - k_lo) as f64 > most {
                return None;
            }
        }
        Some((k_lo, (k_hi - k_lo + 1) as usize))
    }

    /// The remove direction's loss L(x) = log(1 − q + q e^u), u = (2x − 1)/(2z²),
    /// without overflow.
    pub(crate) fn loss(&self, x: f64) -> f64 {
        let u = (2.0 * x - 1.0) / (2.0 * self.z * self.z);
        log_add_exp((-self.q).ln_1p(), self.q.ln() + u)
    }

    /// Replace-one's loss log P(x)/Q(x) = log(1 − q + q e^{(−2x−1)/(2z²)})
    /// − log(1 − q + q e^{(2x−1)/(2z²)}), decreasing in x, without overflow.
    pub(crate) fn replace_loss(&self, x: f64) -> f64 {
        let s = 2.0 * self.z * self.z;
        let (keep, take) = ((-self.q).ln_1p(), self.q.ln());
        log_add_exp(keep, take + (-2.0 * x - 1.0) / s) - log_add_exp(keep, take + (2.0 * x - 1.0) / s)
    }

    /// The number of grid points of [`SubsampledGaussian::pld`], found
    /// without allocating them (a tiny z spreads one step's loss over
    /// about 1/(2z²Δ) points).
    /// `usize::MAX` where it passes [`MAX_ALLOCATION`].
    pub fn points(&self, direction: Direction, grid: f64, tail: f64) -> usize {
        self.support(direction, grid, tail).map_or(usize::MAX, |s| s.1)
    }

    /// The connect-the-dots PLD of one step in `direction` on the grid of
    /// width `grid`, with tails of mass below `tail` left out
    /// pessimistically; at most [`MAX_ALLOCATION`] points (ask
    /// [`SubsampledGaussian::points`] first).
    pub fn pld(&self, direction: Direction, grid: f64, tail: f64) -> Pld {
        self.pld_moved(direction, grid, tail).0
    }

    /// [`SubsampledGaussian::pld`] and the mass-distance its rounding moved
    /// (`Pld::connect_the_dots`), the measure of its numerical noise.
    pub(crate) fn pld_moved(&self, direction: Direction, grid: f64, tail: f64) -> (Pld, Vec<(f64, f64)>) {
        let (k_lo, n) = self
            .support(direction, grid, tail)
            .filter(|s| s.1 <= MAX_ALLOCATION)
            .expect("a support within MAX_ALLOCATION points: check `points` first");
        let deltas: Vec<f64> = (0..n)
            .map(|i| self.delta(direction, (k_lo + i as i64) as f64 * grid))
            .collect();
        Pld::connect_the_dots(k_lo, grid, &deltas)
    }
}

impl ObjectiveBound {
    /// The connect-the-dots PLD of one objective-perturbation release on
    /// the grid of width `grid`: the pair whose privacy loss is the bound
    /// L = c + A|Z| (Z standard normal; either direction), whose curve is
    /// [`crate::ObjectiveBound::delta`]. It dominates the release: its loss
    /// bounds the true one pointwise, and the hockey stick is monotone in
    /// the loss. The support starts at c (no loss is lower) and ends at the
    /// first point where δ ≤ `tail` (the rest at +∞).
    ///
    /// ```
    /// use propdp_accountant::ObjectiveBound;
    /// let b = ObjectiveBound::new(1.0, 0.25, 1.0, 1.0, 2.0);
    /// let p = b.pld(1e-3, 1e-15);
    /// // on the grid the discrete curve passes through the bound's own
    /// for eps in [0.5, 1.0, 2.0] {
    ///     let (d, exact) = (p.delta(eps), b.delta(eps));
    ///     assert!(d >= exact * (1.0 - 1e-9) && d <= exact * 1.01 + 1e-15, "{eps}: {d} vs {exact}");
    /// }
    /// ```
    pub fn pld(&self, grid: f64, tail: f64) -> Pld {
        self.pld_moved(grid, tail).0
    }

    /// [`crate::ObjectiveBound::pld`] and the mass-distance its rounding moved.
    pub(crate) fn pld_moved(&self, grid: f64, tail: f64) -> (Pld, Vec<(f64, f64)>) {
        let (k_lo, k_hi) = self
            .support(grid, tail)
            .expect("a support on the grid: check `points` first");
        let deltas: Vec<f64> = (k_lo..=k_hi).map(|k| self.delta(k as f64 * grid)).collect();
        Pld::connect_the_dots(k_lo, grid, &deltas)
    }

    /// The grid points [k_lo, k_hi] of [`crate::ObjectiveBound::pld`]: from
    /// below c (no loss is lower) up to the first point where δ ≤ `tail`
    /// ([`first_below`]); `None` where c/Δ is beyond 2⁵² or the span beyond
    /// [`MAX_ALLOCATION`] (a huge A = LR/σ).
    fn support(&self, grid: f64, tail: f64) -> Option<(i64, i64)> {
        let first = (self.c() / grid).floor() - 1.0;
        if first.is_nan() || first.abs() >= 2f64.powi(52) {
            return None;
        }
        let k_lo = first as i64;
        let k_hi = first_below(|k| self.log_delta(k as f64 * grid), tail.ln(), k_lo + 1, MAX_ALLOCATION)?;
        Some((k_lo, k_hi))
    }

    /// The replace-one group-privacy bound log g(ε), g(ε) = min(1, (1 + e^{ε/2})δ(ε/2))
    /// (ε ≥ 0; δ the add/remove curve [`crate::ObjectiveBound::delta`]): the release is
    /// (ε, g(ε))-DP under replace-one, in both orders.
    pub fn log_delta_replace(&self, eps: f64) -> f64 {
        (0.5 * eps + (-0.5 * eps).exp().ln_1p() + self.log_delta(0.5 * eps)).min(0.0)
    }

    /// The grid points [k_lo, k_hi] of [`crate::ObjectiveBound::replace_pld`]:
    /// from log(`tail`) up to the first point where g ≤ `tail`
    /// ([`first_below`]); `None` beyond [`MAX_ALLOCATION`] points or a loss
    /// of [`MAX_REPLACE_LOSS`] (the hull is taken in e^ε).
    fn replace_support(&self, grid: f64, tail: f64) -> Option<(i64, i64)> {
        let k_lo = (tail.ln() / grid).floor() as i64 - 1;
        let most = MAX_ALLOCATION.min((MAX_REPLACE_LOSS / grid) as usize);
        let k_hi = first_below(|k| self.log_delta_replace(k as f64 * grid), tail.ln(), 1, most)?;
        Some((k_lo, k_hi))
    }

    /// The number of grid points of the release's PLD under `neighbouring`
    /// ([`crate::ObjectiveBound::pld`], [`crate::ObjectiveBound::replace_pld`]),
    /// found without allocating them; `None` beyond [`MAX_ALLOCATION`] (or an
    /// offset beyond 2⁵² points, or replace-one's [`MAX_REPLACE_LOSS`]).
    pub fn points(&self, grid: f64, tail: f64, neighbouring: Neighbouring) -> Option<usize> {
        let (lo, hi) = match neighbouring {
            Neighbouring::AddRemoveOne => self.support(grid, tail)?,
            Neighbouring::ReplaceOne => self.replace_support(grid, tail)?,
        };
        Some((hi - lo + 1) as usize)
    }

    /// The PLD of one objective-perturbation release under replace-one, a
    /// pair that dominates it in both orders. Group privacy of size 2 on
    /// the add/remove curve ([`crate::ObjectiveBound::delta`]) makes the
    /// release (ε, g(ε))-DP in both orders, g(ε) = min(1, (1 + e^{ε/2})δ(ε/2)),
    /// so its curve H_α (α = e^ε) is at most g(ε) at ε ≥ 0 and, as
    /// H_α(P‖Q) = 1 − α + α H_{1/α}(Q‖P), at most 1 − α(1 − g(−ε)) at ε < 0;
    /// H_α is convex in α with H_0 = 1, so it lies below the lower convex hull
    /// of those values at the grid points and of (0, 1) (found as the upper
    /// concave hull of w = 1 − δ, which keeps its precision where δ is near
    /// 1). That hull is itself a curve, linear in α between grid points, so
    /// its PLD is exact: its slopes give the masses. The grid runs from log(`tail`) (the
    /// P-mass at lower losses is at most e^{log tail}, rounded up to the
    /// bottom point) to the first point where g ≤ `tail` (the rest at +∞).
    ///
    /// ```
    /// use propdp_accountant::ObjectiveBound;
    /// let b = ObjectiveBound::new(1.0, 0.25, 1.0, 1.0, 2.0);
    /// let p = b.replace_pld(1e-3, 1e-15);
    /// // at most group privacy's curve, and a valid distribution
    /// for eps in [0.5, 1.0, 2.0, 4.0] {
    ///     let group = ((1.0 + (eps / 2.0f64).exp()) * b.delta(eps / 2.0)).min(1.0);
    ///     assert!(p.delta(eps) <= group * (1.0 + 1e-9) + 1e-15, "{eps}");
    /// }
    /// assert!((p.pmf.iter().sum::<f64>() + p.infinity - 1.0).abs() < 1e-12);
    /// ```
    pub fn replace_pld(&self, grid: f64, tail: f64) -> Pld {
        let log_g = |e: f64| self.log_delta_replace(e);
        let (k_lo, k_hi) = self
            .replace_support(grid, tail)
            .expect("a support on the grid: check `points` first");
        // (α, w = 1 − δ bound) at the origin and at each grid point
        let mut pts = vec![(0.0, 0.0)];
        pts.extend((k_lo..=k_hi).map(|k| {
            let e = k as f64 * grid;
            let w = if k >= 0 {
                -log_g(e).exp_m1()
            } else {
                e.exp() * -log_g(-e).exp_m1()
            };
            (e.exp(), w)
        }));
        let slope = |a: usize, b: usize| (pts[b].1 - pts[a].1) / (pts[b].0 - pts[a].0);
        // the upper concave hull of w (slopes decreasing), by a stack
        let mut hull: Vec<usize> = Vec::with_capacity(pts.len());
        for i in 0..pts.len() {
            while hull.len() >= 2 && slope(hull[hull.len() - 2], hull[hull.len() - 1]) <= slope(hull[hull.len() - 1], i)
            {
                hull.pop();
            }
            hull.push(i);
        }
        // each grid interval lies in one hull segment, whose slope in α is the
        // curve's B there (one value per segment, so the masses inside it are 0)
        let mut slopes = vec![0.0; pts.len() - 1];
        let mut seg = 0;
        for i in 1..pts.len() - 1 {
            while hull[seg + 1] <= i {
                seg += 1;
            }
            slopes[i - 1] = slope(hull[seg], hull[seg + 1]);
        }
        Pld::from_slopes(k_lo, grid, &slopes, log_g(k_hi as f64 * grid).exp())
    }
}

/// The first k ≥ `from` with `f`(k) ≤ `level`, for a non-increasing `f`:
/// steps from `from` doubling to a k where it holds, then bisects; `None`
/// when it does not within `most` points of `from`.
fn first_below<F: Fn(i64) -> f64>(f: F, level: f64, from: i64, most: usize) -> Option<i64> {
    let mut span = 1i64;
    while f(from + span - 1) > level {
        span *= 2;
        if span as usize > 2 * most {
            return None;
        }
    }
    // f(from + lo − 1) > level (or lo = 0) and f(from + hi − 1) ≤ level
    let (mut lo, mut hi) = (span / 2, span);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if f(from + mid - 1) > level { lo = mid } else { hi = mid }
    }
    let k = from + hi - 1;
    ((k - from) as usize <= most).then_some(k)
}

/// The largest loss of an objective release's replace-one PLD
/// ([`crate::ObjectiveBound::replace_pld`]): its convex hull is taken in
/// e^ε, finite up to 709. A release whose group-privacy bound reaches δ ≤
/// tail only beyond it has ε in the hundreds at any δ asked for.
pub const MAX_REPLACE_LOSS: f64 = 700.0;

/// δ at `eps` after T steps of the Poisson-subsampled Gaussian (add/remove-one,
/// the worse direction), from PLDs on a grid of width `grid`; an upper bound.
pub fn delta(m: SubsampledGaussian, steps: u64, eps: f64, grid: f64, tail: f64) -> f64 {
    [Direction::Remove, Direction::Add]
        .iter()
        .map(|&d| m.pld(d, grid, tail).self_compose(steps, tail).delta(eps))
        .fold(0.0, f64::max)
}

/// The T-fold compositions of the relation's directions ([`Direction::of`]:
/// remove and add, or replace); `None` when one step or the composition's
/// window would exceed `max_len` points.
pub fn composed(
    m: SubsampledGaussian,
    steps: u64,
    grid: f64,
    tail: f64,
    max_len: usize,
    neighbouring: Neighbouring,
) -> Option<Vec<Pld>> {
    Direction::of(neighbouring)
        .iter()
        .map(|&d| {
            if m.points(d, grid, tail) > max_len {
                return None;
            }
            m.pld(d, grid, tail).self_compose_fft(steps, tail, max_len)
        })
        .collect()
}
