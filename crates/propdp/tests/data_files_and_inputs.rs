//! Data files and other inputs: runs on the data's own labels resume,
//! extreme magnitudes in data are refused instead of panicking, inputs that
//! are not regular files are refused at once, a user's file at a temporary
//! name survives, and `propdp spectrum` writes no non-finite number and
//! refuses duplicate column names.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use propdp::Silent;
use propdp::core::Config;
use propdp::data_spectrum;
use propdp::run::{Sources, run, run_shard};
use propdp::rundir::Existing;
use propdp::shard::Shard;

/// 200 rows of 6 columns and a label y = Σ columns + noise, values scaled by `scale`.
fn write_data(path: &Path, scale: f64) {
    let mut state: u64 = 777;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut text = String::from("a,b,c,d,e,f,y\n");
    for _ in 0..200 {
        let row: Vec<f64> = (0..6).map(|j| (1.0 + j as f64) * uniform()).collect();
        let y = row.iter().sum::<f64>() + uniform();
        let cells: Vec<String> = row.iter().chain([&y]).map(|v| format!("{:e}", v * scale)).collect();
        text += &(cells.join(",") + "\n");
    }
    std::fs::write(path, text).unwrap();
}

const OWN_LABELS: &str = r#"
[problem]
model = "huber"
delta = [0.25, 0.5]
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "ALG"
lambda = 0.5
sigma = 1.0
STEPS
[simulation]
d = 6
reps = 4
seed = 11
data = { file = "data.csv", labels = "y" }
"#;

fn config(dir: &Path, text: &str) -> Result<Config, String> {
    std::fs::write(dir.join("c.toml"), text).unwrap();
    propdp::run::load(&dir.join("c.toml")).map_err(|e| format!("{e:#}"))
}

fn own_labels(kind: &str) -> String {
    let steps = if kind == "dpsgd" {
        "eta = 0.2\nsteps = 20\nsample_rate = 0.5\nclip = 1.0"
    } else {
        ""
    };
    OWN_LABELS.replace("ALG", kind).replace("STEPS", steps)
}

/// The error of a run of `cfg` into `dir/o` that must be refused.
fn refused_run(cfg: &Config, dir: &Path) -> propdp::Error {
    run(
        cfg,
        "c",
        &dir.join("o"),
        Existing::Overwrite,
        Sources::default(),
        &Silent,
    )
    .unwrap_err()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_run_on_the_datas_own_labels_resumes_byte_identically() {
    for kind in ["objective", "dpsgd"] {
        let tmp = tempfile::tempdir().unwrap();
        write_data(&tmp.path().join("data.csv"), 1.0);
        let cfg = config(tmp.path(), &own_labels(kind)).unwrap();
        let sources = Sources::default();
        let full = tmp.path().join("full");
        run(&cfg, "c", &full, Existing::Refuse, sources, &Silent).unwrap();
        let text = read(&full.join("results.jsonl"));
        assert_eq!(text.lines().count(), 4, "{kind}: {text}");
        assert!(
            text.contains("\"labels\":\"y\""),
            "{kind}: the records name the labels' column"
        );
        // resumed with every record there: nothing to redo, nothing changed
        run(&cfg, "c", &full, Existing::Resume, sources, &Silent).unwrap();
        assert_eq!(read(&full.join("results.jsonl")), text, "{kind}");
        // interrupted after the first record: the resume completes it byte for byte
        let part = tmp.path().join("part");
        run(&cfg, "c", &part, Existing::Refuse, sources, &Silent).unwrap();
        let first = text.lines().next().unwrap().to_string() + "\n";
        std::fs::write(part.join("results.jsonl"), &first).unwrap();
        run(&cfg, "c", &part, Existing::Resume, sources, &Silent).unwrap();
        assert_eq!(read(&part.join("results.jsonl")), text, "{kind}");
        // shards of it merge
        let dirs: Vec<PathBuf> = (0..2).map(|k| tmp.path().join(format!("s{k}"))).collect();
        for (k, d) in dirs.iter().enumerate() {
            run_shard(
                &cfg,
                "c",
                d,
                Existing::Refuse,
                sources,
                Some(Shard { index: k, count: 2 }),
                &Silent,
            )
            .unwrap();
        }
        let merged = tmp.path().join("merged");
        propdp::merge::merge(&merged, &dirs).unwrap();
        let mut a: Vec<&str> = text.lines().collect();
        let merged_text = read(&merged.join("results.jsonl"));
        let mut b: Vec<&str> = merged_text.lines().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{kind}: the merge equals the single run");
    }
}

#[test]
fn a_record_of_own_labels_with_a_ground_truth_metric_is_refused_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    write_data(&tmp.path().join("data.csv"), 1.0);
    let cfg = config(tmp.path(), &own_labels("objective")).unwrap();
    let sources = Sources {
        theory: false,
        simulation: true,
    };
    let out = tmp.path().join("o");
    run(&cfg, "c", &out, Existing::Refuse, sources, &Silent).unwrap();
    let text = read(&out.join("results.jsonl"));
    let mut v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    v["metrics"]["overlap"] = serde_json::json!(0.5);
    std::fs::write(out.join("results.jsonl"), v.to_string() + "\n").unwrap();
    let e = format!(
        "{:#}",
        run(&cfg, "c", &out, Existing::Resume, sources, &Silent).unwrap_err()
    );
    assert!(e.contains("metrics.overlap") && e.contains("own labels"), "{e}");
}

#[test]
fn extreme_magnitudes_in_data_are_refused_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    for (scale, what) in [(1e200, "1e140"), (1e-200, "underflow")] {
        let data = tmp.path().join("data.csv");
        write_data(&data, scale);
        // propdp spectrum: an error naming the data, no non-finite number
        let e = format!(
            "{:#}",
            data_spectrum::from_file(&data, Some("y"), &[], false, None).unwrap_err()
        );
        assert!(e.contains("DATA") && e.contains(what), "{scale}: {e}");
        // a run on the rows: refused naming the field
        let cfg = config(
            tmp.path(),
            &own_labels("objective").replace("labels = \"y\"", "drop = [\"y\"]"),
        )
        .unwrap();
        let e = refused_run(&cfg, tmp.path());
        assert_eq!(e.field(), Some("simulation.data.file"), "{e:#}");
    }
    // labels near 1e200 beside ordinary features: refused naming the label
    let data = tmp.path().join("data.csv");
    write_data(&data, 1.0);
    let text = read(&data);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let last = lines[5].rsplit_once(',').unwrap().0.to_string();
    lines[5] = format!("{last},3e200");
    std::fs::write(&data, lines.join("\n") + "\n").unwrap();
    let e = format!(
        "{:#}",
        data_spectrum::from_file(&data, Some("y"), &[], false, None).unwrap_err()
    );
    assert!(e.contains("label") && e.contains("row 5"), "{e}");
    let e = refused_run(&config(tmp.path(), &own_labels("objective")).unwrap(), tmp.path());
    assert_eq!(e.field(), Some("simulation.data.labels"), "{e:#}");
}

#[test]
fn a_duplicate_column_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data.csv");
    write_data(&data, 1.0);
    let text = read(&data);
    // the label column given twice: the copy must not become a feature
    let doubled: String = text
        .lines()
        .map(|l| format!("{l},{}\n", l.rsplit(',').next().unwrap()))
        .collect();
    std::fs::write(&data, doubled).unwrap();
    let e = format!(
        "{:#}",
        data_spectrum::from_file(&data, Some("y"), &[], false, None).unwrap_err()
    );
    assert!(e.contains("\"y\"") && e.contains("twice"), "{e}");
    let cfg = config(tmp.path(), &own_labels("objective")).unwrap();
    let e = refused_run(&cfg, tmp.path());
    assert_eq!(e.field(), Some("simulation.data.file"), "{e:#}");
    assert!(format!("{e:#}").contains("twice"), "{e:#}");
}

/// A FIFO nobody writes to: reading it would block forever.
#[cfg(unix)]
fn fifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo");
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_as_an_input_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let pipe = tmp.path().join("pipe.csv");
    fifo(&pipe);
    let start = Instant::now();
    // a data file
    let e = format!(
        "{:#}",
        data_spectrum::from_file(&pipe, None, &[], false, None).unwrap_err()
    );
    assert!(e.contains("not a regular file") && e.contains("FIFO"), "{e}");
    let e = format!(
        "{:#}",
        data_spectrum::from_file(Path::new("/dev/zero"), None, &[], false, None).unwrap_err()
    );
    assert!(e.contains("character device"), "{e}");
    // in a config: the data file and the covariance file
    let e = config(tmp.path(), &own_labels("objective").replace("data.csv", "pipe.csv")).unwrap_err();
    assert!(e.contains("simulation.data.file") && e.contains("FIFO"), "{e}");
    let cov = own_labels("objective").replace(
        "noise = { law = \"gaussian\", sd = 0.5 }",
        "noise = { law = \"gaussian\", sd = 0.5 }\ncovariance = { file = \"/dev/zero\" }",
    );
    let e = config(tmp.path(), &cov).unwrap_err();
    assert!(
        e.contains("problem.covariance.file") && e.contains("character device"),
        "{e}"
    );
    // the config itself
    let e = format!("{:#}", propdp::run::load(&pipe).unwrap_err());
    assert!(e.contains("FIFO"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

#[test]
fn extreme_power_law_exponents_keep_their_condition_number() {
    // exponent 1e20 once rounded κ^{1/α} − 1 to 0 (the isotropic answer)
    let at = |exponent: f64| {
        let text = format!(
            "[problem]\nmodel = \"huber\"\ndelta = 0.5\ns2 = 1.0\nhuber_m = 1.0\nnoise = {{ law = \"gaussian\", sd = 0.5 }}\n\
             covariance = {{ family = \"power_law\", exponent = {exponent:e}, condition = 100.0, atoms = 20 }}\n\
             [algorithm]\nkind = \"objective\"\nlambda = 1.0\nsigma = 1.0\n"
        );
        let cfg = Config::from_toml_str(&text).unwrap();
        let atoms = cfg.covariance.as_ref().expect("not isotropic").atoms().to_vec();
        let (hi, lo) = atoms.iter().fold((0.0f64, f64::INFINITY), |(h, l), a| {
            (h.max(a.eigenvalue), l.min(a.eigenvalue))
        });
        hi / lo
    };
    for exponent in [1e-3, 1.0, 1e16, 1e20] {
        let k = at(exponent);
        assert!((k / 100.0 - 1.0).abs() < 1e-9, "exponent {exponent:e}: condition {k}");
    }
}

#[test]
fn check_runs_the_data_checks_and_a_design_with_real_rows_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    write_data(&tmp.path().join("data.csv"), 1.0);
    // `propdp check` called this valid; `run` refused it point by point
    let cfg = config(tmp.path(), &own_labels("objective").replace("d = 6", "d = 9")).unwrap();
    let e = propdp::run::check(&cfg).unwrap_err();
    assert_eq!(e.field(), Some("simulation.d"), "{e:#}");
    assert!(propdp::run::check(&config(tmp.path(), &own_labels("objective")).unwrap()).is_ok());
    // a design beside real rows was ignored but recorded
    let e = config(
        tmp.path(),
        &own_labels("objective").replace("seed = 11", "seed = 11\ndesign = \"rademacher\""),
    )
    .unwrap_err();
    assert!(e.contains("simulation.design"), "{e}");
}

#[cfg(unix)]
#[test]
fn a_fifo_as_a_schedule_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let pipe = tmp.path().join("run.toml");
    fifo(&pipe);
    let start = Instant::now();
    let e = format!("{:#}", propdp::privacy::schedule::read(&pipe).unwrap_err());
    assert!(e.contains("schedule") && e.contains("FIFO"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

mod generated {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Items 4 and 7, generated: columns at any magnitude from 1e-300 to
        /// 1e300 (and labels likewise) give a spectrum whose every number is
        /// finite, or an error naming the data or the label — never a panic
        /// and never a non-finite number.
        #[test]
        fn data_at_any_magnitude_gives_finite_numbers_or_a_named_error(
            exponents in proptest::collection::vec(-300i32..300, 3),
            label_exponent in -300i32..300,
            seed in 0u64..1000,
        ) {
            let mut state = seed.wrapping_add(1);
            let mut uniform = || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            };
            let rows = 40;
            let mut x = nalgebra::DMatrix::zeros(rows, 3);
            let mut y = nalgebra::DVector::zeros(rows);
            for i in 0..rows {
                for j in 0..3 {
                    x[(i, j)] = uniform() * 10f64.powi(exponents[j]);
                }
                y[i] = uniform() * 10f64.powi(label_exponent);
            }
            let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
            let outcome = std::panic::catch_unwind(|| propdp::data_spectrum::spectrum(&x, &names, Some(&y), false));
            prop_assert!(outcome.is_ok(), "panicked at exponents {exponents:?}, label {label_exponent}");
            match outcome.unwrap() {
                Ok(s) => {
                    let fit = s.labels.as_ref().unwrap();
                    let mut numbers = s.eigenvalues.clone();
                    numbers.extend(&s.teacher);
                    numbers.extend([fit.s2, fit.noise_sd, fit.r2]);
                    prop_assert!(numbers.iter().all(|v| v.is_finite()), "{numbers:?}");
                    let text = s.to_csv("x.csv");
                    prop_assert!(!text.contains("inf") && !text.contains("NaN"), "{text}");
                }
                Err(e) => {
                    let e = format!("{e:#}");
                    prop_assert!(e.contains("DATA") || e.contains("--label"), "{e}");
                }
            }
        }
    }
}

/// A byte-order mark before a CSV's header (spreadsheet programs write one)
/// is read past by every reader: a covariance file, a data file and a config
/// read the same with and without it.
#[test]
fn a_byte_order_mark_is_read_past() {
    let tmp = tempfile::tempdir().unwrap();
    write_data(&tmp.path().join("data.csv"), 1.0);
    let spectrum = "eigenvalue,weight,teacher\n4.0,0.25,1.0\n1.0,0.75,1.0\n";
    for (name, text) in [
        ("plain.csv", spectrum.to_string()),
        ("bom.csv", format!("\u{feff}{spectrum}")),
    ] {
        std::fs::write(tmp.path().join(name), text).unwrap();
    }
    let with = |file: &str| {
        own_labels("objective").replace(
            "noise = { law = \"gaussian\", sd = 0.5 }",
            &format!("noise = {{ law = \"gaussian\", sd = 0.5 }}\ncovariance = {{ file = \"{file}\" }}"),
        )
    };
    let (plain, bom) = (
        config(tmp.path(), &with("plain.csv")).unwrap(),
        config(tmp.path(), &with("bom.csv")).unwrap(),
    );
    assert_eq!(plain.sweep.points(), bom.sweep.points());
    // a data file and a config
    std::fs::write(tmp.path().join("d.csv"), "\u{feff}a,b\n1,2\n3,4\n").unwrap();
    let (names, _) = propdp::data_spectrum::read_data(&tmp.path().join("d.csv")).unwrap();
    assert_eq!(names, ["a", "b"]);
    std::fs::write(tmp.path().join("bom.toml"), format!("\u{feff}{}", with("plain.csv"))).unwrap();
    assert!(propdp::run::load(&tmp.path().join("bom.toml")).is_ok());
}
