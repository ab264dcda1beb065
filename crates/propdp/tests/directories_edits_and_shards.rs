//! Run directories against what users do to them: files propdp did not
//! write are never touched, hand-edited records and tune lines are refused
//! by resume and merge, shard counts are capped, the merge locks its output,
//! corrupt manifests are named, a long solve stops when cancelled, and
//! refusals name the field.

use std::fs;
use std::path::{Path, PathBuf};

use propdp::Silent;
use propdp::core::Config;
use propdp::run::{RunSummary, Sources, run, run_shard};
use propdp::rundir::Existing;
use propdp::shard::Shard;

/// Theory of six points and a small simulation, split into blocks by shards.
const RUN: &str = r#"
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
[simulation]
d = [40]
reps = 4
seed = 3
"#;

/// Two δ × two ε × two algorithms.
const TUNE: &str = r#"
[problem]
model = "huber"
delta = [0.5, 2.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[tune]
algorithms = ["objective", "output"]
epsilon = [1.0, 4.0]
delta_priv = 1e-6
"#;

fn cfg() -> Config {
    Config::from_toml_str(RUN).unwrap()
}

fn run_into(dir: &Path, existing: Existing) -> propdp::Result<RunSummary> {
    run(&cfg(), "r.toml", dir, existing, Sources::default(), &Silent)
}

fn shard_into(dir: &Path, shard: Shard) {
    run_shard(
        &cfg(),
        "r.toml",
        dir,
        Existing::Refuse,
        Sources::default(),
        Some(shard),
        &Silent,
    )
    .unwrap();
}

fn tune_into(dir: &Path, existing: Existing) -> propdp::Result<propdp::tune::TuneOutcome> {
    propdp::tune::tune(TUNE, "t.toml", dir, existing, &Silent)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else if p.file_name().unwrap() != ".propdp.lock" {
            out.push((p.clone(), fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

fn lines(path: &Path) -> Vec<String> {
    fs::read_to_string(path).unwrap().lines().map(String::from).collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

#[test]
fn files_propdp_did_not_write_are_never_touched() {
    let tmp = tempfile::tempdir().unwrap();
    // a manifest.json, errors.jsonl or figures/index.json of someone else's:
    // run, tune (also with --overwrite) and merge refuse before writing anything
    let foreign: [(&str, &str); 4] = [
        ("manifest.json", "{\"mine\": true}\n"),
        ("errors.jsonl", "precious\n"),
        ("figures/index.json", "[\"a.png\"]\n"),
        ("tune.jsonl", "precious\n"),
    ];
    let shards = tmp.path().join("shards");
    let dirs: Vec<PathBuf> = (0..2).map(|k| shards.join(k.to_string())).collect();
    for (k, d) in dirs.iter().enumerate() {
        shard_into(d, Shard { index: k, count: 2 });
    }
    for (i, (name, text)) in foreign.iter().enumerate() {
        let dir = tmp.path().join(format!("case{i}"));
        fs::create_dir_all(dir.join("figures")).unwrap();
        fs::write(dir.join(name), text).unwrap();
        let before = snapshot(&dir);
        for existing in [Existing::Refuse, Existing::Overwrite, Existing::Resume] {
            let e = run_into(&dir, existing).unwrap_err().to_string();
            assert!(e.contains(name.rsplit('/').next().unwrap()), "run, {name}: {e}");
            let e = tune_into(&dir, existing).unwrap_err().to_string();
            assert!(e.contains("propdp"), "tune, {name}: {e}");
        }
        let e = propdp::merge::merge(&dir, &dirs).unwrap_err().to_string();
        assert!(e.contains("propdp"), "merge, {name}: {e}");
        assert_eq!(snapshot(&dir), before, "{name}: nothing touched");
    }
    // a figure of a matching name that propdp did not write is not replaced:
    // drawing fails naming it, the results are kept
    let first = tmp.path().join("first");
    let s = run_into(&first, Existing::Refuse).unwrap();
    let drawn = propdp::figures::draw(&s.results(), None).unwrap();
    let name = drawn.files[0].file_name().unwrap().to_owned();
    let second = tmp.path().join("second");
    fs::create_dir_all(second.join("figures")).unwrap();
    fs::write(second.join("figures").join(&name), "my figure").unwrap();
    let s = run_into(&second, Existing::Refuse).unwrap();
    let e = propdp::figures::draw(&s.results(), None).unwrap_err().to_string();
    assert!(
        e.contains(&*name.to_string_lossy()) && e.contains("did not write"),
        "{e}"
    );
    assert_eq!(fs::read(second.join("figures").join(&name)).unwrap(), b"my figure");
    assert!(!second.join("figures/index.json").exists());
    assert_eq!(
        fs::read_dir(second.join("figures")).unwrap().count(),
        1,
        "nothing drawn aside is left"
    );
}

#[test]
fn a_tune_shard_missing_a_cell_or_holding_one_twice_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..2).map(|k| tmp.path().join(format!("s{k}"))).collect();
    for (k, d) in dirs.iter().enumerate() {
        propdp::tune::tune_shard(
            TUNE,
            "t.toml",
            d,
            Existing::Refuse,
            Shard { index: k, count: 2 },
            &Silent,
        )
        .unwrap();
    }
    let file = dirs[1].join("tune.jsonl");
    let original = lines(&file);
    assert!(original.len() >= 2);
    // one line deleted: merge refuses naming the cell, writes nothing
    write_lines(&file, &original[1..]);
    let out = tmp.path().join("merged");
    let e = propdp::tune::merge(&out, &dirs, &Silent).unwrap_err().to_string();
    assert!(e.contains("missing from tune.jsonl"), "{e}");
    assert!(!out.join("tune.jsonl").exists());
    // one line twice: merge and resume refuse
    let mut twice = original.clone();
    twice.push(original[0].clone());
    write_lines(&file, &twice);
    let e = propdp::tune::merge(&out, &dirs, &Silent).unwrap_err().to_string();
    assert!(e.contains("twice"), "{e}");
    let e = propdp::tune::tune_shard(
        TUNE,
        "t.toml",
        &dirs[1],
        Existing::Resume,
        Shard { index: 1, count: 2 },
        &Silent,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("twice"), "{e}");
    // intact: the merge equals the single search
    write_lines(&file, &original);
    propdp::tune::merge(&out, &dirs, &Silent).unwrap();
    let single = tmp.path().join("single");
    tune_into(&single, Existing::Refuse).unwrap();
    assert_eq!(lines(&out.join("tune.jsonl")), lines(&single.join("tune.jsonl")));
    // the same algorithm twice is refused naming tune.algorithms
    let e = propdp::tune::tune(
        &TUNE.replace("[\"objective\", \"output\"]", "[\"output\", \"output\"]"),
        "t.toml",
        &tmp.path().join("dup"),
        Existing::Refuse,
        &Silent,
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("tune.algorithms"), "{e:#}");
}

#[test]
fn a_shards_table_prints_each_cell_in_its_own_row() {
    let tmp = tempfile::tempdir().unwrap();
    for k in 0..3 {
        let o = propdp::tune::tune_shard(
            TUNE,
            "t.toml",
            &tmp.path().join(k.to_string()),
            Existing::Refuse,
            Shard { index: k, count: 3 },
            &Silent,
        )
        .unwrap();
        let table = o.table();
        for c in &o.cells {
            let best = c.best.as_ref().unwrap();
            let row = table
                .lines()
                .find(|l| l.contains(&format!("{} {:.4} (λ=", c.algorithm, best.tuned.value)))
                .unwrap_or_else(|| panic!("no row for {c:?} in\n{table}"));
            let cols: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(
                (cols[0].parse::<f64>().unwrap(), cols[1].parse::<f64>().unwrap()),
                (c.delta, c.level),
                "shard {k}: {row}"
            );
        }
    }
}

#[test]
fn shard_counts_are_capped_and_large_ones_are_cheap() {
    for spec in ["0/18446744073709551615", "0/10000000000", "0/1000001"] {
        let e = spec.parse::<Shard>().unwrap_err().to_string();
        assert!(e.contains("--shard") && e.contains("1000000"), "{spec}: {e}");
    }
    // the largest allowed count: most shards are empty, assigning is O(units log N)
    let tmp = tempfile::tempdir().unwrap();
    let s = run_shard(
        &cfg(),
        "r.toml",
        tmp.path(),
        Existing::Refuse,
        Sources::default(),
        Some("999999/1000000".parse().unwrap()),
        &Silent,
    )
    .unwrap();
    assert_eq!(s.written + s.failed, 0, "shard 999999 of 10⁶ owns nothing here");
    let owner = propdp::shard::assign(&[3.0, 1.0, 2.0], 1_000_000);
    assert_eq!(owner, vec![0, 2, 1]);
    // a manifest claiming a huge split is refused when read back
    let e = serde_json::from_str::<Shard>(r#"{"index": 0, "count": 18446744073709551615}"#).unwrap_err();
    assert!(e.to_string().contains("--shard"), "{e}");
}

/// A hand edit of a JSON line, and the word its refusal must contain.
type Edit = (&'static str, fn(&mut serde_json::Value));

/// Hand edits of one record line.
fn edits() -> Vec<Edit> {
    vec![
        ("metrics.est_err2", |v| v["metrics"]["est_err2"] = (-5.0).into()),
        ("converged", |v| v["solver"]["converged"] = false.into()),
        ("params", |v| v["params"]["lambda"] = 7.0.into()),
        ("config_sha256", |v| {
            v["provenance"]["config_sha256"] = "0".repeat(64).into()
        }),
        ("not a unit", |v| v["index"] = 99.into()),
        ("missing", |v| v["metrics"] = serde_json::json!({})),
        ("stderr", |v| {
            if v["source"] == "simulation" {
                v["stderr"]["norm2"] = (-1.0).into()
            } else {
                v["metrics"]["norm2"] = 1e9.into()
            }
        }),
    ]
}

#[test]
fn hand_edited_records_are_refused_by_resume_and_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    run_into(&dir, Existing::Refuse).unwrap();
    let results = dir.join("results.jsonl");
    let original = lines(&results);
    let sim_line = original
        .iter()
        .position(|l| l.contains("\"source\":\"simulation\""))
        .unwrap();
    for (word, edit) in edits() {
        for at in [1, sim_line] {
            let mut edited = original.clone();
            let mut v: serde_json::Value = serde_json::from_str(&edited[at]).unwrap();
            edit(&mut v);
            edited[at] = v.to_string();
            write_lines(&results, &edited);
            let e = run_into(&dir, Existing::Resume).unwrap_err().to_string();
            assert!(e.contains(&format!("results.jsonl:{}", at + 1)), "{word}: {e}");
            let expect = if word == "stderr" && at == 1 { "est_err2" } else { word };
            assert!(e.contains(expect), "{word}: {e}");
            assert_eq!(lines(&results), edited, "the file is left as it is");
            // plot refuses what resume refuses
            let e = propdp::figures::draw(&results, None).unwrap_err().to_string();
            assert!(e.contains(&format!("results.jsonl:{}", at + 1)), "plot, {word}: {e}");
        }
    }
    // a line twice: resume and plot refuse it alike
    write_lines(&results, &[original.clone(), vec![original[1].clone()]].concat());
    for e in [
        run_into(&dir, Existing::Resume).unwrap_err().to_string(),
        propdp::figures::draw(&results, None).unwrap_err().to_string(),
    ] {
        assert!(e.contains("written twice"), "{e}");
    }
    write_lines(&results, &original);
    run_into(&dir, Existing::Resume).unwrap();
    assert_eq!(lines(&results), original, "an intact run resumes to itself");
    assert!(propdp::figures::draw(&results, None).is_ok());
    // merge checks the shards' lines the same way
    let dirs: Vec<PathBuf> = (0..2).map(|k| tmp.path().join(format!("s{k}"))).collect();
    for (k, d) in dirs.iter().enumerate() {
        shard_into(d, Shard { index: k, count: 2 });
    }
    let shard_results = dirs[0].join("results.jsonl");
    let original = lines(&shard_results);
    for (word, edit) in edits() {
        let mut edited = original.clone();
        let mut v: serde_json::Value = serde_json::from_str(&edited[0]).unwrap();
        edit(&mut v);
        edited[0] = v.to_string();
        write_lines(&shard_results, &edited);
        let out = tmp.path().join("merged");
        let e = propdp::merge::merge(&out, &dirs).unwrap_err().to_string();
        assert!(e.contains("results.jsonl:1"), "{word}: {e}");
        assert!(!out.join("results.jsonl").exists(), "{word}: nothing written");
    }
}

#[test]
fn hand_edited_tune_lines_are_refused_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    tune_into(&dir, Existing::Refuse).unwrap();
    let file = dir.join("tune.jsonl");
    let original = lines(&file);
    let edits: [Edit; 4] = [
        ("value", |v| v["value"] = (-5.0).into()),
        ("not a cell", |v| {
            v["params"].as_object_mut().unwrap().remove("delta");
        }),
        ("config_sha256", |v| v["provenance"]["config_sha256"] = "x".into()),
        ("metric", |v| v["metric"] = "test_mse".into()),
    ];
    for (word, edit) in edits {
        let mut edited = original.clone();
        let mut v: serde_json::Value = serde_json::from_str(&edited[0]).unwrap();
        edit(&mut v);
        edited[0] = v.to_string();
        write_lines(&file, &edited);
        let e = tune_into(&dir, Existing::Resume).unwrap_err().to_string();
        assert!(e.contains("tune.jsonl:1") && e.contains(word), "{word}: {e}");
    }
}

#[test]
fn merge_locks_its_output_and_leaves_a_users_entries_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..2).map(|k| tmp.path().join(format!("s{k}"))).collect();
    for (k, d) in dirs.iter().enumerate() {
        shard_into(d, Shard { index: k, count: 2 });
    }
    let out = tmp.path().join("merged");
    {
        let _held = propdp::rundir::DirLock::acquire(&out).unwrap();
        let e = propdp::merge::merge(&out, &dirs).unwrap_err().to_string();
        assert!(e.contains("in use by another propdp"), "{e}");
    }
    // a user's entry at the name earlier versions used for their temporary
    // files (round three, item 6) is neither opened nor removed, and no
    // temporary file is left behind
    fs::create_dir_all(out.join(".errors.jsonl.propdp-tmp")).unwrap();
    let m = propdp::merge::merge(&out, &dirs).unwrap();
    assert!(
        out.join(".errors.jsonl.propdp-tmp").is_dir(),
        "the user's directory survives"
    );
    let left: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".propdp-tmp") && n != ".errors.jsonl.propdp-tmp")
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    let single = tmp.path().join("single");
    run_into(&single, Existing::Refuse).unwrap();
    assert_eq!(m.records, lines(&single.join("results.jsonl")).len());
    assert_eq!(
        lines(&out.join("results.jsonl")),
        lines(&single.join("results.jsonl")),
        "the merge equals the single run"
    );
}

#[test]
fn corrupt_manifests_and_dangling_links_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    run_into(&dir, Existing::Refuse).unwrap();
    fs::write(dir.join("manifest.json"), "{ torn").unwrap();
    let e = run_into(&dir, Existing::Resume).unwrap_err().to_string();
    assert!(e.contains("manifest.json is not a propdp manifest"), "{e}");
    #[cfg(unix)]
    {
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &link).unwrap();
        let e = run_into(&link, Existing::Refuse).unwrap_err().to_string();
        assert!(e.contains("symbolic link") && e.contains("nowhere"), "{e}");
    }
}

/// A progress that asks to stop from its `after`-th question on, counting them.
struct StopAfter {
    after: usize,
    asked: std::sync::atomic::AtomicUsize,
}

impl propdp::Progress for StopAfter {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn message(&self, _: &str) {}
    fn end(&self) {}
    fn cancelled(&self) -> bool {
        self.asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 >= self.after
    }
}

#[test]
fn a_long_dmft_solve_stops_within_a_step_when_cancelled() {
    // T = 400 at the default RQMC budget: over a minute of work uncancelled
    let cfg = Config::from_toml_str(
        "[problem]\nmodel = \"logistic\"\ndelta = 1.0\ns2 = 1.0\n[algorithm]\nkind = \"dpsgd\"\nlambda = 0.5\n\
         sigma = 1.0\neta = 0.5\nsteps = 400\nsample_rate = 0.2\n",
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let stop = StopAfter {
        after: 3,
        asked: Default::default(),
    };
    let e = run(&cfg, "c", tmp.path(), Existing::Refuse, Sources::default(), &stop).unwrap_err();
    assert_eq!(e.kind(), propdp::ErrorKind::Cancelled, "{e:#}");
    let asked = stop.asked.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        asked < 20,
        "asked {asked} times: the solve ran on after being cancelled"
    );
    assert_eq!(
        fs::read_to_string(tmp.path().join("errors.jsonl")).unwrap(),
        "",
        "a cancelled point is no failure"
    );
    assert_eq!(fs::read_to_string(tmp.path().join("results.jsonl")).unwrap(), "");
}

#[test]
fn least_squares_under_dpgd_runs_and_other_label_noise_is_refused_at_check() {
    let ls = "[problem]\nmodel = \"least_squares\"\ndelta = 0.5\ns2 = 1.0\nnoise = { law = \"gaussian\", sd = 0.5 }\n\
              [algorithm]\nkind = \"dpgd\"\nlambda = 0.1\nsigma = 0.5\neta = 0.3\nsteps = 5\n\
              [solver]\ndmft_points = 1024\n[simulation]\nd = 200\nreps = 4\nseed = 1\n";
    let cfg = Config::from_toml_str(ls).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let s = run(&cfg, "ls", tmp.path(), Existing::Refuse, Sources::default(), &Silent).unwrap();
    assert_eq!(
        (s.written, s.failed),
        (2, 0),
        "{}",
        fs::read_to_string(tmp.path().join("errors.jsonl")).unwrap()
    );
    let records = propdp::core::record::Record::read_file(&s.results()).unwrap();
    // the squared loss's gradient is unbounded: no guarantee is claimed
    assert!(records.iter().all(|r| r.privacy.is_none()));
    for (model, law) in [
        ("least_squares", "{ law = \"student_t\", dof = 3, scale = 0.5 }"),
        (
            "least_squares",
            "{ law = \"contaminated\", sd = 0.5, p = 0.1, outlier_sd = 5.0 }",
        ),
        ("huber", "{ law = \"laplace\", scale = 0.5 }"),
    ] {
        for kind in ["kind = \"dpgd\"", "kind = \"dpsgd\"\nsample_rate = 0.2\nclip = 1.0"] {
            let huber = if model == "huber" { "huber_m = 1.0\n" } else { "" };
            let text = format!(
                "[problem]\nmodel = \"{model}\"\n{huber}delta = 0.5\ns2 = 1.0\nnoise = {law}\n[algorithm]\n{kind}\n\
                 lambda = 0.1\nsigma = 0.5\neta = 0.3\nsteps = 5\n"
            );
            let e = Config::from_toml_str(&text).unwrap_err().to_string();
            assert!(e.contains("problem.noise"), "{model}, {law}, {kind}: {e}");
        }
    }
}

#[test]
fn a_descent_blown_up_by_its_noise_is_told_to_lower_sigma() {
    let text = "[problem]\nmodel = \"logistic\"\ndelta = 1.0\ns2 = 1.0\n[algorithm]\nkind = \"dpsgd\"\nlambda = 0.5\n\
                sigma = 1e300\neta = 0.5\nsteps = 3\nsample_rate = 0.5\n[simulation]\nd = 50\nreps = 2\nseed = 1\n";
    let cfg = Config::from_toml_str(text).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let s = run(
        &cfg,
        "s",
        tmp.path(),
        Existing::Refuse,
        Sources {
            theory: false,
            simulation: true,
        },
        &Silent,
    )
    .unwrap();
    assert_eq!(s.failed, 1);
    let errors = fs::read_to_string(tmp.path().join("errors.jsonl")).unwrap();
    assert!(errors.contains("lower σ") && !errors.contains("lower η"), "{errors}");
}

#[test]
fn refusals_name_the_field() {
    let base = "[problem]\nmodel = \"logistic\"\ndelta = DELTA\ns2 = 1.0\n[algorithm]\nkind = \"objective\"\n\
                lambda = 1.0\nsigma = 1.0\n";
    // fewer than 2 samples: refused, not run at another δ
    let e = Config::from_toml_str(&(base.replace("DELTA", "1e6") + "[simulation]\nd = 50\nreps = 2\nseed = 1\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("simulation.d") && e.contains("n = round(d/δ) < 2"), "{e}");
    // a range with a negative count names the range's key, not the table
    let e = Config::from_toml_str(&base.replace("DELTA", "{ from = 0.1, to = 1.0, steps = -1 }"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("problem.delta.steps"), "{e}");
    // tune minimises: a metric where higher is better is refused
    let tune = "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ns2 = 1.0\n[tune]\nalgorithms = [\"output\"]\n\
                epsilon = [1.0]\ndelta_priv = 1e-6\nmetric = \"overlap\"\n";
    let e = propdp::tune::tune(
        tune,
        "t",
        &tempfile::tempdir().unwrap().path().join("t"),
        Existing::Refuse,
        &Silent,
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("tune.metric"), "{e:#}");
}

#[test]
fn a_seed_means_the_same_from_toml_and_python() {
    // Python's keyword configs hold i64: TOML now refuses what Python cannot give
    let text = "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ns2 = 1.0\n[algorithm]\nkind = \"objective\"\nlambda = 1.0\n\
                sigma = 1.0\n[simulation]\nd = 50\nreps = 2\nseed = SEED\n";
    let e = Config::from_toml_str(&text.replace("SEED", "18446744073709551615"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("simulation.seed") && e.contains("2^63"), "{e}");
    assert!(Config::from_toml_str(&text.replace("SEED", "9223372036854775807")).is_ok());
}
