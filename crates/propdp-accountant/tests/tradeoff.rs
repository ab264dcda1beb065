//! The membership-inference trade-off (`tradeoff.rs`) against attacks whose
//! power is known exactly: the Gaussian mechanism's Φ(Φ⁻¹(α) + μ), and the
//! Neyman–Pearson tests of one step of the Poisson-subsampled Gaussian in
//! either order of the pair (its likelihood ratio is monotone in the
//! observation, so the best test at FPR α thresholds it; with the
//! non-member law as the null, TPR = (1 − q)α + q·Φ̄(Φ̄⁻¹(α) − 1/z)). The
//! bound must never be below the better of the two, and should be close.

use propdp_accountant::bracket::BracketSettings;
use propdp_accountant::events::Segment;
use propdp_accountant::tradeoff::{clt_mu, gaussian_tpr, tpr_from_profile, tpr_upper};
use propdp_accountant::{Neighbouring, delta_gaussian, norm_cdf};

const FPRS: [f64; 6] = [1e-6, 1e-4, 1e-3, 1e-2, 0.1, 0.5];

/// Φ̄⁻¹(α) by bisection on the upper tail.
fn upper_quantile(alpha: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if norm_cdf(-mid) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[test]
fn the_gaussian_profile_gives_back_the_exact_tradeoff() {
    for mu in [0.1, 0.5, 1.0, 2.0, 4.0] {
        for a in FPRS {
            let exact = norm_cdf(-upper_quantile(a) + mu);
            assert!((gaussian_tpr(mu, a) - exact).abs() <= 1e-9 * exact, "μ = {mu}, α = {a}");
            // the profile bound from the exact δ(ε): never below, and within 1% (the ε grid)
            let bound = tpr_from_profile(|e| delta_gaussian(e, mu), a);
            assert!(
                bound >= exact * (1.0 - 1e-12),
                "μ = {mu}, α = {a}: {bound} below {exact}"
            );
            assert!(
                bound <= exact * 1.01 + 1e-12,
                "μ = {mu}, α = {a}: {bound} far above {exact}"
            );
        }
    }
}

/// Replace-one: the best test between P = (1 − q)N(0, z²) + qN(−1, z²) and its
/// mirror image Q = (1 − q)N(0, z²) + qN(1, z²) thresholds x (the loss is
/// monotone): reject Q for x < t, FPR Q(x < t) = (1 − q)Φ(t/z) + qΦ((t − 1)/z)
/// = α (bisection), TPR P(x < t) = (1 − q)Φ(t/z) + qΦ((t + 1)/z). The bound
/// from the certified replace-one profile holds it and is within 5%.
#[test]
fn one_subsampled_step_bound_holds_the_best_replace_one_attack() {
    for (z, q) in [(0.5, 0.01), (1.0, 0.05), (2.0, 0.2), (0.8, 0.5), (1.0, 0.001)] {
        let run = [Segment {
            noise_multiplier: z,
            sample_rate: q,
            steps: 1,
        }];
        let bound = tpr_upper(&run, Neighbouring::ReplaceOne, &FPRS, BracketSettings::default()).unwrap();
        for (a, b) in FPRS.into_iter().zip(bound) {
            let (mut lo, mut hi) = (-40.0 * z - 1.0, 40.0 * z + 1.0);
            for _ in 0..200 {
                let t = 0.5 * (lo + hi);
                if (1.0 - q) * norm_cdf(t / z) + q * norm_cdf((t - 1.0) / z) > a {
                    hi = t;
                } else {
                    lo = t;
                }
            }
            let best = (1.0 - q) * norm_cdf(lo / z) + q * norm_cdf((lo + 1.0) / z);
            assert!(
                b >= best * (1.0 - 1e-9),
                "z = {z}, q = {q}, α = {a}: bound {b} below the attack's {best}"
            );
            assert!(
                b <= best * 1.05 + 1e-9,
                "z = {z}, q = {q}, α = {a}: bound {b} far above the attack's {best}"
            );
        }
    }
}

#[test]
fn one_subsampled_step_bound_holds_the_best_attack() {
    for (z, q) in [(0.5, 0.01), (1.0, 0.05), (2.0, 0.2), (0.8, 0.5), (1.0, 0.001)] {
        let run = [Segment {
            noise_multiplier: z,
            sample_rate: q,
            steps: 1,
        }];
        let bound = tpr_upper(&run, Neighbouring::AddRemoveOne, &FPRS, BracketSettings::default()).unwrap();
        for (a, b) in FPRS.into_iter().zip(bound) {
            // member: x ~ (1 − q)N(0, z²) + qN(1, z²); non-member: N(0, z²); reject for large x
            let t = upper_quantile(a);
            let member = (1.0 - q) * a + q * norm_cdf(-(t - 1.0 / z));
            // the other order (the guarantee covers both): the mixture as the null, reject for small x/z < s,
            // FPR (1 − q)Φ(s) + qΦ(s − 1/z) = α (bisection), TPR Φ(s)
            let (mut lo, mut hi) = (-40.0f64, 40.0f64);
            for _ in 0..200 {
                let s = 0.5 * (lo + hi);
                if (1.0 - q) * norm_cdf(s) + q * norm_cdf(s - 1.0 / z) > a {
                    hi = s;
                } else {
                    lo = s;
                }
            }
            let best = member.max(norm_cdf(lo));
            assert!(
                b >= best * (1.0 - 1e-9),
                "z = {z}, q = {q}, α = {a}: bound {b} below the attack's {best}"
            );
            assert!(
                b <= best * 1.05 + 1e-9,
                "z = {z}, q = {q}, α = {a}: bound {b} far above the attack's {best}"
            );
        }
    }
}

#[test]
fn full_batch_is_exact_and_the_clt_mu_is_near_the_bound() {
    let full = [Segment {
        noise_multiplier: 10.0,
        sample_rate: 1.0,
        steps: 100,
    }];
    let t = tpr_upper(&full, Neighbouring::ReplaceOne, &[0.01], BracketSettings::default()).unwrap();
    // μ = 2√100/10 = 2
    assert!((t[0] - gaussian_tpr(2.0, 0.01)).abs() < 1e-15);
    // many small steps: the central limit is accurate, and the certified bound sits just above it
    let run = [Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.01,
        steps: 1000,
    }];
    let mu = clt_mu(1.0, 0.01, 1000, Neighbouring::AddRemoveOne);
    let t = tpr_upper(&run, Neighbouring::AddRemoveOne, &[0.1], BracketSettings::default()).unwrap();
    let clt = gaussian_tpr(mu, 0.1);
    assert!(
        clt < t[0] && t[0] < 1.05 * clt,
        "bound {} against the CLT's {clt}",
        t[0]
    );
}

#[test]
fn bad_fpr_is_refused_by_name() {
    let run = [Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.01,
        steps: 10,
    }];
    for a in [0.0, 1.0, -0.1, f64::NAN] {
        let e = tpr_upper(&run, Neighbouring::AddRemoveOne, &[a], BracketSettings::default()).unwrap_err();
        assert_eq!(e.argument(), "fpr");
    }
}
