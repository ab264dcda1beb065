//! Beyond `EVERY_STEP_UP_TO` steps a DP-SGD run touches only its batch at
//! the steps it does not evaluate: the iterates must be those of a run that
//! evaluates every step, and the metrics at the evaluated steps exact.

use nalgebra::DVector;
use propdp_core::loss::Loss;
use propdp_core::{Design, GradientSteps, LossVariant, Model, Prior};
use propdp_sim::data::draw_dataset;
use propdp_sim::gd::{Descent, EVERY_STEP_UP_TO, Partition, evaluation_steps};
use propdp_sim::rng::stream;

#[test]
fn a_thinned_run_has_the_iterates_and_losses_of_a_full_one() {
    let data = draw_dataset(
        &Model::Logistic,
        60,
        30,
        1.0,
        Design::Gaussian,
        Prior::Gaussian,
        &mut stream(3, &[0]),
    );
    let descent = |steps| Descent {
        loss: Loss::Logistic,
        gradient: GradientSteps {
            lambda: 0.1,
            sigma: 0.2,
            eta: 0.05,
            steps,
            loss_variant: LossVariant::Standard,
            sample_rate: 0.1,
            clip: 1.0,
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        },
    };
    // every step up to the threshold: its last iterate
    let mut full = Vec::new();
    descent(EVERY_STEP_UP_TO)
        .run(
            &data.xt,
            &data.y,
            &Partition::single(),
            &mut stream(5, &[1]),
            |t, theta, loss| full.push((t, theta.clone(), loss)),
        )
        .unwrap();
    assert_eq!(full.len(), EVERY_STEP_UP_TO + 1);
    // a longer run evaluates only its grid, which contains that step
    let long = 3 * EVERY_STEP_UP_TO;
    let mut seen = Vec::new();
    descent(long)
        .run(
            &data.xt,
            &data.y,
            &Partition::single(),
            &mut stream(5, &[1]),
            |t, theta, loss| seen.push((t, theta.clone(), loss)),
        )
        .unwrap();
    let at = evaluation_steps(long).unwrap();
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), at);
    let (_, theta, loss) = seen.iter().find(|s| s.0 == EVERY_STEP_UP_TO).unwrap();
    let (_, theta_full, loss_full) = full.last().unwrap();
    assert_eq!(theta, theta_full, "thinning changed the iterates");
    assert_eq!(loss, loss_full);
    // the loss at an evaluated step is the mean over every row
    let (_, theta, loss) = seen.last().unwrap();
    let fit: DVector<f64> = data.xt.tr_mul(theta);
    let direct: f64 = (0..60).map(|i| Loss::Logistic.eval(data.y[i], fit[i]).0).sum::<f64>() / 60.0;
    assert!(
        (loss - direct).abs() < 1e-12 * direct.abs().max(1.0),
        "{loss} vs {direct}"
    );
}
