//! Budget configs: each point's noise calibrated to its (ε, δ) or ρ, and
//! bad budgets refused.

use propdp_core::accountant::*;
use propdp_core::problem::Target;

#[test]
fn budget_configs_calibrate_each_point_and_reject_bad_budgets() {
    use propdp_core::Config;
    let base = r#"
[problem]
model = "huber"
delta = [0.5, 2.0]
s2 = 1.0
huber_m = 2.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "objective"
lambda = [2.0, 8.0]
epsilon = [1.5, 3.0]
delta_priv = 1e-5
"#;
    let cfg = Config::from_toml_str(base).unwrap();
    assert_eq!(cfg.sweep.points().len(), 8);
    for p in cfg.sweep.points() {
        let b = p.budget().expect("budget recorded");
        let propdp_core::Algorithm::Objective { lambda, sigma } = p.algorithm() else {
            panic!()
        };
        let Target::Approx { epsilon, delta_priv } = b.target else {
            panic!("an (ε, δ) budget")
        };
        let mech = p.model().mechanism(MechanismKind::Objective { lambda }, b.neighbouring);
        let d = mech.delta(epsilon, sigma);
        assert!((d / delta_priv - 1.0).abs() < 1e-9, "{p:?}: δ = {d}");
        assert_eq!(p.params()["epsilon"], epsilon);
    }
    for (edit, needle) in [
        (base.replace("delta_priv = 1e-5", ""), "algorithm.delta_priv"),
        (
            base.replace("delta_priv = 1e-5", "delta_priv = 2.0"),
            "algorithm.delta_priv",
        ),
        (
            base.replace("delta_priv = 1e-5", "delta_priv = 1e-5\nsigma = 1.0"),
            "algorithm.sigma",
        ),
        (
            base.replace("epsilon = [1.5, 3.0]", "epsilon = [0.0, 3.0]"),
            "algorithm.epsilon",
        ),
        // below the objective-perturbation floor 2·log(1 + 1/2) ≈ 0.81 at λ = 2, extra ridge refused
        (
            base.replace("epsilon = [1.5, 3.0]", "epsilon = [0.7, 3.0]\nextra_ridge = \"refuse\""),
            "cannot go below",
        ),
    ] {
        let e = Config::from_toml_str(&edit).unwrap_err().to_string();
        assert!(e.contains(needle), "{needle}: {e}");
    }
}

#[test]
fn rho_budget_configs_calibrate_each_point() {
    use propdp_core::Config;
    let base = r#"
[problem]
model = "logistic"
delta = [0.5, 2.0]
s2 = 1.0
[algorithm]
kind = "dpgd"
lambda = 0.1
eta = 0.5
steps = [5, 20]
rho = [0.1, 1.0]
"#;
    let cfg = Config::from_toml_str(base).unwrap();
    assert_eq!(cfg.sweep.points().len(), 8);
    for p in cfg.sweep.points() {
        let b = p.budget().expect("budget recorded");
        let Target::Zcdp { rho } = b.target else {
            panic!("a zCDP budget")
        };
        let propdp_core::Algorithm::Dpgd { sigma, steps, .. } = p.algorithm() else {
            panic!()
        };
        // ρ = μ²/2 with μ = √T·2LR/σ (replace-one, L = R = 1)
        let mu = (steps as f64).sqrt() * 2.0 / sigma;
        assert!((0.5 * mu * mu / rho - 1.0).abs() < 1e-9, "{p:?}");
        assert_eq!(p.params()["rho"], rho);
        let privacy = propdp_core::record::Privacy::of(p).unwrap();
        assert_eq!((privacy.notion.as_str(), privacy.rho), ("rho-zCDP", Some(rho)));
    }
    for (edit, needle) in [
        (
            base.replace("rho = [0.1, 1.0]", "rho = [0.1, 1.0]\nsigma = 1.0"),
            "algorithm.sigma",
        ),
        (
            base.replace("rho = [0.1, 1.0]", "rho = 1.0\nepsilon = 1.0"),
            "algorithm.epsilon",
        ),
        (base.replace("rho = [0.1, 1.0]", "rho = -1.0"), "algorithm.rho"),
        (
            base.replace("kind = \"dpgd\"", "kind = \"objective\"")
                .replace("eta = 0.5\nsteps = [5, 20]\n", "")
                .replace("rho = [0.1, 1.0]", "rho = 0.5\nextra_ridge = \"refuse\""),
            "cannot go below",
        ),
    ] {
        let e = Config::from_toml_str(&edit).unwrap_err().to_string();
        assert!(e.contains(needle), "{needle}: {e}");
    }
}
