//! Linear combinations y = Σ_i c_i·x_i of many vectors — the memories'
//! sums over exact lags and block sums, the Onsager terms, the state
//! covariance's new rows and the field's conditional mean all take this
//! form, with tens of terms.
//!
//! A term at a time (one `axpy` per term) reads and writes y once per term;
//! here y is built a tile at a time in registers and written once, and on
//! CPUs with AVX2 the tile's loop runs four lanes per instruction. Each
//! element sums its terms in their order, as the term-at-a-time loop does,
//! so the results are the same to the last bit. The terms come as an
//! iterator, gathered once on the stack (a list of tens of slices on the
//! heap is an allocation too large for the allocator's fast path, on every
//! call).
//! The x_i may be stored in single precision (the virtual paths' tracks,
//! `dyadic::Stored`): each is widened to f64 as it is read, and y and its sums
//! stay f64.
//! The transpose, dot products over the paths, is `crate::numerics::dots`.

use crate::dynamics::dyadic::Stored;

/// Elements per tile: eight AVX2 registers of four.
const TILE: usize = 32;

/// Terms gathered on the stack; more go to the heap.
const STACK_TERMS: usize = 128;

/// y = Σ_i c_i·x_i (every x_i at least as long as y); terms with c_i = 0
/// are skipped. The nonzero terms are gathered once (on the stack when
/// there are at most [`STACK_TERMS`]), then every tile of y walks them.
pub(super) fn combine<'a, T: Stored + 'a>(y: &mut [f64], terms: impl Iterator<Item = (f64, &'a [T])>) {
    let mut stack: [(f64, &[T]); STACK_TERMS] = [(0.0, &[]); STACK_TERMS];
    let mut heap: Vec<(f64, &[T])> = Vec::new();
    let mut count = 0;
    for (c, x) in terms.filter(|&(c, _)| c != 0.0) {
        if count < STACK_TERMS {
            stack[count] = (c, x);
        } else {
            if heap.is_empty() {
                heap.extend_from_slice(&stack);
            }
            heap.push((c, x));
        }
        count += 1;
    }
    let gathered = if count <= STACK_TERMS {
        &stack[..count]
    } else {
        &heap[..]
    };
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { combine_avx2(y, gathered) };
        return;
    }
    combine_tiles(y, gathered);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn combine_avx2<T: Stored>(y: &mut [f64], terms: &[(f64, &[T])]) {
    combine_tiles(y, terms);
}

#[inline(always)]
fn combine_tiles<T: Stored>(y: &mut [f64], terms: &[(f64, &[T])]) {
    let n = y.len();
    let full = n - n % TILE;
    for off in (0..full).step_by(TILE) {
        let mut acc = [0.0; TILE];
        for &(c, x) in terms {
            let x: &[T; TILE] = x[off..off + TILE].try_into().expect("a whole tile");
            for (a, v) in acc.iter_mut().zip(x) {
                *a += c * v.load();
            }
        }
        y[off..full.min(off + TILE)].copy_from_slice(&acc);
    }
    let rest = &mut y[full..];
    rest.fill(0.0);
    for &(c, x) in terms {
        for (a, v) in rest.iter_mut().zip(&x[full..]) {
            *a += c * v.load();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_sum_every_element_as_the_term_at_a_time_loop_does() {
        for n in [0, 1, 31, 32, 33, 100, 433] {
            let xs: Vec<Vec<f64>> = (0..7)
                .map(|k| {
                    (0..n + 3)
                        .map(|i| ((i * 31 + k * 17) % 13) as f64 / 7.0 - 0.9)
                        .collect()
                })
                .collect();
            let cs = [0.3, -1.7, 0.0, 2.2e-3, 5.0, -0.25, 1e-9];
            let terms: Vec<(f64, &[f64])> = cs.iter().zip(&xs).map(|(&c, x)| (c, x.as_slice())).collect();
            let mut want = vec![0.0; n];
            for &(c, x) in &terms {
                if c != 0.0 {
                    want.iter_mut().zip(x).for_each(|(y, v)| *y += c * v);
                }
            }
            let mut got = vec![f64::NAN; n];
            combine(&mut got, terms.iter().copied());
            assert_eq!(got, want, "n = {n}");
        }
    }

    /// More terms than the stack holds (the heap's list keeps every term
    /// in order), and single-precision terms widened as they are read.
    #[test]
    fn many_terms_and_single_precision_terms_sum_in_order() {
        let n = 77;
        let xs: Vec<Vec<f32>> = (0..STACK_TERMS + 40)
            .map(|k| (0..n).map(|i| ((i * 13 + k * 7) % 29) as f32 / 11.0 - 1.3).collect())
            .collect();
        let cs: Vec<f64> = (0..xs.len())
            .map(|k| if k % 5 == 0 { 0.0 } else { (k as f64 * 0.37).sin() })
            .collect();
        let mut want = vec![0.0; n];
        for (&c, x) in cs.iter().zip(&xs) {
            if c != 0.0 {
                want.iter_mut().zip(x).for_each(|(y, &v)| *y += c * f64::from(v));
            }
        }
        let mut got = vec![f64::NAN; n];
        combine(&mut got, cs.iter().zip(&xs).map(|(&c, x)| (c, x.as_slice())));
        assert_eq!(got, want);
    }
}
