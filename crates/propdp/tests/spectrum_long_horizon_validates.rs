//! DP-SGD and DP-GD with a feature covariance at long horizons (the
//! long-horizon state evolution with one field per path, docs/theory.md
//! §3.4) against simulations of the real algorithm under `propdp validate`,
//! on four (spectrum, model, horizon) cases at d = 500: every final
//! comparison passes validate's rule, and along the trajectory, at the
//! checkpoints the simulation evaluated, z (theory against simulation,
//! both standard errors combined) has rms ≤ 2 and no |z| > 5.

use propdp::Silent;
use propdp::core::Config;
use propdp::validate::validate;
use serde_json::Value;

/// A 12-level spectrum file, condition 10, with the teacher's energy ∝ ω^power.
fn spectrum_file(dir: &std::path::Path, power: f64) {
    let mut text = String::from("eigenvalue,weight,teacher\n");
    for k in 0..12 {
        let omega = 10f64.powf(-(k as f64) / 11.0);
        text += &format!("{omega},{},{}\n", 1.0 / 12.0, omega.powf(power));
    }
    std::fs::write(dir.join("spectrum.csv"), text).unwrap();
}

/// Checkpoints 1, 2, 5, 10, … ≤ T and T, where the simulation evaluated.
fn checkpoints(steps: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (0..)
        .map(|k| [1, 2, 5][k % 3] * 10usize.pow(k as u32 / 3))
        .take_while(|&t| t < steps)
        .collect();
    out.push(steps);
    out
}

fn validates(name: &str, toml: &str, spectrum_power: Option<f64>) {
    let dir = tempfile::tempdir().unwrap();
    if let Some(power) = spectrum_power {
        spectrum_file(dir.path(), power);
    }
    let cfg = Config::from_toml_str_in(toml, Some(dir.path())).unwrap();
    let out = dir.path().join("out");
    let v = validate(&cfg, name, &out, &Silent).unwrap();
    assert!(
        v.failed() == 0,
        "{name}: {:?}",
        v.rows
            .iter()
            .filter(|r| r.verdict == propdp::core::validation::Verdict::Fail)
            .collect::<Vec<_>>()
    );
    let records: Vec<Value> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |source: &str| records.iter().find(|r| r["source"] == source).unwrap();
    let (theory, sim) = (of("theory"), of("simulation"));
    // the evaluated steps: all of them unless the run was thinned (`per_step_at`)
    let at: Vec<usize> = match sim["per_step_at"].as_array() {
        Some(at) => at.iter().map(|x| x.as_u64().unwrap() as usize).collect(),
        None => (0..sim["per_step"]["norm2"].as_array().unwrap().len()).collect(),
    };
    let steps = *at.last().unwrap();
    let marks = checkpoints(steps);
    let mut z = Vec::new();
    for (metric, values) in sim["per_step"].as_object().unwrap() {
        let Some(th) = theory["per_step"][metric].as_array() else {
            continue;
        };
        for (i, &t) in at.iter().enumerate().filter(|(_, t)| marks.contains(t)) {
            let se = |r: &Value, k: usize| r["per_step_stderr"][metric][k].as_f64().unwrap();
            let diff = th[t].as_f64().unwrap() - values[i].as_f64().unwrap();
            z.push((format!("{metric} at t = {t}"), diff / se(theory, t).hypot(se(sim, i))));
        }
    }
    let rms = (z.iter().map(|(_, z)| z * z).sum::<f64>() / z.len() as f64).sqrt();
    let worst = z.iter().max_by(|a, b| a.1.abs().total_cmp(&b.1.abs())).unwrap();
    println!("{name}: rms z {rms:.2} over {} comparisons, largest {worst:?}", z.len());
    assert!(
        rms <= 2.0 && worst.1.abs() <= 5.0,
        "{name}: rms z {rms:.2}, largest {worst:?}"
    );
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn clipped_huber_dpsgd_on_an_aligned_power_law() {
    validates(
        "huber",
        r#"
[problem]
model = "huber"
delta = 0.5
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
covariance = { family = "power_law", exponent = 1.0, condition = 20.0, atoms = 8, teacher = "aligned" }
[algorithm]
kind = "dpsgd"
lambda = 0.05
sigma = 0.3
eta = 0.1
steps = 1000
sample_rate = 0.05
clip = 1.0
[simulation]
d = 500
reps = 20
seed = 21
"#,
        None,
    );
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn clipped_logistic_dpsgd_on_an_anti_aligned_spectrum_file() {
    validates(
        "logistic",
        r#"
[problem]
model = "logistic"
delta = 0.5
s2 = 4.0
covariance = { file = "spectrum.csv" }
[algorithm]
kind = "dpsgd"
lambda = 0.05
sigma = 0.3
eta = 0.3
steps = 2000
sample_rate = 0.01
clip = 0.5
[simulation]
d = 500
reps = 20
seed = 22
"#,
        Some(-1.0),
    );
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn clipped_least_squares_dpsgd_on_a_spread_spectrum_file() {
    validates(
        "least squares",
        r#"
[problem]
model = "least_squares"
delta = 0.5
s2 = 1.0
noise = { law = "gaussian", sd = 0.5 }
covariance = { file = "spectrum.csv" }
[algorithm]
kind = "dpsgd"
lambda = 0.02
sigma = 0.3
eta = 0.1
steps = 1500
sample_rate = 0.1
clip = 1.0
[simulation]
d = 500
reps = 20
seed = 23
"#,
        Some(0.0),
    );
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn unclipped_huber_dpgd_on_an_aligned_spectrum_file() {
    validates(
        "huber dpgd",
        r#"
[problem]
model = "huber"
delta = 0.5
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
covariance = { file = "spectrum.csv" }
[algorithm]
kind = "dpsgd"
lambda = 0.01
sigma = 0.2
eta = 0.1
steps = 1000
sample_rate = 1.0
[simulation]
d = 500
reps = 20
seed = 24
"#,
        Some(1.0),
    );
}
