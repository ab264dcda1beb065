//! The Gaussian conditionings' linear solve, (A + ρI)x = b for a symmetric
//! positive definite A of the sizes the long-horizon solver meets (the
//! generator's ~30 features, the spectrum field's ~66): propdp's row-wise
//! Cholesky (`numerics::cholesky::spd_solve`) against nalgebra's, measured
//! in the same run.
//!
//! `cargo bench -p propdp-theory --bench cholesky`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use nalgebra::{DMatrix, DVector};
use propdp_theory::numerics::cholesky::spd_solve;
use std::hint::black_box;

fn system(n: usize) -> (DMatrix<f64>, DVector<f64>) {
    let g = DMatrix::from_fn(n, 2 * n, |i, j| ((i * 31 + j * 17) % 23) as f64 / 11.0 - 1.0);
    (
        &g * g.transpose() / n as f64,
        DVector::from_fn(n, |i, _| (i as f64).sin()),
    )
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("spd_solve");
    for n in [30, 66] {
        let (a, b) = system(n);
        let ridge = 1e-12 * a.trace() / n as f64;
        group.bench_with_input(BenchmarkId::new("propdp", n), &n, |bench, _| {
            bench.iter(|| spd_solve(black_box(&a), ridge, black_box(&b)));
        });
        group.bench_with_input(BenchmarkId::new("nalgebra", n), &n, |bench, _| {
            bench.iter(|| {
                let mut ridged = black_box(&a).clone();
                ridged.set_diagonal(&(a.diagonal().add_scalar(ridge)));
                ridged.cholesky().map(|c| c.solve(black_box(&b)))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
