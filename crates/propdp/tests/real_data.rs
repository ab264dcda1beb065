//! `[simulation] data`: simulations on the rows of a data set — the records
//! name the data and its hash, a covariance from `propdp spectrum` of the
//! same data gives the teacher's energies, and every way the data cannot
//! serve the config is refused before any work, naming the field.

use std::path::Path;

use propdp::Silent;
use propdp::core::Config;
use propdp::core::record::{Record, Source};
use propdp::data_spectrum;
use propdp::run::{Sources, run};
use propdp::rundir::Existing;

/// 300 rows: 8 columns of standard deviations 3, 2, 1, 1, 0.5, 0.5, 0.3,
/// 0.2 (a fixed pseudo-random sequence), a constant column and a label.
fn write_data(dir: &Path) {
    let mut state: u64 = 12345;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let sd = [3.0, 2.0, 1.0, 1.0, 0.5, 0.5, 0.3, 0.2];
    let mut text = String::from("a,b,c,d,e,f,g,h,const,y\n");
    for _ in 0..300 {
        let row: Vec<f64> = sd.iter().map(|s| s * 3.4 * uniform()).collect();
        let y: f64 = row.iter().sum::<f64>() + uniform();
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        text += &format!("{},7,{y}\n", cells.join(","));
    }
    std::fs::write(dir.join("data.csv"), text).unwrap();
}

fn config(dir: &Path, text: &str) -> Result<Config, String> {
    std::fs::write(dir.join("c.toml"), text).unwrap();
    propdp::run::load(&dir.join("c.toml")).map_err(|e| format!("{e:#}"))
}

const BASE: &str = r#"
[problem]
model = "huber"
delta = [0.5, 1.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
COV
[algorithm]
kind = "objective"
lambda = 0.5
sigma = 1.0
[simulation]
d = 8
reps = 4
seed = 3
data = { file = "data.csv", drop = ["y"] }
"#;

#[test]
fn a_simulation_on_real_rows_records_its_data_and_uses_the_spectrum_teacher() {
    let tmp = tempfile::tempdir().unwrap();
    write_data(tmp.path());
    let s = data_spectrum::from_file(&tmp.path().join("data.csv"), Some("y"), &[], false, None).unwrap();
    assert_eq!(
        (s.eigenvalues.len(), s.constant.clone()),
        (8, vec!["const".to_string()])
    );
    data_spectrum::write_new(&tmp.path().join("spectrum.csv"), &s.to_csv("data.csv")).unwrap();
    let cfg = config(
        tmp.path(),
        &BASE.replace("COV", "covariance = { file = \"spectrum.csv\" }"),
    )
    .unwrap();
    let out = tmp.path().join("out");
    run(&cfg, "c", &out, Existing::Refuse, Sources::default(), &Silent).unwrap();
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let records: Vec<Record> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let sims: Vec<&Record> = records.iter().filter(|r| r.source == Source::Simulation).collect();
    assert_eq!(sims.len(), 2);
    for r in &sims {
        let sim = r.simulation.as_ref().unwrap();
        assert!(
            sim.data.as_deref().is_some_and(|d| d.ends_with("data.csv")),
            "{:?}",
            sim.data
        );
        assert_eq!((sim.d, sim.n), (8, (8.0 / r.params["delta"]).round() as usize));
        assert_eq!(r.provenance.data_sha256.as_ref().map(String::len), Some(64));
        assert!(r.metrics["pred_err2"] > 0.0 && r.metrics["pred_err2"] < r.metrics["est_err2"]);
    }
    // the same run again: the same numbers (streams of (seed, point, d, repetition))
    let again = tmp.path().join("again");
    run(&cfg, "c", &again, Existing::Refuse, Sources::default(), &Silent).unwrap();
    assert_eq!(std::fs::read_to_string(again.join("results.jsonl")).unwrap(), text);
    // a changed data file: resume refuses
    std::fs::write(
        tmp.path().join("data.csv"),
        std::fs::read_to_string(tmp.path().join("data.csv")).unwrap() + "1,2,3,4,5,6,7,8,7,1\n",
    )
    .unwrap();
    let cfg = config(
        tmp.path(),
        &BASE.replace("COV", "covariance = { file = \"spectrum.csv\" }"),
    )
    .unwrap();
    let e = run(&cfg, "c", &out, Existing::Resume, Sources::default(), &Silent).unwrap_err();
    assert!(e.to_string().contains("another data file"), "{e}");
}

/// `labels = "y"`: the data's own labels are fitted; the records hold no
/// metric that needs a ground truth.
#[test]
fn the_datas_own_labels_leave_out_the_metrics_of_a_ground_truth() {
    let tmp = tempfile::tempdir().unwrap();
    write_data(tmp.path());
    let text = BASE.replace("COV", "").replace("drop = [\"y\"]", "labels = \"y\"");
    let cfg = config(tmp.path(), &text).unwrap();
    let out = tmp.path().join("out");
    run(&cfg, "c", &out, Existing::Refuse, Sources::default(), &Silent).unwrap();
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    for r in text.lines().map(|l| serde_json::from_str::<Record>(l).unwrap()) {
        if r.source == Source::Simulation {
            let keys: Vec<&str> = r.metrics.keys().map(String::as_str).collect();
            assert_eq!(keys, ["noise_corr", "norm2", "test_mse", "train_resid_trunc"]);
            // y = Σ columns + uniform noise, standardised (Var y = 1): the fit beats the mean (n = 8 or 16 rows)
            assert!(r.metrics["test_mse"] < 1.0, "{:?}", r.metrics);
        }
    }
}

/// DP-SGD and DP-GD on the data's own labels record test_mse on the
/// held-out rows at every step, as objective perturbation does (#44 item 6).
#[test]
fn gradient_descent_on_the_datas_own_labels_records_the_test_error() {
    let tmp = tempfile::tempdir().unwrap();
    write_data(tmp.path());
    for (kind, extra) in [("dpsgd", "sample_rate = 0.5\nclip = 5.0\n"), ("dpgd", "")] {
        let text = BASE
            .replace("COV", "")
            .replace("drop = [\"y\"]", "labels = \"y\"")
            .replace("delta = [0.5, 1.0]", "delta = 0.1")
            .replace(
                "kind = \"objective\"\nlambda = 0.5\nsigma = 1.0",
                &format!("kind = \"{kind}\"\nlambda = 0.01\nsigma = 0.01\neta = 0.02\nsteps = 200\n{extra}"),
            );
        let cfg = config(tmp.path(), &text).unwrap();
        let out = tmp.path().join(kind);
        let simulation = Sources {
            theory: false,
            simulation: true,
        };
        run(&cfg, "c", &out, Existing::Refuse, simulation, &Silent).unwrap();
        let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        let sim = text
            .lines()
            .map(|l| serde_json::from_str::<Record>(l).unwrap())
            .find(|r| r.source == Source::Simulation)
            .expect("a simulation record");
        let path = &sim.per_step.as_ref().expect("per-step metrics")["test_mse"];
        // from θ = 0 (test_mse = mean y² ≈ 1, the labels standardised) down as the fit learns y ≈ Σ columns
        // (η = 0.02: the strongest direction's curvature n·ω/d ≈ 46 allows η < 0.04)
        let (first, last) = (path[0], *path.last().unwrap());
        assert!(first > 0.5 && last < 0.75 * first, "{kind}: test_mse {first} → {last}");
        assert_eq!(sim.metrics["test_mse"], last);
        assert!(!sim.metrics.contains_key("est_err2"), "{kind}: no θ*, no est_err2");
    }
}

#[test]
fn data_that_cannot_serve_the_config_is_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    write_data(tmp.path());
    let refused = |text: String, field: &str| {
        let e = match config(tmp.path(), &text) {
            Err(e) => e,
            Ok(cfg) => {
                let e = run(
                    &cfg,
                    "c",
                    &tmp.path().join("o"),
                    Existing::Overwrite,
                    Sources::default(),
                    &Silent,
                )
                .unwrap_err();
                assert_eq!(e.field(), Some(field), "{e:#}");
                format!("{e:#}")
            }
        };
        assert!(e.contains(field), "{field}: {e}");
    };
    let base = BASE.replace("COV", "");
    refused(base.replace("d = 8", "d = 9"), "simulation.d");
    refused(
        base.replace("delta = [0.5, 1.0]", "delta = [0.02, 1.0]"),
        "problem.delta",
    );
    refused(base.replace("drop = [\"y\"]", "drop = [\"z\"]"), "simulation.data.drop");
    refused(base.replace("data.csv", "missing.csv"), "simulation.data.file");
    refused(
        BASE.replace("COV", "").replace("drop = [\"y\"]", "labels = \"z\""),
        "simulation.data.labels",
    );
    let logistic = BASE
        .replace("model = \"huber\"", "model = \"logistic\"")
        .replace("huber_m = 1.0\n", "")
        .replace("noise = { law = \"gaussian\", sd = 0.5 }\n", "")
        .replace("COV", "")
        .replace("drop = [\"y\"]", "labels = \"y\"");
    // logistic on a continuous label column: not two classes
    refused(logistic, "simulation.data.labels");
    // a spectrum that is not this data set's
    refused(
        BASE.replace(
            "COV",
            "covariance = { family = \"power_law\", condition = 10.0, atoms = 8 }",
        ),
        "problem.covariance",
    );
    refused(
        BASE.replace("COV", "covariance = { family = \"power_law\", condition = 10.0 }"),
        "problem.covariance",
    );
}
