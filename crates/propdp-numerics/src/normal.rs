//! The standard normal distribution: Φ, log Φ accurate in the far left
//! tail, φ and Φ⁻¹ (Wichura's AS 241).
//!
//! # References
//! - Wichura, M. J. (1988), *Algorithm AS 241: the percentage points of the
//!   normal distribution*, Applied Statistics 37, 477–484.

/// Φ(x), the standard normal CDF (`libm::erfc`).
///
/// ```
/// assert!((propdp_numerics::normal::norm_cdf(0.0) - 0.5).abs() < 1e-16);
/// ```
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// log Φ(x), accurate in the far left tail where Φ underflows.
///
/// For x < −30 uses the asymptotic series
/// log Φ(x) = −x²/2 − log(−x√(2π)) + log(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸)
/// (relative error below 1e-12 there); `libm::erfc` elsewhere. No crate offers
/// log Φ in the deep tail, which the Gaussian-mechanism curve needs at large ε/μ.
///
/// ```
/// use propdp_numerics::normal::log_norm_cdf;
/// assert!((log_norm_cdf(-1.0) - 0.15865525393145707f64.ln()).abs() < 1e-14);
/// assert!(log_norm_cdf(-100.0).is_finite() && log_norm_cdf(-100.0) < -5000.0);
/// ```
pub fn log_norm_cdf(x: f64) -> f64 {
    if x > -30.0 {
        return norm_cdf(x).ln();
    }
    let x2 = x * x;
    let series = 1.0 - 1.0 / x2 + 3.0 / (x2 * x2) - 15.0 / (x2 * x2 * x2) + 105.0 / (x2 * x2 * x2 * x2);
    -0.5 * x2 - (-x * (2.0 * std::f64::consts::PI).sqrt()).ln() + series.ln()
}

/// φ(x), the standard normal density.
///
/// ```
/// assert!((propdp_numerics::normal::norm_pdf(0.0) - 0.3989422804014327).abs() < 1e-16);
/// ```
pub fn norm_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Φ⁻¹(u), the standard normal quantile of u ∈ (0, 1): Wichura's
/// algorithm AS 241 (`PPND16`), three rational approximations of degree 7,
/// relative error about 1e-16; −∞ at 0, +∞ at 1, NaN outside [0, 1].
///
/// Written here because it is the long-horizon solver's innermost call
/// (two per path and step, 15% of a T = 10⁴ solve through `statrs`'
/// `erfc_inv`, which is several times slower) and the maintained crates that
/// carry AS 241 are GPL-licensed (`rmathlib`). Checked against `statrs` at
/// 10⁶ points and into both tails (`tests/quantile.rs`).
///
/// ```
/// use propdp_numerics::normal::{norm_cdf, quantile};
/// assert!((quantile(0.975) - 1.959963984540054).abs() < 1e-14);
/// assert!((norm_cdf(quantile(0.01)) - 0.01).abs() < 1e-16);
/// assert_eq!(quantile(0.5), 0.0);
/// ```
#[allow(clippy::excessive_precision, clippy::unreadable_literal)]
pub fn quantile(u: f64) -> f64 {
    let q = u - 0.5;
    if q.abs() <= 0.425 {
        return central(q);
    }
    if u.is_nan() || !(0.0..=1.0).contains(&u) {
        return f64::NAN;
    }
    let tail = if q < 0.0 { u } else { 1.0 - u };
    if tail == 0.0 {
        return if q < 0.0 { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    let r = (-tail.ln()).sqrt();
    let x = if r <= 5.0 { near_tail(r) } else { far_tail(r) };
    if q < 0.0 { -x } else { x }
}

/// [`quantile`]'s tails at r = √(−ln min(u, 1 − u)) ≤ 5 (AS 241's second
/// rational approximation, in r − 1.6), before the sign.
#[allow(clippy::excessive_precision, clippy::unreadable_literal)]
#[inline(always)]
fn near_tail(r: f64) -> f64 {
    let r = r - 1.6;
    poly(
        r,
        [
            1.42343711074968357734,
            4.6303378461565452959,
            5.7694972214606914055,
            3.64784832476320460504,
            1.27045825245236838258,
            0.24178072517745061177,
            0.0227238449892691845833,
            7.7454501427834140764e-4,
        ],
    ) / poly(
        r,
        [
            1.0,
            2.05319162663775882187,
            1.6763848301838038494,
            0.68976733498510000455,
            0.14810397642748007459,
            0.0151986665636164571966,
            5.475938084995344946e-4,
            1.05075007164441684324e-9,
        ],
    )
}

/// [`quantile`]'s far tails, r > 5 (AS 241's third approximation, in r − 5).
#[allow(clippy::excessive_precision, clippy::unreadable_literal)]
#[inline(always)]
fn far_tail(r: f64) -> f64 {
    let r = r - 5.0;
    poly(
        r,
        [
            6.6579046435011037772,
            5.4637849111641143699,
            1.7848265399172913358,
            0.29656057182850489123,
            0.026532189526576123093,
            0.0012426609473880784386,
            2.71155556874348757815e-5,
            2.01033439929228813265e-7,
        ],
    ) / poly(
        r,
        [
            1.0,
            0.59983220655588793769,
            0.13692988092273580531,
            0.0148753612908506148525,
            7.868691311456132591e-4,
            1.8463183175100546818e-5,
            1.4215117583164458887e-7,
            2.04426310338993978564e-15,
        ],
    )
}

/// [`quantile`]'s central region, |q| ≤ 0.425 with q = u − ½ (AS 241's
/// first rational approximation in r = 0.180625 − q²).
#[allow(clippy::excessive_precision, clippy::unreadable_literal)]
#[inline(always)]
fn central(q: f64) -> f64 {
    let r = 0.180625 - q * q;
    let num = poly(
        r,
        [
            3.387132872796366608,
            133.14166789178437745,
            1971.5909503065514427,
            13731.693765509461125,
            45921.953931549871457,
            67265.770927008700853,
            33430.575583588128105,
            2509.0809287301226727,
        ],
    );
    let den = poly(
        r,
        [
            1.0,
            42.313330701600911252,
            687.1870074920579083,
            5394.1960214247511077,
            21213.794301586595867,
            39307.89580009271061,
            28729.085735721942674,
            5226.495278852545925,
        ],
    );
    q * num / den
}

/// Φ⁻¹ of every element of `us` into `out`, [`quantile`] bit for bit.
///
/// Most uniform draws (85%) fall in the central region, one rational
/// function: it is evaluated over the whole slice without a branch, so that
/// it runs four lanes per instruction on CPUs with AVX2, then the tails
/// replace it: their logarithms one at a time, their rational function in
/// lanes over chunks of them. The same operations in the same order as
/// [`quantile`] (no fused multiply–adds), hence the same bits.
///
/// ```
/// use propdp_numerics::normal::{quantile, quantile_into};
/// let us = [1e-300, 0.01, 0.3, 0.5, 0.9, 0.99999];
/// let mut out = [0.0; 6];
/// quantile_into(&us, &mut out);
/// assert!(us.iter().zip(&out).all(|(&u, &x)| quantile(u).to_bits() == x.to_bits()));
/// ```
pub fn quantile_into(us: &[f64], out: &mut [f64]) {
    assert_eq!(us.len(), out.len(), "quantile_into: one output per input");
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { quantile_into_avx2(us, out) };
        return;
    }
    quantile_into_lanes(us, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn quantile_into_avx2(us: &[f64], out: &mut [f64]) {
    quantile_into_lanes(us, out);
}

#[inline(always)]
fn quantile_into_lanes(us: &[f64], out: &mut [f64]) {
    for (x, &u) in out.iter_mut().zip(us) {
        *x = central(u - 0.5);
    }
    // the tails: r = √(−ln tail) one at a time, [`near_tail`] in lanes over
    // a chunk of them (the rest — NaN, 0, 1, beyond, r > 5 — as `quantile`)
    let (mut at, mut rs, mut k) = ([0; TAIL_CHUNK], [0.0; TAIL_CHUNK], 0);
    for (i, &u) in us.iter().enumerate() {
        let q = u - 0.5;
        if q.abs() <= 0.425 {
            continue;
        }
        let tail = if q < 0.0 { u } else { 1.0 - u };
        let r = if tail > 0.0 && tail < 1.0 {
            (-tail.ln()).sqrt()
        } else {
            f64::NAN
        };
        if r <= 5.0 {
            (at[k], rs[k]) = (i, r);
            k += 1;
            if k == TAIL_CHUNK {
                near_tails(&at, &rs, us, out);
                k = 0;
            }
        } else {
            out[i] = quantile(u);
        }
    }
    near_tails(&at[..k], &rs[..k], us, out);
}

/// Tails gathered by `quantile_into_lanes` before their rational function.
const TAIL_CHUNK: usize = 64;

/// `out[at[j]]` = ±[`near_tail`]`(rs[j])`, the sign of `us[at[j]]` − ½.
#[inline(always)]
fn near_tails(at: &[usize], rs: &[f64], us: &[f64], out: &mut [f64]) {
    let mut xs = [0.0; TAIL_CHUNK];
    for (x, &r) in xs.iter_mut().zip(rs) {
        *x = near_tail(r);
    }
    for (&i, &x) in at.iter().zip(&xs) {
        out[i] = if us[i] - 0.5 < 0.0 { -x } else { x };
    }
}

/// Σ_k c_k·r^k by Horner's rule.
#[inline(always)]
fn poly(r: f64, c: [f64; 8]) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ck| acc * r + ck)
}
