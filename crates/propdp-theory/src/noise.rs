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
//! The last two integrals are done by the `quadrature` crate's adaptive
//! double-exponential rule on W = t/(1−t), t ∈ (0, 1), which copes with the
//! Gamma density's endpoint singularity (ν < 2).

use propdp_core::NoiseLaw;

/// Absolute accuracy asked of the adaptive quadrature (integrands are
/// probabilities or second moments scaled to O(1)).
const QUAD_TOL: f64 = 1e-13;

/// E over the mixing law of f(S² + v): the expectation of f evaluated at the
/// total variance of z = ε + √v·G.
pub fn expect_over_variance<F: Fn(f64) -> f64>(law: &NoiseLaw, v: f64, f: F) -> f64 {
    match *law {
        NoiseLaw::Gaussian { sd } => f(sd * sd + v),
        NoiseLaw::Contaminated { sd, p, outlier_sd } => (1.0 - p) * f(sd * sd + v) + p * f(outlier_sd * outlier_sd + v),
        NoiseLaw::Laplace { scale } => {
            let b2 = 2.0 * scale * scale;
            half_line(|w| (-w).exp() * f(b2 * w + v))
        }
        NoiseLaw::StudentT { dof, scale } => {
            let k = 0.5 * dof;
            let log_norm = libm::lgamma(k);
            let s2 = scale * scale * dof * 0.5;
            half_line(|u| {
                if u <= 0.0 {
                    return 0.0;
                }
                let dens = ((k - 1.0) * u.ln() - u - log_norm).exp();
                dens * f(s2 / u + v)
            })
        }
    }
}

/// ∫₀^∞ g(w) dw via w = t/(1−t).
fn half_line<G: Fn(f64) -> f64>(g: G) -> f64 {
    quadrature::integrate(
        |t: f64| {
            if t >= 1.0 {
                return 0.0;
            }
            let one_minus = 1.0 - t;
            let val = g(t / one_minus) / (one_minus * one_minus);
            if val.is_finite() { val } else { 0.0 }
        },
        0.0,
        1.0,
        QUAD_TOL,
    )
    .integral
}

/// P(|z| ≤ c) for z = ε + √v·G: the first of [`truncated_moments`] alone,
/// at half the cost for the scale mixtures (one quadrature, not two).
pub fn truncated_probability(law: &NoiseLaw, v: f64, c: f64) -> f64 {
    match law {
        NoiseLaw::Gaussian { .. } | NoiseLaw::Contaminated { .. } => truncated_moments(law, v, c).0,
        _ => expect_over_variance(law, v, |w| crate::gaussian::central_truncated_moments(w, c).0),
    }
}

/// (P(|z| ≤ c), E[z² 1{|z| ≤ c}]) for z = ε + √v·G.
pub fn truncated_moments(law: &NoiseLaw, v: f64, c: f64) -> (f64, f64) {
    match law {
        NoiseLaw::Gaussian { .. } | NoiseLaw::Contaminated { .. } => {
            // point masses: one pass gives both moments
            let mut acc = (0.0, 0.0);
            let add = |w: f64, weight: f64, acc: &mut (f64, f64)| {
                let (p, t) = crate::gaussian::central_truncated_moments(w, c);
                acc.0 += weight * p;
                acc.1 += weight * t;
            };
            match *law {
                NoiseLaw::Gaussian { sd } => add(sd * sd + v, 1.0, &mut acc),
                NoiseLaw::Contaminated { sd, p, outlier_sd } => {
                    add(sd * sd + v, 1.0 - p, &mut acc);
                    add(outlier_sd * outlier_sd + v, p, &mut acc);
                }
                _ => unreachable!(),
            }
            acc
        }
        _ => (
            expect_over_variance(law, v, |w| crate::gaussian::central_truncated_moments(w, c).0),
            expect_over_variance(law, v, |w| crate::gaussian::central_truncated_moments(w, c).1),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gaussian::cdf;

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
