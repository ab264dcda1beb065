//! A solver that cannot deliver says so with the values a user set (config
//! keys: `delta = 0.5, …`), never a Rust `Debug` dump of its parameter
//! struct (`DmftParams { delta: 0.5, … }`).

use propdp_core::{Algorithm, LossVariant, Model, NoiseLaw, Point};
use propdp_theory::dynamics::least_squares::{LeastSquaresError, LeastSquaresParams};
use propdp_theory::fixed_points::huber::{HuberError, HuberParams};
use propdp_theory::fixed_points::logistic::{LogisticError, LogisticParams};
use propdp_theory::solve::TheorySolver;

fn plain(what: &str, m: &str) {
    assert!(!m.contains("Params") && !m.contains(": 0.5,"), "{what}: {m}");
    assert!(m.contains("delta = 0.5") && m.contains("lambda = 0.1"), "{what}: {m}");
}

#[test]
fn diverging_dynamics_are_refused_with_the_values_set() {
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    // η²σ² = 9e12 per step: beyond the state evolution's range (1e12) at the first step
    let dpgd = Algorithm::Dpgd {
        lambda: 0.1,
        sigma: 1e7,
        eta: 0.3,
        steps: 5,
        loss_variant: LossVariant::Standard,
    };
    let point = Point::new(0.5, 1.0, huber, dpgd).unwrap();
    let m = TheorySolver::default().solve(&point, None).unwrap_err().to_string();
    plain("dmft", &m);
    assert!(
        m.contains("sigma = 10000000") && m.contains("loss huber (M = 1)"),
        "{m}"
    );
}

#[test]
fn fixed_point_and_least_squares_errors_name_the_values_set() {
    let h = HuberParams {
        delta: 0.5,
        s2: 1.0,
        huber_m: 1.0,
        noise: NoiseLaw::StudentT { dof: 3.0, scale: 0.5 },
        lambda: 0.1,
        sigma: 2.0,
    };
    let m = HuberError::NoSolution {
        params: h,
        reason: "why".into(),
    }
    .to_string();
    plain("huber", &m);
    assert!(
        m.contains(r#"noise = { law = "student_t", dof = 3, scale = 0.5 }"#),
        "{m}"
    );
    let l = LogisticParams {
        delta: 0.5,
        s2: 1.0,
        lambda: 0.1,
        sigma: 2.0,
    };
    plain(
        "logistic",
        &LogisticError::NoSolution {
            params: l,
            reason: "why".into(),
        }
        .to_string(),
    );
    let p = LeastSquaresParams {
        delta: 0.5,
        s2: 1.0,
        noise_sd: 0.5,
        lambda: 0.1,
        sigma: 0.2,
        eta: 0.3,
        sample_rate: 0.2,
        steps: 100,
    };
    plain(
        "least squares",
        &LeastSquaresError::Diverges {
            gain: 1.2,
            ratio: 0.4,
            params: p,
        }
        .to_string(),
    );
}
