//! The spectral measures of A = XᵀX for rows xᵢ = Σ^{1/2}zᵢ/√d at aspect
//! ratio δ (docs/theory.md §3.2, "With a feature covariance"), and a
//! quadrature for each: what the exact least-squares trajectory integrates.
//!
//! One-point deterministic equivalent: Q(z) = (A − z)⁻¹ ≈ diag(h_k(z)) in
//! Σ's eigenbasis,
//!
//!   h_k(z) = 1/(ω_k a(z) − z),  a = 1/(δ(1 + χ)),  χ(z) = Σ_k w_kω_kh_k(z),
//!
//! one complex scalar fixed point χ per z (Newton, continued from
//! Im z = O(λ₊) down to the real axis). Its traces give four measures on the
//! eigenvalues x of A, each with Stieltjes transform Σ_k w_k c_k h_k(z):
//! μ (c = 1, the spectral law), μ* (c = e_k, teacher-weighted), μ_Σ
//! (c = ω_k) and μ_{eω} (c = e_kω_k); density (1/π)Im of the transform at
//! x + i0. The two-point function (1/d)tr(E_T Q(z₁) Σ Q(z₂)) (E_T = diag e_k)
//! has the deterministic equivalent
//!
//!   T(z₁, z₂) = N/(1 − δa₁a₂S) = (χ₁ − χ₂)/(z₁ − z₂) · N/P,
//!   N = Σ w e ω h₁h₂,  S = Σ w ω² h₁h₂,  P = Σ w ω h₁h₂,
//!
//! (the second form from χ₁ − χ₂ = (a₂ − a₁)S + (z₁ − z₂)P), and its
//! measure ν on pairs (x₁, x₂) splits into a diagonal part of density
//! (1/π)Im χ(x)·R(x), R = Σ w e ω|h|²/Σ w ω|h|², and an absolutely
//! continuous part ν_ac = −Re[T(x₁+i0, x₂+i0) − T(x₁+i0, x₂−i0)]/(2π²).
//!
//! Support: with s = −1/m the Bai–Silverstein inverse is
//! δx(s) = s + δΣ w ω s/(s − ω) and its edges are the roots of
//! φ(s) = δΣ w (ω/(ω − s))² = 1 (φ convex between poles: one root left of
//! the smallest ω, one right of the largest, none or two between
//! neighbours — a gap). Each interval [α, β] gets K Gauss–Chebyshev nodes
//! of the second kind, x_j = c + r cos(jπ/(K + 1)), weight
//! r sin(jπ/(K + 1))/(K + 1)·Im(transform); a node at 0 carries each
//! measure's mass minus the others' (the atom at 0 when δ > 1). With Σ = I
//! these are exactly [`propdp_core::spectrum::MarchenkoPastur::rule`]'s.
//!
//! # References
//! - Z. Bai, J. W. Silverstein, *Spectral Analysis of Large Dimensional
//!   Random Matrices*, Springer (2010), §6.2 (the inverse x(m) and the support).
//! - A. Atanasov, B. Bordelon, J. A. Zavatone-Veth, C. Paquette,
//!   C. Pehlevan, "Two-point deterministic equivalence for stochastic
//!   gradient dynamics in linear models", arXiv:2502.05074 (2025).

use nalgebra::{Complex, DMatrix, SymmetricEigen};
use propdp_core::covariance::Covariance;

type C64 = Complex<f64>;

/// Eigenvalues of the weighted ν_ac matrix below this fraction of the largest
/// are dropped (rounding: its entries carry relative errors of about 1e-13).
const MODE_CUTOFF: f64 = 1e-13;

/// Newton steps allowed per point of the continuation.
const NEWTON_STEPS: usize = 60;

/// The limit law of XᵀX with a feature covariance at aspect ratio δ.
#[derive(Debug, Clone)]
pub(crate) struct Spectrum {
    /// (ω, w, w·e) per atom.
    atoms: Vec<(f64, f64, f64)>,
    delta: f64,
    /// The support's intervals, left to right.
    intervals: Vec<(f64, f64)>,
}

/// The resolvent at one point: χ and h_k.
struct Resolvent {
    chi: C64,
    h: Vec<C64>,
}

/// A quadrature rule for the measures (node 0 is x = 0).
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    /// Nodes.
    pub(crate) x: Vec<f64>,
    /// Weights of μ, μ*, μ_Σ and μ_{eω}.
    pub(crate) w: Vec<f64>,
    pub(crate) w_teacher: Vec<f64>,
    pub(crate) w_sigma: Vec<f64>,
    pub(crate) w_cross: Vec<f64>,
    /// μ_Σ's weights times R(x): the diagonal part of ν.
    pub(crate) w_diag: Vec<f64>,
    /// ν_ac's nodes are `x[pair_start..]` (the one-point weights are 0 there).
    pub(crate) pair_start: usize,
    /// ν_ac on its nodes as Σ_r λ_r u_r u_rᵀ (eigenpairs, the negligible dropped).
    pub(crate) modes: Vec<(f64, Vec<f64>)>,
    /// ⟨eω⟩, ν's total mass.
    pub(crate) cross_mass: f64,
}

impl Spectrum {
    /// The law of `cov` at δ = `delta`.
    pub(crate) fn new(cov: &Covariance, delta: f64) -> Self {
        let atoms: Vec<(f64, f64, f64)> = cov
            .atoms()
            .iter()
            .map(|a| (a.eigenvalue, a.weight, a.weight * a.teacher))
            .collect();
        let mut spec = Spectrum {
            atoms,
            delta,
            intervals: Vec::new(),
        };
        spec.intervals = spec.support();
        spec
    }

    /// The support's intervals.
    pub(crate) fn intervals(&self) -> &[(f64, f64)] {
        &self.intervals
    }

    /// λ₊.
    pub(crate) fn right_edge(&self) -> f64 {
        self.intervals.last().expect("a non-empty support").1
    }

    fn phi(&self, s: f64) -> f64 {
        self.delta
            * self
                .atoms
                .iter()
                .map(|&(om, w, _)| w * (om / (om - s)).powi(2))
                .sum::<f64>()
    }

    fn dphi(&self, s: f64) -> f64 {
        2.0 * self.delta
            * self
                .atoms
                .iter()
                .map(|&(om, w, _)| w * om * om / (om - s).powi(3))
                .sum::<f64>()
    }

    /// x(s)/δ: the eigenvalue of A at the Bai–Silverstein parameter s.
    fn eigenvalue(&self, s: f64) -> f64 {
        let sum: f64 = self.atoms.iter().map(|&(om, w, _)| w * om * s / (s - om)).sum();
        (s + self.delta * sum) / self.delta
    }

    /// The root of φ = 1 in (lo, hi) where φ − 1 changes sign, by bisection.
    fn root(&self, mut lo: f64, mut hi: f64) -> f64 {
        let rising = self.phi(lo) < self.phi(hi);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if (self.phi(mid) < 1.0) == rising {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    fn support(&self) -> Vec<(f64, f64)> {
        let mut poles: Vec<f64> = self.atoms.iter().map(|a| a.0).collect();
        poles.sort_by(f64::total_cmp);
        poles.dedup();
        let inside = |lo: f64, hi: f64| (lo + (hi - lo) * 1e-15, hi - (hi - lo) * 1e-15);
        // left edge: φ rises from 0 (s → −∞) to ∞ (s → ω_min)
        let mut far = -1.0;
        while self.phi(far) >= 1.0 {
            far *= 2.0;
        }
        let (lo, hi) = inside(far, poles[0]);
        let mut edges = vec![self.eigenvalue(self.root(lo, hi))];
        for pair in poles.windows(2) {
            // φ convex on (ω_j, ω_{j+1}): a gap where its minimum is below 1
            let (mut lo, mut hi) = inside(pair[0], pair[1]);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if self.dphi(mid) < 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let bottom = 0.5 * (lo + hi);
            if self.phi(bottom) < 1.0 {
                let (l, _) = inside(pair[0], bottom);
                let (_, h) = inside(bottom, pair[1]);
                edges.push(self.eigenvalue(self.root(l, bottom)));
                edges.push(self.eigenvalue(self.root(bottom, h)));
            }
        }
        let top = *poles.last().expect("atoms");
        let mut far = 2.0 * top;
        while self.phi(far) >= 1.0 {
            far *= 2.0;
        }
        let (lo, hi) = inside(top, far);
        edges.push(self.eigenvalue(self.root(lo, hi)));
        edges.chunks(2).map(|e| (e[0].max(0.0), e[1])).collect()
    }

    /// h_k and χ at z from a starting χ, by Newton; `None` if it does not settle.
    fn newton(&self, z: C64, mut chi: C64) -> Option<C64> {
        for _ in 0..NEWTON_STEPS {
            let a = 1.0 / (self.delta * (1.0 + chi));
            let (mut f, mut df) = (chi, C64::new(1.0, 0.0));
            for &(om, w, _) in &self.atoms {
                let h = 1.0 / (om * a - z);
                f -= w * om * h;
                df -= self.delta * a * a * w * om * om * h * h;
            }
            let step = f / df;
            chi -= step;
            if !chi.re.is_finite() || !chi.im.is_finite() {
                return None;
            }
            if step.norm() <= 1e-15 * (1.0 + chi.norm()) {
                return Some(chi);
            }
        }
        None
    }

    /// The resolvent at z = x + iy (y ≥ 0, the limit from above at y = 0),
    /// continued from y = O(λ₊) down by factors of 10.
    fn resolvent(&self, x: f64, y: f64) -> Resolvent {
        let scale = self.right_edge() + 1.0;
        let mut im = 4.0 * scale;
        let mut chi = -1.0 / C64::new(x, im.max(y));
        while im > y && im > 1e-14 * scale {
            chi = self.newton(C64::new(x, im.max(y)), chi).unwrap_or(chi);
            im *= 0.1;
        }
        self.resolvent_from(x, y, chi)
    }

    /// The resolvent at z = x + iy by Newton from χ = `start` (a solution nearby).
    fn resolvent_from(&self, x: f64, y: f64, start: C64) -> Resolvent {
        let z = C64::new(x, y);
        let chi = self.newton(z, start).unwrap_or(start);
        let a = 1.0 / (self.delta * (1.0 + chi));
        let h = self.atoms.iter().map(|&(om, _, _)| 1.0 / (om * a - z)).collect();
        Resolvent { chi, h }
    }

    /// m(z) = ∫dμ/(x − z) at a real z outside the support (and ≠ 0).
    pub(crate) fn stieltjes(&self, z: f64) -> f64 {
        let r = self.resolvent(z, 0.0);
        self.atoms.iter().zip(&r.h).map(|(&(_, w, _), h)| w * h.re).sum()
    }

    /// The gain G = η²q(1 − q)δ∫x²/(1 − ρ²) dμ of the batch-sampling noise
    /// (docs/theory.md §3.2), by the partial fractions of
    /// [`propdp_core::spectrum::MarchenkoPastur::sgd_noise_gain`]; ∞ when
    /// ηL_q ≥ 2.
    pub(crate) fn noise_gain(&self, lambda: f64, eta: f64, q: f64) -> f64 {
        let (a, b) = (lambda / q, (2.0 - eta * lambda) / (eta * q));
        if b <= self.right_edge() {
            return f64::INFINITY;
        }
        let left = if a > 0.0 { a * a * self.stieltjes(-a) } else { 0.0 };
        let right = b * b * self.stieltjes(b);
        ((1.0 - q) * self.delta / q * (-1.0 + (left - right) / (a + b))).max(0.0)
    }

    /// ν_ac at (x₁, x₂), x₁ ≠ x₂, from the resolvents there.
    fn nu_ac(&self, x1: f64, r1: &Resolvent, x2: f64, r2: &Resolvent) -> f64 {
        let (mut n_pp, mut p_pp, mut n_pm, mut p_pm) = (C64::default(), C64::default(), C64::default(), C64::default());
        for (k, &(om, w, we)) in self.atoms.iter().enumerate() {
            let pp = r1.h[k] * r2.h[k];
            let pm = r1.h[k] * r2.h[k].conj();
            n_pp += we * om * pp;
            p_pp += w * om * pp;
            n_pm += we * om * pm;
            p_pm += w * om * pm;
        }
        let dx = x1 - x2;
        let t_pp = (r1.chi - r2.chi) / dx * n_pp / p_pp;
        let t_pm = (r1.chi - r2.chi.conj()) / dx * n_pm / p_pm;
        -(t_pp - t_pm).re / (2.0 * std::f64::consts::PI * std::f64::consts::PI)
    }

    /// Gauss–Chebyshev nodes with `k` per interval: (x, base weight
    /// r sin φ/(K + 1), distance to the interval's nearer edge, resolvent).
    fn nodes(&self, k: usize) -> Vec<(f64, f64, f64, Resolvent)> {
        let pi = std::f64::consts::PI;
        let mut out = Vec::with_capacity(k * self.intervals.len());
        for &(lo, hi) in &self.intervals {
            let (c, r) = (0.5 * (lo + hi), 0.5 * (hi - lo));
            for j in 1..=k {
                let phi = j as f64 * pi / (k + 1) as f64;
                let xj = c + r * phi.cos();
                out.push((
                    xj,
                    r * phi.sin() / (k + 1) as f64,
                    (xj - lo).min(hi - xj),
                    self.resolvent(xj, 0.0),
                ));
            }
        }
        out
    }

    /// The rule with `k` nodes per interval of the support for the one-point
    /// measures and `k2` for ν_ac (appended after them; see [`Rule`]).
    pub(crate) fn rule(&self, k: usize, k2: usize) -> Rule {
        let pi = std::f64::consts::PI;
        let one = self.nodes(k);
        let n = one.len();
        let mut x = vec![0.0];
        let mut w = vec![0.0; n + 1];
        let mut w_teacher = vec![0.0; n + 1];
        let mut w_sigma = vec![0.0; n + 1];
        let mut w_cross = vec![0.0; n + 1];
        let mut w_diag = vec![0.0; n + 1];
        for (i, (xi, b, _, r)) in one.iter().enumerate() {
            x.push(*xi);
            let (mut m, mut teacher, mut cross, mut num, mut den) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for (&(om, wk, we), h) in self.atoms.iter().zip(&r.h) {
                m += wk * h.im;
                teacher += we * h.im;
                cross += we * om * h.im;
                num += we * om * h.norm_sqr();
                den += wk * om * h.norm_sqr();
            }
            w[i + 1] = b * m;
            w_teacher[i + 1] = b * teacher;
            w_sigma[i + 1] = b * r.chi.im;
            w_cross[i + 1] = b * cross;
            w_diag[i + 1] = w_sigma[i + 1] * num / den;
        }
        let cross_mass: f64 = self.atoms.iter().map(|&(om, _, we)| we * om).sum();
        let teacher_mass: f64 = self.atoms.iter().map(|&(_, _, we)| we).sum();
        let sigma_mass: f64 = self.atoms.iter().map(|&(om, w, _)| w * om).sum();
        w[0] = 1.0 - w[1..].iter().sum::<f64>();
        w_teacher[0] = teacher_mass - w_teacher[1..].iter().sum::<f64>();
        w_sigma[0] = sigma_mass - w_sigma[1..].iter().sum::<f64>();
        w_cross[0] = cross_mass - w_cross[1..].iter().sum::<f64>();
        // ν_ac on its own grid, weighted by the Gauss–Chebyshev weights π·base; on the
        // diagonal its (finite) limit by Richardson extrapolation of symmetric offsets
        let two = self.nodes(k2);
        let n2 = two.len();
        let mut mat = DMatrix::<f64>::zeros(n2, n2);
        for i in 0..n2 {
            let (xi, _, edge, ri) = &two[i];
            for j in 0..i {
                let v = self.nu_ac(*xi, ri, two[j].0, &two[j].3);
                mat[(i, j)] = v;
                mat[(j, i)] = v;
            }
            let h = 1e-3 * edge;
            let off = |d: f64| {
                let (a, b) = (
                    self.resolvent_from(xi + d, 0.0, ri.chi),
                    self.resolvent_from(xi - d, 0.0, ri.chi),
                );
                0.5 * (self.nu_ac(*xi, ri, xi + d, &a) + self.nu_ac(*xi, ri, xi - d, &b))
            };
            mat[(i, i)] = (4.0 * off(h) - off(2.0 * h)) / 3.0;
        }
        for i in 0..n2 {
            for j in 0..n2 {
                mat[(i, j)] *= pi * two[i].1 * pi * two[j].1;
            }
        }
        let eig = SymmetricEigen::new(mat);
        let top = eig.eigenvalues.iter().fold(0.0f64, |m, l| m.max(l.abs()));
        let modes = eig
            .eigenvalues
            .iter()
            .enumerate()
            .filter(|(_, l)| l.abs() > MODE_CUTOFF * top)
            .map(|(r, &l)| (l, eig.eigenvectors.column(r).iter().copied().collect()))
            .collect();
        let pair_start = x.len();
        x.extend(two.iter().map(|t| t.0));
        for v in [&mut w, &mut w_teacher, &mut w_sigma, &mut w_cross, &mut w_diag] {
            v.resize(x.len(), 0.0);
        }
        Rule {
            x,
            w,
            w_teacher,
            w_sigma,
            w_cross,
            w_diag,
            pair_start,
            modes,
            cross_mass,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use propdp_core::covariance::TeacherShape;
    use propdp_core::spectrum::MarchenkoPastur;

    fn spectra() -> Vec<Covariance> {
        vec![
            Covariance::from_columns(&[4.0, 1.0], &[0.3, 0.7], &[0.5, 2.0], "c")
                .unwrap()
                .unwrap(),
            Covariance::power_law(1.0, 100.0, 10, TeacherShape::Aligned)
                .unwrap()
                .unwrap(),
            Covariance::from_columns(&[20.0, 1.0], &[0.5, 0.5], &[1.0, 1.0], "c")
                .unwrap()
                .unwrap(),
        ]
    }

    #[test]
    fn the_right_edge_is_the_core_s_and_the_rule_is_marchenko_pastur_s_for_sigma_one() {
        for cov in spectra() {
            for delta in [0.3, 1.0, 2.5] {
                let s = Spectrum::new(&cov, delta);
                let want = cov.right_edge(delta);
                assert!(
                    (s.right_edge() / want - 1.0).abs() < 1e-10,
                    "{} vs {want}",
                    s.right_edge()
                );
            }
        }
        // well-separated atoms at small δ: two intervals
        let two = Spectrum::new(&spectra()[2], 0.1);
        assert_eq!(two.intervals().len(), 2, "{:?}", two.intervals());
        // the isotropic problem through this code: two atoms of eigenvalue 1
        let iso = Covariance::from_columns(&[1.0, 1.0], &[0.5, 0.5], &[1.5, 0.5], "c")
            .unwrap()
            .unwrap();
        for delta in [0.5, 2.0] {
            let (a, b) = (
                Spectrum::new(&iso, delta).rule(16, 8),
                MarchenkoPastur::new(delta).unwrap().rule(16),
            );
            for j in 0..=16 {
                assert!((a.x[j] - b.0[j]).abs() < 1e-13 && (a.w[j] - b.1[j]).abs() < 1e-13);
                assert!(
                    (a.w_teacher[j] - b.1[j]).abs() < 1e-13,
                    "{j}: {} vs {}",
                    a.w_teacher[j],
                    b.1[j]
                );
                assert!(
                    j == 0 || (a.w_diag[j] - b.1[j]).abs() < 1e-13,
                    "{j}: {} vs {}",
                    a.w_diag[j],
                    b.1[j]
                );
            }
            assert!(a.modes.iter().all(|(l, _)| l.abs() < 1e-13));
        }
    }

    #[test]
    fn the_rules_reproduce_wishart_moments() {
        // with A = Σ^{1/2}WΣ^{1/2}, nW Wishart over d: (1/d)tr(E_T A) = ⟨eω⟩/δ,
        // (1/d)tr(A²) = ⟨ω²⟩/δ² + ⟨ω⟩²/δ and the two-point (1/d)tr(E_T AΣA) =
        // ⟨eω³⟩/δ² + ⟨eω⟩⟨ω²⟩/δ (E[WMW] = M/δ² + tr(M)/(dδ) to leading order)
        for cov in spectra() {
            let avg = |f: &dyn Fn(f64, f64) -> f64| -> f64 {
                cov.atoms().iter().map(|a| a.weight * f(a.eigenvalue, a.teacher)).sum()
            };
            for delta in [0.3, 1.0, 2.5] {
                let s = Spectrum::new(&cov, delta);
                let r = s.rule(160, 160);
                let q = |w: &[f64], f: &dyn Fn(f64) -> f64| -> f64 { r.x.iter().zip(w).map(|(x, w)| w * f(*x)).sum() };
                let first = q(&r.w_teacher, &|x| x);
                assert!(
                    (first - avg(&|w, e| e * w) / delta).abs() < 1e-10,
                    "δ = {delta} {:?}: {first} vs {}",
                    s.intervals(),
                    avg(&|w, e| e * w) / delta
                );
                let second = q(&r.w, &|x| x * x);
                let want = avg(&|w, _| w * w) / delta.powi(2) + 1.0 / delta;
                assert!((second - want).abs() < 1e-10 * want, "{second} vs {want}");
                let two: f64 = q(&r.w_diag, &|x| x * x)
                    + r.modes
                        .iter()
                        .map(|(l, u)| {
                            l * u
                                .iter()
                                .zip(&r.x[r.pair_start..])
                                .map(|(u, x)| u * x)
                                .sum::<f64>()
                                .powi(2)
                        })
                        .sum::<f64>();
                let want = avg(&|w, e| e * w.powi(3)) / delta.powi(2) + avg(&|w, e| e * w) * avg(&|w, _| w * w) / delta;
                assert!((two - want).abs() < 1e-9 * want, "δ = {delta}: {two} vs {want}");
            }
        }
    }
}
