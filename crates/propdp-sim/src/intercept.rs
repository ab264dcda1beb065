//! A standalone reference (docs/theory.md §3.5): DP-SGD with an intercept on
//! synthetic data whose teacher has one, written apart from the simulator
//! ([`crate::gd::Descent::run_with_intercept`], which `propdp run` uses) as
//! an independent check of the state evolution. Rows xᵢ ~ N(0, I/d) get a constant feature
//! c = 1/√d; the learner is (θ, b), its field xᵢᵀθ + c·b; per-example
//! gradients ℓ'ᵢ·(xᵢ, c) are clipped jointly to norm C, the intercept has its
//! own ridge λ_b and gets the same privacy noise ησ as every coordinate:
//!
//!   θ_{t+1} = (1 − ηλ)θ_t − η Σ_{i∈B_t} ĝᵢxᵢ + ησξ_t,
//!   b_{t+1} = (1 − ηλ_b)b_t − η Σ_{i∈B_t} ĝᵢc + ησξ′_t,
//!   ĝᵢ = ℓ'ᵢ·min(1, C/(|ℓ'ᵢ|·√(‖xᵢ‖² + c²))).
//!
//! Labels: P(y = 1 | ν) = sigmoid(ν + b*) (logistic), y = ν + b* + e
//! (Huber, squared), ν = xᵀθ*, θ* ~ N(0, s²I). Metrics at every step:
//! est_err2, overlap, norm2, train_loss, `fitted_intercept` = β_t = c·b_t and the
//! population test_class_err of sign(xᵀθ + β) (logistic) or test_mse
//! (regression) at the iterate (Gaussian design: exact given θ_t, b_t).
//! Standalone: nothing here is shared with the state evolution.

use std::collections::BTreeMap;

use nalgebra::{DMatrix, DVector};
use propdp_core::loss::{Loss, sigmoid};
use propdp_core::population::test_class_error_shifted;
use rand::{Rng, RngExt};
use rand_distr::StandardNormal;
use rayon::prelude::*;

use crate::rng::stream;

/// One simulated setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InterceptRun {
    /// Dimension d (n = round(d/δ)).
    pub d: usize,
    /// δ = d/n.
    pub delta: f64,
    /// s² = E Θ² (θ* ~ N(0, s²I)).
    pub s2: f64,
    /// The descended loss (standard: labels drawn from the model).
    pub loss: Loss,
    /// Label noise sd (regression).
    pub noise_sd: f64,
    /// The teacher's intercept b*.
    pub b_star: f64,
    /// Whether the learner fits an intercept (else b stays 0).
    pub learned: bool,
    /// λ, λ_b, σ, η.
    pub lambda: f64,
    /// The intercept's ridge.
    pub lambda_b: f64,
    /// Privacy noise σ.
    pub sigma: f64,
    /// Step size η.
    pub eta: f64,
    /// Steps T.
    pub steps: usize,
    /// Poisson rate q.
    pub q: f64,
    /// Clip C (∞: none).
    pub clip: f64,
}

/// Per-step means and standard errors over repetitions, metric → t = 0..=T.
pub type Paths = (BTreeMap<String, Vec<f64>>, BTreeMap<String, Vec<f64>>);

impl InterceptRun {
    /// One repetition: the metrics at t = 0..=T.
    pub fn repetition<R: Rng>(&self, rng: &mut R) -> Vec<BTreeMap<String, f64>> {
        let d = self.d;
        let n = (d as f64 / self.delta).round() as usize;
        let c = 1.0 / (d as f64).sqrt();
        let normal = |rng: &mut R| -> f64 { rng.sample(StandardNormal) };
        let s = self.s2.sqrt();
        let theta_star = DVector::from_fn(d, |_, _| s * normal(rng));
        let mut xt = DMatrix::zeros(d, n);
        for v in xt.iter_mut() {
            *v = c * normal(rng);
        }
        let nu = xt.tr_mul(&theta_star);
        let y: Vec<f64> = (0..n)
            .map(|i| match self.loss {
                Loss::Logistic => {
                    if rng.random::<f64>() < sigmoid(nu[i] + self.b_star) {
                        1.0
                    } else {
                        -1.0
                    }
                }
                _ => nu[i] + self.b_star + self.noise_sd * normal(rng),
            })
            .collect();
        let norms: Vec<f64> = xt.column_iter().map(|x| (x.norm_squared() + c * c).sqrt()).collect();
        let s2_hat = theta_star.norm_squared() / d as f64;
        let (mut theta, mut b) = (DVector::<f64>::zeros(d), 0.0);
        let mut out = Vec::with_capacity(self.steps + 1);
        for t in 0..=self.steps {
            let fields = xt.tr_mul(&theta);
            let beta = c * b;
            let mut grad = DVector::<f64>::zeros(d);
            let (mut gb, mut loss) = (0.0, 0.0);
            for i in 0..n {
                let (l, d1, _) = self.loss.eval(y[i], fields[i] + beta);
                loss += l;
                if t == self.steps || !(self.q >= 1.0 || rng.random::<f64>() < self.q) {
                    continue;
                }
                let norm = d1.abs() * norms[i];
                let gi = if norm > self.clip { d1 * self.clip / norm } else { d1 };
                grad.axpy(gi, &xt.column(i), 1.0);
                gb += gi * c;
            }
            let (m, q) = (theta.dot(&theta_star) / d as f64, theta.norm_squared() / d as f64);
            let mut mt = BTreeMap::new();
            mt.insert("est_err2".to_string(), q - 2.0 * m + s2_hat);
            mt.insert("overlap".to_string(), m);
            mt.insert("norm2".to_string(), q);
            mt.insert("train_loss".to_string(), loss / n as f64);
            mt.insert(propdp_core::metrics::FITTED_INTERCEPT.to_string(), beta);
            if self.loss == Loss::Logistic {
                let err = test_class_error_shifted(s2_hat, m, q, beta, self.b_star);
                mt.insert("test_class_err".to_string(), err);
            } else {
                let field = q - 2.0 * m + s2_hat + (beta - self.b_star).powi(2);
                mt.insert("test_mse".to_string(), field + self.noise_sd * self.noise_sd);
            }
            out.push(mt);
            if t == self.steps {
                break;
            }
            let decay = 1.0 - self.eta * self.lambda;
            for (th, g) in theta.iter_mut().zip(grad.iter()) {
                *th = decay * *th - self.eta * g + self.eta * self.sigma * normal(rng);
            }
            if self.learned {
                b = (1.0 - self.eta * self.lambda_b) * b - self.eta * gb + self.eta * self.sigma * normal(rng);
            }
        }
        out
    }

    /// `reps` repetitions in parallel (stream (seed, [d, rep])): per-step
    /// means and standard errors.
    pub fn simulate(&self, reps: usize, seed: u64) -> Paths {
        let runs: Vec<_> = (0..reps)
            .into_par_iter()
            .map(|k| self.repetition(&mut stream(seed, &[self.d as u64, k as u64])))
            .collect();
        let (mut mean, mut se) = (BTreeMap::new(), BTreeMap::new());
        let r = reps as f64;
        for name in runs[0][0].keys() {
            for t in 0..=self.steps {
                let v: Vec<f64> = runs.iter().map(|run| run[t][name]).collect();
                let mu = v.iter().sum::<f64>() / r;
                let var = v.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (r - 1.0);
                mean.entry(name.clone()).or_insert_with(Vec::new).push(mu);
                se.entry(name.clone()).or_insert_with(Vec::new).push((var / r).sqrt());
            }
        }
        (mean, se)
    }
}
