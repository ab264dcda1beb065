//! One replicate of the long-horizon state evolution with one coordinate
//! mode per atom (isotropic features: one atom), forward in t
//! (docs/theory.md §3.3): every path carries its own field and Onsager memory,
//!
//!   w_t = A_tν + θ̃_t,   θ̃_{t+1} = (1−ηλ)θ̃_t − η[ũ_t + Σ_k R_g(t,k)θ̃_k] + ησξ̃_t,
//!   r_t = w_t − ηO_t + β_t,   O_{t+1} = (1−ηλ)O_t − η Σ_k R_g(t,k)O_k + ĝ_t,
//!
//! β_t the intercept's deterministic field (docs/theory.md §3.5; 0 without one).
//!
//! # References
//! - Celentano, Cheng, Montanari (2021), *The high-dimensional asymptotics of
//!   first order methods with random data*.
//! - Mignacco, Krzakala, Urbani, Zdeborová (2020), *Dynamical mean-field theory
//!   for stochastic gradient descent in Gaussian mixture classification*.

use propdp_core::covariance::Atom;
use propdp_core::problem::TwoCluster;

use super::state::Slot;
use crate::dynamics::dyadic::{Partition, Track};
use crate::dynamics::path::{DmftParams, Intercept};
use crate::dynamics::reverse_mode::Events;
use crate::dynamics::rqmc::{Normals, normals, rqmc_block4, rqmc_block4_into};
use crate::numerics::axpy;

use super::combine::combine;
use super::generator::{GEN_WINDOW, Generator};
use super::participation::{PathNoise, eligible, noise_window, path_groups, selections};
use super::step::{
    Coordinate, ISOTROPIC, Kernel, MEMORY_RULE, Mode, NEAR, Run, StepBuffers, curvature_bound, drift, far_adjoints,
    memory, next_intercept, recursion, sample_step, step_record, teacher, teacher_field, theta_positions,
    virtual_memory,
};
use super::stop::Stop;
use super::stop::Watch;
use super::window::{Window, truncation, widen};

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
    let k_modes = spectrum.len();
    let rho = teacher_field(p.s2, spectrum);
    // RQMC dimensions in groups of four: group 0 (mode 0's teacher, the label), group t + 1
    // (mode 0's ũ_t innovation, its ξ̃_t, S_t) for every step; modes k ≥ 1: group T + k
    // (their teacher) and group T + K + t(K − 1) + k − 1 (their ũ_t innovation, ξ̃_t)
    let draws = |group: usize| rqmc_block4(n, group, seed);
    let mode_group = |k: usize, t: usize| tt + k_modes + t * (k_modes - 1) + k - 1;
    let first = draws(0);
    // every path's cyclic group (§3.7) from its first point's last coordinate
    let groups_of = path_groups(p, first.iter().map(|x| x[3]));
    let teacher_normals: Vec<Vec<f64>> = (0..k_modes)
        .map(|k| {
            let d = if k == 0 { first.clone() } else { draws(tt + k) };
            normals(&d, 0)
        })
        .collect();
    let mut gaussian = vec![0.0; n];
    for (m, zk) in spectrum.iter().zip(&teacher_normals) {
        let (sd, root) = ((p.s2 * m.teacher).sqrt(), (m.weight * m.eigenvalue).sqrt());
        for i in 0..n {
            gaussian[i] += root * sd * zk[i];
        }
    }
    let teacher = teacher(p, rho, &first, gaussian.clone(), icp, mix);
    let w = window;
    let mut win = Window::new(w);
    // the memory family: per mode θ̃, O, the baseline's O⁰ and the virtual paths V (lane s % W: Rᵏ(·, s))
    let mut mem = Partition::new(NEAR + 1, MEMORY_RULE);
    let mut modes: Vec<Mode> = spectrum
        .iter()
        .zip(&teacher_normals)
        .map(|(m, zk)| {
            let coord = Coordinate::new(m, p.s2, rho);
            let b = coord.sqrt_share * coord.teacher / rho;
            Mode {
                theta_perp: (0..n).map(|i| coord.teacher.sqrt() * zk[i] - b * gaussian[i]).collect(),
                coord,
                theta: Track::new(n, NEAR + 1),
                onsager: Track::new(n, NEAR + 1),
                onsager0: Track::new(n, NEAR + 1),
                virt: Track::new(w, NEAR + 1),
                utrack: Track::new(n, GEN_WINDOW),
                th: vec![0.0; n],
                on: vec![0.0; n],
                on0: vec![0.0; n],
                vv: vec![0.0; w],
                u: vec![0.0; n],
            }
        })
        .collect();
    {
        let step = mem.advance();
        for m in &mut modes {
            m.theta.push(&mem, &step, &m.th);
            m.onsager.push(&mem, &step, &m.on);
            m.onsager0.push(&mem, &step, &vec![0.0; n]);
            m.virt.push(&mem, &step, &m.vv);
        }
    }
    let mut generator = Generator::new(n);
    // each mode's paths' privacy noise w (their last b − 1 values)
    let mut noises: Vec<PathNoise> = modes.iter().map(|_| PathNoise::new(p, n)).collect();
    // each path's recent events (steps with ĥ ≠ 0) for the reverse mode: a ring of capacity E
    let mut events = Events::new(n, w, p.mean_rate(), p.steps);
    let h_max = curvature_bound(p.loss);
    // m_s/ρ of every step so far: the field's amplitude on ν
    let mut amp_w = vec![0.0];
    // the intercept's field β_t (docs/theory.md §3.5; 0 without one)
    let mut beta = 0.0;
    let mut out = Vec::with_capacity(tt + 1);
    let mut moments = Vec::with_capacity(tt + 1);
    let mut approx_error: f64 = 0.0;
    let mut sv = StepBuffers::new(n);
    let (mut thc, mut on_w, mut on0_w) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut vv = vec![0.0; w];
    let mut scratch = vec![0.0; n];
    let (mut acc_buf, mut vmem) = (vec![0.0; w], vec![0.0; w]);
    // this step's draws (group t + 1), the modes' own, and their normals
    let (mut step_draws, mut mode_draws) = (Vec::new(), vec![Vec::new(); k_modes - 1]);
    let mut normal_buf = Normals::default();
    for t in 0..=tt {
        watch.check(t, tt)?;
        // the window, wider from any step at which it widened in place
        let w = win.w;
        if t < tt {
            rqmc_block4_into(&mut step_draws, n, t + 1, seed);
        } else {
            step_draws.clear();
        }
        // 1. the paths: the field's centred part and Onsager terms over the modes, r_t, the
        //    loss, c_t = clip(ℓ'), ℓ''·1{|ℓ'| < C}, the selections
        let amp = amp_w[t];
        thc.fill(0.0);
        on_w.fill(0.0);
        on0_w.fill(0.0);
        for m in &modes {
            let ak = m.coord.amp[t];
            for i in 0..n {
                thc[i] += m.coord.sqrt_share * (ak * m.theta_perp[i] + m.th[i]);
                on_w[i] += m.coord.share * m.on[i];
            }
            axpy(&mut on0_w, m.coord.share, &m.on0);
        }
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
            atoms.is_some(),
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
        // 2–3. C_g(t, ·) and every mode's ũᵏ_t by Gaussian conditioning on its (U_B,
        //    ũ_{t−nw..t−1}): the same weights for every mode, its own innovation
        let cond = generator.conditional(&sv.g, a, t);
        // the modes' own draws this step: (ũ innovation, ξ̃) per path
        for (k, d) in (1..k_modes).zip(&mut mode_draws) {
            rqmc_block4_into(d, n, mode_group(k, t), seed);
        }
        let u_terms = modes[0].coord.state.indexed(&cond.terms);
        for (k, m) in modes.iter_mut().enumerate() {
            let d = if k == 0 { &step_draws } else { &mode_draws[k - 1] };
            // ũ_t = sd·z + Σ_i β_i·F_i over its features F (block sums, then the window)
            let z = normal_buf.of(d, 0);
            let features = (0..cond.beta.len()).map(|i| {
                if i < cond.blocks {
                    m.utrack.sum(i)
                } else {
                    m.utrack.value(&generator.part, t - cond.nw + (i - cond.blocks))
                }
            });
            combine(&mut m.u, cond.beta.iter().copied().zip(features));
            axpy(&mut m.u, cond.sd2.max(0.0).sqrt(), z);
            m.coord.state.extend(Slot::U(t), &u_terms, cond.sd2);
        }
        let step_u = generator.advance(cond, &sv.g);
        for m in &mut modes {
            m.utrack.push(&generator.part, &step_u, &m.u);
        }
        // 4. R_g(t, t − m), m < W: reverse mode from the selected paths (terminal weight ĥ_t;
        //    Rao–Blackwellising it costs every path a pass and did not lower the metrics' spread),
        //    through the field's response R_w = Σ_k w_kω_kRᵏ
        let acc = &mut acc_buf[..w.min(t + 1)];
        approx_error = approx_error.max(far_adjoints(&mut events, (t, w, p.steps), &vv, eta, &sv.h, acc, a / nf));
        events.record(t, w, &sv.h, &vv);
        let kernel = Kernel::new(acc.iter().map(|x| a * x / nf).collect(), &mem, t);
        // 5. the drift
        let elig = eligible(p, t, &groups_of);
        let drift = drift(p, rho, &teacher, &sv, &kernel.rg, &amp_w, t, a, elig.as_deref());
        // the intercept's field at t + 1 (docs/theory.md §3.5)
        beta = next_intercept(p, icp, beta, &sv.c, elig.as_deref());
        // 6. the truncation estimate (once lags ≥ W exist)
        let (dropped, grow) = truncation(&vv, &kernel.rg, &win, t, p, h_max, c_tt)?;
        approx_error = approx_error.max(dropped);
        if let Some(wanted) = grow {
            let atoms = modes.len();
            let virtual_paths = modes.iter_mut().map(|m| (&mut m.virt, &mut m.vv));
            let buffers = [&mut vv, &mut acc_buf, &mut vmem];
            widen(p, atoms, &mut events, virtual_paths, buffers, &mut win, wanted, t);
        }
        let w = win.w;
        // 7. the recursions, per mode; the baseline's own selected gradients ĝ⁰_t = S_t·c⁰_t
        //    drive their Onsager memory
        sv.c0
            .iter_mut()
            .zip(&selection)
            .for_each(|(x, &s)| *x = if s { *x } else { 0.0 });
        let (near, far) = (&kernel.near, &kernel.far);
        vv.fill(0.0);
        let at = theta_positions(&modes[0].coord.state, t, &kernel, &mem);
        for (k, m) in modes.iter_mut().enumerate() {
            let (om, eta_om) = (m.coord.omega, eta * m.coord.omega);
            memory(&m.theta, &mem, t, near, far, &mut scratch);
            let d = if k == 0 { &step_draws } else { &mode_draws[k - 1] };
            let noise = normal_buf.of(d, 1);
            noises[k].correlate(noise);
            for i in 0..n {
                m.th[i] =
                    decay * m.th[i] - eta * (m.coord.sqrt_omega * m.u[i] + om * scratch[i]) + eta * p.sigma * noise[i];
            }
            memory(&m.onsager, &mem, t, near, far, &mut scratch);
            recursion(&mut m.on, decay, eta_om, &scratch, Some(&sv.g));
            if teacher.stein() {
                memory(&m.onsager0, &mem, t, near, far, &mut scratch);
                recursion(&mut m.on0, decay, eta_om, &scratch, Some(&sv.c0));
            }
            m.virt.reset_lane(t % w);
            m.vv[t % w] = 0.0;
            virtual_memory(&m.virt, &mem, (t, w), (near, far), &mut vmem);
            recursion(&mut m.vv, decay, eta_om, &vmem, None);
            m.vv[t % w] += 1.0;
            axpy(&mut vv, m.coord.share, &m.vv);
            m.coord
                .step(t, &kernel, &amp_w, drift, decay, eta, p.sigma, &p.strategy, &at);
        }
        // then the windows and blocks of step t + 1
        let step = mem.advance();
        let theta_window: Vec<usize> = ((t + 1).saturating_sub(NEAR)..=t + 1).collect();
        let u_window: Vec<usize> = ((t + 1).saturating_sub(GEN_WINDOW)..=t).collect();
        for m in &mut modes {
            m.theta.push(&mem, &step, &m.th);
            m.onsager.push(&mem, &step, &m.on);
            m.onsager0.push(&mem, &step, &m.on0);
            m.virt.push(&mem, &step, &m.vv);
        }
        let layout = modes[0].coord.state.layout(
            (&theta_window, mem.blocks()),
            (&u_window, generator.part.blocks()),
            &noise_window(p, t),
        );
        for m in &mut modes {
            m.coord.state.apply(&layout);
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
