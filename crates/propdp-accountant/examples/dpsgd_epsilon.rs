//! ε of DP-SGD (Poisson-subsampled Gaussian, add/remove-one) by the PLD and
//! RDP accountants, with the PLD's wall time — the propdp side of
//! scripts/bench/bench_dpsgd_accountant.py.
//! Run: cargo run --release -p propdp-accountant --example dpsgd_epsilon -- Z Q T DELTA GRID
use propdp_accountant::pld::SubsampledGaussian;
use propdp_accountant::rdp;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [z, q, t, delta, grid] = args.as_slice() else {
        eprintln!("usage: dpsgd_epsilon Z Q T DELTA GRID");
        std::process::exit(2);
    };
    let num = |s: &String| s.parse::<f64>().expect("a number");
    let (z, q, t, delta, grid) = (num(z), num(q), t.parse::<u64>().expect("T"), num(delta), num(grid));
    let start = std::time::Instant::now();
    let eps = SubsampledGaussian { z, q }.epsilon(t, delta, grid, 1e-15);
    let seconds = start.elapsed().as_secs_f64();
    match eps {
        Ok(Some(e)) => println!("pld_epsilon {e:.10} seconds {seconds:.4}"),
        Ok(None) => println!("pld_epsilon none seconds {seconds:.4}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
    println!("rdp_epsilon {:.10}", rdp::Curve::new(z, q).epsilon(t, delta));
}
