//! The spectrum a long-horizon solve carries (docs/theory.md §3.4,
//! "Compression"): the fewest nodes of the spectrum's Gauss–Christoffel
//! quadrature in log ω (`propdp_core::covariance::Compressions`) whose
//! measured effect on the metrics is negligible.
//!
//! The atoms' deterministic side (virtual paths, block lanes, state
//! covariances) is most of a spectrum's solve and grows linearly in the
//! atoms carried. The effect of carrying K nodes instead of the spectrum is
//! measured on the linearised dynamics — the exact least squares of §3.2 at
//! step ηh, ridge λ/h and noise σ/h, h = sup ℓ'' (the same (1 − ηλ) decay
//! and ησ noise at the loss's largest curvature) — as the largest change of
//! any metric at any step, full spectrum against K nodes, plus both
//! linearised solves' own quadrature errors. The solve takes the fewest
//! K ≥ [`MIN_NODES`] within [`NEGLIGIBLE_COMPRESSION`] (the effect enters
//! the record's `approx_error`, K its `solver.atoms`), trying them two at a
//! time; a spectrum of at most [`MAX_MODES`] atoms with no such K is carried
//! whole; a larger one takes the rule of at most [`MAX_MODES`] nodes closest
//! to it when that is within [`COMPRESSION_TOL`], or is refused.
//!
//! # References
//! - G. H. Golub, J. H. Welsch, "Calculation of Gauss quadrature rules",
//!   Math. Comp. 23 (1969) 221–230.

use propdp_core::covariance::Covariance;
use rayon::prelude::*;

use super::step::curvature_bound;
use crate::dynamics::least_squares::{self, LeastSquaresParams, LeastSquaresPath};
use crate::dynamics::path::{DmftError, DmftParams};

/// Most atoms the solver carries (one coordinate-side mode each: their
/// deterministic work grows linearly in them); larger spectra are
/// compressed to at most this many nodes.
pub const MAX_MODES: usize = 32;

/// Largest measured effect on a metric of compressing a spectrum of more
/// than [`MAX_MODES`] atoms that a solve accepts.
pub const COMPRESSION_TOL: f64 = 2e-3;

/// Largest measured effect at which a spectrum is carried on fewer nodes:
/// about a quarter of the smallest standard error of a d = 1000,
/// 40-repetition simulation's metrics at the last step of the 20-atom
/// points of docs/theory.md §3.3 ("Precision"; 5.7e-4, the training loss at
/// q = 0.1) — a bias of a quarter of a standard error raises a z² by 1/16
/// at most — and under a sixth of [`super::TRUNCATION_TOL`]. Session 45
/// (was 5e-5): the 20-atom points' five-node rules moved the linearised
/// dynamics by 1.3e-5 to 1.1e-4, their six-node ones by 3e-6 to 5e-6, so
/// 5e-5 carried six atoms where five moved no metric beyond its jitter
/// (docs/theory.md §3.4, "Compression").
pub const NEGLIGIBLE_COMPRESSION: f64 = 1.5e-4;

/// The fewest nodes a solve tries (fewer only for a spectrum of fewer
/// distinct eigenvalues, whose rule of that many nodes is exact): on the 20-atom power laws of
/// docs/theory.md §3.4 ("Compression") three moved the linearised dynamics
/// by 1.2·10⁻² and 3.2·10⁻², far outside [`NEGLIGIBLE_COMPRESSION`], and each
/// candidate costs a linearised solve (0.03–0.3 s at T = 10⁴).
const MIN_NODES: usize = 4;

/// The relative precision of the linearised solves (their quadrature's K
/// against 2K nodes; the library's default is 10⁻⁸): their errors, at most
/// this times the largest metric (≤ 5 on the 20-atom points), are added to
/// the measured effect: together at most 10⁻⁶, under a hundredth of
/// [`NEGLIGIBLE_COMPRESSION`], where they reach it.
const LINEARISED_TOL: f64 = 1e-7;

/// A spectrum as a solve carries it, and the measured effect of carrying it
/// instead of the spectrum asked for.
#[derive(Debug, Clone, Default)]
pub(super) struct Carried {
    pub(super) cov: Option<Covariance>,
    pub(super) error: f64,
}

/// The spectrum a solve of `p` carries for `cov` (module docs); `None`:
/// isotropic features.
pub(super) fn carried(p: &DmftParams, cov: Option<&Covariance>) -> Result<Carried, DmftError> {
    let Some(cov) = cov else {
        return Ok(Carried::default());
    };
    let atoms = cov.atoms().len();
    let whole = || Carried {
        cov: Some(cov.clone()),
        error: 0.0,
    };
    let rules = cov.compressions(MAX_MODES.min(atoms - 1));
    let top = rules.max_nodes();
    if top < 2 {
        return Ok(whole());
    }
    // fewer than MIN_NODES only when the atoms have fewer distinct eigenvalues
    let start = MIN_NODES.min(top);
    let h = curvature_bound(p.loss);
    let ls = LeastSquaresParams {
        delta: p.delta,
        s2: p.s2,
        noise_sd: p.noise_sd,
        lambda: p.lambda / h,
        sigma: p.sigma / h,
        eta: p.eta * h,
        sample_rate: p.sample_rate,
        steps: p.steps,
    };
    let path = |c: &Covariance| {
        least_squares::solve_with_covariance_within(&ls, c, LINEARISED_TOL).map_err(|e| DmftError::Invalid {
            what: format!(
                "the effect of compressing the spectrum's {atoms} atoms could not be measured on the linearised \
                 dynamics ({e}): bin the spectrum into at most {MAX_MODES} levels"
            ),
            params: Box::new(*p),
        })
    };
    // the candidates two at a time (the first beside the full spectrum): each
    // is one linearised solve, and the cores are otherwise idle here
    let candidate = |nodes: usize| match rules.rule(nodes) {
        Some(small) => path(&small).map(|l| Some((small, l))),
        None => Ok(None),
    };
    let (full, first) = rayon::join(|| path(cov), || candidate(start));
    let full = full?;
    let mut batch = vec![first];
    let mut next = start + 1;
    let mut closest: Option<Carried> = None;
    loop {
        for tried in batch {
            let Some((small, approx)) = tried? else {
                continue;
            };
            let change = effect(&full, &approx);
            let candidate = Carried {
                cov: Some(small),
                error: change,
            };
            if change <= NEGLIGIBLE_COMPRESSION {
                return Ok(candidate);
            }
            if closest.as_ref().is_none_or(|c| change < c.error) {
                closest = Some(candidate);
            }
        }
        if next > top {
            break;
        }
        let last = (next + 1).min(top);
        batch = (next..=last).into_par_iter().map(candidate).collect();
        next = last + 1;
    }
    if atoms <= MAX_MODES {
        return Ok(whole());
    }
    match closest {
        Some(c) if c.error <= COMPRESSION_TOL => Ok(c),
        _ => Err(DmftError::Invalid {
            what: format!(
                "the spectrum's {atoms} atoms are above the long-horizon solver's {MAX_MODES}, and no quadrature of \
                 at most {MAX_MODES} nodes changes the linearised dynamics' metrics by at most \
                 {COMPRESSION_TOL:e} (closest: {}): bin the spectrum into at most {MAX_MODES} levels yourself \
                 (merging directions of similar eigenvalue)",
                closest.map_or("none with non-negative teacher energies".into(), |c| format!(
                    "{:.2e}",
                    c.error
                ))
            ),
            params: Box::new(*p),
        }),
    }
}

/// The largest change of a metric at any step between two linearised
/// paths, plus the bound on each path's own quadrature error (its relative
/// error times its largest value).
fn effect(full: &LeastSquaresPath, approx: &LeastSquaresPath) -> f64 {
    let own = |l: &LeastSquaresPath| {
        l.approx_error
            * l.path
                .mean
                .values()
                .flat_map(|v| v.iter().map(|x| x.abs()))
                .fold(0.0, f64::max)
    };
    let change = full
        .path
        .mean
        .iter()
        .filter_map(|(name, a)| approx.path.mean.get(name).map(|b| (a, b)))
        .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
        .fold(0.0, f64::max);
    change + own(full) + own(approx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use propdp_core::covariance::TeacherShape;
    use propdp_core::loss::Loss;

    fn clipped_huber(steps: usize) -> DmftParams {
        DmftParams {
            delta: 0.5,
            s2: 1.0,
            lambda: 0.05,
            sigma: 0.3,
            eta: 0.1,
            steps,
            sample_rate: 0.1,
            clip: 1.0,
            loss: Loss::Huber { m: 1.0 },
            noise_sd: 0.5,
            points: 1024,
            scrambles: 4,
            seed: 7,
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        }
    }

    /// A smooth 20-atom power law is carried on a handful of nodes, its
    /// measured effect within the tolerance; isotropic features carry none.
    #[test]
    fn a_power_law_is_carried_on_a_few_nodes() {
        let cov = Covariance::power_law(1.0, 20.0, 20, TeacherShape::Aligned)
            .unwrap()
            .unwrap();
        let c = carried(&clipped_huber(1000), Some(&cov)).unwrap();
        let nodes = c.cov.as_ref().unwrap().atoms().len();
        assert!((MIN_NODES..=8).contains(&nodes), "{nodes} nodes");
        assert!(c.error > 0.0 && c.error <= NEGLIGIBLE_COMPRESSION, "{}", c.error);
        let none = carried(&clipped_huber(1000), None).unwrap();
        assert!(none.cov.is_none() && none.error == 0.0);
    }

    /// Sixty atoms on three eigenvalues are the three-node rule (exact: the
    /// atoms of one eigenvalue evolve alike), not sixty atoms.
    #[test]
    fn atoms_of_few_eigenvalues_are_carried_on_those() {
        let omega: Vec<f64> = (0..60).map(|i| [20.0, 1.0, 0.05][i % 3]).collect();
        let teacher: Vec<f64> = (0..60).map(|i| 0.5 + (i % 7) as f64 / 7.0).collect();
        let cov = Covariance::from_columns(&omega, &[1.0 / 60.0; 60], &teacher, "c")
            .unwrap()
            .unwrap();
        let c = carried(&clipped_huber(300), Some(&cov)).unwrap();
        let kept = c.cov.unwrap();
        assert_eq!(kept.atoms().len(), 3);
        assert!(c.error < 1e-9, "{}", c.error);
        assert!((kept.teacher_field() / cov.teacher_field() - 1.0).abs() < 1e-12);
    }
}
