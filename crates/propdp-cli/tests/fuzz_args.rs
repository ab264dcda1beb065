//! Property-based fuzzing of `propdp privacy` argument lines (fixed seed):
//! generated from every option with valid, extreme, non-numeric and missing
//! values. The command either exits 0 printing only finite numbers (ε ≥ 0,
//! μ > 0, ρ > 0, noise > 0) or exits non-zero — never a panic (101) — with a
//! message naming an argument.

use std::process::Command;

use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

/// A value for a numeric option: ordinary, extreme, special or not a number.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (-3.0f64..3.0).prop_map(|k| format!("{}", 10f64.powf(k))),
        3 => (-330i32..330).prop_map(|k| format!("1e{k}")),
        2 => prop::sample::select(vec!["0", "-1", "-0", "NaN", "inf", "-inf", "1e400", "abc", "", "1,5", "0x10"])
            .prop_map(str::to_string),
    ]
}

/// One option and its value (or the option alone).
fn option() -> impl Strategy<Value = Vec<String>> {
    let numeric = prop::sample::select(vec![
        "--huber-m",
        "--lambda",
        "--noise",
        "--epsilon",
        "--delta-priv",
        "--rho",
    ]);
    let word = |name: &'static str, values: Vec<&'static str>| {
        prop::sample::select(values).prop_map(move |v| vec![name.to_string(), v.to_string()])
    };
    prop_oneof![
        4 => (numeric, number()).prop_map(|(o, v)| vec![o.to_string(), v]),
        1 => word("--steps", vec!["1", "10", "1000", "0", "-1", "1000000000", "1000000001", "18446744073709551616", "x"]),
        1 => word("--neighbouring", vec!["replace-one", "add-remove-one", "both", ""]),
        1 => word("--model", vec!["huber", "logistic", "ridge"]),
        1 => word("--algorithm", vec!["objective", "output", "dpgd", "dpsgd"]),
    ]
}

#[test]
fn generated_privacy_argument_lines_print_finite_guarantees_or_name_the_argument() {
    let config = ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let base = (
        prop::sample::select(vec!["objective", "output", "dpgd"]),
        prop::sample::select(vec!["huber", "logistic"]),
        prop::collection::vec(option(), 0..5),
    );
    let result = runner.run(&base, |(algorithm, model, options)| {
        let mut args = vec![
            "privacy".to_string(),
            "--algorithm".into(),
            algorithm.into(),
            "--model".into(),
            model.into(),
        ];
        args.extend(options.into_iter().flatten());
        let out = Command::new(env!("CARGO_BIN_EXE_propdp")).args(&args).output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let line = args.join(" ");
        prop_assert_ne!(out.status.code(), Some(101), "panic on `{}`: {}", line, stderr);
        if out.status.success() {
            for word in ["NaN", "inf", "-0.0"] {
                prop_assert!(!stdout.contains(word), "`{line}` printed {word}: {stdout}");
            }
            // every `name = value` number printed is finite and non-negative
            for value in stdout.split(" = ").skip(1) {
                let token = value.split([' ', ',', '\n', ')']).next().unwrap_or("");
                if let Ok(x) = token.parse::<f64>() {
                    prop_assert!(x.is_finite() && x >= 0.0, "`{line}` printed {token}: {stdout}");
                }
            }
            prop_assert!(
                stdout.contains("ε = ") || stdout.contains("no finite ε"),
                "`{line}`: {stdout}"
            );
        } else {
            prop_assert!(
                stderr.contains("--"),
                "`{line}` failed without naming an argument: {stderr}"
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
