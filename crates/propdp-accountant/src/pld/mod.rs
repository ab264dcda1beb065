//! Privacy-loss distributions (PLD) of the Poisson-subsampled Gaussian
//! mechanism — one step of DP-SGD — and their T-fold composition by FFT.
//!
//! One step, add/remove-one, noise multiplier z = σ/C, rate q: with
//! μ₀ = N(0, z²) and μ₁ = (1 − q)N(0, z²) + qN(1, z²) the privacy curve is
//! δ(ε) = max(H_ε(μ₁‖μ₀), H_ε(μ₀‖μ₁)) (remove and add directions).
//! Replace-one: a replaced example keeps its inclusion coin, so one step
//! is (1 − q)N(s, z²) + qN(s + g, z²) against (1 − q)N(s, z²) + qN(s + g', z²)
//! (s the rest of the batch, ‖g‖, ‖g'‖ ≤ 1); the pair
//! P = (1 − q)N(0, z²) + qN(−1, z²), Q = (1 − q)N(0, z²) + qN(1, z²) dominates
//! it (Zhu, Dong, Wang 2022; Google's dp-accounting, `REPLACE_ONE`), and is
//! its own mirror image under x → −x, so one direction, H_ε(P‖Q), is the
//! curve. Its loss L(x) = log P(x)/Q(x) is decreasing in x, and L(x*) = ε is
//! a quadratic in a = e^{−x/z²}: x* = −z²(ε/2 + asinh ρ),
//! ρ = (1 − q) sinh(ε/2) e^{1/(2z²)}/q, so δ(ε) = P(x < x*) − e^ε Q(x < x*)
//! is a difference of normal tails; at q = 1 it is the Gaussian mechanism
//! with μ = 2/z. Each
//! direction's curve is exact in closed form ([`SubsampledGaussian::delta`]); it is
//! discretised on the grid ε_k = kΔ by *connecting the dots*: the discrete
//! PLD whose hockey-stick curve equals the true one at every grid point and
//! interpolates between them along e^ε-linear pieces, which lies above the
//! true (convex in e^ε) curve — a dominating pair, so every composed δ(ε),
//! and every ε(δ), is an upper bound. Mass beyond the top grid point goes to
//! +∞ (counted into δ whole). T-fold composition ([`Pld::self_compose_fft`])
//! raises the PMF's discrete Fourier transform to the power T on a window
//! sized by Chernoff bounds computed from the discrete PMF itself; the bound
//! on the mass above the window (which the circular convolution would alias
//! to lower losses) is added to the mass at +∞, so the result stays an upper
//! bound. The directions are composed separately and the worse is reported.
//! Negative values the FFT's round-off leaves are set to 0. The fixed-grid
//! figures ([`SubsampledGaussian::epsilon`], [`composed`]) do not bound that round-off;
//! [`Composed`] carries a bound on it ([`roundoff_bound`]) and on the
//! aliasing, which [`crate::bracket`] adds on the safe side, and
//! [`compose_all`] composes heterogeneous segments.
//!
//! Written by hand because no Rust crate implements PLD accounting.
//!
//! # References
//! - Koskela, Jälkö, Honkela (2020), *Computing tight differential privacy
//!   guarantees using FFT*, AISTATS.
//! - Doroshenko, Ghazi, Kamath, Kumar, Manurangsi (2022), *Connect the dots:
//!   tighter discrete approximations of privacy loss distributions*, PoPETs.
//! - Gopi, Lee, Wutschitz (2021), *Numerical composition of differential
//!   privacy*, NeurIPS (one FFT of the final length, window by tail bounds).
//! - Zhu, Dong, Wang (2022), *Optimal accounting of differential privacy
//!   via characteristic function*, AISTATS (the replace-one pair).
//! - Google's dp-accounting (`PLDAccountant`), the reference the tests compare to.

mod compose;
mod distribution;
mod pairs;
mod terms;

pub use compose::{Aim, Composed, compose_all, compose_tilted, roundoff_bound};
pub use distribution::{MAX_ALLOCATION, Pld};
pub use pairs::{Direction, MAX_REPLACE_LOSS, SubsampledGaussian, composed, delta};
