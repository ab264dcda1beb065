//! The truncated moments of scale-mixture noise plus a Gaussian (Laplace and
//! Student-t, ν from 1 to 10) against 40-digit reference values computed
//! independently with mpmath (`scripts/mixture_reference.py` →
//! tests/data/mixture_moments.csv), over v ∈ [1e-4, 5] and c ∈ [0.05, 200].

use propdp_core::NoiseLaw;
use propdp_theory::noise::{truncated_moments, truncated_probability};

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
        assert!(
            (t - t_ref).abs() < 1e-12 * t_ref.abs().max(1e-3),
            "{law:?} v={v} c={c}: E[z²1(|z|≤c)] {t} vs {t_ref}"
        );
        rows += 1;
    }
    assert_eq!(rows, 120);
}
