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
/// drawn in X's row order (x₁₁, x₁₂, …, x₁d, x₂₁, …), straight into the
/// stored layout.
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
    /// The coordinates of `cov` at dimension `d`, the atoms' counts by
    /// systematic allocation at `offset` ([`Covariance::counts`]).
    ///
    /// ```
    /// use propdp_core::covariance::Covariance;
    /// let c = Covariance::from_columns(&[4.0, 1.0], &[0.5, 0.5], &[1.0, 1.0], "c").unwrap().unwrap();
    /// let k = propdp_sim::data::Coordinates::new(&c, 4, 0.0);
    /// assert_eq!(k.feature_sd, vec![1.6f64.sqrt(), 1.6f64.sqrt(), 0.4f64.sqrt(), 0.4f64.sqrt()]);
    /// ```
    pub fn new(cov: &Covariance, d: usize, offset: f64) -> Coordinates {
        let (mut feature_sd, mut teacher_sd) = (Vec::with_capacity(d), Vec::with_capacity(d));
        for (a, k) in cov.atoms().iter().zip(cov.counts(d, offset)) {
            feature_sd.extend(std::iter::repeat_n(a.eigenvalue.sqrt(), k));
            teacher_sd.extend(std::iter::repeat_n(a.teacher.sqrt(), k));
        }
        Coordinates { feature_sd, teacher_sd }
    }

    /// A repetition's coordinates: when some count d·w_k is fractional, the
    /// allocation's offset is drawn uniformly from `rng` (so the realised
    /// spectrum is the given one in expectation over repetitions); otherwise
    /// nothing is drawn.
    pub fn draw<R: Rng>(cov: &Covariance, d: usize, rng: &mut R) -> Coordinates {
        let offset = if cov.has_fractional_counts(d) {
            rng.random::<f64>()
        } else {
            0.0
        };
        Coordinates::new(cov, d, offset)
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
/// Each row is drawn, scaled and projected while it is in cache, into a
/// buffer given back by [`recycle`] where one is spare.
pub fn draw_design_in<R: Rng>(
    n: usize,
    d: usize,
    design: Design,
    coords: Option<&Coordinates>,
    rng: &mut R,
) -> DMatrix<f64> {
    let sd = 1.0 / (d as f64).sqrt();
    let mut xt = spare_buffer(n * d);
    for row in xt.chunks_exact_mut(d) {
        match design {
            Design::Rademacher => row
                .iter_mut()
                .for_each(|x| *x = if rng.random::<bool>() { sd } else { -sd }),
            Design::Gaussian | Design::GaussianProjected => row.iter_mut().for_each(|x| *x = sd * normal(rng)),
        }
        if let Some(c) = coords {
            row.iter_mut().zip(&c.feature_sd).for_each(|(x, s)| *x *= s);
        }
        if design == Design::GaussianProjected {
            let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 1.0 {
                row.iter_mut().for_each(|x| *x /= norm);
            }
        }
    }
    DMatrix::from_vec(d, n, xt)
}

/// Most buffers a thread keeps for reuse (a repetition's training and test
/// designs).
const SPARE_BUFFERS: usize = 2;

thread_local! {
    /// Storage of designs a repetition is done with, for the next
    /// repetition on this thread: a fresh n × d matrix costs a page fault
    /// per 4 KiB, as much as drawing it.
    static SPARE: std::cell::RefCell<Vec<Vec<f64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A buffer of `len` values (contents unspecified), the smallest spare one
/// that holds them if any.
fn spare_buffer(len: usize) -> Vec<f64> {
    let spare = SPARE.with_borrow_mut(|spare| {
        let best = (0..spare.len())
            .filter(|&i| spare[i].capacity() >= len)
            .min_by_key(|&i| spare[i].capacity())?;
        Some(spare.swap_remove(best))
    });
    match spare {
        Some(mut v) => {
            v.resize(len, 0.0);
            v
        }
        None => vec![0.0; len],
    }
}

/// Gives a design's storage back for reuse by later draws on this thread
/// (the two largest are kept).
pub fn recycle(m: DMatrix<f64>) {
    let v: Vec<f64> = m.data.into();
    SPARE.with_borrow_mut(|spare| {
        spare.push(v);
        if spare.len() > SPARE_BUFFERS {
            let smallest = (0..spare.len())
                .min_by_key(|&i| spare[i].capacity())
                .expect("not empty");
            spare.swap_remove(smallest);
        }
    });
}

/// Frees the spare buffers of every thread of rayon's global pool (and of
/// the calling thread): called when a point's repetitions are done, so a
/// long-lived process does not hold the largest designs it drew.
pub fn release_spare_buffers() {
    SPARE.with_borrow_mut(Vec::clear);
    rayon::broadcast(|_| SPARE.with_borrow_mut(Vec::clear));
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
    draw_labels_shifted(model, nu, 0.0, rng)
}

/// [`draw_labels`] of a teacher with intercept b*: its fields are ν + b*
/// (b* = 0: [`draw_labels`] exactly).
pub fn draw_labels_shifted<R: Rng>(model: &Model, nu: &DVector<f64>, b_star: f64, rng: &mut R) -> DVector<f64> {
    let field = |i: usize| if b_star == 0.0 { nu[i] } else { nu[i] + b_star };
    DVector::from_fn(nu.len(), |i, _| match model {
        Model::Huber { noise, .. } | Model::LeastSquares { noise } => field(i) + draw_noise(noise, rng),
        Model::Logistic => {
            let p = 1.0 / (1.0 + (-field(i)).exp());
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
    draw_dataset_shifted(model, n, d, s2, 0.0, design, prior, coords, rng)
}

/// [`draw_dataset_in`] of a teacher with intercept b* ([`draw_labels_shifted`]).
#[allow(clippy::too_many_arguments)]
pub fn draw_dataset_shifted<R: Rng>(
    model: &Model,
    n: usize,
    d: usize,
    s2: f64,
    b_star: f64,
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
    let y = draw_labels_shifted(model, &xt.tr_mul(&theta_star), b_star, rng);
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

    /// The row-by-row design holds the draws of X filled row by row, for
    /// every design, with and without a covariance, from fresh and from
    /// recycled (larger and smaller) buffers: exactly, and for the projected
    /// design up to the rounding of the row norms.
    #[test]
    fn design_draws_are_in_row_order_whatever_the_buffer() {
        let cov = Covariance::from_columns(&[4.0, 1.0], &[0.5, 0.5], &[1.0, 1.0], "c")
            .unwrap()
            .unwrap();
        for design in [Design::Gaussian, Design::Rademacher, Design::GaussianProjected] {
            for (n, d) in [(7, 6), (40, 34), (3, 70), (40, 34)] {
                let coords = Coordinates::new(&cov, d, 0.0);
                for c in [None, Some(&coords)] {
                    let xt = draw_design_in(n, d, design, c, &mut stream(5, &[n as u64, d as u64]));
                    let rng = &mut stream(5, &[n as u64, d as u64]);
                    let sd = 1.0 / (d as f64).sqrt();
                    let mut x = DMatrix::from_row_iterator(
                        n,
                        d,
                        (0..n * d).map(|_| match design {
                            Design::Rademacher => {
                                if rng.random::<bool>() {
                                    sd
                                } else {
                                    -sd
                                }
                            }
                            _ => sd * normal(rng),
                        }),
                    );
                    for mut row in x.row_iter_mut() {
                        if let Some(c) = c {
                            row.iter_mut().zip(&c.feature_sd).for_each(|(x, s)| *x *= s);
                        }
                        let norm = row.norm();
                        if design == Design::GaussianProjected && norm > 1.0 {
                            row /= norm;
                        }
                    }
                    let gap = (&xt - x.transpose()).amax();
                    let allowed = if design == Design::GaussianProjected {
                        1e-15
                    } else {
                        0.0
                    };
                    assert!(gap <= allowed, "{design:?} n={n} d={d}: entries differ by {gap}");
                    recycle(xt);
                    assert!(SPARE.with_borrow(|s| !s.is_empty() && s.len() <= SPARE_BUFFERS));
                }
            }
        }
        release_spare_buffers();
        assert!(SPARE.with_borrow(Vec::is_empty));
    }
}
