//! A certified two-sided ε for T steps of Poisson-subsampled DP-SGD
//! (docs/privacy.md, "Certified brackets"): every ε comes as
//! [lower, upper], and the grid is refined until the bracket is narrow.
//!
//! For each direction of the privacy loss — remove and add under
//! add/remove-one; under replace-one the one pair
//! P = (1 − q)N(0, z²) + qN(−1, z²), Q = (1 − q)N(0, z²) + qN(1, z²), which
//! dominates a replaced example (its inclusion coin is shared; Zhu, Dong,
//! Wang 2022) and is its own mirror image ([`crate::pld`]) — the pessimistic
//! (connect-the-dots) PLD of one step ([`crate::pld::SubsampledGaussian::pld`]) is
//! composed T times by FFT on a grid of width Δ. Nothing below depends on
//! which pair: connect-the-dots interpolates any pair's exact curve, and is
//! a randomised rounding of any pair's loss.
//!
//! *Upper end.* The connect-the-dots PLD dominates the true pair, so its
//! δ(ε) is an upper bound once the mass above the FFT window (counted at
//! +∞) and the FFT's round-off are added:
//! δ⁺(ε) = δ̃(ε) + P(∞) + m_above + √k·‖e‖₂, k the grid points above ε and
//! ‖e‖₂ the bound of [`crate::pld::roundoff_bound`]. From the second grid
//! on the FFT runs on exponentially tilted PMFs at the saddle point of the
//! last grid's ε ([`crate::pld::compose_tilted`]), so that this round-off is
//! relative to the mass near ε rather than to the largest mass.
//!
//! *Lower end, by coupling.* Connect-the-dots is a randomised rounding of
//! the true loss Y to the two grid points around it that preserves
//! E[e^{−Y'} | Y] = e^{−Y} (the split of each interval's P-mass that keeps
//! its Q-mass). So D = Y' − Y lies in an interval of length Δ given Y, with
//! 0 ≤ E[D | Y] ≤ Δ²/8 (Jensen; Hoeffding's lemma), and over T independent
//! steps Hoeffding's inequality gives P(ΣY' > ΣY + η + TΔ²/8) ≤
//! exp(−2η²/(TΔ²)) =: β. Where ΣY ≥ ΣY' − η', η' = η + TΔ²/8, the hockey
//! stick (1 − e^{ε−ΣY})₊ ≥ (1 − e^{ε+η'−ΣY'})₊, hence
//!
//!   δ(ε) ≥ δ_{Y'}(ε + η') − β − T·τ,
//!
//! and since |D| ≤ Δ always, also with η' = TΔ and β = 0 (better for a few
//! steps, and where δ(ε) is so flat that subtracting β moves ε far: one step
//! at q = 10⁻⁴),
//! τ the per-step chance of a rounding farther than Δ (to +∞ above the top
//! grid point, up from below the bottom one: at most twice the one-step
//! tail, min(10⁻¹⁵, 10⁻³δ/T)). δ_{Y'} is bounded below by the composed curve less
//! the mass aliased from below the window and the round-off. η is chosen
//! among β ∈ δ·{10⁻¹, …, 10⁻⁶} and the deterministic bound. Such a lower
//! end loses about Δ√(T log(1/β)/2): it shrinks like Δ√T, where simply
//! rounding every loss down would lose TΔ.
//!
//! *Lower end, to second order.* The coupling's rounding is centred (up to
//! Δ²/8), so its first-order effect on δ cancels. Write ΣY' = X + M + Z,
//! X = ΣY, M = E[ΣD | Y] ∈ [0, TΔ²/8], and Z, given Y, a sum of T
//! independent centred variables each within an interval of length Δ (the
//! roundings farther than Δ, probability ≤ T·τ, aside). With
//! f(x) = (1 − e^{ε−x})₊, concave on either side of its kink at ε, and
//! f'(x) = e^{ε−x}·1{x > ε}, f(x + s) ≤ f(x) + f'(x)s + r(x, s) for every
//! x, s, with r = (s − (ε − x))₊ for x ≤ ε and (−s − (x − ε))₊ for x > ε;
//! E[f'(X)Z] = 0 and f is non-decreasing, so
//!
//!   δ(ε) ≥ δ_{Y'}(ε + TΔ²/8) − E[r(X, Z)] − T·τ.
//!
//! Given Y, E[(±Z − a)₊] ≤ ψ(a) = min(½(√(v² + a²) − a), √(2π)·v·Φ̄(a/v)),
//! v² = TΔ²/4 (Scarf's bound E[(Z − a)₊] ≤ ½(√(E Z² + a²) − a) with
//! E[Z² | Y] ≤ v², and Hoeffding's tail integrated from a), so
//! the remainder is at most E[ψ(|X − ε|)]: by Abel summation over
//! a_j = jv/4, Σ_j (ψ(a_j) − ψ(a_{j+1}))·F(a_{j+1}) + ψ(a_J), with
//! F(a) ≥ P(|X − ε| ≤ a) read off the composed masses near ε
//! ([`crate::pld::Composed::mass_upper`]): |X − ε| ≤ a and |Z| ≤ η put ΣY' in
//! [ε − a − η, ε + a + η + TΔ²/8], and P(|Z| > η) ≤ 2e^{−η²/(2v²)}. The
//! remainder is about ρ·v²·(1 + 2η/v)/2, ρ the density of ΣY' at ε, second
//! order in Δ: in ε the bound loses about 5TΔ² (the case,
//! T = 10⁴ at ε ≈ 8.5), where the Hoeffding ones lose
//! 2Δ√(T log(1/β)/2) ≈ 5Δ√T — less below Δ ≈ 1/√T. The lower end is the
//! largest of all these bounds.
//!
//! The true δ(ε) = max over directions lies between the two curves, so
//! ε(δ) lies in [ε⁻, ε⁺], ε^± the smallest ε where the curve is ≤ δ
//! (bisection to 1e-12 relative, each end rounded outwards). Starting at
//! Δ = 2·10⁻³ (doubled, up to 4, while a part's one-step PLD would take
//! more than a quarter of the point limit, counted before it is built; a
//! part too wide even then is refused naming it), Δ shrinks (to the width's prediction, the width taken as
//! ∝ Δ^p with p ∈ [1, 2] measured on the last two grids, 2 at first; at
//! least halving) until (ε⁺ − ε⁻) ≤ w·ε⁺ (default w = 10⁻³), or the window
//! would exceed the point limit (memory stays bounded by it: about 40
//! bytes a point), or the one-step PLDs' floating-point rounding, which
//! grows as Δ⁻² (the masses are second differences of δ over Δ), would
//! move δ by a hundredth (an estimate, `Rounding` in `curves`); the
//! bracket reached is returned either way, `reached` saying which. A
//! first composition whose window does not fit coarsens the grid, up to
//! 4, and is then refused naming the widest part. Each finer grid's FFT
//! is tilted at the ε the last grid's discrete curve read, within its
//! bracket (a narrow composed loss takes exponents λ up to 24/sd, and a
//! tilt aimed at a loose upper end would amplify the round-off at the
//! true ε by e^{λ·gap}); where no finer grid is allowed and that aim was
//! off, the grid is run once more at the better one. One DP-SGD run alone
//! is [`crate::epsilon`]'s certified figure, this bracket with its upper
//! end tightened by the run's RDP and full-batch bounds.
//! Segments of equal (z, q) are one part raised to their
//! summed steps (a schedule of 10⁵ one-step segments at two settings costs
//! two one-step PLDs), and one objective release alone is its own curve in
//! closed form. Add/remove-one, a direction whose upper curve is at most
//! δ/2 from the last lower end on cannot decide ε⁺ on a finer grid: its
//! coarser composition is kept (its upper curve stays a bound; it leaves
//! the lower end's max) instead of being composed again.
//!
//! *One step* needs no grid: the subsampled Gaussian's loss is monotone in
//! the observation under either relation, so δ(ε) is a difference of normal
//! tails (`OneStep`), evaluated in logs (`pld::terms`; e^ε leaves f64
//! beyond ε ≈ 709.78) and bracketed by its terms' rounding.
//!
//! Both ends bound the true ε of the pair under either relation: replace-one
//! is the tight pair, not a bound on it (group privacy of size 2 on the
//! add/remove curves, used before, was 7–168% above it, and its lower end
//! above the true ε). At q = 1 the pair is the Gaussian mechanism with
//! μ = 2/z per step. An objective-perturbation release in a ledger enters
//! under replace-one as a pair that dominates its own group-privacy bound
//! ([`crate::ObjectiveBound::replace_pld`]).
//!
//! # References
//! - Doroshenko, Ghazi, Kamath, Kumar, Manurangsi (2022), *Connect the dots:
//!   tighter discrete approximations of privacy loss distributions*, PoPETs.
//! - Zhu, Dong, Wang (2022), *Optimal accounting of differential privacy via
//!   characteristic function*, AISTATS (replace-one's dominating pair).
//! - Hoeffding (1963), *Probability inequalities for sums of bounded random
//!   variables*, JASA.
//! - Scarf (1958), *A min-max solution of an inventory problem*, in Studies
//!   in the Mathematical Theory of Inventory and Production (the bound on
//!   E[(Z − a)₊] from the mean and variance).
//! - Gopi, Lee, Wutschitz (2021), *Numerical composition of differential
//!   privacy*, NeurIPS (an ε with lower and upper bounds from a coupling of
//!   the discretised and the true privacy loss).
//! - Higham (2002), *Accuracy and Stability of Numerical Algorithms*, §24.1
//!   (the FFT's error).

mod curves;
mod search;
mod settings;
#[cfg(test)]
mod tests;

pub(crate) use curves::TAIL;
pub use curves::UpperProfile;
pub(crate) use search::{bracket_of, first_grid};
pub use settings::{BracketSettings, EpsilonBracket, Method};
