//! Synthetic data of docs/theory.md §1: designs, priors, noise laws and labels.

use nalgebra::{DMatrix, DVector};
use propdp_core::{Design, Model, NoiseLaw, Prior};
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1, StandardNormal, StudentT};

/// One training set.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Rows xᵢ (n × d).
    pub x: DMatrix<f64>,
    /// Labels yᵢ.
    pub y: DVector<f64>,
    /// The ground truth θ*.
    pub theta_star: DVector<f64>,
}

fn normal<R: Rng>(rng: &mut R) -> f64 {
    rng.sample(StandardNormal)
}

/// An n×d design matrix.
pub fn draw_design<R: Rng>(n: usize, d: usize, design: Design, rng: &mut R) -> DMatrix<f64> {
    let sd = 1.0 / (d as f64).sqrt();
    let mut x = match design {
        Design::Rademacher => DMatrix::from_fn(n, d, |_, _| if rng.random::<bool>() { sd } else { -sd }),
        Design::Gaussian | Design::GaussianProjected => DMatrix::from_fn(n, d, |_, _| sd * normal(rng)),
    };
    if design == Design::GaussianProjected {
        for mut row in x.row_iter_mut() {
            let norm = row.norm();
            if norm > 1.0 {
                row /= norm;
            }
        }
    }
    x
}

/// θ* with d coordinates from `prior` scaled to E(Θ²) = s².
pub fn draw_theta<R: Rng>(d: usize, s2: f64, prior: Prior, rng: &mut R) -> DVector<f64> {
    let s = s2.sqrt();
    DVector::from_fn(d, |_, _| match prior {
        Prior::Gaussian => s * normal(rng),
        Prior::TwoPoint => {
            if rng.random::<bool>() {
                s
            } else {
                -s
            }
        }
        Prior::Sparse { p } => {
            if rng.random::<f64>() < p {
                s / p.sqrt() * normal(rng)
            } else {
                0.0
            }
        }
    })
}

/// One draw of the regression noise ε.
pub fn draw_noise<R: Rng>(law: &NoiseLaw, rng: &mut R) -> f64 {
    match *law {
        NoiseLaw::Gaussian { sd } => sd * normal(rng),
        NoiseLaw::StudentT { dof, scale } => scale * StudentT::new(dof).expect("dof validated > 0").sample(rng),
        NoiseLaw::Laplace { scale } => {
            let e: f64 = rng.sample(Exp1);
            if rng.random::<bool>() { scale * e } else { -scale * e }
        }
        NoiseLaw::Contaminated { sd, p, outlier_sd } => {
            let s = if rng.random::<f64>() < p { outlier_sd } else { sd };
            s * normal(rng)
        }
    }
}

/// Responses for teacher fields ν = Xθ*: y = ν + ε (Huber, least squares)
/// or y = ±1 with P(+1) = sigmoid(ν) (logistic).
pub fn draw_labels<R: Rng>(model: &Model, nu: &DVector<f64>, rng: &mut R) -> DVector<f64> {
    DVector::from_fn(nu.len(), |i, _| match model {
        Model::Huber { noise, .. } | Model::LeastSquares { noise } => nu[i] + draw_noise(noise, rng),
        Model::Logistic => {
            let p = 1.0 / (1.0 + (-nu[i]).exp());
            if rng.random::<f64>() < p { 1.0 } else { -1.0 }
        }
    })
}

/// A full training set for `model`.
pub fn draw_dataset<R: Rng>(
    model: &Model,
    n: usize,
    d: usize,
    s2: f64,
    design: Design,
    prior: Prior,
    rng: &mut R,
) -> Dataset {
    let theta_star = draw_theta(d, s2, prior, rng);
    let x = draw_design(n, d, design, rng);
    let y = draw_labels(model, &(&x * &theta_star), rng);
    Dataset { x, y, theta_star }
}

/// A standard normal vector (privacy noise b).
pub fn draw_gaussian_vector<R: Rng>(d: usize, rng: &mut R) -> DVector<f64> {
    let mut v = DVector::zeros(d);
    fill_gaussian(&mut v, rng);
    v
}

/// Overwrite `v` with standard normal draws, in index order (the same
/// draws as [`draw_gaussian_vector`] of its length).
pub fn fill_gaussian<R: Rng>(v: &mut DVector<f64>, rng: &mut R) {
    for x in v.iter_mut() {
        *x = normal(rng);
    }
}
