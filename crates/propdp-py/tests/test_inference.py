"""propdp.PrivateGLM (docs/inference.md): the interface statisticians use —
conf_int, contrast, bse, nuisance, privacy, summary — its coverage on seeded
data sets, its refusals and argument errors, and agreement with `propdp infer`."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import propdp

ROOT = Path(__file__).resolve().parents[3]
BINARY = ROOT / "target" / "release" / "propdp"


def logistic_data(seed, n=800, d=400, s2=4.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    theta = rng.normal(size=d) * np.sqrt(s2)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ theta)), 1.0, -1.0)
    return X, y, theta


def test_the_results_object_has_the_estimator_interface():
    X, y, _ = logistic_data(0)
    res = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0, row_norm=1.0).fit(X, y, seed=3)
    d = X.shape[1]
    ci = res.conf_int(alpha=0.05)
    assert ci.shape == (d, 2) and np.all(np.isfinite(ci)) and np.all(ci[:, 0] < ci[:, 1])
    assert res.params.shape == res.params_debiased.shape == res.bse.shape == (d,)
    np.testing.assert_allclose(res.params_debiased, res.params / res.nuisance["alpha"])
    # a 90% interval sits inside the 95% one
    ci90 = res.conf_int(alpha=0.10)
    assert np.all(ci90[:, 0] >= ci[:, 0]) and np.all(ci90[:, 1] <= ci[:, 1])
    assert res.privacy.epsilon <= 8.0 and res.privacy.epsilon_lower <= res.privacy.epsilon
    assert res.privacy.neighbouring == "replace-one"
    c = res.contrast(np.eye(d)[0])
    assert c["lower"] == pytest.approx(ci[0, 0]) and c["upper"] == pytest.approx(ci[0, 1])
    text = res.summary()
    assert "epsilon <=" in text and "projected" in text and "bias factor" in text
    # the same seed, the same release; 0/1 labels are the same as ±1
    again = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0).fit(X, (y + 1) / 2, seed=3)
    np.testing.assert_array_equal(again.params, res.params)


def test_debiased_intervals_cover_where_the_naive_ones_do_not():
    model = propdp.PrivateGLM(model="logistic", algorithm="output", lambda_=1.0, epsilon=32.0)
    hits, naive, count = 0, 0, 0
    for k in range(16):
        X, y, theta = logistic_data(100 + k)
        res = model.fit(X, y, seed=k)
        ci = res.conf_int(alpha=0.05)
        hits += np.sum((ci[:, 0] <= theta) & (theta <= ci[:, 1]))
        naive += np.sum(np.abs(res.params - theta) <= 1.96 * res.nuisance["sigma_eff"])
        count += theta.size
    assert abs(hits / count - 0.95) <= 0.015, hits / count
    assert naive / count < 0.7, naive / count


def huber_data(seed, n=800, d=400):
    """Rows N(0, I/d), θ* ~ N(0, I), labels with 0.5·Student-t(3) noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    theta = rng.normal(size=d)
    return X, X @ theta + 0.5 * rng.standard_t(3, size=n), theta


def test_huber_charges_its_residual_statistics():
    X, y, _ = huber_data(5)
    res = propdp.PrivateGLM(model="huber", lambda_=1.0, epsilon=4.0, huber_m=1.0).fit(X, y, seed=1)
    assert len(res.privacy.releases) == 3 and res.privacy.epsilon <= 4.0
    assert 0 < res.nuisance["residuals"]["inside"] <= 1


def test_huber_output_without_the_noise_law_releases_de_blurred_statistics():
    X, y, theta = huber_data(7)
    res = propdp.PrivateGLM(model="huber", algorithm="output", lambda_=1.0, epsilon=32.0).fit(X, y, seed=3)
    assert len(res.privacy.releases) == 3 and res.privacy.epsilon <= 32.0
    assert "de-blurred" in res.privacy.releases[2]
    assert 0.4 < res.nuisance["residuals"]["blur"] < 0.5  # τR/M at λ = 1, ε = 32
    ci = res.conf_int()
    assert 0.9 < np.mean((ci[:, 0] <= theta) & (theta <= ci[:, 1])) <= 1.0


def test_huber_output_is_served_given_the_noise_law():
    X, y, theta = huber_data(6)
    law = {"law": "student_t", "dof": 3, "scale": 0.5}
    res = propdp.PrivateGLM(model="huber", algorithm="output", lambda_=1.0, epsilon=16.0, noise=law).fit(X, y, seed=2)
    assert len(res.privacy.releases) == 2 and res.privacy.epsilon <= 16.0
    ci = res.conf_int()
    assert 0.9 < np.mean((ci[:, 0] <= theta) & (theta <= ci[:, 1])) <= 1.0
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(model="huber", algorithm="output", noise={"law": "cauchy"}).fit(X, y)
    assert e.value.field == "noise"
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(model="logistic", noise=law).fit(X, np.sign(y))
    assert e.value.field == "noise"


def test_refusals_and_bad_arguments_are_typed():
    X, y, _ = logistic_data(1)
    with pytest.raises(propdp.InferenceRefused) as e:
        propdp.PrivateGLM(model="logistic").fit(X[:200, :50], y[:200])  # d/n = 0.25
    assert e.value.reason == "too_few_features"
    unbalanced = np.where(np.arange(len(y)) % 5 == 0, -1.0, 1.0)  # about 80% ones
    with pytest.raises(propdp.InferenceRefused) as e:  # without an intercept
        propdp.PrivateGLM(model="logistic", epsilon=8.0, intercept=False).fit(X, unbalanced)
    assert e.value.reason == "unbalanced_labels"
    res = propdp.PrivateGLM(model="logistic", epsilon=8.0).fit(X, unbalanced, seed=0)  # logistic's default: one
    assert res.intercept is not None and res.intercept > 0
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(model="logistic", intercept="yes").fit(X, y)
    assert e.value.field == "intercept"
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(model="logistic", delta_priv=2.0).fit(X, y)
    assert e.value.field == "delta_priv"
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(model="probit").fit(X, y)
    assert e.value.field == "model"
    res = propdp.PrivateGLM(model="logistic", epsilon=4.0).fit(X, y, seed=0)
    with pytest.raises(propdp.ConfigError) as e:
        res.conf_int(alpha=2.0)
    assert e.value.field == "alpha"
    with pytest.raises(propdp.InferenceRefused) as e:  # every row shrunk to a thousandth
        propdp.PrivateGLM(model="logistic", epsilon=4.0, row_norm=1e-3).fit(X, y, seed=0)
    assert e.value.reason == "rows_projected"


def test_a_release_keeps_no_seed_and_no_exact_count():
    X, y, _ = logistic_data(5, n=600, d=200)
    seed = 123456789
    for neighbouring in ("replace_one", "add_remove_one"):
        model = propdp.PrivateGLM(model="logistic", epsilon=8.0, neighbouring=neighbouring, holdout=0.2)
        res = model.fit(X, y, seed=seed)
        assert not hasattr(res, "seed") and not hasattr(res, "projected_rows")
        for out in (json.dumps(res._report), res.summary(), repr(res)):
            assert str(seed) not in out and '"seed"' not in out
        assert 0.0 <= res.rows["shrink"] <= 1.0 and res.rows["shrink_sd"] > 0.0
        counts = {model.fit(X, y, seed=seed + k).n for k in range(4)}
        if neighbouring == "add_remove_one":  # n is private: its released value moves with the noise
            assert res.rows["fitted_sd"] > 1.0 and len(counts) > 1, counts
        else:
            assert res.rows["fitted_sd"] == 0.0


@pytest.mark.skipif(not BINARY.exists(), reason="the CLI binary is built by scripts/test_python.sh")
def test_the_command_line_writes_the_same_intervals(tmp_path):
    X, y, _ = logistic_data(2, n=600, d=300)
    data = tmp_path / "rows.npy"
    np.save(data, np.column_stack([X, y]))
    out = tmp_path / "out"
    args = ["infer", str(data), "--label", f"x{X.shape[1]}", "--model", "logistic", "--lambda", "1",
            "--epsilon", "8", "--row-norm", "1", "--seed", "7", "--out", str(out)]
    subprocess.run([str(BINARY), *args], check=True, capture_output=True)
    report = json.loads((out / "report.json").read_text())
    table = np.genfromtxt(out / "intervals.csv", delimiter=",", names=True)
    res = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0, row_norm=1.0).fit(X, y, seed=7)
    np.testing.assert_array_equal(table["theta_hat"], res.params)
    ci = res.conf_int(alpha=0.05)
    np.testing.assert_array_equal(table["lower"], ci[:, 0])
    assert report["privacy"]["epsilon"] == res.privacy.epsilon and report["level"] == 0.95


def test_held_out_rows_give_the_test_error_interval_and_the_cli_agrees(tmp_path):
    X, y, theta = logistic_data(5, n=1000)
    model = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0, holdout=0.2)
    res = model.fit(X, y, seed=11)
    t = res.test_error_int(alpha=0.05)
    assert t["metric"] == "class_error" and 150 < t["rows"] < 250 and res.n + t["rows"] == 1000
    assert 0.0 <= t["lower"] < t["estimate"] < t["upper"] <= 1.0
    assert t["upper"] - t["lower"] == pytest.approx(2 * 1.959964 * t["se"], rel=1e-6)
    assert res.privacy.epsilon <= 8.0 and any("held-out" in r for r in res.privacy.releases)
    assert "held-out rows" in res.summary()
    # without held-out rows the interval names the argument to change
    plain = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0).fit(X, y, seed=11)
    with pytest.raises(propdp.ConfigError) as e:
        plain.test_error_int()
    assert e.value.field == "holdout"
    if BINARY.exists():
        data = tmp_path / "rows.npy"
        np.save(data, np.column_stack([X, y]))
        out = tmp_path / "out"
        args = ["infer", str(data), "--label", f"x{X.shape[1]}", "--model", "logistic", "--lambda", "1",
                "--epsilon", "8", "--row-norm", "1", "--seed", "11", "--holdout", "0.2", "--out", str(out)]
        run = subprocess.run([str(BINARY), *args], check=True, capture_output=True, text=True)
        assert "held-out rows" in run.stdout
        report = json.loads((out / "report.json").read_text())
        assert report["test_error_interval"]["lower"] == t["lower"]
        assert report["test_error_interval"]["upper"] == t["upper"]


def test_a_public_covariance_whitens_the_rows(tmp_path):
    X, y, _ = logistic_data(6, n=600, d=300)
    d = X.shape[1]
    plain = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0).fit(X, y, seed=4)
    # the identity whitens nothing: the same fit and intervals up to rounding
    same = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0, covariance=np.eye(d)).fit(X, y, seed=4)
    np.testing.assert_allclose(same.params, plain.params, atol=1e-9)
    np.testing.assert_allclose(same.conf_int(), plain.conf_int(), atol=1e-9)
    assert "whitened" in same.summary() and "isotropic" in plain.summary()
    # Σ = 4I and rows 2x: whitened back to x (the row bound applies there), θ̂ = Σ^{-1/2}θ̂'
    scaled = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0, covariance=4 * np.eye(d))
    res = scaled.fit(2 * X, y, seed=4)
    np.testing.assert_allclose(res.params, plain.params / 2, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(res.conf_int(), plain.conf_int() / 2, rtol=1e-7, atol=1e-12)
    asymmetric = np.eye(d)
    asymmetric[0, 1] = 0.5
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(model="logistic", epsilon=8.0, covariance=asymmetric).fit(X, y, seed=4)
    assert e.value.field == "covariance"
    with pytest.raises(propdp.ConfigError):
        propdp.PrivateGLM(model="logistic", epsilon=8.0, covariance=np.eye(3)).fit(X, y, seed=4)
    if BINARY.exists():
        data, cov, out = tmp_path / "rows.npy", tmp_path / "sigma.npy", tmp_path / "out"
        np.save(data, np.column_stack([2 * X, y]))
        np.save(cov, 4 * np.eye(d))
        args = ["infer", str(data), "--label", f"x{d}", "--model", "logistic", "--lambda", "1", "--epsilon", "8",
                "--row-norm", "1", "--seed", "4", "--covariance", str(cov), "--out", str(out)]
        run = subprocess.run([str(BINARY), *args], check=True, capture_output=True, text=True)
        assert "whitened" in run.stdout
        table = np.genfromtxt(out / "intervals.csv", delimiter=",", names=True)
        np.testing.assert_array_equal(table["theta_hat"], res.params)
        assert json.loads((out / "report.json").read_text())["whitened"] is True


@pytest.mark.skipif(not BINARY.exists(), reason="the CLI binary is built by scripts/test_python.sh")
def test_dpsgd_releases_its_iterate_and_the_cli_agrees(tmp_path):
    X, y, theta = logistic_data(9, n=500, d=250)
    kw = dict(model="logistic", algorithm="dpsgd", lambda_=1.0, epsilon=8.0, steps=20, eta=0.5,
              sample_rate=0.5, clip=1.0)
    res = propdp.PrivateGLM(**kw).fit(X, y, seed=4)
    assert res.privacy.epsilon <= 8.0 and "DP-SGD" in res.privacy.releases[0]
    assert res.nuisance["sigma_eff_se"] > 0.0  # the state evolution's RQMC error, in the width
    ci = res.conf_int(alpha=0.05)
    assert 0.85 < np.mean((ci[:, 0] <= theta) & (theta <= ci[:, 1])) <= 1.0
    data = tmp_path / "rows.npy"
    np.save(data, np.column_stack([X, y]))
    out = tmp_path / "out"
    args = ["infer", str(data), "--label", f"x{X.shape[1]}", "--model", "logistic", "--algorithm", "dpsgd",
            "--lambda", "1", "--epsilon", "8", "--row-norm", "1", "--steps", "20", "--eta", "0.5", "--sample-rate", "0.5",
            "--clip", "1", "--seed", "4", "--out", str(out)]
    subprocess.run([str(BINARY), *args], check=True, capture_output=True)
    table = np.genfromtxt(out / "intervals.csv", delimiter=",", names=True)
    np.testing.assert_array_equal(table["lower"], ci[:, 0])
    for bad, field in [(dict(steps=None), "steps"), (dict(sample_rate=0.0), "sample_rate")]:
        with pytest.raises(propdp.ConfigError) as e:
            propdp.PrivateGLM(**{**kw, **bad}).fit(X, y)
        assert e.value.field == field
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(model="logistic", steps=20).fit(X, y)
    assert e.value.field == "steps"


def test_objective_perturbation_below_its_floor_adds_the_extra_ridge():
    # the reproducers: both refused before (floor 2·log(1 + βR²/λ) above ε, or above ε/2 with δ out of reach)
    X, y, _ = huber_data(3)
    res = propdp.PrivateGLM(model="huber", algorithm="objective", lambda_=1, epsilon=2, row_norm=1.5).fit(X, y, seed=1)
    assert res.privacy.extra_ridge > 0 and res.privacy.lambda_ == pytest.approx(1 + res.privacy.extra_ridge)
    assert res.privacy.epsilon <= 2 and "extra ridge" in res.summary()
    Xl, yl, _ = logistic_data(3)
    res = propdp.PrivateGLM(model="logistic", lambda_=0.1, epsilon=4, row_norm=1.5).fit(Xl, yl, seed=1)
    assert res.privacy.extra_ridge > 0 and res.privacy.epsilon <= 4
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(model="huber", lambda_=1, epsilon=2, row_norm=1.5, extra_ridge="refuse").fit(X, y, seed=1)
    assert e.value.field == "epsilon"


def test_a_small_d_gets_the_classical_interval():
    X, y, _ = logistic_data(2, n=2000, d=20)
    res = propdp.PrivateGLM(model="logistic", lambda_=200.0, epsilon=8.0, standardize=True).fit(X, y, seed=1)
    assert res.method == "classical" and res.nuisance == {}
    assert res.conf_int().shape == (20, 2) and res.privacy.epsilon <= 8.0
    b = res.intercept_int()
    assert b is not None and b["lower"] < b["upper"]
    assert res.standardization is not None and len(res.standardization["scale"]) == 20
    assert "method: classical" in res.summary()
    with pytest.raises(propdp.InferenceRefused) as e:  # the released Hessian within its noise at lambda = 1
        propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0).fit(X, y, seed=1)
    assert e.value.reason == "noisy_hessian"
