//! The scalar numerics every propdp crate shares, in one home: the standard
//! normal functions ([`normal`]: Φ, log Φ in the far tail, φ, Φ⁻¹) and
//! Brent's bracketed root finding ([`roots`]).
//!
//! A crate of its own because the lowest crate that needs them, the
//! accountant, must not depend on the theory, and the theory, the
//! simulation and the library need the same functions: each used to carry
//! its own copy (the accountant's Φ and Brent, the theory's Brent and Φ⁻¹,
//! the inference's Φ⁻¹ and Brent calls). Every function wraps a maintained
//! crate (`libm`'s erfc, `roots`' Brent) except the far-tail log Φ, which no
//! crate offers, and Φ⁻¹ (AS 241: the crates that carry it are GPL, and
//! `statrs`' is several times slower in the long-horizon solver's inner loop).
//!
//! # References
//! - Brent, R. P. (1973), *Algorithms for minimization without derivatives*, ch. 4.
//! - Wichura, M. J. (1988), *Algorithm AS 241*, Applied Statistics 37, 477–484.
//! - Abramowitz, Stegun (1964), *Handbook of mathematical functions*, 26.2.12 (the tail series of Φ).

pub mod normal;
pub mod roots;
