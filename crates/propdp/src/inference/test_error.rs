//! The test error of a private fit from rows held out of it: an interval
//! for the population error E e(θ̂) of the released θ̂ — what a fresh row
//! would show — from a private mean of the per-row error on the held-out
//! rows.
//!
//! Each row is held out independently with probability `holdout`, by a
//! seeded stream read in row order (independent of the data), and θ̂ is fitted on the
//! rest. Per held-out row the error is e = 1{sign(xᵀθ̂) ≠ y} (logistic;
//! a tie counts ½) or e = min((y − xᵀθ̂)², B) (Huber; B = `test_clip`, the
//! squared error clipped so that a row's influence is bounded). They are
//! released as centred sums Σ(eᵢ − B/2) (B = 1 for the 0–1 error) and, for
//! Huber, Σ(eᵢ² − B²/2), by the Gaussian mechanism: add/remove
//! sensitivities B/2 and B²/2, replace-one B and B² — the factor two the
//! accountant's replace-one pair assumes. The released mean μ̂ and second
//! moment give v̂, the variance of one row's error (logistic: μ̂(1 − μ̂)),
//! and the interval is
//!
//!   E e(θ̂) ∈ μ̂ ± z·√(v̂/m + s²),
//!
//! s the standard deviation of μ̂'s privacy noise, m the held-out rows:
//! given θ̂ the held-out rows are an i.i.d. sample independent of it, so μ̂
//! is unbiased for the population error of this θ̂ and the level is the
//! central limit theorem's.
//!
//! Privacy: the held-out rows are disjoint from the fitted ones and each
//! row's side is drawn independently of the data, so the two releases
//! compose in parallel even though the second reads θ̂ — a changed fitted
//! row affects the second release only through θ̂ (post-processing), a
//! changed held-out row only the second release — and the ε of everything
//! is the larger of the two. The test release is calibrated to the whole
//! budget on its own.
//!
//! # References
//! - McSherry (2009), *Privacy integrated queries*, SIGMOD (parallel
//!   composition over disjoint parts of the data).
//! - Dwork, Roth (2014), *The algorithmic foundations of differential
//!   privacy*, §3.5 and Appendix A (the Gaussian mechanism).

use propdp_core::accountant::Neighbouring;
use propdp_core::accountant::bracket::{BracketSettings, EpsilonBracket};
use propdp_core::accountant::epsilon;
use propdp_core::accountant::events::{Event, Segment};
use rand::RngExt;
use serde::Serialize;

use super::interval::{Interval, quantile};
use super::{Glm, Spec};
use crate::error::Argument;

/// The fewest held-out rows a test error interval is given for (the
/// interval is the central limit theorem's).
pub const MIN_HELD_OUT: usize = 50;

/// The Huber test error's clip B when not given: (3M)², beyond which a
/// residual is three Huber thresholds out.
pub fn default_clip(m: f64) -> f64 {
    9.0 * m * m
}

/// The per-row error whose population mean the interval covers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "metric")]
pub enum Metric {
    /// 1{sign(xᵀθ̂) ≠ y} (logistic).
    ClassError,
    /// min((y − xᵀθ̂)², clip) (Huber).
    ClippedSquaredError {
        /// B.
        clip: f64,
    },
}

impl Metric {
    /// The bound B of one row's error.
    fn bound(&self) -> f64 {
        match *self {
            Metric::ClassError => 1.0,
            Metric::ClippedSquaredError { clip } => clip,
        }
    }

    /// The metric's name: "class_error" or "clipped_squared_error".
    pub fn name(&self) -> &'static str {
        match self {
            Metric::ClassError => "class_error",
            Metric::ClippedSquaredError { .. } => "clipped_squared_error",
        }
    }

    fn label(&self) -> String {
        match *self {
            Metric::ClassError => "the misclassification rate".into(),
            Metric::ClippedSquaredError { clip } => format!("the squared error clipped at {clip}"),
        }
    }
}

/// The released test error of a fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TestError {
    /// What was measured.
    pub metric: Metric,
    /// The held-out rows m as released: exact under replace-one (public
    /// there), the Gaussian mechanism's m̃ (rounded) under add/remove.
    pub rows: usize,
    /// The standard deviation of `rows`' release noise (0: public).
    pub rows_sd: f64,
    /// The released mean μ̂.
    pub mean: f64,
    /// v̂, the variance of one row's error.
    pub variance: f64,
    /// The standard deviation of μ̂'s privacy noise.
    pub noise_sd: f64,
    /// The noise multiplier of the release (over the add/remove sensitivity).
    pub noise_multiplier: f64,
    /// What this release alone certifies at the fit's δ.
    pub epsilon: f64,
    /// See `epsilon`: the bracket's lower end.
    pub epsilon_lower: f64,
}

impl TestError {
    /// The (1 − alpha) interval of the population error of θ̂, clipped to
    /// the error's range [0, B].
    pub fn interval(&self, alpha: f64) -> Result<Interval, Argument> {
        let z = quantile(alpha)?;
        let se = (self.variance / self.rows as f64 + self.noise_sd * self.noise_sd).sqrt();
        let b = self.metric.bound();
        Ok(Interval {
            estimate: self.mean,
            se,
            lower: (self.mean - z * se).max(0.0),
            upper: (self.mean + z * se).min(b),
        })
    }

    /// The ledger's line for this release.
    pub(super) fn release_text(&self) -> String {
        let rows = if self.rows_sd > 0.0 {
            format!("about {} held-out rows (their count released too)", self.rows)
        } else {
            format!("{} held-out rows", self.rows)
        };
        format!(
            "{} of θ̂ on {rows} (disjoint from the fitted ones: composes in parallel), by the Gaussian mechanism \
             (noise multiplier {:.3}; ε ≤ {:.4} alone)",
            self.metric.label(),
            self.noise_multiplier,
            self.epsilon
        )
    }
}

/// Which rows are held out: row i when the i-th uniform of `rng` (a
/// seeded stream of its own) is below `share`.
pub(super) fn held_out(n: usize, share: f64, rng: &mut impl rand::Rng) -> Vec<bool> {
    (0..n).map(|_| rng.random::<f64>() < share).collect()
}

/// The certified ε of `k` Gaussian releases at noise multiplier `z`.
fn bracket(spec: &Spec, z: f64, k: usize) -> Option<EpsilonBracket> {
    let segment = Segment {
        noise_multiplier: z,
        sample_rate: 1.0,
        steps: k as u64,
    };
    epsilon(
        &Event::ledger(&[segment], &[]),
        spec.delta_priv,
        spec.neighbouring,
        BracketSettings::default(),
    )
    .ok()
    .flatten()
}

/// The noise multiplier of `k` Gaussian releases within the whole budget,
/// and what it certifies.
fn calibrate(spec: &Spec, k: usize) -> Result<(f64, EpsilonBracket), Argument> {
    let unattainable = || {
        Argument::new(
            "epsilon",
            format!(
                " = {} at delta_priv = {:e} is not reachable by the test error's release: raise epsilon",
                spec.epsilon, spec.delta_priv
            ),
        )
    };
    let releases = |z: f64| Event::gaussian(z).repeated(k as u64);
    let mut z = super::release::calibrated_noise(releases, spec.neighbouring, spec.epsilon, spec.delta_priv)
        .ok_or_else(unattainable)?;
    // the closed-form calibration read back through the certified ledger: raise it until it holds
    for _ in 0..200 {
        if let Some(b) = bracket(spec, z, k).filter(|b| b.upper <= spec.epsilon) {
            return Ok((z, b));
        }
        z *= 1.001;
    }
    Err(unattainable())
}

/// The private test error of `theta` on the held-out rows (`rows`
/// row-major, m × d, labels `y` as the loss reads them), its noise drawn
/// from `rng` (a seeded stream of its own). Under add/remove the count m
/// is private too and is released beside the sums (sensitivity 1).
pub(super) fn release(
    spec: &Spec,
    theta: &[f64],
    rows: &[f64],
    y: &[f64],
    rng: &mut impl rand::Rng,
) -> Result<TestError, Argument> {
    let d = theta.len();
    let m = y.len();
    let metric = match spec.model {
        Glm::Logistic => Metric::ClassError,
        Glm::Huber { m: huber_m } => Metric::ClippedSquaredError {
            clip: spec.test_clip.unwrap_or_else(|| default_clip(huber_m)),
        },
    };
    let errors: Vec<f64> = rows
        .chunks_exact(d)
        .zip(y)
        .map(|(x, &y)| {
            let fit: f64 = x.iter().zip(theta).map(|(a, b)| a * b).sum();
            match metric {
                Metric::ClassError => {
                    if fit == 0.0 {
                        0.5
                    } else {
                        f64::from(u8::from(fit.signum() != y.signum()))
                    }
                }
                Metric::ClippedSquaredError { clip } => (y - fit).powi(2).min(clip),
            }
        })
        .collect();
    let b = metric.bound();
    let moments: usize = if metric == Metric::ClassError { 1 } else { 2 };
    let private_count = spec.neighbouring == Neighbouring::AddRemoveOne;
    let (z, certified) = calibrate(spec, moments + usize::from(private_count))?;
    let g = propdp_sim::data::draw_gaussian_vector(3, rng);
    // the held-out rows as released: m is public under replace-one (the split is drawn independently
    // of the data and n is fixed), private under add/remove
    let mf = if private_count {
        (m as f64 + z * g[2]).max(1.0)
    } else {
        m as f64
    };
    // centred sums, add/remove sensitivities B/2 and B²/2
    let first: f64 = errors.iter().map(|e| e - 0.5 * b).sum::<f64>() + z * 0.5 * b * g[0];
    let mean = first / mf + 0.5 * b;
    let variance = if moments == 1 {
        let p = mean.clamp(0.0, 1.0);
        p * (1.0 - p)
    } else {
        let second: f64 = errors.iter().map(|e| e * e - 0.5 * b * b).sum::<f64>() + z * 0.5 * b * b * g[1];
        (second / mf + 0.5 * b * b - mean * mean).clamp(0.0, 0.25 * b * b)
    };
    Ok(TestError {
        metric,
        rows: mf.round() as usize,
        rows_sd: if private_count { z } else { 0.0 },
        mean,
        variance,
        noise_sd: z * 0.5 * b / mf,
        noise_multiplier: z,
        epsilon: certified.upper,
        epsilon_lower: certified.lower,
    })
}
