//! Synthetic data of docs/theory.md §1: designs, priors, noise laws and labels.

use nalgebra::{DMatrix, DVector};
use propdp_core::covariance::Covariance;
use propdp_core::{Design, Model, NoiseLaw, Prior};
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1, StandardNormal, StudentT};

/// One training set.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// The design stored row by row: Xᵀ (d × n), column i is the row xᵢ, so
    /// a pass over the rows reads memory in order (see [`draw_design`]).
    pub xt: DMatrix<f64>,
    /// Labels yᵢ.
    pub y: DVector<f64>,
    /// The ground truth θ*.
    pub theta_star: DVector<f64>,
}

fn normal<R: Rng>(rng: &mut R) -> f64 {
    rng.sample(StandardNormal)
}

/// An n×d design matrix X, returned row by row as Xᵀ (d × n). Entries are
/// drawn in X's column order (x₁₁, x₂₁, …, xₙ₁, x₁₂, …), tile by tile, so
/// the draws, and thus every dataset of a seed, do not depend on the layout.
pub fn draw_design<R: Rng>(n: usize, d: usize, design: Design, rng: &mut R) -> DMatrix<f64> {
    draw_design_in(n, d, design, None, rng)
}

/// The coordinates of Σ's eigenbasis at dimension d (docs/theory.md §2.4):
/// atom by atom, [`Covariance::counts`] coordinates each, with the atom's
/// feature standard deviation √ω and teacher scale √e.
#[derive(Debug, Clone, PartialEq)]
pub struct Coordinates {
    /// √ω of every coordinate.
    pub feature_sd: Vec<f64>,
    /// √e of every coordinate.
    pub teacher_sd: Vec<f64>,
}

impl Coordinates {
    /// The coordinates of `cov` at dimension `d`.
    ///
    /// ```
    /// use propdp_core::covariance::Covariance;
    /// let c = Covariance::from_columns(&[4.0, 1.0], &[0.5, 0.5], &[1.0, 1.0], "c").unwrap().unwrap();
    /// let k = propdp_sim::data::Coordinates::new(&c, 4);
    /// assert_eq!(k.feature_sd, vec![1.6f64.sqrt(), 1.6f64.sqrt(), 0.4f64.sqrt(), 0.4f64.sqrt()]);
    /// ```
    pub fn new(cov: &Covariance, d: usize) -> Coordinates {
        let (mut feature_sd, mut teacher_sd) = (Vec::with_capacity(d), Vec::with_capacity(d));
        for (a, k) in cov.atoms().iter().zip(cov.counts(d)) {
            feature_sd.extend(std::iter::repeat_n(a.eigenvalue.sqrt(), k));
            teacher_sd.extend(std::iter::repeat_n(a.teacher.sqrt(), k));
        }
        Coordinates { feature_sd, teacher_sd }
    }

    /// (θ̂ − θ*)ᵀΣ(θ̂ − θ*)/d for an error vector θ̂ − θ*.
    pub fn pred_err2(&self, err: &DVector<f64>) -> f64 {
        let d = err.len() as f64;
        err.iter()
            .zip(&self.feature_sd)
            .map(|(e, s)| (e * s).powi(2))
            .sum::<f64>()
            / d
    }
}

/// [`draw_design`] with features of covariance Σ in its eigenbasis:
/// coordinate j of every row scaled by √ω_j before a projection (the same
/// draws as the isotropic design, so `None` is [`draw_design`] exactly).
pub fn draw_design_in<R: Rng>(
    n: usize,
    d: usize,
    design: Design,
    coords: Option<&Coordinates>,
    rng: &mut R,
) -> DMatrix<f64> {
    let sd = 1.0 / (d as f64).sqrt();
    let mut draw = || match design {
        Design::Rademacher => {
            if rng.random::<bool>() {
                sd
            } else {
                -sd
            }
        }
        Design::Gaussian | Design::GaussianProjected => sd * normal(rng),
    };
    // TILE columns of X drawn into a buffer, then written into the rows
    const TILE: usize = 32;
    let mut xt = vec![0.0; n * d];
    let mut tile = vec![0.0; TILE * n];
    for j0 in (0..d).step_by(TILE) {
        let width = TILE.min(d - j0);
        for v in tile[..width * n].iter_mut() {
            *v = draw();
        }
        for (i, row) in xt.chunks_exact_mut(d).enumerate() {
            for (jj, x) in row[j0..j0 + width].iter_mut().enumerate() {
                *x = tile[jj * n + i];
            }
        }
    }
    let mut xt = DMatrix::from_vec(d, n, xt);
    if let Some(c) = coords {
        for mut row in xt.column_iter_mut() {
            row.iter_mut().zip(&c.feature_sd).for_each(|(x, s)| *x *= s);
        }
    }
    if design == Design::GaussianProjected {
        for mut row in xt.column_iter_mut() {
            let norm = row.norm();
            if norm > 1.0 {
                row /= norm;
            }
        }
    }
    xt
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
    draw_dataset_in(model, n, d, s2, design, prior, None, rng)
}

/// [`draw_dataset`] with features of covariance Σ and a teacher of energy
/// s²·e_j in coordinate j of its eigenbasis (`None`: isotropic, the same
/// draws as [`draw_dataset`]).
#[allow(clippy::too_many_arguments)]
pub fn draw_dataset_in<R: Rng>(
    model: &Model,
    n: usize,
    d: usize,
    s2: f64,
    design: Design,
    prior: Prior,
    coords: Option<&Coordinates>,
    rng: &mut R,
) -> Dataset {
    let mut theta_star = draw_theta(d, s2, prior, rng);
    if let Some(c) = coords {
        theta_star.iter_mut().zip(&c.teacher_sd).for_each(|(t, s)| *t *= s);
    }
    let xt = draw_design_in(n, d, design, coords, rng);
    let y = draw_labels(model, &xt.tr_mul(&theta_star), rng);
    Dataset { xt, y, theta_star }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    /// The row-by-row design holds the draws of X filled column by column
    /// (nalgebra's `from_fn` order), for every design and sizes that are and
    /// are not multiples of the tile: exactly, and for the projected design up
    /// to the rounding of the row norms (summed in another order).
    #[test]
    fn design_draws_do_not_depend_on_the_layout() {
        for design in [Design::Gaussian, Design::Rademacher, Design::GaussianProjected] {
            for (n, d) in [(7, 5), (40, 33), (3, 70)] {
                let xt = draw_design(n, d, design, &mut stream(5, &[n as u64, d as u64]));
                let rng = &mut stream(5, &[n as u64, d as u64]);
                let sd = 1.0 / (d as f64).sqrt();
                let mut x = DMatrix::from_fn(n, d, |_, _| match design {
                    Design::Rademacher => {
                        if rng.random::<bool>() {
                            sd
                        } else {
                            -sd
                        }
                    }
                    _ => sd * normal(rng),
                });
                if design == Design::GaussianProjected {
                    for mut row in x.row_iter_mut() {
                        let norm = row.norm();
                        if norm > 1.0 {
                            row /= norm;
                        }
                    }
                }
                let gap = (&xt - x.transpose()).amax();
                let allowed = if design == Design::GaussianProjected {
                    1e-15
                } else {
                    0.0
                };
                assert!(gap <= allowed, "{design:?} n={n} d={d}: entries differ by {gap}");
            }
        }
    }
}
