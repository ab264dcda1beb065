//! Composition of privacy-loss distributions by FFT: T-fold powers on a
//! window sized by Chernoff bounds, heterogeneous parts in one transform,
//! the exponentially tilted transform aimed at an ε ([`compose_tilted`]),
//! and the result ([`Composed`]) with the mass the window left out and a
//! bound on the FFT's round-off.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

use super::distribution::Pld;

impl Pld {
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
    /// part, λ ∈ {1/8, …, 32} and k/sd (sd the composed loss's standard deviation, k ∈ {1, …, 24}, where above 32). The circular convolution aliases mass from
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
    // Chernoff exponents: the fixed ones, and k/sd for a composed loss of
    // small standard deviation sd, whose optimal exponent for a tail a few
    // sd out is about k/sd (at z = 30.81, q = 1.01e-4, T = 10⁵, sd ≈ 10⁻³:
    // with λ ≤ 32 alone the window spanned ±1.1, a thousand sd, and its
    // round-off bound held the bracket at a 2.8% width)
    let sd = slope(0.0).1.sqrt();
    let lambdas: Vec<f64> = LAMBDAS
        .iter()
        .copied()
        .chain(
            SD_MULTIPLES
                .iter()
                .map(|k| k / sd)
                .filter(|l| l.is_finite() && *l > 32.0),
        )
        .collect();
    let lambda_max = lambdas.iter().copied().fold(0.0, f64::max);
    // the tilt: the saddle point of the target loss, none below the mean
    let tilt = match near {
        Some(aim) => saddle(slope, aim.eps, lambda_max),
        None => 0.0,
    };
    // Chernoff exponents μ with Σ T_i log M_i(μ) for the mass above a loss:
    // μ = λ + μ' under a tilt λ (the aliasing bound needs those anyway)
    let up: Vec<(f64, f64)> = lambdas.iter().map(|&mu| (tilt + mu, total(tilt + mu))).collect();
    let down: Vec<f64> = lambdas.iter().map(|&l| total(-l)).collect();
    let log_tail = tail.ln();
    let log_alias = near.map_or(tail, |aim| aim.alias.max(tail)).ln();
    let top = up.iter().map(|(l, u)| (u - log_tail) / l).fold(f64::INFINITY, f64::min);
    let bottom = lambdas
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
        lambdas
            .iter()
            .zip(&up)
            .map(|(&mu, &(_, s))| (s - mu * a - tilt * lo as f64 * grid).exp())
            .fold(f64::INFINITY, f64::min)
    };
    let top = if tilt == 0.0 {
        top
    } else {
        let reach = lambdas
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
        lambdas
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
            if tilt == 0.0 || c == 0.0 {
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

/// The λ ∈ [0, `most`] where the non-decreasing `slope`(λ) (the tilted mean,
/// the derivative of a convex log-MGF; returned with its own derivative,
/// the tilted variance) reaches `eps`: 0 when it already does at 0, `most`
/// when it never does; Newton's method kept inside a bisection bracket, to
/// steps of 10⁻⁶ relative to `most` (the tilt needs to be near the saddle,
/// not at it).
fn saddle<F: Fn(f64) -> (f64, f64)>(slope: F, eps: f64, most: f64) -> f64 {
    let (at_zero, var_zero) = slope(0.0);
    if at_zero.is_nan() || at_zero >= eps {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0, most);
    let step = 1e-6 * most / 32.0;
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
        if (next - x).abs() <= step || hi - lo <= step {
            return next;
        }
        x = next;
        (mean, var) = slope(x);
    }
    x
}

/// The fixed Chernoff exponents λ of [`compose_tilted`]'s window bounds.
const LAMBDAS: [f64; 9] = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0];

/// The multiples k of 1/sd added to [`LAMBDAS`] where k/sd > 32: the
/// Chernoff bound on a tail t·sd out is tightest near λ = t/sd, and the
/// windows' tails (10⁻¹⁵ and below) are 8–12 sd out.
const SD_MULTIPLES: [f64; 8] = [1.0, 2.0, 4.0, 6.0, 8.0, 11.0, 16.0, 24.0];

/// The FFT plans of one length, forward and inverse.
type Plans = (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>);

/// Real-to-complex and complex-to-real FFT plans (`realfft`, half-length
/// complex transforms), built once per length and shared (building one
/// computes its twiddle factors). Each length's plans come from a fresh
/// planner: a planner shared across lengths reuses the inner transforms it
/// has cached, so the decomposition of a length — and the last bits of
/// every ε — depended on which lengths the process had planned before
/// (45.08091406475451 or 45.080914050181065 for one DP-SGD run).
fn plans(n: usize) -> Plans {
    static PLANS: OnceLock<Mutex<HashMap<usize, Plans>>> = OnceLock::new();
    let mut plans = PLANS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    plans
        .entry(n)
        .or_insert_with(|| {
            let mut planner = RealFftPlanner::new();
            (planner.plan_fft_forward(n), planner.plan_fft_inverse(n))
        })
        .clone()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The forward transform of a fixed signal of length `n` by `plan`.
    fn transform(plan: &Arc<dyn RealToComplex<f64>>, n: usize) -> Vec<(u64, u64)> {
        let mut input: Vec<f64> = (0..n).map(|k| ((k * 7919) % 1013) as f64 / 1013.0 - 0.4).collect();
        let mut output = plan.make_output_vec();
        plan.process(&mut input, &mut output).expect("lengths match");
        output.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect()
    }

    #[test]
    fn a_length_is_planned_alike_whatever_was_planned_before() {
        // the lengths four DP-SGD brackets plan (both relations), before those of a fifth
        for m in [
            11250, 25920, 7200, 6144, 64000, 28800, 19200, 16000, 7500, 24576, 4800, 60750, 24300, 22500, 80000, 15552,
            14400, 108000,
        ] {
            let _ = plans(m);
        }
        for n in [54000, 27000] {
            let fresh = RealFftPlanner::<f64>::new().plan_fft_forward(n);
            assert_eq!(transform(&plans(n).0, n), transform(&fresh, n), "length {n}");
        }
    }
}
