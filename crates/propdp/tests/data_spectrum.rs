//! `propdp spectrum`: the spectrum and teacher of a data set with a known
//! covariance and linear labels are recovered, the file reads back as a
//! `problem.covariance`, and bad input is refused naming the argument.

use nalgebra::{DMatrix, DVector};
use propdp::core::Config;
use propdp::data_spectrum::{from_file, spectrum};
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
    // the labels' units: their sd, ddof 0
    let sd = (y.map(|v| v - y.mean()).norm_squared() / 6000.0).sqrt();
    assert!(
        (fit.label_sd / sd - 1.0).abs() < 1e-12,
        "label sd {} vs {sd}",
        fit.label_sd
    );
    assert!(
        (fit.noise_sd * sd / 0.3 - 1.0).abs() < 0.05,
        "noise sd {} (units of sd(y) = {sd})",
        fit.noise_sd
    );
    // s² = λ̄·k·mean(θ²) in propdp's scale (λ̄ = 1.75, k = 30), over sd(y)²
    let want = 1.75 * 30.0 * theta.norm_squared() / 30.0 / (sd * sd);
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
    let s = from_file(&dir.join("a.csv"), None, &[], true, None).unwrap();
    assert_eq!((s.constant.clone(), s.columns), (vec!["b".to_string()], 4));
    // three rows for two directions: the label noise is not identifiable
    std::fs::write(dir.join("c.csv"), "a,b,c,y\n1,5,2,1\n2,5,1,0\n3,5,5,1\n").unwrap();
    let e = from_file(&dir.join("c.csv"), Some("y"), &[], false, None).unwrap_err();
    assert!(
        e.to_string().contains("--label") && e.to_string().contains("identifiable"),
        "{e}"
    );
    let e = from_file(&dir.join("a.csv"), Some("z"), &[], false, None).unwrap_err();
    assert_eq!(e.field(), Some("label"));
    std::fs::write(dir.join("b.csv"), "a,b\n1,2\n3,x\n").unwrap();
    let e = from_file(&dir.join("b.csv"), None, &[], false, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3") && e.contains("\"b\""), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `.npy` file of `descr` ("<f8", "<i8") and `shape` holding `data` (as
/// little-endian 8-byte values), C or Fortran order: the NumPy format 1.0.
fn npy(descr: &str, fortran: bool, shape: &[usize], data: &[[u8; 8]]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    data.iter().for_each(|v| out.extend_from_slice(v));
    out
}

#[test]
fn a_npy_array_gives_the_spectrum_of_the_same_csv() {
    let dir = std::env::temp_dir().join(format!("propdp-data-spectrum-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (x, _, _) = data(200);
    let mut csv = (0..30).map(|j| format!("x{j}")).collect::<Vec<_>>().join(",") + "\n";
    for i in 0..200 {
        csv += &(0..30)
            .map(|j| format!("{:?}", x[(i, j)]))
            .collect::<Vec<_>>()
            .join(",");
        csv += "\n";
    }
    std::fs::write(dir.join("x.csv"), csv).unwrap();
    let rows: Vec<[u8; 8]> = (0..200)
        .flat_map(|i| (0..30).map(move |j| (i, j)))
        .map(|(i, j)| x[(i, j)].to_le_bytes())
        .collect();
    let cols: Vec<[u8; 8]> = (0..30)
        .flat_map(|j| (0..200).map(move |i| (i, j)))
        .map(|(i, j)| x[(i, j)].to_le_bytes())
        .collect();
    std::fs::write(dir.join("c.npy"), npy("<f8", false, &[200, 30], &rows)).unwrap();
    std::fs::write(dir.join("f.npy"), npy("<f8", true, &[200, 30], &cols)).unwrap();
    let want = from_file(&dir.join("x.csv"), None, &[], false, None).unwrap();
    for f in ["c.npy", "f.npy"] {
        assert_eq!(
            from_file(&dir.join(f), None, &[], false, None).unwrap().eigenvalues,
            want.eigenvalues,
            "{f}"
        );
    }
    let ints: Vec<[u8; 8]> = (0..6).map(|v: i64| v.to_le_bytes()).collect();
    std::fs::write(dir.join("i.npy"), npy("<i8", false, &[3, 2], &ints)).unwrap();
    std::fs::write(dir.join("v.npy"), npy("<f8", false, &[6], &ints)).unwrap();
    for (f, want) in [("i.npy", "float64"), ("v.npy", "2-D")] {
        let e = from_file(&dir.join(f), None, &[], false, None).unwrap_err();
        assert!(e.field() == Some("data") && e.to_string().contains(want), "{f}: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--drop` (issue #44 item 8): a dropped column is not a feature (the
/// spectrum equals that of the file without it), and dropping a column that
/// is not a feature — unknown, or the label — is refused naming `drop`.
#[test]
fn dropped_columns_are_not_features() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.csv"),
        "a,b,class,y\n1,5,0,1\n2,3,1,0\n3,5,0,1\n4,1,1,3\n0,2,1,2\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("b.csv"), "a,b,y\n1,5,1\n2,3,0\n3,5,1\n4,1,3\n0,2,2\n").unwrap();
    let dropped = from_file(&dir.path().join("a.csv"), Some("y"), &["class".into()], false, None).unwrap();
    let without = from_file(&dir.path().join("b.csv"), Some("y"), &[], false, None).unwrap();
    assert_eq!(dropped.eigenvalues, without.eigenvalues);
    assert_eq!(dropped.columns, 2);
    for bad in ["z", "y"] {
        let e = from_file(&dir.path().join("a.csv"), Some("y"), &[bad.into()], false, None).unwrap_err();
        assert_eq!(e.field(), Some("drop"), "{e:#}");
    }
}

/// One column 1e12 times the others: the others' variances are beyond the
/// sample covariance's resolution in f64 and would be dropped as "without
/// variance". Refused naming both columns; standardized, the spectrum keeps
/// every direction.
#[test]
fn columns_of_scales_beyond_f64_are_refused_not_dropped() {
    let (mut x, _, _) = data(400);
    let names: Vec<String> = (0..x.ncols()).map(|j| format!("x{j}")).collect();
    x.column_mut(0).scale_mut(1e12);
    let e = format!("{:#}", spectrum(&x, &names, None, false).unwrap_err());
    assert!(
        e.contains("\"x0\"") && e.contains("standardize") && !e.contains("without variance dropped"),
        "{e}"
    );
    let s = spectrum(&x, &names, None, true).unwrap();
    assert_eq!((s.eigenvalues.len(), s.null_directions), (x.ncols(), 0));
}
