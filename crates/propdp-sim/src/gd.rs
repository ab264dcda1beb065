//! DP full-batch gradient descent (docs/theory.md §1, §3):
//! θ₀ = 0, θ_{t+1} = θ_t − η(Xᵀℓ'(Xθ_t) + λθ_t + σ ξ_t), ξ_t ~ N(0, I_d) fresh;
//! and mini-batch DP-SGD (§3.1): a fresh Poisson batch B_t (each row with
//! probability q) and per-example gradients clipped to norm C,
//! θ_{t+1} = θ_t − η(Σ_{i∈B_t} clip_C(ℓ'ᵢ xᵢ) + λθ_t + σ w_t).
//!
//! Correlated noise (§3.7, docs/correlated_noise.md): the rows are split
//! into G balanced cyclic groups ([`Partition`]), only group t mod G is
//! eligible at step t (each of its rows taken with probability q), and the
//! noise is w = C⁻¹z for the Toeplitz strategy C (banded:
//! w_t = (z_t − Σ_{k=1}^{b−1} c_k w_{t−k}) / c₀; BLT: its buffers'
//! recurrence, [`NoiseRecurrence`]) with z_t the draws DP-SGD takes as ξ_t
//! (the identity strategy with G = 1 is DP-SGD, draw for draw).
//!
//! A step touches only its batch's rows; the metrics (the training loss is a
//! pass over every row) are evaluated at every step up to
//! [`EVERY_STEP_UP_TO`] steps and on the grid [`evaluation_steps`] beyond, so
//! a run at T = 10⁴ and q = 0.01 costs about q·n·d per step.

use nalgebra::{DMatrix, DVector};
use propdp_core::GradientSteps;
use propdp_core::loss::Loss;
use propdp_core::problem::NoiseRecurrence;
use rand::{Rng, RngExt};
use thiserror::Error;

use crate::data::fill_gaussian;
use crate::rows::dot;

/// Why a DP-GD run failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GdError {
    #[error("the descent (DP-GD/DP-SGD) diverged at step {step} (‖θ‖²/d = {norm2:e}); {advice}")]
    /// The iterates grew without bound (‖θ‖²/d non-finite or huge).
    Diverged {
        /// The step at which it was seen.
        step: usize,
        /// ‖θ_t‖²/d there.
        norm2: f64,
        /// What to change: σ when the privacy noise alone moves θ that far, η otherwise.
        advice: String,
    },
}

/// Longest run whose metrics are evaluated at every step.
pub const EVERY_STEP_UP_TO: usize = 1000;

/// The steps at which a run of `steps` steps evaluates its metrics: `None`
/// (every step) up to [`EVERY_STEP_UP_TO`]; beyond, every step t ≤ 50, the
/// decades' 1-2-5 steps, a geometric grid of ratio 1.1, every ⌈T/50⌉-th
/// step and T — 150–200 steps, dense enough for a log or a linear time
/// axis.
///
/// ```
/// use propdp_sim::gd::evaluation_steps;
/// assert_eq!(evaluation_steps(1000), None);
/// let at = evaluation_steps(10_000).unwrap();
/// assert!(at.contains(&5000) && at.contains(&2000) && *at.last().unwrap() == 10_000);
/// assert!(at.len() < 400 && at.windows(2).all(|w| w[0] < w[1]));
/// ```
pub fn evaluation_steps(steps: usize) -> Option<Vec<usize>> {
    if steps <= EVERY_STEP_UP_TO {
        return None;
    }
    let mut at: Vec<usize> = (0..=50).collect();
    let mut decade = 1;
    while decade <= steps {
        at.extend([decade, 2 * decade, 5 * decade]);
        decade *= 10;
    }
    let mut x = 50.0_f64;
    while x < steps as f64 {
        at.push(x.round() as usize);
        x *= 1.1;
    }
    let stride = steps.div_ceil(50);
    at.extend((0..=steps).step_by(stride));
    at.push(steps);
    at.retain(|&t| t <= steps);
    at.sort_unstable();
    at.dedup();
    Some(at)
}

/// The cyclic participation groups of the rows: a fixed balanced random
/// partition into G groups (sizes ⌊n/G⌋ or ⌈n/G⌉); G = 1 holds no table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    groups: usize,
    group_of: Vec<u32>,
}

impl Partition {
    /// Every row in the one group: plain DP-GD/DP-SGD.
    pub fn single() -> Self {
        Partition {
            groups: 1,
            group_of: Vec::new(),
        }
    }

    /// A uniformly random balanced partition of `n` rows into `groups`
    /// groups: a Fisher–Yates shuffle of the rows, the k-th shuffled row in
    /// group k mod G. Draws nothing for G = 1.
    ///
    /// ```
    /// use propdp_sim::gd::Partition;
    /// let p = Partition::draw(10, 3, &mut propdp_sim::rng::stream(1, &[0]));
    /// let sizes: Vec<usize> = (0..3).map(|g| (0..10).filter(|&i| p.group(i) == g).count()).collect();
    /// assert_eq!(sizes, [4, 3, 3]);
    /// ```
    pub fn draw<R: Rng>(n: usize, groups: usize, rng: &mut R) -> Self {
        if groups <= 1 {
            return Partition::single();
        }
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = rng.random_range(0..=i);
            order.swap(i, j);
        }
        let mut group_of = vec![0u32; n];
        for (k, &i) in order.iter().enumerate() {
            group_of[i] = (k % groups) as u32;
        }
        Partition { groups, group_of }
    }

    /// The number of groups G.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// The group of row `i`.
    pub fn group(&self, i: usize) -> usize {
        self.group_of.get(i).map_or(0, |&g| g as usize)
    }
}

/// The descent's settings: the loss descended and the hyperparameters of
/// the gradient method (DP-GD: q = 1, C = ∞), as the algorithm states them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Descent {
    /// The loss descended.
    pub loss: Loss,
    /// λ, σ, η, T, q (1: every row at every step, no draws) and the
    /// per-example clipping norm C (∞: none), applied to ‖ℓ'ᵢ xᵢ‖.
    pub gradient: GradientSteps,
}

impl Descent {
    /// Run the descent; `observe(t, θ_t, train_loss_t)` is called for the
    /// steps of [`evaluation_steps`] (every t = 0..=steps up to
    /// [`EVERY_STEP_UP_TO`]), where train_loss_t = (1/n) Σ ℓ(labelᵢ, (Xθ_t)ᵢ).
    /// `xt` is the design row by row (Xᵀ, d × n: column i is xᵢ); `labels`
    /// are yᵢ for standard losses and νᵢ = xᵢᵀθ* for conditional ones;
    /// `partition` the rows' cyclic groups (its G the gradient's).
    ///
    /// # Panics
    /// If the partition's G is not the gradient steps' `groups`.
    pub fn run<R: Rng, F: FnMut(usize, &DVector<f64>, f64)>(
        &self,
        xt: &DMatrix<f64>,
        labels: &DVector<f64>,
        partition: &Partition,
        rng: &mut R,
        mut observe: F,
    ) -> Result<DVector<f64>, GdError> {
        self.descend(xt, labels, false, partition, rng, |t, theta, _, loss| {
            observe(t, theta, loss)
        })
    }

    /// [`Descent::run`] with an unpenalised intercept b on a constant feature
    /// c = 1/√d (docs/theory.md §3.5): the field of row i is xᵢᵀθ + β, β =
    /// c·b; the per-example gradient ℓ'ᵢ·(xᵢ, c) is clipped jointly (norm
    /// |ℓ'ᵢ|·√(‖xᵢ‖² + c²)), and b gets the same privacy noise as every
    /// coordinate: b_{t+1} = b_t − η(Σ_{i∈B_t} ĝᵢc + σw′_t), its z′_t drawn
    /// after θ's (and correlated by the same strategy).
    /// `observe(t, θ_t, β_t, train_loss_t)`; returns θ_T.
    ///
    /// # Panics
    /// If the partition's G is not the gradient steps' `groups`.
    pub fn run_with_intercept<R: Rng, F: FnMut(usize, &DVector<f64>, f64, f64)>(
        &self,
        xt: &DMatrix<f64>,
        labels: &DVector<f64>,
        partition: &Partition,
        rng: &mut R,
        observe: F,
    ) -> Result<DVector<f64>, GdError> {
        self.descend(xt, labels, true, partition, rng, observe)
    }

    /// The descent, with an intercept if `intercept` (else the draws and
    /// arithmetic of [`Descent::run`] exactly).
    fn descend<R: Rng, F: FnMut(usize, &DVector<f64>, f64, f64)>(
        &self,
        xt: &DMatrix<f64>,
        labels: &DVector<f64>,
        intercept: bool,
        partition: &Partition,
        rng: &mut R,
        mut observe: F,
    ) -> Result<DVector<f64>, GdError> {
        let (d, n) = xt.shape();
        let groups = self.gradient.groups;
        assert_eq!(partition.groups(), groups, "the partition's groups are the algorithm's");
        let strategy = self.gradient.strategy;
        // w_{t−1}, w_{t−2}, … (θ's and the intercept's), newest first: b − 1 of them
        let mut noise = NoiseRecurrence::new(strategy, d);
        let mut noise_b = NoiseRecurrence::new(strategy, 1);
        let mut theta = DVector::zeros(d);
        // the constant feature c and the intercept b (0 without one)
        let c = if intercept { 1.0 / (d as f64).sqrt() } else { 0.0 };
        let mut b = 0.0;
        let row_norms: Vec<f64> = match (self.gradient.clip.is_finite(), intercept) {
            (false, _) => Vec::new(),
            (true, false) => xt.column_iter().map(|row| row.norm()).collect(),
            (true, true) => xt
                .column_iter()
                .map(|row| (row.norm_squared() + c * c).sqrt())
                .collect(),
        };
        // buffers reused at every step: the loop allocates nothing
        let mut selected = vec![true; n];
        let (mut xi, mut grad) = (DVector::zeros(d), DVector::zeros(d));
        let at = evaluation_steps(self.gradient.steps);
        let mut next_at = 0;
        for t in 0..=self.gradient.steps {
            let last = t == self.gradient.steps;
            let evaluated = at.as_ref().is_none_or(|at| at.get(next_at) == Some(&t));
            next_at += usize::from(evaluated);
            // the batch of this step, from the eligible group t mod G (drawn before the pass;
            // nothing else draws between)
            if !last && (self.gradient.sample_rate < 1.0 || groups > 1) {
                let eligible = t % groups;
                for (i, s) in selected.iter_mut().enumerate() {
                    *s = partition.group(i) == eligible
                        && (self.gradient.sample_rate >= 1.0 || rng.random_bool(self.gradient.sample_rate));
                }
            }
            // one pass over the rows: xᵢᵀθ, the loss, and clip_C(ℓ'ᵢ xᵢ) into the gradient,
            // where clip_C(ℓ'ᵢ xᵢ) = ℓ'ᵢ·min(1, C/(|ℓ'ᵢ|‖xᵢ‖)) xᵢ
            grad.fill(0.0);
            let (th, g) = (theta.as_slice(), grad.as_mut_slice());
            let mut loss = 0.0;
            let (beta, mut gb) = (c * b, 0.0);
            for (i, row) in xt.as_slice().chunks_exact(d.max(1)).enumerate() {
                if !evaluated && !selected[i] {
                    continue;
                }
                let field = if intercept { dot(row, th) + beta } else { dot(row, th) };
                let (l, d1, _) = self.loss.eval(labels[i], field);
                loss += l;
                if last || !selected[i] {
                    continue;
                }
                let norm = if self.gradient.clip.is_finite() {
                    d1.abs() * row_norms[i]
                } else {
                    0.0
                };
                let gi = if norm > self.gradient.clip {
                    d1 * self.gradient.clip / norm
                } else {
                    d1
                };
                for (gj, &xj) in g.iter_mut().zip(row) {
                    *gj += gi * xj;
                }
                gb += gi * c;
            }
            let norm2 = theta.norm_squared() / d as f64;
            if !norm2.is_finite() || norm2 > 1e12 {
                // the noise alone adds (ησ)² per coordinate and step to ‖θ‖²/d
                let noise = (t + 1) as f64 * (self.gradient.eta * self.gradient.sigma).powi(2);
                let advice = if noise.is_nan() || noise >= 1e10 {
                    format!(
                        "the privacy noise alone moves θ by ησ = {:e} per coordinate and step: lower σ",
                        self.gradient.eta * self.gradient.sigma
                    )
                } else {
                    "lower η".to_string()
                };
                return Err(GdError::Diverged { step: t, norm2, advice });
            }
            if evaluated {
                observe(t, &theta, beta, loss / n as f64);
            }
            if last {
                break;
            }
            fill_gaussian(&mut xi, rng);
            // w_t = C⁻¹z in place of z_t (the identity leaves z_t)
            noise.correlate(xi.as_mut_slice());
            grad.axpy(self.gradient.lambda, &theta, 1.0);
            grad.axpy(self.gradient.sigma, &xi, 1.0);
            theta.axpy(-self.gradient.eta, &grad, 1.0);
            if intercept {
                let mut w_b = [rng.sample(rand_distr::StandardNormal)];
                noise_b.correlate(&mut w_b);
                let w_b = w_b[0];
                b -= self.gradient.eta * (gb + self.gradient.sigma * w_b);
            }
        }
        Ok(theta)
    }
}
