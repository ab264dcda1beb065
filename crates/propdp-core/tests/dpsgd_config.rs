//! `kind = "dpsgd"` and `model = "least_squares"` in configs: what is read,
//! what is swept, and every refusal naming its field and allowed range.

use propdp_core::{Algorithm, Config, Model};

const DPSGD: &str = r#"
[problem]
model = "logistic"
delta = 1.0
s2 = 1.0
[algorithm]
kind = "dpsgd"
lambda = 0.5
sigma = 1.0
eta = 2.0
steps = 20
sample_rate = [0.05, 0.2, 1.0]
clip = 1.0
"#;

fn err(text: &str) -> String {
    Config::from_toml_str(text).unwrap_err().to_string()
}

#[test]
fn sample_rate_and_clip_are_read_and_swept() {
    let cfg = Config::from_toml_str(DPSGD).unwrap();
    let qs: Vec<f64> = cfg
        .sweep
        .points()
        .iter()
        .map(|p| match p.algorithm() {
            Algorithm::Dpsgd { sample_rate, clip, .. } => {
                assert_eq!(clip, Some(1.0));
                sample_rate
            }
            a => panic!("{a:?}"),
        })
        .collect();
    assert_eq!(qs, [0.05, 0.2, 1.0]);
    let params = cfg.sweep.points()[0].params();
    assert_eq!((params["sample_rate"], params["clip"]), (0.05, 1.0));
}

#[test]
fn bad_sample_rate_and_clip_are_refused_naming_the_field_and_range() {
    for q in ["0.0", "-0.1", "1.5"] {
        let e = err(&DPSGD.replace("sample_rate = [0.05, 0.2, 1.0]", &format!("sample_rate = {q}")));
        assert!(
            e.contains("algorithm.sample_rate") && e.contains("0 < sample_rate ≤ 1"),
            "{q}: {e}"
        );
    }
    let e = err(&DPSGD.replace("sample_rate = [0.05, 0.2, 1.0]", "sample_rate = nan"));
    assert!(e.contains("algorithm.sample_rate") && e.contains("finite"), "{e}");
    for c in ["0.0", "-1.0", "inf"] {
        let e = err(&DPSGD.replace("clip = 1.0", &format!("clip = {c}")));
        assert!(
            e.contains("algorithm.clip") && (e.contains("0 < clip") || e.contains("finite")),
            "{c}: {e}"
        );
    }
}

#[test]
fn clip_and_sample_rate_are_refused_on_other_algorithms() {
    for key in ["clip = 1.0", "sample_rate = 0.5"] {
        let text = format!(
            "[problem]\nmodel = \"logistic\"\ndelta = 1.0\ns2 = 1.0\n[algorithm]\nkind = \"dpgd\"\nlambda = 0.5\n\
             sigma = 1.0\neta = 1.0\nsteps = 5\n{key}\n"
        );
        let e = err(&text);
        let field = key.split(' ').next().unwrap();
        assert!(
            e.contains(&format!("algorithm.{field}")) && e.contains("kind = \"dpsgd\""),
            "{e}"
        );
    }
}

#[test]
fn least_squares_runs_only_under_gradient_descent() {
    let ls = "[problem]\nmodel = \"least_squares\"\ndelta = 0.5\ns2 = 1.0\nnoise = { law = \"gaussian\", sd = 0.5 }\n";
    let e = err(&format!(
        "{ls}[algorithm]\nkind = \"objective\"\nlambda = 1.0\nsigma = 1.0\n"
    ));
    assert!(e.contains("algorithm.kind") && e.contains("not Lipschitz"), "{e}");
    let cfg = Config::from_toml_str(&format!(
        "{ls}[algorithm]\nkind = \"dpgd\"\nlambda = 0.1\nsigma = 1.0\neta = 0.1\nsteps = 5\n"
    ))
    .unwrap();
    assert!(matches!(cfg.sweep.points()[0].model(), Model::LeastSquares { .. }));
    // a budget needs clipping: the squared loss's gradient is unbounded
    let budget = "epsilon = 1.0\ndelta_priv = 1e-5\n";
    let e = err(&format!(
        "{ls}[algorithm]\nkind = \"dpsgd\"\nlambda = 0.1\neta = 0.5\nsteps = 5\nsample_rate = 0.3\n{budget}"
    ));
    assert!(e.contains("algorithm.clip") && e.contains("unbounded"), "{e}");
    let e = err(&format!(
        "{ls}[algorithm]\nkind = \"dpgd\"\nlambda = 0.1\neta = 0.1\nsteps = 5\n{budget}"
    ));
    assert!(e.contains("algorithm.kind") && e.contains("clip"), "{e}");
    let cfg = Config::from_toml_str(&format!(
        "{ls}[algorithm]\nkind = \"dpsgd\"\nlambda = 0.1\neta = 0.5\nsteps = 5\nsample_rate = 0.3\nclip = 1.0\n{budget}"
    ))
    .unwrap();
    assert!(cfg.sweep.points()[0].algorithm().noise() > 0.0);
}

/// The step-size rule refuses only what diverges: a bounded (Lipschitz or
/// clipped) gradient with ηλ < 2 is accepted at any η; ηλ ≥ 2 is refused;
/// the unclipped squared loss is refused past 2/L_q.
#[test]
fn step_size_rule_refuses_only_divergence() {
    // logistic, η = 50 ≫ 2/L, λ = 0.01: bounded, accepted
    let big = DPSGD
        .replace("eta = 2.0", "eta = 50.0")
        .replace("lambda = 0.5", "lambda = 0.01");
    assert!(Config::from_toml_str(&big).is_ok());
    let e = err(&DPSGD.replace("eta = 2.0", "eta = 4.0"));
    assert!(e.contains("algorithm.eta") && e.contains("η·λ < 2"), "{e}");
    let ls = "[problem]\nmodel = \"least_squares\"\ndelta = 0.5\ns2 = 1.0\nnoise = { law = \"gaussian\", sd = 0.5 }\n\
              [algorithm]\nkind = \"dpsgd\"\nlambda = 0.1\nsigma = 0.5\nsteps = 5\nsample_rate = 0.3\n";
    // L_q = 0.3·(1 + √0.5)²/0.5 + 0.1 = 1.849: 2/L_q = 1.082
    assert!(Config::from_toml_str(&format!("{ls}eta = 1.0\n")).is_ok());
    let e = err(&format!("{ls}eta = 1.2\n"));
    assert!(e.contains("algorithm.eta") && e.contains("2/L_q"), "{e}");
    // clipped, the same η is bounded
    assert!(Config::from_toml_str(&format!("{ls}eta = 1.2\nclip = 1.0\n")).is_ok());
}

#[test]
fn a_batch_step_limit_lies_between_one_row_and_the_full_batch() {
    use propdp_core::{NoiseLaw, Point};
    let at = |model: Model, lambda: f64| {
        let alg = Algorithm::Objective { lambda, sigma: 0.0 };
        Point::new(0.5, 1.0, model, alg).unwrap()
    };
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    for (model, beta) in [(Model::Logistic, 0.25), (huber, 1.0)] {
        let p = at(model, 0.1);
        // q = 1: the full batch, L = β(1 + √δ)²/δ + λ
        assert!((p.batch_smoothness(1.0) - p.smoothness()).abs() < 1e-12);
        assert!((p.smoothness() - (beta * (1.0 + 0.5f64.sqrt()).powi(2) / 0.5 + 0.1)).abs() < 1e-12);
        // small q: one row of norm ≈ 1, L_B → β + λ, while the mean step's L_q → λ
        assert!((p.batch_smoothness(1e-9) - (beta + 0.1)).abs() < 1e-3 * beta);
        for q in [1e-3, 0.01, 0.1, 0.5] {
            let (lb, lq) = (p.batch_smoothness(q), p.mean_step_smoothness(q));
            assert!(lq < lb && lb < p.smoothness(), "q = {q}: L_q = {lq}, L_B = {lb}");
            // the batch's q·n rows at aspect ratio δ/q: β(1 + √(q/δ))² + λ
            assert!((lb - (beta * (1.0 + (q / 0.5f64).sqrt()).powi(2) + 0.1)).abs() < 1e-12);
        }
    }
}
