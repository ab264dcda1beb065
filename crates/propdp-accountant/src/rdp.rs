//! Rényi DP of the Poisson-subsampled Gaussian mechanism (one DP-SGD step),
//! at integer and fractional orders; the looser cross-check of the PLD accountant.
//!
//! A_α = E_{x~N(0,z²)}[(1 − q + q e^{(2x−1)/(2z²)})^α], ε_RDP(α) = log(A_α)/(α − 1)
//! per step (Mironov, Talwar, Zhang 2019, §3.3). For integer α ≥ 2 the
//! binomial expansion is finite:
//! A_α = Σ_{k=0}^{α} C(α, k) (1 − q)^{α−k} q^k exp((k² − k)/(2z²)).
//! For fractional α > 1 split the integral at z₀ = z² log(1/q − 1) + 1/2,
//! where q e^u = 1 − q, and expand (a + b)^α by the generalised binomial
//! series in the smaller term on each side; completing the square,
//! ∫_{x≤z₀} N(0,z²)(x) e^{k(2x−1)/(2z²)} dx = e^{(k²−k)/(2z²)} Φ((z₀ − k)/z), so
//! A_α = Σ_k C(α, k) [(1 − q)^{α−k} q^k e^{(k²−k)/(2z²)} Φ((z₀ − k)/z)
//!                  + q^{α−k} (1 − q)^k e^{(j²−j)/(2z²)} Φ((j − z₀)/z)],  j = α − k,
//! with C(α, k) = Π_{i<k}(α − i)/(i + 1) changing sign past k > α; summed in log
//! space by sign until the terms fall 40 e-folds below the total.
//! After T steps T·ε_RDP(α), and (ε, δ) by the conversion of Canonne, Kamath &
//! Steinke (2020), ε = min_α T ε_RDP(α) + log((α − 1)/α) − (log δ + log α)/(α − 1),
//! over [`orders`]: 1 + k/16 (k = 1…15), 2 … 64 in steps of 1/4, and the
//! integers up to 1024.
//!
//! # References
//! - Mironov, Talwar, Zhang (2019), *Rényi differential privacy of the sampled Gaussian mechanism*.
//! - Canonne, Kamath, Steinke (2020), *The discrete Gaussian for differential privacy*.

use crate::gaussian::log_norm_cdf;

/// Largest order tried by [`Curve::epsilon`].
pub const MAX_ORDER: u32 = 1024;

/// log n! for n = 0…[`MAX_ORDER`], computed once (cumulative sums of log k).
fn ln_factorials() -> &'static [f64] {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![0.0; MAX_ORDER as usize + 1];
        for k in 1..t.len() {
            t[k] = t[k - 1] + (k as f64).ln();
        }
        t
    })
}

/// ε_RDP(α) of one step, integer α ≥ 2 (q = 1: the Gaussian mechanism's α/(2z²)).
///
/// ```
/// use propdp_accountant::rdp::step_rdp;
/// assert!((step_rdp(1.5, 1.0, 8) - 8.0 / (2.0 * 2.25)).abs() < 1e-12);
/// ```
pub fn step_rdp(z: f64, q: f64, alpha: u32) -> f64 {
    assert!((2..=MAX_ORDER).contains(&alpha), "integer orders 2 ≤ α ≤ {MAX_ORDER}");
    let a = f64::from(alpha);
    if q >= 1.0 {
        return a / (2.0 * z * z);
    }
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let ln_fact = ln_factorials();
    let terms: Vec<f64> = (0..=alpha)
        .map(|k| {
            let kf = f64::from(k);
            let ln_binom = ln_fact[alpha as usize] - ln_fact[k as usize] - ln_fact[(alpha - k) as usize];
            ln_binom + (a - kf) * l1q + kf * lq + (kf * kf - kf) / (2.0 * z * z)
        })
        .collect();
    let m = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let ln_a = m + terms.iter().map(|t| (t - m).exp()).sum::<f64>().ln();
    ln_a / (a - 1.0)
}

/// ε_RDP(α) of one step at any real order α > 1, by the split series of the
/// module docs (q = 1: α/(2z²)). At integer α it equals [`step_rdp`].
///
/// ```
/// use propdp_accountant::rdp::{step_rdp, step_rdp_real};
/// let (z, q) = (1.1, 0.01);
/// assert!((step_rdp_real(z, q, 5.0) / step_rdp(z, q, 5) - 1.0).abs() < 1e-10);
/// // between its integer neighbours (ε_RDP(α) is non-decreasing in α)
/// let mid = step_rdp_real(z, q, 2.5);
/// assert!(step_rdp(z, q, 2) <= mid && mid <= step_rdp(z, q, 3));
/// ```
pub fn step_rdp_real(z: f64, q: f64, alpha: f64) -> f64 {
    assert!(alpha > 1.0 && alpha.is_finite(), "orders α > 1");
    if q >= 1.0 {
        return alpha / (2.0 * z * z);
    }
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let z0 = z * z * (1.0 / q - 1.0).ln() + 0.5;
    let var2 = 2.0 * z * z;
    // running sums of positive and negative terms, in log space
    let (mut pos, mut neg) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let add = |acc: f64, x: f64| {
        let m = acc.max(x);
        if m == f64::NEG_INFINITY {
            m
        } else {
            m + ((acc - m).exp() + (x - m).exp()).ln()
        }
    };
    // log|C(α, k)| and its sign, updated by the factor (α − k)/(k + 1)
    let (mut log_binom, mut sign) = (0.0f64, 1.0f64);
    for k in 0..100_000u32 {
        let kf = f64::from(k);
        let j = alpha - kf;
        let below = log_binom + j * l1q + kf * lq + (kf * kf - kf) / var2 + log_norm_cdf((z0 - kf) / z);
        let above = log_binom + j * lq + kf * l1q + (j * j - j) / var2 + log_norm_cdf((j - z0) / z);
        let term = add(below, above);
        if sign > 0.0 {
            pos = add(pos, term);
        } else {
            neg = add(neg, term);
        }
        if kf > alpha && term < pos.max(neg) - 40.0 {
            break;
        }
        let factor = (alpha - kf) / (kf + 1.0);
        if factor == 0.0 {
            break; // integer α: the series ends
        }
        log_binom += factor.abs().ln();
        sign *= factor.signum();
    }
    // A_α = e^pos − e^neg > 0
    let ln_a = pos + (-(neg - pos).exp()).ln_1p();
    ln_a / (alpha - 1.0)
}

/// The orders [`Curve::epsilon`] minimises over: 1 + k/16 (k = 1…15), 2 … 64 in
/// steps of 1/4 (fractional ones only; the integers come next), and the
/// integers 2 … [`MAX_ORDER`].
pub fn orders() -> impl Iterator<Item = Order> {
    let low = (1..16).map(|k| Order::Real(1.0 + f64::from(k) / 16.0));
    let quarters = (8..256).filter(|k| k % 4 != 0).map(|k| Order::Real(f64::from(k) / 4.0));
    low.chain(quarters).chain((2..=MAX_ORDER).map(Order::Integer))
}

/// An RDP order: an integer (exact finite sum) or a real number (series).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Order {
    /// Integer α ≥ 2.
    Integer(u32),
    /// Real α > 1.
    Real(f64),
}

impl Order {
    /// α as a number.
    pub fn value(self) -> f64 {
        match self {
            Order::Integer(a) => f64::from(a),
            Order::Real(a) => a,
        }
    }

    /// ε_RDP(α) of one step.
    pub fn step_rdp(self, z: f64, q: f64) -> f64 {
        match self {
            Order::Integer(a) => step_rdp(z, q, a),
            Order::Real(a) => step_rdp_real(z, q, a),
        }
    }
}

/// One step's ε_RDP(α) at every order of [`orders`], for one (z, q): built
/// once (about 35 ms, the integer orders' sums dominate) and read for any
/// (T, δ) at no cost — the replace-one bisection and calibration read it
/// dozens of times.
///
/// ```
/// use propdp_accountant::rdp::Curve;
/// let curve = Curve::new(1.1, 0.01);
/// assert_eq!(curve.epsilon(1000, 1e-5), Curve::cached(1.1, 0.01).epsilon(1000, 1e-5));
/// assert!(curve.epsilon(1000, 1e-6) > curve.epsilon(1000, 1e-5));
/// ```
#[derive(Debug, Clone)]
pub struct Curve {
    /// (α, ε_RDP(α) of one step).
    points: Vec<(f64, f64)>,
}

impl Curve {
    /// The curve of one step at noise multiplier `z` and rate `q`.
    pub fn new(z: f64, q: f64) -> Self {
        Curve {
            points: orders().map(|o| (o.value(), o.step_rdp(z, q))).collect(),
        }
    }

    /// [`Curve::new`], kept for the last (z, q) of this thread: a search
    /// over T or δ at one (z, q) builds the 1,300 orders' curve once.
    pub fn cached(z: f64, q: f64) -> std::rc::Rc<Curve> {
        thread_local! {
            static LAST: std::cell::RefCell<Option<(u64, u64, std::rc::Rc<Curve>)>> = const { std::cell::RefCell::new(None) };
        }
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            match &*last {
                Some((a, b, c)) if *a == z.to_bits() && *b == q.to_bits() => c.clone(),
                _ => {
                    let c = std::rc::Rc::new(Curve::new(z, q));
                    *last = Some((z.to_bits(), q.to_bits(), c.clone()));
                    c
                }
            }
        })
    }

    /// ε at `delta` after `steps` steps (the conversion of the module docs,
    /// minimised over the orders; ≥ 0).
    pub fn epsilon(&self, steps: u64, delta: f64) -> f64 {
        self.epsilon_at_log_delta(steps, delta.ln())
    }

    /// [`Curve::epsilon`] at δ = e^`log_delta`, for a δ that f64 cannot
    /// hold (replace-one's δ/(1 + e^ε) at ε beyond 709).
    pub fn epsilon_at_log_delta(&self, steps: u64, log_delta: f64) -> f64 {
        let t = steps as f64;
        self.points
            .iter()
            .map(|&(a, e)| t * e + ((a - 1.0) / a).ln() - (log_delta + a.ln()) / (a - 1.0))
            .fold(f64::INFINITY, f64::min)
            .max(0.0)
    }
}
