//! `[problem] covariance`: a spectrum file relative to the config, inline
//! atoms and the built-in family, normalised; every bad input refused with
//! the field (and the file's line) named.

use propdp_core::Config;
use propdp_core::config::TuneConfig;
use propdp_core::covariance::Covariance;

const BASE: &str = r#"
[problem]
model = "huber"
delta = 0.5
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
COV
[algorithm]
kind = "objective"
lambda = 1.0
sigma = 0.5
"#;

fn config(cov: &str) -> String {
    BASE.replace("COV", &format!("covariance = {cov}"))
}

fn err(cov: &str) -> String {
    Config::from_toml_str(&config(cov)).unwrap_err().to_string()
}

/// A fresh directory under the system's temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("propdp-covariance-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_spectrum_file_is_read_relative_to_the_config_and_hashed() {
    let dir = scratch("file");
    let csv = "# a comment\nteacher,eigenvalue,weight\n2.0, 4.0, 0.25\n0.0,1.0,0.75\n\n";
    std::fs::write(dir.join("spectrum.csv"), csv).unwrap();
    let cfg = Config::from_toml_str_in(&config("{ file = \"spectrum.csv\" }"), Some(&dir)).unwrap();
    let cov = cfg.covariance.expect("two distinct atoms");
    let a = cov.atoms();
    // weights 1/4, 3/4; eigenvalues over Σwω = 7/4; teacher over Σwe = 1/2
    assert_eq!((a[0].weight, a[1].weight), (0.25, 0.75));
    assert!((a[0].eigenvalue - 16.0 / 7.0).abs() < 1e-15 && (a[1].eigenvalue - 4.0 / 7.0).abs() < 1e-15);
    assert_eq!((a[0].teacher, a[1].teacher), (4.0, 0.0));
    assert_eq!(cov.scale(), 1.75);
    assert_eq!(cov.sha256().map(str::len), Some(64));
    // not found relative to another directory: the field and the path are named
    let elsewhere = scratch("elsewhere");
    let e = Config::from_toml_str_in(&config("{ file = \"spectrum.csv\" }"), Some(&elsewhere))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("problem.covariance.file") && e.contains("spectrum.csv"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&elsewhere).unwrap();
}

#[test]
fn a_bad_spectrum_file_names_its_line() {
    let dir = scratch("bad");
    for (text, want) in [
        ("eigenvalue,weight\n1,1\n", "line 1"),
        ("eigenvalue,weight,teacher,extra\n1,1,1,1\n", "line 1"),
        ("eigenvalue,weight,teacher\n1,0.5,1\n2,x,1\n", "line 3"),
        ("eigenvalue,weight,teacher\n1,0.5,1\n2,0.5\n", "line 3"),
        ("", "empty"),
        ("eigenvalue,weight,teacher\n1,0.5,1\n0,0.5,1\n", "eigenvalue[1]"),
        ("eigenvalue,weight,teacher\n1,0.5,1\n2,0.6,1\n", "summing to 1"),
    ] {
        std::fs::write(dir.join("s.csv"), text).unwrap();
        let e = Config::from_toml_str_in(&config("{ file = \"s.csv\" }"), Some(&dir))
            .unwrap_err()
            .to_string();
        assert!(e.contains("problem.covariance") && e.contains(want), "{text:?}: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inline_atoms_and_families_are_checked_naming_the_field() {
    let ok = Config::from_toml_str(&config(
        "{ eigenvalue = [2, 1], weight = [0.5, 0.5], teacher = [1, 1] }",
    ))
    .unwrap();
    assert_eq!(ok.covariance.unwrap().atoms().len(), 2);
    let fam = "{ family = \"power_law\", condition = 50.0, atoms = 30, teacher = \"anti_aligned\" }";
    assert_eq!(
        Config::from_toml_str(&config(fam))
            .unwrap()
            .covariance
            .unwrap()
            .atoms()
            .len(),
        30
    );
    for (cov, field) in [
        (
            "{ eigenvalue = [2, 1], weight = [1, -1], teacher = [1, 1] }",
            "problem.covariance.weight[1]",
        ),
        (
            "{ eigenvalue = [2, 1], weight = [1], teacher = [1, 1] }",
            "problem.covariance.weight",
        ),
        (
            "{ eigenvalue = [2, 1], weight = [0.5, 0.5], teacher = [0, 0] }",
            "problem.covariance.teacher",
        ),
        (
            "{ eigenvalue = [2, 1], weight = [0, 0], teacher = [1, 1] }",
            "problem.covariance.weight",
        ),
        (
            "{ eigenvalue = [2, 1], weight = [0.5, 0.5] }",
            "problem.covariance.teacher",
        ),
        (
            "{ eigenvalue = [2, 1], weight = [1, 1], teacher = [1, 1] }",
            "problem.covariance.weight",
        ),
        (
            "{ eigenvalue = [2, \"a\"], weight = [0.5, 0.5], teacher = [1, 1] }",
            "problem.covariance.eigenvalue",
        ),
        (
            "{ family = \"power_law\", condition = 0.5 }",
            "problem.covariance.condition",
        ),
        ("{ family = \"power_law\" }", "problem.covariance.condition"),
        (
            "{ family = \"power_law\", condition = 10.0, atoms = 0 }",
            "problem.covariance.atoms",
        ),
        (
            "{ family = \"power_law\", condition = 10.0, teacher = \"up\" }",
            "problem.covariance.teacher",
        ),
        (
            "{ family = \"marchenko\", condition = 10.0 }",
            "problem.covariance.family",
        ),
        ("{ file = \"a.csv\", atoms = 3 }", "problem.covariance.atoms"),
        ("3.0", "problem.covariance"),
    ] {
        let e = err(cov);
        assert!(e.contains(field), "{cov}: {e}");
    }
}

/// Tune takes a covariance (issue #42 item 3): it is resolved like a run's,
/// and a bad one is refused naming its field.
#[test]
fn tune_resolves_its_covariance_and_names_a_bad_one() {
    let text = |cov: &str| {
        format!(
            r#"
[problem]
model = "logistic"
delta = 0.5
s2 = 1.0
covariance = {cov}
[tune]
algorithms = ["objective"]
epsilon = 1.0
delta_priv = 1e-6
"#
        )
    };
    let (cfg, _) = TuneConfig::from_toml_str(&text("{ family = \"power_law\", condition = 10.0 }")).unwrap();
    let cov = cfg.covariance_in(None).unwrap().expect("a spectrum");
    assert!(cov.atoms().len() > 1);
    let bad = TuneConfig::from_toml_str(&text("{ family = \"power_law\", condition = 0.5 }"))
        .and_then(|(c, _)| c.covariance_in(None))
        .unwrap_err()
        .to_string();
    assert!(bad.contains("problem.covariance.condition"), "{bad}");
}

#[test]
fn dpgd_steps_are_checked_against_the_covariance_edge() {
    let dpgd = |eta: f64| {
        config("{ family = \"power_law\", condition = 100.0 }").replace(
            "kind = \"objective\"\nlambda = 1.0\nsigma = 0.5",
            &format!("kind = \"dpgd\"\nlambda = 0.1\nsigma = 0.5\neta = {eta}\nsteps = 10"),
        )
    };
    // isotropic 2/L at δ = 0.5 is 0.34; with this Σ the edge is about 8× higher
    assert!(Config::from_toml_str(&dpgd(0.02)).is_ok());
    let e = Config::from_toml_str(&dpgd(0.2)).unwrap_err().to_string();
    assert!(e.contains("algorithm.eta") && e.contains("L_Σ"), "{e}");
}

#[test]
fn dpsgd_step_size_warnings_use_the_covariance_edge() {
    let dpsgd = |cov: &str| {
        BASE.replace("COV", cov).replace(
            "kind = \"objective\"\nlambda = 1.0\nsigma = 0.5",
            "kind = \"dpsgd\"\nlambda = 0.1\nsigma = 0.5\neta = 0.5\nsteps = 10\nsample_rate = 0.2\nclip = 1.0",
        )
    };
    // isotropic: 2/L_q = 2/(0.2·5.83 + 0.1) = 1.58 > η = 0.5; with the power law λ₊ ≈ 40: 0.24 < η
    assert!(
        Config::from_toml_str(&dpsgd(""))
            .unwrap()
            .step_size_warnings()
            .is_empty()
    );
    let w = Config::from_toml_str(&dpsgd("covariance = { family = \"power_law\", condition = 100.0 }"))
        .unwrap()
        .step_size_warnings();
    assert!(
        w.len() == 1 && w[0].contains("covariance") && w[0].contains("oscillate"),
        "{w:?}"
    );
}

/// The atoms' coordinate counts at a uniform offset are d·w in expectation
/// (the simulation draws the offset per repetition): averaged over an even
/// grid of 10⁴ offsets every count is d·w_k within 10⁻³, each count is
/// ⌊d·w_k⌋ or ⌈d·w_k⌉, and they sum to d.
#[test]
fn coordinate_counts_are_unbiased_over_the_offset() {
    let (k, d) = (15, 1000);
    let omega: Vec<f64> = (0..k).map(|i| 30f64.powf(-(i as f64) / 14.0)).collect();
    let teacher: Vec<f64> = omega.iter().map(|o| 1.0 / o).collect();
    let cov = Covariance::from_columns(&omega, &vec![1.0 / k as f64; k], &teacher, "c")
        .unwrap()
        .unwrap();
    assert!(cov.has_fractional_counts(d));
    let grid = 10_000;
    let mut mean = vec![0.0; k];
    for j in 0..grid {
        let counts = cov.counts(d, (j as f64 + 0.5) / grid as f64);
        assert_eq!(counts.iter().sum::<usize>(), d);
        for (m, (&c, a)) in mean.iter_mut().zip(counts.iter().zip(cov.atoms())) {
            let exact = a.weight * d as f64;
            assert!(
                c == exact.floor() as usize || c == exact.ceil() as usize,
                "{c} for {exact}"
            );
            *m += c as f64 / grid as f64;
        }
    }
    for (m, a) in mean.iter().zip(cov.atoms()) {
        assert!(
            (m - a.weight * d as f64).abs() < 1e-3,
            "{m} against {}",
            a.weight * d as f64
        );
    }
}
