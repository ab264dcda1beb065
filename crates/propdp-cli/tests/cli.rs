//! End-to-end tests of `propdp run` / `propdp check` on the real binary.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use propdp::core::record::{Record, Source};
use propdp::core::{AlgorithmKind, ModelKind};

const HUBER: &str = r#"
[problem]
model = "huber"
delta = { from = 0.1, to = 3.0, steps = 12, scale = "log" }
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }

[algorithm]
kind = "objective"
lambda = 1.0
sigma = [0.0, 0.5, 2.0]
"#;

fn propdp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_propdp"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn records(dir: &Path) -> Vec<Record> {
    fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("complete JSON record"))
        .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn run_writes_one_converged_record_per_point_with_provenance() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "h.toml", HUBER);
    let out = tmp.path().join("out");
    let o = propdp(&["run", &cfg, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&out);
    assert_eq!(recs.len(), 36);
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.index, i);
        assert_eq!(
            (r.source, r.model, r.algorithm),
            (Source::Theory, ModelKind::Huber, AlgorithmKind::Objective)
        );
        for key in ["delta", "lambda", "sigma", "s2", "huber_m", "noise.sd"] {
            assert!(r.params.contains_key(key), "missing param {key}");
        }
        assert!(r.solver.converged && r.solver.residual < 1e-9);
        assert!(r.metrics["est_err2"] > 0.0);
        assert_eq!(r.provenance.crate_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(r.provenance.config_sha256.len(), 64);
    }
    assert_eq!(recs[0].params["delta"], 0.1);
    assert_eq!(recs[11].params["delta"], 3.0);
    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("huber_m = 1.0"), "manifest keeps the config text");
}

#[test]
fn existing_results_are_never_silently_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "h.toml", HUBER);
    let out = tmp.path().join("out");
    assert!(propdp(&["run", &cfg, "--out", out.to_str().unwrap()]).status.success());
    let o = propdp(&["run", &cfg, "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
}

#[test]
fn resume_finishes_an_interrupted_run_without_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "h.toml", HUBER);
    let out = tmp.path().join("out");
    let out_s = out.to_str().unwrap();
    assert!(propdp(&["run", &cfg, "--out", out_s]).status.success());
    let full = records(&out);
    // simulate a crash: 10 complete lines and half of the 11th
    let text = fs::read_to_string(out.join("results.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let torn = format!("{}\n{}", lines[..10].join("\n"), &lines[10][..40]);
    fs::write(out.join("results.jsonl"), torn).unwrap();
    let o = propdp(&["run", &cfg, "--out", out_s, "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("26 records written, 10 already done"));
    let mut resumed = records(&out);
    resumed.sort_by_key(|r| r.index);
    assert_eq!(resumed.len(), full.len());
    for (a, b) in resumed.iter().zip(&full) {
        assert_eq!(a.index, b.index);
        let (x, y) = (a.metrics["est_err2"], b.metrics["est_err2"]);
        assert!((x - y).abs() <= 1e-9 * y, "point {}: {x} vs {y}", a.index);
    }
    // a different config may not resume into this directory
    let other = write(tmp.path(), "h2.toml", &HUBER.replace("lambda = 1.0", "lambda = 2.0"));
    let o = propdp(&["run", &other, "--out", out_s, "--resume"]);
    assert!(
        !o.status.success() && stderr(&o).contains("different config"),
        "{}",
        stderr(&o)
    );
}

/// A run killed (SIGKILL) mid-sweep keeps every record written before the
/// kill (group commit syncs at most every 100 ms, but a killed process's
/// writes are already in the file), and `--resume` completes it to the same
/// records as an uninterrupted run.
#[test]
fn a_killed_run_resumes_to_the_uninterrupted_result() {
    let tmp = tempfile::tempdir().unwrap();
    let text = r#"
[problem]
model = "logistic"
delta = { from = 0.2, to = 2.0, steps = 120 }
s2 = 1.0
[algorithm]
kind = "dpgd"
lambda = 0.5
sigma = 1.0
eta = 0.5
steps = 20
[solver]
dmft_points = 2048
dmft_scrambles = 2
"#;
    let cfg = write(tmp.path(), "k.toml", text);
    let (full_dir, killed_dir) = (tmp.path().join("full"), tmp.path().join("killed"));
    assert!(
        propdp(&["run", &cfg, "--out", full_dir.to_str().unwrap()])
            .status
            .success()
    );
    let full = records(&full_dir);
    assert_eq!(full.len(), 120);
    let mut child = Command::new(env!("CARGO_BIN_EXE_propdp"))
        .args(["run", &cfg, "--out", killed_dir.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let results = killed_dir.join("results.jsonl");
    let lines = || fs::read_to_string(&results).map_or(0, |t| t.lines().count());
    let start = std::time::Instant::now();
    while lines() < 10 && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = lines();
    assert!(
        (10..120).contains(&before),
        "killed after {before} records: not mid-sweep"
    );
    let o = propdp(&["run", &cfg, "--out", killed_dir.to_str().unwrap(), "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut resumed = records(&killed_dir);
    resumed.sort_by_key(|r| r.index);
    assert_eq!(resumed.len(), 120);
    for (a, b) in resumed.iter().zip(&full) {
        assert_eq!((a.index, &a.params), (b.index, &b.params));
        assert_eq!(a.metrics, b.metrics, "point {}", a.index);
    }
}

#[test]
fn invalid_configs_name_the_field_value_and_range() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (HUBER.replace("s2 = 1.0", "s2 = 1.0\nbogus = 3"), vec!["bogus"]),
        (
            HUBER.replace("sigma = [0.0, 0.5, 2.0]", "sigma = [0.0, -0.5]"),
            vec!["algorithm.sigma", "-0.5", "0 ≤ sigma < ∞"],
        ),
        (
            HUBER.replace("lambda = 1.0", "lambda = 0.0"),
            vec!["algorithm.lambda", "λ > 0 when σ > 0"],
        ),
        (
            HUBER.replace("from = 0.1", "from = -0.1"),
            vec!["problem.delta", "scale = \"log\""],
        ),
        (
            HUBER.replace("huber_m = 1.0", "huber_m = 0.0"),
            vec!["problem.huber_m", "0 < huber_m < ∞"],
        ),
        (HUBER.replace("sd = 0.5", "scale = 0.5"), vec!["problem.noise.sd"]),
        (
            HUBER.replace("model = \"huber\"", "model = \"logistic\""),
            vec!["problem.huber_m", "does not apply"],
        ),
        (
            HUBER.replace("kind = \"objective\"", "kind = \"output\""),
            vec!["algorithm.tau"],
        ),
        (
            HUBER.replace("kind = \"objective\"", "kind = \"dpgd\"\neta = 0.2\nsteps = 0"),
            vec!["algorithm.steps", "1 ≤ steps"],
        ),
        (
            HUBER.replace("kind = \"objective\"", "kind = \"dpgd\"\neta = 3.0\nsteps = 10"),
            vec!["algorithm.eta", "diverges"],
        ),
        (
            HUBER.replace("lambda = 1.0", "lambda = 1.0\neta = 0.1"),
            vec!["algorithm.eta", "dpgd"],
        ),
    ];
    for (i, (text, needles)) in cases.iter().enumerate() {
        let cfg = write(tmp.path(), &format!("bad{i}.toml"), text);
        let o = propdp(&["check", &cfg]);
        assert!(!o.status.success(), "case {i} accepted");
        let err = stderr(&o);
        for n in needles {
            assert!(err.contains(n), "case {i}: `{n}` not in: {err}");
        }
    }
}

#[test]
fn points_without_solution_are_reported_and_the_rest_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    // unregularized logistic MLE: exists below the Candès–Sur threshold only
    let cfg = write(
        tmp.path(),
        "l.toml",
        r#"
[problem]
model = "logistic"
delta = [0.1, 0.2, 0.6, 1.0]
s2 = 1.0
[algorithm]
kind = "objective"
lambda = 0.0
sigma = 0.0
"#,
    );
    let out = tmp.path().join("out");
    let o = propdp(&["run", &cfg, "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("separable"), "{}", stderr(&o));
    let ok: Vec<f64> = records(&out).iter().map(|r| r.params["delta"]).collect();
    assert_eq!(ok, vec![0.1, 0.2]);
    let errors = fs::read_to_string(out.join("errors.jsonl")).unwrap();
    assert_eq!(errors.lines().count(), 2);
}

const WITH_SIM: &str = r#"
[problem]
model = "logistic"
delta = [0.5, 2.0]
s2 = 1.0

[algorithm]
kind = "objective"
lambda = 1.0
sigma = 1.0

[simulation]
d = [60, 120]
reps = 6
design = "rademacher"
seed = 9
"#;

fn run_with_threads(cfg: &str, out: &Path, threads: &str) -> Vec<Record> {
    let o = Command::new(env!("CARGO_BIN_EXE_propdp"))
        .args(["run", cfg, "--out", out.to_str().unwrap()])
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    records(out)
}

#[test]
fn simulation_records_are_complete_and_independent_of_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "s.toml", WITH_SIM);
    let one = run_with_threads(&cfg, &tmp.path().join("t1"), "1");
    let two = run_with_threads(&cfg, &tmp.path().join("t2"), "2");
    let sims: Vec<&Record> = one.iter().filter(|r| r.source == Source::Simulation).collect();
    assert_eq!(sims.len(), 4, "2 points × 2 dimensions");
    assert_eq!(one.iter().filter(|r| r.source == Source::Theory).count(), 2);
    for r in &sims {
        let s = r.simulation.as_ref().expect("simulation fields");
        assert_eq!((s.reps, s.seed), (6, 9));
        assert_eq!(s.n, (s.d as f64 / r.params["delta"]).round() as usize);
        assert!(s.per_rep["est_err2"].len() == 6 && s.stderr["est_err2"] > 0.0);
        assert!(r.solver.residual <= 1e-9, "final gradient norm recorded");
    }
    for (a, b) in one.iter().zip(&two) {
        assert_eq!(a.metrics, b.metrics, "results must not depend on the thread count");
    }
}

#[test]
fn validate_compares_theory_and_simulation() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(
        tmp.path(),
        "s.toml",
        &WITH_SIM
            .replace("d = [60, 120]", "d = 150")
            // z of 12 repetitions is a t-statistic with 11 degrees of freedom: |t| > 3 for 1.2% of
            // comparisons (bias_factor at δ = 0.5: z = −3.37 from 12, 0.03 from 400)
            .replace("reps = 6", "reps = 40"),
    );
    let out = tmp.path().join("out");
    let o = propdp(&["validate", &cfg, "--out", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", stderr(&o));
    assert!(stdout.contains("20 of 20 comparisons pass"), "{stdout}");
    let csv = fs::read_to_string(out.join("validation.csv")).unwrap();
    assert_eq!(csv.lines().count(), 21);
    // a config without [simulation] cannot be validated, nor simulated
    let plain = write(tmp.path(), "h.toml", HUBER);
    assert!(stderr(&propdp(&["validate", &plain])).contains("[simulation]"));
    assert!(stderr(&propdp(&["run", &plain, "--sim-only"])).contains("[simulation]"));
    let bad = write(tmp.path(), "b.toml", &WITH_SIM.replace("reps = 6", "reps = 1"));
    assert!(stderr(&propdp(&["check", &bad])).contains("simulation.reps"));
}

#[test]
fn privacy_calibration_round_trips_and_rejects_bad_input() {
    for (alg, knob, value) in [
        ("output", "--lambda", "0.5"),
        ("objective", "--lambda", "0.5"),
        ("dpgd", "--steps", "50"),
    ] {
        let o = propdp(&[
            "privacy",
            "--algorithm",
            alg,
            "--model",
            "logistic",
            knob,
            value,
            "--epsilon",
            "2",
            "--delta-priv",
            "1e-5",
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{alg}: {}", stderr(&o));
        assert!(
            out.contains("calibrated noise") && out.contains("ε = 2.000000 at δ = 1e-5"),
            "{alg}: {out}"
        );
    }
    let o = propdp(&["privacy", "--algorithm", "output", "--model", "huber", "--lambda", "0"]);
    assert!(!o.status.success() && stderr(&o).contains("--lambda"), "{}", stderr(&o));
    let o = propdp(&[
        "privacy",
        "--algorithm",
        "dpgd",
        "--model",
        "huber",
        "--noise",
        "1",
        "--delta-priv",
        "2",
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("--delta-priv"),
        "{}",
        stderr(&o)
    );
}

/// A Huber `propdp tune` config comparing objective and output perturbation.
#[test]
fn tune_prints_its_table_and_names_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let text = r#"
[problem]
model = "huber"
delta = 0.5
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[tune]
algorithms = ["objective", "output"]
epsilon = [1.0, 4.0]
delta_priv = 1e-6
"#;
    let cfg = write(tmp.path(), "t.toml", text);
    let out = tmp.path().join("out");
    let o = propdp(&["tune", &cfg, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("non-private") && stdout.contains("price ×"), "{stdout}");
    assert!(
        stdout.contains("tune.jsonl") && stdout.contains("winner_map"),
        "{stdout}"
    );
    // issue #44 item 9: every figure named was drawn, and only those
    let listed = stdout.lines().find(|l| l.starts_with("figures in ")).unwrap();
    for name in listed.split(": ").nth(1).unwrap().split(", ") {
        assert!(
            out.join("figures").join(format!("{name}.png")).exists(),
            "{name}: {listed}"
        );
    }
    let drawn = std::fs::read_dir(out.join("figures"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "png"))
        .count();
    assert_eq!(drawn, listed.split(", ").count(), "{listed}");
}

/// D4: `propdp privacy` never prints a guarantee for bad arguments; D17: the
/// objective calibration reaches large ε; D16: negative numbers are range
/// checked by propdp, not swallowed by the argument parser.
#[test]
fn privacy_refuses_bad_arguments_and_never_prints_a_false_guarantee() {
    // (arguments of `propdp privacy`, the argument the error must name)
    let bad = [
        ("--algorithm output --model huber --huber-m=-1 --noise 1", "huber_m"),
        ("--algorithm output --model huber --huber-m NaN --noise 1", "huber_m"),
        ("--algorithm output --model huber --huber-m 0 --noise 1", "huber_m"),
        (
            "--algorithm output --model logistic --lambda NaN --epsilon 1",
            "--lambda",
        ),
        (
            "--algorithm output --model logistic --lambda inf --epsilon 1",
            "--lambda",
        ),
        ("--algorithm dpgd --model logistic --steps 0 --epsilon 1", "--steps"),
        ("--algorithm objective --model logistic --rho 1e300", "--rho"),
        ("--algorithm output --model logistic --epsilon inf", "--epsilon"),
        ("--algorithm output --model logistic --epsilon 1e300", "--epsilon"),
        ("--algorithm output --model logistic --epsilon -1", "--epsilon"),
        ("--algorithm output --model logistic --noise -2", "--noise"),
    ];
    for (args, field) in bad {
        let args: Vec<&str> = std::iter::once("privacy").chain(args.split_whitespace()).collect();
        let o = propdp(&args);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(field), "{args:?}: {e}");
        assert!(
            String::from_utf8_lossy(&o.stdout).trim().is_empty(),
            "{args:?}: nothing printed"
        );
    }
    let o = propdp(&[
        "privacy",
        "--algorithm",
        "objective",
        "--model",
        "logistic",
        "--lambda",
        "1",
        "--epsilon",
        "1e4",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("ε = 10000.000000"),
        "{out}{}",
        stderr(&o)
    );
}

/// D5: a run whose every point succeeded exits 0, even when its results
/// make no figure (a single point); validate too when every comparison passes.
#[test]
fn a_successful_single_point_run_exits_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let one = HUBER
        .replace(
            "delta = { from = 0.1, to = 3.0, steps = 12, scale = \"log\" }",
            "delta = 0.5",
        )
        .replace("sigma = [0.0, 0.5, 2.0]", "sigma = 0.5");
    let cfg = write(tmp.path(), "one.toml", &one);
    let o = propdp(&["run", &cfg, "--out", tmp.path().join("o").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no figures"));
    let v = write(
        tmp.path(),
        "v.toml",
        &(one + "[simulation]\nd = 60\nreps = 4\nseed = 3\n"),
    );
    let o = propdp(&["validate", &v, "--out", tmp.path().join("v").to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && !out.contains("FAIL"), "{out}{}", stderr(&o));
}

/// A DP-SGD step size past the mean step's stability limit is accepted (the
/// gradient is bounded) with a warning that the iterates may oscillate.
#[test]
fn a_large_dpsgd_step_is_accepted_with_an_oscillation_warning() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("osc.toml");
    std::fs::write(
        &cfg,
        "[problem]\nmodel = \"logistic\"\ndelta = 1.0\ns2 = 1.0\n[algorithm]\nkind = \"dpsgd\"\nlambda = 0.05\n\
         sigma = 1.0\neta = [0.5, 30.0]\nsteps = 3\nsample_rate = 0.2\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_propdp"))
        .args(["check", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("algorithm.eta = 30.0") && err.contains("oscillate"),
        "{err}"
    );
    assert!(!err.contains("algorithm.eta = 0.5"), "{err}");
}

/// `propdp run CONFIG --shard K/3 --out dir("sK")` for K = 0, 1, 2 as three
/// processes at once; their outputs, each asserted successful.
fn three_shards(cfg: &str, dir: &dyn Fn(&str) -> String) -> Vec<std::process::Output> {
    let children: Vec<_> = (0..3)
        .map(|k| {
            Command::new(env!("CARGO_BIN_EXE_propdp"))
                .args([
                    "run",
                    cfg,
                    "--out",
                    &dir(&format!("s{k}")),
                    "--shard",
                    &format!("{k}/3"),
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            o
        })
        .collect()
}

/// A config with theory and simulation run as 3 shards in separate
/// processes and merged gives the single run's results.jsonl byte for byte;
/// merge refuses a missing shard, a duplicated shard, another config and
/// another N, naming the shard and writing nothing; a shard resumes only as
/// the same shard.
#[test]
fn three_shards_merge_to_the_single_run_and_bad_sets_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!("{HUBER}\n[simulation]\nd = [30, 60]\nreps = 3\nseed = 9\n");
    let cfg = write(tmp.path(), "s.toml", &text);
    let dir = |name: &str| tmp.path().join(name).display().to_string();
    assert!(propdp(&["run", &cfg, "--out", &dir("single")]).status.success());
    let mut counts = Vec::new();
    for o in three_shards(&cfg, &dir) {
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        counts.push(
            out.split(" records written")
                .next()
                .unwrap()
                .rsplit(' ')
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap(),
        );
    }
    // 36 theory points and 72 simulated (point, d), each in exactly one shard, balanced
    assert_eq!(counts.iter().sum::<usize>(), 36 + 72, "{counts:?}");
    assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
    let o = propdp(&["merge", &dir("s0"), &dir("s1"), &dir("s2"), "--out", &dir("merged")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        fs::read(tmp.path().join("single/results.jsonl")).unwrap(),
        fs::read(tmp.path().join("merged/results.jsonl")).unwrap(),
        "merged results differ from the single run's"
    );
    // refusals
    let other = write(tmp.path(), "o.toml", &text.replace("seed = 9", "seed = 10"));
    assert!(
        propdp(&["run", &other, "--out", &dir("o1"), "--shard", "1/3"])
            .status
            .success()
    );
    assert!(
        propdp(&["run", &cfg, "--out", &dir("n1"), "--shard", "1/2"])
            .status
            .success()
    );
    for (shards, needle) in [
        (vec!["s0", "s1"], "shard 2/3 is missing"),
        (vec!["s0", "s1", "s1", "s2"], "shard 1/3 is given twice"),
        (vec!["s0", "o1", "s2"], "different config"),
        (vec!["s0", "n1", "s2"], "2-way split"),
        (vec!["single", "s1"], "not a shard"),
    ] {
        let mut args = vec!["merge".to_string()];
        args.extend(shards.iter().map(|s| dir(s)));
        args.extend(["--out".to_string(), dir("refused")]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = propdp(&args);
        assert!(
            !o.status.success() && stderr(&o).contains(needle),
            "{needle}: {}",
            stderr(&o)
        );
        assert!(!tmp.path().join("refused").exists(), "{needle}: something was written");
    }
    // the merged directory is not overwritten
    let o = propdp(&["merge", &dir("s0"), &dir("s1"), &dir("s2"), "--out", &dir("merged")]);
    assert!(
        !o.status.success() && stderr(&o).contains("already exists"),
        "{}",
        stderr(&o)
    );
    // a shard resumes only as itself
    let o = propdp(&["run", &cfg, "--out", &dir("s0"), "--shard", "1/3", "--resume"]);
    assert!(
        !o.status.success() && stderr(&o).contains("holds shard 0/3"),
        "{}",
        stderr(&o)
    );
    assert!(
        propdp(&["run", &cfg, "--out", &dir("s0"), "--shard", "0/3", "--resume"])
            .status
            .success()
    );
}

/// Simulated points costing more than a shard's share are split into
/// blocks of repetitions; merge recomputes their statistics (per step too,
/// for DP-GD) to the single run's records, byte for byte.
#[test]
fn repetition_blocks_of_three_shards_merge_to_the_single_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dpgd = r#"
[problem]
model = "logistic"
delta = [0.5, 1.0]
s2 = 1.0
[algorithm]
kind = "dpgd"
lambda = 0.5
sigma = 1.0
eta = 0.5
steps = 6
[solver]
dmft_points = 512
dmft_scrambles = 2
[simulation]
d = [60]
reps = 8
seed = 3
"#;
    let mut resumed = 0;
    let huber = format!("{HUBER}\n[simulation]\nd = [80]\nreps = 6\nseed = 4\n").replace(
        "delta = { from = 0.1, to = 3.0, steps = 12, scale = \"log\" }",
        "delta = [0.5, 2.0]",
    );
    for (name, text) in [("g", dpgd.to_string()), ("h", huber)] {
        let cfg = write(tmp.path(), &format!("{name}.toml"), &text);
        let dir = |s: &str| tmp.path().join(format!("{name}-{s}")).display().to_string();
        assert!(propdp(&["run", &cfg, "--out", &dir("single")]).status.success());
        three_shards(&cfg, &dir);
        let blocks: usize = (0..3)
            .map(|k| {
                fs::read_to_string(format!("{}/results.jsonl", dir(&format!("s{k}"))))
                    .unwrap()
                    .matches("\"block\":")
                    .count()
            })
            .sum();
        assert!(
            blocks >= 4,
            "{name}: the simulated points were not split ({blocks} blocks)"
        );
        let o = propdp(&["merge", &dir("s0"), &dir("s1"), &dir("s2"), "--out", &dir("merged")]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            fs::read_to_string(format!("{}/results.jsonl", dir("single"))).unwrap(),
            fs::read_to_string(format!("{}/results.jsonl", dir("merged"))).unwrap(),
            "{name}: merged results differ from the single run's"
        );
        // a block missing is named
        let s = dir("s1");
        let kept: String = fs::read_to_string(format!("{s}/results.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.contains("\"block\":"))
            .map(|l| format!("{l}\n"))
            .collect();
        let had_blocks = kept.len() < fs::read_to_string(format!("{s}/results.jsonl")).unwrap().len();
        if had_blocks {
            fs::write(format!("{s}/results.jsonl"), kept).unwrap();
            let o = propdp(&["merge", &dir("s0"), &s, &dir("s2"), "--out", &dir("partial")]);
            assert!(
                !o.status.success() && stderr(&o).contains("is in no shard (shard 1/3 owns it"),
                "{}",
                stderr(&o)
            );
            // --resume recomputes exactly the missing blocks
            let o = propdp(&["run", &cfg, "--out", &s, "--shard", "1/3", "--resume"]);
            assert!(o.status.success(), "{}", stderr(&o));
            let o = propdp(&["merge", &dir("s0"), &s, &dir("s2"), "--out", &dir("resumed")]);
            assert!(o.status.success(), "{}", stderr(&o));
            assert_eq!(
                fs::read_to_string(format!("{}/results.jsonl", dir("single"))).unwrap(),
                fs::read_to_string(format!("{}/results.jsonl", dir("resumed"))).unwrap(),
                "{name}: merged after resume"
            );
            resumed += 1;
        }
    }
    assert!(resumed > 0, "shard 1/3 held no block in either config");
}

/// `tune --shard K/N` searches a cost-balanced third of the cells; `merge`
/// gives the single search's tune.jsonl byte for byte, the same table and
/// the figures, and refuses an unfinished shard.
#[test]
fn tune_shards_merge_to_the_single_search() {
    let tmp = tempfile::tempdir().unwrap();
    let text = r#"
[problem]
model = "huber"
delta = [0.5, 1.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[tune]
algorithms = ["objective", "output", "dpgd"]
epsilon = [1.0, 4.0]
delta_priv = 1e-6
steps = [1, 2, 4]
[solver]
dmft_points = 256
dmft_scrambles = 2
[simulation]
d = [40]
reps = 4
seed = 5
"#;
    let cfg = write(tmp.path(), "t.toml", text);
    let dir = |name: &str| tmp.path().join(name).display().to_string();
    let table = |o: &std::process::Output| {
        let s = String::from_utf8_lossy(&o.stdout).to_string();
        s.lines()
            .filter(|l| !l.contains(tmp.path().to_str().unwrap()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let single = propdp(&["tune", &cfg, "--out", &dir("single")]);
    assert!(single.status.success(), "{}", stderr(&single));
    let mut lines = 0;
    for k in 0..3 {
        let o = propdp(&[
            "tune",
            &cfg,
            "--out",
            &dir(&format!("s{k}")),
            "--shard",
            &format!("{k}/3"),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let n = fs::read_to_string(format!("{}/tune.jsonl", dir(&format!("s{k}"))))
            .unwrap()
            .lines()
            .count();
        assert!(n > 0, "shard {k} searched nothing");
        lines += n;
    }
    let all = fs::read_to_string(format!("{}/tune.jsonl", dir("single"))).unwrap();
    assert_eq!(lines, all.lines().count(), "every optimum in exactly one shard");
    // unfinished shard, then a shard resumed as another
    fs::rename(
        format!("{}/complete.json", dir("s1")),
        format!("{}/complete.bak", dir("s1")),
    )
    .unwrap();
    let o = propdp(&["merge", &dir("s0"), &dir("s1"), &dir("s2"), "--out", &dir("m")]);
    assert!(
        !o.status.success() && stderr(&o).contains("(shard 1/3) has not finished"),
        "{}",
        stderr(&o)
    );
    assert!(!tmp.path().join("m").exists(), "a refused merge wrote something");
    let o = propdp(&["tune", &cfg, "--out", &dir("s1"), "--shard", "2/3", "--resume"]);
    assert!(
        !o.status.success() && stderr(&o).contains("holds shard 1/3"),
        "{}",
        stderr(&o)
    );
    let o = propdp(&["tune", &cfg, "--out", &dir("s1"), "--shard", "1/3", "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = propdp(&["merge", &dir("s0"), &dir("s1"), &dir("s2"), "--out", &dir("m")]);
    assert!(merged.status.success(), "{}", stderr(&merged));
    assert_eq!(all, fs::read_to_string(format!("{}/tune.jsonl", dir("m"))).unwrap());
    assert_eq!(table(&single), table(&merged));
    assert!(tmp.path().join("m/figures").read_dir().unwrap().count() > 0);
    let o = propdp(&["merge", &dir("s0"), &dir("s2"), "--out", &dir("m2")]);
    assert!(
        !o.status.success() && stderr(&o).contains("shard 1/3 is missing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn privacy_of_a_schedule_file_is_certified_and_bad_files_name_the_key() {
    let schedule = |file: &str, extra: &[&str]| {
        let head = [
            "privacy",
            "--algorithm",
            "dpsgd",
            "--model",
            "logistic",
            "--schedule",
            file,
        ];
        propdp(&[&head[..], extra].concat())
    };
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        dir.path(),
        "run.toml",
        "[[segment]]\nnoise = 1.0\nsample_rate = 0.02\nsteps = 300\nclip = 1.0\n\n\
         [[segment]]\nnoise = 2.0\nsample_rate = 0.02\nsteps = 200\nclip = 1.0\n",
    );
    let o = schedule(
        &good,
        &["--delta-priv", "1e-5", "--neighbouring", "add-remove-one", "--json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (lo, hi) = (j["epsilon_lower"].as_f64().unwrap(), j["epsilon"].as_f64().unwrap());
    assert!(lo <= hi && hi - lo <= 1e-3 * hi && j["bracket_reached"] == true, "{j}");
    assert_eq!(j["segments"].as_array().unwrap().len(), 2);
    // the same schedule through the accountant directly
    use propdp::core::accountant::Neighbouring;
    use propdp::core::accountant::bracket::BracketSettings;
    use propdp::core::accountant::epsilon;
    use propdp::core::accountant::events::{Event, Segment};
    let seg = |z: f64, steps: u64| Segment {
        noise_multiplier: z,
        sample_rate: 0.02,
        steps,
    };
    let b = epsilon(
        &Event::schedule(&[seg(1.0, 300), seg(2.0, 200)]),
        1e-5,
        Neighbouring::AddRemoveOne,
        BracketSettings::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!((b.lower, b.upper), (lo, hi));
    for (text, key) in [
        ("[[segment]]\nsample_rate = 0.02\nsteps = 3\n", "noise"),
        (
            "[[segment]]\nnoise = 1.0\nsample_rate = 1.5\nsteps = 3\nclip = 1.0\n",
            "segment[0].sample_rate",
        ),
        (
            "[[segment]]\nnoise = 1.0\nsample_rate = 0.5\nsteps = -3\nclip = 1.0\n",
            "segment[0].steps",
        ),
        (
            "[[segment]]\nnoise = 1.0\nsample_rate = 0.5\nsteps = 3\nbatch = 4\n",
            "batch",
        ),
    ] {
        let f = write(dir.path(), "bad.toml", text);
        let o = schedule(&f, &[]);
        let e = stderr(&o);
        assert!(
            !o.status.success() && e.contains(key) && e.contains("bad.toml"),
            "{text}: {e}"
        );
    }
    let o = schedule(&good, &["--noise", "1"]);
    assert!(!o.status.success() && stderr(&o).contains("--noise"), "{}", stderr(&o));
    // shuffled batches: the unamplified ε of ⌈6⌉ + ⌈4⌉ Gaussian releases, the Poisson figure beside it
    let o = schedule(
        &good,
        &[
            "--delta-priv",
            "1e-5",
            "--neighbouring",
            "add-remove-one",
            "--sampling",
            "shuffled",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let exact = propdp::core::accountant::gdp_to_eps((6.0f64 + 4.0 / 4.0).sqrt(), 1e-5).unwrap();
    assert!((j["epsilon"].as_f64().unwrap() / exact - 1.0).abs() < 1e-12, "{j}");
    assert_eq!(j["epsilon_if_poisson"].as_f64().unwrap(), hi, "{j}");
    assert_eq!(
        (j["sampling"].as_str(), j["sensitivity"].as_f64()),
        (Some("shuffled"), Some(1.0)),
        "{j}"
    );
    // fixed-size batches: replace-one only, refused naming the relation
    let o = schedule(&good, &["--neighbouring", "add-remove-one", "--sampling", "fixed-size"]);
    assert!(
        !o.status.success() && stderr(&o).contains("neighbouring"),
        "{}",
        stderr(&o)
    );
    let o = schedule(&good, &["--neighbouring", "replace-one", "--sampling", "fixed-size"]);
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("sensitivity 2C"),
        "{}",
        stderr(&o)
    );
    // a model released by objective perturbation: alone, its bracket holds the closed form
    // `propdp privacy --algorithm objective` states; beside the segments it costs more
    let release = "[[objective]]\nlambda = 10.0\nnoise = 4.0\n";
    let alone = write(dir.path(), "release.toml", release);
    let json = |o: &std::process::Output| -> serde_json::Value {
        assert!(o.status.success(), "{}", stderr(o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let j = json(&schedule(&alone, &["--delta-priv", "1e-5", "--json"]));
    let closed = json(&propdp(&[
        "privacy",
        "--algorithm",
        "objective",
        "--model",
        "logistic",
        "--lambda",
        "10",
        "--noise",
        "4",
        "--delta-priv",
        "1e-5",
        "--json",
    ]));
    let exact = closed["epsilon"].as_f64().unwrap();
    let (lo, up) = (j["epsilon_lower"].as_f64().unwrap(), j["epsilon"].as_f64().unwrap());
    assert!(lo <= exact && exact <= up, "[{lo}, {up}] ∌ {exact}");
    let both = write(
        dir.path(),
        "both.toml",
        &(std::fs::read_to_string(&good).unwrap() + "\n" + release),
    );
    let j = json(&schedule(
        &both,
        &["--delta-priv", "1e-5", "--neighbouring", "add-remove-one", "--json"],
    ));
    assert!(j["epsilon_lower"].as_f64().unwrap() > hi, "{j}");
    assert_eq!(j["objectives"].as_array().unwrap().len(), 1);
    let bad = write(dir.path(), "bad.toml", "[[objective]]\nlambda = 0.0\nnoise = 4.0\n");
    let e = stderr(&schedule(&bad, &[]));
    assert!(e.contains("objective[0].lambda") && e.contains("bad.toml"), "{e}");
    let e = stderr(&schedule(&both, &["--sampling", "shuffled"]));
    assert!(e.contains("sampling"), "{e}");
}

/// Issue #44 items 4–5: `propdp check` takes a tune config — its fields, the
/// metric against every algorithm, the cost limit — and prints the search's
/// estimate; `propdp tune` prints the same estimate before the work.
#[test]
fn check_takes_a_tune_config_and_tune_prints_its_estimate_first() {
    let tmp = tempfile::tempdir().unwrap();
    let tune = r#"
[problem]
model = "huber"
delta = [0.5, 1.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[tune]
algorithms = ["objective", "output"]
epsilon = [1.0, 4.0]
delta_priv = 1e-6
"#;
    let cfg = write(tmp.path(), "t.toml", tune);
    let o = propdp(&["check", &cfg]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("a valid tune config") && out.contains("estimate: 8 cells"),
        "{out}"
    );
    // what tune would refuse, check refuses: a metric the algorithms do not predict, the cost limit
    for (extra, field) in [
        ("metric = \"test_class_err\"\n", "tune.metric"),
        ("max_hours = 1e-9\n", "tune.max_hours"),
    ] {
        let bad = write(tmp.path(), "bad.toml", &format!("{tune}{extra}"));
        let o = propdp(&["check", &bad]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(field), "{extra}: {err}");
    }
    let out_dir = tmp.path().join("out");
    let o = propdp(&["tune", &cfg, "--out", out_dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.trim_start().starts_with("estimate: 8 cells"), "{err}");
}

/// Issue #44 item 3: `propdp run` prints the numbers it computed — a row per
/// point with its swept parameters and main metrics, theory beside
/// simulation ± s.e. — and `--quiet` leaves only where they were written.
#[test]
fn run_prints_a_table_of_the_computed_numbers_unless_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(
        tmp.path(),
        "c.toml",
        &format!("{HUBER}\n[simulation]\nd = 100\nreps = 2\nseed = 1\n")
            .replace("steps = 12", "steps = 2")
            .replace("[0.0, 0.5, 2.0]", "[0.5]"),
    );
    let out = tmp.path().join("out");
    let o = propdp(&["run", &cfg, "--out", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let header = text.lines().next().unwrap();
    assert!(
        header.contains("delta") && header.contains("est_err2: theory | sim ± se"),
        "{text}"
    );
    let theory = records(&out)
        .into_iter()
        .find(|r| r.source == Source::Theory && r.index == 1)
        .unwrap();
    let row = text.lines().find(|l| l.trim_start().starts_with("1 ")).unwrap();
    assert!(
        row.contains(&format!("{:.5} | ", theory.metrics["est_err2"])) && row.contains(" ± "),
        "{row}"
    );
    let quiet = tmp.path().join("quiet");
    let o = propdp(&["run", &cfg, "--out", quiet.to_str().unwrap(), "--quiet"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("est_err2") && text.contains("records written"), "{text}");
}

/// The numbers in an SVG's text elements.
fn svg_numbers(svg: &str) -> Vec<String> {
    let mut numbers = Vec::new();
    for text in svg.split("<text").skip(1) {
        let body = text.split_once('>').map_or("", |t| t.1);
        let body = body.split("</text>").next().unwrap_or("");
        let mut current = String::new();
        for c in body.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_digit() || (c == '.' && !current.is_empty()) {
                current.push(c);
            } else if !current.is_empty() {
                numbers.push(std::mem::take(&mut current));
            }
        }
    }
    numbers
}

#[test]
fn a_budget_sweep_over_lambda_draws_one_curve_per_epsilon_with_rounded_values() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(
        tmp.path(),
        "budget.toml",
        r#"
[problem]
model = "logistic"
delta = 0.5
s2 = 4.0

[algorithm]
kind = "objective"
lambda = { from = 0.5, to = 50, steps = 6, scale = "log" }
epsilon = [2, 4]
delta_priv = 1e-5
"#,
    );
    let out = tmp.path().join("out");
    let o = propdp(&["run", &cfg, "--theory-only", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let figures = out.join("figures");
    let mut names: Vec<String> = fs::read_dir(&figures)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    // x = λ, one series per ε: a single figure, not one per calibrated σ or λ
    assert_eq!(
        names,
        ["index.json", "logistic_objective.png", "logistic_objective.svg"]
    );
    let svg = fs::read_to_string(figures.join("logistic_objective.svg")).unwrap();
    assert!(
        svg.contains("ε = 2") && svg.contains("ε = 4"),
        "legend names the budgets"
    );
    assert!(svg.contains("λ (ridge)"), "x axis is λ");
    // theory lines: one polyline per (ε, panel) through the six λ
    let lines = svg
        .split("<polyline")
        .skip(1)
        .filter(|p| {
            p.split("points=\"")
                .nth(1)
                .is_some_and(|pts| pts.split('"').next().unwrap().split_whitespace().count() == 6)
        })
        .count();
    assert_eq!(lines, 2 * 3, "a theory line per budget and panel");
    for n in svg_numbers(&svg) {
        let digits = n.chars().filter(char::is_ascii_digit).count();
        assert!(digits <= 6, "unrounded value {n} in the figure");
    }
    // the layout from flags, without rerunning: x = ε, a series per λ, rounded
    let redrawn = tmp.path().join("redrawn");
    let o = propdp(&[
        "plot",
        out.join("results.jsonl").to_str().unwrap(),
        "--x",
        "epsilon",
        "--series",
        "lambda",
        "--metrics",
        "est_err2",
        "--out",
        redrawn.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = fs::read_to_string(redrawn.join("logistic_objective.svg")).unwrap();
    assert!(
        svg.contains("λ = 1.256\n") && svg.contains("λ = 50\n"),
        "legend rounds λ"
    );
    assert!(svg.contains("ε (privacy budget)"));
    let o = propdp(&["plot", out.join("results.jsonl").to_str().unwrap(), "--x", "nope"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("x = \"nope\"") && stderr(&o).contains("\"lambda\""),
        "{}",
        stderr(&o)
    );
}

/// A DP-SGD privacy report gives the same run in a training loop's knobs
/// (#44 item 11): z = σ/min(C, L), max_grad_norm, q, epochs = q·T.
#[test]
fn a_dpsgd_privacy_report_names_the_training_loop_knobs() {
    let o = propdp(&[
        "privacy",
        "--algorithm",
        "dpsgd",
        "--model",
        "huber",
        "--huber-m",
        "2",
        "--noise",
        "1.5",
        "--clip",
        "0.5",
        "--sample-rate",
        "0.01",
        "--steps",
        "3000",
        "--delta-priv",
        "1e-5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // Huber at M = 2 clipped at C = 0.5: the per-example bound is C, z = 1.5/0.5
    let line = text
        .lines()
        .find(|l| l.contains("as a training loop"))
        .expect("the knobs line");
    assert!(
        line.contains("noise_multiplier = 3.000000")
            && line.contains("max_grad_norm = 0.500000")
            && line.contains("sample_rate = 0.01")
            && line.contains("epochs = q·T = 30.000000"),
        "{line}"
    );
}

/// A run's table of calibrated points names the guarantee and relation its
/// ε column is read under; with objective perturbation below its floor the
/// records carry the extra ridge and the effective λ.
#[test]
fn a_budget_table_names_its_relation_and_the_extra_ridge_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(
        tmp.path(),
        "b.toml",
        "[problem]\nmodel = \"logistic\"\ndelta = [0.5]\ns2 = 1.0\n[algorithm]\nkind = \"objective\"\nlambda = 0.1\n\
         epsilon = [1.0, 4.0]\ndelta_priv = 1e-5\nneighbouring = \"add_remove_one\"\n",
    );
    let out = tmp.path().join("out");
    let o = propdp(&["run", &cfg, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines().next().unwrap() == "guarantees: (epsilon, delta)-DP, add/remove-one neighbours",
        "{text}"
    );
    let records = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(records.lines().next().unwrap()).unwrap();
    // add/remove: λ + Δ = β/(e^{ε/2} − 1) at ε = 1 (k = 1), logistic β = 1/4
    let effective = first["privacy"]["lambda_effective"].as_f64().unwrap();
    assert!((effective - 0.25 / 0.5f64.exp_m1()).abs() < 1e-12, "{first}");
    assert!((first["privacy"]["extra_ridge"].as_f64().unwrap() - (effective - 0.1)).abs() < 1e-12);
    assert_eq!(first["params"]["lambda"].as_f64().unwrap(), effective);
}

#[test]
fn a_precision_from_the_command_line_is_recorded_and_checked() {
    // 150 steps: the long-horizon solver, whose paths the precision chooses
    let text = "[problem]\nmodel = \"huber\"\ndelta = 0.5\ns2 = 1.0\nhuber_m = 1.0\n\
                noise = { law = \"gaussian\", sd = 0.5 }\n[algorithm]\nkind = \"dpsgd\"\nlambda = 0.05\n\
                sigma = 0.3\neta = 0.1\nsteps = 150\nsample_rate = 0.1\nclip = 1.0\n";
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "lh.toml", text);
    let out = tmp.path().join("out");
    let o = propdp(&[
        "run",
        &cfg,
        "--precision",
        "0.05",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &records(&out)[0];
    let rqmc = r.solver.rqmc.expect("a long-horizon record carries its paths");
    assert_eq!((rqmc.target, rqmc.replicates), (Some(0.05), 4));
    let pilot = propdp::theory::dynamics::long_horizon::precision::PILOT_POINTS;
    assert!(rqmc.precision <= 0.05 && rqmc.points >= pilot, "{rqmc:?}");
    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("precision = 0.05"), "{manifest}");
    // the config's own default: no target written, the default applied
    let out2 = tmp.path().join("out2");
    assert!(
        propdp(&["run", &cfg, "--out", out2.to_str().unwrap(), "--quiet"])
            .status
            .success()
    );
    assert_eq!(
        records(&out2)[0].solver.rqmc.unwrap().target,
        Some(propdp::core::config::DEFAULT_PRECISION)
    );
    // out of range, or beside fixed paths: refused naming the key
    let o = propdp(&[
        "run",
        &cfg,
        "--precision",
        "0.5",
        "--out",
        tmp.path().join("o3").to_str().unwrap(),
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("solver.precision"),
        "{}",
        stderr(&o)
    );
    let fixed = write(
        tmp.path(),
        "fixed.toml",
        &format!("{text}[solver]\ndmft_points = 2048\n"),
    );
    let o = propdp(&[
        "run",
        &fixed,
        "--precision",
        "0.01",
        "--out",
        tmp.path().join("o4").to_str().unwrap(),
    ]);
    assert!(
        stderr(&o).contains("solver.precision") && stderr(&o).contains("dmft_points"),
        "{}",
        stderr(&o)
    );
}
