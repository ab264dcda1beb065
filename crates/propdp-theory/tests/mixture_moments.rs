//! The truncated moments of scale-mixture noise plus a Gaussian (Laplace and
//! Student-t, ν from 1 to 10) against 40-digit reference values computed
//! independently with mpmath (`scripts/reference/mixture_reference.py` →
//! tests/data/mixture_moments.csv), over v ∈ [1e-4, 5] and c ∈ [0.05, 200].

use propdp_core::NoiseLaw;
use propdp_theory::fixed_points::noise::{truncated_jet, truncated_moments, truncated_probability};

#[test]
fn truncated_moments_match_40_digit_references() {
    let text = include_str!("data/mixture_moments.csv");
    let mut rows = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        let law = match f[0] {
            "laplace" => NoiseLaw::Laplace { scale: num(1) },
            "student_t" => NoiseLaw::StudentT {
                dof: num(2),
                scale: num(1),
            },
            other => panic!("unknown law {other}"),
        };
        let (v, c, p_ref, t_ref) = (num(3), num(4), num(5), num(6));
        let (p, t) = truncated_moments(&law, v, c);
        assert!((p - p_ref).abs() < 1e-12, "{law:?} v={v} c={c}: P {p} vs {p_ref}");
        assert_eq!(p, truncated_probability(&law, v, c));
        let jet = truncated_jet(&law, v, c);
        assert_eq!((jet.p, jet.t2), (p, t));
        // derivatives against central differences of the (verified) moments
        let (hv, hc) = (1e-4 * v, 1e-4 * c);
        let (pv1, tv1) = truncated_moments(&law, v + hv, c);
        let (pv0, tv0) = truncated_moments(&law, v - hv, c);
        let (pc1, _) = truncated_moments(&law, v, c + hc);
        let (pc0, _) = truncated_moments(&law, v, c - hc);
        // relative 1e-6, plus the round-off of a difference quotient (values to ~1e-14)
        let close = |x: f64, y: f64, roundoff: f64| (x - y).abs() <= 1e-6 * y.abs() + roundoff;
        let what = format!("{law:?} v={v} c={c}");
        assert!(
            close(jet.dp_dv, (pv1 - pv0) / (2.0 * hv), 1e-14 / hv),
            "∂P/∂v {what}: {}",
            jet.dp_dv
        );
        assert!(
            close(jet.dt2_dv, (tv1 - tv0) / (2.0 * hv), 1e-14 * t.max(1.0) / hv),
            "∂T/∂v {what}: {}",
            jet.dt2_dv
        );
        assert!(
            close(jet.dp_dc, (pc1 - pc0) / (2.0 * hc), 1e-14 / hc),
            "∂P/∂c {what}: {}",
            jet.dp_dc
        );
        assert!(
            (t - t_ref).abs() < 1e-12 * t_ref.abs().max(1e-3),
            "{law:?} v={v} c={c}: E[z²1(|z|≤c)] {t} vs {t_ref}"
        );
        rows += 1;
    }
    assert_eq!(rows, 120);
}
