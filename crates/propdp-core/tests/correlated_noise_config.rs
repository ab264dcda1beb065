//! `groups` and `strategy` of `kind = "dpsgd"` (docs/correlated_noise.md):
//! read, swept, carried by the point's serialised form, and refused with
//! their field named — including a budget for more bands than groups,
//! which has no certified ε here.

use propdp_core::problem::Strategy;
use propdp_core::{Algorithm, Config, Point};

const BANDED: &str = r#"
[problem]
model = "logistic"
delta = 1.0
s2 = 1.0
[algorithm]
kind = "dpsgd"
lambda = 0.5
sigma = 1.0
eta = 0.5
steps = 20
sample_rate = 0.5
clip = 1.0
groups = [1, 4]
strategy = { coefficients = [3.0, 4.0] }
"#;

fn err(text: &str) -> String {
    Config::from_toml_str(text).unwrap_err().to_string()
}

#[test]
fn groups_are_swept_and_the_strategy_is_normalised() {
    let cfg = Config::from_toml_str(BANDED).unwrap();
    let got: Vec<(usize, Vec<f64>)> = cfg
        .sweep
        .points()
        .iter()
        .map(|p| match p.algorithm() {
            Algorithm::Dpsgd { groups, strategy, .. } => (groups, strategy.coefficients().unwrap().to_vec()),
            a => panic!("{a:?}"),
        })
        .collect();
    assert_eq!(got, [(1, vec![0.6, 0.8]), (4, vec![0.6, 0.8])]);
    assert_eq!(cfg.sweep.points()[1].params()["groups"], 4.0);
}

#[test]
fn records_carry_groups_and_coefficients_and_read_back_equal() {
    let cfg = Config::from_toml_str(BANDED).unwrap();
    let p = cfg.sweep.points()[1];
    let json = serde_json::to_string(&p).unwrap();
    assert!(
        json.contains(r#""groups":4"#) && json.contains(r#""strategy":{"coefficients":[0.6,0.8]}"#),
        "{json}"
    );
    let back: Point = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p);
    // plain DP-SGD's records are unchanged: neither field is written
    let plain = Config::from_toml_str(
        &BANDED
            .replace("groups = [1, 4]\n", "")
            .replace("strategy = { coefficients = [3.0, 4.0] }\n", ""),
    )
    .unwrap();
    let json = serde_json::to_string(&plain.sweep.points()[0]).unwrap();
    assert!(!json.contains("groups") && !json.contains("strategy"), "{json}");
    match plain.sweep.points()[0].algorithm() {
        Algorithm::Dpsgd { groups, strategy, .. } => assert_eq!((groups, strategy), (1, Strategy::IDENTITY)),
        a => panic!("{a:?}"),
    }
}

#[test]
fn bad_groups_and_coefficients_are_refused_naming_the_field() {
    for g in ["0", "2.5", "-1"] {
        let e = err(&BANDED.replace("groups = [1, 4]", &format!("groups = {g}")));
        assert!(e.contains("algorithm.groups") && e.contains("1 ≤ groups"), "{g}: {e}");
    }
    for (c, field) in [
        ("[0.0, 1.0]", "algorithm.strategy.coefficients[0]"),
        ("[-0.5, 1.0]", "algorithm.strategy.coefficients[0]"),
        ("[]", "algorithm.strategy.coefficients"),
    ] {
        let e = err(&BANDED.replace("[3.0, 4.0]", c));
        assert!(e.contains(field), "{c}: {e}");
    }
    let e = err(&BANDED.replace("strategy = { coefficients", "strategy = { bands = 4, coefficients"));
    assert!(e.contains("bands"), "{e}");
    let e = err(&BANDED
        .replace("kind = \"dpsgd\"", "kind = \"dpgd\"")
        .replace("sample_rate = 0.5\nclip = 1.0\n", ""));
    assert!(e.contains("algorithm.groups"), "{e}");
}

#[test]
fn a_budget_is_certified_for_bands_within_the_groups_and_refused_beyond() {
    let budget = |text: &str| text.replace("sigma = 1.0", "epsilon = 4.0\ndelta_priv = 1e-5");
    let sigma = |text: &str| match Config::from_toml_str(text).unwrap().sweep.points()[0].algorithm() {
        Algorithm::Dpsgd { sigma, .. } => sigma,
        a => panic!("{a:?}"),
    };
    // 2 bands in 4 groups: Poisson DP-SGD over ⌈20/4⌉ = 5 rounds, the σ of plain DP-SGD with 5 steps
    let grouped = sigma(&budget(&BANDED.replace("groups = [1, 4]", "groups = 4")));
    let plain = sigma(&budget(
        &BANDED
            .replace("groups = [1, 4]", "groups = 1")
            .replace("[3.0, 4.0]", "[1.0]")
            .replace("steps = 20", "steps = 5"),
    ));
    assert_eq!(grouped, plain);
    // 2 bands in one group: overlapping rows of the strategy, no certified ε
    let e = err(&budget(&BANDED.replace("groups = [1, 4]", "groups = 1")));
    assert!(e.contains("algorithm.strategy") && e.contains("no certified ε"), "{e}");
}

#[test]
fn bands_are_computed_per_point_and_recorded_as_coefficients() {
    let text = BANDED
        .replace("steps = 20", "steps = [20, 1024]")
        .replace("groups = [1, 4]", "groups = 4")
        .replace("{ coefficients = [3.0, 4.0] }", "{ bands = 4 }");
    let cfg = Config::from_toml_str(&text).unwrap();
    let coefs: Vec<Vec<f64>> = cfg
        .sweep
        .points()
        .iter()
        .map(|p| match p.algorithm() {
            Algorithm::Dpsgd { strategy, .. } => strategy.coefficients().unwrap().to_vec(),
            a => panic!("{a:?}"),
        })
        .collect();
    // jax_privacy's toeplitz.optimize_banded_toeplitz(1024, 4), to four digits
    for (got, want) in coefs[1].iter().zip([0.5863, 0.5036, 0.4685, 0.4279]) {
        assert!((got - want).abs() < 1e-4, "{coefs:?}");
    }
    // a shorter horizon has its own optimum
    assert!((coefs[0][0] - coefs[1][0]).abs() > 1e-3, "{coefs:?}");
    let json = serde_json::to_string(&cfg.sweep.points()[1]).unwrap();
    assert!(json.contains(r#""strategy":{"coefficients":[0.586"#), "{json}");
    for (bands, e) in [("0", "1 ≤ bands ≤ 64"), ("65", "1 ≤ bands ≤ 64")] {
        let e2 = err(&text.replace("{ bands = 4 }", &format!("{{ bands = {bands} }}")));
        assert!(
            e2.contains("algorithm.strategy.bands") && e2.contains(e),
            "{bands}: {e2}"
        );
    }
}

#[test]
fn unclipped_least_squares_steps_are_limited_per_group() {
    // q = 1, δ = 0.5: a step on all n rows has L = (1 + √δ)²/δ = 5.83 (η < 0.343),
    // a step on one of G = 4 groups (n/4 rows, δ·G = 2) L = (1 + √2)²/2 = 2.91 (η < 0.686)
    let text = |groups: usize| {
        format!(
            "[problem]\nmodel = \"least_squares\"\ndelta = 0.5\ns2 = 1.0\nnoise = {{ law = \"gaussian\", sd = 0.5 }}\n\
             [algorithm]\nkind = \"dpsgd\"\nlambda = 0.0\nsigma = 1.0\neta = 0.5\nsteps = 20\nsample_rate = 1.0\n\
             groups = {groups}\n"
        )
    };
    let e = err(&text(1));
    assert!(e.contains("algorithm.eta") && e.contains("0.343"), "{e}");
    assert!(Config::from_toml_str(&text(4)).is_ok());
    let e = err(&text(4).replace("eta = 0.5", "eta = 0.7"));
    assert!(e.contains("algorithm.eta") && e.contains("0.686"), "{e}");
}

#[test]
fn a_blt_strategy_is_read_recorded_and_refused_a_budget() {
    let text = BANDED.replace(
        "{ coefficients = [3.0, 4.0] }",
        "{ blt = { buf_decay = [0.9, 0.5], output_scale = [0.3, 0.2] } }",
    );
    let cfg = Config::from_toml_str(&text).unwrap();
    let p = cfg.sweep.points()[1];
    let json = serde_json::to_string(&p).unwrap();
    assert!(
        json.contains(r#""strategy":{"blt":{"buf_decay":[0.9,0.5],"output_scale":[0.3,0.2]}}"#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<Point>(&json).unwrap(), p);
    for (bad, field) in [
        ("buf_decay = [0.9, 1.5]", "algorithm.strategy.blt.buf_decay[1]"),
        ("buf_decay = [0.9]", "algorithm.strategy.blt"),
        ("buf_decay = [0.9, 0.5], extra = 1", "algorithm.strategy.blt"),
    ] {
        let e = err(&text.replace("buf_decay = [0.9, 0.5]", bad));
        assert!(e.contains(field), "{bad}: {e}");
    }
    // every band below the diagonal: no certified ε here, whatever the groups
    let e = err(&text
        .replace("sigma = 1.0", "epsilon = 4.0\ndelta_priv = 1e-5")
        .replace("groups = [1, 4]", "groups = 16"));
    assert!(
        e.contains("algorithm.strategy") && e.contains("BLT") && e.contains("no certified ε"),
        "{e}"
    );
}

#[test]
fn a_coefficient_file_is_read_relative_to_the_config_and_recorded_inline() {
    let dir = std::env::temp_dir().join(format!("propdp-strategy-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("coef.csv"), "coefficient\n3.0  # c0\n4.0\n").unwrap();
    let text = BANDED.replace("{ coefficients = [3.0, 4.0] }", "{ file = \"coef.csv\" }");
    let cfg = Config::from_toml_str_in(&text, Some(&dir)).unwrap();
    let inline = Config::from_toml_str(BANDED).unwrap();
    assert_eq!(cfg.sweep.points(), inline.sweep.points());
    // the recorded text reproduces the run without the file
    assert!(
        cfg.text.contains("coef.csv") && cfg.text.contains("coefficients = [0.6"),
        "{}",
        cfg.text
    );
    let again = Config::from_recorded(&cfg.text).unwrap();
    assert_eq!(again.sweep.points(), inline.sweep.points());
    // a bad line is named with its file and line; a missing file with the field
    std::fs::write(dir.join("bad.csv"), "1.0\n0.5, x\n").unwrap();
    let e = Config::from_toml_str_in(&text.replace("coef.csv", "bad.csv"), Some(&dir))
        .unwrap_err()
        .to_string();
    assert!(e.contains("algorithm.strategy.file") && e.contains("line 2"), "{e}");
    let e = Config::from_toml_str_in(&text.replace("coef.csv", "none.csv"), Some(&dir))
        .unwrap_err()
        .to_string();
    assert!(e.contains("algorithm.strategy.file") && e.contains("none.csv"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_fixed_order_calibrates_any_strategy_by_its_sensitivity() {
    use propdp_core::accountant::MechanismKind;
    // jax_privacy's optimised BLT for 1024 steps, min separation 32, in 32 groups at sample rate 1
    let text = BANDED
        .replace(
            "{ coefficients = [3.0, 4.0] }",
            "{ blt = { buf_decay = [0.9638688021548572], output_scale = [0.4395754230012441] } }",
        )
        .replace("groups = [1, 4]", "groups = 32")
        .replace("steps = 20", "steps = 1024")
        .replace("sample_rate = 0.5", "sample_rate = 1.0")
        .replace(
            "sigma = 1.0",
            "epsilon = 8.0\ndelta_priv = 1e-6\nneighbouring = \"add_remove_one\"",
        );
    let cfg = Config::from_toml_str(&text).unwrap();
    let a = cfg.sweep.points()[0].algorithm();
    let (sigma, strategy) = match a {
        Algorithm::Dpsgd { sigma, strategy, .. } => (sigma, strategy),
        a => panic!("{a:?}"),
    };
    // jax_privacy's min-sep sensitivity of this BLT (c₀ = 1) is 14.319160825567359
    let s = strategy.sensitivity(1024, 32);
    assert!((s / strategy.diagonal() / 14.319160825567359 - 1.0).abs() < 1e-12);
    assert_eq!(
        a.mechanism(),
        MechanismKind::FixedOrder {
            sensitivity: s,
            clip: Some(1.0)
        }
    );
    // one Gaussian release at (8, 1e-6): noise multiplier 0.65294 by dp_accounting's PLD (to its grid)
    assert!((sigma / s / 0.65294 - 1.0).abs() < 2e-3, "{}", sigma / s);
    // two bands in one group, sampled: still refused; in the fixed order: calibrated
    let sampled = BANDED
        .replace("groups = [1, 4]", "groups = 1")
        .replace("sigma = 1.0", "epsilon = 4.0\ndelta_priv = 1e-5");
    assert!(err(&sampled).contains("no certified ε"));
    assert!(Config::from_toml_str(&sampled.replace("sample_rate = 0.5", "sample_rate = 1.0")).is_ok());
}
