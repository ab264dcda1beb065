//! Private inference in the proportional regime: confidence intervals for
//! the coefficients θ* of a GLM fitted privately — objective or output
//! perturbation of a logistic or Huber model with ridge λ, or T steps of
//! DP-GD/DP-SGD (α and σ_eff then from the state evolution) — that keep their
//! coverage when d/n is not small (docs/inference.md; the derivation in
//! docs/theory.md §6).
//!
//! For rows x ~ N(0, I/d) the released estimate is, per coordinate and per
//! fixed contrast (not only on average: a rotation fixing θ* leaves the
//! data's law unchanged and maps θ̂ to its rotation),
//!
//!   θ̂ ≈ α·θ* + σ_eff·Z,  Z ~ N(0, I_d),
//!
//! with α (the bias factor) and σ_eff from the fixed point. The classical
//! interval, centred at θ̂, misses α ≠ 1; this one is
//!
//!   θ*_j ∈ θ̂_j/α̂ ± z·√(σ̂_eff² + r²α̂²·θ*_j²)/α̂,  r = min(se(α̂)/α̂, 1),
//!
//! θ*_j² estimated by its posterior second moment under θ*_j ~ N(0, ŝ²),
//! or where θ̂_j stands out of the noise by max(0, θ̂_j² − σ̂_eff²)/α̂² (the
//! same for a contrast ⟨a, θ*⟩): the error of α̂, shared by the
//! coordinates of one fit, enters through (α − α̂)θ*_j and is carried into
//! the width by the delta method, its relative size capped at 1
//! ([`MAX_RELATIVE_ERROR`]). The nuisances come from what the
//! release makes public ([`nuisance`]): for logistic, ‖θ̂‖²/d (free, and
//! the label sum, released to check the no-intercept model); for
//! Huber, two residual statistics released by the Gaussian mechanism and
//! charged in the same certified ledger as θ̂ ([`release`]). With an
//! intercept ([`Spec::intercept`], logistic's default) the teacher's is a
//! second unknown, pinned by the released mean label ([`nuisance`]), and
//! labels off balance are served rather than refused.
//!
//! # References
//! - Chaudhuri, Monteleoni, Sarwate (2011), *Differentially private
//!   empirical risk minimization*, JMLR (objective and output perturbation).
//! - Sur, Candès (2019), *A modern maximum-likelihood theory for
//!   high-dimensional logistic regression*, PNAS (the debiased interval).
//! - Celentano, Montanari, Wei (2023), *The Lasso with general Gaussian
//!   designs with applications to hypothesis testing*, AoS (per-coordinate
//!   normality of regularised estimators).

pub mod classical;
pub mod deblur;
mod file;
mod interval;
mod labels;
pub mod nuisance;
pub(crate) mod refusal;
pub mod release;
mod report;
pub mod rows;
mod spec;
mod stages;
pub mod standardize;
pub mod test_error;
pub mod whitening;

use crate::error::Argument;
pub use classical::Classical;
pub use classical::MIN_FEATURES;
pub use file::fit_file;
pub use interval::{Interval, MAX_RELATIVE_ERROR, SIGNAL_Z};
pub use labels::LABEL_SDS;
pub use nuisance::Nuisance;
pub use refusal::{Reason, Refusal};
pub use report::{Inference, Method, Privacy, Residuals};
pub use rows::Rows;
pub use spec::{Glm, Spec};
use stages::{Draw, draw_stream};
pub use standardize::Standardization;
pub use test_error::TestError;
pub use whitening::Whitening;

/// Fits `spec`'s model privately to the n × d rows (`rows`, row-major) and
/// labels `y`, and estimates the nuisances of its intervals; `seed` fixes
/// the noise (fresh randomness when `None`). The seed is never part of the
/// result: anyone holding it regenerates the noise and subtracts it.
///
/// The rows are copied once (into the fit's matrix, asked for with
/// `try_reserve_exact`: [`crate::ErrorKind::Memory`] when that fails);
/// [`fit_owned`] takes them without the copy.
pub fn fit(rows: &[f64], n: usize, d: usize, y: &[f64], spec: &Spec, seed: Option<u64>) -> crate::Result<Inference> {
    spec.check()?;
    fit_owned(copy_rows(rows)?, n, d, y, spec, seed)
}

/// A copy of the rows, or [`crate::ErrorKind::Memory`] when it cannot be allocated.
fn copy_rows(rows: &[f64]) -> crate::Result<Vec<f64>> {
    let mut copy = crate::error::reserve(rows.len(), "the rows' copy")?;
    copy.extend_from_slice(rows);
    Ok(copy)
}

/// [`fit`] on rows the caller hands over (row-major n × d): they become the
/// fit's matrix in place — the held-out rows moved out, the rest projected
/// onto the ball — so the fit holds no second copy of them (the Python
/// binding fills them from X in chunks: X and one copy at the peak).
pub fn fit_owned(
    rows: Vec<f64>,
    n: usize,
    d: usize,
    y: &[f64],
    spec: &Spec,
    seed: Option<u64>,
) -> crate::Result<Inference> {
    spec.check()?;
    // below the proportional regime's minimum: the classical interval, at small d/n ([`classical`])
    let classical = d < MIN_FEATURES;
    // a proportional fit's own intercept (the classical fit always has one)
    let icp = spec.intercept && !classical;
    let seed = seed.unwrap_or_else(rand::random);
    let mut split = stages::split(rows, n, d, y, spec, seed, classical)?;
    let (held, test_labels) = (split.held, std::mem::take(&mut split.test_labels));
    let f = stages::plan(spec, d, split.kept(), classical, icp)?;
    let x = stages::prepare(&f, split, seed)?;
    let (theta, estimator) = stages::estimate(&f, &x, seed)?;
    let mut releases = stages::release_texts(&f, &x, estimator);
    let (nuisance, residuals, classical) = stages::nuisances(&f, &x, &theta, seed, &mut releases)?;
    let (plan, lambda) = (f.plan, f.lambda);
    let stages::Prepared {
        test_rows,
        rows,
        constant,
        standardization,
        ..
    } = x;
    let nf = rows.fitted;
    let test_error = if held > 0 {
        let t = test_error::release(
            spec,
            theta.as_slice(),
            &test_rows,
            &test_labels,
            &mut draw_stream(seed, Draw::TestError),
        )?;
        releases.push(t.release_text());
        Some(t)
    } else {
        None
    };
    // the held-out release composes in parallel: the larger of the two
    let (lower, upper) = test_error.map_or((plan.bracket.lower, plan.bracket.upper), |t| {
        (
            plan.bracket.lower.max(t.epsilon_lower),
            plan.bracket.upper.max(t.epsilon),
        )
    });
    let inference = Inference {
        method: if classical.is_some() {
            Method::Classical
        } else {
            Method::Proportional
        },
        spec: *spec,
        params: theta.iter().take(d).copied().collect(),
        fitted: theta.iter().take(d).copied().collect(),
        intercept: if icp { constant.map(|c| c * theta[d]) } else { None },
        whitening: None,
        whitened: false,
        nuisance,
        classical,
        standardization,
        noise: plan.noise,
        residuals,
        test_error,
        privacy: Privacy {
            epsilon: upper,
            epsilon_lower: lower,
            delta: spec.delta_priv,
            neighbouring: spec.neighbouring.label(),
            releases,
            extra_ridge: plan.extra_ridge,
            lambda,
        },
        n: nf.round() as usize,
        d,
        rows,
    };
    finite(inference)
}

/// The fit, or a computation error when anything it would release or
/// report is not finite (never a NaN interval).
fn finite(f: Inference) -> crate::Result<Inference> {
    let nuisances: Vec<f64> = match (&f.nuisance, &f.classical) {
        (Some(n), _) => vec![n.alpha, n.alpha_se, n.sigma_eff, n.sigma_eff_se, n.s2],
        (None, Some(c)) => c.centre.iter().chain(c.covariance.iter()).copied().collect(),
        (None, None) => vec![],
    };
    let bad = [
        ("θ̂", f.params.iter().copied().find(|v| !v.is_finite())),
        ("the nuisances", nuisances.into_iter().find(|v| !v.is_finite())),
        (
            "the standard errors",
            f.standard_errors().into_iter().find(|v| !v.is_finite()),
        ),
    ];
    match bad.iter().find(|(_, v)| v.is_some()) {
        Some((what, Some(v))) => Err(crate::error::Error::compute(format!(
            "{what} of the private fit came out {v} (d = {}, lambda = {}, epsilon = {}, row_norm = {}): nothing is \
             released",
            f.d,
            f.spec.lambda(),
            f.spec.epsilon,
            f.spec.row_norm
        ))),
        _ => Ok(f),
    }
}

/// [`fit`] with a public feature covariance Σ (d × d, row-major; rows
/// x ~ N(0, Σ/d)): the rows are whitened, x' = Σ^{-1/2}x, the isotropic fit
/// and its intervals made there, and every interval for θ* read as a
/// contrast of it ([`whitening`]); `params` is θ̂ = Σ^{-1/2}θ̂'.
pub fn fit_whitened(
    rows: &[f64],
    n: usize,
    d: usize,
    y: &[f64],
    covariance: &[f64],
    spec: &Spec,
    seed: Option<u64>,
) -> crate::Result<Inference> {
    Whitening::new(covariance, d)?;
    check_rows(rows, n, d)?;
    fit_whitened_owned(copy_rows(rows)?, n, d, y, covariance, spec, seed)
}

/// [`fit_whitened`] on rows the caller hands over: whitened in place, then
/// [`fit_owned`] (no second copy of the rows).
pub fn fit_whitened_owned(
    mut rows: Vec<f64>,
    n: usize,
    d: usize,
    y: &[f64],
    covariance: &[f64],
    spec: &Spec,
    seed: Option<u64>,
) -> crate::Result<Inference> {
    let w = Whitening::new(covariance, d)?;
    check_rows(&rows, n, d)?;
    w.whiten(&mut rows, d);
    let mut f = fit_owned(rows, n, d, y, spec, seed)?;
    f.params = w.apply(&f.fitted);
    f.whitening = Some(w);
    f.whitened = true;
    Ok(f)
}

/// n × d values, all finite.
fn check_rows(rows: &[f64], n: usize, d: usize) -> Result<(), Argument> {
    if rows.len() != n * d {
        return Err(Argument::new(
            "X",
            format!(" has {} values; {n} rows of {d} features have {}", rows.len(), n * d),
        ));
    }
    stages::finite_rows(rows, d)
}
