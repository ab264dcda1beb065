//! Φ⁻¹ (AS 241) against `statrs`' inverse CDF and against Φ itself.

use propdp_numerics::normal::{norm_cdf, quantile, quantile_into};
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

/// The slice form is the scalar one bit for bit: over the f32 cell centres
/// the RQMC points take, both tails, the region's edges and the invalid
/// inputs (NaN, outside [0, 1]), at lengths that leave partial vectors.
#[test]
fn the_slice_quantile_is_the_scalar_one_bit_for_bit() {
    let mut us: Vec<f64> = (0..1 << 20)
        .map(|k| (k as f64 * 8.0 + 0.5) / f64::from(1u32 << 23))
        .collect();
    us.extend((1..300).flat_map(|k| [10f64.powi(-k), 1.0 - 10f64.powi(-k).max(f64::EPSILON)]));
    us.extend([
        0.0,
        1.0,
        0.075,
        0.925,
        0.5 - 0.425,
        0.5 + 0.425,
        -0.1,
        1.5,
        f64::NAN,
        f64::INFINITY,
    ]);
    for len in [0, 1, 3, 7, us.len()] {
        let mut out = vec![0.0; len];
        quantile_into(&us[us.len() - len..], &mut out);
        for (&u, &x) in us[us.len() - len..].iter().zip(&out) {
            assert_eq!(x.to_bits(), quantile(u).to_bits(), "u = {u:e}");
        }
    }
}
