//! The library's one error: every capability returns `propdp::Error`, and
//! its kind and field are what a front end needs (the CLI prints them, the
//! Python package maps them to its exceptions).

use std::fs;

use propdp::core::{AlgorithmKind, Config, ModelKind};
use propdp::privacy::QueryArgs;
use propdp::run::{Sources, load, run};
use propdp::rundir::Existing;
use propdp::{ErrorKind, Silent};

const THEORY: &str = r#"
[problem]
model = "huber"
delta = 0.5
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "objective"
lambda = 1.0
sigma = 1.0
"#;

#[test]
fn a_bad_config_value_is_a_config_error_naming_its_field() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("c.toml");
    fs::write(&path, THEORY.replace("sigma = 1.0", "sigma = -1.0")).unwrap();
    let e = load(&path).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e:#}");
    assert_eq!(e.field(), Some("algorithm.sigma"), "{e:#}");
    assert!(format!("{e:#}").contains("c.toml"), "{e:#}");
}

#[test]
fn a_missing_config_file_is_an_io_error() {
    let tmp = tempfile::tempdir().unwrap();
    let e = load(&tmp.path().join("absent.toml")).unwrap_err();
    assert_eq!((e.kind(), e.field()), (ErrorKind::Io, None), "{e:#}");
}

#[test]
fn a_run_into_an_existing_run_without_resume_is_a_directory_error() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = Config::from_toml_str(THEORY).unwrap();
    let go = |existing| run(&cfg, "c.toml", tmp.path(), existing, Sources::default(), &Silent);
    go(Existing::Refuse).unwrap();
    let e = go(Existing::Refuse).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Directory, "{e:#}");
    assert!(e.to_string().contains("--resume"), "{e}");
    // a foreign manifest.json: refused, untouched
    let foreign = tempfile::tempdir().unwrap();
    fs::write(foreign.path().join("manifest.json"), "{\"mine\": true}").unwrap();
    let e = run(
        &cfg,
        "c.toml",
        foreign.path(),
        Existing::Overwrite,
        Sources::default(),
        &Silent,
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Directory, "{e:#}");
    assert_eq!(
        fs::read_to_string(foreign.path().join("manifest.json")).unwrap(),
        "{\"mine\": true}"
    );
}

#[test]
fn validating_a_config_without_simulation_names_the_missing_table() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = Config::from_toml_str(THEORY).unwrap();
    let e = propdp::validate::validate(&cfg, "c.toml", tmp.path(), &Silent).unwrap_err();
    assert_eq!((e.kind(), e.field()), (ErrorKind::Config, Some("simulation")), "{e:#}");
    let sim_only = Sources {
        theory: false,
        simulation: true,
    };
    let e = run(&cfg, "c.toml", tmp.path(), Existing::Overwrite, sim_only, &Silent).unwrap_err();
    assert_eq!((e.kind(), e.field()), (ErrorKind::Config, Some("simulation")), "{e:#}");
}

#[test]
fn an_unreachable_budget_is_an_argument_error_naming_the_argument() {
    let args = QueryArgs {
        lambda: Some(1e-3),
        epsilon: Some(1e-3),
        ..QueryArgs::new(AlgorithmKind::Objective, ModelKind::Logistic)
    };
    // by default the extra ridge brings the floor to ε/2: λ + Δ = β/(e^{ε/4} − 1)
    let r = propdp::privacy::assess(&args.query().unwrap()).unwrap();
    let (asked, extra) = r.extra_ridge.expect("an extra ridge");
    assert_eq!(asked, 1e-3);
    assert!((r.query.lambda - 0.25 / (1e-3f64 / 4.0).exp_m1()).abs() < 1e-9 * r.query.lambda);
    assert!((asked + extra - r.query.lambda).abs() < 1e-9 * r.query.lambda);
    assert!(r.epsilon.unwrap() <= 1e-3);
    let refuse = QueryArgs {
        extra_ridge: Some(propdp::core::accountant::ExtraRidge::Refuse),
        ..args
    };
    let e = propdp::privacy::assess(&refuse.query().unwrap()).unwrap_err();
    assert_eq!((e.kind(), e.field()), (ErrorKind::Argument, Some("epsilon")), "{e:#}");
    let a = e.argument().expect("the argument");
    assert!(
        a.to_string().contains("--epsilon") && a.keyword().contains("epsilon ="),
        "{a} / {}",
        a.keyword()
    );
}

#[test]
fn noise_and_epsilon_together_are_refused_naming_both_in_each_front_end_spelling() {
    let a = QueryArgs {
        noise: Some(1.0),
        epsilon: Some(1.0),
        ..QueryArgs::new(AlgorithmKind::Dpgd, ModelKind::Huber)
    }
    .query()
    .unwrap_err();
    let e = propdp::Error::from(a);
    assert_eq!(e.kind(), ErrorKind::Argument);
    let (cli, py) = (e.to_string(), e.argument().unwrap().keyword());
    assert!(cli.contains("--noise") && cli.contains("--epsilon"), "{cli}");
    assert!(
        py.contains("noise") && py.contains("epsilon") && !py.contains("--"),
        "{py}"
    );
}

/// The data and labels of a fit or a spectrum are Python's arrays `X` and
/// `y` and the command line's `DATA` file and `--label` column: never a
/// flag `--X` or `--y` that the command line does not have, nor a keyword
/// `data` or `label` that Python does not have.
#[test]
fn the_data_and_labels_are_named_as_each_front_end_names_them() {
    let x: Vec<f64> = (0..4 * 200)
        .map(|k| if k == 5 * 200 / 2 + 3 { f64::INFINITY } else { 0.01 })
        .collect();
    let spec = propdp::inference::Spec {
        model: propdp::inference::Glm::Logistic,
        algorithm: propdp::core::Algorithm::Objective {
            lambda: 1.0,
            sigma: 0.0,
        },
        epsilon: 8.0,
        delta_priv: 1e-6,
        neighbouring: propdp::core::accountant::Neighbouring::ReplaceOne,
        row_norm: 1.0,
        noise: None,
        holdout: 0.0,
        test_clip: None,
        extra_ridge: Default::default(),
        standardize: false,
        intercept: false,
    };
    let e = propdp::inference::fit(&x, 4, 200, &[1.0, -1.0, 1.0, -1.0], &spec, Some(1)).unwrap_err();
    let a = e.argument().expect("an argument");
    assert_eq!(
        (a.to_string(), a.keyword()),
        (
            "DATA row 2, column 103: inf is not finite".to_string(),
            "X row 2, column 103: inf is not finite".to_string()
        )
    );
    assert_eq!(a.python_name(), "X");
    let e = propdp::inference::fit(&x[..400], 2, 200, &[1.0], &spec, Some(1)).unwrap_err();
    let a = e.argument().expect("an argument");
    assert!(
        a.to_string().starts_with("the --label column has 1 labels for 2 rows"),
        "{a}"
    );
    assert!(a.keyword().starts_with("y has 1 labels for 2 rows"), "{}", a.keyword());
    let names = ["a".to_string(), "b".to_string()];
    let rows = nalgebra::DMatrix::from_row_slice(3, 2, &[1.0, 2.0, 3.0, 1.0, 2.0, 5.0]);
    let y = nalgebra::DVector::from_vec(vec![1.0]);
    let e = propdp::data_spectrum::spectrum(&rows, &names, Some(&y), false).unwrap_err();
    let a = e.argument().expect("an argument");
    assert_eq!(
        (a.to_string(), a.keyword(), a.python_name()),
        (
            "--label: 1 labels for 3 rows".to_string(),
            "y: 1 labels for 3 rows".to_string(),
            "y".to_string()
        )
    );
    let one = nalgebra::DMatrix::from_row_slice(1, 2, &[1.0, 2.0]);
    let a = propdp::data_spectrum::spectrum(&one, &names, None, false).unwrap_err();
    let a = a.argument().expect("an argument");
    assert!(
        a.to_string().starts_with("DATA: ") && a.keyword().starts_with("X: "),
        "{a} / {}",
        a.keyword()
    );
}
