//! The logistic channel's quadrature: prox_{Vρ} and the prox-space nodes of
//! the field ω ([`field_nodes`]), and the teacher field given ω
//! (`TeacherGivenField`, L₀ and L₁ of the module docs, by the rule of
//! `conditional_rule`).

use propdp_core::loss::sigmoid;
use propdp_core::panels::{WINDOW, for_each_panel, legendre16};

use crate::numerics::gauss_hermite::NormalRule;

/// Most panels of `LogisticSolver::teacher_rule` and [`conditional_rule`]
/// (ρ up to 3.6e4 and κ up to 240 get their full resolution; the solver's
/// time limit bounds the rest).
pub(super) const TEACHER_PANELS: f64 = 1024.0;

/// Nodes of [`field_nodes`] and [`conditional_rule`] whose weight is below
/// this are skipped: their total weight is below 1e-15.
const PRUNE: f64 = 1e-18;

/// prox_{Vρ}(u): the root of p + V·sigmoid(p) = u, which lies in (u − V, u).
/// Newton safeguarded by bisection on that bracket.
pub fn prox(u: f64, v: f64) -> f64 {
    prox_impl(u, v, u - v * sigmoid(u - 0.5 * v))
}

fn prox_impl(u: f64, v: f64, start: f64) -> f64 {
    if !(u.is_finite() && v.is_finite() && v >= 0.0) {
        return f64::NAN;
    }
    let (mut lo, mut hi) = (u - v, u);
    let mut p = start.clamp(lo, hi);
    let scale = 1e-15 * (1.0 + u.abs());
    let mut f_prev = f64::INFINITY;
    // Newton's method cycles on this sigmoid-shaped equation for some (u, V):
    // bisect whenever the step leaves the bracket or |f| fails to halve.
    for _ in 0..300 {
        let s = sigmoid(p);
        let f = p + v * s - u;
        if f.abs() <= scale {
            return p;
        }
        if f > 0.0 {
            hi = p;
        } else {
            lo = p;
        }
        if hi - lo <= 4.0 * f64::EPSILON * (1.0 + p.abs()) {
            return 0.5 * (lo + hi);
        }
        let newton = p - f / (1.0 + v * s * (1.0 - s));
        p = if newton > lo && newton < hi && f.abs() <= 0.5 * f_prev {
            newton
        } else {
            0.5 * (lo + hi)
        };
        f_prev = f.abs();
    }
    p
}

/// Quadrature for expectations over the estimator's field ω ~ N(0, q),
/// written in prox space: with u = −ω and p = prox_{Vρ}(u), i.e.
/// u(p) = p + V·sigmoid(p),
///
///   E[A(p, ω)] = ∫ A(p, −u(p)) φ(u(p)/√q)/√q · (1 + Vρ''(p)) dp.
///
/// The prox has kinks of width O(1) in u near p ≈ ∓ln V, far narrower than √q
/// when σ/λ is large, where Gauss–Hermite in ω does not converge. Panels are
/// cut in u at the images of p ∈ {−40, −36, …, 40} (so p-width ≤ 4 through the
/// kinks and the exponential tails of sigmoid(p) and h(p), which are within
/// e^{−40} of their limits beyond: breaks only to |p| = 20 left 3e-9 in q at
/// σ/λ = 1e4), to u-width ≤ 2√q, and within |u| < `zone.0` to u-width ≤
/// `zone.1` (`TeacherGivenField::zone`); each is mapped to p by the prox and
/// integrated with 16-node Gauss–Legendre. Fills `out` with
/// (p, sigmoid(p), ω, weight), skipping weights below `PRUNE` (1e-18).
pub fn field_nodes(q: f64, v: f64, zone: (f64, f64), out: &mut Vec<(f64, f64, f64, f64)>) {
    field_nodes_shifted(q, v, 0.0, 0.0, zone, out);
}

/// [`field_nodes`] for the shifted argument u = −(ω + β) (an intercept's
/// field β, docs/theory.md §2.6): u ~ N(−β, q), the zone of width `zone.1`
/// centred at `center` in u (where the teacher's moments vary), and each
/// node's ω = −u − β.
pub(super) fn field_nodes_shifted(
    q: f64,
    v: f64,
    beta: f64,
    center: f64,
    zone: (f64, f64),
    out: &mut Vec<(f64, f64, f64, f64)>,
) {
    out.clear();
    let rule = legendre16();
    let sd = q.sqrt();
    let u_of = |p: f64| p + v * sigmoid(p);
    let breaks: [f64; 21] = std::array::from_fn(|i| u_of(-40.0 + 4.0 * i as f64));
    let norm = 1.0 / (sd * (2.0 * std::f64::consts::PI).sqrt());
    // (u, prox(u)) at the last panel's upper end, which is usually the next one's lower end
    let mut last = (f64::NAN, f64::NAN);
    let mut panel = |ua: f64, ub: f64| {
        let pa = if ua == last.0 { last.1 } else { prox(ua, v) };
        let pb = prox(ub, v);
        last = (ub, pb);
        let (mid, half) = (0.5 * (pa + pb), 0.5 * (pb - pa));
        for &(x, w) in rule {
            let p = mid + half * x;
            let sp = sigmoid(p);
            let u = p + v * sp;
            let z = (u + beta) / sd;
            let weight = half * w * (1.0 + v * sp * (1.0 - sp)) * norm * (-0.5 * z * z).exp();
            if weight >= PRUNE {
                out.push((p, sp, -u - beta, weight));
            }
        }
    };
    // the window of u around its mean −β, and the zone within it
    let (lo, hi) = (-beta - WINDOW * sd, -beta + WINDOW * sd);
    let (zlo, zhi) = ((center - zone.0).clamp(lo, hi), (center + zone.0).clamp(lo, hi));
    for (a, b, width) in [
        (lo, zlo, 2.0 * sd),
        (zlo, zhi, zone.1.min(2.0 * sd)),
        (zhi, hi, 2.0 * sd),
    ] {
        if b > a {
            for_each_panel(a, b, &breaks, width, &mut panel);
        }
    }
}

/// The teacher field given the estimator's: for (ν, ω) jointly Gaussian with
/// Var ν = ρ, Cov(ν, ω) = m, Var ω = q, ν | ω ~ N(μ(ω), κ²) with μ = (m/q)·ω
/// and κ² = ρ − m²/q. Holds a rule for E over z ~ N(0, 1) of functions of
/// ν = μ + κz ([`conditional_rule`] at κ), as (κz, e^{−κz}, weight), so that
/// sigmoid(μ + κz) = 1/(1 + e^{−μ}e^{−κz}) costs one division per node.
pub(super) struct TeacherGivenField {
    slope: f64,
    /// The teacher's intercept b*: the moments are of sigmoid(ν + b*).
    offset: f64,
    kappa: f64,
    nodes: Vec<(f64, f64, f64)>,
    /// max |κz| over the nodes.
    reach: f64,
}

/// Nodes (z, weight) of E f(Z), Z ~ N(0, 1), for integrands sigmoid(μ + κZ)
/// and sigmoid'(μ + κZ) at any μ (poles at distance π/κ from the real axis
/// in z): Gauss–Hermite with 24, 64 or 96 nodes while κ ≤ 0.5, 1 or 1.5
/// (each within 4e-15 over |μ| ≤ 5; 96 nodes are 3e-12 off at κ = 2), beyond
/// 16-node Gauss–Legendre panels of width 4 in μ + κz (4/κ in z, at most 2)
/// over |z| ≤ 8.5 (unit test `conditional_rule_is_exact`).
fn conditional_rule(kappa: f64) -> Vec<(f64, f64)> {
    if kappa <= 1.5 {
        let n = if kappa <= 0.5 {
            24
        } else if kappa <= 1.0 {
            64
        } else {
            96
        };
        let rule = NormalRule::shared(n);
        return rule.nodes.iter().copied().zip(rule.weights.iter().copied()).collect();
    }
    // at most TEACHER_PANELS panels
    normal_panels((4.0 / kappa).clamp(2.0 * WINDOW / TEACHER_PANELS, 2.0))
}

/// Nodes (z, weight) of E f(Z), Z ~ N(0, 1): 16-node Gauss–Legendre panels
/// of `width` in z over |z| ≤ [`WINDOW`], weighted by the normal density.
pub(super) fn normal_panels(width: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    for_each_panel(-WINDOW, WINDOW, &[0.0], width, |lo, hi| {
        let (mid, half) = (0.5 * (lo + hi), 0.5 * (hi - lo));
        for &(x, w) in legendre16() {
            let z = mid + half * x;
            out.push((z, half * w * norm * (-0.5 * z * z).exp()));
        }
    });
    out
}

/// Largest |μ| + |κz| for the product form e^{−μ}·e^{−κz} (no overflow).
const PRODUCT_REACH: f64 = 600.0;

impl TeacherGivenField {
    pub(super) fn new(rho: f64, m: f64, q: f64) -> Self {
        let kappa = (rho - m * m / q).max(0.0).sqrt();
        let nodes: Vec<(f64, f64, f64)> = conditional_rule(kappa)
            .into_iter()
            .filter(|&(_, w)| w >= PRUNE)
            .map(|(z, w)| (kappa * z, (-kappa * z).exp(), w))
            .collect();
        let reach = nodes.iter().fold(0.0, |a: f64, n| a.max(n.0.abs()));
        TeacherGivenField {
            slope: m / q,
            offset: 0.0,
            kappa,
            nodes,
            reach,
        }
    }

    /// The same for labels of ν + b* (a teacher's intercept, docs/theory.md §2.6).
    pub(super) fn with_offset(self, b_star: f64) -> Self {
        TeacherGivenField { offset: b_star, ..self }
    }

    /// At ω: [E sigmoid(ν + b*), E sigmoid'(ν + b*)] and, if `first`, also
    /// [E ν·sigmoid(ν + b*), E ν·sigmoid'(ν + b*)] (else zeros), all given ω
    /// (b* = 0 without an intercept).
    pub(super) fn moments(&self, omega: f64, first: bool) -> [f64; 4] {
        let nu0 = self.slope * omega;
        let mu = nu0 + self.offset;
        if mu.abs() > self.saturation() {
            return if mu > 0.0 { [1.0, 0.0, nu0, 0.0] } else { [0.0; 4] };
        }
        let mut acc = [0.0; 4];
        if mu.abs() + self.reach <= PRODUCT_REACH {
            let e = (-mu).exp();
            for &(kz, f, w) in &self.nodes {
                let t = e * f;
                let s = 1.0 / (1.0 + t);
                let ds = t * s * s;
                acc[0] += w * s;
                acc[1] += w * ds;
                if first {
                    acc[2] += w * (nu0 + kz) * s;
                    acc[3] += w * (nu0 + kz) * ds;
                }
            }
        } else {
            for &(kz, _, w) in &self.nodes {
                let nu = mu + kz;
                let e = (-nu.abs()).exp();
                let r = 1.0 / (1.0 + e);
                let s = if nu >= 0.0 { r } else { e * r };
                let ds = e * r * r;
                acc[0] += w * s;
                acc[1] += w * ds;
                if first {
                    acc[2] += w * (nu - self.offset) * s;
                    acc[3] += w * (nu - self.offset) * ds;
                }
            }
        }
        acc
    }

    /// |μ| beyond which the moments are their limits: sigmoid(μ + κz) is
    /// within e^{−40} of 0 or 1 over |z| ≤ 8.5.
    pub(super) fn saturation(&self) -> f64 {
        40.0 + WINDOW * self.kappa
    }

    /// The field ω at which the moments' argument μ + b* is 0 (the zone's
    /// centre; 0 without an intercept).
    pub(super) fn center(&self) -> f64 {
        if self.offset == 0.0 || self.slope == 0.0 {
            0.0
        } else {
            -self.offset / self.slope
        }
    }

    /// The zone |u| < u₀ of [`field_nodes`] where the moments vary, and the
    /// widest u-panel there that resolves them: 4·max(1, κ) in μ (sigmoid(μ)
    /// has poles at distance π from the real axis, so half-width 2 converges
    /// like 3.4^{−32}; given ω, ν is spread over κ, which smooths the moments
    /// on that scale).
    pub(super) fn zone(&self) -> (f64, f64) {
        let slope = self.slope.abs();
        (self.saturation() / slope, 4.0 * self.kappa.max(1.0) / slope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prox_solves_its_equation_to_machine_precision() {
        for k in 0..200 {
            let v = 1e-3 * 1.08f64.powi(k);
            let mut last = f64::NEG_INFINITY;
            for i in 0..4000 {
                let u = -300.0 + 0.1537 * i as f64;
                let p = prox(u, v);
                let f = p + v * sigmoid(p) - u;
                assert!(f.abs() <= 1e-12 * (1.0 + u.abs()), "u={u} v={v} residual {f}");
                assert!(p >= last, "prox not monotone at u={u} v={v}");
                last = p;
            }
        }
    }

    /// The rule for the teacher field given ω against fine Gauss–Legendre
    /// panels (width 1/8 in z over |z| ≤ 12), for both integrands.
    #[test]
    fn conditional_rule_is_exact() {
        let reference = |mu: f64, kappa: f64| {
            let mut acc = [0.0; 2];
            for_each_panel(-12.0, 12.0, &[], 0.125, |a, b| {
                let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
                for &(x, w) in legendre16() {
                    let z = mid + half * x;
                    let wt = half * w * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
                    let s = sigmoid(mu + kappa * z);
                    acc[0] += wt * s;
                    acc[1] += wt * s * sigmoid(-mu - kappa * z);
                }
            });
            acc
        };
        for kappa in [0.0, 0.1, 0.5, 0.75, 1.0, 1.25, 1.5, 1.6, 2.0, 3.0, 5.0, 10.0] {
            let rule = conditional_rule(kappa);
            let mut worst: f64 = 0.0;
            for i in 0..=200 {
                let mu = -5.0 + 0.05 * f64::from(i);
                let r = reference(mu, kappa);
                let g0: f64 = rule.iter().map(|&(z, w)| w * sigmoid(mu + kappa * z)).sum();
                let g1: f64 = rule
                    .iter()
                    .map(|&(z, w)| w * sigmoid(mu + kappa * z) * sigmoid(-mu - kappa * z))
                    .sum();
                worst = worst.max((g0 - r[0]).abs()).max((g1 - r[1]).abs());
            }
            assert!(worst < 1e-14, "κ = {kappa}: {worst:e}");
        }
    }
}
