//! Φ⁻¹ (AS 241) against `statrs`' inverse CDF and against Φ itself.

use propdp_numerics::normal::{norm_cdf, quantile};
use statrs::distribution::{ContinuousCDF, Normal};

#[test]
fn the_quantile_agrees_with_statrs_over_the_unit_interval_and_into_both_tails() {
    let normal = Normal::standard();
    let mut worst: f64 = 0.0;
    let mut check = |u: f64| {
        let (a, b) = (quantile(u), normal.inverse_cdf(u));
        let err = (a - b).abs() / b.abs().max(1e-300);
        worst = worst.max(if b == 0.0 { a.abs() } else { err });
    };
    for i in 1..1_000_000 {
        check(i as f64 / 1e6);
    }
    for k in 7..300 {
        let u = 10f64.powi(-k);
        check(u);
        check(1.0 - u.max(f64::EPSILON));
    }
    // the RQMC points' extremes: f32 cell centres
    check(2f64.powi(-25));
    check(1.0 - 2f64.powi(-25));
    assert!(worst < 1e-14, "largest relative difference {worst:e}");
}

#[test]
fn the_quantile_inverts_phi_and_names_its_edges() {
    for &u in &[1e-12, 1e-6, 0.01, 0.2, 0.5, 0.7, 0.975, 0.999_999] {
        let back = norm_cdf(quantile(u));
        assert!(
            (back - u).abs() <= 1e-14 * u.min(1.0 - u).max(1e-300) + 1e-17,
            "u = {u}: Φ(Φ⁻¹(u)) = {back}"
        );
    }
    assert_eq!(quantile(0.0), f64::NEG_INFINITY);
    assert_eq!(quantile(1.0), f64::INFINITY);
    assert!(quantile(-0.1).is_nan() && quantile(1.5).is_nan() && quantile(f64::NAN).is_nan());
    assert_eq!(quantile(0.3), -quantile(0.7));
}
