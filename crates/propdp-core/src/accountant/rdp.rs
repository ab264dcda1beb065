//! Rényi DP of the Poisson-subsampled Gaussian mechanism (one DP-SGD step),
//! at integer orders, exactly; the looser cross-check of the PLD accountant.
//!
//! For integer α ≥ 2 (Mironov, Talwar, Zhang 2019, §3.3):
//! A_α = Σ_{k=0}^{α} C(α, k) (1 − q)^{α−k} q^k exp((k² − k)/(2z²)),
//! ε_RDP(α) = log(A_α)/(α − 1) per step, T·ε_RDP(α) after T steps, and
//! (ε, δ) by the conversion of Canonne, Kamath & Steinke (2020),
//! ε = min_α T ε_RDP(α) + log((α − 1)/α) − (log δ + log α)/(α − 1),
//! over α = 2, 3, …, 1024. The sum is taken in log space.
//!
//! # References
//! - Mironov, Talwar, Zhang (2019), *Rényi differential privacy of the sampled Gaussian mechanism*.
//! - Canonne, Kamath, Steinke (2020), *The discrete Gaussian for differential privacy*.

/// Largest order tried by [`epsilon`].
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
/// use propdp_core::accountant::rdp::step_rdp;
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

/// ε at `delta` after `steps` steps, minimised over the integer orders 2…[`MAX_ORDER`].
pub fn epsilon(z: f64, q: f64, steps: u64, delta: f64) -> f64 {
    let t = steps as f64;
    (2..=MAX_ORDER)
        .map(|alpha| {
            let a = f64::from(alpha);
            t * step_rdp(z, q, alpha) + ((a - 1.0) / a).ln() - (delta.ln() + a.ln()) / (a - 1.0)
        })
        .fold(f64::INFINITY, f64::min)
        .max(0.0)
}
