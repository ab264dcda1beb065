//! Σ_i x_i·y_i in eight interleaved partial sums instead of one chain: the
//! chain's additions wait for each other (four cycles each), the partial
//! sums run four lanes per instruction — the long-horizon solver's dot
//! products over the paths (the generator's C_g row) and over a path's
//! recent events (the sparse reverse pass).

/// Partial sums of [`dot`].
const DOT_LANES: usize = 8;

/// Σ_i x_i·y_i over the shorter of the two.
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { dot_avx2(x, y) };
    }
    dot_lanes(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(x: &[f64], y: &[f64]) -> f64 {
    dot_lanes(x, y)
}

/// [`dot`]'s body, inlined into callers compiled for AVX2 as [`dot`] is.
#[inline(always)]
#[allow(clippy::inline_always)]
pub(crate) fn dot_lanes<X: Copy + Into<f64>>(x: &[X], y: &[f64]) -> f64 {
    let n = x.len().min(y.len());
    let (xs, ys) = (x[..n].chunks_exact(DOT_LANES), y[..n].chunks_exact(DOT_LANES));
    let tail: f64 = xs
        .remainder()
        .iter()
        .zip(ys.remainder())
        .map(|(&a, b)| a.into() * b)
        .sum();
    let mut acc = [0.0; DOT_LANES];
    for (a, b) in xs.zip(ys) {
        for l in 0..DOT_LANES {
            acc[l] += a[l].into() * b[l];
        }
    }
    let (lo, hi) = acc.split_at(DOT_LANES / 2);
    let half: [f64; DOT_LANES / 2] = std::array::from_fn(|l| lo[l] + hi[l]);
    (half[0] + half[2]) + (half[1] + half[3]) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partial_sums_dot_product_is_the_dot_product() {
        for n in [0, 1, 7, 8, 9, 100, 2051] {
            let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 / 5.0 - 1.0).collect();
            let y: Vec<f64> = (0..n + 2).map(|i| ((i * 13) % 17) as f64 / 3.0 - 2.5).collect();
            let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            let scale: f64 = x.iter().zip(&y).map(|(a, b)| (a * b).abs()).sum();
            let got = dot(&x, &y);
            assert!((got - want).abs() <= 1e-14 * scale.max(1.0), "n = {n}: {got} vs {want}");
            assert_eq!(dot(&y, &x), got, "n = {n}: the shorter length");
        }
    }
}
