//! The long-horizon state evolution with a feature covariance at a per-path
//! cost independent of the number of atoms (docs/theory.md §3.4, "one field
//! per path").
//!
//! The sample side sees the coordinate side only through two per-path
//! quantities: the centred field G_t = Σ_k √(w_kω_k)(Aᵏ_tΘ⊥ᵏ + θ̃ᵏ_t) and the
//! Onsager term Σ_k w_kω_k Oᵏ_t. Neither needs the atoms' processes on every
//! path:
//!
//! - G is a centred Gaussian process independent of the sample side (the
//!   θ̃ᵏ are driven by the ũᵏ ~ GP(0, C_g) and white noise, and Θ⊥ᵏ is the
//!   teacher's part independent of ν). Its covariance over the memory
//!   partition's window values and block sums is exact from the atoms'
//!   state covariances,
//!   Cov G = Σ_k w_kω_k[C_θ̃ᵏ + s²e_k AᵏAᵏᵀ] − ρ·ĀĀᵀ,  Ā = Σ_k (w_kω_ks²e_k/ρ)Aᵏ,
//!   and each path draws G_{t+1} by Gaussian conditioning on its own window
//!   and block sums, as the generator of ũ does (§3.3).
//! - Oᵏ is the linear response of atom k to the path's own selected
//!   gradients, Oᵏ_t = Σ_{s<t} Rᵏ_θ(t,s)ĝ_s, and every atom's response obeys
//!   the same recursion with the same kernel. So Σ_k w_kω_kOᵏ_t =
//!   Σ_s R_w(t,s)ĝ_s with R_w = Σ_k w_kω_kRᵏ_θ: exact over the last NEAR + 1
//!   gradients (the virtual paths of §3.3) and, over the memory partition's
//!   older blocks B, R_w's block mean times the path's block sum of ĝ. The
//!   block means come from block lanes: virtual paths seeded with the
//!   impulses of a whole block (a leaving lane joins its block's lane as the
//!   partition's blocks merge).
//!
//! Per path and step the work is that of one isotropic atom; per atom it is
//! deterministic (the virtual paths, the block lanes, the state covariance).
//! An intercept's field β_t (docs/theory.md §3.5) shifts every path's and
//! baseline's field as in the per-atom solver.
//!
//! # References
//! - Rasmussen, Williams (2006), *Gaussian Processes for Machine Learning*, §2.2
//!   (Gaussian conditioning).
//! - Hackbusch (2015), *Hierarchical Matrices: Algorithms and Analysis*
//!   (block means of a smooth kernel on blocks growing with their distance).

use nalgebra::{DMatrix, DVector};
use propdp_core::covariance::Atom;
use propdp_core::problem::TwoCluster;

use super::combine::combine;
use super::state::{Slot, StateCovariance};
use crate::dynamics::dyadic::{Partition, Track};
use crate::dynamics::path::{DmftParams, Intercept};
use crate::dynamics::reverse_mode::Events;
use crate::dynamics::rqmc::{Normals, normals, rqmc_block4, rqmc_block4_into};
use crate::numerics::axpy;

use super::generator::{GEN_WINDOW, Generator, conditional_weights};
use super::participation::{eligible, noise_window, path_groups, selections};
use super::step::{
    Coordinate, History, ISOTROPIC, Kernel, MEMORY_RULE, NEAR, Run, StepBuffers, curvature_bound, drift, far_adjoints,
    memory, next_intercept, recursion, sample_step, step_record, teacher, teacher_field, theta_positions,
    virtual_memory,
};
use super::stop::Stop;
use super::stop::Watch;
use super::window::{Window, truncation, widen};

/// One atom's deterministic side: its coordinate, its virtual paths (lane
/// s % W: Rᵏ(·, s)) and its block lanes (lane b: Σ_{s+1∈B_b} Rᵏ(·, s)).
struct Atomic {
    coord: Coordinate,
    virt: Track<History>,
    vv: Vec<f64>,
    lanes: Track,
    lv: Vec<f64>,
}

/// β = Σ_FF⁻¹Σ_Ft on the features scaled to unit variance (block sums and
/// single values differ in scale by the blocks' lengths); features of zero
/// variance get weight 0. The features are entries 0..f of `cov`, the
/// target entry f; only its upper triangle (i ≤ j) is read.
fn scaled_weights(cov: &DMatrix<f64>, f: usize) -> DVector<f64> {
    let sff = |i: usize, j: usize| if i <= j { cov[(i, j)] } else { cov[(j, i)] };
    let top = (0..f).map(|i| sff(i, i)).fold(0.0, f64::max);
    let keep: Vec<usize> = (0..f).filter(|&i| sff(i, i) > 1e-14 * top).collect();
    let mut beta = DVector::zeros(f);
    if keep.is_empty() {
        return beta;
    }
    let scale: Vec<f64> = keep.iter().map(|&i| sff(i, i).sqrt()).collect();
    let m = DMatrix::from_fn(keep.len(), keep.len(), |i, j| {
        sff(keep[i], keep[j]) / (scale[i] * scale[j])
    });
    let v = DVector::from_fn(keep.len(), |i, _| cov[(keep[i], f)] / scale[i]);
    let b = conditional_weights(m, &v);
    for (i, &k) in keep.iter().enumerate() {
        beta[k] = b[i] / scale[i];
    }
    beta
}

/// One replicate with a spectrum of two or more atoms.
// The kernels are indexed as in docs/theory.md §3 (R_θ(t,s), C_g(t,s), …).
#[allow(clippy::needless_range_loop, clippy::too_many_lines)]
pub(super) fn replicate(
    p: &DmftParams,
    atoms: Option<&[Atom]>,
    icp: Option<&Intercept>,
    mix: Option<&TwoCluster>,
    seed: u32,
    window: usize,
    watch: &Watch,
) -> Result<Run, Stop> {
    let (tt, n, a, eta) = (p.steps, p.points, 1.0 / p.delta, p.eta);
    let nf = n as f64;
    let decay = 1.0 - eta * p.lambda;
    let spectrum = atoms.unwrap_or(&ISOTROPIC);
    let rho = teacher_field(p.s2, spectrum);
    // RQMC dimensions in groups of four: group 0 (ν, the label), group t + 1 (G_{t+1}'s
    // innovation, S_t) for every step
    let first = rqmc_block4(n, 0, seed);
    // every path's cyclic group (§3.7) from its first point's last coordinate
    let groups_of = path_groups(p, first.iter().map(|x| x[3]));
    let gaussian: Vec<f64> = normals(&first, 0).iter().map(|z| rho.sqrt() * z).collect();
    let teacher = teacher(p, rho, &first, gaussian, icp, mix);
    let w = window;
    let mut win = Window::new(w);
    // per path: the field G, the selected gradients ĝ and the baseline's ĝ⁰ (value at index
    // s + 1: the gradient of step s, whose response starts at s + 1), on the memory partition
    let mut mem = Partition::new(NEAR + 1, MEMORY_RULE);
    let mut field: Track<History> = Track::new(n, NEAR + 1);
    let mut grads: Track<History> = Track::new(n, NEAR + 1);
    let mut grads0: Track<History> = Track::new(n, NEAR + 1);
    let mut modes: Vec<Atomic> = spectrum
        .iter()
        .map(|m| Atomic {
            coord: Coordinate::new(m, p.s2, rho),
            virt: Track::new(w, NEAR + 1),
            vv: vec![0.0; w],
            lanes: Track::new(0, NEAR + 1),
            lv: Vec::new(),
        })
        .collect();
    {
        let step = mem.advance();
        let zero = vec![0.0; n];
        field.push(&mem, &step, &zero);
        grads.push(&mem, &step, &zero);
        grads0.push(&mem, &step, &zero);
        for m in &mut modes {
            m.virt.push(&mem, &step, &m.vv);
            m.lanes.push(&mem, &step, &m.lv);
        }
    }
    let mut generator = Generator::new(n);
    let mut events = Events::new(n, w, p.mean_rate(), p.steps);
    let h_max = curvature_bound(p.loss);
    let mut amp_w = vec![0.0];
    // the intercept's field β_t (docs/theory.md §3.5; 0 without one)
    let mut beta = 0.0;
    // Σ_{s<t} Aᵏ_s per atom, for the amplitudes' block sums
    let mut amp_cum: Vec<Vec<f64>> = vec![vec![0.0]; modes.len()];
    let mut out = Vec::with_capacity(tt + 1);
    let mut moments = Vec::with_capacity(tt + 1);
    let mut approx_error: f64 = 0.0;
    let mut sv = StepBuffers::new(n);
    let (mut on_w, mut on0_w) = (vec![0.0; n], vec![0.0; n]);
    let mut vv = vec![0.0; w];
    let mut lanes_w: Vec<f64> = Vec::new();
    let (mut acc_buf, mut vmem) = (vec![0.0; w], vec![0.0; w]);
    // the paths' field G_t (its history is kept in single precision) and G_{t+1}
    let (mut thc, mut next) = (vec![0.0; n], vec![0.0; n]);
    let mut lmem_buf: Vec<f64> = Vec::new();
    // Σ_k w_kω_k·(atom k's state covariance): the field's θ̃ part
    let mut joint = StateCovariance::new();
    // this step's draws (group t + 1) and their normals
    let (mut step_draws, mut normal_buf) = (Vec::new(), Normals::default());
    for t in 0..=tt {
        watch.check(t, tt)?;
        // the window, wider from any step at which it widened in place
        let w = win.w;
        if t < tt {
            rqmc_block4_into(&mut step_draws, n, t + 1, seed);
        } else {
            step_draws.clear();
        }
        // 1. the Onsager terms Σ_s R_w(t,s)ĝ_s: exact over the window, block means before it
        let onsager = |x: &Track<History>, out: &mut [f64]| {
            let terms = (t.saturating_sub(NEAR).max(1)..=t)
                .map(|j| (vv[(j - 1) % w], x.value(&mem, j)))
                .chain(
                    mem.blocks()
                        .iter()
                        .enumerate()
                        .map(|(b, &(b0, b1))| (lanes_w[b] / (b1 - b0) as f64, x.sum(b))),
                );
            combine(out, terms);
        };
        onsager(&grads, &mut on_w);
        if teacher.stein() {
            onsager(&grads0, &mut on0_w);
        }
        let amp = amp_w[t];
        let selection = selections(p, t, &step_draws, n, &groups_of);
        let loss = sample_step(
            p,
            amp,
            beta,
            &teacher,
            rho * amp,
            &thc,
            &on_w,
            &on0_w,
            &selection,
            &mut sv,
        );
        let (mt, mom, c_tt) = step_record(
            p,
            t,
            true,
            rho,
            amp,
            modes.iter().map(|m| &m.coord),
            &loss,
            &teacher.surrogate,
            icp.map(|c| (beta, c.teacher)),
            mix.map(|m| (m, icp)),
        )?;
        out.push(mt);
        moments.push(mom);
        if t == tt {
            break;
        }
        // 2–3. C_g(t, ·) and ũ_t's conditional law, in every atom's state covariance
        let cond = generator.conditional(&sv.g, a, t);
        let u_terms = modes[0].coord.state.indexed(&cond.terms);
        for m in &mut modes {
            m.coord.state.extend(Slot::U(t), &u_terms, cond.sd2);
        }
        _ = generator.advance(cond, &sv.g);
        // 4. R_g(t, t − m), m < W, by reverse mode (§3.3)
        let acc = &mut acc_buf[..w.min(t + 1)];
        approx_error = approx_error.max(far_adjoints(&mut events, (t, w, p.steps), &vv, eta, &sv.h, acc, a / nf));
        events.record(t, w, &sv.h, &vv);
        let kernel = Kernel::new(acc.iter().map(|x| a * x / nf).collect(), &mem, t);
        // 5–6. the drift and the truncation estimate
        let elig = eligible(p, t, &groups_of);
        let drift = drift(p, rho, &teacher, &sv, &kernel.rg, &amp_w, t, a, elig.as_deref());
        // the intercept's field at t + 1 (docs/theory.md §3.5)
        beta = next_intercept(p, icp, beta, &sv.c, elig.as_deref());
        let (dropped, grow) = truncation(&vv, &kernel.rg, &win, t, p, h_max, c_tt)?;
        approx_error = approx_error.max(dropped);
        if let Some(wanted) = grow {
            let atoms = modes.len();
            let virtual_paths = modes.iter_mut().map(|m| (&mut m.virt, &mut m.vv));
            let buffers = [&mut vv, &mut acc_buf, &mut vmem];
            widen(p, atoms, &mut events, virtual_paths, buffers, &mut win, wanted, t);
        }
        let w = win.w;
        sv.c0
            .iter_mut()
            .zip(&selection)
            .for_each(|(x, &s)| *x = if s { *x } else { 0.0 });
        // 7. per atom: the virtual paths, the block lanes, the amplitude and θ̃ᵏ_{t+1}'s entry
        let (near, far) = (&kernel.near, &kernel.far);
        vv.fill(0.0);
        lmem_buf.resize(lanes_w.len(), 0.0);
        let at = theta_positions(&modes[0].coord.state, t, &kernel, &mem);
        for m in &mut modes {
            let eta_om = eta * m.coord.omega;
            m.virt.reset_lane(t % w);
            m.vv[t % w] = 0.0;
            virtual_memory(&m.virt, &mem, (t, w), (near, far), &mut vmem);
            recursion(&mut m.vv, decay, eta_om, &vmem, None);
            m.vv[t % w] += 1.0;
            axpy(&mut vv, m.coord.share, &m.vv);
            let lmem = &mut lmem_buf[..m.lv.len()];
            memory(&m.lanes, &mem, t, near, far, lmem);
            recursion(&mut m.lv, decay, eta_om, lmem, None);
            m.coord
                .step(t, &kernel, &amp_w, drift, decay, eta, p.sigma, &p.strategy, &at);
        }
        // 8. G_{t+1} by conditioning on its window (indices t − NEAR..=t) and block sums
        let slots: Vec<Slot> = (t.saturating_sub(NEAR)..=t)
            .map(Slot::Theta)
            .chain(mem.blocks().iter().map(|&b| Slot::ThetaBlock(b)))
            .chain([Slot::Theta(t + 1)])
            .collect();
        let dim = slots.len();
        // every atom's state has the same layout
        let pos: Vec<usize> = slots.iter().map(|s| modes[0].coord.state.position(s)).collect();
        // column-major as nalgebra stores it; the upper triangle (i ≤ j), then mirrored:
        // Σ_k w_kω_kC_θ̃ᵏ from the atoms' summed state, Cov(·, j) from its row j (symmetric:
        // one row instead of a column's strides)
        let parts: Vec<(f64, &StateCovariance)> = modes.iter().map(|m| (m.coord.share, &m.coord.state)).collect();
        joint.follow(&parts);
        let mut acc = vec![0.0; dim * dim];
        for (j, col) in acc.chunks_exact_mut(dim).enumerate() {
            let row = joint.row(pos[j]);
            for (x, &pi) in col[..=j].iter_mut().zip(&pos) {
                *x = row[pi];
            }
        }
        let mut amp_bar = vec![0.0; dim];
        let mut ampl = vec![0.0; dim];
        for (m, cum) in modes.iter().zip(&mut amp_cum) {
            let c = &m.coord;
            cum.push(cum[t] + c.amp[t]);
            for (x, s) in ampl.iter_mut().zip(&slots) {
                *x = match *s {
                    Slot::Theta(s) => c.amp[s],
                    Slot::ThetaBlock((b0, b1)) => cum[b1] - cum[b0],
                    _ => unreachable!("θ̃ entries only"),
                };
            }
            for (j, col) in acc.chunks_exact_mut(dim).enumerate() {
                let tj = c.share * c.teacher * ampl[j];
                for (x, &ai) in col[..=j].iter_mut().zip(&ampl) {
                    *x += ai * tj;
                }
            }
            axpy(&mut amp_bar, c.amp_share, &ampl);
        }
        for (j, col) in acc.chunks_exact_mut(dim).enumerate() {
            for (x, &ai) in col[..=j].iter_mut().zip(&amp_bar) {
                *x -= rho * ai * amp_bar[j];
            }
        }
        // the upper triangle: G_{t+1}'s features 0..f and G_{t+1} itself, f
        let cov = DMatrix::from_vec(dim, dim, acc);
        let f = dim - 1;
        let beta = scaled_weights(&cov, f);
        let sd = (cov[(f, f)] - beta.dot(&cov.view((0, f), (f, 1)))).max(0.0).sqrt();
        let window_len = t + 1 - t.saturating_sub(NEAR);
        let terms = beta.iter().enumerate().map(|(i, &bi)| {
            let values = if i < window_len {
                field.value(&mem, t.saturating_sub(NEAR) + i)
            } else {
                field.sum(i - window_len)
            };
            (bi, values)
        });
        combine(&mut next, terms);
        for (x, z) in next.iter_mut().zip(normal_buf.of(&step_draws, 0)) {
            *x += sd * *z;
        }
        // then the windows and blocks of step t + 1
        let step = mem.advance();
        field.push(&mem, &step, &next);
        std::mem::swap(&mut thc, &mut next);
        grads.push(&mem, &step, &sv.g);
        grads0.push(&mem, &step, &sv.c0);
        let theta_window: Vec<usize> = ((t + 1).saturating_sub(NEAR)..=t + 1).collect();
        let u_window: Vec<usize> = ((t + 1).saturating_sub(GEN_WINDOW)..=t).collect();
        for m in &mut modes {
            m.virt.push(&mem, &step, &m.vv);
            m.lanes.push(&mem, &step, &m.lv);
            if let Some((leaving, plan)) = &step.merge {
                // the leaving index e carries ĝ_{e−1}, whose response is virtual lane (e − 1) % W
                let lane = leaving.checked_sub(1).map(|s| s % w);
                m.lanes.regroup(plan, (&m.virt, lane));
                m.lv = m.lanes.value(&mem, t + 1).to_vec();
            }
        }
        let layout = modes[0].coord.state.layout(
            (&theta_window, mem.blocks()),
            (&u_window, generator.part.blocks()),
            &noise_window(p, t),
        );
        for m in &mut modes {
            m.coord.state.apply(&layout);
        }
        lanes_w = vec![0.0; modes.first().map_or(0, |m| m.lv.len())];
        for m in &modes {
            axpy(&mut lanes_w, m.coord.share, &m.lv);
        }
        amp_w.push(modes.iter().map(|m| m.coord.amp_share * m.coord.amp[t + 1]).sum());
        events.store_row(t + 1, w, &vv);
    }
    Ok(Run {
        metrics: out,
        loss: moments,
        approx_error,
        window: win.w,
    })
}
