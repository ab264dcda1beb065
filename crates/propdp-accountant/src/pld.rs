//! Privacy-loss distributions (PLD) of the Poisson-subsampled Gaussian
//! mechanism — one step of DP-SGD — and their T-fold composition by FFT.
//!
//! One step, add/remove-one, noise multiplier z = σ/C, rate q: with
//! μ₀ = N(0, z²) and μ₁ = (1 − q)N(0, z²) + qN(1, z²) the privacy curve is
//! δ(ε) = max(H_ε(μ₁‖μ₀), H_ε(μ₀‖μ₁)) (remove and add directions).
//! Replace-one: a replaced example keeps its inclusion coin, so one step
//! is (1 − q)N(s, z²) + qN(s + g, z²) against (1 − q)N(s, z²) + qN(s + g', z²)
//! (s the rest of the batch, ‖g‖, ‖g'‖ ≤ 1); the pair
//! P = (1 − q)N(0, z²) + qN(−1, z²), Q = (1 − q)N(0, z²) + qN(1, z²) dominates
//! it (Zhu, Dong, Wang 2022; Google's dp-accounting, `REPLACE_ONE`), and is
//! its own mirror image under x → −x, so one direction, H_ε(P‖Q), is the
//! curve. Its loss L(x) = log P(x)/Q(x) is decreasing in x, and L(x*) = ε is
//! a quadratic in a = e^{−x/z²}: x* = −z²(ε/2 + asinh ρ),
//! ρ = (1 − q) sinh(ε/2) e^{1/(2z²)}/q, so δ(ε) = P(x < x*) − e^ε Q(x < x*)
//! is a difference of normal tails; at q = 1 it is the Gaussian mechanism
//! with μ = 2/z. Each
//! direction's curve is exact in closed form ([`SubsampledGaussian::delta`]); it is
//! discretised on the grid ε_k = kΔ by *connecting the dots*: the discrete
//! PLD whose hockey-stick curve equals the true one at every grid point and
//! interpolates between them along e^ε-linear pieces, which lies above the
//! true (convex in e^ε) curve — a dominating pair, so every composed δ(ε),
//! and every ε(δ), is an upper bound. Mass beyond the top grid point goes to
//! +∞ (counted into δ whole). T-fold composition ([`Pld::self_compose_fft`])
//! raises the PMF's discrete Fourier transform to the power T on a window
//! sized by Chernoff bounds computed from the discrete PMF itself; the bound
//! on the mass above the window (which the circular convolution would alias
//! to lower losses) is added to the mass at +∞, so the result stays an upper
//! bound. The directions are composed separately and the worse is reported.
//! Negative values the FFT's round-off leaves are set to 0. The fixed-grid
//! figures ([`epsilon`], [`composed`]) do not bound that round-off;
//! [`Composed`] carries a bound on it ([`roundoff_bound`]) and on the
//! aliasing, which [`crate::bracket`] adds on the safe side, and
//! [`compose_all`] composes heterogeneous segments.
//!
//! Written by hand because no Rust crate implements PLD accounting.
//!
//! # References
//! - Koskela, Jälkö, Honkela (2020), *Computing tight differential privacy
//!   guarantees using FFT*, AISTATS.
//! - Doroshenko, Ghazi, Kamath, Kumar, Manurangsi (2022), *Connect the dots:
//!   tighter discrete approximations of privacy loss distributions*, PoPETs.
//! - Gopi, Lee, Wutschitz (2021), *Numerical composition of differential
//!   privacy*, NeurIPS (one FFT of the final length, window by tail bounds).
//! - Zhu, Dong, Wang (2022), *Optimal accounting of differential privacy
//!   via characteristic function*, AISTATS (the replace-one pair).
//! - Google's dp-accounting (`PLDAccountant`), the reference the tests compare to.

use std::sync::{Arc, Mutex, OnceLock};

use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

use crate::{AccountantError, norm_cdf};

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
    pub fn of(neighbouring: crate::Neighbouring) -> &'static [Direction] {
        match neighbouring {
            crate::Neighbouring::AddRemoveOne => &[Direction::Remove, Direction::Add],
            crate::Neighbouring::ReplaceOne => &[Direction::Replace],
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
        if !(z > 0.0 && z.is_finite()) {
            return Err(AccountantError::range("noise_multiplier", z, "0 < z = σ/C < ∞"));
        }
        if !(q > 0.0 && q <= 1.0) {
            return Err(AccountantError::range("sample_rate", q, "0 < sample_rate ≤ 1"));
        }
        Ok(SubsampledGaussian { z, q })
    }

    /// The exact δ(ε) of one step in one direction.
    ///
    /// With u = (2x − 1)/(2z²), the loss of the remove direction is
    /// L(x) = log(1 − q + q e^u) at x ~ μ₁, increasing in x, so
    /// δ = μ₁(x > x*) − e^ε μ₀(x > x*) with L(x*) = ε; the add direction's loss
    /// is −L(x) at x ~ μ₀, and δ = μ₀(x < x*) − e^ε μ₁(x < x*) with −L(x*) = ε.
    /// Replace-one's loss is decreasing in x, and δ = P(x < x*) − e^ε Q(x < x*)
    /// with x* = −z²(ε/2 + asinh ρ) (module docs).
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
        let (z, q) = (self.z, self.q);
        match direction {
            Direction::Remove => {
                // x* = z²·log((e^ε − 1 + q)/q) + 1/2; no solution below ε = log(1 − q)
                let inner = eps.exp_m1() + q;
                if inner <= 0.0 {
                    return -eps.exp_m1();
                }
                let x = z * z * (inner / q).ln() + 0.5;
                let tail0 = norm_cdf(-x / z);
                let p = (1.0 - q) * tail0 + q * norm_cdf(-(x - 1.0) / z);
                (p - eps.exp() * tail0).max(0.0)
            }
            Direction::Add => {
                // −L(x*) = ε: x* = z²·log((e^{−ε} − 1 + q)/q) + 1/2; δ = 0 at ε ≥ −log(1 − q)
                let inner = (-eps).exp_m1() + q;
                if inner <= 0.0 {
                    return 0.0;
                }
                let x = z * z * (inner / q).ln() + 0.5;
                let p = norm_cdf(x / z);
                let p1 = (1.0 - q) * p + q * norm_cdf((x - 1.0) / z);
                (p - eps.exp() * p1).max(0.0)
            }
            Direction::Replace => {
                let [t1, t2, t3] = self.replace_terms(eps);
                (t1 - t2 - t3).max(0.0)
            }
        }
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

    /// The three terms of replace-one's δ(ε) = t₁ − t₂ − t₃ at x*:
    /// t₁ = qΦ((x* + 1)/z), t₂ = q e^ε Φ((x* − 1)/z), t₃ = (1 − q)(e^ε − 1)Φ(x*/z)
    /// (P(x < x*) − e^ε Q(x < x*), the shared (1 − q)Φ(x*/z) folded into t₃).
    pub(crate) fn replace_terms(&self, eps: f64) -> [f64; 3] {
        let (z, q) = (self.z, self.q);
        let x = self.replace_threshold(eps);
        [
            q * norm_cdf((x + 1.0) / z),
            q * eps.exp() * norm_cdf((x - 1.0) / z),
            (1.0 - q) * eps.exp_m1() * norm_cdf(x / z),
        ]
    }

    /// The grid points k_lo..k_lo + n of one step's PLD: the top is the first
    /// point where δ ≤ `tail` (the rest goes to +∞ in the pessimistic PLD),
    /// the bottom the remove direction's least loss log(1 − q), or (add,
    /// replace, q = 1) a point below which lies mass Φ(−k) ≤ `tail`,
    /// k = max(8.5, √(2 log(1/tail))) (Φ(−8.5) ≈ 1e-17).
    fn support(&self, direction: Direction, grid: f64, tail: f64) -> (i64, usize) {
        let mut k_hi = 1i64;
        while self.delta(direction, k_hi as f64 * grid) > tail {
            k_hi *= 2;
        }
        let z = self.z;
        let lower = match direction {
            Direction::Remove if self.q < 1.0 => (1.0 - self.q).ln(),
            Direction::Remove => self.loss(1.0 - sds(tail) * z),
            Direction::Add => -self.loss(sds(tail) * z),
            // P's components sit at 0 and −1: P(x > kz) ≤ Φ(−k)
            Direction::Replace => self.replace_loss(sds(tail) * z),
        };
        let k_lo = (lower / grid).floor() as i64 - 1;
        (k_lo, (k_hi - k_lo + 1) as usize)
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
    pub fn points(&self, direction: Direction, grid: f64, tail: f64) -> usize {
        self.support(direction, grid, tail).1
    }

    /// The connect-the-dots PLD of one step in `direction` on the grid of
    /// width `grid`, with tails of mass below `tail` left out
    /// pessimistically; at most [`MAX_ALLOCATION`] points (ask
    /// [`SubsampledGaussian::points`] first).
    pub fn pld(&self, direction: Direction, grid: f64, tail: f64) -> Pld {
        let (k_lo, n) = self.support(direction, grid, tail);
        assert!(n <= MAX_ALLOCATION, "{n} grid points: check `points` first");
        let deltas: Vec<f64> = (0..n)
            .map(|i| self.delta(direction, (k_lo + i as i64) as f64 * grid))
            .collect();
        Pld::connect_the_dots(k_lo, grid, &deltas)
    }
}

impl crate::ObjectiveBound {
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
    pub fn points(&self, grid: f64, tail: f64, neighbouring: crate::Neighbouring) -> Option<usize> {
        let (lo, hi) = match neighbouring {
            crate::Neighbouring::AddRemoveOne => self.support(grid, tail)?,
            crate::Neighbouring::ReplaceOne => self.replace_support(grid, tail)?,
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

/// The most grid points one PLD is built with (2²⁸, 2 GB of f64 at once);
/// callers bound their own budget (`BracketSettings::max_points`) below it
/// with the `points` counts, which allocate nothing.
pub const MAX_ALLOCATION: usize = 1 << 28;

/// Standard deviations k beyond which a Gaussian's mass Φ(−k) ≤ φ(k)/k is
/// below `tail`: max(8.5, √(2 log(1/tail))).
pub(crate) fn sds(tail: f64) -> f64 {
    (-2.0 * tail.ln()).sqrt().max(8.5)
}

/// A privacy-loss distribution on the grid kΔ, k = offset, offset + 1, …,
/// with `infinity` the mass of infinite loss.
#[derive(Debug, Clone, PartialEq)]
pub struct Pld {
    /// Grid width Δ.
    pub grid: f64,
    /// The index k of `pmf[0]`.
    pub offset: i64,
    /// Mass at each grid point.
    pub pmf: Vec<f64>,
    /// Mass at +∞.
    pub infinity: f64,
}

impl Pld {
    /// The discrete PLD whose curve δ̃ passes through δ(ε_k) = `deltas[i]`,
    /// ε_k = (offset + i)Δ: on [ε_k, ε_{k+1}] δ̃ = A_k − e^ε B_k with
    /// B_k = d_k/(e^{ε_{k+1}} − e^{ε_k}), d_k = δ_k − δ_{k+1} (≥ 0), and the
    /// mass at ε_{k+1} is e^{ε_{k+1}}(B_k − B_{k+1}) = (e^Δ d_k − d_{k+1})/(e^Δ − 1)
    /// (d_{n−1} = 0: only +∞ above the last point) — free of e^{ε_k}, which
    /// overflows beyond a loss of 709; the last δ is the mass at +∞ and the
    /// first point takes what is left of the total mass 1.
    fn connect_the_dots(offset: i64, grid: f64, deltas: &[f64]) -> Pld {
        let n = deltas.len();
        let drop = |i: usize| {
            if i + 1 < n {
                (deltas[i] - deltas[i + 1]).max(0.0)
            } else {
                0.0
            }
        };
        let (up, m) = (grid.exp(), grid.exp_m1());
        let mut pmf: Vec<f64> = (0..n)
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    ((up * drop(i - 1) - drop(i)) / m).max(0.0)
                }
            })
            .collect();
        let last = deltas[n - 1];
        let rest: f64 = pmf.iter().sum::<f64>() + last;
        pmf[0] = (1.0 - rest).max(0.0);
        Pld {
            grid,
            offset,
            pmf,
            infinity: last,
        }
    }

    /// The discrete PLD of the slopes B_k of its curve δ̃ = A_k − e^ε B_k on
    /// [ε_k, ε_{k+1}], ε_k = (offset + k)Δ (`slopes[n − 1]` = 0: only +∞
    /// above the last point), non-increasing: the mass at ε_{k+1} is
    /// e^{ε_{k+1}}(B_k − B_{k+1}), `last` is the mass at +∞, and the first
    /// point takes what is left of the total mass 1 (losses up to
    /// [`MAX_REPLACE_LOSS`], where e^ε is finite).
    fn from_slopes(offset: i64, grid: f64, slopes: &[f64], last: f64) -> Pld {
        let n = slopes.len();
        let mut pmf = vec![0.0; n];
        for i in 1..n {
            let eps = (offset + i as i64) as f64 * grid;
            pmf[i] = (eps.exp() * (slopes[i - 1] - slopes[i])).max(0.0);
        }
        let rest: f64 = pmf.iter().sum::<f64>() + last;
        pmf[0] = (1.0 - rest).max(0.0);
        Pld {
            grid,
            offset,
            pmf,
            infinity: last,
        }
    }

    /// δ(ε) = P(∞) + Σ_k p_k (1 − e^{ε − kΔ})₊.
    pub fn delta(&self, eps: f64) -> f64 {
        let mut s = self.infinity;
        for (i, &p) in self.pmf.iter().enumerate() {
            let l = (self.offset + i as i64) as f64 * self.grid;
            if l > eps {
                s += p * -(eps - l).exp_m1();
            }
        }
        s
    }

    /// The smallest ε ≥ 0 with δ(ε) ≤ `delta`; `None` when the mass at +∞
    /// alone exceeds it. Exact for the discrete curve: scanning down the grid,
    /// at a grid point l, δ(l) = P(∞) + S₁ − S₂ with S₁ = Σ p_j and
    /// S₂ = Σ p_j e^{l − l_j} over the points above l (kept relative to l,
    /// so nothing overflows), and between l and the next point up
    /// δ(ε) = P(∞) + S₁ − S₂ e^{ε − l}.
    pub fn epsilon(&self, delta: f64) -> Option<f64> {
        if self.infinity > delta {
            return None;
        }
        let (mut s1, mut s2) = (0.0, 0.0);
        let decay = (-self.grid).exp();
        for i in (0..self.pmf.len()).rev() {
            let l = (self.offset + i as i64) as f64 * self.grid;
            let at_l = self.infinity + s1 - s2;
            if at_l > delta {
                // the root is in (l, l + Δ]
                let eps = l + ((self.infinity + s1 - delta) / s2).ln();
                return Some(eps.max(0.0));
            }
            if l <= 0.0 {
                return Some(0.0);
            }
            s1 += self.pmf[i];
            s2 = (s2 + self.pmf[i]) * decay;
        }
        Some(0.0)
    }

    /// The T-fold composition with itself ([`Pld::self_compose_fft`], no
    /// length limit).
    pub fn self_compose(&self, t: u64, tail: f64) -> Pld {
        self.self_compose_fft(t, tail, usize::MAX).expect("no length limit")
    }

    /// The T-fold composition by one FFT of the window that holds all but
    /// `tail` of the composed mass on each side (Koskela et al.; Gopi et al.):
    /// the one-step PMF folded onto Z_n, transformed, raised to the power T,
    /// transformed back. The window [lo, lo + n) comes from Chernoff bounds
    /// computed exactly from the discrete PMF: mass above a is at most
    /// min_λ exp(T·log M(λ) − λa) and below b at most
    /// min_λ exp(T·log M(−λ) + λb), M(λ) = Σ_k p_k e^{λkΔ} over the finite
    /// part, λ ∈ {1/8, …, 32}. The circular convolution aliases mass from
    /// below the window into it (a higher loss: pessimistic) and mass from
    /// above into it (a lower loss: optimistic), so the bound on the mass
    /// above the window is added to the mass at +∞. The mass at +∞ composes
    /// to 1 − (1 − p_∞)^T. `None` when the window needs more than `max_len`
    /// points. Against repeated squaring: two transforms of the final length
    /// instead of 2⌈log₂T⌉ of growing ones.
    pub fn self_compose_fft(&self, t: u64, tail: f64, max_len: usize) -> Option<Pld> {
        let c = self.compose(t, tail, max_len)?;
        let mut pld = c.pld;
        pld.infinity = (pld.infinity + c.above).min(1.0);
        Some(pld)
    }

    /// The T-fold composition by FFT ([`Pld::self_compose_fft`]) with what
    /// it leaves out kept apart ([`compose_all`] of one part).
    pub fn compose(&self, t: u64, tail: f64, max_len: usize) -> Option<Composed> {
        compose_all(&[(self, t)], tail, max_len)
    }
}

/// The composition of `parts` — T_i steps of each PLD, all on one grid —
/// by FFT, with what it leaves out kept apart: the composed mass at +∞
/// alone in the PLD, the Chernoff bounds on the mass above and below the
/// window, and a bound on the FFT's round-off ([`Composed::roundoff`]).
/// The window comes from the Chernoff bounds of the sum,
/// log M(λ) = Σ_i T_i log M_i(λ) ([`Pld::self_compose_fft`]); each part's
/// folded PMF is transformed once, raised to its T_i and multiplied in. The
/// mass at +∞ composes to 1 − Π(1 − p_∞,i)^{T_i}. `None` when the window
/// needs more than `max_len` points (or a step count overflows).
pub fn compose_all(parts: &[(&Pld, u64)], tail: f64, max_len: usize) -> Option<Composed> {
    compose_tilted(parts, tail, max_len, None)
}

/// Where a tilted composition aims ([`compose_tilted`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aim {
    /// The loss ε the tilt centres the composition on.
    pub eps: f64,
    /// The least loss ε₀ ≤ ε the curves will be read at.
    pub least: f64,
    /// The aliasing the window may let in (charged to the lower end, which
    /// reads the curves at a δ far above it): the window ends where the
    /// bounds on it fall below max(`alias`, tail).
    pub alias: f64,
}

/// [`compose_all`], the FFT run on exponentially tilted PMFs when `near`
/// names a loss ε (with the least loss the window must serve, ε₀ ≤ ε):
/// p_k → p_k e^{λkΔ}/M(λ) with λ ≥ 0 the saddle point
/// d/dλ Σ T_i log M_i(λ) = ε (the tilted sum has mean ε), so that the FFT's
/// round-off, relative to the largest tilted mass, is relative to the mass
/// near ε once untilted: c_k = c̃_k·e^{Σ T_i log M_i(λ) − λkΔ}
/// ([`Composed::delta_upper`] carries the weight e^{−λl} into the bound).
/// Under the tilt the window need not hold the bulk of the untilted mass:
/// a mass p at l below the window's bottom wraps (cyclically) to
/// l + mnΔ, m ≥ 1, and is untilted there by e^{−λmnΔ}, so the mass
/// aliased from below is at most e^{−λnΔ}·P(L < l_lo). The window starts
/// max(1, ε/10) below ε₀ (or at the untilted bottom, if higher), holds at
/// least log(1/b)/λ of loss, b = max(alias, `tail`) the aliasing budget of
/// [`Aim`], and its top is raised until the aliasing from above, amplified
/// by e^{λ(l_j − l_k)} ≤ e^{λ(l_j − l_lo)}, is at most
/// e^{−λ l_lo}·min_μ e^{T log M(λ+μ) − μa} ≤ b. Both aliasing bounds are
/// carried ([`Composed::aliased`]) whatever the budget. Only the points above ε
/// enter δ(ε); [`Composed::delta_upper`] counts the mass below the window
/// whole at an ε below it.
pub fn compose_tilted(parts: &[(&Pld, u64)], tail: f64, max_len: usize, near: Option<Aim>) -> Option<Composed> {
    assert!(
        !parts.is_empty() && parts.iter().all(|p| p.1 >= 1),
        "T ≥ 1 steps of at least one part"
    );
    let grid = parts[0].0.grid;
    assert!(parts.iter().all(|p| p.0.grid == grid), "one grid for every part");
    if let [(one, 1)] = parts {
        return Some(Composed {
            pld: (*one).clone(),
            above: 0.0,
            below: 0.0,
            aliased: 0.0,
            roundoff: 0.0,
            tilt: 0.0,
            log_scale: 0.0,
            suffix: OnceLock::new(),
        });
    }
    // (log p_k, kΔ) of each finite part, and log M(λ) in log space (M(λ)
    // can be astronomically large)
    // (log p_k, kΔ) of each finite part, once; log M(λ) and the tilted mean
    // E_λ[L] = M'(λ)/M(λ) in one pass, in log space (M(λ) can be astronomically large)
    let points: Vec<Vec<(f64, f64)>> = parts
        .iter()
        .map(|&(pld, _)| {
            (pld.pmf.iter().enumerate())
                .filter(|&(_, &p)| p > 0.0)
                .map(|(i, &p)| (p.ln(), (pld.offset + i as i64) as f64 * grid))
                .collect()
        })
        .collect();
    let mgf = |part: usize, lambda: f64| -> (f64, f64, f64) {
        let pts = &points[part];
        let m = pts
            .iter()
            .map(|&(lp, l)| lp + lambda * l)
            .fold(f64::NEG_INFINITY, f64::max);
        let (mut sum, mut first, mut second) = (0.0, 0.0, 0.0);
        for &(lp, l) in pts {
            let w = (lp + lambda * l - m).exp();
            sum += w;
            first += w * l;
            second += w * l * l;
        }
        let mean = first / sum;
        (m + sum.ln(), mean, (second / sum - mean * mean).max(0.0))
    };
    let log_mgf = |part: usize, lambda: f64| mgf(part, lambda).0;
    const LAMBDAS: [f64; 9] = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
    let total = |lambda: f64| -> f64 {
        parts
            .iter()
            .enumerate()
            .map(|(i, &(_, t))| t as f64 * log_mgf(i, lambda))
            .sum()
    };
    // d/dλ of `total` and its derivative: the tilted sum's mean and variance
    let slope = |lambda: f64| -> (f64, f64) {
        parts.iter().enumerate().fold((0.0, 0.0), |(mean, var), (i, &(_, t))| {
            let (_, m, v) = mgf(i, lambda);
            (mean + t as f64 * m, var + t as f64 * v)
        })
    };
    // the tilt: the saddle point of the target loss, none below the mean
    let tilt = match near {
        Some(aim) => saddle(slope, aim.eps),
        None => 0.0,
    };
    // Chernoff exponents μ with Σ T_i log M_i(μ) for the mass above a loss:
    // μ = λ + μ' under a tilt λ (the aliasing bound needs those anyway)
    let up: Vec<(f64, f64)> = LAMBDAS.iter().map(|&mu| (tilt + mu, total(tilt + mu))).collect();
    let down: Vec<f64> = LAMBDAS.iter().map(|&l| total(-l)).collect();
    let log_tail = tail.ln();
    let log_alias = near.map_or(tail, |aim| aim.alias.max(tail)).ln();
    let top = up.iter().map(|(l, u)| (u - log_tail) / l).fold(f64::INFINITY, f64::min);
    let bottom = LAMBDAS
        .iter()
        .zip(&down)
        .map(|(l, d)| (log_tail - d) / l)
        .fold(f64::NEG_INFINITY, f64::max);
    let (mut support_lo, mut support_hi) = (0i64, 0i64);
    for &(p, t) in parts {
        let t = i64::try_from(t).ok()?;
        let last = p.offset + p.pmf.len() as i64 - 1;
        support_lo = support_lo.checked_add(p.offset.checked_mul(t)?)?;
        support_hi = support_hi.checked_add(last.checked_mul(t)?)?;
    }
    let lo = ((bottom / grid).floor() as i64).max(support_lo);
    // tilted, the window starts a little below ε: what lies lower wraps in damped
    let lo = match near {
        Some(Aim { eps, least, .. }) if tilt > 0.0 => {
            lo.max((((least.min(eps) - (0.1 * eps).max(1.0)) / grid).floor() as i64).min(support_hi))
        }
        _ => lo,
    };
    // with a tilt, mass above the window aliases into it amplified by e^{λ(l_j − l_k)}
    let alias = |a: f64| -> f64 {
        LAMBDAS
            .iter()
            .zip(&up)
            .map(|(&mu, &(_, s))| (s - mu * a - tilt * lo as f64 * grid).exp())
            .fold(f64::INFINITY, f64::min)
    };
    let top = if tilt == 0.0 {
        top
    } else {
        let reach = LAMBDAS
            .iter()
            .zip(&up)
            .map(|(&mu, &(_, s))| (s - tilt * lo as f64 * grid - log_alias) / mu)
            .fold(f64::INFINITY, f64::min);
        // and long enough that what wraps from below is damped by e^{−λnΔ} ≤ tail
        top.max(reach).max(lo as f64 * grid - log_alias / tilt)
    };
    let hi = ((top / grid).ceil() as i64).min(support_hi);
    let n = fft_length(usize::try_from(hi - lo + 1).ok()?);
    if n > max_len && tilt != 0.0 {
        // the tilt's longer window does not fit: untilted, the bound is looser but valid
        return compose_tilted(parts, tail, max_len, None);
    }
    if n > max_len || parts.iter().any(|p| p.0.pmf.len() > max_len) {
        return None;
    }
    // mass above the window's top: none if it holds the support's top
    let window_top = lo + n as i64 - 1;
    let above = if window_top >= support_hi {
        0.0
    } else {
        let a = (window_top + 1) as f64 * grid;
        up.iter().map(|(l, u)| (u - l * a).exp()).fold(1.0, f64::min)
    };
    // mass below the window's bottom: none if it holds the support's bottom
    let below = if lo <= support_lo {
        0.0
    } else {
        let b = (lo - 1) as f64 * grid;
        LAMBDAS
            .iter()
            .zip(&down)
            .map(|(l, d)| (d + l * b).exp())
            .fold(1.0, f64::min)
    };
    let (fwd, inv) = plans(n);
    let mut x = vec![0.0; n];
    let mut acc: Option<Vec<realfft::num_complex::Complex<f64>>> = None;
    let mut norms = Vec::with_capacity(parts.len());
    let mut log_scale = 0.0;
    for (part, &(p, t)) in parts.iter().enumerate() {
        x.iter_mut().for_each(|v| *v = 0.0);
        // tilted: p_k e^{λ l_k − log M(λ)}, summing to 1 over the finite part
        let log_m = if tilt == 0.0 { 0.0 } else { log_mgf(part, tilt) };
        log_scale += t as f64 * log_m;
        for (i, &m) in p.pmf.iter().enumerate() {
            let k = p.offset + i as i64;
            let w = if tilt == 0.0 {
                m
            } else {
                m * (tilt * k as f64 * grid - log_m).exp()
            };
            x[k.rem_euclid(n as i64) as usize] += w;
        }
        norms.push((t, x.iter().map(|v| v * v).sum::<f64>().sqrt()));
        let mut f = fwd.make_output_vec();
        fwd.process(&mut x, &mut f).expect("buffer lengths from the plan");
        let power = u32::try_from(t).ok()?;
        f.iter_mut().for_each(|c| *c = c.powu(power));
        acc = Some(match acc {
            None => f,
            Some(mut a) => {
                a.iter_mut().zip(&f).for_each(|(a, b)| *a *= b);
                a
            }
        });
    }
    let mut f = acc.expect("at least one part");
    // the DC and Nyquist bins of a real sequence are real
    f[0].im = 0.0;
    if let Some(last) = f.last_mut() {
        last.im = 0.0;
    }
    inv.process(&mut f, &mut x).expect("buffer lengths from the plan");
    let pmf: Vec<f64> = (0..n)
        .map(|j| {
            let c = (x[(lo + j as i64).rem_euclid(n as i64) as usize] / n as f64).max(0.0);
            if tilt == 0.0 {
                c
            } else {
                // untilted; a mass is at most 1, so clamping keeps the estimate within its error
                (c * (log_scale - tilt * (lo + j as i64) as f64 * grid).exp()).min(1.0)
            }
        })
        .collect();
    let log_finite: f64 = parts.iter().map(|&(p, t)| t as f64 * (-p.infinity).ln_1p()).sum();
    // with a tilt, what lies above the window aliases in amplified — unless
    // the window holds the support's top, when nothing does (few steps)
    let from_above = if tilt == 0.0 || lo + n as i64 > support_hi {
        above
    } else {
        alias((lo + n as i64) as f64 * grid)
    };
    let from_below = if tilt == 0.0 {
        below
    } else {
        (-tilt * n as f64 * grid).exp() * below
    };
    Some(Composed {
        pld: Pld {
            grid,
            offset: lo,
            pmf,
            infinity: -log_finite.exp_m1(),
        },
        above,
        below,
        aliased: from_below + from_above,
        roundoff: roundoff_bound(n, &norms),
        tilt,
        log_scale,
        suffix: OnceLock::new(),
    })
}

/// The λ ∈ [0, 32] where the non-decreasing `slope`(λ) (the tilted mean,
/// the derivative of a convex log-MGF; returned with its own derivative,
/// the tilted variance) reaches `eps`: 0 when it already does at 0, 32 when
/// it never does; Newton's method kept inside a bisection bracket, to steps
/// of 1e-6 (the tilt needs to be near the saddle, not at it).
fn saddle<F: Fn(f64) -> (f64, f64)>(slope: F, eps: f64) -> f64 {
    let (at_zero, var_zero) = slope(0.0);
    if at_zero.is_nan() || at_zero >= eps {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0, 32.0);
    if slope(hi).0 < eps {
        return hi;
    }
    let (mut x, mut mean, mut var) = (0.0, at_zero, var_zero);
    for _ in 0..200 {
        if mean < eps {
            lo = x
        } else {
            hi = x
        }
        let newton = x + (eps - mean) / var;
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - x).abs() <= 1e-6 || hi - lo <= 1e-6 {
            return next;
        }
        x = next;
        (mean, var) = slope(x);
    }
    x
}

/// A T-fold composition and what the FFT left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Composed {
    /// The composed PLD on its window; `infinity` is the composed mass at +∞ only.
    pub pld: Pld,
    /// Chernoff bound on the composed mass above the window (aliased to
    /// lower losses: optimistic).
    pub above: f64,
    /// Chernoff bound on the composed mass below the window.
    pub below: f64,
    /// Bound on what aliases into the window: the composed mass below it
    /// (to higher losses; with a tilt, damped by e^{−λnΔ}) and above it (to
    /// lower losses; with a tilt, amplified by e^{λ(l_j − l_k)} ≤ e^{λ(l_j − l_lo)}).
    pub aliased: f64,
    /// Bound on the ℓ₂ norm of the FFT's round-off error over the window's
    /// (tilted) masses ([`roundoff_bound`]).
    pub roundoff: f64,
    /// The exponential tilt λ the FFT ran at (0: none).
    pub tilt: f64,
    /// Σ T_i log M_i(λ): a tilted mass c̃_k is c_k·e^{λkΔ − log_scale}.
    pub log_scale: f64,
    /// Suffix sums of the PMF, built on first use ([`Composed::finite_delta`]).
    suffix: OnceLock<Vec<(f64, f64)>>,
}

impl Composed {
    /// δ(ε) of the finite part alone, the number k of grid points above ε,
    /// and a bound on the error of the sums: with S₁(j) = Σ_{i≥j} p_i and
    /// S₂(j) = Σ_{i≥j} p_i e^{l_j − l_i} (suffix sums, built once by the
    /// backward recursion S₂(j) = p_j + e^{−Δ}S₂(j + 1)), δ(ε) = S₁(j) −
    /// e^{ε − l_j}S₂(j), j the first point above ε, in O(1). Each sum of k
    /// terms is within 2(k + 1)u of its size, and e^{ε − l_j}S₂(j) ≤ S₁(j),
    /// so the error is at most 6(k + 1)u·S₁(j).
    fn finite_delta(&self, eps: f64) -> (f64, usize, f64) {
        let pld = &self.pld;
        let table = self.suffix();
        let n = pld.pmf.len();
        let mut j = ((eps / pld.grid).floor() as i64 + 1 - pld.offset).clamp(0, n as i64) as usize;
        // the first point strictly above ε (floor can sit one off in floating point)
        while j < n && ((pld.offset + j as i64) as f64 * pld.grid) <= eps {
            j += 1;
        }
        if j == n {
            return (0.0, 0, 0.0);
        }
        let l = (pld.offset + j as i64) as f64 * pld.grid;
        let (s1, s2) = table[j];
        let k = n - j;
        ((s1 - (eps - l).exp() * s2).max(0.0), k, 6.0 * (k as f64 + 1.0) * U * s1)
    }

    /// The suffix sums (S₁(j), S₂(j)) of [`Composed::finite_delta`], built once.
    fn suffix(&self) -> &[(f64, f64)] {
        let pld = &self.pld;
        self.suffix.get_or_init(|| {
            let decay = (-pld.grid).exp();
            let mut out = vec![(0.0, 0.0); pld.pmf.len() + 1];
            for i in (0..pld.pmf.len()).rev() {
                let (s1, s2) = out[i + 1];
                out[i] = (s1 + pld.pmf[i], pld.pmf[i] + decay * s2);
            }
            out
        })
    }

    /// An upper bound on the composed mass at losses in [`from`, `to`]
    /// (finite losses only): the window's masses there, S₁(j₀) − S₁(j₁)
    /// (each suffix sum of at most n terms within (n + 1)u·S₁(j₀) of its
    /// value, 4(n + 1)u·S₁(j₀) added), plus their round-off, plus the
    /// Chernoff bounds on the mass above and below the window where the
    /// interval reaches beyond it. The masses the FFT leaves in the window
    /// bound the true ones from above: aliasing only adds mass.
    pub fn mass_upper(&self, from: f64, to: f64) -> f64 {
        let pld = &self.pld;
        let n = pld.pmf.len();
        let index = |k: f64| (k as i64 - pld.offset).clamp(0, n as i64) as usize;
        // from the point at or below `from` to the one above `to` (a point
        // more on either side than needed, against the rounding of l/Δ)
        let (j0, j1) = (index((from / pld.grid).floor()), index((to / pld.grid).floor() + 2.0));
        let mut m = 0.0;
        if j1 > j0 {
            let table = self.suffix();
            let s = table[j0].0;
            m += (s - table[j1].0).max(0.0) + 4.0 * (n as f64 + 1.0) * U * s + self.roundoff_range(j0, j1 - j0);
        }
        if to > (pld.offset + n as i64 - 1) as f64 * pld.grid {
            m += self.above;
        }
        if from < pld.offset as f64 * pld.grid {
            m += self.below;
        }
        m.min(1.0)
    }

    /// An upper bound on the composition's δ(ε): the discrete curve (within
    /// its sums' error), the mass above the window
    /// counted at +∞, the mass below it where ε lies below the window, and
    /// the round-off over the k grid points above ε
    /// (‖e‖₁ ≤ √k‖e‖₂ there; the weights are ≤ 1).
    pub fn delta_upper(&self, eps: f64) -> f64 {
        let (d, k, sums) = self.finite_delta(eps);
        let under = if eps < self.pld.offset as f64 * self.pld.grid {
            self.below
        } else {
            0.0
        };
        (d + sums + self.pld.infinity + self.above + under + self.roundoff_over(k)).min(1.0)
    }

    /// The round-off's bound on δ over the k grid points above ε
    /// ([`Composed::roundoff_range`] of the window's top k points).
    fn roundoff_over(&self, k: usize) -> f64 {
        self.roundoff_range(self.pld.pmf.len() - k, k)
    }

    /// The round-off's bound on the masses of the k window points from
    /// index j: Σ |e_i| ≤ ‖ẽ‖₂·(Σ_i e^{2(log_scale − λ l_i)})^{1/2}, the
    /// tilted error ẽ untilted by e^{log_scale − λ l_i} (λ = 0: √k·‖e‖₂).
    fn roundoff_range(&self, j: usize, k: usize) -> f64 {
        if self.tilt == 0.0 {
            return self.roundoff * (k as f64).sqrt();
        }
        if k == 0 {
            return 0.0;
        }
        let grid = self.pld.grid;
        let first = (self.pld.offset + j as i64) as f64 * grid;
        // Σ_{j<k} r^j = (1 − r^k)/(1 − r), r = e^{−2λΔ}, in logs
        let step = -2.0 * self.tilt * grid;
        let log_geometric = (-(k as f64 * step).exp_m1()).ln() - (-step.exp_m1()).ln();
        self.roundoff * (self.log_scale - self.tilt * first + 0.5 * log_geometric).exp()
    }

    /// A lower bound on the composition's δ(ε): the discrete curve less the
    /// mass aliased into the window (from below, and from above — amplified
    /// by the tilt) and the round-off.
    pub fn delta_lower(&self, eps: f64) -> f64 {
        let (d, k, sums) = self.finite_delta(eps);
        (d - sums + self.pld.infinity - self.aliased - self.roundoff_over(k)).max(0.0)
    }
}

/// Unit round-off of f64.
const U: f64 = f64::EPSILON / 2.0;

/// A bound on ‖ĉ − c‖₂ for the circular convolution c of T_i-fold powers
/// of PMFs p_i (`parts`: (T_i, ‖p_i‖₂)) computed by forward FFTs, powers,
/// their product and one inverse FFT of length n (Higham 2002, Thm 24.2: an
/// FFT of s stages errs by at most κ = sη/(1 − sη) relative in ℓ₂,
/// η = μ + γ₄(√2 + μ) ≤ 10u with twiddles accurate to μ ≤ u; s counts
/// ⌈log₂ n⌉ + 2 stages, which covers realfft's mixed radices 2, 3, 5 and
/// its real-input pre/post-processing pass):
///
/// - forward: ‖f̂_i − f_i‖₂ ≤ κ√n‖p_i‖₂ =: E_i, with |f_i| ≤ 1 (each p_i sums to ≤ 1);
/// - power: |f̂ᵀ − fᵀ| ≤ T g|f̂ − f|, g = Π(1 + E_i)^{T_i}, plus binary
///   powering's 2⌈log₂T_i⌉ complex products, each within 3u relative:
///   E_f,i ≤ T_i g E_i + 6u(⌈log₂T_i⌉ + 1) g(√n‖p_i‖₂ + E_i);
/// - product: |Πa_i − Πb_i| ≤ g Σ|a_i − b_i| plus 3u per product, and
///   Σ_j |Π_i f_ij|² ≤ n‖p_1‖₂² (one factor's Parseval, the others ≤ 1);
/// - inverse, scaled by 1/n: ‖ĉ − c‖₂ ≤ (1 + κ)E_f/√n + κ g‖p‖₂ + u‖p‖₂
///   (‖c‖₂ ≤ min ‖p_i‖₂ by Young's inequality).
pub fn roundoff_bound(n: usize, parts: &[(u64, f64)]) -> f64 {
    let stages = (n as f64).log2().ceil() + 2.0;
    let eta = 10.0 * U;
    let kappa = stages * eta / (1.0 - stages * eta);
    let root_n = (n as f64).sqrt();
    let e: Vec<f64> = parts.iter().map(|&(_, p)| kappa * root_n * p).collect();
    let g = parts
        .iter()
        .zip(&e)
        .map(|(&(t, _), e)| (t as f64 * e.ln_1p()).exp())
        .product::<f64>();
    let p_min = parts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let p_max = parts.iter().map(|p| p.1).fold(0.0, f64::max);
    let e_f: f64 = parts
        .iter()
        .zip(&e)
        .map(|(&(t, p), e)| {
            let tf = t as f64;
            tf * g * e + 6.0 * U * (tf.log2().ceil() + 1.0) * g * (root_n * p + e)
        })
        .sum::<f64>()
        + 3.0 * U * (parts.len() as f64 - 1.0) * g * root_n * p_max;
    (1.0 + kappa) * e_f / root_n + kappa * g * p_min + U * p_min
}

/// Real-to-complex and complex-to-real FFT plans (`realfft`, half-length
/// complex transforms), built once per length and shared (building one
/// computes its twiddle factors).
fn plans(n: usize) -> (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>) {
    static PLANNER: OnceLock<Mutex<RealFftPlanner<f64>>> = OnceLock::new();
    let mut planner = PLANNER
        .get_or_init(|| Mutex::new(RealFftPlanner::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    (planner.plan_fft_forward(n), planner.plan_fft_inverse(n))
}

/// The smallest even length ≥ `width` of the form 2^a·3^b·5^c (fast FFT
/// radices; up to 1.6× shorter than the next power of two).
fn fft_length(width: usize) -> usize {
    let mut best = width.max(2).next_power_of_two();
    let mut a = 2usize; // an even factor
    while a < best {
        let mut b = a;
        while b < best {
            let mut c = b;
            while c < width {
                c *= 5;
            }
            best = best.min(c);
            b *= 3;
        }
        a *= 2;
    }
    best
}

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
    neighbouring: crate::Neighbouring,
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

/// ε at `delta` after T steps of the Poisson-subsampled Gaussian
/// (add/remove-one, the worse direction), from PLDs on a grid of width
/// `grid` with tails of mass `tail` treated pessimistically; `None` when no
/// finite ε reaches `delta`; out-of-range arguments refused naming them
/// (`noise_multiplier`, `sample_rate`, `steps`, `delta_priv`, `grid`). At q = 1 the T steps are exactly the Gaussian
/// mechanism with μ = √T/z, whose curve is used instead of a grid.
pub fn epsilon(
    m: SubsampledGaussian,
    steps: u64,
    delta: f64,
    grid: f64,
    tail: f64,
) -> Result<Option<f64>, AccountantError> {
    let m = SubsampledGaussian::new(m.z, m.q)?;
    if steps == 0 {
        return Err(AccountantError::range("steps", steps, "T ≥ 1"));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(AccountantError::range("delta_priv", delta, "0 < δ < 1"));
    }
    if !(grid > 0.0 && grid <= 0.1) {
        return Err(AccountantError::range("grid", grid, "0 < Δ ≤ 0.1"));
    }
    if m.q >= 1.0 {
        return Ok(super::gdp_to_eps((steps as f64).sqrt() / m.z, delta));
    }
    for direction in [Direction::Remove, Direction::Add] {
        let n = m.points(direction, grid, tail);
        if n > MAX_ALLOCATION {
            return Err(AccountantError::range(
                "noise_multiplier",
                m.z,
                &format!(
                    "a noise multiplier whose one-step PLD fits in {MAX_ALLOCATION} points at grid {grid} (it needs {n}): raise it, or coarsen the grid"
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
