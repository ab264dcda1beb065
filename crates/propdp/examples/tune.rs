//! Which algorithm, with which hyperparameters, for a privacy budget — from
//! theory alone, as `propdp tune` does it.
//! Run: cargo run --release -p propdp --example tune
use propdp::Silent;
use propdp::rundir::Existing;

const CONFIG: &str = r#"
[problem]
model = "logistic"
delta = [0.5, 2.0]
s2 = 4.0
[tune]
algorithms = ["objective", "output", "dpgd"]
epsilon = [1.0, 8.0]
delta_priv = 1e-6
steps = [1, 2, 4]
"#;

fn main() -> propdp::Result<()> {
    let dir = std::env::temp_dir().join("propdp-example-tune");
    let outcome = propdp::tune::tune(CONFIG, "example", &dir, Existing::Overwrite, &Silent)?;
    print!("{}", outcome.table());
    for cell in outcome.cells.iter().filter(|c| c.best.is_some()) {
        let b = cell.best.as_ref().expect("filtered");
        println!(
            "δ = {}, ε = {}: {} best at λ = {:.3} → {:.4}",
            cell.delta, cell.level, cell.algorithm, b.tuned.lambda, b.tuned.value
        );
    }
    Ok(())
}
