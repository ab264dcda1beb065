//! The noise each algorithm needs for a privacy budget, through the library
//! API (the `propdp privacy` subcommand does the same from the shell).
//! Run: cargo run --release -p propdp-core --example calibrate
use propdp_core::Model;
use propdp_core::accountant::{MechanismKind, Neighbouring};
use propdp_core::problem::{Budget, Target};

fn main() {
    let model = Model::Logistic;
    let kinds = [
        ("objective, λ = 1", MechanismKind::Objective { lambda: 1.0 }),
        ("output, λ = 1", MechanismKind::Output { lambda: 1.0 }),
        ("DP-GD, T = 10", MechanismKind::Dpgd { steps: 10 }),
    ];
    let budgets = [
        Target::Approx {
            epsilon: 1.0,
            delta_priv: 1e-6,
        },
        Target::Approx {
            epsilon: 4.0,
            delta_priv: 1e-6,
        },
        Target::Zcdp { rho: 0.5 },
    ];
    println!("logistic regression, ‖x‖ ≤ 1, replace-one neighbours");
    for target in budgets {
        println!("{target:?}:");
        for (name, kind) in kinds {
            let budget = Budget::new(target, Neighbouring::ReplaceOne);
            match budget.calibrate(&model, kind) {
                Some(noise) => println!("  {name:<18} noise {noise:.4}"),
                None => println!("  {name:<18} unreachable (below the objective-perturbation floor)"),
            }
        }
    }
}
