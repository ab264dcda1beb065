//! One step of a long-horizon replicate, shared by the per-atom solver
//! (`replicate.rs`) and the one-field-per-path solver (`field.rs`): the
//! approximation's constants, the memories Σ_k R_g(t,k)X_k over exact lags
//! and dyadic blocks, the coordinate modes, the teacher and its Stein drift,
//! the sample side's step, the metrics of the generated linear state, and the
//! truncation estimate of R_g's dropped lags (docs/theory.md §3.3).
//!
//! # References
//! - Celentano, Cheng, Montanari (2021), *The high-dimensional asymptotics of
//!   first order methods with random data*.
//! - Mignacco, Krzakala, Urbani, Zdeborová (2020), *Dynamical mean-field theory
//!   for stochastic gradient descent in Gaussian mixture classification*.
//! - Hackbusch (2015), *Hierarchical Matrices: Algorithms and Analysis*
//!   (block means of a smooth kernel on blocks growing with their distance).

use propdp_core::covariance::Atom;
use propdp_core::loss::Loss;
use propdp_core::metrics::Metrics;
use propdp_core::problem::{Strategy, TwoCluster};

use super::combine::combine;
use super::folded;
use super::state::{Slot, StateCovariance};
use super::two_cluster;
use crate::dynamics::dyadic::{Dyadic, Partition, Stored, Track};
use crate::dynamics::modes::spectral_metrics;
use crate::dynamics::path::{DmftError, DmftParams, Intercept, insert_intercept_metrics, step_metrics};
use crate::dynamics::reverse_mode::{EARLY_STRIDE, Events, FAR_RUNS, FAR_STRIDE, FarChange};
use crate::fixed_points::train_loss::{self, LossMoments, LossSums, SurrogateMean};
use crate::numerics::gaussian::quantile;

/// Exact lags of R_g's rows in the memories; older lags act on block sums.
pub const NEAR: usize = 10;

/// Blocks of the memories' far field (α = ¼: R_g varies little within a block).
pub(super) const MEMORY_RULE: Dyadic = Dyadic { alpha: 0.25, beta: 0.5 };

/// How the virtual paths' and the paths' histories are stored: single
/// precision, half the bytes of the largest tracks (their current values,
/// the recursions and every sum stay f64; docs/theory.md §3.3, "Virtual
/// paths in single precision").
pub(super) type History = f32;

/// R_g(t, t − m), m < W, into `acc` by the events' reverse pass
/// (reverse_mode.rs), with the dense pass's far lags (m ≥ 32) run every
/// [`EARLY_STRIDE`] steps from t = W (the window full) and every
/// [`FAR_STRIDE`] steps from t = 2W on, and at the horizon's last step, and
/// reused in between. From 2W the window no longer holds the first steps'
/// transient and the dynamics have relaxed as far as R_θ has decayed over W
/// (the truncation criterion), so the far lags are stationary but for
/// their paths' spread; between W and 2W they still move with the
/// transient, and are reused for fewer steps. What the reuse changes is
/// their drift over a period: each run measures their change since the
/// oldest of the last [`FAR_RUNS`] runs — Σ_B |Σ_{m ∈ B} ΔR_g(t, t − m)|
/// over dyadic lag blocks — per period just ended (the mean drift of the
/// periods between), times 2η·Σ_l |R_θ(t, t − l)| (the truncation
/// estimate's form: a memory error acting through the relaxation), and
/// returns it for `approx_error`. A run is measured once its oldest kept run
/// is FAR_RUNS such periods back (the periods since are in that span) or at
/// the horizon's last step (a reuse too short to span them). The paths'
/// spread between the two runs is in the change too, a FAR_RUNS-th of it
/// per period, so it still over-states the drift (docs/theory.md §3.3).
#[allow(clippy::too_many_arguments)]
pub(super) fn far_adjoints(
    events: &mut Events,
    (t, w, steps): (usize, usize, usize),
    vv: &[f64],
    eta: f64,
    h: &[f64],
    acc: &mut [f64],
    scale: f64,
) -> f64 {
    let last = t + 1 == steps;
    let (from, stride) = if t >= 2 * w {
        (2 * w, FAR_STRIDE)
    } else {
        (w, EARLY_STRIDE)
    };
    let reuse = t >= from && !(t - from).is_multiple_of(stride) && !last;
    match events.adjoints(t, w, vv, eta, h, acc, reuse) {
        // a run one step after the last reused nothing
        Some(FarChange {
            change,
            age,
            since_last,
        }) if since_last > 1 && (age >= FAR_RUNS * since_last || last) => {
            let relaxation: f64 = vv.iter().map(|x| x.abs()).sum();
            2.0 * eta * scale * change * relaxation * since_last as f64 / age as f64
        }
        _ => 0.0,
    }
}

/// One replicate's metrics and truncation estimate.
#[derive(Clone)]
pub(super) struct Run {
    pub(super) metrics: Vec<Metrics>,
    /// Per step: the moments of the training loss's control variate.
    pub(super) loss: Vec<LossMoments>,
    pub(super) approx_error: f64,
    /// The response window it ended with (wider than it began when it widened in place).
    pub(super) window: usize,
}

/// Σ_{l ≤ NEAR} near[l]·X_{t−l} + Σ_B far[B]·X_B of a track, into `out`.
pub(super) fn memory<T: Stored>(
    track: &Track<T>,
    part: &Partition,
    t: usize,
    near: &[f64],
    far: &[f64],
    out: &mut [f64],
) {
    memory_from(track, part, t, (near, far), 0, out);
}

/// [`memory`] of the virtual paths at window `w` (lane s mod W: the
/// response to the impulse at s, its history zeroed when the lane is reborn
/// at s, `Track::reset_lane`): every lane's source is s ≥ t + 1 − W, so its
/// values at indices ≤ s are zero, and the blocks that end there — the
/// memory's blocks older than the window, half of them at T = 10⁴ and
/// W ≈ 850 (27 of 55 at t = 4000) — are zero in every lane and left out.
pub(super) fn virtual_memory<T: Stored>(
    track: &Track<T>,
    part: &Partition,
    (t, w): (usize, usize),
    (near, far): (&[f64], &[f64]),
    out: &mut [f64],
) {
    // block [b0, b1) holds indices b0..b1 − 1, zero in every lane when b1 − 1 ≤ t + 1 − W
    let live = part.blocks().partition_point(|&(_, b1)| b1 + w <= t + 2);
    memory_from(track, part, t, (near, far), live, out);
}

/// [`memory`] over the blocks from `first` on.
fn memory_from<T: Stored>(
    track: &Track<T>,
    part: &Partition,
    t: usize,
    (near, far): (&[f64], &[f64]),
    first: usize,
    out: &mut [f64],
) {
    let terms = near
        .iter()
        .enumerate()
        .map(|(l, &c)| (c, track.value(part, t - l)))
        .chain(far.iter().enumerate().skip(first).map(|(b, &c)| (c, track.sum(b))));
    combine(out, terms);
}

/// x ← (1−ηλ)x − η·mem + drive, one recursion (R1) step.
pub(super) fn recursion(x: &mut [f64], decay: f64, eta: f64, mem: &[f64], drive: Option<&[f64]>) {
    match drive {
        Some(d) => {
            for ((xi, m), di) in x.iter_mut().zip(mem).zip(d) {
                *xi = decay * *xi - eta * m + di;
            }
        }
        None => {
            for (xi, m) in x.iter_mut().zip(mem) {
                *xi = decay * *xi - eta * m;
            }
        }
    }
}

/// sup ℓ'' of a loss (bounds |ĥ| in the truncation estimate).
pub(super) fn curvature_bound(loss: Loss) -> f64 {
    match loss {
        Loss::Logistic | Loss::ConditionalLogistic => 0.25,
        Loss::Huber { .. } | Loss::ConditionalHuber { .. } | Loss::Squared => 1.0,
    }
}

/// One atom of the spectrum on the coordinate side (docs/theory.md §3.4):
/// its constants, its amplitudes and the exact covariance of its linear
/// state. Without a covariance there is one with ω = w = e = 1.
pub(super) struct Coordinate {
    /// ω_k.
    pub(super) omega: f64,
    /// √ω_k.
    pub(super) sqrt_omega: f64,
    /// w_kω_k: the mode's share of the field's covariance and response.
    pub(super) share: f64,
    /// √(w_kω_k).
    pub(super) sqrt_share: f64,
    /// w_k.
    pub(super) weight: f64,
    /// s²e_k, the variance of its teacher coordinate Θᵏ.
    pub(super) teacher: f64,
    /// w_kω_ks²e_k/ρ: its share of the field's amplitude m_t/ρ.
    pub(super) amp_share: f64,
    /// Aᵏ_s for every step so far.
    pub(super) amp: Vec<f64>,
    pub(super) state: StateCovariance,
}

impl Coordinate {
    pub(super) fn new(atom: &Atom, s2: f64, rho: f64) -> Self {
        let (share, teacher) = (atom.weight * atom.eigenvalue, s2 * atom.teacher);
        Coordinate {
            omega: atom.eigenvalue,
            sqrt_omega: atom.eigenvalue.sqrt(),
            share,
            sqrt_share: share.sqrt(),
            weight: atom.weight,
            teacher,
            amp_share: share * teacher / rho,
            amp: vec![0.0],
            state: StateCovariance::new(),
        }
    }

    /// Aᵏ_{t+1} = (1 − ηλ)Aᵏ_t − ηω_k[Σ_j R_g(t,j)Aᵏ_j + M_g(t)], M_g(t) = D_t − Σ_j R_g(t,j)m_j/ρ,
    /// and θ̃ᵏ_{t+1}'s entry in the state's covariance, its terms at the positions `at`
    /// ([`theta_positions`]) plus the privacy noise ησw_t (independent, or
    /// correlated by `strategy` through an entry w_t of its own).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step(
        &mut self,
        t: usize,
        k: &Kernel,
        amp_w: &[f64],
        drift: f64,
        decay: f64,
        eta: f64,
        sigma: f64,
        strategy: &Strategy,
        at: &[usize],
    ) {
        let om = self.omega;
        let lag: f64 =
            k.rg.iter()
                .enumerate()
                .map(|(l, r)| r * (self.amp[t - l] - amp_w[t - l]))
                .sum();
        let next = decay * self.amp[t] - eta * om * (drift + lag);
        self.amp.push(next);
        // θ̃_t: decay and the lag-0 memory; ũ_t; the older lags; the blocks (as `theta_positions`)
        let mut terms: Vec<(usize, f64)> = Vec::with_capacity(at.len());
        let near0 = k.near.first().map_or(0.0, |&c| -eta * om * c);
        terms.push((at[0], decay + near0));
        terms.push((at[1], -eta * self.sqrt_omega));
        for (l, &cl) in k.near.iter().enumerate().skip(1) {
            terms.push((at[1 + l], -eta * om * cl));
        }
        for (b, &cb) in k.far.iter().enumerate() {
            terms.push((at[k.near.len().max(1) + 1 + b], -eta * om * cb));
        }
        if strategy.is_identity() {
            self.state.extend(Slot::Theta(t + 1), &terms, (eta * sigma).powi(2));
            return;
        }
        // correlated noise (§3.7): w_t an entry of its own, θ̃ᵏ_{t+1} its ησ multiple with no
        // innovation of its own; banded: w_t = (z_t − Σ_{k≥1} c_k w_{t−k})/c₀; BLT:
        // w_t = z_t/c₀ − Σᵢ ωᵢbᵢ,t and the buffers bᵢ,t+1 = θᵢbᵢ,t + w_t entries too
        let c0 = strategy.diagonal();
        let past: Vec<(usize, f64)> = match (strategy.coefficients(), strategy.blt_parameters()) {
            (Some(c), _) => (1..c.len().min(t + 1))
                .map(|k| (self.state.position(&Slot::Noise(t - k)), -c[k] / c0))
                .collect(),
            (None, Some((_, scale))) if t > 0 => scale
                .iter()
                .enumerate()
                .map(|(i, &w)| (self.state.position(&Slot::Buffer(i, t)), -w))
                .collect(),
            (None, _) => Vec::new(),
        };
        self.state.extend(Slot::Noise(t), &past, 1.0 / (c0 * c0));
        if let Some((decay, _)) = strategy.blt_parameters() {
            let noise = self.state.position(&Slot::Noise(t));
            for (i, &theta) in decay.iter().enumerate() {
                let mut terms = vec![(noise, 1.0)];
                if t > 0 {
                    terms.push((self.state.position(&Slot::Buffer(i, t)), theta));
                }
                self.state.extend(Slot::Buffer(i, t + 1), &terms, 0.0);
            }
        }
        terms.push((self.state.position(&Slot::Noise(t)), eta * sigma));
        self.state.extend(Slot::Theta(t + 1), &terms, 0.0);
    }
}

/// The positions, in every atom's state (after ũ_t's entry), of θ̃ᵏ_{t+1}'s
/// terms in [`Coordinate::step`]'s order: θ̃_t, ũ_t, θ̃_{t−l} for the kernel's
/// lags 1 ≤ l ≤ NEAR, then the memory partition's blocks.
pub(super) fn theta_positions(state: &StateCovariance, t: usize, k: &Kernel, mem: &Partition) -> Vec<usize> {
    let mut at = vec![state.position(&Slot::Theta(t)), state.position(&Slot::U(t))];
    at.extend((1..k.near.len()).map(|l| state.position(&Slot::Theta(t - l))));
    at.extend(mem.blocks().iter().map(|&b| state.position(&Slot::ThetaBlock(b))));
    at
}

/// One atom of the spectrum on the coordinate side of a per-path replicate:
/// its [`Coordinate`] and every path's copy of its linear state.
pub(super) struct Mode {
    pub(super) coord: Coordinate,
    /// Θᵏ − b_kν of every path, b_k = √(w_kω_k)s²e_k/ρ: the part of its teacher
    /// coordinate independent of ν.
    pub(super) theta_perp: Vec<f64>,
    pub(super) theta: Track<History>,
    pub(super) onsager: Track<History>,
    pub(super) onsager0: Track<History>,
    pub(super) virt: Track<History>,
    pub(super) utrack: Track<History>,
    pub(super) th: Vec<f64>,
    pub(super) on: Vec<f64>,
    pub(super) on0: Vec<f64>,
    pub(super) vv: Vec<f64>,
    pub(super) u: Vec<f64>,
}

/// R_g(t, t − m) for m < W and the memories' kernel: its exact lags ≤ NEAR
/// and its block means over the memory partition's older blocks.
pub(super) struct Kernel {
    pub(super) rg: Vec<f64>,
    pub(super) near: Vec<f64>,
    pub(super) far: Vec<f64>,
}

impl Kernel {
    pub(super) fn new(rg: Vec<f64>, mem: &Partition, t: usize) -> Self {
        let near: Vec<f64> = rg.iter().take(NEAR + 1).copied().collect();
        let far: Vec<f64> = mem
            .blocks()
            .iter()
            .map(|&(b0, b1)| {
                let s: f64 = (b0.max((t + 1).saturating_sub(rg.len()))..b1).map(|k| rg[t - k]).sum();
                s / (b1 - b0) as f64
            })
            .collect();
        Kernel { rg, near, far }
    }
}

/// Every path's teacher field ν, Stein weight z₀ = ν/√ρ, label and baseline
/// (the label's value the Stein drift's control variate needs: the noise
/// plus b* for a regression, the path's own label for logistic), and
/// E[z₀ | y] for y = +1, −1. `gaussian` is ν drawn from N(0, ρ); a logistic
/// label is folded into it (`folded.rs`): ν' = yν from group 0's second
/// uniform, label +1, E z₀ = E ν'/√ρ; with an intercept (labels of
/// ν + b*, docs/theory.md §3.5) the same uniform gives the label and ν from
/// its tilted law. Two clusters (`mix`): ν ~ N(0, ρ_w) as drawn, labels
/// independent of it from the same uniform (`two_cluster.rs`).
pub(super) struct Teacher {
    pub(super) nu: Vec<f64>,
    pub(super) z0: Vec<f64>,
    pub(super) label: Vec<f64>,
    pub(super) baseline: Vec<f64>,
    pub(super) z0_mean: [f64; 2],
    /// Two clusters (docs/theory.md §3.6): every path's centred label
    /// ỹ = y − (2p − 1), its field shifted by ỹ·m_t; no baselines (`baseline` empty).
    pub(super) centred: Option<Vec<f64>>,
    /// The exact mean of the training loss's control variate (not with two clusters).
    pub(super) surrogate: SurrogateMean,
}

impl Teacher {
    /// Whether the drift is Stein's with its baselines (not two clusters).
    pub(super) fn stein(&self) -> bool {
        self.centred.is_none()
    }
}

pub(super) fn teacher(
    p: &DmftParams,
    rho: f64,
    first: &[[f64; 4]],
    gaussian: Vec<f64>,
    icp: Option<&Intercept>,
    mix: Option<&TwoCluster>,
) -> Teacher {
    let b_star = icp.map_or(0.0, |c| c.teacher);
    let surrogate = SurrogateMean::new(p.loss, rho, p.noise_sd, b_star);
    if let Some(mix) = mix {
        let (label, centred) = two_cluster::labels(mix, first.iter().map(|x| x[1]));
        return Teacher {
            z0: Vec::new(),
            nu: gaussian,
            label,
            baseline: Vec::new(),
            z0_mean: [0.0; 2],
            centred: Some(centred),
            surrogate,
        };
    }
    let n = gaussian.len();
    let (nu, label, baseline, z0_mean) = match (p.loss, icp) {
        (Loss::Huber { .. } | Loss::Squared, _) => {
            let e: Vec<f64> = first.iter().map(|x| p.noise_sd * quantile(x[1])).collect();
            let label = (0..n).map(|i| gaussian[i] + b_star + e[i]).collect();
            (gaussian, label, e.iter().map(|x| x + b_star).collect(), [0.0; 2])
        }
        (Loss::Logistic, None) => {
            let folded = folded::Folded::new(rho);
            let nu = first.iter().map(|x| folded.quantile(x[1])).collect();
            (nu, vec![1.0; n], vec![1.0; n], [folded.mean() / rho.sqrt(), 0.0])
        }
        (Loss::Logistic, Some(_)) => {
            // y = −1 below the cut 1 − π, ν the mirrored tilted law at −b*; y = +1 above, ν tilted at b*
            let (plus, minus) = (
                folded::Folded::tilted(rho, b_star),
                folded::Folded::tilted(rho, -b_star),
            );
            let cut = minus.mass;
            let (nu, label): (Vec<f64>, Vec<f64>) = first
                .iter()
                .map(|x| {
                    if x[1] < cut {
                        (-minus.quantile(1.0 - x[1] / cut), -1.0)
                    } else {
                        (plus.quantile((x[1] - cut) / (1.0 - cut)), 1.0)
                    }
                })
                .unzip();
            let z0_mean = [plus.mean() / rho.sqrt(), -minus.mean() / rho.sqrt()];
            (nu, label.clone(), label, z0_mean)
        }
        (Loss::ConditionalHuber { .. } | Loss::ConditionalLogistic, _) => {
            (gaussian.clone(), gaussian, vec![0.0; n], [0.0; 2])
        }
    };
    Teacher {
        z0: nu.iter().map(|v| v / rho.sqrt()).collect(),
        nu,
        label,
        baseline,
        z0_mean,
        centred: None,
        surrogate,
    }
}

/// The drift (Stein, Rao–Blackwellised): D_t = (a·q/√ρ)·E[z₀(c_t − βc⁰_t) + βE[z₀ | y]·c⁰_t],
/// β = κ²/(ρ + κ²), c⁰ the baseline's slope (E[z₀ | y] ≠ 0 only for logistic labels:
/// folded, or kept with an intercept).
#[allow(clippy::too_many_arguments)]
pub(super) fn stein_drift(
    p: &DmftParams,
    rho: f64,
    teacher: &Teacher,
    c: &[f64],
    c0: &[f64],
    a: f64,
    q: f64,
    eligible: Option<&[bool]>,
) -> f64 {
    let (n, kappa2) = (c.len(), 1.0 + p.noise_sd * p.noise_sd);
    let beta_s = kappa2 / (rho + kappa2);
    let z0 = &teacher.z0;
    // with groups (§3.7) only the paths of the eligible group are selected
    let on = |i: usize| eligible.is_none_or(|e| e[i]);
    let x: f64 = (0..n).filter(|&i| on(i)).map(|i| z0[i] * (c[i] - beta_s * c0[i])).sum();
    // E[z₀c⁰] = E[E[z₀ | y]·c⁰]: given the label the baseline does not depend on ν
    let (plus, minus) =
        c0.iter()
            .zip(&teacher.label)
            .enumerate()
            .filter(|(i, _)| on(*i))
            .fold(
                (0.0, 0.0),
                |(s, m), (_, (&x, &y))| if y < 0.0 { (s, m + x) } else { (s + x, m) },
            );
    let centre = beta_s * teacher.z0_mean[0] * plus + beta_s * teacher.z0_mean[1] * minus;
    a * q * (x + centre) / n as f64 / rho.sqrt()
}

/// The amplitudes' drift D_t: Stein's ([`stein_drift`]), or with two
/// clusters the pathwise Σ_k R_g(t,k)·m_k/ρ + a·q·E[c_t ỹ] (`two_cluster.rs`).
#[allow(clippy::too_many_arguments)]
pub(super) fn drift(
    p: &DmftParams,
    rho: f64,
    teacher: &Teacher,
    b: &StepBuffers,
    rg: &[f64],
    amp_w: &[f64],
    t: usize,
    a: f64,
    eligible: Option<&[bool]>,
) -> f64 {
    let q = p.sample_rate;
    match &teacher.centred {
        Some(centred) => two_cluster::drift(rg, amp_w, t, &b.c, centred, a, q),
        None => stein_drift(p, rho, teacher, &b.c, &b.c0, a, q, eligible),
    }
}

/// The intercept's field at t + 1 (docs/theory.md §3.5): β_{t+1} =
/// (1 − ηλ_b)β_t − η·a·E[ĝ_t] with E[ĝ_t] = q·E[c_t] (the selection
/// Rao–Blackwellised), if one is learned; 0 otherwise.
pub(super) fn next_intercept(
    p: &DmftParams,
    icp: Option<&Intercept>,
    beta: f64,
    c: &[f64],
    eligible: Option<&[bool]>,
) -> f64 {
    match icp.filter(|c| c.learned) {
        Some(icp) => {
            let mean = match eligible {
                None => c.iter().sum::<f64>(),
                Some(e) => c.iter().zip(e).filter(|(_, e)| **e).map(|(c, _)| c).sum::<f64>(),
            } / c.len() as f64;
            (1.0 - p.eta * icp.lambda) * beta - p.eta * p.sample_rate * mean / p.delta
        }
        None => 0.0,
    }
}

/// Step t's metrics (the plain path mean of the loss; `solve` replaces it by
/// the control-variate estimate), the loss's control-variate moments and
/// C_θ(t,t), the field's variance,
/// from the exact moments of the linear state: per mode Var θ̃ᵏ_t, then the mixtures;
/// with an intercept `Some((β_t, b*))` its metrics (docs/theory.md §3.5).
#[allow(clippy::too_many_arguments)]
pub(super) fn step_record<'a>(
    p: &DmftParams,
    t: usize,
    spectral: bool,
    rho: f64,
    amp: f64,
    coords: impl Iterator<Item = &'a Coordinate>,
    loss: &LossSums,
    surrogate: &SurrogateMean,
    intercept: Option<(f64, f64)>,
    clusters: Option<(&TwoCluster, Option<&Intercept>)>,
) -> Result<(Metrics, LossMoments, f64), DmftError> {
    let (mut c_tt, mut m_t, mut q0, mut m0, mut v_own, mut v_spread) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for m in coords {
        let (ak, vk) = (m.amp[t], m.state.var(Slot::Theta(t)));
        c_tt += m.share * (m.teacher * ak * ak + vk);
        m_t += m.share * m.teacher * ak;
        q0 += m.weight * (m.teacher * ak * ak + vk);
        m0 += m.weight * m.teacher * ak;
        v_own += m.share * vk;
        v_spread += m.share * m.teacher * (ak - amp) * (ak - amp);
    }
    if let Some((mix, icp)) = clusters {
        let beta = intercept.map_or(0.0, |(beta, _)| beta);
        let mt = two_cluster::metrics(p, t, mix, (m_t, c_tt), (m0, q0), loss.mean_loss(), icp, beta)?;
        let exact = two_cluster::surrogate_mean(mix, m_t, c_tt, beta);
        return Ok((mt, loss.moments(exact), c_tt));
    }
    let mut mt = if spectral {
        spectral_metrics(p, t, rho, m_t, c_tt, m0, q0, loss.mean_loss())?
    } else {
        step_metrics(p, t, m_t, c_tt, loss.mean_loss())?
    };
    if let Some((beta, b_star)) = intercept {
        insert_intercept_metrics(p, &mut mt, (rho, m_t, c_tt), beta, b_star);
    }
    let v_centred = v_own + v_spread;
    let beta = intercept.map_or(0.0, |(beta, _)| beta);
    Ok((mt, loss.moments(surrogate.at(amp, v_centred, beta)), c_tt))
}

/// Every path's values of one step ([`sample_step`]).
pub(super) struct StepBuffers {
    pub(super) r: Vec<f64>,
    /// c = clip_C(ℓ').
    pub(super) c: Vec<f64>,
    /// ℓ''·1{|ℓ'| < C}.
    pub(super) hh: Vec<f64>,
    /// The selected c and ĥ (0 off the batch).
    pub(super) g: Vec<f64>,
    pub(super) h: Vec<f64>,
    /// The baseline's clipped slope c⁰ at its own Onsager term.
    pub(super) c0: Vec<f64>,
    /// Each path's (ℓ, ℓ', ℓ'') at r_t.
    eval: Vec<(f64, f64, f64)>,
    /// Each path's surrogate fit, then its baseline's (scratch).
    fit: Vec<f64>,
    /// Each path's surrogate loss (the training loss's control variate).
    surrogate: Vec<f64>,
}

impl StepBuffers {
    pub(super) fn new(n: usize) -> Self {
        StepBuffers {
            r: vec![0.0; n],
            c: vec![0.0; n],
            hh: vec![0.0; n],
            g: vec![0.0; n],
            h: vec![0.0; n],
            c0: vec![0.0; n],
            eval: vec![(0.0, 0.0, 0.0); n],
            fit: vec![0.0; n],
            surrogate: vec![0.0; n],
        }
    }
}

/// Step t on every path (§3.3): r_t = A_tν + G_t − η·(Onsager term) + β_t
/// (β_t the intercept's field, §3.5; 0 without; two clusters, §3.6: plus
/// ỹ·m_t, `m_t` the class-mean overlap), the loss and its control
/// variate's surrogate, c, ĥ, the selections and the baselines' slopes
/// (none with two clusters), into `b`.
#[allow(clippy::too_many_arguments)]
pub(super) fn sample_step(
    p: &DmftParams,
    amp: f64,
    beta: f64,
    teacher: &Teacher,
    m_t: f64,
    thc: &[f64],
    on_w: &[f64],
    on0_w: &[f64],
    selection: &[bool],
    b: &mut StepBuffers,
) -> LossSums {
    let eta = p.eta;
    let clip = |d1: f64| if d1.abs() < p.clip { d1 } else { p.clip.copysign(d1) };
    let mut loss = LossSums::default();
    let (nu, label, baseline) = (&teacher.nu, &teacher.label, &teacher.baseline);
    let n = nu.len();
    for i in 0..n {
        let shift = beta + teacher.centred.as_ref().map_or(0.0, |y| y[i] * m_t);
        b.r[i] = amp * nu[i] + thc[i] - eta * on_w[i] + shift;
        b.fit[i] = train_loss::surrogate_fit(amp, nu[i], thc[i] + shift);
    }
    // the losses of every path at once (the logistic loss's in lanes of four)
    p.loss.eval_all(label, &b.r, &mut b.eval);
    p.loss.value_all(label, &b.fit, &mut b.surrogate);
    if !baseline.is_empty() {
        for i in 0..n {
            b.fit[i] = thc[i] - eta * on0_w[i] + beta;
        }
        p.loss.slope_all(baseline, &b.fit, &mut b.c0);
    }
    for (i, &selected) in selection.iter().enumerate().take(n) {
        let (l, d1, d2) = b.eval[i];
        loss.add(l, b.surrogate[i]);
        b.c[i] = clip(d1);
        b.hh[i] = if d1.abs() < p.clip { d2 } else { 0.0 };
        (b.g[i], b.h[i]) = if selected { (b.c[i], b.hh[i]) } else { (0.0, 0.0) };
    }
    if !baseline.is_empty() {
        b.c0.iter_mut().for_each(|x| *x = clip(*x));
    }
    loss
}

/// ρ = s²Σwωe: the variance of the teacher field ν (s² without a covariance).
pub(super) fn teacher_field(s2: f64, spectrum: &[Atom]) -> f64 {
    s2 * spectrum
        .iter()
        .map(|m| m.weight * m.eigenvalue * m.teacher)
        .sum::<f64>()
}

/// The one atom of isotropic features.
pub(super) const ISOTROPIC: [Atom; 1] = [Atom {
    eigenvalue: 1.0,
    weight: 1.0,
    teacher: 1.0,
}];
