//! Every point of a run ends in results.jsonl or in errors.jsonl, and every
//! number written is finite: overflowing metrics, huge noise and extreme
//! scales are typed errors; no input panics or hangs a run; only files
//! propdp wrote are removed; a locked directory refuses a second run; sizes
//! and tolerances are refused before any work.

use std::path::Path;

use propdp::Silent;
use propdp::core::Config;
use propdp::core::record::Record;
use propdp::run::{RunSummary, Sources, run};
use propdp::rundir::Existing;

fn run_text(text: &str, dir: &Path) -> RunSummary {
    let cfg = Config::from_toml_str(text).unwrap();
    run(&cfg, "test", dir, Existing::Overwrite, Sources::default(), &Silent).unwrap()
}

fn errors(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("errors.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every line of results.jsonl is a record with finite numbers and a
/// converged solver; every point is in results or errors.
fn assert_complete(dir: &Path, points: usize) {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    assert!(!text.contains("null"), "a null in {text}");
    let records = Record::read_file(&dir.join("results.jsonl")).unwrap();
    for r in &records {
        assert_eq!(r.non_finite(), None, "{r:?}");
        assert!(r.solver.converged);
    }
    assert_eq!(
        records.len() + errors(dir).len(),
        points,
        "every point is written or reported"
    );
}

const HUBER: &str = r#"
[problem]
model = "huber"
delta = [0.5, 2.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "output"
lambda = 1.0
tau = 1e160
"#;

#[test]
fn overflowing_metrics_are_errors_not_nulls() {
    let tmp = tempfile::tempdir().unwrap();
    for (text, points) in [
        (HUBER.to_string(), 2),
        (HUBER.replace("tau = 1e160", "tau = 1e200"), 2),
        (
            HUBER
                .replace("\"output\"", "\"objective\"")
                .replace("tau = 1e160", "sigma = 1e155"),
            2,
        ),
        (
            HUBER
                .replace("sd = 0.5", "sd = 1e300")
                .replace("tau = 1e160", "tau = 1.0"),
            2,
        ),
        (
            HUBER
                .replace(
                    "{ law = \"gaussian\", sd = 0.5 }",
                    "{ law = \"laplace\", scale = 1e300 }",
                )
                .replace("tau = 1e160", "tau = 1.0"),
            2,
        ),
        (
            HUBER.replace("tau = 1e160", "tau = 1e200") + "[simulation]\nd = 20\nreps = 2\n",
            4,
        ),
        (
            HUBER
                .replace("\"output\"", "\"dpgd\"")
                .replace("tau = 1e160", "sigma = 1e-310\neta = 0.1\nsteps = 2"),
            2,
        ),
    ] {
        let s = run_text(&text, tmp.path());
        assert_complete(tmp.path(), points);
        assert!(s.failed > 0, "{text}: the overflowing points are reported");
        for e in errors(tmp.path()) {
            let e = e["error"].as_str().unwrap();
            assert!(e.contains("not finite") || e.contains("not a finite number"), "{e}");
        }
    }
}

#[test]
fn huge_logistic_noise_is_a_typed_error_promptly() {
    let tmp = tempfile::tempdir().unwrap();
    let text = r#"
[problem]
model = "logistic"
delta = 0.5
s2 = 4.0
[algorithm]
kind = "objective"
lambda = 1.0
sigma = [1e5, 1e6, 1e10, 1e155, 1e200]
"#;
    let s = run_text(text, tmp.path());
    assert_eq!(s.failed, 5);
    assert_complete(tmp.path(), 5);
    for e in errors(tmp.path()) {
        assert!(e["error"].as_str().unwrap().contains("σ/λ"), "{e}");
    }
}

#[test]
fn precision_loss_at_extreme_scales_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let text = HUBER
        .replace("s2 = 1.0", "s2 = [1.0, 1e20, 1e300]")
        .replace("\"output\"", "\"objective\"")
        .replace("tau = 1e160", "sigma = 1.0");
    run_text(&text, tmp.path());
    assert_complete(tmp.path(), 6);
    for r in Record::read_file(&tmp.path().join("results.jsonl")).unwrap() {
        let (q, m, s2) = (r.metrics["norm2"], r.metrics["overlap"], r.params["s2"]);
        assert!(q >= 0.0 && m * m <= q * s2 * (1.0 + 1e-9), "{r:?}");
    }
    let errors = errors(tmp.path());
    assert!(
        errors
            .iter()
            .all(|e| e["error"].as_str().unwrap().contains("precision lost")),
        "{errors:?}"
    );
    assert!(errors.len() >= 2, "s² = 1e20 and 1e300 lose every digit of norm2");
}

#[test]
fn a_budget_is_never_met_by_zero_noise() {
    for eps in ["1e300", "1e20"] {
        let text = HUBER.replace("tau = 1e160", &format!("epsilon = {eps}\ndelta_priv = 1e-6"));
        match Config::from_toml_str(&text) {
            Err(e) => assert!(e.to_string().contains("algorithm.epsilon"), "{e}"),
            Ok(cfg) => {
                for p in cfg.sweep.points() {
                    assert!(
                        p.algorithm().noise() > 0.0,
                        "ε = {eps}: τ = 0 would claim privacy without noise"
                    );
                }
            }
        }
    }
}

const QUICK: &str = r#"
[problem]
model = "huber"
delta = [0.5, 1.0, 2.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "objective"
lambda = 1.0
sigma = [0.0, 1.0]
"#;

fn config(text: &str) -> Config {
    Config::from_toml_str(text).unwrap()
}

#[test]
fn only_files_propdp_wrote_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let paper = tmp.path().join("paper");
    std::fs::create_dir_all(paper.join("figures")).unwrap();
    std::fs::write(paper.join("figures/fig1.txt"), "x").unwrap();
    std::fs::write(paper.join("notes.md"), "mine").unwrap();
    let s = run(
        &config(QUICK),
        "q",
        &paper,
        Existing::Refuse,
        Sources::default(),
        &Silent,
    )
    .unwrap();
    let drawn = propdp::figures::draw(&s.results(), None).unwrap();
    assert!(!drawn.files.is_empty());
    run(
        &config(QUICK),
        "q",
        &paper,
        Existing::Overwrite,
        Sources::default(),
        &Silent,
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(paper.join("figures/fig1.txt")).unwrap(), "x");
    assert_eq!(std::fs::read_to_string(paper.join("notes.md")).unwrap(), "mine");
    assert!(
        drawn.files.iter().all(|f| !f.exists()),
        "propdp's own figures of the old run are removed"
    );
    // a results.jsonl propdp did not write (no manifest) is never replaced
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("results.jsonl"), "precious\n").unwrap();
    let e = run(
        &config(QUICK),
        "q",
        &other,
        Existing::Overwrite,
        Sources::default(),
        &Silent,
    )
    .unwrap_err();
    assert!(e.to_string().contains("not written by propdp"), "{e}");
    assert_eq!(
        std::fs::read_to_string(other.join("results.jsonl")).unwrap(),
        "precious\n"
    );
}

#[test]
fn a_second_run_on_a_locked_directory_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let _held = propdp::rundir::DirLock::acquire(tmp.path()).unwrap();
    for existing in [Existing::Resume, Existing::Overwrite, Existing::Refuse] {
        let e = run(&config(QUICK), "q", tmp.path(), existing, Sources::default(), &Silent).unwrap_err();
        assert!(e.to_string().contains("in use by another propdp run"), "{e}");
    }
    let tune = "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ns2 = 1.0\n[tune]\nalgorithms = [\"output\"]\nepsilon = [1.0]\ndelta_priv = 1e-6\n";
    let e = propdp::tune::tune(tune, "t", tmp.path(), Existing::Overwrite, &Silent).unwrap_err();
    assert!(e.to_string().contains("in use"), "{e}");
    assert!(!tmp.path().join("results.jsonl").exists() && !tmp.path().join("tune.jsonl").exists());
}

#[test]
fn resume_detects_duplicated_records() {
    let tmp = tempfile::tempdir().unwrap();
    run(
        &config(QUICK),
        "q",
        tmp.path(),
        Existing::Refuse,
        Sources::default(),
        &Silent,
    )
    .unwrap();
    let file = tmp.path().join("results.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let first = text.lines().next().unwrap().to_string();
    std::fs::write(&file, format!("{text}{first}\n")).unwrap();
    let e = run(
        &config(QUICK),
        "q",
        tmp.path(),
        Existing::Resume,
        Sources::default(),
        &Silent,
    )
    .unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
}

#[test]
fn resuming_one_source_keeps_the_other_sources_failures() {
    let tmp = tempfile::tempdir().unwrap();
    let text = HUBER
        .replace("delta = [0.5, 2.0]", "delta = 0.5")
        .replace("tau = 1e160", "tau = [1.0, 1e200]")
        + "[simulation]\nd = 20\nreps = 2\n";
    let cfg = config(&text);
    run(&cfg, "q", tmp.path(), Existing::Refuse, Sources::default(), &Silent).unwrap();
    let sources = |e: &[serde_json::Value]| {
        e.iter()
            .map(|e| e["source"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(sources(&errors(tmp.path())), ["theory", "simulation"]);
    let theory_only = Sources {
        theory: true,
        simulation: false,
    };
    run(&cfg, "q", tmp.path(), Existing::Resume, theory_only, &Silent).unwrap();
    let mut kept = sources(&errors(tmp.path()));
    kept.sort();
    assert_eq!(
        kept,
        ["simulation", "theory"],
        "the simulation failure was not retried, so it stays"
    );
}

#[test]
fn sizes_and_tolerances_are_refused_before_any_work() {
    let cases: Vec<(String, &[&str])> = vec![
        (
            QUICK
                .replace(
                    "delta = [0.5, 1.0, 2.0]",
                    "delta = { from = 0.1, to = 3.0, steps = 100000 }",
                )
                .replace("sigma = [0.0, 1.0]", "sigma = { from = 0.0, to = 3.0, steps = 100000 }"),
            &["the sweep", "1000000 points"],
        ),
        (
            QUICK.replace(
                "delta = [0.5, 1.0, 2.0]",
                "delta = { from = 0.1, to = 3.0, steps = 4294967295 }",
            ),
            &["problem.delta.steps", "1000000"],
        ),
        (
            QUICK.replace("delta = [0.5, 1.0, 2.0]", "delta = 2.0") + "[simulation]\nd = 100000\nreps = 2\n",
            &["simulation.d", "GB"],
        ),
        (
            QUICK.to_string() + "[simulation]\nd = 10\nreps = 200000000\n",
            &["simulation.reps", "100000"],
        ),
        (
            QUICK.to_string() + "[simulation]\nd = 10\nreps = 2\ngrad_tol = inf\n",
            &["simulation.grad_tol"],
        ),
        (
            QUICK.to_string() + "[simulation]\nd = 10\nreps = 2\ngrad_tol = 1e300\n",
            &["simulation.grad_tol"],
        ),
        (
            QUICK.to_string() + "[simulation]\nd = [50, 50]\nreps = 2\n",
            &["simulation.d", "distinct"],
        ),
        (
            QUICK
                .replace("\"objective\"", "\"dpgd\"")
                .replace("sigma = [0.0, 1.0]", "sigma = 1.0\neta = 0.01\nsteps = 100001"),
            &["algorithm.steps", "100000"],
        ),
    ];
    for (text, needles) in cases {
        let e = Config::from_toml_str(&text).unwrap_err().to_string();
        for n in needles {
            assert!(e.contains(n), "`{n}` not in: {e}");
        }
    }
}

#[test]
fn plot_keys_are_checked_with_the_config() {
    for (plot, field) in [
        ("x = \"bogus\"", "plot.x"),
        ("series = \"eta\"", "plot.series"),
        ("metrics = [\"test_class_err\"]", "plot.metrics"),
        ("x = \"t\"", "plot.x"),
        ("x = \"d\"", "plot.x"),
    ] {
        let e = Config::from_toml_str(&format!("{QUICK}[plot]\n{plot}\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{plot}: {e}");
    }
    assert!(
        Config::from_toml_str(&format!(
            "{QUICK}[plot]\nx = \"delta\"\nseries = \"sigma\"\nmetrics = [\"test_mse\"]\n"
        ))
        .is_ok()
    );
}

#[test]
fn messages_show_numbers_compactly_and_ranges_do_not_overflow() {
    let e = Config::from_toml_str(&QUICK.replace("huber_m = 1.0", "huber_m = -1e300"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("-1e300") && e.len() < 200, "{e}");
    let e =
        Config::from_toml_str(&QUICK.replace("sigma = [0.0, 1.0]", "sigma = { from = -1e308, to = 1e308, steps = 3 }"))
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("algorithm.sigma") && e.contains("-1e308") && !e.contains("inf"),
        "{e}"
    );
}
