//! Noise laws as Gaussian scale mixtures ε = S·G.
//!
//! Every law of docs/theory.md §1 is one, so with z = ε + αG we have
//! z | S ~ N(0, S² + α²) and any expectation over z is an expectation over the
//! mixing variance S² of a Gaussian one:
//! - `gaussian(sd)`: S² = sd² (point mass);
//! - `contaminated(sd, p, outlier_sd)`: S² = sd² w.p. 1−p, outlier_sd² w.p. p;
//! - `laplace(b)`: S² = 2b²W, W ~ Exp(1) (the Laplace law is an exponential
//!   variance mixture of normals);
//! - `student_t(ν, scale)`: S² = scale²·ν/(2U), U ~ Gamma(ν/2, 1).
//!
//! The last two are Gamma laws in disguise (W ~ Gamma(1), U ~ Gamma(ν/2)),
//! integrated by one fixed rule per law ([`MixingRule`], built once per
//! thread and law and shared by every point of a sweep): the trapezoid rule
//! in x = ln U, where the integrands — smooth sigmoids of ln S² around
//! S² ≈ c² and S² ≈ v — decay like e^{kx} on the left and e^{−eˣ} on the
//! right. The integrand is analytic in the strip |Im x| < π/2, so the error
//! falls like e^{−π²/h}; with h = 0.2 both moments are within 1e-12 of
//! 40-digit references (tests/mixture_moments.rs: ν ∈ {1, 2.5, 3, 10},
//! Laplace; v ∈ [1e-4, 5], c ∈ [0.05, 200]) and the rule has 51 (ν = 10) to
//! 389 (ν = 1) nodes, 141 for ν = 3 and 203 for Laplace. [`truncated_jet`]
//! cuts a rule's far end short per call where it cannot matter ([`Tail`]).
//!
//! # References
//! - Trefethen, Weideman (2014), "The exponentially convergent trapezoidal
//!   rule", SIAM Review 56(3), §5 (rules on the real line, strip width).

use std::cell::RefCell;
use std::rc::Rc;

use propdp_core::NoiseLaw;

/// Step of the trapezoid rule in x = ln U.
const STEP: f64 = 0.2;
/// Mass of the mixing law left out by the rule's truncation.
const TAIL: f64 = 1e-16;

/// A fixed rule for a mixing law: E f(S² + v) ≈ Σⱼ ωⱼ f(S²ⱼ + v).
#[derive(Debug, Clone, PartialEq)]
pub struct MixingRule {
    /// The nodes S²ⱼ.
    pub variance: Vec<f64>,
    /// Their weights ωⱼ (summing to 1 − O(TAIL)).
    pub weight: Vec<f64>,
    /// How the far end of the rule may be cut short per call.
    pub tail: Tail,
}

/// The far end of a [`MixingRule`] (its last nodes, where the weights
/// vanish), as suffix sums over nodes i ≥ j (one more entry, 0, at the end)
/// that let [`truncated_jet`] stop early when the rest cannot matter.
#[derive(Debug, Clone, PartialEq)]
pub enum Tail {
    /// S² → 0 along the rule (Laplace): from node j on, the rest is one
    /// variance 0 of weight `mass[j]` = Σ ωᵢ to within the first-order term,
    /// which `second[j]` = Σ ωᵢS²ᵢ bounds.
    ToZero {
        /// Σᵢ≥ⱼ ωᵢ.
        mass: Vec<f64>,
        /// Σᵢ≥ⱼ ωᵢS²ᵢ.
        second: Vec<f64>,
    },
    /// S² → ∞ along the rule (Student-t): every truncated moment and
    /// derivative of a node falls like 1/S or faster, and `inverse_sd[j]` =
    /// Σ ωᵢ/Sᵢ bounds the rest.
    ToInfinity {
        /// Σᵢ≥ⱼ ωᵢ/Sᵢ.
        inverse_sd: Vec<f64>,
    },
}

/// Suffix sums Σᵢ≥ⱼ f(S²ᵢ)ωᵢ, j = 0..=n.
fn suffix_sums(variance: &[f64], weight: &[f64], f: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut out = vec![0.0; variance.len() + 1];
    for i in (0..variance.len()).rev() {
        out[i] = out[i + 1] + weight[i] * f(variance[i]);
    }
    out
}

impl MixingRule {
    /// The rule of a scale-mixture law with a continuous mixing law
    /// (Laplace, Student-t); `None` for the point masses.
    ///
    /// ```
    /// use propdp_core::NoiseLaw;
    /// use propdp_theory::fixed_points::noise::MixingRule;
    /// let r = MixingRule::of(&NoiseLaw::StudentT { dof: 3.0, scale: 0.5 }).unwrap();
    /// assert!((r.weight.iter().sum::<f64>() - 1.0).abs() < 1e-13);
    /// // S² = scale²·(ν/2)/U with U ~ Gamma(ν/2): E[1/S²] = 1/scale² = 4
    /// let m: f64 = r.variance.iter().zip(&r.weight).map(|(s, w)| w / s).sum();
    /// assert!((m - 4.0).abs() < 1e-12);
    /// ```
    pub fn of(law: &NoiseLaw) -> Option<MixingRule> {
        match *law {
            NoiseLaw::Gaussian { .. } | NoiseLaw::Contaminated { .. } => None,
            // S² = 2b²·W, W ~ Exp(1) = Gamma(1)
            NoiseLaw::Laplace { scale } => {
                let (variance, weight) = Self::gamma(1.0, |u| 2.0 * scale * scale * u);
                let tail = Tail::ToZero {
                    mass: suffix_sums(&variance, &weight, |_| 1.0),
                    second: suffix_sums(&variance, &weight, |s2| s2),
                };
                Some(MixingRule { variance, weight, tail })
            }
            // S² = scale²·(ν/2)/U, U ~ Gamma(ν/2)
            NoiseLaw::StudentT { dof, scale } => {
                let (variance, weight) = Self::gamma(0.5 * dof, |u| scale * scale * 0.5 * dof / u);
                let tail = Tail::ToInfinity {
                    inverse_sd: suffix_sums(&variance, &weight, |s2| 1.0 / s2.sqrt()),
                };
                Some(MixingRule { variance, weight, tail })
            }
        }
    }

    /// Trapezoid rule in x = ln U for U ~ Gamma(k), S² = `variance(U)`: the
    /// law of x has density exp(kx − eˣ)/Γ(k); x runs from where the left
    /// tail e^{kx}/Γ(k + 1) falls below [`TAIL`] to eˣ = 40 (e^{−40} ≈ 4e-18).
    fn gamma(k: f64, variance: impl Fn(f64) -> f64) -> (Vec<f64>, Vec<f64>) {
        let log_norm = libm::lgamma(k);
        let lo = (TAIL.ln() + libm::lgamma(k + 1.0)) / k;
        let hi = 40f64.ln();
        let count = ((hi - lo) / STEP).ceil() as usize + 1;
        (0..count)
            .map(|j| {
                let x = hi - j as f64 * STEP;
                (variance(x.exp()), STEP * (k * x - x.exp() - log_norm).exp())
            })
            .unzip()
    }
}

thread_local! {
    /// The rules built on this thread, by law (a sweep has one or a few).
    static RULES: RefCell<Vec<(NoiseLaw, Rc<MixingRule>)>> = const { RefCell::new(Vec::new()) };
}

/// The rule of `law`, built on first use on this thread.
fn rule(law: &NoiseLaw) -> Option<Rc<MixingRule>> {
    RULES.with(|rules| {
        let mut rules = rules.borrow_mut();
        if let Some((_, r)) = rules.iter().find(|(l, _)| l == law) {
            return Some(r.clone());
        }
        let r = Rc::new(MixingRule::of(law)?);
        if rules.len() >= 16 {
            rules.clear(); // a sweep over the noise law itself: keep the cache small
        }
        rules.push((*law, r.clone()));
        Some(r)
    })
}

/// Call `f(S², weight)` for every variance of the mixing law: one point
/// mass (Gaussian), two (contaminated), or the nodes of its [`MixingRule`].
fn each_variance(law: &NoiseLaw, mut f: impl FnMut(f64, f64)) {
    match *law {
        NoiseLaw::Gaussian { sd } => f(sd * sd, 1.0),
        NoiseLaw::Contaminated { sd, p, outlier_sd } => {
            f(sd * sd, 1.0 - p);
            f(outlier_sd * outlier_sd, p);
        }
        NoiseLaw::Laplace { .. } | NoiseLaw::StudentT { .. } => {
            let rule = rule(law).expect("a continuous mixing law");
            for (s2, w) in rule.variance.iter().zip(&rule.weight) {
                f(*s2, *w);
            }
        }
    }
}

/// E over the mixing law of f(S² + v): the expectation of f evaluated at the
/// total variance of z = ε + √v·G.
pub fn expect_over_variance<F: Fn(f64) -> f64>(law: &NoiseLaw, v: f64, f: F) -> f64 {
    let mut acc = 0.0;
    each_variance(law, |s2, w| acc += w * f(s2 + v));
    acc
}

/// P(|z| ≤ c) for z = ε + √v·G (of [`truncated_jet`]).
pub fn truncated_probability(law: &NoiseLaw, v: f64, c: f64) -> f64 {
    truncated_jet(law, v, c).p
}

/// (P(|z| ≤ c), E[z² 1{|z| ≤ c}]) for z = ε + √v·G (of [`truncated_jet`]).
pub fn truncated_moments(law: &NoiseLaw, v: f64, c: f64) -> (f64, f64) {
    let j = truncated_jet(law, v, c);
    (j.p, j.t2)
}

/// [`truncated_moments`] with their first derivatives in c and v, for a
/// Newton step on a system in (v, c): one pass over the mixing law.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TruncatedJet {
    /// P(|z| ≤ c).
    pub p: f64,
    /// E[z² 1{|z| ≤ c}].
    pub t2: f64,
    /// ∂P/∂c (and ∂t2/∂c = c²·∂P/∂c).
    pub dp_dc: f64,
    /// ∂P/∂v.
    pub dp_dv: f64,
    /// ∂t2/∂v.
    pub dt2_dv: f64,
}

/// Below this fraction of a running sum, the rest of a rule is left out.
const NEGLIGIBLE: f64 = 1e-17;

/// A [`TruncatedJet`] being summed over the variances of the law.
#[derive(Default)]
struct JetSum {
    jet: TruncatedJet,
    /// Σ ω|∂t2/∂w| (∂t2/∂w changes sign).
    abs_dt2_dv: f64,
}

impl JetSum {
    /// Add the Gaussian of variance w with weight ω.
    fn add(&mut self, w: f64, weight: f64, c: f64) {
        self.add_values(crate::numerics::gaussian::central_truncated_jet(w, c), weight);
    }

    /// Add the values (P, T, ∂P/∂c, ∂P/∂w, ∂T/∂w) of one Gaussian with weight ω.
    fn add_values(&mut self, (p, t, p_c, p_w, t_w): (f64, f64, f64, f64, f64), weight: f64) {
        self.jet.p += weight * p;
        self.jet.t2 += weight * t;
        self.jet.dp_dc += weight * p_c;
        self.jet.dp_dv += weight * p_w;
        self.jet.dt2_dv += weight * t_w;
        self.abs_dt2_dv += weight * t_w.abs();
    }

    /// Whether variances of total variance ≥ `w_min` and Σ ω/S = `rest` add
    /// less than [`NEGLIGIBLE`] of every sum so far. Per Gaussian of variance
    /// w (k = c/√w): P ≤ √(2/π)k ≤ 0.8c/√w, T ≤ c²P, ∂P/∂c = 2φ(k)/√w ≤ 0.8/√w,
    /// |∂P/∂w| = kφ(k)/w ≤ 0.4c/w^{3/2}, |∂T/∂w| ≤ T/w + k³φ(k) ≤ 1.2c³/w^{3/2},
    /// and 1/√w ≤ 1/S.
    fn covers(&self, rest: f64, w_min: f64, c: f64) -> bool {
        let j = &self.jet;
        let c3 = c * c * c;
        0.8 * c * rest <= NEGLIGIBLE * j.p
            && 0.8 * c3 * rest <= NEGLIGIBLE * j.t2
            && 0.8 * rest <= NEGLIGIBLE * j.dp_dc
            && 0.4 * c * rest / w_min <= NEGLIGIBLE * j.dp_dv.abs()
            && 1.2 * c3 * rest / w_min <= NEGLIGIBLE * self.abs_dt2_dv
    }

    /// Whether the rest of a Laplace rule (S² → 0, Σ ωS² = `second`) may be
    /// lumped at S² = 0 (variance v). With k = c/√w and g one of the five
    /// values of a Gaussian of variance w ≥ v, |∂g/∂w| ≤ (3 + k²)·m(g)/w
    /// where m(g) = |g| for P (∂P/∂w = −kφ(k)/w and P ≥ 2kφ(k)), T, ∂P/∂c
    /// and ∂P/∂w, and m = T/w + k³φ(k) ≥ |∂T/∂w| for ∂T/∂w (whose own
    /// derivative is (1 − k²)k³φ(k)/(2w)). So the lump is off by at most
    /// (3 + c²/v)·`second`/v·m(g(v)), kept below [`NEGLIGIBLE`] of every sum.
    fn lumps(&self, second: f64, v: f64, c: f64, at_v: (f64, f64, f64, f64, f64)) -> bool {
        let j = &self.jet;
        let r = (3.0 + c * c / v) * second / v;
        // φ(k) from ∂P/∂c = 2φ(k)/√v
        let (k, phi) = (c / v.sqrt(), 0.5 * at_v.2 * v.sqrt());
        let m_dt2_dv = at_v.1 / v + k * k * k * phi;
        r * at_v.0 <= NEGLIGIBLE * j.p
            && r * at_v.1 <= NEGLIGIBLE * j.t2
            && r * at_v.2 <= NEGLIGIBLE * j.dp_dc
            && r * at_v.3.abs() <= NEGLIGIBLE * j.dp_dv.abs()
            && r * m_dt2_dv <= NEGLIGIBLE * self.abs_dt2_dv
    }
}

/// [`TruncatedJet`] of z = ε + √v·G at c: the mixture of
/// [`crate::numerics::gaussian::central_truncated_jet`] (∂/∂v = ∂/∂w at w = S² + v).
///
/// A [`MixingRule`] is cut short where its [`Tail`] cannot matter: a
/// Student-t rule once Σ ω/S over the rest bounds every moment and
/// derivative below 1e-17 of its running sum (`JetSum::covers`; about 40%
/// of the 389 nodes for ν = 1, at c ≈ 1); a Laplace rule once the rest,
/// whose S² → 0, is one variance v of weight `mass[j]` to within 1e-17 of
/// every running sum (`JetSum::lumps`; about 40% of its 203 nodes at
/// v ≈ 0.5, c ≈ 1.5).
pub fn truncated_jet(law: &NoiseLaw, v: f64, c: f64) -> TruncatedJet {
    let mut sum = JetSum::default();
    let rule = match law {
        NoiseLaw::Laplace { .. } | NoiseLaw::StudentT { .. } => rule(law).expect("a continuous mixing law"),
        NoiseLaw::Gaussian { .. } | NoiseLaw::Contaminated { .. } => {
            each_variance(law, |s2, w| sum.add(s2 + v, w, c));
            return sum.jet;
        }
    };
    let nodes = rule.variance.iter().zip(&rule.weight).enumerate();
    match &rule.tail {
        Tail::ToZero { mass, second } => {
            let at_v = crate::numerics::gaussian::central_truncated_jet(v, c);
            for (i, (s2, w)) in nodes {
                if v > 0.0 && i > 0 && sum.lumps(second[i], v, c, at_v) {
                    sum.add_values(at_v, mass[i]);
                    break;
                }
                sum.add(s2 + v, *w, c);
            }
        }
        Tail::ToInfinity { inverse_sd } => {
            for (i, (s2, w)) in nodes {
                sum.add(s2 + v, *w, c);
                if sum.covers(inverse_sd[i + 1], s2 + v, c) {
                    break;
                }
            }
        }
    }
    sum.jet
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::gaussian::cdf;

    /// Density of ε, written independently of the mixture representation.
    fn density(law: &NoiseLaw, e: f64) -> f64 {
        match *law {
            NoiseLaw::Laplace { scale } => (-e.abs() / scale).exp() / (2.0 * scale),
            NoiseLaw::StudentT { dof, scale } => {
                let x = e / scale;
                let ln_c =
                    libm::lgamma(0.5 * (dof + 1.0)) - libm::lgamma(0.5 * dof) - 0.5 * (dof * std::f64::consts::PI).ln();
                (ln_c - 0.5 * (dof + 1.0) * (1.0 + x * x / dof).ln()).exp() / scale
            }
            _ => unreachable!(),
        }
    }

    /// Cutting a rule's tail short changes no moment or derivative by more
    /// than 1e-14 of the sum over every node, over v ∈ [1e-6, 50] and
    /// c ∈ [1e-3, 1e4].
    #[test]
    fn tail_cut_matches_the_whole_rule() {
        let laws = [
            NoiseLaw::Laplace { scale: 0.7 },
            NoiseLaw::Laplace { scale: 0.01 },
            NoiseLaw::StudentT { dof: 1.0, scale: 1.0 },
            NoiseLaw::StudentT { dof: 3.0, scale: 0.5 },
            NoiseLaw::StudentT { dof: 10.0, scale: 2.0 },
        ];
        for law in &laws {
            for v in [1e-6, 1e-3, 0.05, 0.5, 5.0, 50.0] {
                for c in [1e-3, 0.05, 0.3, 1.0, 3.0, 20.0, 200.0, 1e4] {
                    let mut whole = JetSum::default();
                    each_variance(law, |s2, w| whole.add(s2 + v, w, c));
                    let (cut, all) = (truncated_jet(law, v, c), whole.jet);
                    // (cut, whole rule, scale); ∂T/∂w changes sign: scale Σ ω|∂T/∂w|
                    let values = [
                        ("P", cut.p, all.p, all.p),
                        ("T", cut.t2, all.t2, all.t2),
                        ("∂P/∂c", cut.dp_dc, all.dp_dc, all.dp_dc),
                        ("∂P/∂v", cut.dp_dv, all.dp_dv, all.dp_dv.abs()),
                        ("∂T/∂v", cut.dt2_dv, all.dt2_dv, whole.abs_dt2_dv),
                    ];
                    for (name, a, b, scale) in values {
                        assert!(
                            (a - b).abs() <= 1e-14 * scale,
                            "{law:?} v={v} c={c} {name}: {a:e} vs {b:e}"
                        );
                    }
                }
            }
        }
    }

    /// The mixture representation against direct integration over the noise
    /// density of P(|ε + αG| ≤ c) = Φ((c−ε)/α) − Φ((−c−ε)/α).
    #[test]
    fn mixture_matches_direct_integration_over_density() {
        let laws = [
            NoiseLaw::Laplace { scale: 0.7 },
            NoiseLaw::StudentT { dof: 3.0, scale: 0.5 },
            NoiseLaw::StudentT { dof: 1.0, scale: 1.0 },
        ];
        for law in &laws {
            for &(alpha, c) in &[(0.3, 1.0), (1.2, 2.5), (0.05, 0.4)] {
                let (p_mix, _) = truncated_moments(law, alpha * alpha, c);
                // direct: ∫ density(e) P(|e + αG| ≤ c | e) de on a fine midpoint grid
                // after e = tan(u), u ∈ (−π/2, π/2), which absorbs the heavy tails.
                let n = 400_000;
                let h = std::f64::consts::PI / n as f64;
                let mut acc = 0.0;
                for i in 0..n {
                    let u = -std::f64::consts::FRAC_PI_2 + (i as f64 + 0.5) * h;
                    let e = u.tan();
                    let jac = 1.0 + e * e;
                    let cond = cdf((c - e) / alpha) - cdf((-c - e) / alpha);
                    acc += density(law, e) * cond * jac * h;
                }
                assert!((p_mix - acc).abs() < 2e-8, "{law:?} α={alpha} c={c}: {p_mix} vs {acc}");
            }
        }
    }
}
