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

/// Coordinates 4g..4g + 3 of point `i` of the same padded sequence as
/// [`rqmc_uniform`] (group g of four dimensions, computed together).
pub(crate) fn rqmc_uniform4(i: usize, group: usize, seed: u32) -> [f64; 4] {
    let (set, g) = ((group / 64) as u32, (group % 64) as u32);
    sobol_burley::sample_4d(i as u32, g, seed ^ set.wrapping_mul(0x85EB_CA6B)).map(|x| f64::from(x) + 2f64.powi(-25))
}
