//! The figure pipeline on small synthetic result files.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use propdp_core::Design;
use propdp_core::config::PlotSpec;
use propdp_core::record::{Provenance, Record, SimRecord, SolverReport, Source};
use propdp_core::{AlgorithmKind, ModelKind};
use propdp_plot::{PlotError, plot_file};

fn record(index: usize, delta: f64, sigma: f64, lambda: f64, sim_d: Option<usize>) -> Record {
    let err = 0.3 * delta * (1.0 + sigma * sigma) / lambda;
    let metrics = BTreeMap::from([
        ("est_err2".to_string(), err),
        ("train_resid_trunc".to_string(), 0.2 + 0.01 * delta),
    ]);
    Record {
        source: if sim_d.is_some() {
            Source::Simulation
        } else {
            Source::Theory
        },
        model: ModelKind::Huber,
        algorithm: AlgorithmKind::Objective,
        index,
        params: BTreeMap::from([
            ("delta".to_string(), delta),
            ("sigma".to_string(), sigma),
            ("lambda".to_string(), lambda),
            ("s2".to_string(), 1.0),
        ]),
        metrics: metrics.clone(),
        solver: SolverReport {
            converged: true,
            iterations: 3,
            residual: 1e-12,
            ..Default::default()
        },
        provenance: Provenance {
            config_sha256: "0".repeat(64),
            covariance_sha256: None,
            data_sha256: None,
            crate_version: "0".into(),
            git_commit: "x".into(),
        },
        per_step: None,
        per_step_at: None,
        per_step_stderr: None,
        privacy: None,
        simulation: sim_d.map(|d| SimRecord {
            n: 100,
            d,
            reps: 4,
            seed: 1,
            generator: String::new(),
            design: Design::Gaussian,
            data: None,
            labels: None,
            stderr: metrics.iter().map(|(k, v)| (k.clone(), 0.05 * v)).collect(),
            per_rep: BTreeMap::new(),
            block: None,
            test_metrics: None,
        }),
        non_private_reference: false,
    }
}

fn write_results(dir: &Path, records: &[Record]) -> std::path::PathBuf {
    let p = dir.join("results.jsonl");
    let text: String = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    fs::write(&p, text).unwrap();
    p
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let b = fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", path.display());
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

fn sweep() -> Vec<Record> {
    let mut recs = Vec::new();
    let mut i = 0;
    for &lambda in &[0.5, 1.0] {
        for &sigma in &[0.0, 1.0] {
            for k in 0..8 {
                let delta = 0.1 * 1.6f64.powi(k);
                recs.push(record(i, delta, sigma, lambda, None));
                recs.push(record(i, delta, sigma, lambda, Some(200)));
                i += 1;
            }
        }
    }
    recs
}

#[test]
fn one_figure_per_facet_in_png_and_svg() {
    let tmp = tempfile::tempdir().unwrap();
    let results = write_results(tmp.path(), &sweep());
    let files = plot_file(&results, &PlotSpec::default(), &tmp.path().join("fig")).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "huber_objective_lambda=0.5.png",
            "huber_objective_lambda=0.5.svg",
            "huber_objective_lambda=1.png",
            "huber_objective_lambda=1.svg"
        ]
    );
    for f in &files {
        let size = fs::metadata(f).unwrap().len();
        assert!(size > 10_000 && size < 2_000_000, "{}: {size} bytes", f.display());
    }
    // two default Huber panels side by side, legend strip on top
    let (w, h) = png_size(&files[0]);
    assert_eq!((w, h), (2 * 540 + 20, 470 + 100));
    let svg = fs::read_to_string(&files[1]).unwrap();
    assert!(svg.contains("est_err2") && svg.contains("σ = 0 (non-private)") && svg.contains("λ = 0.5"));
}

#[test]
fn plot_spec_chooses_metrics_and_axes() {
    let tmp = tempfile::tempdir().unwrap();
    let results = write_results(tmp.path(), &sweep());
    let spec = PlotSpec {
        metrics: Some(vec!["est_err2".into()]),
        y_log: true,
        ..PlotSpec::default()
    };
    let files = plot_file(&results, &spec, tmp.path()).unwrap();
    // one panel is too narrow for the legend on one row: it wraps to a second
    assert_eq!(png_size(&files[0]), (540 + 20, 470 + 100 + 24));
    let bad = PlotSpec {
        x: Some("nope".into()),
        ..PlotSpec::default()
    };
    let e = plot_file(&results, &bad, tmp.path()).unwrap_err().to_string();
    assert!(e.contains("x = \"nope\"") && e.contains("\"delta\""), "{e}");
    let missing = PlotSpec {
        metrics: Some(vec!["test_class_err".into()]),
        ..PlotSpec::default()
    };
    assert!(
        plot_file(&results, &missing, tmp.path())
            .unwrap_err()
            .to_string()
            .contains("test_class_err")
    );
}

#[test]
fn empty_malformed_and_single_point_inputs_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("results.jsonl");
    fs::write(&p, "").unwrap();
    assert!(matches!(
        plot_file(&p, &PlotSpec::default(), tmp.path()),
        Err(PlotError::Empty(_))
    ));
    let good = serde_json::to_string(&record(0, 0.5, 0.0, 1.0, None)).unwrap();
    fs::write(&p, format!("{good}\n{{\"source\": \"theory\"\n")).unwrap();
    let e = plot_file(&p, &PlotSpec::default(), tmp.path()).unwrap_err().to_string();
    assert!(e.contains("results.jsonl:2"), "{e}");
    fs::write(&p, format!("{good}\n")).unwrap();
    let e = plot_file(&p, &PlotSpec::default(), tmp.path()).unwrap_err().to_string();
    assert!(e.contains("single point"), "{e}");
    let e = plot_file(&tmp.path().join("absent.jsonl"), &PlotSpec::default(), tmp.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("absent.jsonl"), "{e}");
}

#[test]
fn algorithms_can_share_panels_only_as_the_series() {
    let tmp = tempfile::tempdir().unwrap();
    let mut recs: Vec<Record> = (0..6).map(|i| record(i, 0.5, 1.0, 1.0, None)).collect();
    for (i, r) in recs.iter_mut().enumerate() {
        r.params.insert("epsilon".into(), 0.5 * (1 + i % 3) as f64);
        r.params.remove("sigma");
        if i >= 3 {
            r.algorithm = AlgorithmKind::Output;
        }
    }
    let e = propdp_plot::plot_records(&recs, &PlotSpec::default(), tmp.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("mix"), "{e}");
    let spec = PlotSpec {
        series: Some("algorithm".into()),
        x: Some("epsilon".into()),
        ..PlotSpec::default()
    };
    let files = propdp_plot::plot_records(&recs, &spec, tmp.path()).unwrap();
    let svg = fs::read_to_string(files.iter().find(|f| f.extension().unwrap() == "svg").unwrap()).unwrap();
    // plotters writes each text on its own line
    let has = |label: &str| svg.lines().any(|l| l.trim() == label);
    assert!(has("objective") && has("output"), "legend names the algorithms");
}

#[test]
fn only_a_noise_of_zero_is_labelled_non_private() {
    let tmp = tempfile::tempdir().unwrap();
    // one curve per λ, λ = 0 among them, at σ = 1: every curve is private
    let recs: Vec<Record> = [0.0f64, 1.0]
        .iter()
        .enumerate()
        .flat_map(|(k, &lambda)| (0..4).map(move |i| record(4 * k + i, 0.5 + i as f64, 1.0, lambda.max(1e-3), None)))
        .map(|mut r| {
            if r.index < 4 {
                r.params.insert("lambda".into(), 0.0);
            }
            r
        })
        .collect();
    let spec = PlotSpec {
        series: Some("lambda".into()),
        ..PlotSpec::default()
    };
    let files = propdp_plot::plot_records(&recs, &spec, tmp.path()).unwrap();
    let svg = fs::read_to_string(files.iter().find(|f| f.extension().unwrap() == "svg").unwrap()).unwrap();
    assert!(
        svg.lines().any(|l| l.trim() == "λ = 0"),
        "the λ = 0 curve is in the legend"
    );
    assert!(!svg.contains("non-private"), "λ = 0 says nothing about privacy");
    // one curve per σ, σ = 0 among them: that one is the non-private curve
    let recs: Vec<Record> = (0..8)
        .map(|i| record(i, 0.5 + (i % 4) as f64, (i / 4) as f64, 1.0, None))
        .collect();
    let spec = PlotSpec {
        series: Some("sigma".into()),
        ..PlotSpec::default()
    };
    let files = propdp_plot::plot_records(&recs, &spec, tmp.path()).unwrap();
    let svg = fs::read_to_string(files.iter().find(|f| f.extension().unwrap() == "svg").unwrap()).unwrap();
    assert!(
        svg.lines().any(|l| l.trim() == "σ = 0 (non-private)"),
        "σ = 0 is the non-private curve"
    );
}
