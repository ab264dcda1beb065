//! Dot products over rows of the design (stored row by row, see
//! [`crate::data::Dataset`]), written for the compiler to vectorise: running
//! sums in fixed-size arrays, which it keeps in SIMD registers.

/// xᵀy with eight running sums (which the compiler turns into SIMD).
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0; 8];
    let (xc, yc) = (x.chunks_exact(8), y.chunks_exact(8));
    let tail: f64 = xc.remainder().iter().zip(yc.remainder()).map(|(a, b)| a * b).sum();
    for (a, b) in xc.zip(yc) {
        for k in 0..8 {
            acc[k] += a[k] * b[k];
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// (rᵢᵀy) for four rows at once, each with four running sums.
pub(crate) fn dot4(rows: [&[f64]; 4], y: &[f64]) -> [f64; 4] {
    let mut acc = [[0.0; 4]; 4];
    let n4 = y.len() / 4 * 4;
    for j in (0..n4).step_by(4) {
        let yj = &y[j..j + 4];
        for (k, r) in rows.iter().enumerate() {
            let rj = &r[j..j + 4];
            for l in 0..4 {
                acc[k][l] += rj[l] * yj[l];
            }
        }
    }
    let mut out = [0.0; 4];
    for (k, r) in rows.iter().enumerate() {
        let tail: f64 = r[n4..].iter().zip(&y[n4..]).map(|(a, b)| a * b).sum();
        out[k] = (acc[k][0] + acc[k][1]) + (acc[k][2] + acc[k][3]) + tail;
    }
    out
}
