//! Σ_i x_i·y_i in eight interleaved partial sums instead of one chain: the
//! chain's additions wait for each other (four cycles each), the partial
//! sums run four lanes per instruction — the long-horizon solver's dot
//! products over the paths (the generator's C_g row) and over a path's
//! recent events (the sparse reverse pass).

/// Partial sums of [`dot_lanes`].
const DOT_LANES: usize = 8;

/// Σ_i x_i·y_i of `x` with every row y of `ys` (over the shorter of the
/// two), into `out` (one per row): rows four at a time, each summed exactly
/// as [`dot_lanes`] sums it (the same bits), so that `x` is read once per
/// four rows and four rows' loads are in flight together — the generator's C_g row, tens of dot products of one vector
/// over the paths.
pub(crate) fn dots(x: &[f64], ys: &[&[f64]], out: &mut [f64]) {
    assert_eq!(ys.len(), out.len(), "dots: one output per row");
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { dots_avx2(x, ys, out) };
        return;
    }
    dots_lanes(x, ys, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(x: &[f64], ys: &[&[f64]], out: &mut [f64]) {
    dots_lanes(x, ys, out);
}

/// Rows of [`dots`] summed side by side.
const ROWS: usize = 4;

#[inline(always)]
fn dots_lanes(x: &[f64], ys: &[&[f64]], out: &mut [f64]) {
    let (rows, rest) = ys.as_chunks::<ROWS>();
    let (outs, rest_out) = out.as_chunks_mut::<ROWS>();
    for (rows, out) in rows.iter().zip(outs) {
        let n = rows.iter().fold(x.len(), |n, y| n.min(y.len()));
        let mut acc = [[0.0; DOT_LANES]; ROWS];
        let full = n - n % DOT_LANES;
        for at in (0..full).step_by(DOT_LANES) {
            let a: &[f64; DOT_LANES] = x[at..at + DOT_LANES].try_into().expect("a whole chunk");
            for (acc, y) in acc.iter_mut().zip(rows) {
                let b: &[f64; DOT_LANES] = y[at..at + DOT_LANES].try_into().expect("a whole chunk");
                for l in 0..DOT_LANES {
                    acc[l] += a[l] * b[l];
                }
            }
        }
        for ((o, acc), y) in out.iter_mut().zip(&acc).zip(rows) {
            let tail: f64 = x[full..n].iter().zip(&y[full..n]).map(|(a, b)| a * b).sum();
            *o = reduce(acc, tail);
        }
    }
    for (o, y) in rest_out.iter_mut().zip(rest) {
        *o = dot_lanes(x, y);
    }
}

/// The partial sums' total.
#[inline(always)]
fn reduce(acc: &[f64; DOT_LANES], tail: f64) -> f64 {
    let (lo, hi) = acc.split_at(DOT_LANES / 2);
    let half: [f64; DOT_LANES / 2] = std::array::from_fn(|l| lo[l] + hi[l]);
    (half[0] + half[2]) + (half[1] + half[3]) + tail
}

/// Σ_i x_i·y_i over the shorter of the two, inlined into its callers (the
/// sparse pass, compiled for AVX2).
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
    reduce(&acc, tail)
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
            let got = dot_lanes(&x, &y);
            assert!((got - want).abs() <= 1e-14 * scale.max(1.0), "n = {n}: {got} vs {want}");
            assert_eq!(dot_lanes(&y, &x), got, "n = {n}: the shorter length");
        }
    }

    /// Every row's product is [`dot_lanes`]'s to the last bit, whatever the
    /// number of rows (whole groups of four and the rest) and lengths.
    #[test]
    fn rows_side_by_side_are_dot_bit_for_bit() {
        for n in [0, 5, 8, 13, 1024, 1031] {
            let x: Vec<f64> = (0..n)
                .map(|i| ((i * 37) % 11) as f64 / 5.0 - 1.0 + 1e-3 * i as f64)
                .collect();
            let rows: Vec<Vec<f64>> = (0..11)
                .map(|k| {
                    (0..n + k % 3)
                        .map(|i| (((i + 7 * k) * 13) % 17) as f64 / 3.0 - 2.5 + 0.37 * k as f64)
                        .collect()
                })
                .collect();
            for r in [0, 1, 4, 7, 11] {
                let ys: Vec<&[f64]> = rows[..r].iter().map(Vec::as_slice).collect();
                let mut got = vec![f64::NAN; r];
                dots(&x, &ys, &mut got);
                let want: Vec<u64> = ys.iter().map(|y| dot_lanes(&x, y).to_bits()).collect();
                assert_eq!(
                    got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want,
                    "n = {n}, {r} rows"
                );
            }
        }
    }
}
