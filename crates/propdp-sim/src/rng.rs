//! Seeded RNG streams: one independent stream per (seed, sweep point,
//! dimension, repetition), so results are identical whatever the thread
//! count — and whatever the version of `rand`: the generator is named, not
//! `StdRng` (which rand documents as free to change between versions).
//!
//! ChaCha8 (the `chacha20` crate's `ChaCha8Rng`: the specified ChaCha stream
//! cipher with 8 rounds, as rand's own `StdRng` uses ChaCha12 — ample for
//! simulation and 2.5× faster than 20 rounds): the 256-bit key is four SplitMix64 outputs from the config seed,
//! the 64-bit stream id a SplitMix64 hash of the key path (e.g. [point, d,
//! repetition]). Only the distributions drawn on top (`rand_distr`'s
//! normal and the others) may still change values between their versions;
//! records name the generator ([`GENERATOR`]) and the crate version. The
//! keystream is checked against an independent ChaCha8 (a plain-Python
//! ChaCha block function, itself checked against OpenSSL's ChaCha20 through
//! Python's `cryptography`; `scripts/reference/chacha_reference.py`) in
//! `tests/rng_streams.rs`.
//!
//! The generator was ChaCha20 up to propdp 0.1's commit e742349: simulated
//! numbers of the same seed differ from records of that generator (records
//! name theirs), and a run directory of the other generator is not resumed.

use chacha20::ChaCha8Rng;
use rand::SeedableRng;

/// The generator of every simulated draw, as recorded in simulation records.
pub const GENERATOR: &str = "ChaCha8 (chacha20 0.10): key = SplitMix64(seed)×4, stream = SplitMix64 hash of (point, d, repetition); normals by rand_distr 0.6's ziggurat; designs row by row; Gaussian designs draw no test rows";

/// The generator type of [`stream`].
pub type SimRng = ChaCha8Rng;

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
pub fn stream(seed: u64, keys: &[u64]) -> SimRng {
    let mut key = [0u8; 32];
    let mut h = seed;
    for word in key.chunks_exact_mut(8) {
        h = mix(h);
        word.copy_from_slice(&h.to_le_bytes());
    }
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(keys.iter().fold(mix(keys.len() as u64), |h, &k| mix(h ^ k)));
    rng
}
