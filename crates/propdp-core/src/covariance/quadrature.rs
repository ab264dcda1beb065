//! A spectrum on fewer atoms: its Gauss–Christoffel quadrature in log ω
//! (docs/theory.md §3.4, "Compression").
//!
//! Every atom of a spectrum follows the same state evolution at its own
//! eigenvalue, so a metric is a sum over the atoms of smooth functions of ω,
//! one weighted by the atoms' shares and one by their teacher energies:
//!
//!   Σ_k w_k f(ω_k) + s²·Σ_k w_k e_k g(ω_k).
//!
//! With y = log ω, the K-node Gauss rule of the measure μ = Σ_k w_k δ_{y_k}
//! (nodes y'_j, weights W_j > 0) sums every polynomial in y of degree
//! ≤ 2K − 1 exactly (Golub–Welsch: K steps of Lanczos on diag(y_k) from the
//! vector (√w_k) give μ's Jacobi matrix J_K; its eigenvalues are the nodes
//! and the squared first components of its unit eigenvectors the weights).
//! The teacher's measure ν = Σ_k w_k e_k δ_{y_k} gets the interpolatory
//! weights at the same nodes,
//!
//!   U_j = Σ_k w_k e_k L_j(y_k)   (L_j the Lagrange basis of the nodes),
//!
//! exact for degree ≤ K − 1 (Σ U_j = Σ w e and, for K ≥ 2, Σ U_j y'_j = Σ w e y).
//! Both weight sets are then tilted, v_j → v_j(1 + a + b(ω'_j − ω̄)), so
//! that Σ w, Σ wω, Σ we and Σ weω (the normalisation and the teacher field
//! ρ/s², which the state evolution treats as exact: its metrics at t = 0)
//! are the spectrum's exactly — in log ω they hold to about 10⁻⁵ — and the
//! compressed spectrum has atoms (e^{y'_j}, W_j, U_j/W_j). When some
//! U_j < 0 (or a tilted weight is not positive) no K-node rule of this form
//! keeps the teacher's energies non-negative and there is none. Jacobi matrices nest: J_K is the leading
//! K × K block of any longer one, so [`Compressions`] runs Lanczos once.
//!
//! Log ω rather than ω: on a 20-atom power law of condition 20 (clipped
//! logistic and Huber DP-SGD, T = 10⁴, linearised as the solver measures
//! it), six nodes in log ω moved a metric by 4.7·10⁻⁷ and 3.2·10⁻⁶, six in ω
//! by 1.5·10⁻⁴ and 1.6·10⁻⁵; the equal-width groups in log ω used before
//! moved them by 3.6·10⁻³ with twelve nodes.
//!
//! Lanczos is written here (twice re-orthogonalised against the whole basis:
//! K ≤ a few dozen, so O(n·K²) and stable); nalgebra solves the small
//! symmetric eigenproblem.
//!
//! # References
//! - G. H. Golub, J. H. Welsch, "Calculation of Gauss quadrature rules",
//!   Math. Comp. 23 (1969) 221–230.
//! - W. Gautschi, *Orthogonal Polynomials: Computation and Approximation*
//!   (2004), §1.4 (Gauss–Christoffel quadrature), §2.2.3 (Lanczos).

use nalgebra::DMatrix;

use super::{Covariance, FIELD};

/// A spectrum's Gauss–Christoffel compressions of up to a given number of
/// nodes (module docs): its Jacobi matrix in log ω, computed once.
#[derive(Debug, Clone)]
pub struct Compressions<'a> {
    cov: &'a Covariance,
    /// The Jacobi matrix's diagonal and off-diagonal.
    alpha: Vec<f64>,
    beta: Vec<f64>,
}

impl Covariance {
    /// The compressions of this spectrum onto at most `max_nodes` nodes
    /// (fewer when the spectrum has fewer distinct eigenvalues).
    ///
    /// ```
    /// use propdp_core::covariance::{Covariance, TeacherShape};
    /// let c = Covariance::power_law(1.0, 100.0, 500, TeacherShape::Aligned).unwrap().unwrap();
    /// let rules = c.compressions(16);
    /// assert_eq!(rules.max_nodes(), 16);
    /// let k = rules.rule(8).unwrap();
    /// assert_eq!(k.atoms().len(), 8);
    /// let sum = |c: &Covariance, f: fn(&propdp_core::covariance::Atom) -> f64| c.atoms().iter().map(f).sum::<f64>();
    /// // Σw, Σwω, Σwe and the teacher field Σwωe are the spectrum's
    /// assert!((sum(&k, |a| a.weight * a.eigenvalue) - 1.0).abs() < 1e-12);
    /// assert!((k.teacher_field() / c.teacher_field() - 1.0).abs() < 1e-12);
    /// // two distinct eigenvalues: the two-node rule is the spectrum itself
    /// let two = Covariance::from_columns(&[4.0, 4.0, 1.0], &[0.25, 0.25, 0.5], &[2.0, 2.0, 0.0], "c").unwrap().unwrap();
    /// assert_eq!(two.compressions(8).max_nodes(), 2);
    /// let back = two.compressions(8).rule(2).unwrap();
    /// assert!((back.atoms()[0].eigenvalue - two.atoms()[0].eigenvalue).abs() < 1e-12);
    /// assert!((back.atoms()[0].weight - 0.5).abs() < 1e-12);
    /// ```
    pub fn compressions(&self, max_nodes: usize) -> Compressions<'_> {
        let y: Vec<f64> = self.atoms.iter().map(|a| a.eigenvalue.ln()).collect();
        let spread = y.iter().fold(0.0f64, |m, &v| m.max(v.abs())).max(1.0);
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, z)| x * z).sum::<f64>();
        let mut basis: Vec<Vec<f64>> = Vec::new();
        let (mut alpha, mut beta) = (Vec::new(), Vec::new());
        let mut q: Vec<f64> = self.atoms.iter().map(|a| a.weight.sqrt()).collect();
        let norm = dot(&q, &q).sqrt();
        q.iter_mut().for_each(|x| *x /= norm);
        while basis.len() < max_nodes.max(1) {
            let mut u: Vec<f64> = q.iter().zip(&y).map(|(a, b)| a * b).collect();
            alpha.push(dot(&u, &q));
            basis.push(q);
            if basis.len() == max_nodes.max(1) {
                break;
            }
            for _ in 0..2 {
                for b in &basis {
                    let c = dot(&u, b);
                    u.iter_mut().zip(b).for_each(|(x, bi)| *x -= c * bi);
                }
            }
            let b = dot(&u, &u).sqrt();
            // the measure's support is exhausted: its own rule has this many nodes
            if b <= 1e-12 * spread {
                break;
            }
            beta.push(b);
            q = u.into_iter().map(|x| x / b).collect();
        }
        beta.truncate(alpha.len().saturating_sub(1));
        Compressions { cov: self, alpha, beta }
    }
}

impl Compressions<'_> {
    /// The most nodes a rule can have: the asked-for maximum, or the
    /// spectrum's number of distinct eigenvalues when smaller.
    pub fn max_nodes(&self) -> usize {
        self.alpha.len()
    }

    /// The spectrum on `nodes` atoms (2 ≤ nodes ≤ [`Self::max_nodes`]; the
    /// spectrum itself when it has no more atoms): its Gauss rule in log ω,
    /// normalised again like any spectrum, keeping the original's scale and
    /// file hash. `None` when the teacher's interpolatory weights are not all
    /// non-negative (module docs).
    ///
    /// # Panics
    /// When `nodes` is outside 2..=[`Self::max_nodes`].
    pub fn rule(&self, nodes: usize) -> Option<Covariance> {
        assert!(
            (2..=self.max_nodes()).contains(&nodes),
            "a rule of {nodes} nodes from at most {}",
            self.max_nodes()
        );
        let cov = self.cov;
        if cov.atoms.len() <= nodes {
            return Some(cov.clone());
        }
        let (y, weight, teacher) = self.gauss(nodes)?;
        let omega: Vec<f64> = y.iter().map(|v| v.exp()).collect();
        let moments = |f: &dyn Fn(&super::Atom) -> f64| -> (f64, f64) {
            cov.atoms
                .iter()
                .fold((0.0, 0.0), |(m0, m1), a| (m0 + f(a), m1 + f(a) * a.eigenvalue))
        };
        let weight = tilt(&weight, &omega, moments(&|a| a.weight));
        let teacher = tilt(&teacher, &omega, moments(&|a| a.weight * a.teacher));
        if !(weight.iter().all(|&w| w > 0.0) && teacher.iter().all(|&u| u >= 0.0)) {
            return None;
        }
        let energy: Vec<f64> = teacher.iter().zip(&weight).map(|(u, w)| u / w).collect();
        Covariance::from_columns(&omega, &weight, &energy, FIELD)
            .expect("a Gauss rule's atoms are valid")
            .map(|c| Covariance {
                scale: cov.scale,
                sha256: cov.sha256.clone(),
                ..c
            })
    }

    /// The raw rule of `nodes` nodes (module docs): the nodes y'_j in log ω,
    /// largest first, the Gauss weights W_j and the teacher's interpolatory
    /// weights U_j; `None` when some U_j < 0.
    fn gauss(&self, nodes: usize) -> Option<(Vec<f64>, Vec<f64>, Vec<f64>)> {
        let jacobi = DMatrix::from_fn(nodes, nodes, |i, j| match i.abs_diff(j) {
            0 => self.alpha[i],
            1 => self.beta[i.min(j)],
            _ => 0.0,
        });
        let eig = jacobi.symmetric_eigen();
        let mut rule: Vec<(f64, f64)> = (0..nodes)
            .map(|j| (eig.eigenvalues[j], eig.eigenvectors[(0, j)].powi(2)))
            .collect();
        // the family's order: largest eigenvalue first
        rule.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (y, weight): (Vec<f64>, Vec<f64>) = rule.into_iter().unzip();
        // barycentric weights of the nodes: L_j(v) = λ_j·Π_m (v − y_m)/(v − y_j)
        let lambda: Vec<f64> = (0..nodes)
            .map(|j| 1.0 / (0..nodes).filter(|&m| m != j).map(|m| y[j] - y[m]).product::<f64>())
            .collect();
        let mut teacher = vec![0.0; nodes];
        for a in self.cov.atoms.iter() {
            let v = a.eigenvalue.ln();
            let mass = a.weight * a.teacher;
            match y.iter().position(|&n| n == v) {
                Some(j) => teacher[j] += mass,
                None => {
                    let all: f64 = y.iter().map(|n| v - n).product();
                    for ((u, &n), &l) in teacher.iter_mut().zip(&y).zip(&lambda) {
                        *u += mass * l * all / (v - n);
                    }
                }
            }
        }
        if teacher.iter().any(|&u| u < 0.0) {
            return None;
        }
        Some((y, weight, teacher))
    }
}

/// Weights v_j(1 + a + b(ω_j − ω̄)) (ω̄ the weights' mean node) whose sum
/// and first moment in ω are `target` (Σ m, Σ m·ω of the spectrum): the
/// rule in log ω holds those only approximately (to about 10⁻⁵ with a few
/// nodes), and they are what the state evolution treats as exact — Σ w,
/// Σ wω (the normalisation, which would otherwise rescale every node) and
/// Σ we, Σ weω = ρ/s² (the teacher field, so the metrics at t = 0 are the
/// spectrum's).
fn tilt(v: &[f64], omega: &[f64], target: (f64, f64)) -> Vec<f64> {
    let m = |k: i32| v.iter().zip(omega).map(|(x, w)| x * w.powi(k)).sum::<f64>();
    let (m0, m1, m2) = (m(0), m(1), m(2));
    let mean = m1 / m0;
    let a = target.0 / m0 - 1.0;
    // weights on one node have no first moment to move: their sum only
    let spread = m2 - m1 * mean;
    let b = if spread > 1e-300 {
        (target.1 - (1.0 + a) * m1) / spread
    } else {
        0.0
    };
    v.iter()
        .zip(omega)
        .map(|(x, w)| x * (1.0 + a + b * (w - mean)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::covariance::TeacherShape;

    /// Σ weight·(log ω + shift)^m (times the teacher's energy when `teacher`) over a spectrum's atoms.
    fn moment(c: &Covariance, shift: f64, m: i32, teacher: bool) -> f64 {
        c.atoms()
            .iter()
            .map(|a| a.weight * (a.eigenvalue.ln() + shift).powi(m) * if teacher { a.teacher } else { 1.0 })
            .sum()
    }

    /// Σ over a raw rule's nodes of weight·y^m (teacher weights when `teacher`).
    fn raw_moment(rule: &(Vec<f64>, Vec<f64>, Vec<f64>), m: i32, teacher: bool) -> f64 {
        let (y, w, u) = rule;
        let v = if teacher { u } else { w };
        y.iter().zip(v).map(|(y, v)| v * y.powi(m)).sum()
    }

    /// The raw K-node rule sums polynomials in log ω of degree ≤ 2K − 1
    /// exactly and, with the teacher's weights, those of degree ≤ K − 1;
    /// the tilted rule keeps Σw, Σwω, Σwe and Σweω (so no renormalisation
    /// moves it) and, from four nodes on, its weights within 10⁻⁴ of the raw
    /// ones.
    #[test]
    fn a_rule_sums_polynomials_in_log_eigenvalue_exactly() {
        for shape in [TeacherShape::Spread, TeacherShape::Aligned, TeacherShape::AntiAligned] {
            let c = Covariance::power_law(1.0, 20.0, 50, shape).unwrap().unwrap();
            let rules = c.compressions(8);
            for k in 2..=8 {
                let raw = rules.gauss(k).expect("a smooth teacher keeps its weights positive");
                for m in 0..2 * k as i32 {
                    let (a, b) = (moment(&c, 0.0, m, false), raw_moment(&raw, m, false));
                    assert!(
                        (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                        "{shape:?} K = {k}, degree {m}: {a} vs {b}"
                    );
                }
                for m in 0..k as i32 {
                    let (a, b) = (moment(&c, 0.0, m, true), raw_moment(&raw, m, true));
                    assert!(
                        (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                        "{shape:?} K = {k}, teacher degree {m}: {a} vs {b}"
                    );
                }
                // the next degree is not exact: the rule is a compression, not the spectrum
                let m = 2 * k as i32;
                assert!((moment(&c, 0.0, m, false) - raw_moment(&raw, m, false)).abs() > 1e-12);
                let r = rules.rule(k).expect("tilted weights stay positive");
                assert_eq!(r.atoms().len(), k);
                let sum = |f: &dyn Fn(&crate::covariance::Atom) -> f64| r.atoms().iter().map(f).sum::<f64>();
                assert!((sum(&|a| a.weight) - 1.0).abs() < 1e-12);
                assert!((sum(&|a| a.weight * a.eigenvalue) - 1.0).abs() < 1e-12);
                assert!((sum(&|a| a.weight * a.teacher) - 1.0).abs() < 1e-12);
                assert!(
                    (r.teacher_field() / c.teacher_field() - 1.0).abs() < 1e-12,
                    "{shape:?} K = {k}"
                );
                for (a, (&y, &w)) in r.atoms().iter().zip(raw.0.iter().zip(&raw.1)) {
                    assert!((a.eigenvalue.ln() - y).abs() < 1e-12, "{shape:?} K = {k}: nodes kept");
                    // the tilt falls with the nodes (50 atoms: 4e-2 at K = 2, 2e-5 at 4, 1e-7 at 5)
                    let bound = if k >= 4 { 1e-4 } else { 0.1 };
                    assert!(
                        (a.weight / w - 1.0).abs() < bound,
                        "{shape:?} K = {k}: weight {} vs {w}",
                        a.weight
                    );
                }
            }
        }
    }

    /// A teacher that lives on one atom has interpolatory weights of both
    /// signs (the Lagrange basis at a point between the nodes): no rule then,
    /// rather than negative energies.
    #[test]
    fn a_rough_teacher_has_no_rule_where_its_weights_turn_negative() {
        let n = 40;
        let omega: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let teacher: Vec<f64> = (0..n).map(|i| if i == 17 { 1.0 } else { 0.0 }).collect();
        let c = Covariance::from_columns(&omega, &vec![1.0 / n as f64; n], &teacher, "c")
            .unwrap()
            .unwrap();
        let rules = c.compressions(16);
        let refused = (2..=16).filter(|&k| rules.rule(k).is_none()).count();
        let kept: Vec<_> = (2..=16).filter_map(|k| rules.rule(k)).collect();
        assert!(refused > 0, "every rule kept non-negative energies");
        assert!(kept.iter().all(|r| r.atoms().iter().all(|a| a.teacher >= 0.0)));
    }
}
