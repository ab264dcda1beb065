//! The validated problem description: the statistical model, the DP
//! algorithm, the privacy budget its noise was calibrated to, and one sweep
//! point combining them. Each fact about a model or an algorithm (its name,
//! its loss constants, the name of its noise parameter, the λ = 0 rule) is
//! decided here, once.

mod algorithm;
mod budget;
mod model;
mod point;
mod prefix_sum;
mod strategy;

pub use algorithm::{
    Algorithm, AlgorithmKind, GradientSteps, LossVariant, Shape, is_noise_param, is_non_private, rounds,
};
pub(crate) use budget::check_budget_applies;
pub use budget::{Budget, Target};
pub use model::{DataModel, Design, Model, ModelKind, NoiseLaw, Prior};
pub use point::{DMFT_MAX_STEPS, Intercept, MAX_STEPS, Point, TwoCluster, mean_step_smoothness_at};
pub(crate) use strategy::BltFields;
pub use strategy::{MAX_BANDS, MAX_BUFFERS, NoiseRecurrence, Strategy};

use crate::error::ConfigError;

/// `x` > 0 and finite, or an error naming `field`.
pub(crate) fn positive(field: &str, x: f64) -> Result<(), ConfigError> {
    if x > 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::range(field, x, "> 0 and finite"))
    }
}

/// `x` ≥ 0 and finite, or an error naming `field`.
pub(crate) fn nonneg(field: &str, x: f64) -> Result<(), ConfigError> {
    if x >= 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::range(field, x, "≥ 0 and finite"))
    }
}

#[cfg(test)]
mod tests {
    //! One test per fact decided in this module.
    use super::*;
    use crate::metrics::sign_error;

    #[test]
    fn names_round_trip_and_are_the_serde_names() {
        for k in AlgorithmKind::ALL {
            assert_eq!(k.name().parse::<AlgorithmKind>(), Ok(k));
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{}\"", k.name()));
        }
        for k in ModelKind::ALL {
            assert_eq!(k.name().parse::<ModelKind>(), Ok(k));
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{}\"", k.name()));
        }
    }

    #[test]
    fn the_noise_parameter_is_tau_for_output_only() {
        let names: Vec<&str> = AlgorithmKind::ALL.iter().map(|k| k.noise_param()).collect();
        assert_eq!(names, ["sigma", "tau", "sigma", "sigma"]);
        let a = Algorithm::Output { lambda: 1.0, tau: 0.3 };
        assert_eq!((a.noise(), a.with_noise(0.7).noise()), (0.3, 0.7));
    }

    #[test]
    fn loss_constants_per_model() {
        let huber = Model::Huber {
            huber_m: 2.5,
            noise: NoiseLaw::Gaussian { sd: 1.0 },
        };
        assert_eq!((huber.lipschitz(), huber.curvature()), (2.5, 1.0));
        assert_eq!((Model::Logistic.lipschitz(), Model::Logistic.curvature()), (1.0, 0.25));
    }

    #[test]
    fn lambda_zero_is_refused_only_where_privacy_needs_a_ridge() {
        for (kind, refused) in [
            (AlgorithmKind::Objective, true),
            (AlgorithmKind::Output, true),
            (AlgorithmKind::Dpgd, false),
            (AlgorithmKind::Dpsgd, false),
        ] {
            assert!(
                kind.check_lambda(0.0, false).is_ok(),
                "{kind}: non-private λ = 0 is fine"
            );
            assert_eq!(kind.check_lambda(0.0, true).is_err(), refused, "{kind}");
            assert!(kind.check_lambda(-1.0, false).is_err() && kind.check_lambda(f64::NAN, false).is_err());
        }
        let p = Point::new(0.5, 1.0, Model::Logistic, Algorithm::Output { lambda: 0.0, tau: 0.0 });
        assert!(p.is_ok(), "λ = 0 with τ = 0 is the unregularized estimator");
    }

    #[test]
    fn only_a_zero_noise_is_non_private() {
        assert!(is_non_private("sigma", 0.0) && is_non_private("tau", 0.0));
        assert!(!is_non_private("sigma", 1e-300) && !is_non_private("lambda", 0.0) && !is_non_private("eta", 0.0));
    }

    #[test]
    fn a_tie_counts_half() {
        assert_eq!(sign_error(1.0, 0.0), 0.5);
        assert_eq!(sign_error(-1.0, 0.0), 0.5);
        assert_eq!(sign_error(1.0, 2.0), 0.0);
        assert_eq!(sign_error(-1.0, 2.0), 1.0);
    }

    #[test]
    fn points_are_valid_by_construction() {
        let p = Point::new(
            0.5,
            1.0,
            Model::Logistic,
            Algorithm::Objective {
                lambda: 1.0,
                sigma: 0.0,
            },
        )
        .unwrap();
        assert!(
            p.with_algorithm(Algorithm::Objective {
                lambda: 1.0,
                sigma: -1.0
            })
            .is_err()
        );
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Point>(&json).unwrap(), p);
        let bad = json.replace("\"delta\":0.5", "\"delta\":-0.5");
        let e = serde_json::from_str::<Point>(&bad).unwrap_err().to_string();
        assert!(e.contains("problem.delta"), "{e}");
        assert_eq!(p.problem_params().keys().collect::<Vec<_>>(), ["delta", "s2"]);
    }
}
