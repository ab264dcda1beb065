//! `propdp spectrum`: the spectrum and teacher of a data set with a known
//! covariance and linear labels are recovered, the file reads back as a
//! `problem.covariance`, and bad input is refused naming the argument.

use nalgebra::{DMatrix, DVector};
use propdp::core::Config;
use propdp::data_spectrum::{from_csv, spectrum};
use propdp::sim::data::draw_gaussian_vector;
use propdp::sim::rng::stream;

/// n rows of 30 independent columns of sd 2, 1 and ½ (10 each), labels
/// y = xᵀθ + 0.3·ε with θ ~ N(0, I); returns (X, y, θ).
fn data(n: usize) -> (DMatrix<f64>, DVector<f64>, DVector<f64>) {
    let rng = &mut stream(7, &[n as u64]);
    let theta = draw_gaussian_vector(30, rng);
    let z = draw_gaussian_vector(n * 30, rng);
    let x = DMatrix::from_fn(n, 30, |i, j| [2.0, 1.0, 0.5][j / 10] * z[i * 30 + j]);
    let y = &x * &theta + 0.3 * draw_gaussian_vector(n, rng);
    (x, y, theta)
}

#[test]
fn a_known_covariance_and_teacher_are_recovered() {
    let (x, y, theta) = data(6000);
    let names: Vec<String> = (0..30).map(|j| format!("x{j}")).collect();
    let s = spectrum(&x, &names, Some(&y), false).unwrap();
    assert_eq!((s.rows, s.eigenvalues.len(), s.null_directions), (6000, 30, 0));
    for (i, l) in s.eigenvalues.iter().enumerate() {
        let want = [4.0, 1.0, 0.25][i / 10];
        assert!((l / want - 1.0).abs() < 0.12, "eigenvalue {i}: {l} vs {want}");
    }
    let fit = s.labels.unwrap();
    assert!((fit.noise_sd / 0.3 - 1.0).abs() < 0.05, "noise sd {}", fit.noise_sd);
    // s² = λ̄·k·mean(θ²) in propdp's scale (λ̄ = 1.75, k = 30)
    let want = 1.75 * 30.0 * theta.norm_squared() / 30.0;
    assert!((fit.s2 / want - 1.0).abs() < 0.1, "s2 {} vs {want}", fit.s2);
    // the file reads back as a covariance with the same atoms
    let dir = std::env::temp_dir().join(format!("propdp-data-spectrum-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.csv"), s.to_csv("test data")).unwrap();
    let cfg = format!(
        "[problem]\nmodel = \"huber\"\ndelta = 0.5\ns2 = {}\nhuber_m = 1.0\nnoise = {{ law = \"gaussian\", sd = {} }}\n\
         covariance = {{ file = \"s.csv\" }}\n[algorithm]\nkind = \"objective\"\nlambda = 1.0\nsigma = 0.5\n",
        fit.s2, fit.noise_sd
    );
    let cov = Config::from_toml_str_in(&cfg, Some(&dir)).unwrap().covariance.unwrap();
    assert_eq!(cov.atoms().len(), 30);
    assert!(
        (cov.scale() / 1.75 - 1.0).abs() < 0.1,
        "mean eigenvalue {}",
        cov.scale()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn constant_columns_are_dropped_and_bad_input_is_refused() {
    let dir = std::env::temp_dir().join(format!("propdp-data-spectrum-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.csv"), "a,b,c,y\n1,5,2,1\n2,5,1,0\n3,5,5,1\n4,5,0,3\n").unwrap();
    let s = from_csv(&dir.join("a.csv"), None, true).unwrap();
    assert_eq!((s.constant.clone(), s.columns), (vec!["b".to_string()], 4));
    // three rows for two directions: the label noise is not identifiable
    std::fs::write(dir.join("c.csv"), "a,b,c,y\n1,5,2,1\n2,5,1,0\n3,5,5,1\n").unwrap();
    let e = from_csv(&dir.join("c.csv"), Some("y"), false).unwrap_err();
    assert!(
        e.to_string().contains("--label") && e.to_string().contains("identifiable"),
        "{e}"
    );
    let e = from_csv(&dir.join("a.csv"), Some("z"), false).unwrap_err();
    assert_eq!(e.field(), Some("label"));
    std::fs::write(dir.join("b.csv"), "a,b\n1,2\n3,x\n").unwrap();
    let e = from_csv(&dir.join("b.csv"), None, false).unwrap_err().to_string();
    assert!(e.contains("line 3") && e.contains("\"b\""), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
