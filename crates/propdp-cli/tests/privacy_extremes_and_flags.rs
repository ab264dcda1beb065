//! The command line at its edges: privacy at extreme δ and T, flags that do
//! not apply to the command, shard counts and their spellings.

use std::process::{Command, Output};

fn propdp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_propdp"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The main ε line of a `propdp privacy` report.
fn epsilon(o: &Output) -> f64 {
    let out = stdout(o);
    let line = out
        .lines()
        .find(|l| l.contains("(ε, δ)-DP") && !l.contains("looser"))
        .unwrap_or_else(|| panic!("no ε in {out}{}", stderr(o)));
    let value = line
        .split("ε = ")
        .nth(1)
        .unwrap_or_else(|| panic!("no finite ε: {line}"));
    value.split_whitespace().next().unwrap().parse().unwrap()
}

const DPSGD: [&str; 6] = [
    "privacy",
    "--algorithm",
    "dpsgd",
    "--model",
    "logistic",
    "--sample-rate",
];

fn dpsgd(rest: &[&str]) -> Output {
    propdp(&[&DPSGD[..], rest].concat())
}

#[test]
fn a_subsampled_guarantee_is_never_worse_than_the_full_batch() {
    for (steps, delta) in [("1000", "1e-300"), ("1000000000", "1e-6"), ("100", "1e-12")] {
        let sub = dpsgd(&["0.01", "--steps", steps, "--noise", "1", "--delta-priv", delta]);
        let full = dpsgd(&["1", "--steps", steps, "--noise", "1", "--delta-priv", delta]);
        assert!(sub.status.success() && full.status.success(), "{}", stderr(&sub));
        let (e_sub, e_full) = (epsilon(&sub), epsilon(&full));
        assert!(
            e_sub.is_finite() && e_sub <= e_full,
            "T = {steps}, δ = {delta}: {e_sub} > {e_full}"
        );
    }
}

#[test]
fn a_calibrated_noise_reads_back_within_its_target() {
    for (eps, delta, q) in [
        ("1", "1e-300", "0.01"),
        ("1", "1e-6", "0.01"),
        ("0.5", "1e-10", "0.2"),
        ("5e-324", "1e-6", "0.01"),
    ] {
        let o = dpsgd(&[q, "--steps", "1000", "--epsilon", eps, "--delta-priv", delta]);
        assert!(o.status.success(), "{}", stderr(&o));
        let target: f64 = eps.parse().unwrap();
        assert!(
            epsilon(&o) <= target,
            "ε = {eps}, δ = {delta}: read back {}",
            stdout(&o)
        );
    }
    // a ρ too strict for any noise of the range is called strict, not loose
    let o = propdp(&[
        "privacy",
        "--algorithm",
        "dpgd",
        "--model",
        "logistic",
        "--steps",
        "10",
        "--rho",
        "1e-300",
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("too strict"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn flags_that_do_not_apply_are_refused_naming_them() {
    let cases: [(&[&str], &str); 6] = [
        (
            &[
                "--algorithm",
                "dpsgd",
                "--sample-rate",
                "0.1",
                "--noise",
                "1",
                "--lambda",
                "2",
            ],
            "--lambda",
        ),
        (&["--algorithm", "dpgd", "--noise", "1", "--huber-m", "2"], "--huber-m"),
        (&["--algorithm", "output", "--noise", "1", "--steps", "5"], "--steps"),
        (
            &["--algorithm", "output", "--noise", "1", "--epsilon", "1"],
            "--noise and --epsilon",
        ),
        (
            &["--algorithm", "output", "--rho", "1", "--epsilon", "1"],
            "--epsilon and --rho",
        ),
        (
            &["--algorithm", "dpgd", "--noise", "1", "--sample-rate", "0.5"],
            "--sample-rate",
        ),
    ];
    for (args, flag) in cases {
        let o = propdp(&[&["privacy", "--model", "logistic"][..], args].concat());
        assert!(
            !o.status.success() && stderr(&o).contains(flag),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // a clip far below the noise is named with it, not the noise alone
    let o = dpsgd(&["0.1", "--steps", "10", "--noise", "1", "--clip", "1e-300"]);
    assert!(!o.status.success() && stderr(&o).contains("--clip"), "{}", stderr(&o));
}

#[test]
fn shard_counts_and_spellings() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("c.toml");
    std::fs::write(
        &cfg,
        "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ns2 = 1.0\n[algorithm]\nkind = \"objective\"\nlambda = 1.0\nsigma = 1.0\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    for spec in ["0/18446744073709551615", "0/10000000000", "5/3"] {
        let o = propdp(&[
            "run",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--shard",
            spec,
        ]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{spec}: a usage error, not a crash: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("--shard"), "{}", stderr(&o));
    }
    // both spellings of the relation, as in configs
    for n in ["add_remove_one", "add-remove-one"] {
        let o = propdp(&[
            "privacy",
            "--algorithm",
            "output",
            "--model",
            "logistic",
            "--noise",
            "1",
            "--neighbouring",
            n,
        ]);
        assert!(o.status.success(), "{n}: {}", stderr(&o));
    }
}
