//! `propdp spectrum DATA --label y --model logistic --out eff.csv` on the
//! real binary: the summary on the terminal, the file with its
//! effective-model line, a config that takes s2 from it, and the refusals.

use std::fmt::Write as _;
use std::process::{Command, Output};

use propdp::sim::data::draw_gaussian_vector;
use propdp::sim::rng::stream;

fn propdp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_propdp"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// 2000 rows of 20 columns of sds 1…20 (standardised away: an isotropic
/// spectrum), labels Bernoulli(sigmoid(t)) of a field of variance ≈ 2.
fn logistic_csv() -> String {
    let rng = &mut stream(21, &[0]);
    let z = draw_gaussian_vector(2000 * 20, rng);
    let beta = draw_gaussian_vector(20, rng) * (2.0f64 / 20.0).sqrt();
    // uniforms: the angle of an isotropic Gaussian pair
    let pairs = draw_gaussian_vector(2 * 2000, rng);
    let mut csv = (0..20).map(|j| format!("x{j}")).collect::<Vec<_>>().join(",") + ",y\n";
    for i in 0..2000 {
        let row = &z.as_slice()[i * 20..(i + 1) * 20];
        let t: f64 = row.iter().zip(beta.iter()).map(|(a, b)| a * b).sum();
        let u = pairs[2 * i].atan2(pairs[2 * i + 1]) / std::f64::consts::TAU + 0.5;
        let y = if u < 1.0 / (1.0 + (-t).exp()) { 1 } else { 0 };
        for (j, v) in row.iter().enumerate() {
            write!(csv, "{},", v * (j + 1) as f64).unwrap();
        }
        writeln!(csv, "{y}").unwrap();
    }
    csv
}

#[test]
fn the_effective_model_is_printed_written_and_read_by_a_config() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("rows.csv");
    std::fs::write(&data, logistic_csv()).unwrap();
    let out = dir.path().join("eff.csv");
    let args = [
        "spectrum",
        data.to_str().unwrap(),
        "--label",
        "y",
        "--model",
        "logistic",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = propdp(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    for want in [
        "computed without privacy",
        "labels 1 → +1",
        "model = logistic: s2 = ",
        "under this model, non-private ridge logistic regression (λ₀ = 1) at n = 1600",
        "check, linear probe",
        "the model describes these data",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    let text = std::fs::read_to_string(&out).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("# effective model: model = logistic, s2 = "))
        .unwrap_or_else(|| panic!("{text}"));
    let s2: f64 = line.rsplit("s2 = ").next().unwrap().parse().unwrap();
    // the field's variance was ≈ 2 (isotropic spectrum and teacher up to noise): s² within its broad range
    assert!(s2 > 1.0 && s2 < 4.0, "{line}");
    // the file is not replaced
    let again = propdp(&args);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("exists"));
    // a config without s2 takes the file's
    std::fs::write(
        dir.path().join("c.toml"),
        "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ncovariance = { file = \"eff.csv\" }\n[algorithm]\n\
         kind = \"objective\"\nlambda = 1.0\nsigma = 0.5\n",
    )
    .unwrap();
    let o = propdp(&["check", dir.path().join("c.toml").to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // --model needs --label
    let o = propdp(&["spectrum", data.to_str().unwrap(), "--model", "logistic"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--label"), "{err}");
}
