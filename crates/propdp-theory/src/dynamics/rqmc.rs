//! Randomised quasi-Monte Carlo points of the state evolutions: Owen-scrambled
//! Sobol points from `sobol_burley`, padded beyond its 256 dimensions.
//!
//! # References
//! - Owen (1995), *Randomly permuted (t,m,s)-nets and (t,s)-sequences*.
//! - Burley (2020), *Practical hash-based Owen scrambling*, JCGT.

/// Coordinate `dim` of point `i` of an Owen-scrambled Sobol sequence
/// (`sobol_burley`: 256 dimensions per sequence; dimension 256·j + d is
/// dimension d of the sequence scrambled with a seed derived from j, padded
/// RQMC), at the centre of its f32 cell: never 0 or 1.
pub(crate) fn rqmc_uniform(i: usize, dim: usize, seed: u32) -> f64 {
    let (set, d) = ((dim / 256) as u32, (dim % 256) as u32);
    f64::from(sobol_burley::sample(i as u32, d, seed ^ set.wrapping_mul(0x85EB_CA6B))) + 2f64.powi(-25)
}

/// Coordinates 4g..4g + 3 of points 0..n of the same padded sequence as
/// [`rqmc_uniform`] (group g of four dimensions), bit for bit
/// `sobol_burley::sample_4d` at each point.
///
/// Written beside the crate because a whole group is drawn at once: the
/// Sobol part is linear over GF(2) in the (16-bit) shuffled index, so it is
/// two look-ups in 256-entry tables of the group's direction numbers rather
/// than a loop over the index's set bits per point; the index shuffle and
/// the output's Owen scramble are the crate's own (`sobol_burley::parts`),
/// the latter lane by lane with its scalar form: the crate's four-lane form
/// multiplies by emulation on CPUs it was not compiled for (SSE2 only),
/// where lane by lane in a loop compiled for AVX2 the compiler vectorises
/// over points: half the time per group (docs/performance.md, "Session 43").
pub(crate) fn rqmc_block4(n: usize, group: usize, seed: u32) -> Vec<[f64; 4]> {
    let mut out = Vec::new();
    rqmc_block4_into(&mut out, n, group, seed);
    out
}

/// [`rqmc_block4`] into `out` (resized to `n`): a solve draws a group every
/// step, into the same buffer.
pub(crate) fn rqmc_block4_into(out: &mut Vec<[f64; 4]>, n: usize, group: usize, seed: u32) {
    use sobol_burley::parts::{hash, hash_int4, sobol_int4_rev};
    assert!(n <= 1 << 16, "rqmc_block4: {n} points, at most 2^16");
    let (set, g) = ((group / 64) as u32, (group % 64) as u32);
    let seed = seed ^ set.wrapping_mul(0x85EB_CA6B);
    // tables over the shuffled index's top and next byte (reversed bits)
    let table = |shift: u32| -> Vec<[u32; 4]> {
        let basis: Vec<[u32; 4]> = (0..8).map(|b| sobol_int4_rev(1 << (shift + b), g).into()).collect();
        let mut t = vec![[0u32; 4]; 256];
        for k in 1..256usize {
            let (prev, b) = (t[k & (k - 1)], basis[k.trailing_zeros() as usize]);
            t[k] = std::array::from_fn(|d| prev[d] ^ b[d]);
        }
        t
    };
    let tables = Tables {
        low: table(16),
        high: table(24),
        index_scramble: hash(seed ^ 0x79c6_8e4a),
        scramble: {
            let s = [seed.wrapping_mul(0x9c8f_2d3b); 4];
            let salt = [0x912f_69ba, 0x174f_18ab, 0x691e_72ca, 0xb40c_c1b8];
            hash_int4(std::array::from_fn(|d| s[d] ^ g ^ salt[d]).into()).into()
        },
    };
    out.clear();
    out.resize(n, [0.0; 4]);
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { fill_avx2(out, &tables) };
        return;
    }
    fill(out, &tables);
}

/// A group's direction-number tables and scrambles ([`rqmc_block4`]).
struct Tables {
    low: Vec<[u32; 4]>,
    high: Vec<[u32; 4]>,
    index_scramble: u32,
    scramble: [u32; 4],
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_avx2(out: &mut [[f64; 4]], tables: &Tables) {
    fill(out, tables);
}

/// Point i of the group: the shuffled index's Sobol' coordinates, each
/// Owen-scrambled, bit-reversed and put at the centre of its f32 cell.
#[inline(always)]
fn fill(out: &mut [[f64; 4]], tables: &Tables) {
    use sobol_burley::parts::owen_scramble_rev;
    let Tables {
        low,
        high,
        index_scramble,
        scramble,
    } = tables;
    for (i, x) in (0u32..).zip(out.iter_mut()) {
        let rev = owen_scramble_rev(i.reverse_bits(), *index_scramble);
        let (h, l) = (high[(rev >> 24) as usize], low[((rev >> 16) & 0xff) as usize]);
        *x = std::array::from_fn(|d| {
            let y = owen_scramble_rev(h[d] ^ l[d], scramble[d]).reverse_bits();
            f64::from(f32::from_bits((y >> 9) | 0x3f80_0000) - 1.0) + 2f64.powi(-25)
        });
    }
}

/// The standard normals Φ⁻¹(x[coord]) of every point of a block
/// ([`rqmc_block4`]), by the slice form of Φ⁻¹ (the scalar one bit for bit).
pub(crate) fn normals(block: &[[f64; 4]], coord: usize) -> Vec<f64> {
    let mut buf = Normals::default();
    buf.of(block, coord);
    buf.out
}

/// Buffers for [`normals`] drawn every step: the uniforms and their normals.
#[derive(Default)]
pub(crate) struct Normals {
    us: Vec<f64>,
    out: Vec<f64>,
}

impl Normals {
    /// [`normals`] of `block`'s coordinate `coord`, in this buffer.
    pub(crate) fn of(&mut self, block: &[[f64; 4]], coord: usize) -> &mut [f64] {
        self.us.clear();
        self.us.extend(block.iter().map(|x| x[coord]));
        self.out.resize(self.us.len(), 0.0);
        propdp_numerics::normal::quantile_into(&self.us, &mut self.out);
        &mut self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block is `sobol_burley::sample_4d` point by point (with the
    /// padding's seed per set of 64 groups), bit for bit.
    #[test]
    fn a_block_is_the_crates_points_bit_for_bit() {
        for (n, group, seed) in [
            (1, 0, 0),
            (2048, 0, 7),
            (4096, 63, 123),
            (1000, 64, 9),
            (32768, 12345, 0xdead_beef),
        ] {
            let (set, g) = ((group / 64) as u32, (group % 64) as u32);
            let block = rqmc_block4(n, group, seed);
            assert_eq!(block.len(), n);
            for (i, x) in block.iter().enumerate() {
                let want = sobol_burley::sample_4d(i as u32, g, seed ^ set.wrapping_mul(0x85EB_CA6B))
                    .map(|x| f64::from(x) + 2f64.powi(-25));
                assert_eq!(
                    x.map(f64::to_bits),
                    want.map(f64::to_bits),
                    "n {n} group {group} seed {seed} point {i}"
                );
            }
        }
    }
}
