//! The two-cluster data model (docs/theory.md §3.6): labels y = ±1 with
//! P(y = +1) = p, rows centred as standardised data are,
//! x = (y − (2p − 1))·μ + g with g ~ N(0, Σ_w/d), Σ_w = κ²Σ
//! (Σ = diag(ω) in its eigenbasis, I without a covariance) independent of
//! y, and the class mean μ = Σ_wθ*/d for the ground truth θ* of
//! [`crate::data::draw_theta`] (energy s²·e_k per eigen-direction). DP-GD
//! and DP-SGD descend the standard logistic loss on it exactly as on the
//! teacher's data ([`crate::gd::Descent`]); the metrics of an iterate are
//! exact: a fresh row's field is xᵀθ + β = (y − (2p − 1))·m + β + √c·ξ with m = μᵀθ and
//! c = θᵀΣ_wθ/d ([`propdp_core::population::two_cluster_class_error`]).
//!
//! # References
//! - Mignacco, Krzakala, Urbani, Zdeborová (2020), *Dynamical mean-field
//!   theory for stochastic gradient descent in Gaussian mixture
//!   classification*.
//! - Loureiro, Sicuro, Gerbelot, Pacco, Krzakala, Zdeborová (2021),
//!   *Learning Gaussian mixtures with generalised linear models: precise
//!   asymptotics in high dimensions*.

use nalgebra::DVector;
use propdp_core::metrics::{self, Metrics};
use propdp_core::population::two_cluster_class_error;
use propdp_core::problem::TwoCluster;
use propdp_core::{Design, Prior};
use rand::{Rng, RngExt};

use crate::data::{self, Coordinates, Dataset};

/// A two-cluster training set and its class mean μ.
#[derive(Debug, Clone)]
pub struct Clusters {
    /// Rows xᵢ = (yᵢ − (2p − 1))μ + gᵢ (as Xᵀ, d × n), labels yᵢ = ±1 and θ*.
    pub data: Dataset,
    /// μ = Σ_wθ*/d.
    pub mu: DVector<f64>,
    /// The diagonal of Σ_w = κ²Σ in the coordinates' basis.
    pub within: Vec<f64>,
}

/// Draw n rows of dimension d: θ* (as [`data::draw_dataset_in`] draws it),
/// then the n labels, then the Gaussian parts g (the isotropic or Σ design
/// of [`data::draw_design_in`] times κ), then xᵢ = yᵢμ + gᵢ.
pub fn draw<R: Rng>(
    mix: &TwoCluster,
    n: usize,
    d: usize,
    s2: f64,
    prior: Prior,
    coords: Option<&Coordinates>,
    rng: &mut R,
) -> Clusters {
    let mut theta_star = data::draw_theta(d, s2, prior, rng);
    if let Some(c) = coords {
        theta_star.iter_mut().zip(&c.teacher_sd).for_each(|(t, s)| *t *= s);
    }
    let y = DVector::from_fn(n, |_, _| if rng.random::<f64>() < mix.balance { 1.0 } else { -1.0 });
    let within: Vec<f64> = (0..d)
        .map(|j| mix.within * coords.map_or(1.0, |c| c.feature_sd[j] * c.feature_sd[j]))
        .collect();
    let mu = DVector::from_fn(d, |j, _| within[j] * theta_star[j] / d as f64);
    // centred rows, as standardised data are: x = (y − (2p − 1))·μ + g
    let centre = 2.0 * mix.balance - 1.0;
    let mut xt = data::draw_design_in(n, d, Design::Gaussian, coords, rng);
    let kappa = mix.within.sqrt();
    for (i, mut row) in xt.column_iter_mut().enumerate() {
        for (x, m) in row.iter_mut().zip(mu.iter()) {
            *x = kappa * *x + (y[i] - centre) * m;
        }
    }
    Clusters {
        data: Dataset { xt, y, theta_star },
        mu,
        within,
    }
}

impl Clusters {
    /// The metrics of an iterate θ (and the learned intercept's field β,
    /// if any): test_class_err exactly from m = μᵀθ and c = θᵀΣ_wθ/d,
    /// train_loss as given, norm2 = ‖θ‖²/d, overlap = θᵀθ*/d, and
    /// fitted_intercept = β.
    pub fn metrics(&self, balance: f64, theta: &DVector<f64>, train_loss: f64, beta: Option<f64>) -> Metrics {
        let d = theta.len() as f64;
        let m = self.mu.dot(theta);
        let c = theta.iter().zip(&self.within).map(|(t, w)| w * t * t).sum::<f64>() / d;
        let mut out = Metrics::from([
            (metrics::NORM2.into(), theta.norm_squared() / d),
            (metrics::OVERLAP.into(), theta.dot(&self.data.theta_star) / d),
            (metrics::TRAIN_LOSS.into(), train_loss),
            (
                metrics::TEST_CLASS_ERR.into(),
                two_cluster_class_error(balance, m, c, beta.unwrap_or(0.0)),
            ),
        ]);
        if let Some(b) = beta {
            out.insert(metrics::FITTED_INTERCEPT.into(), b);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    /// The exact test error of an iterate is what fresh rows of the model
    /// give: 400 000 rows drawn apart (labels, then g, then x = (y − (2p − 1))μ + g) at
    /// p = 0.75, κ² = 0.7, a two-atom covariance, an arbitrary θ and β.
    #[test]
    fn the_exact_test_error_is_that_of_fresh_rows() {
        let cov = propdp_core::covariance::Covariance::from_columns(&[3.0, 0.5], &[0.25, 0.75], &[2.0, 2.0 / 3.0], "c")
            .unwrap()
            .unwrap();
        let d = 200;
        let rng = &mut stream(9, &[1]);
        let coords = Coordinates::new(&cov, d, 0.0);
        let mix = TwoCluster {
            balance: 0.75,
            within: 0.7,
        };
        let train = draw(&mix, 10, d, 3.0, Prior::Gaussian, Some(&coords), rng);
        // an iterate partly along θ*, partly noise
        let theta = DVector::from_fn(d, |j, _| {
            0.3 * train.data.theta_star[j] + rng.sample::<f64, _>(rand_distr::StandardNormal)
        });
        let beta = -0.2;
        let exact = train.metrics(mix.balance, &theta, 0.0, Some(beta))[metrics::TEST_CLASS_ERR];
        let rows = 400_000;
        let mut wrong = 0.0;
        for _ in 0..rows {
            let y = if rng.random::<f64>() < mix.balance { 1.0 } else { -1.0 };
            let fit: f64 = (0..d)
                .map(|j| {
                    let g: f64 = rng.sample(rand_distr::StandardNormal);
                    let x = (y - (2.0 * mix.balance - 1.0)) * train.mu[j] + (train.within[j] / d as f64).sqrt() * g;
                    x * theta[j]
                })
                .sum::<f64>()
                + beta;
            wrong += metrics::sign_error(y, fit);
        }
        let (est, se) = (wrong / rows as f64, (exact * (1.0 - exact) / rows as f64).sqrt());
        assert!(
            (est - exact).abs() < 4.0 * se,
            "fresh rows {est} vs exact {exact} (se {se})"
        );
        assert!(exact > 0.05 && exact < 0.45, "{exact}");
    }
}
