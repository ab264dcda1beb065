//! The classical private interval, below the proportional regime's
//! minimum d ([`super::MIN_FEATURES`]) where d/n is small ([`MAX_RATIO`]):
//! the M-estimator's sandwich with the privacy noise linearised, its
//! Hessian and score covariance released by the Gaussian mechanism.
//!
//! **The fit.** Rows projected onto ‖x‖ ≤ R get a public constant feature
//! c = R (an intercept: x̃ = (x, c), ‖x̃‖ ≤ R̃ = √2·R, the bound the
//! mechanism is calibrated for), and θ̂ ∈ ℝ^{d+1} is released by objective
//! perturbation, argmin Σℓ(yᵢ, x̃ᵢᵀθ) + (λ/2)‖θ‖² + σbᵀθ, or output
//! perturbation, the minimiser without σb plus τb (b ~ N(0, I)).
//!
//! **The target** is the ridge coefficient θ*_λ = argmin n·E ℓ(y, x̃ᵀθ) +
//! (λ/2)‖θ‖², the population version of the fit at this n and λ (the
//! intercept's included, penalised like the rest) — not the model's θ*,
//! which θ*_λ shrinks by about λ(H + λ)⁻¹. The unpenalised θ* would need
//! H⁻¹ (the centre θ̂ + λH⁻¹θ̂): at d = 10, n = 3000, ε = 8 the released
//! Ĥ's noise reached its smallest eigenvalue in half the logistic fits
//! (the noise's operator norm grows as √d, H's eigenvalues as n/d); the
//! ridge keeps H + λ away from it.
//!
//! **The interval.** Linearising the estimating equation Σℓ'(θ̂)x̃ + λθ̂ +
//! σb = 0 around θ*_λ (where n·E ℓ'(θ*_λ)x̃ + λθ*_λ = 0), with
//! H_λ = Σℓ''x̃x̃ᵀ + λI and S = Σℓ'(θ*_λ)x̃ + λθ*_λ (mean 0, covariance J =
//! Σℓ'²x̃x̃ᵀ to first order):
//!
//!   θ̂ − θ*_λ ≈ −H_λ⁻¹(S + σb),
//!   Cov θ̂ = H_λ⁻¹(J + σ²I)H_λ⁻¹  (objective perturbation),
//!   Cov θ̂ = H_λ⁻¹JH_λ⁻¹ + τ²I    (output perturbation),
//!
//! the sandwich plus the linearised privacy noise; θ*_λ,j ∈ θ̂_j ±
//! z·√Cov_jj. The linearisation holds when θ̂ is within O(√(d/n)) of
//! θ*_λ — d/n small; at d/n = 0.5 the proportional regime's bias factor α
//! is far from what the sandwich's centre assumes.
//!
//! **The releases.** H and J at the released θ̂ are per-row sums of
//! ℓ''x̃x̃ᵀ and ℓ'²x̃x̃ᵀ, whose Frobenius norms are at most βR̃² and L²R̃²
//! (|ℓ'| ≤ L, 0 ≤ ℓ'' ≤ β: logistic 1 and ¼, Huber M and 1): each upper
//! triangle (diagonal included, its ℓ2 norm at most the Frobenius norm) gets
//! Gaussian noise of sd z times that sensitivity, mirrored — two releases
//! composed with θ̂ and the rows' releases in the certified ledger, their
//! multiplier z calibrated to ε·[`SHARE`] alone (the accountant's
//! replace-one pair doubles the sensitivity; the true diameter is √2 times
//! it). Noise makes them indefinite: each has its negative eigenvalues set
//! to 0 (eigen-decomposition, the eigenvectors kept; both are positive
//! semi-definite without noise), then λ is added to Ĥ. ν = 2√(d+1)·sd_H is
//! the noise matrix's operator norm (a public number): where the smallest
//! eigenvalue of Ĥ_λ is below [`HESSIAN_SNR`]·ν the released Hessian does
//! not determine the width and the fit is refused
//! ([`Reason::NoisyHessian`], naming the λ that would serve it).
//!
//! # References
//! - Wang, Kifer, Lee (2019), *Differentially private confidence intervals
//!   for empirical risk minimization*, J. Privacy and Confidentiality.
//! - Avella-Medina (2021), *Privacy-preserving parametric inference: a
//!   case for robust statistics*, JASA.
//! - Chaudhuri, Monteleoni, Sarwate (2011), *Differentially private
//!   empirical risk minimization*, JMLR.
//! - van der Vaart (1998), *Asymptotic statistics*, ch. 5 (M-estimators,
//!   the sandwich).

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use propdp_core::accountant::bracket::EpsilonBracket;
use propdp_core::loss::Loss;
use serde::Serialize;

use super::{Glm, Reason, Refusal, Spec};

/// The fewest features an interval is given for: the nuisances' error is
/// O(d^-1/2) and the fixed point a large-d law.
pub const MIN_FEATURES: usize = 200;

/// The largest d/n the classical interval is given for. Measured
/// (docs/inference.md, 200 data sets per cell): coverage of the ridge target
/// 0.948–1.000 at d = 10–50, d/n = 0.003–0.1, ε = 1–8.
pub const MAX_RATIO: f64 = 0.1;

/// The share of ε the nuisance releases of a classical fit (H, J and the
/// rows') would cost alone: in Gaussian-DP terms the estimator keeps
/// √(1 − 0.5²) ≈ 87% of its budget, and the matrices, whose noise decides
/// the interval's width, get five times the noise multiplier's budget of
/// [`super::release::NUISANCE_SHARE`].
pub const SHARE: f64 = 0.5;

/// The smallest ratio of Ĥ_λ's smallest eigenvalue to its noise's
/// operator norm ν the classical interval is given for (at λ = 2ν the
/// measured coverage was 0.948–1.000; the unpenalised Hessian alone,
/// floored at ν, covered 2% at d = 50, ε = 1).
pub const HESSIAN_SNR: f64 = 2.0;

/// How many releases the classical interval adds to the ledger (Ĥ and Ĵ).
pub(super) const RELEASES: u64 = 2;

/// The classical interval of a fit: θ̃ and its covariance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Classical {
    /// θ̂ (d + 1 entries: the features' coefficients, then the intercept's,
    /// in units of its constant feature c).
    pub centre: Vec<f64>,
    /// Cov θ̂ around θ*_λ, (d + 1) × (d + 1).
    #[serde(skip)]
    pub covariance: DMatrix<f64>,
    /// The intercept's constant feature c (= row_norm).
    pub intercept_feature: f64,
    /// The released θ̂'s intercept in the labels' units, θ̂₀·c.
    pub intercept_released: f64,
    /// The sd of each released entry of Ĥ and Ĵ.
    pub noise_sd: (f64, f64),
    /// ν, the operator norm of Ĥ's noise (2√(d+1) times its entries' sd).
    pub hessian_noise: f64,
    /// The smallest eigenvalue of the released Ĥ_λ (at least
    /// [`HESSIAN_SNR`]·ν, else the fit is refused).
    pub hessian_min: f64,
}

/// The spec the classical fit is calibrated with: the rows with their
/// constant feature c = row_norm have norm at most √2·row_norm.
pub(super) fn augmented(spec: &Spec) -> Spec {
    Spec {
        row_norm: spec.row_norm * std::f64::consts::SQRT_2,
        ..*spec
    }
}

/// DP-SGD is not served below [`MIN_FEATURES`]: its T-th iterate is not the
/// M-estimator whose sandwich the classical interval is.
pub(super) fn served(spec: &Spec, d: usize) -> Result<(), Refusal> {
    if !spec.is_descent() {
        return Ok(());
    }
    Err(Refusal::new(
        Reason::TooFewFeatures,
        format!(
            "d = {d} features, below the {MIN_FEATURES} the proportional intervals (and DP-SGD's state evolution) \
             are validated for; the classical interval that serves fewer features is the sandwich of an \
             M-estimator's minimiser, which T steps of DP-SGD from θ₀ = 0 have not reached (their bias is \
             unknown): use algorithm = \"objective\" or \"output\"; ε spent: 0 (nothing released)"
        ),
    ))
}

/// Refuses d/n above [`MAX_RATIO`] (`n`: the rows fitted, as released),
/// naming what was spent before (`spent`: none, or the certified ε of the
/// releases made).
pub(super) fn check_ratio(d: usize, n: f64, spent: Option<EpsilonBracket>) -> Result<(), Refusal> {
    let ratio = d as f64 / n;
    if ratio <= MAX_RATIO {
        return Ok(());
    }
    let spent = match spent {
        None => "0 (nothing released)".to_string(),
        Some(b) => format!("ε ≤ {:.4} (the rows' count, released under add/remove)", b.upper),
    };
    Err(Refusal::new(
        Reason::TooFewFeatures,
        format!(
            "d = {d} features with d/n = {ratio:.3}: below the minimum d = {MIN_FEATURES} the proportional intervals \
             are validated for, and above the d/n = {MAX_RATIO} up to which the classical interval holds (its \
             linearisation's error grows with d/n); give more rows or at least {MIN_FEATURES} features; budget \
             spent: {spent}"
        ),
    ))
}

/// The ridge λ at and above which a classical fit of `spec` with `d`
/// features is never refused for its Hessian's noise: [`HESSIAN_SNR`]·ν,
/// ν = 2√(d+1)·z·β·R̃² (Ĥ_λ's eigenvalues are at least λ). A public
/// function of the settings (the noise multiplier z of the nuisance
/// releases, from ε, δ, the relation and their count), no data read.
pub fn sufficient_lambda(spec: &Spec, d: usize) -> crate::Result<f64> {
    spec.check()?;
    let count = super::rows::releases(spec)
        + RELEASES
        + if spec.standardize {
            super::standardize::RELEASES
        } else {
            0
        };
    let plan = super::release::plan_with_share(&augmented(spec), count, SHARE)?;
    let z = plan.nuisance_z.expect("a classical fit plans its nuisance releases");
    let r = augmented(spec).row_norm;
    Ok(HESSIAN_SNR * 2.0 * ((d + 1) as f64).sqrt() * z * constants(spec.model).1 * r * r)
}

/// (L, β): |ℓ'| ≤ L, 0 ≤ ℓ'' ≤ β.
fn constants(model: Glm) -> (f64, f64) {
    match model {
        Glm::Logistic => (1.0, 0.25),
        Glm::Huber { m } => (m, 1.0),
    }
}

/// Ĥ and Ĵ at `theta` over the columns of `xt` (the rows with their
/// constant feature, norm ≤ `norm`) and `labels`, each released with noise
/// multiplier `z` from the standard Gaussians `g` (p(p + 1) of them), and
/// the interval they give for a fit at ridge `lambda` with objective noise
/// `sigma` or output noise `tau`.
#[allow(clippy::too_many_arguments)] // the fit's parts, each used once
pub(super) fn interval(
    xt: &DMatrix<f64>,
    labels: &DVector<f64>,
    theta: &DVector<f64>,
    spec: &Spec,
    (lambda, sigma, tau): (f64, f64, f64),
    norm: f64,
    z: f64,
    g: &[f64],
) -> Result<Classical, Refusal> {
    let p = xt.nrows();
    let loss = match spec.model {
        Glm::Logistic => Loss::Logistic,
        Glm::Huber { m } => Loss::Huber { m },
    };
    let (mut h, mut j) = (DMatrix::zeros(p, p), DMatrix::zeros(p, p));
    for (x, &y) in xt.column_iter().zip(labels.iter()) {
        let (_, slope, curvature) = loss.eval(y, x.dot(theta));
        h.ger(curvature, &x, &x, 1.0);
        j.ger(slope * slope, &x, &x, 1.0);
    }
    let (l, beta) = constants(spec.model);
    let noise_sd = (z * beta * norm * norm, z * l * l * norm * norm);
    let mut k = 0;
    for (m, sd) in [(&mut h, noise_sd.0), (&mut j, noise_sd.1)] {
        for a in 0..p {
            for b in a..p {
                m[(a, b)] += sd * g[k];
                m[(b, a)] = m[(a, b)];
                k += 1;
            }
        }
    }
    let noise = 2.0 * (p as f64).sqrt() * noise_sd.0;
    // both positive semi-definite without noise: negative eigenvalues set to 0, then the ridge
    let h = rebuild(&SymmetricEigen::new(h), |e| e.max(0.0)) + lambda * DMatrix::<f64>::identity(p, p);
    let h = SymmetricEigen::new(h);
    let smallest = h.eigenvalues.min();
    // (λ ≥ HESSIAN_SNR·ν is always served: the tolerance absorbs the eigen-decomposition's rounding)
    if smallest < HESSIAN_SNR * noise * (1.0 - 1e-9) {
        return Err(Refusal::new(
            Reason::NoisyHessian,
            format!(
                "the released Hessian plus the ridge has smallest eigenvalue {smallest:.4}, below {HESSIAN_SNR} \
                 times its noise's operator norm {noise:.4}: at this budget the data do not determine the \
                 interval's width; raise lambda to at least {:.4}, or epsilon, or give more rows (budget spent: all \
                 of it, the refusal reads the releases)",
                HESSIAN_SNR * noise
            ),
        ));
    }
    let inverse = rebuild(&h, |e| 1.0 / e);
    let j = rebuild(&SymmetricEigen::new(j), |e| e.max(0.0));
    let identity = DMatrix::<f64>::identity(p, p);
    let covariance = &inverse * (j + sigma * sigma * &identity) * &inverse + tau * tau * &identity;
    Ok(Classical {
        centre: theta.iter().copied().collect(),
        covariance,
        intercept_feature: spec.row_norm,
        intercept_released: theta[p - 1] * spec.row_norm,
        noise_sd,
        hessian_noise: noise,
        hessian_min: smallest,
    })
}

/// V f(Λ) Vᵀ of a symmetric eigen-decomposition.
fn rebuild(e: &SymmetricEigen<f64, nalgebra::Dyn>, f: impl Fn(f64) -> f64) -> DMatrix<f64> {
    let v = &e.eigenvectors;
    let scaled = DMatrix::from_fn(v.nrows(), v.ncols(), |a, b| v[(a, b)] * f(e.eigenvalues[b]));
    &scaled * v.transpose()
}

impl Classical {
    /// The ledger's line for the two matrix releases.
    pub(super) fn release_text(&self, z: f64) -> String {
        format!(
            "the Hessian H = Σℓ''x̃x̃ᵀ and the score covariance J = Σℓ'²x̃x̃ᵀ at θ̂ ((d + 1) × (d + 1), the rows with \
             their constant feature), each by the Gaussian mechanism (noise multiplier {z:.3}, entry noise sd \
             {:.4} and {:.4}; Ĥ + λI's smallest eigenvalue {:.4}, {:.1} times its noise's operator norm)",
            self.noise_sd.0,
            self.noise_sd.1,
            self.hessian_min,
            self.hessian_min / self.hessian_noise
        )
    }

    /// The variance of ⟨a, θ̃⟩ for a contrast `a` of the d features (the
    /// intercept's weight 0).
    pub(super) fn variance(&self, a: &[f64]) -> f64 {
        let mut v = 0.0;
        for (r, &ar) in a.iter().enumerate() {
            for (c, &ac) in a.iter().enumerate() {
                v += ar * self.covariance[(r, c)] * ac;
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::rebuild;
    use nalgebra::{DMatrix, SymmetricEigen};

    /// Raising a noisy matrix's eigenvalues to a floor leaves it symmetric,
    /// with every eigenvalue at least the floor, and keeps the eigenvalues
    /// above it.
    #[test]
    fn the_projection_raises_only_the_low_eigenvalues() {
        let m = DMatrix::from_row_slice(3, 3, &[2.0, 1.0, 0.0, 1.0, -1.0, 0.5, 0.0, 0.5, 3.0]);
        let e = SymmetricEigen::new(m.clone());
        let raised = rebuild(&e, |v| v.max(0.5));
        assert!((&raised - raised.transpose()).amax() < 1e-12);
        let mut after: Vec<f64> = SymmetricEigen::new(raised).eigenvalues.iter().copied().collect();
        let mut before: Vec<f64> = e.eigenvalues.iter().copied().collect();
        after.sort_by(f64::total_cmp);
        before.sort_by(f64::total_cmp);
        assert!((after[0] - 0.5).abs() < 1e-12, "{after:?}");
        for (a, b) in after.iter().zip(&before).skip(1) {
            assert!((a - b.max(0.5)).abs() < 1e-9, "{after:?} {before:?}");
        }
        assert!(before[0] < 0.0);
    }
}
