//! `[simulation] data = { …, labels = "y" }` for logistic regression (issue
//! #60 item 4): a data set drawn from a known logistic teacher, its 0/1
//! label column fitted as the data's own labels, agrees under `validate`
//! with the prediction at the teacher's true s² and energies in the data's
//! eigen-directions — and a prediction at the wrong s² is rejected; a label
//! column of three values is refused naming the field and the values;
//! regression labels are standardised over the whole column.

use std::path::Path;

use nalgebra::{DMatrix, SymmetricEigen};
use propdp::Silent;
use propdp::core::Config;
use propdp::core::record::{Record, Source};
use propdp::core::validation::Verdict;
use propdp::run::{Sources, run};
use propdp::rundir::Existing;
use propdp::sim::data::draw_gaussian_vector;
use propdp::sim::rng::stream;
use rand::RngExt;

/// Features, rows.
const D: usize = 40;
const N: usize = 20_000;

/// The rows written (rounded to the digits in the CSV), their labels (0/1)
/// and the teacher θ* in the rows' own units.
struct Drawn {
    x: DMatrix<f64>,
    theta: Vec<f64>,
}

/// N rows x ~ N(0, diag(ω)/d) with ω = 0.25, 1, 1.75 in turn (mean 1), a
/// teacher of energies ∝ 1, 2, 0.5 along them with ‖θ*‖²/d = 2, and labels
/// P(y = 1 | x) = sigmoid(xᵀθ*), written as `x0,…,x39,y` with y ∈ {0, 1}.
fn write_logistic(dir: &Path) -> Drawn {
    let omega = [0.25, 1.0, 1.75];
    let energy = [1.0, 2.0, 0.5];
    let mut rng = stream(60, &[4]);
    let t = draw_gaussian_vector(D, &mut rng);
    let norm: f64 = (0..D).map(|j| energy[j % 3]).sum::<f64>() / D as f64;
    let theta: Vec<f64> = (0..D).map(|j| t[j] * (2.0 * energy[j % 3] / norm).sqrt()).collect();
    let z = draw_gaussian_vector(N * D, &mut rng);
    let mut text = (0..D).map(|j| format!("x{j}")).collect::<Vec<_>>().join(",") + ",y\n";
    let mut x = DMatrix::zeros(N, D);
    for i in 0..N {
        let mut cells = Vec::with_capacity(D + 1);
        let mut field = 0.0;
        for j in 0..D {
            let cell = format!("{:.6e}", z[i * D + j] * (omega[j % 3] / D as f64).sqrt());
            x[(i, j)] = cell.parse::<f64>().unwrap();
            field += x[(i, j)] * theta[j];
            cells.push(cell);
        }
        let y = u8::from(rng.random::<f64>() < 1.0 / (1.0 + (-field).exp()));
        cells.push(y.to_string());
        text += &(cells.join(",") + "\n");
    }
    std::fs::write(dir.join("rows.csv"), text).unwrap();
    Drawn { x, theta }
}

/// The spectrum file of the rows (eigenvalues of the centred sample
/// covariance, largest first, as `propdp spectrum` orders them) with the
/// teacher's true energies (vₖᵀθ*)² in those directions, and the true s² in
/// propdp's scale: rows divided by √(Σλ), so θ̃*ₖ = √(Σλ)·vₖᵀθ* and
/// s² = Σλ·‖θ*‖²/d.
fn true_spectrum(dir: &Path, drawn: &Drawn) -> f64 {
    let mut xc = drawn.x.clone();
    for j in 0..D {
        let mean = xc.column(j).mean();
        xc.column_mut(j).add_scalar_mut(-mean);
    }
    let eig = SymmetricEigen::new(xc.tr_mul(&xc) / N as f64);
    let mut order: Vec<usize> = (0..D).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let mut text = String::from("eigenvalue,weight,teacher\n");
    for &k in &order {
        let proj: f64 = (0..D).map(|j| eig.eigenvectors[(j, k)] * drawn.theta[j]).sum();
        text += &format!("{:e},{:e},{:e}\n", eig.eigenvalues[k], 1.0 / D as f64, proj * proj);
    }
    std::fs::write(dir.join("spectrum.csv"), text).unwrap();
    let total: f64 = eig.eigenvalues.iter().sum();
    total * drawn.theta.iter().map(|t| t * t).sum::<f64>() / D as f64
}

fn config(dir: &Path, text: &str) -> Config {
    std::fs::write(dir.join("c.toml"), text).unwrap();
    propdp::run::load(&dir.join("c.toml")).unwrap()
}

fn logistic(s2: f64, algorithm: &str) -> String {
    format!(
        r#"
[problem]
model = "logistic"
delta = 0.25
s2 = {s2}
covariance = {{ file = "spectrum.csv" }}
[algorithm]
{algorithm}
[simulation]
d = {D}
reps = 200
seed = 11
data = {{ file = "rows.csv", labels = "y" }}
"#
    )
}

#[test]
fn logistic_on_the_datas_own_labels_agrees_with_the_prediction_at_the_true_s2() {
    let tmp = tempfile::tempdir().unwrap();
    let drawn = write_logistic(tmp.path());
    let s2 = true_spectrum(tmp.path(), &drawn);
    // ‖θ*‖²/d = 2 in expectation; this draw of 40 coordinates
    assert!(s2 > 1.0 && s2 < 3.0, "s² = {s2}");
    for (algorithm, metrics) in [
        (
            "kind = \"objective\"\nlambda = 0.5\nsigma = [0.0, 1.0]",
            &["noise_corr", "norm2", "test_class_err", "test_logloss", "train_logloss"][..],
        ),
        (
            "kind = \"dpgd\"\nlambda = 0.1\nsigma = 0.5\neta = 0.5\nsteps = 10",
            &["norm2", "test_class_err", "train_loss"][..],
        ),
    ] {
        let out = tmp.path().join(format!("out{}", metrics.len()));
        let v = propdp::validate::validate(&config(tmp.path(), &logistic(s2, algorithm)), "c", &out, &Silent).unwrap();
        let records = Record::read_file(&v.run.results()).unwrap();
        let sims: Vec<&Record> = records.iter().filter(|r| r.source == Source::Simulation).collect();
        assert!(!sims.is_empty());
        for r in &sims {
            let keys: Vec<&str> = r.metrics.keys().map(String::as_str).collect();
            assert_eq!(keys, metrics, "{algorithm}: no metric of θ*");
            assert_eq!(r.simulation.as_ref().unwrap().labels.as_deref(), Some("y"));
        }
        let class: Vec<_> = v.rows.iter().filter(|c| c.metric == "test_class_err").collect();
        assert_eq!(
            class.len(),
            sims.len(),
            "{algorithm}: test_class_err compared at every point"
        );
        for c in &v.rows {
            eprintln!(
                "{}: {} {} z = {:.2} {:?}",
                metrics.len(),
                c.params,
                c.metric,
                c.z(),
                c.verdict
            );
            assert_eq!(c.verdict, Verdict::Pass, "{algorithm}: {c:?}");
        }
        // the prediction at half the true s² misses the data's own labels
        let wrong = tmp.path().join(format!("wrong{}", metrics.len()));
        let v = propdp::validate::validate(
            &config(tmp.path(), &logistic(s2 / 2.0, algorithm)),
            "c",
            &wrong,
            &Silent,
        )
        .unwrap();
        let missed = v
            .rows
            .iter()
            .filter(|c| c.metric == "test_class_err" && c.verdict == Verdict::Fail);
        assert_eq!(missed.count(), class.len(), "{algorithm}: s²/2 not rejected");
    }
}

#[test]
fn a_label_column_of_three_values_is_refused_for_logistic_naming_the_field_and_values() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::from("a,b,c,y\n");
    let mut rng = stream(60, &[5]);
    for i in 0..200 {
        let r: Vec<f64> = (0..3).map(|_| rng.random::<f64>() - 0.5).collect();
        text += &format!("{},{},{},{}\n", r[0], r[1], r[2], i % 3);
    }
    std::fs::write(tmp.path().join("rows.csv"), text).unwrap();
    let cfg = config(
        tmp.path(),
        "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ns2 = 1.0\n[algorithm]\nkind = \"objective\"\nlambda = 0.5\n\
         sigma = 0.0\n[simulation]\nd = 3\nreps = 2\nseed = 1\ndata = { file = \"rows.csv\", labels = \"y\" }\n",
    );
    let e = run(
        &cfg,
        "c",
        &tmp.path().join("o"),
        Existing::Refuse,
        Sources::default(),
        &Silent,
    )
    .unwrap_err();
    assert_eq!(e.field(), Some("simulation.data.labels"), "{e:#}");
    let text = format!("{e:#}");
    assert!(text.contains("3 distinct values: 0, 1, 2"), "{text}");
}

/// Regression labels are centred and divided by their standard deviation
/// (ddof = 0) over the whole column: the records of labels y and of
/// 1000·y + 5 are the same, and DP-GD's test_mse at θ = 0 (the mean square
/// of the held-out labels) is about 1.
#[test]
fn regression_labels_are_standardised_over_the_whole_column() {
    let tmp = tempfile::tempdir().unwrap();
    let mut rng = stream(60, &[6]);
    let (mut plain, mut scaled) = (String::from("a,b,c,d,y\n"), String::from("a,b,c,d,y\n"));
    for _ in 0..400 {
        let r: Vec<f64> = (0..4).map(|_| rng.random::<f64>() - 0.5).collect();
        let y = 3.0 * r[0] - r[1] + 0.5 * (rng.random::<f64>() - 0.5);
        let row = format!("{},{},{},{}", r[0], r[1], r[2], r[3]);
        plain += &format!("{row},{y}\n");
        scaled += &format!("{row},{}\n", 1000.0 * y + 5.0);
    }
    let mut results = Vec::new();
    for (name, text) in [("plain.csv", plain), ("scaled.csv", scaled)] {
        std::fs::write(tmp.path().join(name), text).unwrap();
        let cfg = config(
            tmp.path(),
            &format!(
                "[problem]\nmodel = \"least_squares\"\ndelta = 0.1\ns2 = 1.0\nnoise = {{ law = \"gaussian\", sd = 0.5 }}\n\
                 [algorithm]\nkind = \"dpgd\"\nlambda = 0.01\nsigma = 0.01\neta = 0.1\nsteps = 50\n[simulation]\nd = 4\n\
                 reps = 20\nseed = 1\ndata = {{ file = \"{name}\", labels = \"y\" }}\n"
            ),
        );
        let out = tmp.path().join(name.replace(".csv", ""));
        let sims = Sources {
            theory: false,
            simulation: true,
        };
        run(&cfg, "c", &out, Existing::Refuse, sims, &Silent).unwrap();
        let r = Record::read_file(&out.join("results.jsonl"))
            .unwrap()
            .into_iter()
            .find(|r| r.source == Source::Simulation)
            .unwrap();
        results.push(r);
    }
    let (a, b) = (&results[0], &results[1]);
    for (name, &v) in &a.metrics {
        assert!(
            (v - b.metrics[name]).abs() <= 1e-9 * v.abs().max(1.0),
            "{name}: {v} vs {}",
            b.metrics[name]
        );
    }
    let first = a.per_step.as_ref().unwrap()["test_mse"][0];
    assert!((first - 1.0).abs() < 0.15, "test_mse at θ = 0: {first}");
}
