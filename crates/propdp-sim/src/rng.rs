//! Seeded RNG streams: one independent stream per (seed, sweep point,
//! dimension, repetition), so results are identical whatever the thread count.

use rand::SeedableRng;
use rand::rngs::StdRng;

/// SplitMix64 finalizer: a bijective 64-bit mix (Steele, Lea, Flood 2014).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The RNG identified by a seed and a key path, e.g. [point, d, repetition].
///
/// ```
/// use propdp_sim::rng::stream;
/// use rand::RngExt;
/// let a: f64 = stream(7, &[3, 400, 0]).random();
/// let b: f64 = stream(7, &[3, 400, 0]).random();
/// let c: f64 = stream(7, &[3, 400, 1]).random();
/// assert_eq!(a, b);
/// assert_ne!(a, c);
/// ```
pub fn stream(seed: u64, keys: &[u64]) -> StdRng {
    StdRng::seed_from_u64(keys.iter().fold(mix(seed), |h, &k| mix(h ^ k)))
}
