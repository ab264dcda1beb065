//! Metric names of docs/theory.md §1, shared verbatim by theory, simulation and plots.

use std::collections::BTreeMap;

/// ‖θ̂ − θ*‖²/d.
pub const EST_ERR2: &str = "est_err2";
/// (θ̂ − θ*)ᵀΣ(θ̂ − θ*)/d: the error in prediction space (= est_err2 for
/// isotropic features; docs/theory.md §2.4).
pub const PRED_ERR2: &str = "pred_err2";
/// √est_err2.
pub const EST_ERR: &str = "est_err";
/// θ̂ᵀθ*/d.
pub const OVERLAP: &str = "overlap";
/// ‖θ̂‖²/d.
pub const NORM2: &str = "norm2";
/// θ̂ᵀθ*/‖θ*‖².
pub const BIAS_FACTOR: &str = "bias_factor";
/// θ̂ᵀb/d, b the privacy noise vector.
pub const NOISE_CORR: &str = "noise_corr";
/// Huber: (1/n) Σ clip(yᵢ − xᵢᵀθ̂, −M, M)².
pub const TRAIN_RESID_TRUNC: &str = "train_resid_trunc";
/// Huber: E(y − xᵀθ̂)² on a fresh sample.
pub const TEST_MSE: &str = "test_mse";
/// Logistic: P(sign(xᵀθ̂) ≠ y) on a fresh sample.
pub const TEST_CLASS_ERR: &str = "test_class_err";
/// Logistic: E log(1 + exp(−y xᵀθ̂)) on a fresh sample.
pub const TEST_LOGLOSS: &str = "test_logloss";
/// Logistic: (1/n) Σ ℓᵢ(θ̂).
pub const TRAIN_LOGLOSS: &str = "train_logloss";

/// DP-GD: (1/n) Σ ℓ((Xθ_t)ᵢ; yᵢ) of the descended loss.
pub const TRAIN_LOSS: &str = "train_loss";

/// DP-GD/DP-SGD with an intercept: the learned intercept's field β = b/√d
/// (the constant feature's value times its coefficient), on the scale of
/// the teacher's b* (docs/theory.md §3.5); 0 when none is learned.
pub const FITTED_INTERCEPT: &str = "fitted_intercept";

/// One test sample's contribution to `test_class_err`: 1 for a wrong sign of
/// the fitted field, 0 for a right one, and ½ for a tie (a field of exactly
/// 0, e.g. at θ̂ = 0) — a fair coin, as the theory counts it: P(sign(ω) ≠ y)
/// with ties broken at random.
///
/// ```
/// use propdp_core::metrics::sign_error;
/// assert_eq!((sign_error(1.0, -0.3), sign_error(-1.0, -0.3), sign_error(1.0, 0.0)), (1.0, 0.0, 0.5));
/// ```
pub fn sign_error(y: f64, fit: f64) -> f64 {
    match (y * fit).partial_cmp(&0.0) {
        Some(std::cmp::Ordering::Less) => 1.0,
        Some(std::cmp::Ordering::Equal) => 0.5,
        _ => 0.0,
    }
}

/// Metric values keyed by name (ordered, so output is stable).
pub type Metrics = BTreeMap<String, f64>;

/// Human-readable meaning of a metric, for tables and axis labels.
pub fn describe(name: &str) -> Option<&'static str> {
    Some(match name {
        EST_ERR2 => "‖θ̂−θ*‖²/d",
        EST_ERR => "‖θ̂−θ*‖/√d",
        PRED_ERR2 => "(θ̂−θ*)ᵀΣ(θ̂−θ*)/d",
        OVERLAP => "θ̂ᵀθ*/d",
        NORM2 => "‖θ̂‖²/d",
        BIAS_FACTOR => "θ̂ᵀθ*/‖θ*‖²",
        NOISE_CORR => "θ̂ᵀb/d",
        TRAIN_RESID_TRUNC => "(1/n)Σ clip(yᵢ−xᵢᵀθ̂,±M)²",
        TEST_MSE => "E(y−xᵀθ̂)²",
        TEST_CLASS_ERR => "P(sign(xᵀθ̂)≠y)",
        TEST_LOGLOSS => "E log(1+e^{−y xᵀθ̂})",
        TRAIN_LOGLOSS => "(1/n)Σ log(1+e^{−yᵢxᵢᵀθ̂})",
        TRAIN_LOSS => "(1/n)Σ ℓ(xᵢᵀθ_t; yᵢ)",
        FITTED_INTERCEPT => "β = b/√d, the fitted intercept",
        _ => return None,
    })
}

/// Mean and standard error (sample sd with k − 1, over √k) of the
/// per-repetition values of a metric: the statistics of a simulation record.
///
/// ```
/// let (mean, se) = propdp_core::metrics::mean_stderr(&[1.0, 2.0, 3.0]);
/// assert_eq!(mean, 2.0);
/// assert!((se - (1.0f64 / 3.0).sqrt()).abs() < 1e-15);
/// ```
pub fn mean_stderr(values: &[f64]) -> (f64, f64) {
    let k = values.len() as f64;
    let mu = values.iter().sum::<f64>() / k;
    let var = values.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / (k - 1.0);
    (mu, (var / k).sqrt())
}

/// The metrics where lower is better — errors and losses — which `propdp
/// tune` may minimise.
pub const MINIMISED: [&str; 9] = [
    EST_ERR2,
    PRED_ERR2,
    EST_ERR,
    TEST_MSE,
    TEST_CLASS_ERR,
    TEST_LOGLOSS,
    TRAIN_RESID_TRUNC,
    TRAIN_LOGLOSS,
    TRAIN_LOSS,
];

/// The metrics that compare θ̂ with a ground truth θ*: a simulation on the
/// data's own labels (`[simulation] data = { …, labels = "y" }`) has none
/// and records none of them.
///
/// ```
/// use propdp_core::metrics::{NEED_TEACHER, NORM2, OVERLAP};
/// assert!(NEED_TEACHER.contains(&OVERLAP) && !NEED_TEACHER.contains(&NORM2));
/// ```
pub const NEED_TEACHER: [&str; 5] = [EST_ERR2, EST_ERR, PRED_ERR2, OVERLAP, BIAS_FACTOR];

/// The allowed range of a metric's value, when `value` is outside it
/// (squared errors, norms and losses are ≥ 0, a classification error is in
/// [0, 1]); `None` when it is inside or the metric has no range.
///
/// ```
/// use propdp_core::metrics::out_of_range;
/// assert_eq!(out_of_range("est_err2", -5.0), Some("[0, ∞)"));
/// assert_eq!(out_of_range("test_class_err", 0.3), None);
/// assert_eq!(out_of_range("overlap", -5.0), None);
/// ```
pub fn out_of_range(name: &str, value: f64) -> Option<&'static str> {
    match name {
        EST_ERR2 | PRED_ERR2 | EST_ERR | NORM2 | TRAIN_RESID_TRUNC | TEST_MSE | TEST_LOGLOSS | TRAIN_LOGLOSS
        | TRAIN_LOSS
            if value.is_nan() || value < 0.0 =>
        {
            Some("[0, ∞)")
        }
        TEST_CLASS_ERR if !(0.0..=1.0).contains(&value) => Some("[0, 1]"),
        _ => None,
    }
}

/// [`offered`] for a point of either data model: with two clusters
/// (docs/theory.md §3.6) θ* sets the class mean, not a target of the fit,
/// so no error against it (est_err2, pred_err2); `overlap` is θ̂ᵀθ*/d.
///
/// ```
/// use propdp_core::{metrics::offered_for, AlgorithmKind, DataModel, ModelKind};
/// let mix = offered_for(ModelKind::Logistic, AlgorithmKind::Dpsgd, DataModel::TwoCluster);
/// assert!(mix.contains(&"test_class_err") && !mix.contains(&"est_err2"));
/// ```
pub fn offered_for(
    model: crate::ModelKind,
    algorithm: crate::AlgorithmKind,
    data: crate::DataModel,
) -> &'static [&'static str] {
    match data {
        crate::DataModel::Teacher => offered(model, algorithm),
        crate::DataModel::TwoCluster => &[NORM2, OVERLAP, TEST_CLASS_ERR, TRAIN_LOSS],
    }
}

/// The metrics the theory predicts (and the simulation measures) for a model
/// and algorithm: what `[plot] metrics` and `tune.metric` may name.
///
/// ```
/// use propdp_core::{metrics::offered, AlgorithmKind, ModelKind};
/// assert!(offered(ModelKind::Huber, AlgorithmKind::Objective).contains(&"test_mse"));
/// assert!(offered(ModelKind::Huber, AlgorithmKind::Dpsgd).contains(&"test_mse"));
/// assert!(!offered(ModelKind::Logistic, AlgorithmKind::Dpsgd).contains(&"test_mse"));
/// ```
pub fn offered(model: crate::ModelKind, algorithm: crate::AlgorithmKind) -> &'static [&'static str] {
    use crate::ModelKind;
    match (model, algorithm.is_iterative()) {
        (ModelKind::Huber | ModelKind::LeastSquares, true) => {
            &[EST_ERR2, NORM2, OVERLAP, PRED_ERR2, TEST_MSE, TRAIN_LOSS]
        }
        // objective and output perturbation refuse least squares (Point::check)
        (ModelKind::LeastSquares, false) => &[],
        (ModelKind::Logistic, true) => &[EST_ERR2, NORM2, OVERLAP, PRED_ERR2, TEST_CLASS_ERR, TRAIN_LOSS],
        (ModelKind::Huber, false) => &[
            BIAS_FACTOR,
            EST_ERR,
            EST_ERR2,
            NOISE_CORR,
            NORM2,
            OVERLAP,
            PRED_ERR2,
            TEST_MSE,
            TRAIN_RESID_TRUNC,
        ],
        (ModelKind::Logistic, false) => &[
            BIAS_FACTOR,
            EST_ERR,
            EST_ERR2,
            NOISE_CORR,
            NORM2,
            OVERLAP,
            PRED_ERR2,
            TEST_CLASS_ERR,
            TEST_LOGLOSS,
            TRAIN_LOGLOSS,
        ],
    }
}
