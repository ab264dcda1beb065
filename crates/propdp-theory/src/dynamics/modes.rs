//! The coordinate side of the state evolution with a feature covariance
//! (docs/theory.md §3.4): one linear mode per atom k of Σ's spectrum,
//!
//!   θᵏ_{t+1} = (1 − ηλ)θᵏ_t − η[√ω_k u_t + ω_k Σ_s R_g(t,s)θᵏ_s + ω_k M_g(t)Θᵏ] + ησξ_t,
//!
//! solved by its response Rᵏ and amplitude Aᵏ, and the mixtures the sample
//! process of the full-memory solver (`full_memory.rs`) reads: R_w = Σ_k w_kω_kRᵏ, C_w = Σ_k w_kω_kCᵏ,
//! m_t = Σ_k w_kω_ks²e_kAᵏ_t; with the parameter-space norm and overlap.
//!
//! # References
//! - B. Loureiro et al., "Learning curves of generic features maps for
//!   realistic datasets with a teacher-student model", NeurIPS (2021).
//! - B. Bordelon, C. Pehlevan, "Learning curves for SGD on structured
//!   features", ICLR (2022).

use propdp_core::covariance::Atom;
use propdp_core::metrics::{self, Metrics};

use super::noise_kernel::{NoiseKernel, noise_term};
use super::path::{DmftError, DmftParams, step_metrics};

/// The most memory the atoms' responses of a spectral solve may take.
pub(crate) const SPECTRAL_MAX_BYTES: f64 = 2e9;

/// [`step_metrics`] with a covariance: the test error from the prediction
/// space (ρ, m_t, C_w(t,t)), and the parameter-space overlap m₀ and norm q₀.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spectral_metrics(
    p: &DmftParams,
    t: usize,
    rho: f64,
    m_t: f64,
    c_tt: f64,
    m0: f64,
    q0: f64,
    train_loss: f64,
) -> Result<Metrics, DmftError> {
    let mut mt = step_metrics(&DmftParams { s2: rho, ..*p }, t, m_t, c_tt, train_loss)?;
    if !q0.is_finite() || q0 > 1e12 {
        return Err(DmftError::Diverged {
            step: t,
            norm2: q0,
            params: Box::new(*p),
        });
    }
    mt.insert(metrics::PRED_ERR2.into(), c_tt - 2.0 * m_t + rho);
    mt.insert(metrics::EST_ERR2.into(), q0 - 2.0 * m0 + p.s2);
    mt.insert(metrics::OVERLAP.into(), m0);
    mt.insert(metrics::NORM2.into(), q0);
    Ok(mt)
}

/// The metrics of the two-cluster data model at step t (docs/theory.md
/// §3.6): the test error `test_class_err` (from the class-mean field and
/// the Gaussian part's variance C_w(t,t) = θᵀΣ_wθ/d, computed by the caller),
/// train_loss, the parameter-space norm q₀ = ‖θ‖²/d and overlap m₀ = θᵀθ*/d;
/// [`DmftError::Diverged`] when either norm blew up.
pub(crate) fn two_cluster_metrics(
    p: &DmftParams,
    t: usize,
    c_tt: f64,
    m0: f64,
    q0: f64,
    train_loss: f64,
    test_class_err: f64,
) -> Result<Metrics, DmftError> {
    if let Some(&norm2) = [c_tt, q0].iter().find(|x| !x.is_finite() || **x > 1e12) {
        return Err(DmftError::Diverged {
            step: t,
            norm2,
            params: Box::new(*p),
        });
    }
    Ok(Metrics::from([
        (metrics::NORM2.into(), q0),
        (metrics::OVERLAP.into(), m0),
        (metrics::TRAIN_LOSS.into(), train_loss),
        (metrics::TEST_CLASS_ERR.into(), test_class_err),
    ]))
}

/// The coordinate side with a spectrum: per atom k its response R^k(t, s)
/// and amplitude A^k_t (θ^k_t = A^k_tΘ^k + Σ_s R^k(t,s)(−η√ω_k u_s + ησξ_s)).
pub(crate) struct Modes<'a> {
    atoms: &'a [Atom],
    r: Vec<Vec<Vec<f64>>>,
    amp: Vec<Vec<f64>>,
    /// Σ_k w_k C^k(t,t) and Σ_k w_k s²e_k A^k_t: ‖θ_t‖²/d and θ_tᵀθ*/d.
    pub(crate) q0: Vec<f64>,
    pub(crate) m0: Vec<f64>,
}

impl<'a> Modes<'a> {
    pub(crate) fn new(atoms: &'a [Atom], steps: usize) -> Self {
        let k = atoms.len();
        Modes {
            atoms,
            r: vec![vec![vec![0.0; steps + 1]; steps + 1]; k],
            amp: vec![vec![0.0; steps + 1]; k],
            q0: vec![0.0; steps + 1],
            m0: vec![0.0; steps + 1],
        }
    }

    /// Step t → t + 1 of every mode, given R_g(t, ·), M_g(t) and C_g up to
    /// t; writes the mixtures R_w(t+1, ·) = Σ w ω R^k, C_w(t+1, ·) =
    /// Σ w ω C^k into `rw`, `cw` and m_{t+1}/ρ into `amp_w`.
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    pub(crate) fn advance(
        &mut self,
        p: &DmftParams,
        t: usize,
        rg: &[Vec<f64>],
        mg: f64,
        cg: &[Vec<f64>],
        rho: f64,
        rw: &mut [Vec<f64>],
        cw: &mut [Vec<f64>],
        amp_w: &mut [f64],
        kernel: &NoiseKernel,
    ) {
        let (eta, decay) = (p.eta, 1.0 - p.eta * p.lambda);
        let (s2, sig2) = (p.s2, p.sigma * p.sigma);
        for s in 0..=t {
            rw[t + 1][s] = 0.0;
        }
        for tp in 0..=t + 1 {
            cw[t + 1][tp] = 0.0;
        }
        let (mut m_w, mut m0, mut q0) = (0.0, 0.0, 0.0);
        for (k, a) in self.atoms.iter().enumerate() {
            let (om, w, e) = (a.eigenvalue, a.weight, a.teacher);
            let (rk, ak) = (&mut self.r[k], &mut self.amp[k]);
            rk[t + 1][t] = 1.0;
            for s in 0..t {
                let mem: f64 = (s + 1..=t).map(|j| rg[t][j] * rk[j][s]).sum();
                rk[t + 1][s] = decay * rk[t][s] - eta * om * mem;
            }
            let drift: f64 = (0..=t).map(|j| rg[t][j] * ak[j]).sum::<f64>() + mg;
            ak[t + 1] = decay * ak[t] - eta * om * drift;
            for s in 0..=t {
                rw[t + 1][s] += w * om * rk[t + 1][s];
            }
            m_w += w * om * s2 * e * ak[t + 1];
            m0 += w * s2 * e * ak[t + 1];
            // C^k(t+1, t') = s²e A^k A^k + η²ω R^k C_g R^kᵀ + η²σ² R^k K R^kᵀ (K = I: independent noise)
            let v: Vec<f64> = (0..=t)
                .map(|s2i| (0..=t).map(|s| rk[t + 1][s] * cg[s][s2i]).sum())
                .collect();
            let weights = kernel.weights(&rk[t + 1], t);
            for tp in 0..=t + 1 {
                let noise = noise_term(weights.as_deref(), &rk[t + 1], &rk[tp], t, tp);
                let signal: f64 = (0..tp).map(|s| v[s] * rk[tp][s]).sum();
                let c = s2 * e * ak[t + 1] * ak[tp] + eta * eta * om * signal + eta * eta * sig2 * noise;
                cw[t + 1][tp] += w * om * c;
                if tp == t + 1 {
                    q0 += w * c;
                }
            }
        }
        for tp in 0..=t {
            cw[tp][t + 1] = cw[t + 1][tp];
        }
        amp_w[t + 1] = m_w / rho;
        self.m0[t + 1] = m0;
        self.q0[t + 1] = q0;
    }
}
