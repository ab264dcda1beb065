//! Per-sample GLM losses ℓ(y, r) of docs/theory.md §1 as functions of the fitted
//! field r = xᵀθ, with their first two derivatives in r, and the logistic
//! helpers shared by theory and simulation.

use crate::problem::Model;

/// The loss of a model (docs/theory.md §1, §3). The first argument of
/// [`Loss::eval`] is the label y for the standard losses and the teacher
/// field ν = xᵀθ* for the conditional ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loss {
    /// ρ_M(y − r).
    Huber {
        /// Threshold M.
        m: f64,
    },
    /// log(1 + exp(−y r)).
    Logistic,
    /// (y − r)²/2.
    Squared,
    /// E_e ρ_M(ν + e − r), e ~ N(0, se²).
    ConditionalHuber {
        /// Threshold M.
        m: f64,
        /// Standard deviation of the Gaussian label noise e.
        se: f64,
    },
    /// log(1 + eʳ) − sigmoid(ν) r.
    ConditionalLogistic,
}

/// The loss as an error message names it: `huber (M = 1)`, `logistic`,
/// `squared`, `conditional huber (M = 1, label noise sd 0.5)`,
/// `conditional logistic`.
impl std::fmt::Display for Loss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Loss::Huber { m } => write!(f, "huber (M = {m})"),
            Loss::Logistic => write!(f, "logistic"),
            Loss::Squared => write!(f, "squared"),
            Loss::ConditionalHuber { m, se } => write!(f, "conditional huber (M = {m}, label noise sd {se})"),
            Loss::ConditionalLogistic => write!(f, "conditional logistic"),
        }
    }
}

impl Loss {
    /// The loss used by `model`.
    pub fn of(model: &Model) -> Loss {
        match *model {
            Model::Huber { huber_m, .. } => Loss::Huber { m: huber_m },
            Model::Logistic => Loss::Logistic,
            Model::LeastSquares { .. } => Loss::Squared,
        }
    }

    /// The loss DP-GD descends for `model` and `variant`.
    pub fn for_dpgd(model: &Model, variant: crate::problem::LossVariant) -> Loss {
        use crate::problem::{LossVariant, NoiseLaw};
        match (variant, *model) {
            // the squared loss has no conditional variant (refused by Point::check)
            (LossVariant::Standard, _) | (LossVariant::Conditional, Model::LeastSquares { .. }) => Loss::of(model),
            (LossVariant::Conditional, Model::Logistic) => Loss::ConditionalLogistic,
            (LossVariant::Conditional, Model::Huber { huber_m, noise }) => {
                let NoiseLaw::Gaussian { sd } = noise else {
                    panic!("conditional Huber loss needs Gaussian noise (rejected by Point::check)")
                };
                Loss::ConditionalHuber { m: huber_m, se: sd }
            }
        }
    }

    /// Whether the first argument of [`Loss::eval`] is the teacher field ν.
    pub fn is_conditional(&self) -> bool {
        matches!(self, Loss::ConditionalHuber { .. } | Loss::ConditionalLogistic)
    }

    /// ∂ℓ/∂r alone (the second entry of [`Loss::eval`], without the loss's
    /// logarithm where it has one).
    pub fn slope(&self, y: f64, r: f64) -> f64 {
        match *self {
            Loss::ConditionalLogistic => sigmoid(r) - sigmoid(y),
            Loss::Logistic => -y * sigmoid(-y * r),
            _ => self.eval(y, r).1,
        }
    }

    /// [`Loss::eval`] at every pair (`y[i]`, `r[i]`) into `out[i]`: the
    /// logistic loss four pairs at a time (`wide`'s f64x4 exp and ln_1p,
    /// within 2ε relative of the scalar functions), the others pair by pair
    /// with one dispatch per call (the same bits as [`Loss::eval`]).
    pub fn eval_all(&self, y: &[f64], r: &[f64], out: &mut [(f64, f64, f64)]) {
        match *self {
            Loss::Logistic => lanes::softplus_sigmoid(y, r, |i, y, sp, s| out[i] = logistic(y, sp, s)),
            Loss::Huber { m } => pairs(y, r, out, |y, r| huber(y - r, m)),
            Loss::Squared => pairs(y, r, out, |y, r| squared(y - r)),
            _ => pairs(y, r, out, |y, r| self.eval(y, r)),
        }
    }

    /// [`Loss::value`] at every pair (`y[i]`, `r[i]`) into `out[i]`, as [`Loss::eval_all`].
    pub fn value_all(&self, y: &[f64], r: &[f64], out: &mut [f64]) {
        match *self {
            Loss::Logistic => lanes::softplus_sigmoid(y, r, |i, _, sp, _| out[i] = sp),
            Loss::Huber { m } => pairs(y, r, out, |y, r| huber(y - r, m).0),
            Loss::Squared => pairs(y, r, out, |y, r| squared(y - r).0),
            _ => pairs(y, r, out, |y, r| self.value(y, r)),
        }
    }

    /// [`Loss::slope`] at every pair (`y[i]`, `r[i]`) into `out[i]`, as [`Loss::eval_all`].
    pub fn slope_all(&self, y: &[f64], r: &[f64], out: &mut [f64]) {
        match *self {
            Loss::Logistic => lanes::sigmoid(y, r, |i, y, s| out[i] = logistic_slope(y, s)),
            Loss::Huber { m } => pairs(y, r, out, |y, r| huber(y - r, m).1),
            Loss::Squared => pairs(y, r, out, |y, r| squared(y - r).1),
            _ => pairs(y, r, out, |y, r| self.slope(y, r)),
        }
    }

    /// ℓ alone (the first entry of [`Loss::eval`], without the derivatives'
    /// sigmoid where the loss has one).
    pub fn value(&self, y: f64, r: f64) -> f64 {
        match *self {
            Loss::Logistic => softplus(-y * r),
            _ => self.eval(y, r).0,
        }
    }

    /// (ℓ, ∂ℓ/∂r, ∂²ℓ/∂r²) at label (or teacher field) `y` and fit `r`.
    pub fn eval(&self, y: f64, r: f64) -> (f64, f64, f64) {
        match *self {
            Loss::ConditionalLogistic => {
                let (sp, s) = softplus_sigmoid(r);
                (sp - sigmoid(y) * r, s - sigmoid(y), s * (1.0 - s))
            }
            Loss::ConditionalHuber { m, se } => conditional_huber(y - r, m, se),
            Loss::Huber { m } => huber(y - r, m),
            Loss::Squared => squared(y - r),
            Loss::Logistic => {
                let (sp, s) = softplus_sigmoid(-y * r);
                logistic(y, sp, s)
            }
        }
    }
}

/// `f` at every pair (`y[i]`, `r[i]`) into `out[i]`, in a loop of its own
/// (the batched losses: one dispatch per call, not per pair).
#[inline(always)]
fn pairs<T>(y: &[f64], r: &[f64], out: &mut [T], f: impl Fn(f64, f64) -> T) {
    out.iter_mut()
        .zip(y.iter().zip(r))
        .for_each(|(o, (&y, &r))| *o = f(y, r));
}

/// The squared loss's (ℓ, ∂ℓ/∂r, ∂²ℓ/∂r²) at residual e = y − r.
#[inline(always)]
fn squared(e: f64) -> (f64, f64, f64) {
    (0.5 * e * e, -e, 1.0)
}

/// The Huber loss's (ℓ, ∂ℓ/∂r, ∂²ℓ/∂r²) at residual e = y − r.
#[inline(always)]
fn huber(e: f64, m: f64) -> (f64, f64, f64) {
    if e.abs() <= m {
        (0.5 * e * e, -e, 1.0)
    } else {
        (m * e.abs() - 0.5 * m * m, -m * e.signum(), 0.0)
    }
}

/// The logistic loss's (ℓ, ∂ℓ/∂r, ∂²ℓ/∂r²) at label `y` from softplus(−y·r)
/// and σ(−y·r).
fn logistic(y: f64, softplus: f64, sigmoid: f64) -> (f64, f64, f64) {
    (softplus, logistic_slope(y, sigmoid), sigmoid * (1.0 - sigmoid))
}

/// ∂ℓ/∂r of [`logistic`], from σ(−y·r) alone.
fn logistic_slope(y: f64, sigmoid: f64) -> f64 {
    -y * sigmoid
}

pub use propdp_numerics::normal::{norm_cdf, norm_pdf};

/// E ρ_M(z) and its derivatives in r for z = u + e, u = ν − r, e ~ N(0, s²):
/// with a = (−M − u)/s, b = (M − u)/s (truncated-normal moments),
/// ℓ' = −E clip(z, ±M), ℓ'' = P(|z| ≤ M).
fn conditional_huber(u: f64, m: f64, s: f64) -> (f64, f64, f64) {
    if s == 0.0 {
        return Loss::Huber { m }.eval(u, 0.0);
    }
    let (a, b) = ((-m - u) / s, (m - u) / s);
    let (pa, pb, fa, fb) = (norm_cdf(a), norm_cdf(b), norm_pdf(a), norm_pdf(b));
    let inside = pb - pa;
    let z_in = u * inside + s * (fa - fb);
    let z2_in = (u * u + s * s) * inside + 2.0 * u * s * (fa - fb) + s * s * (a * fa - b * fb);
    let z_above = u * (1.0 - pb) + s * fb; // E[z 1{z > M}]
    let z_below = u * pa - s * fa; // E[z 1{z < −M}]
    let psi = m * (1.0 - pb) - m * pa + z_in;
    let value = 0.5 * z2_in + m * (z_above - z_below) - 0.5 * m * m * (1.0 - inside);
    (value, -psi, inside)
}

/// σ(x) without overflow.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// log(1 + eˣ) without overflow.
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// ([`softplus`], [`sigmoid`]) at x from the one exponential e^{−|x|} both
/// take, to the same last bit as the two computed apart.
fn softplus_sigmoid(x: f64) -> (f64, f64) {
    let e = (-x.abs()).exp();
    let softplus = if x > 0.0 { x + e.ln_1p() } else { e.ln_1p() };
    let sigmoid = if x >= 0.0 { 1.0 / (1.0 + e) } else { e / (1.0 + e) };
    (softplus, sigmoid)
}

/// [`softplus_sigmoid`] four arguments at a time, from `wide`'s f64x4
/// exponential and ln_1p (Cephes polynomials: within 2ε relative of the
/// scalar functions, unit test): the logistic path step's
/// exponentials and logarithms were a sixth of a long-horizon solve's time.
mod lanes {
    use wide::f64x4;

    /// For every i, `each(i, y[i], softplus(x), σ(x))` at x = −`y[i]`·`r[i]`.
    pub(super) fn softplus_sigmoid(y: &[f64], r: &[f64], mut each: impl FnMut(usize, f64, f64, f64)) {
        let n = y.len().min(r.len());
        let whole = n - n % 4;
        for i in (0..whole).step_by(4) {
            let (x, e, s) = group(y, r, i);
            let sp = x.max(f64x4::ZERO) + e.ln_1p();
            let (sp, s) = (sp.to_array(), s.to_array());
            for l in 0..4 {
                each(i + l, y[i + l], sp[l], s[l]);
            }
        }
        for i in whole..n {
            let (sp, s) = super::softplus_sigmoid(-y[i] * r[i]);
            each(i, y[i], sp, s);
        }
    }

    /// For every i, `each(i, y[i], σ(x))` at x = −`y[i]`·`r[i]`: the
    /// sigmoid of [`softplus_sigmoid`] (the same bits) without its ln_1p.
    pub(super) fn sigmoid(y: &[f64], r: &[f64], mut each: impl FnMut(usize, f64, f64)) {
        let n = y.len().min(r.len());
        let whole = n - n % 4;
        for i in (0..whole).step_by(4) {
            let (_, _, s) = group(y, r, i);
            for (l, s) in s.to_array().into_iter().enumerate() {
                each(i + l, y[i + l], s);
            }
        }
        for i in whole..n {
            each(i, y[i], super::sigmoid(-y[i] * r[i]));
        }
    }

    /// The four paths from i: x = −y·r, e = e^{−|x|} and σ(x) from e.
    #[inline(always)]
    fn group(y: &[f64], r: &[f64], i: usize) -> (f64x4, f64x4, f64x4) {
        let yi = f64x4::from(<[f64; 4]>::try_from(&y[i..i + 4]).expect("four"));
        let ri = f64x4::from(<[f64; 4]>::try_from(&r[i..i + 4]).expect("four"));
        let x = -yi * ri;
        let e = (-x.abs()).exp();
        let d = f64x4::ONE + e;
        (x, e, x.simd_ge(f64x4::ZERO).select(f64x4::ONE / d, e / d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The batched evaluations against the scalar ones, the logistic loss's
    /// lanes within 2ε relative (1ε fails), from x = ±1e-300 to beyond exp's
    /// range, with a remainder past the last group of four.
    #[test]
    fn batched_losses_are_the_scalar_ones() {
        let r: Vec<f64> = (0..2003)
            .map(|i| {
                let u = i as f64 / 2002.0 - 0.5;
                match i % 7 {
                    0 => 1e-300 * u.signum(),
                    1 => 1500.0 * u,
                    _ => 80.0 * u,
                }
            })
            .collect();
        let y: Vec<f64> = (0..r.len()).map(|i| if i % 3 == 0 { -1.0 } else { 1.0 }).collect();
        let close = |a: f64, b: f64| a == b || (a - b).abs() <= 2.0 * f64::EPSILON * a.abs().max(b.abs());
        let losses = [
            Loss::Logistic,
            Loss::ConditionalLogistic,
            Loss::Huber { m: 1.0 },
            Loss::Squared,
        ];
        for loss in losses {
            let n = r.len();
            let (mut all, mut values, mut slopes) = (vec![(0.0, 0.0, 0.0); n], vec![0.0; n], vec![0.0; n]);
            loss.eval_all(&y, &r, &mut all);
            loss.value_all(&y, &r, &mut values);
            loss.slope_all(&y, &r, &mut slopes);
            for i in 0..n {
                let (e, v, s) = (loss.eval(y[i], r[i]), loss.value(y[i], r[i]), loss.slope(y[i], r[i]));
                let ok = close(all[i].0, e.0) && close(all[i].1, e.1) && close(all[i].2, e.2);
                assert!(
                    ok && close(values[i], v) && close(slopes[i], s),
                    "{loss:?} at r = {}",
                    r[i]
                );
            }
        }
    }

    /// The conditional Huber loss against midpoint integration over e, and
    /// its derivatives against finite differences.
    #[test]
    fn conditional_huber_matches_direct_integration() {
        for &(nu, r, m, se) in &[(0.3, -0.4, 1.0, 0.5), (2.5, 0.1, 0.7, 1.2), (-1.0, 1.5, 2.0, 0.3)] {
            let loss = Loss::ConditionalHuber { m, se };
            let (v, d1, d2) = loss.eval(nu, r);
            let n = 200_000;
            let h = 20.0 / n as f64;
            let direct: f64 = (0..n)
                .map(|i| {
                    let g = -10.0 + (i as f64 + 0.5) * h;
                    Loss::Huber { m }.eval(nu + se * g, r).0 * norm_pdf(g) * h
                })
                .sum();
            assert!((v - direct).abs() < 1e-8, "value {v} vs {direct}");
            let e = 1e-5;
            let fd1 = (loss.eval(nu, r + e).0 - loss.eval(nu, r - e).0) / (2.0 * e);
            let fd2 = (loss.eval(nu, r + e).1 - loss.eval(nu, r - e).1) / (2.0 * e);
            assert!(
                (d1 - fd1).abs() < 1e-7 && (d2 - fd2).abs() < 1e-6,
                "{d1} {fd1} {d2} {fd2}"
            );
        }
    }

    #[test]
    fn the_slope_and_the_value_alone_are_those_of_eval() {
        let losses = [
            Loss::Logistic,
            Loss::ConditionalLogistic,
            Loss::Huber { m: 1.0 },
            Loss::ConditionalHuber { m: 0.7, se: 0.5 },
            Loss::Squared,
        ];
        for loss in losses {
            for y in [-1.0, 1.0, 0.3, -2.5] {
                for r in [-40.0, -3.0, -0.2, 0.0, 0.7, 5.0, 40.0] {
                    assert_eq!(
                        loss.slope(y, r).to_bits(),
                        loss.eval(y, r).1.to_bits(),
                        "{loss:?} {y} {r}"
                    );
                    assert_eq!(
                        loss.value(y, r).to_bits(),
                        loss.eval(y, r).0.to_bits(),
                        "{loss:?} {y} {r}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_shared_exponential_gives_softplus_and_sigmoid_to_the_last_bit() {
        for x in [-800.0, -37.5, -1.0, -1e-300, -0.0, 0.0, 1e-300, 0.25, 3.0, 40.0, 710.0] {
            let (sp, s) = softplus_sigmoid(x);
            assert_eq!(sp.to_bits(), softplus(x).to_bits(), "softplus({x})");
            assert_eq!(s.to_bits(), sigmoid(x).to_bits(), "sigmoid({x})");
        }
    }
}
