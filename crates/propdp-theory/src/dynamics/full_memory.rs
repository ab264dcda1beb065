//! Dynamical mean-field theory (state evolution with memory) of DP
//! full-batch gradient descent, exactly as in docs/theory.md §3, and of
//! mini-batch DP-SGD (§3.1): every sample path carries its own Poisson
//! selections S_t ~ Bernoulli(q), and clipping acts on the scalar ℓ', so
//! ĝ_t = S_t·clip(ℓ'(r_t), ±C), ĥ_t = S_t·ℓ''(r_t)·1{|ℓ'| < C} replace g_t, ℓ''_t
//! in every kernel (q = 1 without clipping is DP-GD).
//!
//! Coordinate process: θ_{t+1} = (1−ηλ)θ_t − η[u_t + Σ_{s≤t} R_g(t,s)θ_s + M_g(t)Θ] + ησξ_t,
//! solved in closed form through A_t and the response R_θ(t,s); sample process:
//! r_t = w_t − η Σ_{s<t} R_θ(t,s) g_s with (ν, w_1..w_T) Gaussian of covariance
//! (s², m_t, C_θ), g_t = ℓ'(r_t; label). Closure with a = n/d:
//! C_g(t,s) = a E[g_t g_s], R_g(t,s) = a E[ℓ''(r_t) ∂r_t/∂w_s] (reverse mode),
//! M_g(t) = a ∂_ν E[g_t | ν, w] (pathwise for the Huber and conditional losses,
//! score function 1{y=+1} − sigmoid(ν) for the standard logistic loss).
//! A_t needs only the drift D_t = Σ_k R_g(t,k)A_k + M_g(t) = a E[ν g_t]/s² (Stein's
//! lemma over (ν, w)): with ν = s z₀ it is (a/s)·E[z₀(ĝ_t − β c_t)], c_t the ĝ_t of
//! baseline paths at ν = 0 (independent of z₀), β = κ²/(s² + κ²), κ² = 1 + sd²
//! (docs/theory.md §3.1). The pathwise D̂_t and ĥ_t live on windows |ℓ'| < C of
//! width ~C/s in ν, which at s² ≫ 1 hold a handful of paths or none; the Stein
//! quotient uses every path. Below s² = 1e-10·κ², where s·z₀ is lost in the
//! rounding of the paths, D_t is summed from the pathwise (score) M_g and R_g.
//! The solve is causal (forward in t), O(N T³/6) work and O(N T) memory.
//!
//! Correlated noise and cyclic groups (§3.7): the noise σw, w = C⁻¹z, enters
//! C_θ as η²σ²R_θKR_θᵀ with K = C⁻¹C⁻ᵀ (`noise_kernel.rs`); with G groups each
//! path draws its group g from one more Sobol coordinate and is selected
//! (S_t = 1[t ≡ g mod G]·Bernoulli(q)) only at its group's steps.
//!
//! Two clusters (§3.6, [`solve_two_cluster`]): centred rows x = ỹ·μ + g,
//! ỹ = y − (2p − 1), g ~ N(0, κ²Σ/d), μ = κ²Σθ*/d, labels P(y = +1) = p
//! independent of g. The modes are those of Σ_w = κ²Σ, with M_g(t) = a·E[ĝ_t ỹ]
//! (the class mean's drift; no label depends on ν, so the drift is
//! Σ_k R_g(t,k)A_k + M_g(t) without a Stein quotient); every path's field is
//! r_t + ỹ·m_t + β_t, m_t = μᵀθ_t, and ℓ' is clipped at C/κ.
//!
//! Expectations over samples use randomized quasi-Monte Carlo: Owen-scrambled
//! Sobol points from `sobol_burley` (dimension T + 2: ν, w_1..w_T, label
//! noise), mapped to normals by Φ⁻¹ ([`quantile`], `statrs`). That crate supports 2^16
//! points and 256 dimensions per sequence; dimensions beyond 256 reuse the
//! sequence under an independent seed (padded RQMC, still unbiased). The solve
//! is repeated on independent scrambles and the prediction is their mean, with
//! a standard error from their spread.
//!
//! # References
//! - Celentano, Cheng, Montanari (2021), *The high-dimensional asymptotics of
//!   first order methods with random data*.
//! - Mignacco, Krzakala, Urbani, Zdeborová (2020), *Dynamical mean-field theory
//!   for stochastic gradient descent in Gaussian mixture classification*.
//! - Loureiro, Sicuro, Gerbelot, Pacco, Krzakala, Zdeborová (2021), *Learning
//!   Gaussian mixtures with generalised linear models: precise asymptotics in
//!   high dimensions*.

use propdp_core::covariance::{Atom, Covariance};
use propdp_core::loss::{Loss, sigmoid};
use propdp_core::metrics::Metrics;
use propdp_core::population::two_cluster_class_error;
use propdp_core::problem::TwoCluster;
use rayon::prelude::*;

use super::modes::{Modes, SPECTRAL_MAX_BYTES, spectral_metrics, two_cluster_metrics};
use super::noise_kernel::{NoiseKernel, noise_term};
use super::path::{
    DmftError, DmftParams, DmftPath, INTERCEPT, Intercept, STEIN_MIN_S2, aggregate, check_intercept_loss,
    insert_intercept_metrics, step_metrics, two_cluster_params,
};
use super::rqmc::rqmc_uniform;
use crate::numerics::axpy;
use crate::numerics::gaussian::quantile;

/// Solve the DMFT on `p.scrambles` independent scrambles (in parallel).
pub fn solve(p: &DmftParams) -> Result<DmftPath, DmftError> {
    solve_cancellable(p, &|| false)
}

/// [`solve`], stopping with [`DmftError::Cancelled`] at the first step at
/// which `cancelled` returns true (checked once per step of every scramble:
/// a long solve — T in the hundreds takes minutes — stops within a step).
pub fn solve_cancellable(p: &DmftParams, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<DmftPath, DmftError> {
    solve_spectral(p, None, cancelled)
}

/// [`solve_spectral`] with an intercept (docs/theory.md §3.5): features
/// isotropic or of covariance `cov` (§3.4), the standard logistic, Huber and
/// squared losses. Writes the learned intercept's field β_t
/// ([`super::INTERCEPT`]), test_class_err of sign(w + β) against labels of
/// P(y = 1 | ν) = sigmoid(ν + b*) (logistic), test_mse = pred_err2 +
/// (β − b*)² + sd² (Huber, squared), ν of variance ρ = s²Σwωe.
pub fn solve_intercept(
    p: &DmftParams,
    cov: Option<&Covariance>,
    icp: &Intercept,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<DmftPath, DmftError> {
    check_intercept_loss(p)?;
    check_spectral_memory(p, cov)?;
    replicates(p, cov, Some(icp), None, cancelled)
}

/// [`solve`] for the two-cluster data model (docs/theory.md §3.6):
/// centred rows x = (y − (2p − 1))·μ + g, g ~ N(0, κ²Σ/d), μ = κ²Σθ*/d, labels P(y = +1) = p
/// independent of g; the standard logistic loss, isotropic features or a
/// covariance `cov`, and a learned intercept if `icp` says so (the teacher
/// has none). The within-class covariance's modes carry the drift
/// a·E\[ĝ_t(y − (2p − 1))\] of the class mean; every path's field is
/// r_t + (y − (2p − 1))·m_t + β_t.
/// Rows have ‖x‖ → κ, so DP-SGD's clip C of the per-example gradient clips
/// ℓ' at C/κ.
/// Writes test_class_err, train_loss, norm2, overlap (θᵀθ*/d) and, with an
/// intercept, fitted_intercept.
pub fn solve_two_cluster(
    p: &DmftParams,
    cov: Option<&Covariance>,
    mix: &TwoCluster,
    icp: Option<&Intercept>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<DmftPath, DmftError> {
    let p = two_cluster_params(p, mix, icp)?;
    check_spectral_memory(&p, cov)?;
    replicates(&p, cov, icp, Some(mix), cancelled)
}

/// The path averaged over `p.scrambles` independent RQMC scrambles solved
/// in parallel, each seeded from `p.seed`, after the budget's check.
fn replicates(
    p: &DmftParams,
    cov: Option<&Covariance>,
    icp: Option<&Intercept>,
    mix: Option<&TwoCluster>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<DmftPath, DmftError> {
    check_budget(p)?;
    let runs: Vec<Vec<Metrics>> = (0..p.scrambles as u32)
        .into_par_iter()
        .map(|k| {
            let seed = p.seed.wrapping_mul(0x9E37_79B9).wrapping_add(k);
            solve_scramble(p, cov, icp, mix, seed, cancelled)
        })
        .collect::<Result<_, _>>()?;
    Ok(aggregate(runs, p.steps))
}

/// The RQMC budget's limits: 1..=2^16 points, at least two scrambles.
fn check_budget(p: &DmftParams) -> Result<(), DmftError> {
    if p.points == 0 || p.points > 1 << 16 {
        return Err(DmftError::Invalid {
            what: format!("points = {} (allowed 1..=65536 per scramble)", p.points),
            params: Box::new(*p),
        });
    }
    if p.scrambles < 2 {
        return Err(DmftError::Invalid {
            what: "scrambles < 2 (a standard error needs two)".into(),
            params: Box::new(*p),
        });
    }
    Ok(())
}

/// [`solve_cancellable`] for features of covariance `cov` (docs/theory.md
/// §3.4): one linear coordinate mode per atom, the sample process fed their
/// mixtures. `None` is the isotropic solve, bit for bit.
pub fn solve_spectral(
    p: &DmftParams,
    cov: Option<&Covariance>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<DmftPath, DmftError> {
    check_spectral_memory(p, cov)?;
    replicates(p, cov, None, None, cancelled)
}

/// The atoms' responses Rᵏ take K·(T+1)² numbers: refused above
/// [`SPECTRAL_MAX_BYTES`], naming the sizes.
fn check_spectral_memory(p: &DmftParams, cov: Option<&Covariance>) -> Result<(), DmftError> {
    if let Some(c) = cov {
        let bytes = 8.0 * c.atoms().len() as f64 * ((p.steps + 1) as f64).powi(2);
        if bytes > SPECTRAL_MAX_BYTES {
            return Err(DmftError::Invalid {
                what: format!(
                    "a spectrum of {} atoms over {} steps needs {:.1} GB for the atoms' responses \
                     (more than {:.0} GB): use fewer atoms (bin the spectrum) or fewer steps",
                    c.atoms().len(),
                    p.steps,
                    bytes / 1e9,
                    SPECTRAL_MAX_BYTES / 1e9
                ),
                params: Box::new(*p),
            });
        }
    }
    Ok(())
}

/// Relative size below which a Cholesky pivot of Cov(ν, w) counts as zero.
const PIVOT_TOL: f64 = 1e-6;

/// Samples processed together (one SIMD-friendly array) in the reverse-mode pass.
const LANES: usize = 16;

/// The draws of one scramble: standard normals `z[j][i]`, j = 0..=T, for
/// (ν, w_1..w_T), then `extra` uniform coordinates `u[k][i]` (dimensions
/// T + 1 + k): the label's, then for DP-SGD one per step for the selections.
fn draws(p: &DmftParams, seed: u32, extra: usize) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let uniform = |i: usize, dim: usize| rqmc_uniform(i, dim, seed);
    let z = (0..=p.steps)
        .map(|j| (0..p.points).map(|i| quantile(uniform(i, j))).collect())
        .collect();
    let u = (0..extra)
        .map(|k| (0..p.points).map(|i| uniform(i, p.steps + 1 + k)).collect())
        .collect();
    (z, u)
}

// The kernels are indexed exactly as in docs/theory.md §3 (R_θ(t,s), C_g(s,s'), …);
// index loops keep the code one-to-one with the equations.
#[allow(clippy::needless_range_loop)]
fn solve_scramble(
    p: &DmftParams,
    cov: Option<&Covariance>,
    icp: Option<&Intercept>,
    mix: Option<&TwoCluster>,
    seed: u32,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<Metrics>, DmftError> {
    let (tt, n, a) = (p.steps, p.points, 1.0 / p.delta);
    // two clusters (§3.6): the modes of the within-class covariance Σ_w = κ²Σ
    // (one atom of eigenvalue κ² for isotropic features)
    let within_atoms: Option<Vec<Atom>> = mix.map(|c| {
        let scaled = |a: &Atom| Atom {
            eigenvalue: c.within * a.eigenvalue,
            ..*a
        };
        match cov {
            Some(cv) => cv.atoms().iter().map(scaled).collect(),
            None => vec![Atom {
                eigenvalue: c.within,
                weight: 1.0,
                teacher: 1.0,
            }],
        }
    });
    // the variance ρ of the teacher field (s² isotropic; with two clusters
    // θ*ᵀΣ_wθ*/d, the Bayes margin) and the atoms' modes
    let rho = cov.map_or(p.s2, |c| p.s2 * c.teacher_field()) * mix.map_or(1.0, |c| c.within);
    let mut modes = match &within_atoms {
        Some(atoms) => Some(Modes::new(atoms, tt)),
        None => cov.map(|c| Modes::new(c.atoms(), tt)),
    };
    let nf = n as f64;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / nf;
    // cyclic groups (§3.7) select too, at any q: a path only at its group's steps
    let subsampled = p.sample_rate < 1.0 || p.groups > 1;
    // κ² = 1 + sd²: the scale of the labels' and paths' randomness besides ν
    let kappa2 = 1.0 + p.noise_sd * p.noise_sd;
    // two clusters: no label depends on ν, so the drift is Σ_k R_g(t,k)A_k plus the
    // class mean's a·E[ĝ_t(y − (2p − 1))], and no path needs ∂_ν (`pathwise`) or baselines
    let stein = mix.is_none() && rho >= STEIN_MIN_S2 * kappa2;
    let pathwise = mix.is_none() && !stein;
    // the label's uniforms, one per step for the selections, and with groups the path's group g = ⌊uG⌋
    let extra = if subsampled { 1 + tt } else { 1 } + usize::from(p.groups > 1);
    let (z, mut u) = draws(p, seed, extra);
    let group: Vec<usize> = match p.groups {
        1 => Vec::new(),
        g => u
            .pop()
            .expect("the groups' uniforms")
            .iter()
            .map(|x| ((x * g as f64) as usize).min(g - 1))
            .collect(),
    };
    // S_t of path i (steps 0..T−1; the last step's g is not used)
    let selection: Vec<Vec<bool>> = u
        .split_off(1)
        .into_iter()
        .enumerate()
        .map(|(t, v)| {
            v.into_iter()
                .enumerate()
                .map(|(i, x)| x < p.sample_rate && group.get(i).is_none_or(|&g| g == t % p.groups))
                .collect()
        })
        .collect();
    let kernel = NoiseKernel::new(p);
    let u = u.pop().expect("the label's uniforms");
    let prior_sd = rho.sqrt();
    // the teacher's intercept b* (labels of ν + b*) and the learner's field β_t
    let b_star = icp.map_or(0.0, |c| c.teacher);
    let mut beta = 0.0;
    let nu: Vec<f64> = z[0].iter().map(|x| prior_sd * x).collect();
    // label: y for standard losses, ν for conditional ones; for the Stein drift
    // also the labels of the baseline paths at ν = 0 (y⁰ = e; ±1 for the standard logistic)
    let (label, baselines): (Vec<f64>, Vec<Vec<f64>>) = match p.loss {
        Loss::Huber { .. } | Loss::Squared => {
            let e: Vec<f64> = u.iter().map(|&x| p.noise_sd * quantile(x)).collect();
            (
                (0..n).map(|i| nu[i] + b_star + e[i]).collect(),
                vec![e.iter().map(|x| x + b_star).collect()],
            )
        }
        Loss::Logistic => (
            (0..n)
                .map(|i| if u[i] < sigmoid(nu[i] + b_star) { 1.0 } else { -1.0 })
                .collect(),
            vec![vec![1.0; n], vec![-1.0; n]],
        ),
        Loss::ConditionalHuber { .. } | Loss::ConditionalLogistic => (nu.clone(), vec![vec![0.0; n]]),
    };
    // two clusters: y = ±1 with P(y = +1) = p, independent of the Gaussian part
    // two clusters: rows are centred, x = (y − (2p − 1))·μ + g
    let centre = mix.map_or(0.0, |c| 2.0 * c.balance - 1.0);
    let (label, baselines) = match mix {
        Some(c) => (
            u.iter().map(|&x| if x < c.balance { 1.0 } else { -1.0 }).collect(),
            Vec::new(),
        ),
        None => (label, baselines),
    };
    let baselines = if stein { baselines } else { Vec::new() };
    let sq = |k: usize| vec![vec![0.0; k]; k];
    let (mut rth, mut cth, mut rg, mut cg) = (sq(tt + 1), sq(tt + 1), sq(tt + 1), sq(tt + 1));
    let mut amp = vec![0.0; tt + 1];
    // Cholesky rows of Cov(ν, w_1..w_T); row 0 is ν
    let mut chol = sq(tt + 1);
    chol[0][0] = prior_sd;
    // per-sample paths over t: ĝ_t, ĥ_t, and either the pathwise ∂_ν ĝ_t (D̂_t)
    // or the baseline paths' ĝ⁰_t
    let mut g: Vec<Vec<f64>> = Vec::with_capacity(tt + 1);
    let mut h: Vec<Vec<f64>> = Vec::with_capacity(tt + 1);
    let mut dv: Vec<Vec<f64>> = Vec::with_capacity(if pathwise { tt + 1 } else { 0 });
    let mut g0: Vec<Vec<Vec<f64>>> = vec![Vec::with_capacity(tt); baselines.len()];
    let mut out = Vec::with_capacity(tt + 1);
    let eta = p.eta;
    // DP-SGD: the path's selection at step t (the last step's g is not used), and the clip
    let selected = |t: usize, i: usize| !subsampled || t == tt || selection[t][i];
    let clip = |d1: f64| if d1.abs() < p.clip { d1 } else { p.clip.copysign(d1) };
    for t in 0..=tt {
        if cancelled() {
            return Err(DmftError::Cancelled { step: t, steps: tt });
        }
        // 1. w_t (w_0 = 0) by extending the Cholesky factor, as w⁰_t + L(t,0)z₀:
        //    w⁰_t, the part independent of ν, drives the baseline paths
        let (w0, w): (Vec<f64>, Vec<f64>) = if t == 0 {
            (vec![0.0; n], vec![0.0; n])
        } else {
            let cov = |j: usize| if j == 0 { rho * amp[t] } else { cth[t][j] };
            for j in 0..t {
                let dot: f64 = (0..j).map(|i| chol[t][i] * chol[j][i]).sum();
                chol[t][j] = if chol[j][j] > 0.0 {
                    (cov(j) - dot) / chol[j][j]
                } else {
                    0.0
                };
            }
            let pivot = cth[t][t] - (0..t).map(|i| chol[t][i] * chol[t][i]).sum::<f64>();
            // When GD converges (σ = 0) w_t becomes collinear with w_{t−1}: the
            // true pivot → 0 and the computed one is cancellation noise of
            // either sign. |pivot| ≤ PIVOT_TOL·C_θ(t,t) is a zero pivot (its
            // column is skipped, docs/theory.md §3); below −PIVOT_TOL·C_θ(t,t) the
            // covariance has lost positive-definiteness.
            if pivot < -PIVOT_TOL * cth[t][t].max(1e-300) {
                return Err(DmftError::NotPositiveDefinite {
                    step: t,
                    pivot,
                    params: Box::new(*p),
                });
            }
            chol[t][t] = if pivot > PIVOT_TOL * cth[t][t] {
                pivot.sqrt()
            } else {
                0.0
            };
            let mut w0 = vec![0.0; n];
            for j in 1..=t {
                axpy(&mut w0, chol[t][j], &z[j]);
            }
            let mut w = w0.clone();
            axpy(&mut w, chol[t][0], &z[0]);
            (w0, w)
        };
        // 2. r_t = w_t − η Σ_{s<t} R_θ(t,s) ĝ_s (the Onsager term), the loss, ĝ_t, ĥ_t,
        //    and for the pathwise drift D̂_t = S_t·∂_νℓ'·1{|ℓ'| < C} − η ĥ_t·memory,
        //    memory = Σ_{s<t} R_θ(t,s) D̂_s
        let mut r = w;
        for s in 0..t {
            axpy(&mut r, -eta * rth[t][s], &g[s]);
        }
        let mut memory = vec![0.0; if pathwise { n } else { 0 }];
        for s in 0..dv.len() {
            axpy(&mut memory, rth[t][s], &dv[s]);
        }
        let (mut gt, mut ht, mut dt) = (vec![0.0; n], vec![0.0; n], vec![0.0; memory.len()]);
        let mut loss = 0.0;
        // two clusters: the class mean's part y·m_t of every field (m_t = μᵀθ_t)
        let m_mean = if mix.is_some() { rho * amp[t] } else { 0.0 };
        for i in 0..n {
            let (l, d1, d2) = p.loss.eval(label[i], r[i] + (label[i] - centre) * m_mean + beta);
            loss += l;
            // DP-SGD: the path's selection and the clip (§3.1); ĥ and ∂_ν vanish where clipped
            if selected(t, i) && d1.abs() < p.clip {
                (gt[i], ht[i]) = (d1, d2);
                if pathwise {
                    let dnu = match p.loss {
                        Loss::ConditionalLogistic => {
                            let s = sigmoid(nu[i]);
                            -s * (1.0 - s)
                        }
                        // Huber (y = ν + e), conditional Huber, squared (y = ν + e): ∂_ν ℓ' = −ℓ''
                        _ => -d2,
                    };
                    dt[i] = dnu - eta * d2 * memory[i];
                }
            } else if selected(t, i) {
                gt[i] = clip(d1);
            }
        }
        let mut mt = match &modes {
            Some(md) if let Some(c) = mix => {
                let learned = icp.is_some_and(|i| i.learned);
                let (m_t, c_tt) = (rho * amp[t], cth[t][t]);
                let err = two_cluster_class_error(c.balance, m_t, c_tt, beta);
                let mut mt = two_cluster_metrics(p, t, c_tt, md.m0[t], md.q0[t], loss / nf, err)?;
                if learned {
                    mt.insert(INTERCEPT.into(), beta);
                }
                mt
            }
            None => step_metrics(p, t, p.s2 * amp[t], cth[t][t], loss / nf)?,
            Some(md) => spectral_metrics(p, t, rho, rho * amp[t], cth[t][t], md.m0[t], md.q0[t], loss / nf)?,
        };
        if icp.is_some() && mix.is_none() {
            insert_intercept_metrics(p, &mut mt, (rho, rho * amp[t], cth[t][t]), beta, b_star);
        }
        out.push(mt);
        g.push(gt);
        h.push(ht);
        if pathwise {
            dv.push(dt);
        }
        if t == tt {
            break;
        }
        // the intercept's field β_{t+1} = (1 − ηλ_b)β_t − η·a·E[ĝ_t] (docs/theory.md §3.5);
        // β_t itself shifts every path's field at step t, the baselines' too
        let beta_t = beta;
        if let Some(c) = icp.filter(|c| c.learned) {
            beta = (1.0 - eta * c.lambda) * beta - eta * a * mean(&g[t]);
        }
        // the baseline paths at ν = 0: r⁰_t = w⁰_t − η Σ_{s<t} R_θ(t,s) ĝ⁰_s
        for (g0b, y0) in g0.iter_mut().zip(&baselines) {
            let mut r0 = w0.clone();
            for s in 0..t {
                axpy(&mut r0, -eta * rth[t][s], &g0b[s]);
            }
            g0b.push(
                (0..n)
                    .map(|i| {
                        if selected(t, i) {
                            clip(p.loss.eval(y0[i], r0[i] + beta_t).1)
                        } else {
                            0.0
                        }
                    })
                    .collect(),
            );
        }
        // 3. responses R_g(t, s) = a E[ℓ''_t b_s] by reverse mode: b_t = 1,
        //    b_k = −η ℓ''_k Σ_{j=k+1}^{t} R_θ(j,k) b_j, for LANES samples at a
        //    time with the adjoints in a small array (L1-resident), summed on the fly
        let rth_cols: Vec<Vec<f64>> = (0..t).map(|k| (k + 1..=t).map(|j| rth[j][k]).collect()).collect();
        let mut acc = vec![0.0; t + 1];
        let mut adj = vec![[0.0; LANES]; t + 1];
        for i0 in (0..n).step_by(LANES) {
            let lanes = LANES.min(n - i0);
            adj[t] = [1.0; LANES];
            for k in (0..t).rev() {
                let (head, tail) = adj.split_at_mut(k + 1);
                let mut sum = [0.0; LANES];
                for (r, bj) in rth_cols[k].iter().zip(tail.iter()) {
                    for l in 0..LANES {
                        sum[l] += r * bj[l];
                    }
                }
                for l in 0..lanes {
                    head[k][l] = -eta * h[k][i0 + l] * sum[l];
                }
                for l in lanes..LANES {
                    head[k][l] = 0.0;
                }
            }
            for (s, bs) in adj.iter().enumerate() {
                acc[s] += (0..lanes).map(|l| h[t][i0 + l] * bs[l]).sum::<f64>();
            }
        }
        for s in 0..=t {
            rg[t][s] = a * acc[s] / nf;
        }
        // 4. the drift D_t and C_g(t, ·)
        let drift = if mix.is_some() {
            // the Gaussian part's Stein drift Σ_k R_g(t,k)A_k and the class mean's a·E[ĝ_t(y − (2p − 1))]
            let mean_drift = a * (0..n).map(|i| g[t][i] * (label[i] - centre)).sum::<f64>() / nf;
            (0..=t).map(|k| rg[t][k] * amp[k]).sum::<f64>() + mean_drift
        } else if stein {
            // (a/s)·E[z₀(ĝ_t − βc_t)]: z₀c_t has mean zero, c_t = ĝ⁰_t, for the
            // standard logistic ½(ĝ⁺ + ĝ⁻) + (1{y = +1} − σ(ν))(ĝ⁺ − ĝ⁻) (its mean
            // given z₀ and the rest is ½(ĝ⁺ + ĝ⁻)); β = κ²/(s² + κ²), fixed, so unbiased
            let x: Vec<f64> = (0..n).map(|i| z[0][i] * g[t][i]).collect();
            let c: Vec<f64> = (0..n)
                .map(|i| {
                    z[0][i]
                        * match p.loss {
                            Loss::Logistic => {
                                let (plus, minus) = (g0[0][t][i], g0[1][t][i]);
                                let score = f64::from(u8::from(label[i] > 0.0)) - sigmoid(nu[i] + b_star);
                                0.5 * (plus + minus) + score * (plus - minus)
                            }
                            _ => g0[0][t][i],
                        }
                })
                .collect();
            a * (mean(&x) - kappa2 / (rho + kappa2) * mean(&c)) / prior_sd
        } else {
            // M_g(t) pathwise, by the score 1{y = +1} − σ(ν) for the standard logistic
            let mg = match p.loss {
                Loss::Logistic => {
                    a * (0..n)
                        .map(|i| g[t][i] * (f64::from(u8::from(label[i] > 0.0)) - sigmoid(nu[i] + b_star)))
                        .sum::<f64>()
                        / nf
                }
                _ => a * mean(&dv[t]),
            };
            (0..=t).map(|k| rg[t][k] * amp[k]).sum::<f64>() + mg
        };
        for s in 0..=t {
            let c = a * (0..n).map(|i| g[t][i] * g[s][i]).sum::<f64>() / nf;
            cg[t][s] = c;
            cg[s][t] = c;
        }
        // 5. coordinate update: R_θ(t+1, ·), A_{t+1}, C_θ(t+1, ·); with a
        //    spectrum, per atom, M_g(t) = D_t − Σ_k R_g(t,k)·m_k/ρ (Stein)
        if let Some(md) = modes.as_mut() {
            let mg = drift - (0..=t).map(|k| rg[t][k] * amp[k]).sum::<f64>();
            md.advance(p, t, &rg, mg, &cg, rho, &mut rth, &mut cth, &mut amp, &kernel);
            continue;
        }
        let decay = 1.0 - eta * p.lambda;
        rth[t + 1][t] = 1.0;
        for s in 0..t {
            let mem: f64 = (s + 1..=t).map(|k| rg[t][k] * rth[k][s]).sum();
            rth[t + 1][s] = decay * rth[t][s] - eta * mem;
        }
        amp[t + 1] = decay * amp[t] - eta * drift;
        // v_{s'} = Σ_s R_θ(t+1, s) C_g(s, s')
        let v: Vec<f64> = (0..=t)
            .map(|s2| (0..=t).map(|s| rth[t + 1][s] * cg[s][s2]).sum())
            .collect();
        let weights = kernel.weights(&rth[t + 1], t);
        for tp in 0..=t + 1 {
            let noise = noise_term(weights.as_deref(), &rth[t + 1], &rth[tp], t, tp);
            let signal: f64 = (0..tp).map(|s2| v[s2] * rth[tp][s2]).sum();
            let c = p.s2 * amp[t + 1] * amp[tp] + eta * eta * signal + eta * eta * p.sigma * p.sigma * noise;
            cth[t + 1][tp] = c;
            cth[tp][t + 1] = c;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::INTERCEPT;
    use propdp_core::loss::norm_cdf;
    use propdp_core::metrics;

    /// Two atoms of eigenvalue 1 with teacher energies 3/2 and 1/2 are the
    /// isotropic problem (the sample side sees only Σwω·(·) and Σwωe = 1)
    /// through the spectral modes: the same path to rounding, on the same
    /// scrambles, for a Stein-drift and a clipped DP-SGD solve.
    #[test]
    fn a_split_teacher_over_equal_eigenvalues_is_the_isotropic_state_evolution() {
        let cov = Covariance::from_columns(&[1.0, 1.0], &[0.5, 0.5], &[1.5, 0.5], "c")
            .unwrap()
            .unwrap();
        let base = DmftParams {
            delta: 0.5,
            s2: 1.0,
            lambda: 0.1,
            sigma: 1.0,
            eta: 0.5,
            steps: 12,
            sample_rate: 1.0,
            clip: f64::INFINITY,
            loss: Loss::Logistic,
            noise_sd: 0.0,
            points: 1024,
            scrambles: 2,
            seed: 3,
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        };
        let sgd = DmftParams {
            loss: Loss::Huber { m: 1.0 },
            noise_sd: 0.5,
            sample_rate: 0.3,
            clip: 0.5,
            ..base
        };
        for p in [base, sgd] {
            let iso = solve(&p).unwrap();
            let spec = solve_spectral(&p, Some(&cov), &|| false).unwrap();
            for (k, v) in &iso.mean {
                for (t, (a, b)) in v.iter().zip(&spec.mean[k]).enumerate() {
                    assert!((a - b).abs() <= 1e-9 * (1.0 + a.abs()), "{k} at t = {t}: {a} vs {b}");
                }
            }
            let last = spec.last();
            assert!((last["pred_err2"] - last["est_err2"]).abs() <= 1e-9 * last["est_err2"]);
        }
    }

    /// No intercept anywhere (b* = 0, none learned) is the plain solve on
    /// the same scrambles, bit for bit but for test_class_err's quadrature, with β ≡ 0.
    #[test]
    fn a_zero_intercept_is_the_plain_state_evolution() {
        let p = DmftParams {
            delta: 0.5,
            s2: 4.0,
            lambda: 0.1,
            sigma: 1.0,
            eta: 1.0,
            steps: 8,
            sample_rate: 0.3,
            clip: 0.5,
            loss: Loss::Logistic,
            noise_sd: 0.0,
            points: 1024,
            scrambles: 2,
            seed: 3,
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        };
        let none = Intercept {
            teacher: 0.0,
            learned: false,
            lambda: 0.0,
        };
        let (plain, icp) = (solve(&p).unwrap(), solve_intercept(&p, None, &none, &|| false).unwrap());
        for (k, v) in &plain.mean {
            // test_class_err by the shifted formula: the same integral, other panels
            for (a, b) in v.iter().zip(&icp.mean[k]) {
                let tol = if k == metrics::TEST_CLASS_ERR { 1e-12 } else { 0.0 };
                assert!((a - b).abs() <= tol, "{k}: {a} vs {b}");
            }
        }
        assert!(icp.mean[INTERCEPT].iter().all(|&b| b == 0.0));
    }

    fn two_cluster_params() -> DmftParams {
        DmftParams {
            delta: 0.5,
            s2: 4.0,
            lambda: 0.1,
            sigma: 0.5,
            eta: 0.4,
            steps: 6,
            sample_rate: 1.0,
            clip: f64::INFINITY,
            loss: Loss::Logistic,
            noise_sd: 0.0,
            points: 1024,
            scrambles: 2,
            seed: 5,
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        }
    }

    /// One DP-GD step from θ₀ = 0 by hand (docs/theory.md §3.6): every
    /// ℓ'(0; y) = −y/2, so with centred rows x = ỹμ + g, ỹ = y − (2p − 1),
    /// E[yỹ] = v = 4p(1 − p), θ₁ = (η/2)(Σᵢ yᵢgᵢ + nvμ) + ησξ₀ and, with
    /// Σ_w = κ²I, μ = κ²θ*/d: overlap θ₁ᵀθ*/d = ηaκ²s²v/2, m₁ = μᵀθ₁ =
    /// ηaκ⁴s²v/2, norm2 = (η²/4)(aκ² + a²κ⁴s²v²) + η²σ², test error from
    /// the class means 2(1 − p)m₁ + β₁, −2pm₁ + β₁ and the variance κ²·norm2,
    /// with the intercept's β₁ = ηa(2p − 1)/2.
    #[test]
    fn one_two_cluster_step_is_the_closed_form() {
        let p = DmftParams {
            steps: 1,
            ..two_cluster_params()
        };
        let (a, k2, s2, eta) = (1.0 / p.delta, 0.7, p.s2, p.eta);
        let mix = TwoCluster {
            balance: 0.75,
            within: k2,
        };
        let icp = Intercept {
            teacher: 0.0,
            learned: true,
            lambda: 0.0,
        };
        let path = solve_two_cluster(&p, None, &mix, Some(&icp), &|| false).unwrap();
        let last = path.last();
        let v = 4.0 * 0.75 * 0.25;
        let norm2 = eta * eta / 4.0 * (a * k2 + a * a * k2 * k2 * s2 * v * v) + eta * eta * p.sigma * p.sigma;
        let (m1, beta) = (eta * a * k2 * k2 * s2 * v / 2.0, eta * a * (2.0 * 0.75 - 1.0) / 2.0);
        let sd = (k2 * norm2).sqrt();
        let err = 0.75 * norm_cdf(-(0.5 * m1 + beta) / sd) + 0.25 * norm_cdf((-1.5 * m1 + beta) / sd);
        let want = [
            (metrics::OVERLAP, eta * a * k2 * s2 * v / 2.0),
            (metrics::NORM2, norm2),
            (metrics::TEST_CLASS_ERR, err),
            (INTERCEPT, beta),
        ];
        for (k, v) in want {
            // β₁ is a mean over the RQMC labels: exact to their stratification (1/N)
            assert!((last[k] - v).abs() <= 2e-3 * v.abs(), "{k}: {} vs {v}", last[k]);
        }
        assert!(!last.contains_key(metrics::EST_ERR2));
        assert_eq!(path.mean[metrics::TEST_CLASS_ERR][0], 0.5);
    }

    /// Balanced classes whose means vanish (s² → 0, so μ → 0) carry no
    /// signal: without an intercept the classifier is a coin at every step,
    /// however the iterates move.
    #[test]
    fn balanced_clusters_without_a_mean_are_a_coin_at_every_step() {
        let p = DmftParams {
            s2: 1e-14,
            ..two_cluster_params()
        };
        let mix = TwoCluster {
            balance: 0.5,
            within: 1.0,
        };
        let path = solve_two_cluster(&p, None, &mix, None, &|| false).unwrap();
        for (t, e) in path.mean[metrics::TEST_CLASS_ERR].iter().enumerate() {
            assert!((e - 0.5).abs() < 1e-6, "t = {t}: {e}");
        }
        assert!(path.last()[metrics::NORM2] > 0.1);
    }

    /// Two atoms of eigenvalue 1 with teacher energies 3/2 and 1/2 are the
    /// isotropic two-cluster problem through the covariance's modes, for
    /// DP-GD and clipped DP-SGD at κ² = 0.7 and p = 0.75.
    #[test]
    fn a_split_teacher_over_equal_eigenvalues_is_the_isotropic_two_cluster_solve() {
        let cov = Covariance::from_columns(&[1.0, 1.0], &[0.5, 0.5], &[1.5, 0.5], "c")
            .unwrap()
            .unwrap();
        let mix = TwoCluster {
            balance: 0.75,
            within: 0.7,
        };
        let gd = two_cluster_params();
        let sgd = DmftParams {
            sample_rate: 0.3,
            clip: 0.5,
            ..gd
        };
        for p in [gd, sgd] {
            let iso = solve_two_cluster(&p, None, &mix, None, &|| false).unwrap();
            let spec = solve_two_cluster(&p, Some(&cov), &mix, None, &|| false).unwrap();
            for (k, v) in &iso.mean {
                for (t, (a, b)) in v.iter().zip(&spec.mean[k]).enumerate() {
                    assert!((a - b).abs() <= 1e-9 * (1.0 + a.abs()), "{k} at t = {t}: {a} vs {b}");
                }
            }
        }
    }
}
