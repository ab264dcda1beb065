//! A config-driven sweep, as `propdp run` and `propdp validate` do it:
//! results written incrementally, then theory compared with simulation.
//! Run: cargo run --release -p propdp --example run
use propdp::Silent;
use propdp::core::Config;
use propdp::run::{Sources, run};
use propdp::rundir::Existing;

const CONFIG: &str = r#"
[problem]
model = "huber"
delta = [0.5, 2.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "output"
lambda = 1.0
epsilon = [1.0, 4.0]
delta_priv = 1e-6
[simulation]
d = 100
reps = 4
"#;

fn main() -> propdp::Result<()> {
    let cfg = Config::from_toml_str(CONFIG)?;
    let dir = std::env::temp_dir().join("propdp-example-run");
    let s = run(&cfg, "example", &dir, Existing::Overwrite, Sources::default(), &Silent)?;
    println!("{} records in {}", s.written, s.results().display());
    let v = propdp::validate::validate(&cfg, "example", &dir, &Silent)?;
    print!("{}", propdp::validate::table(&v.rows));
    println!("{} of {} comparisons fail", v.failed(), v.rows.len());
    for f in propdp::figures::draw(&s.results(), None)?.files {
        println!("figure {}", f.display());
    }
    Ok(())
}
