//! Predictions at a logistic solution: the metrics of docs/theory.md §1 and
//! the Candès–Sur separability threshold of the unregularised MLE.

use propdp_core::loss::{sigmoid, softplus};
use propdp_core::metrics::{self, Metrics};
use propdp_core::panels::normal_expect;
use propdp_core::population::{softplus_mean, test_class_error_shifted, test_logloss_shifted};

use super::quadrature::{TeacherGivenField, field_nodes_shifted};
use super::solver::LogisticSolver;
use super::{LogisticParams, LogisticState};
use crate::fixed_points::spectral::Regulariser;
use crate::numerics::gaussian::{cdf, pdf};
use crate::numerics::roots::brent;

impl LogisticSolver {
    /// Candès–Sur threshold h(s²) = min_t E[(Z − t·y·ν)₊²]: the unregularized
    /// MLE exists iff δ < h. Uses E[(Z − a)₊²] = (1 + a²)Φ(−a) − aφ(a) and a
    /// 1-D Gauss–Hermite rule over ν.
    pub fn mle_threshold(&self, s2: f64) -> f64 {
        let s = s2.sqrt();
        // E[(Z−a)₊²] derivative in a: −2E[(Z−a)₊] = −2(φ(a) − aΦ(−a)); y·ν has
        // law: ν w.p. sigmoid(ν), −ν otherwise.
        let teacher = self.teacher_rule(s2);
        let expect = |f: &dyn Fn(f64) -> f64| teacher.iter().map(|&(z, w)| w * f(z)).sum::<f64>();
        let obj = |t: f64| {
            expect(&|z| {
                let nu = s * z;
                let sn = sigmoid(nu);
                let f = |a: f64| (1.0 + a * a) * cdf(-a) - a * pdf(a);
                sn * f(t * nu) + (1.0 - sn) * f(-t * nu)
            })
        };
        let dobj = |t: f64| {
            expect(&|z| {
                let nu = s * z;
                let sn = sigmoid(nu);
                let g = |a: f64| -2.0 * (pdf(a) - a * cdf(-a));
                sn * g(t * nu) * nu - (1.0 - sn) * g(-t * nu) * nu
            })
        };
        // convex in t, minimiser t* ≥ 0 (the signal pushes y·ν positive)
        if dobj(0.0) >= 0.0 {
            return obj(0.0);
        }
        let mut hi = 1.0;
        while dobj(hi) < 0.0 && hi < 1e6 {
            hi *= 2.0;
        }
        let t = brent(0.0, hi, dobj, 1e-14, 200).map_or(hi, |(t, _)| t);
        obj(t)
    }

    /// Metrics of docs/theory.md §1 at a solution; `tau` > 0 gives output
    /// perturbation (state must be the σ = 0 solution). With the solver's
    /// intercepts (β, b*) ([`LogisticSolver::with_shift`]) the test and
    /// training metrics are those of the field ω + β against labels of ν + b*
    /// (docs/theory.md §2.6).
    pub fn metrics(&self, p: &LogisticParams, st: &LogisticState, tau: f64) -> Metrics {
        let rho = self.field(p);
        let s = rho.sqrt();
        let b = st.m / rho;
        // the output noise τb adds τ²⟨ω⟩ = τ² to the fitted field's variance
        let q_out = st.q + tau * tau;
        let tp_test = (q_out - st.m * st.m / rho).max(0.0).sqrt();
        let tp = (st.q - st.m * st.m / rho).max(0.0).sqrt();
        let pred_err2 = q_out - 2.0 * st.m + rho;
        let (beta, b_star) = self.shift;
        let shifted = (beta, b_star) != (0.0, 0.0);
        // fresh test point: ω = bν + τ_test ξ; by symmetry 2E[sigmoid(ν)·(y = +1 term)]
        let step = if b != 0.0 {
            (2.0 * tp_test / b.abs()).clamp(1e-3, 1.0)
        } else {
            1.0
        };
        let test_class_err = if shifted {
            test_class_error_shifted(rho, st.m, q_out, beta, b_star)
        } else {
            2.0 * normal_expect(0.0, s, &[0.0], step, |nu| {
                let prob_neg = if tp_test > 0.0 {
                    cdf(-b * nu / tp_test)
                } else {
                    f64::from(u8::from(b * nu < 0.0))
                };
                sigmoid(nu) * prob_neg
            })
        };
        // 2E[sigmoid(ν) ρ(−ω)], ω ~ N(0, q + τ²), with ν integrated out given ω;
        // panels of width ≤ 4 through ρ's kink, |ω| ≤ 40 (beyond, ρ(−ω) is linear to 4e-18)
        let test_logloss = if shifted {
            test_logloss_shifted(rho, st.m, q_out, beta, b_star)
        } else {
            let teacher = TeacherGivenField::new(rho, st.m, q_out);
            let kink: [f64; 21] = std::array::from_fn(|i| -40.0 + 4.0 * i as f64);
            2.0 * normal_expect(0.0, q_out.sqrt(), &kink, teacher.zone().1, |omega| {
                teacher.moments(omega, false)[0] * softplus(-omega)
            })
        };
        // training margin is −p₊ (+ τ xᵢᵀb for output perturbation): loss ρ(p₊ − τG), ω ~ N(0, q);
        // with intercepts the y = +1 side at (β, b*) and the y = −1 side at (−β, −b*) (§2.6)
        let mut nodes = Vec::new();
        let mut side = |beta: f64, b_star: f64| {
            let teacher = TeacherGivenField::new(rho, st.m, st.q).with_offset(b_star);
            field_nodes_shifted(st.q, st.v, beta, -teacher.center() - beta, teacher.zone(), &mut nodes);
            nodes
                .iter()
                .map(|&(pp, _, omega, w)| w * teacher.moments(omega, false)[0] * softplus_mean(pp, tau))
                .sum::<f64>()
        };
        let train_logloss = if shifted {
            side(beta, b_star) + side(-beta, -b_star)
        } else {
            2.0 * side(0.0, 0.0)
        };
        // parameter space: the same in isotropic features; over the atoms otherwise
        let (m0, q0, noise_corr) = match &self.covariance {
            None => (st.m, st.q, -p.sigma * st.v),
            Some(cov) => {
                let ([mh, qh, vh], _) = self.hats(p, b, tp, st.v, false);
                let o = Regulariser::new(cov, p.s2, p.lambda, p.sigma).overlaps(mh, qh, vh);
                (o.m0, o.q0, -p.sigma * o.inv)
            }
        };
        let est_err2 = q0 + tau * tau - 2.0 * m0 + p.s2;
        let mut out = Metrics::new();
        out.insert(metrics::EST_ERR2.into(), est_err2);
        out.insert(metrics::EST_ERR.into(), est_err2.max(0.0).sqrt());
        out.insert(metrics::PRED_ERR2.into(), pred_err2);
        out.insert(metrics::OVERLAP.into(), m0);
        out.insert(metrics::NORM2.into(), q0 + tau * tau);
        out.insert(metrics::BIAS_FACTOR.into(), m0 / p.s2);
        out.insert(
            metrics::NOISE_CORR.into(),
            if tau > 0.0 { tau } else { 0.0 + noise_corr },
        );
        out.insert(metrics::TEST_CLASS_ERR.into(), test_class_err);
        out.insert(metrics::TEST_LOGLOSS.into(), test_logloss);
        out.insert(metrics::TRAIN_LOGLOSS.into(), train_logloss);
        out
    }
}
