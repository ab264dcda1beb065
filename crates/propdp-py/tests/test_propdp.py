"""The Python package against the command line (same records, field by
field), its errors, Ctrl-C, the GIL, progress, and the Dask runner."""

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import propdp

ROOT = Path(__file__).resolve().parents[3]

HUBER = """
[problem]
model = "huber"
delta = [0.5, 2.0]
s2 = 1.0
huber_m = 1.0
noise = { law = "student_t", dof = 4.0, scale = 0.5 }
[algorithm]
kind = "objective"
lambda = 1.0
sigma = [0.0, 1.0]
[simulation]
d = 60
reps = 4
seed = 5
"""

DPGD = """
[problem]
model = "logistic"
delta = 2.0
s2 = 1.0
[algorithm]
kind = "dpgd"
lambda = 0.1
sigma = 1.0
eta = 1.0
steps = 8
[solver]
dmft_points = 1024
dmft_scrambles = 2
[simulation]
d = 80
reps = 3
seed = 2
"""


def cli_records(cli, text, tmp_path):
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(text)
    subprocess.run([str(cli), "run", str(cfg), "--out", str(tmp_path / "cli")], check=True,
                   capture_output=True)
    return [json.loads(l) for l in (tmp_path / "cli" / "results.jsonl").read_text().splitlines()]


def same(a, b, where=""):
    """Field by field: numbers to 1e-12 relative (or absolute below 1), the rest exactly."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), f"{where}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), f"{where}: {a} vs {b}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def test_version_is_the_crate_version():
    cargo = (ROOT / "Cargo.toml").read_text()
    version = cargo.split("[workspace.package]")[1].split('version = "')[1].split('"')[0]
    assert propdp.__version__ == version


@pytest.mark.parametrize("text", [HUBER, DPGD], ids=["huber_student_t", "dpgd"])
def test_sweep_records_equal_the_cli_records(cli, tmp_path, text):
    expected = cli_records(cli, text, tmp_path)
    (tmp_path / "py.toml").write_text(text)
    df = propdp.sweep(tmp_path / "py.toml", out=tmp_path / "py", progress=False)
    got = [json.loads(l) for l in (tmp_path / "py" / "results.jsonl").read_text().splitlines()]
    same(expected, got)
    # the native reader sweep uses gives exactly json.loads' dicts
    assert propdp._native.records(tmp_path / "py" / "results.jsonl") == got
    # and the DataFrame holds the same numbers: one row per record
    assert len(df) == len(expected)
    for row, r in zip(df.to_dict("records"), expected):
        for m, v in r["metrics"].items():
            assert math.isclose(row[m], v, rel_tol=1e-12, abs_tol=1e-12)
        for p, v in r["params"].items():
            assert row[p] == v
    assert df.attrs["provenance"][0]["crate_version"] == propdp.__version__


def test_solve_and_simulate_give_the_cli_record_of_a_one_point_config(cli, tmp_path):
    text = HUBER.replace("delta = [0.5, 2.0]", "delta = 2.0").replace("sigma = [0.0, 1.0]", "sigma = 1.0")
    theory, sim = cli_records(cli, text, tmp_path)
    params = dict(delta=2.0, s2=1.0, huber_m=1.0, noise={"law": "student_t", "dof": 4.0, "scale": 0.5},
                  lambda_=1.0, sigma=1.0)
    r = propdp.solve("huber", "objective", **params)
    s = propdp.simulate("huber", "objective", d=60, reps=4, seed=5, progress=False, **params)
    for got, want in [(r.record, theory), (s.record, sim)]:
        got, want = dict(got), dict(want)
        # provenance hashes the config text, which differs (keywords vs file)
        assert got.pop("provenance")["git_commit"] == want.pop("provenance")["git_commit"]
        same(want, got)
    assert s.per_rep["est_err2"].shape == (4,) and s.d == 60 and s.n == 30


INTERCEPT = """
[problem]
model = "logistic"
delta = 0.5
s2 = 4.0
intercept = 2.3
[algorithm]
kind = "dpsgd"
lambda = 0.1
sigma = 1.0
eta = 1.0
steps = 20
sample_rate = 0.3
clip = 0.5
fit_intercept = true
[simulation]
d = 100
reps = 4
seed = 3
"""


CORRELATED = """
[problem]
model = "huber"
delta = 0.5
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "dpsgd"
lambda = 0.01
sigma = 0.5
eta = 0.1
steps = 120
sample_rate = 0.5
clip = 1.0
groups = 2
strategy = { coefficients = [0.5863, 0.5036, 0.4685, 0.4279] }
[simulation]
d = 100
reps = 4
seed = 3
"""


def test_groups_and_a_strategy_by_keyword_give_the_cli_record(cli, tmp_path):
    theory, sim = cli_records(cli, CORRELATED, tmp_path)
    params = dict(delta=0.5, s2=1.0, huber_m=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=0.01, sigma=0.5,
                  eta=0.1, steps=120, sample_rate=0.5, clip=1.0, groups=2,
                  strategy={"coefficients": [0.5863, 0.5036, 0.4685, 0.4279]})
    r = propdp.solve("huber", "dpsgd", **params)
    s = propdp.simulate("huber", "dpsgd", d=100, reps=4, seed=3, progress=False, **params)
    for got, want in [(r.record, theory), (s.record, sim)]:
        got, want = dict(got), dict(want)
        assert got.pop("provenance")["git_commit"] == want.pop("provenance")["git_commit"]
        same(want, got)
    assert r.record["params"]["groups"] == 2
    # a budget has no certified ε for 4 bands in 2 groups: refused, naming the field
    with pytest.raises(propdp.ConfigError) as e:
        budget = {k: v for k, v in params.items() if k != "sigma"}
        propdp.solve("huber", "dpsgd", epsilon=4.0, delta_priv=1e-5, **budget)
    assert "algorithm.strategy" in str(e.value) and "no certified ε" in str(e.value)


def test_an_intercept_by_keyword_gives_the_cli_record(cli, tmp_path):
    theory, sim = cli_records(cli, INTERCEPT, tmp_path)
    params = dict(delta=0.5, s2=4.0, intercept=2.3, lambda_=0.1, sigma=1.0, eta=1.0, steps=20,
                  sample_rate=0.3, clip=0.5, fit_intercept=True)
    r = propdp.solve("logistic", "dpsgd", **params)
    s = propdp.simulate("logistic", "dpsgd", d=100, reps=4, seed=3, progress=False, **params)
    for got, want in [(r.record, theory), (s.record, sim)]:
        got, want = dict(got), dict(want)
        assert got.pop("provenance")["git_commit"] == want.pop("provenance")["git_commit"]
        same(want, got)
    assert "fitted_intercept" in r.metrics
    # unbalanced classes (b* = 2.3): learning the intercept lowers the error
    without = propdp.solve("logistic", "dpsgd", **{**params, "fit_intercept": False})
    assert r.metrics["test_class_err"] < without.metrics["test_class_err"]


def test_dpgd_per_step_arrays_and_long_format():
    r = propdp.solve("logistic", "dpgd", delta=2.0, s2=1.0, lambda_=0.1, sigma=1.0, eta=1.0, steps=8,
                     solver={"dmft_points": 1024, "dmft_scrambles": 2})
    assert isinstance(r.per_step["est_err2"], np.ndarray) and r.per_step["est_err2"].shape == (9,)
    assert r.per_step["est_err2"][-1] == r["est_err2"]
    df = propdp.sweep(DPGD, per_step=True, theory=True, simulation=False, progress=False)
    assert list(df["step"]) == list(range(9))
    assert np.allclose(df["est_err2"], r.per_step["est_err2"], rtol=1e-12)


def test_kappa_is_delta():
    a = propdp.solve("logistic", "objective", kappa=0.5, s2=1.0, lambda_=1.0, sigma=0.5)
    b = propdp.solve("logistic", "objective", delta=0.5, s2=1.0, lambda_=1.0, sigma=0.5)
    assert a.params == b.params and a.metrics == b.metrics


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: propdp.solve("logistic", "objective", delta=0.5, s2=1.0, lambda_=1.0, sigma=-1.0), "algorithm.sigma"),
        (lambda: propdp.solve("logistic", "objective", delta=0.5, s2=0.0, lambda_=1.0, sigma=1.0), "problem.s2"),
        (lambda: propdp.solve("logistic", "objective", delta=0.5, s2=1.0, lambda_=1.0, sigma=1.0, huber_m=1.0),
         "problem.huber_m"),
        (lambda: propdp.solve("logistic", "objective", delta=0.5, s2=1.0, lambda_=1.0, sigmaa=1.0), "sigmaa"),
        (lambda: propdp.solve("logistic", "objective", delta=[0.5, 1.0], s2=1.0, lambda_=1.0, sigma=1.0), "delta"),
        (lambda: propdp.solve("ridge", "objective", delta=0.5, s2=1.0, lambda_=1.0, sigma=1.0), "problem.model"),
        (lambda: propdp.simulate("logistic", "objective", d=0, reps=2, delta=0.5, s2=1.0, lambda_=1.0, sigma=1.0),
         "simulation.d"),
        (lambda: propdp.sweep({"problem": {"model": "logistic", "delta": 0.5, "s2": 1.0},
                               "algorithm": {"kind": "output", "lambda": 1.0, "tau": float("nan")}}), "algorithm.tau"),
        (lambda: propdp.privacy("output", lambda_=0.0, noise=1.0), "lambda_"),
        (lambda: propdp.privacy("dpgd", noise=1.0, delta_priv=2.0), "delta_priv"),
        (lambda: propdp.privacy("dpgd", noise=1.0, steps=0), "steps"),
        (lambda: propdp.privacy("objective", "huber", huber_m=-1.0, noise=1.0), "huber_m"),
        (lambda: propdp.privacy("output", neighbouring="both", noise=1.0), "neighbouring"),
        (lambda: propdp.calibrate("output", epsilon=float("inf")), "epsilon"),
        (lambda: propdp.privacy("dpsgd", noise=1.0, steps=10, sample_rate=1.5), "sample_rate"),
        (lambda: propdp.privacy("dpsgd", noise=1.0, steps=10), "sample_rate"),
        (lambda: propdp.privacy("dpgd", noise=1.0, steps=10, clip=1.0), "clip"),
        (lambda: propdp.privacy("dpsgd", noise=1.0, steps=10, sample_rate=0.1, clip=0.0), "clip"),
        (lambda: propdp.privacy("dpsgd", "least_squares", noise=1.0, steps=10, sample_rate=0.1), "model"),
        (lambda: propdp.solve("logistic", "dpsgd", delta=1.0, s2=1.0, lambda_=0.5, sigma=1.0, eta=1.0, steps=5,
                              sample_rate=0.0), "algorithm.sample_rate"),
        (lambda: propdp.solve("logistic", "dpgd", delta=1.0, s2=1.0, lambda_=0.5, sigma=1.0, eta=1.0, steps=5,
                              clip=1.0), "algorithm.clip"),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_field(call, field):
    with pytest.raises(ValueError) as e:
        call()
    assert isinstance(e.value, propdp.ConfigError)
    assert e.value.field == field, str(e.value)
    assert field.split(".")[-1].rstrip("_") in str(e.value)


def test_a_point_without_solution_raises_propdp_error():
    # unregularised logistic MLE beyond the Candès–Sur threshold: no solution
    with pytest.raises(propdp.PropdpError) as e:
        propdp.solve("logistic", "objective", delta=0.9, s2=25.0, lambda_=0.0, sigma=0.0)
    assert "delta" in str(e.value) or "δ" in str(e.value)


def test_calibration_round_trips_and_matches_the_gaussian_mechanism():
    c = propdp.calibrate("dpgd", steps=100, epsilon=1.0, delta_priv=1e-6)
    back = propdp.privacy("dpgd", steps=100, noise=c.noise, delta_priv=1e-6)
    assert math.isclose(back.epsilon, 1.0, rel_tol=1e-9)
    # replace-one, logistic (L = 1): μ = √T·2L/σ
    assert math.isclose(back.mu, math.sqrt(100) * 2 / c.noise, rel_tol=1e-12)
    assert math.isclose(back.rho, back.mu ** 2 / 2, rel_tol=1e-12)
    assert "ε = 1.000000" in str(back)


def test_dpsgd_privacy_equals_the_cli_json(cli):
    args = dict(noise=0.6, sample_rate=0.004, steps=10000, delta_priv=1e-5, neighbouring="add_remove_one")
    r = propdp.privacy("dpsgd", **args)
    out = subprocess.run(
        [cli, "privacy", "--algorithm", "dpsgd", "--model", "logistic", "--noise", "0.6", "--sample-rate", "0.004",
         "--steps", "10000", "--delta-priv", "1e-5", "--neighbouring", "add-remove-one", "--json"],
        capture_output=True, text=True, check=True,
    )
    want = json.loads(out.stdout)
    assert r.epsilon == want["epsilon"] and r.rdp_epsilon == want["rdp_epsilon"] and r.rho == want["rho"]
    assert (r.sample_rate, r.steps, r.clip, r.mu) == (0.004, 10000, None, None)
    # the PLD ε is tighter than the RDP's, both near dp-accounting's 8.494 (fine grid)
    assert 8.494 < r.epsilon < 8.50 < r.rdp_epsilon
    # the certified bracket: its lower end below dp-accounting's pessimistic 8.49431, at most 0.1% wide,
    # overlapping prv_accountant's [8.49323, 8.49534]
    assert r.epsilon_lower == want["epsilon_lower"] and r.bracket_reached
    # (dp-accounting's ε bounds the true one from above, as the bracket's upper end does: that end may sit
    # below it, by at most 0.01%)
    assert r.epsilon_lower <= 8.49431 <= r.epsilon * (1 + 1e-4) and r.epsilon - r.epsilon_lower <= 1e-3 * r.epsilon
    assert r.epsilon_lower <= 8.49534 and 8.49323 <= r.epsilon
    # calibration round-trips (replace-one, clipped)
    c = propdp.calibrate("dpsgd", epsilon=1.0, delta_priv=1e-5, sample_rate=0.01, steps=1000, clip=1.0)
    # (the search runs on the certified ε itself: at most the target, and within 0.1% of it)
    assert c.calibrated_to == "epsilon" and 0.999 <= c.epsilon <= 1.0 and c.epsilon_lower <= c.epsilon


def test_one_neighbouring_default_named_in_every_result(cli):
    """#44 item 7: privacy() and accounting.epsilon() gave 6.164 and 2.584 for one run."""
    from propdp import accounting

    run = dict(noise=1.0, sample_rate=0.01, steps=2000, delta_priv=1e-5)
    report = propdp.privacy("dpsgd", **run)
    bracket = accounting.epsilon(accounting.dpsgd_event(1.0, 0.01, 2000), 1e-5)
    acc = accounting.Accountant()
    for _ in range(2000):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    out = subprocess.run(
        [cli, "privacy", "--algorithm", "dpsgd", "--model", "logistic", "--noise", "1.0", "--sample-rate", "0.01",
         "--steps", "2000", "--delta-priv", "1e-5", "--json"],
        capture_output=True, text=True, check=True,
    )
    want = json.loads(out.stdout)
    assert report.epsilon == bracket.epsilon == acc.get_epsilon(1e-5) == want["epsilon"]
    assert bracket.neighbouring == "replace-one" and "replace-one" in repr(bracket)
    assert "replace-one" in str(report)
    other = accounting.epsilon(accounting.dpsgd_event(1.0, 0.01, 2000), 1e-5, neighbouring="add_remove_one")
    assert other.epsilon < bracket.epsilon and "add/remove-one" in repr(other)


def test_dpsgd_solve_at_q_1_is_dpgd():
    common = dict(delta=1.0, s2=1.0, lambda_=0.5, sigma=1.0, eta=0.5, steps=6, solver={"dmft_points": 2048})
    a = propdp.solve("logistic", "dpsgd", sample_rate=1.0, **common)
    b = propdp.solve("logistic", "dpgd", **common)
    assert a.algorithm == "dpsgd" and a.params["sample_rate"] == 1.0
    for m in ("est_err2", "overlap", "norm2"):
        assert np.array_equal(a.per_step[m], b.per_step[m])


def long_sweep():
    return {
        "problem": {"model": "logistic", "delta": {"from": 0.2, "to": 2.0, "steps": 80}, "s2": 1.0},
        "algorithm": {"kind": "objective", "lambda": 1.0, "sigma": 1.0},
        "simulation": {"d": 1000, "reps": 4, "seed": 1},
    }


def test_ctrl_c_stops_a_long_sweep_keeping_its_records_and_resume_finishes(tmp_path):
    out = tmp_path / "run"
    # the whole sweep takes ~8 s on 2 cores (measured 1.0 s at 40 points and d = 500: too
    # close to the 1 s timer); Ctrl-C after 1 s
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            propdp.sweep(long_sweep(), out=out, progress=False)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 5
    kept = (out / "results.jsonl").read_text().splitlines()
    assert 0 < len(kept) < 160
    df = propdp.sweep(long_sweep(), out=out, resume=True, progress=False)
    assert len(df) == 160 and df[["source", "index"]].drop_duplicates().shape[0] == 160


def test_the_gil_is_released_during_a_long_call():
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.05)
    before = len(ticks)
    start = time.monotonic()
    propdp.solve("logistic", "dpgd", delta=2.0, s2=1.0, lambda_=0.1, sigma=1.0, eta=1.0, steps=30,
                 solver={"dmft_points": 65536, "dmft_scrambles": 4})
    elapsed = time.monotonic() - start
    stop.set()
    t.join()
    during = len(ticks) - before
    assert elapsed > 0.2, f"the solve took {elapsed:.3f} s: too short to tell"
    # a thread holding the GIL for the whole solve would leave ~0 ticks
    assert during > 0.3 * elapsed / 0.001 * 0.5, f"{during} ticks in {elapsed:.2f} s"


def test_progress_reaches_the_callback(tmp_path):
    events = []
    propdp.sweep({
        "problem": {"model": "huber", "delta": [0.5, 1.0], "s2": 1.0, "huber_m": 1.0,
                    "noise": {"law": "gaussian", "sd": 0.5}},
        "algorithm": {"kind": "objective", "lambda": 1.0, "sigma": 1.0},
        "simulation": {"d": 40, "reps": 3},
    }, progress=lambda e, text, n: events.append((e, text, n)))
    assert ("begin", "theory", 2) in events and ("begin", "simulation repetitions", 6) in events
    assert sum(n for e, _, n in events if e == "advance") == 2 + 6


def test_read_results_reads_a_cli_run(cli, tmp_path):
    expected = cli_records(cli, HUBER, tmp_path)
    df = propdp.read_results(tmp_path / "cli")
    assert len(df) == len(expected) and set(df["source"]) == {"theory", "simulation"}
    sim = df[df["source"] == "simulation"]
    assert (sim["d"] == 60).all() and "est_err2_stderr" in sim



def test_figures_take_a_layout_and_name_a_key_that_names_nothing(cli, tmp_path):
    cli_records(cli, HUBER, tmp_path)
    files = propdp.figures(tmp_path / "cli", tmp_path / "fig", x="sigma", series="delta",
                           metrics=["est_err2"])
    assert sorted(f.name for f in files) == ["huber_objective.png", "huber_objective.svg"]
    svg = (tmp_path / "fig" / "huber_objective.svg").read_text()
    assert "δ = 0.5\n" in svg and "δ = 2\n" in svg
    with pytest.raises(ValueError, match="x = \"nope\"") as e:
        propdp.figures(tmp_path / "cli", tmp_path / "fig2", x="nope")
    assert e.value.field == "x"


TUNE = """
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
"""


def test_check_takes_a_tune_config_and_gives_its_estimate(cli, tmp_path):
    text = propdp.check(TUNE)
    path = tmp_path / "tune.toml"
    path.write_text(TUNE)
    out = subprocess.run([cli, "check", str(path)], capture_output=True, text=True, check=True).stdout
    # the CLI's lines after its first (which names the file)
    assert "a valid tune config" in text and text.splitlines()[1:] == out.splitlines()[1:]
    assert "cells" in text and "estimate" in text
    with pytest.raises(propdp.ConfigError) as e:
        propdp.check(TUNE.replace("delta_priv = 1e-6", "delta_priv = 2.0"))
    assert e.value.field == "tune.delta_priv"


def test_tune_gives_one_row_per_cell_equal_to_the_cli_file(cli, tmp_path):
    cfg = tmp_path / "t.toml"
    cfg.write_text(TUNE)
    subprocess.run([str(cli), "tune", str(cfg), "--out", str(tmp_path / "cli")], check=True, capture_output=True)
    df = propdp.tune(cfg, out=tmp_path / "py", progress=False)
    assert len(df) == 4  # 2 budgets × 2 algorithms
    cli_lines = [json.loads(l) for l in (tmp_path / "cli" / "tune.jsonl").read_text().splitlines()]
    py_lines = [json.loads(l) for l in (tmp_path / "py" / "tune.jsonl").read_text().splitlines()]
    same(cli_lines, py_lines)
    # more privacy (smaller ε) never lowers the tuned error
    for alg, g in df.groupby("algorithm"):
        err = g.sort_values("epsilon")["value"]
        assert err.is_monotonic_decreasing, (alg, list(err))


SHARDED = {
    "problem": {"model": "huber", "delta": {"from": 0.3, "to": 2.0, "steps": 10}, "s2": 1.0, "huber_m": 1.0,
                "noise": {"law": "gaussian", "sd": 0.5}},
    "algorithm": {"kind": "objective", "lambda": 1.0, "sigma": [0.0, 1.0]},
    "simulation": {"d": [30, 60], "reps": 3, "seed": 5},
}


def test_a_sweep_through_any_executor_equals_the_single_process_sweep(tmp_path):
    """executor=: a ProcessPoolExecutor (submit → futures) and a map-only
    pool give the single run's results.jsonl byte for byte; simulate's
    repetitions fan out to the same record."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import propdp.distributed

    single = propdp.sweep(SHARDED, tmp_path / "single", progress=False)
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as forks:
        with pytest.raises(propdp.ConfigError, match="spawn") as e:
            propdp.sweep(SHARDED, executor=forks)
        assert e.value.field == "executor"
    with ProcessPoolExecutor(2, mp_context=spawn) as pool:
        df = propdp.sweep(SHARDED, tmp_path / "pool", executor=pool)
        point = dict(delta=0.5, s2=1.0, huber_m=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=1.0, sigma=1.0)
        fanned = propdp.simulate("huber", "objective", d=40, reps=6, seed=3, executor=pool, **point)
    assert len(df.attrs["shards"]) == 2
    pd.testing.assert_frame_equal(df, single)
    assert (tmp_path / "pool" / "merged" / "results.jsonl").read_bytes() == \
        (tmp_path / "single" / "results.jsonl").read_bytes()
    alone = propdp.simulate("huber", "objective", d=40, reps=6, seed=3, progress=False, **point)
    assert json.dumps(fanned.record, sort_keys=True) == json.dumps(alone.record, sort_keys=True)

    class MapOnly:
        """A pool with map only, as multiprocessing's and Ray's."""

        def __init__(self, pool):
            self.pool = pool

        def map(self, fn, items):
            return self.pool.map(fn, items)

    with spawn.Pool(2) as pool:
        by_map = propdp.distributed.sweep(SHARDED, executor=MapOnly(pool), shards=3, out=tmp_path / "map")
    pd.testing.assert_frame_equal(by_map, single)
    with pytest.raises(propdp.ConfigError) as e:
        propdp.sweep(SHARDED, executor=object())
    assert e.value.field == "executor"


def test_dask_sweep_on_a_local_cluster_equals_the_single_process_sweep(tmp_path):
    """Three shards on a 2-worker LocalCluster (separate processes), merged:
    the same DataFrame as one in-process sweep, and the merged file equal to
    a single run's byte for byte; the same for a tune search. Needs the
    `distributed` extra (dask[distributed]); skipped, saying so, without it."""
    pytest.importorskip("dask.distributed", reason="needs the distributed extra: pip install 'propdp[distributed]'")
    from dask.distributed import Client, LocalCluster

    import propdp.distributed

    cfg = {
        "problem": {"model": "huber", "delta": {"from": 0.3, "to": 2.0, "steps": 10}, "s2": 1.0, "huber_m": 1.0,
                    "noise": {"law": "gaussian", "sd": 0.5}},
        "algorithm": {"kind": "objective", "lambda": 1.0, "sigma": [0.0, 1.0]},
        "simulation": {"d": [30, 60], "reps": 3, "seed": 5},
    }
    search = {
        "problem": {"model": "huber", "delta": [0.5, 1.0], "s2": 1.0, "huber_m": 1.0,
                    "noise": {"law": "gaussian", "sd": 0.5}},
        "tune": {"algorithms": ["objective", "output", "dpgd"], "epsilon": [1.0, 4.0], "delta_priv": 1e-6,
                 "steps": [1, 2, 4]},
        "solver": {"dmft_points": 256, "dmft_scrambles": 2},
    }
    single = propdp.sweep(cfg, tmp_path / "single", progress=False)
    single_tune = propdp.tune(search, tmp_path / "single_tune", progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        df = propdp.distributed.sweep(cfg, client, shards=3, out=tmp_path / "dask")
        tuned = propdp.distributed.tune(search, client, shards=3, out=tmp_path / "dask_tune")
    assert len(tuned) == len(single_tune) == 12
    pd.testing.assert_frame_equal(tuned, single_tune)
    assert (tmp_path / "dask_tune" / "merged" / "tune.jsonl").read_bytes() == \
        (tmp_path / "single_tune" / "tune.jsonl").read_bytes()
    assert len(df.attrs["shards"]) == 3
    assert sum(s["written"] for s in df.attrs["shards"]) == len(single) == 20 + 40
    pd.testing.assert_frame_equal(df, single)
    assert (tmp_path / "dask" / "merged" / "results.jsonl").read_bytes() == \
        (tmp_path / "single" / "results.jsonl").read_bytes()


# --- issue "Hardening, round two": Python arguments, by item ---------------


@pytest.mark.parametrize(
    "steps",
    [0.29 / 0.01, 5.5, 29.0, True, "5", 2**64, -3],
)
def test_privacy_steps_must_be_an_integer_never_rounded(steps):
    for call in (
        lambda: propdp.privacy("dpsgd", noise=0.8, sample_rate=0.01, steps=steps),
        lambda: propdp.calibrate("dpsgd", epsilon=1.0, sample_rate=0.01, steps=steps),
    ):
        with pytest.raises(propdp.ConfigError) as e:
            call()
        assert e.value.field == "steps", str(e.value)


def test_integer_steps_of_any_integer_type_are_accepted():
    np = pytest.importorskip("numpy")
    a = propdp.privacy("dpsgd", noise=0.8, sample_rate=0.01, steps=29)
    b = propdp.privacy("dpsgd", noise=0.8, sample_rate=0.01, steps=np.int64(29))
    assert a.epsilon == b.epsilon and a.steps == 29


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(sigma="abc"), "algorithm.sigma"),
        (dict(sigma=True), "algorithm.sigma"),
        (dict(delta=True), "problem.delta"),
        (dict(s2="1"), "problem.s2"),
        (dict(noise="gaussian"), "problem.noise"),
    ],
)
def test_solve_names_the_argument_of_a_wrong_type(kwargs, field):
    args = dict(delta=0.5, s2=1.0, noise={"law": "gaussian", "sd": 0.5}, huber_m=1.0, lambda_=1.0, sigma=1.0)
    args.update(kwargs)
    with pytest.raises(propdp.ConfigError) as e:
        propdp.solve("huber", "objective", **args)
    assert e.value.field == field, str(e.value)


def test_dpsgd_steps_and_clip_of_a_wrong_type_are_named():
    base = dict(delta=1.0, s2=1.0, lambda_=0.5, sigma=1.0, eta=0.5, steps=5, sample_rate=0.5, clip=1.0)
    for key, bad in [("steps", "5"), ("clip", True)]:
        with pytest.raises(propdp.ConfigError) as e:
            propdp.solve("logistic", "dpsgd", **dict(base, **{key: bad}))
        assert e.value.field == f"algorithm.{key}", str(e.value)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(noise="abc"), "noise"),
        (dict(noise=10**400), "noise"),
        (dict(noise=1.0, steps=2**64), "steps"),
        (dict(noise=1.0, epsilon=1.0), "noise"),
        (dict(noise=1.0, lambda_=2.0), "lambda_"),
        (dict(noise=1.0, huber_m=2.0), "huber_m"),
        (dict(noise=float("nan")), "noise"),
    ],
)
def test_privacy_names_the_argument(kwargs, field):
    with pytest.raises(propdp.ConfigError) as e:
        propdp.privacy("dpgd", "logistic", **kwargs)
    assert e.value.field == field, str(e.value)


def test_privacy_takes_none_as_the_default():
    assert propdp.privacy("dpgd", noise=1.0, delta_priv=None).delta_priv == 1e-6


def _results_file(tmp_path, lines):
    run = propdp.sweep(
        {"problem": {"model": "logistic", "delta": [0.5, 1.0], "s2": 1.0},
         "algorithm": {"kind": "objective", "lambda": 1.0, "sigma": 1.0}},
        tmp_path / "run", progress=False)
    assert len(run) == 2
    path = tmp_path / "run" / "results.jsonl"
    original = path.read_text().splitlines()
    path.write_text(lines(original))
    return path


def test_read_results_skips_a_torn_last_line_with_a_warning(tmp_path):
    path = _results_file(tmp_path, lambda ls: ls[0] + "\n" + ls[1][: len(ls[1]) // 2])
    with pytest.warns(UserWarning, match="torn last line"):
        df = propdp.read_results(path)
    assert len(df) == 1


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda ls: "\n".join([ls[0], ls[0], ls[1]]) + "\n", "twice"),
        (lambda ls: "\n".join([ls[0].replace('"est_err2":', '"est_err2":NaN,"x":'), ls[1]]) + "\n", ":1"),
        (lambda ls: "\n".join(["{}", ls[1]]) + "\n", ":1"),
    ],
)
def test_read_results_refuses_damaged_files_naming_the_line(tmp_path, damage, words):
    path = _results_file(tmp_path, damage)
    with pytest.raises(propdp.PropdpError) as e:
        propdp.read_results(path)
    assert "results.jsonl" in str(e.value) and words in str(e.value), str(e.value)


def test_python_refusals_speak_python(tmp_path):
    cfg = {"problem": {"model": "logistic", "delta": 0.5, "s2": 1.0},
           "algorithm": {"kind": "objective", "lambda": 1.0, "sigma": 1.0}}
    propdp.sweep(cfg, tmp_path / "r", progress=False)
    with pytest.raises(propdp.PropdpError) as e:
        propdp.sweep(cfg, tmp_path / "r", progress=False)
    assert "resume=True" in str(e.value) and "--resume" not in str(e.value)
    with pytest.raises(propdp.ConfigError):
        propdp.sweep(cfg, tmp_path / "r", resume=True, overwrite=True, progress=False)
    with pytest.raises(propdp.ConfigError):
        propdp.sweep(cfg, tmp_path / "s", theory=False, simulation=False, progress=False)
    with pytest.raises(propdp.ConfigError) as e:
        propdp.sweep("", progress=False)
    assert "empty" in str(e.value)


def _odd_values():
    np = pytest.importorskip("numpy")
    return ["abc", True, None, float("nan"), float("inf"), -float("inf"), 10**400, -10**30, 2**64,
            np.float32(0.5), np.int64(3), np.bool_(True), [1.0], {"x": 1}]


@pytest.mark.parametrize("key", ["noise", "epsilon", "rho", "delta_priv", "steps", "sample_rate", "clip",
                                 "lambda_", "huber_m"])
def test_privacy_arguments_of_any_type_give_a_report_or_name_the_argument(key):
    """Generated argument types (str, bool, None, NaN, ±inf, huge ints, numpy
    scalars, containers) for every numeric keyword: a report, or a
    ConfigError naming that keyword — never a bare TypeError/OverflowError."""
    for value in _odd_values():
        if key in ("lambda_", "huber_m"):
            args = dict(algorithm="objective", model="huber", noise=1.0)
        elif key in ("noise", "epsilon", "rho"):
            args = dict(algorithm="dpsgd", model="logistic", sample_rate=0.1, steps=10)
        else:
            args = dict(algorithm="dpsgd", model="logistic", sample_rate=0.1, steps=10, noise=1.0)
        args[key] = value
        try:
            r = propdp.privacy(args.pop("algorithm"), args.pop("model"), **args)
        except propdp.ConfigError as e:
            allowed = {key} | ({"noise"} if value is None else set())
            assert e.field in allowed, f"{key}={value!r}: field {e.field}: {e}"
            continue
        assert math.isfinite(r.noise) and r.noise > 0, f"{key}={value!r}: {r}"


@pytest.mark.parametrize("key", ["delta", "s2", "huber_m", "lambda_", "sigma"])
def test_solve_arguments_of_any_type_give_a_result_or_name_the_argument(key):
    for value in _odd_values():
        args = dict(delta=0.5, s2=1.0, huber_m=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=1.0, sigma=1.0)
        args[key] = value
        try:
            r = propdp.solve("huber", "objective", **args)
        except propdp.ConfigError as e:
            # the key, or a key inside it (`problem.delta.x` for delta={"x": 1})
            assert e.field is not None and key.rstrip("_") in e.field.split("."), f"{key}={value!r}: {e.field}: {e}"
            continue
        except propdp.PropdpError:
            continue  # a valid point without a solution (e.g. a huge s²): a computation error, named as such
        assert r.converged and all(math.isfinite(v) for v in r.metrics.values()), f"{key}={value!r}"


def test_ctrl_c_stops_a_long_dmft_solve():
    """SIGINT half a second into a DP-SGD solve of T = 10⁴ steps (15–60 s of
    work on 2 cores; T = 400 became a half-second solve, which the signal
    could miss): KeyboardInterrupt within a few steps, not at the end."""
    import os
    import signal
    import threading
    import time

    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            propdp.solve("logistic", "dpsgd", delta=1.0, s2=1.0, lambda_=0.5, sigma=1.0, eta=0.5, steps=10_000,
                         sample_rate=0.2)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 8, "the solve ran on after Ctrl-C"


def test_the_largest_seed_toml_takes_python_takes_too():
    args = dict(d=40, reps=2, delta=0.5, s2=1.0, lambda_=1.0, sigma=1.0, progress=False)
    assert propdp.simulate("logistic", "objective", seed=2**63 - 1, **args).seed == 2**63 - 1
    with pytest.raises(propdp.ConfigError) as e:
        propdp.simulate("logistic", "objective", seed=2**64 - 1, **args)
    assert e.value.field is not None and "seed" in e.value.field, str(e.value)


def test_every_keyword_and_axis_label_comes_from_the_parameters_table():
    import inspect

    rows = {p["keyword"]: p for p in propdp.parameters()}
    assert rows["lambda_"]["name"] == "lambda" and rows["sample_rate"]["allowed"] == "0 < sample_rate ≤ 1"
    assert rows["sample_rate"]["algorithms"] == ["dpsgd"]
    # privacy/calibrate: every keyword is a parameter's, but the two that name
    # the query (algorithm, model) and the noise it assesses (σ or τ)
    for f in (propdp.privacy, propdp.calibrate):
        for name in inspect.signature(f).parameters:
            if name not in ("algorithm", "model", "noise"):
                assert name in rows, f"{f.__name__}({name}=) is not in propdp.parameters()"
    # solve: the keywords it takes are the table's [problem]/[algorithm] rows
    with pytest.raises(propdp.ConfigError) as e:
        propdp.solve("huber", "objective", no_such_key=1.0)
    allowed = str(e.value).split("allowed ")[1].split(", ")
    table = sorted(k for k, p in rows.items() if p["table"] in ("problem", "algorithm") and k not in ("model", "kind"))
    assert sorted(allowed) == table
    # plot: axis label and legend symbol from the table
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    df = propdp.sweep(
        {
            "problem": {"model": "huber", "delta": [0.5, 1.0], "s2": 1.0, "huber_m": 1.0,
                        "noise": {"law": "gaussian", "sd": 0.5}},
            "algorithm": {"kind": "objective", "lambda": 1.0, "sigma": [0.0, 1.0]},
        },
        progress=False,
    )
    ax = propdp.plot(df, "est_err2", x="delta", series="sigma")
    assert ax.get_xlabel() == rows["delta"]["label"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["σ = 0", "σ = 1"]


def _known_data(n=3000):
    """30 independent columns of standard deviations 2, 1 and ½, labels
    y = xᵀθ + 0.3·ε."""
    rng = np.random.default_rng(3)
    sd = np.repeat([2.0, 1.0, 0.5], 10)
    X = rng.standard_normal((n, 30)) * sd
    theta = rng.standard_normal(30)
    y = X @ theta + 0.3 * rng.standard_normal(n)
    return X, y, theta


def test_spectrum_recovers_a_known_covariance_as_the_cli_does(cli, tmp_path):
    X, y, theta = _known_data()
    df = propdp.spectrum(pd.DataFrame(X, columns=[f"c{j}" for j in range(30)]), y)
    assert list(df.columns) == ["eigenvalue", "weight", "teacher"] and len(df) == 30
    want = np.repeat([4.0, 1.0, 0.25], 10)
    assert np.all(np.abs(df["eigenvalue"].to_numpy() / want - 1) < 0.15)
    sd = np.std(y)  # the labels' unit: their sd, ddof 0
    assert abs(df.attrs["label_sd"] / sd - 1) < 1e-12
    assert abs(df.attrs["noise_sd"] * sd / 0.3 - 1) < 0.05
    assert abs(df.attrs["s2"] * sd**2 / (1.75 * np.sum(theta**2)) - 1) < 0.1
    # the command line on the same data: the same numbers
    data = tmp_path / "data.csv"
    pd.DataFrame(np.column_stack([X, y]), columns=[f"c{j}" for j in range(30)] + ["y"]).to_csv(data, index=False)
    out = subprocess.run([str(cli), "spectrum", str(data), "--label", "y"], capture_output=True, text=True, check=True)
    rows = [l for l in out.stdout.splitlines() if l and not l.startswith("#")][1:]
    cli_eig = np.array([float(r.split(",")[0]) for r in rows])
    assert np.allclose(cli_eig, df["eigenvalue"].to_numpy(), rtol=1e-12)


def test_spectrum_with_a_model_gives_the_effective_model_and_its_file(tmp_path):
    """``model="logistic"``: two-class labels (the larger +1), s² matched to
    the cross-fitted error with its interval, the checks, and the file text
    whose effective-model line gives a config its s2; a third class is
    refused naming ``y``."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2000, 20)) * np.arange(1, 21)
    t = (X / np.arange(1, 21)) @ (rng.standard_normal(20) * np.sqrt(2.0 / 20))
    y = np.where(rng.random(2000) < 1 / (1 + np.exp(-t)), 7.0, 3.0)
    df = propdp.spectrum(X, y, model="logistic")
    a = df.attrs
    assert a["model"] == "logistic" and a["noise_sd"] is None and a["describes"]
    assert a["s2_interval"][0] < a["s2"] < a["s2_interval"][1]
    assert any("labels 7 → +1" in line for line in a["summary"]), a["summary"]
    (tmp_path / "eff.csv").write_text(a["file_text"])
    cfg = ('[problem]\nmodel = "logistic"\ndelta = 0.5\ncovariance = { file = "eff.csv" }\n'
           '[algorithm]\nkind = "objective"\nlambda = 1.0\nsigma = 0.5\n')
    (tmp_path / "c.toml").write_text(cfg)
    assert propdp.check(str(tmp_path / "c.toml"))
    with pytest.raises(propdp.ConfigError) as e:
        propdp.spectrum(X, np.where(t > 1, 2.0, y), model="logistic")
    assert e.value.field == "y" and "found 3" in str(e.value)
    with pytest.raises(propdp.ConfigError) as e:
        propdp.spectrum(X, y, model="probit")
    assert e.value.field == "model"
    assert a["data_model"] == "teacher"


def test_spectrum_of_two_clusters_gives_their_balance_and_within_class_spectrum():
    """``data_model="two_cluster"``: 70/30 clusters x = (y − 0.4)μ + g; the
    attrs carry the balance of the rows and the within-class share, the
    DataFrame is the within-class spectrum (not the rows'), the file line
    names the data model; an unknown data model is refused naming it."""
    rng = np.random.default_rng(6)
    n, d = 3000, 20
    y = np.where(rng.random(n) < 0.7, 1.0, 0.0)
    s = 2 * y - 1
    mu = rng.standard_normal(d) * np.sqrt(2.0 / d)
    X = (s - 0.4)[:, None] * mu + rng.standard_normal((n, d))
    df = propdp.spectrum(X, y, model="logistic", data_model="two_cluster")
    a = df.attrs
    assert a["data_model"] == "two_cluster" and a["balance"] == np.mean(y == 1.0)
    assert 0.5 < a["within"] < 1.0
    assert "data_model = two_cluster" in a["file_text"]
    total = propdp.spectrum(X, y, model="logistic", data_model="teacher")
    assert total.attrs["data_model"] == "teacher"
    assert not np.allclose(df["eigenvalue"].sum(), total["eigenvalue"].sum())
    with pytest.raises(propdp.ConfigError) as e:
        propdp.spectrum(X, y, model="logistic", data_model="three_cluster")
    assert e.value.field == "data_model"


def test_a_spectrum_is_a_covariance_for_solve_simulate_and_sweep(tmp_path):
    X, y, _ = _known_data(2000)
    df = propdp.spectrum(X, y)
    point = dict(delta=0.5, s2=1.0, huber_m=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=0.5, sigma=1.0)
    iso = propdp.solve("huber", "objective", **point)
    cov = propdp.solve("huber", "objective", covariance=df, **point)
    inline = propdp.solve("huber", "objective", covariance={k: list(df[k]) for k in df.columns}, **point)
    assert cov.metrics == inline.metrics
    assert cov.metrics["pred_err2"] < cov.metrics["est_err2"] and iso.metrics["pred_err2"] == iso.metrics["est_err2"]
    sim = propdp.simulate("huber", "objective", d=60, reps=2, covariance=df, progress=False, **point)
    assert sim.metrics["pred_err2"] < sim.metrics["est_err2"]
    # a config file names its spectrum file relative to its own directory
    df.to_csv(tmp_path / "spectrum.csv", index=False)
    (tmp_path / "c.toml").write_text(
        HUBER.replace('s2 = 1.0', 's2 = 1.0\ncovariance = { file = "spectrum.csv" }').replace("d = 60", "d = 30")
    )
    res = propdp.sweep(tmp_path / "c.toml", progress=False)
    assert len(res) == 8 and (res["pred_err2"] < res["est_err2"]).all()
    with pytest.raises(propdp.ConfigError) as e:
        propdp.solve("huber", "objective", covariance={"eigenvalue": [1, 2], "weight": [1, -1], "teacher": [1, 1]}, **point)
    assert e.value.field == "problem.covariance.weight[1]"


def _missing(module):
    """Whether ``module`` cannot be imported (an optional extra not installed)."""
    try:
        __import__(module)
    except ImportError:
        return True
    return False


@pytest.mark.skipif(_missing("scipy"), reason="needs scipy (the test extra): pip install 'propdp[test]'")
def test_the_covariance_theory_agrees_with_the_gaussian_covariate_model(cli):
    """scripts/reference/gcm_reference.py: the ridge state evolution of the Gaussian
    covariate model (Loureiro et al. 2021, as in IdePHICS/GCMProject) and the
    deterministic equivalent of ridge, written independently, against the
    CLI's prediction on 12 spectra × δ × λ points (relative 1e-6)."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "reference" / "gcm_reference.py"), "--propdp", str(cli)],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith("OK")


def test_simulate_on_the_rows_of_a_data_set(tmp_path, monkeypatch):
    X, y, _ = _known_data(600)
    pd.DataFrame(np.column_stack([X, y]), columns=[f"c{j}" for j in range(30)] + ["y"]).to_csv(tmp_path / "d.csv", index=False)
    monkeypatch.chdir(tmp_path)
    point = dict(delta=0.5, s2=1.0, huber_m=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=0.5, sigma=1.0)
    r = propdp.simulate("huber", "objective", d=30, reps=3, data={"file": "d.csv", "drop": ["y"]}, progress=False, **point)
    assert r["pred_err2"] < r["est_err2"]
    own = propdp.simulate("huber", "objective", d=30, reps=3, data={"file": "d.csv", "labels": "y"}, progress=False, **point)
    assert "est_err2" not in own.metrics and own["test_mse"] > 0
    with pytest.raises(propdp.ConfigError) as e:
        propdp.simulate("huber", "objective", d=29, reps=3, data={"file": "d.csv", "drop": ["y"]}, progress=False, **point)
    assert e.value.field == "simulation.d"


def test_the_accounting_module_certifies_dp_sgd_and_has_opacus_shape():
    from propdp import accounting

    run = accounting.dpsgd_event(noise_multiplier=0.6, sample_rate=0.004, steps=10_000)
    b = accounting.epsilon(run, delta=1e-5, neighbouring="add_remove_one")
    assert b.neighbouring == "add/remove-one"
    # dp-accounting's pessimistic ε 8.49431 (fine grid) and prv_accountant's [8.49323, 8.49534]
    assert b.epsilon_lower <= 8.49431 <= b.epsilon * (1 + 1e-4) and b.bracket_reached
    assert b.epsilon_lower <= 8.49534 and 8.49323 <= b.epsilon
    acc = accounting.Accountant()
    for _ in range(300):
        acc.step(noise_multiplier=1.0, sample_rate=0.02)
    for _ in range(200):
        acc.step(noise_multiplier=2.0, sample_rate=0.02)
    assert acc.history == [(1.0, 0.02, 300), (2.0, 0.02, 200)] and len(acc) == 500
    whole = acc.get_epsilon_bracket(delta=1e-5)
    schedule = accounting.ComposedEvent([accounting.dpsgd_event(1.0, 0.02, 300), accounting.dpsgd_event(2.0, 0.02, 200)])
    same = accounting.epsilon(schedule, delta=1e-5)
    assert whole == same and acc.get_epsilon(1e-5) == whole.epsilon and acc.event() == schedule
    # the quieter run bounds the mixed one from below, the louder from above
    quiet = accounting.epsilon(accounting.dpsgd_event(2.0, 0.02, 500), 1e-5)
    loud = accounting.epsilon(accounting.dpsgd_event(1.0, 0.02, 500), 1e-5)
    assert quiet.epsilon < whole.epsilon_lower and whole.epsilon < loud.epsilon_lower
    # a saved history extends
    later = accounting.Accountant(history=acc.history)
    later.step(noise_multiplier=2.0, sample_rate=0.02)
    assert later.history[-1] == (2.0, 0.02, 201)
    # bad input names the argument, a part out of range its path in the event
    with pytest.raises(propdp.ConfigError) as e:
        accounting.epsilon(accounting.dpsgd_event(1.0, 1.5, 10), 1e-5)
    assert e.value.field == "event.sample_rate"
    with pytest.raises(propdp.ConfigError) as e:
        two = [accounting.dpsgd_event(1.0, 0.1, 5), accounting.GaussianEvent(1.0).poisson(0.1).repeat(0)]
        accounting.epsilon(accounting.ComposedEvent(two), 1e-5)
    assert e.value.field == "events[1].count"
    with pytest.raises(propdp.ConfigError) as e:
        accounting.dpsgd_event(1.0, 0.1, 10.5)
    assert e.value.field == "steps"


def test_accounting_calibrates_any_knob_without_overshooting():
    from propdp import accounting

    common = dict(epsilon=2.0, delta=1e-5)
    z = accounting.calibrate("noise_multiplier", sample_rate=0.01, steps=1000, **common)
    t = accounting.calibrate("steps", noise_multiplier=1.0, sample_rate=0.01, **common)
    q = accounting.calibrate("sample_rate", noise_multiplier=1.0, steps=1000, **common)
    for c in (z, t, q):
        assert c.epsilon_lower <= c.epsilon <= 2.0 and c.epsilon >= 2.0 * (1 - 1e-3)
        # read back from scratch: the same certified ε
        assert accounting.epsilon(accounting.dpsgd_event(c.noise_multiplier, c.sample_rate, c.steps), 1e-5).epsilon <= 2.0
    # one more step is over the target (the lower end says so, or the upper end cannot certify it)
    assert accounting.epsilon(accounting.dpsgd_event(1.0, 0.01, t.steps + 1), 1e-5).epsilon > 2.0
    r = accounting.calibrate("noise_multiplier", sample_rate=0.01, steps=1000, rho=0.5)
    # ρ = T·Δ²/(2z²), Δ = 2 under replace-one (the default), 1 under add/remove-one
    assert r.epsilon is None and r.rho <= 0.5 and abs(r.noise_multiplier - (1000 * 4 / (2 * 0.5)) ** 0.5) < 1e-9
    r = accounting.calibrate("noise_multiplier", sample_rate=0.01, steps=1000, rho=0.5, neighbouring="add_remove_one")
    assert abs(r.noise_multiplier - (1000 / (2 * 0.5)) ** 0.5) < 1e-9
    with pytest.raises(propdp.ConfigError) as e:
        accounting.calibrate("sample_rate", noise_multiplier=1.0, steps=10, rho=0.5)
    assert e.value.field == "sample_rate"
    with pytest.raises(propdp.ConfigError) as e:
        accounting.calibrate("steps", noise_multiplier=0.5, sample_rate=0.5, epsilon=0.01, delta=1e-6)
    assert e.value.field == "epsilon"
    with pytest.raises(propdp.ConfigError) as e:
        accounting.calibrate("steps", noise_multiplier=1.0, sample_rate=0.5, steps=10, epsilon=1.0, delta=1e-6)
    assert e.value.field == "steps"
    with pytest.raises(propdp.ConfigError) as e:
        accounting.calibrate("epochs", noise_multiplier=1.0, sample_rate=0.5, epsilon=1.0, delta=1e-6)
    assert e.value.field == "knob"


def test_membership_inference_bounds_the_best_attack():
    from statistics import NormalDist

    from propdp import accounting

    nd = NormalDist()
    ar = dict(neighbouring="add_remove_one")  # the attacks below are add/remove's
    # one subsampled step: the best attack thresholds the observation (non-members N(0, z²), members the mixture)
    z, q = 1.0, 0.05
    m = accounting.membership_inference(z, q, 1, fpr=[1e-3, 1e-2, 0.1], **ar)
    for a, tpr in zip(m.fpr, m.tpr_upper):
        best = (1 - q) * a + q * (1 - nd.cdf(nd.inv_cdf(1 - a) - 1 / z))
        assert best <= tpr <= 1.05 * best
    assert m.mu_exact is False
    # the full batch is μ-GDP, exactly: μ = √100/10 = 1 (add/remove), TPR = Φ(Φ⁻¹(α) + 1)
    g = accounting.membership_inference(10.0, 1.0, 100, fpr=[0.01], **ar)
    assert g.mu == pytest.approx(1.0) and g.mu_exact is True
    assert g.tpr_upper[0] == pytest.approx(nd.cdf(nd.inv_cdf(0.01) + 1.0), rel=1e-9)
    # a schedule: a bound, no μ
    s = accounting.membership_inference(segments=[(1.0, 0.01, 500), (1.5, 0.02, 500)], fpr=[0.01])
    assert 0.01 < s.tpr_upper[0] < 1 and s.mu is None
    with pytest.raises(propdp.ConfigError) as e:
        accounting.membership_inference(1.0, 0.01, 100, fpr=[0.0])
    assert e.value.field == "fpr"
    with pytest.raises(propdp.ConfigError) as e:
        accounting.membership_inference(1.0, 1.5, 100)
    assert e.value.field == "sample_rate"
    with pytest.raises(propdp.ConfigError) as e:
        accounting.membership_inference(1.0, 0.01)
    assert e.value.field == "steps"


def test_accountant_ledger_composes_gaussian_releases_with_dpsgd():
    from statistics import NormalDist

    from propdp import accounting

    nd = NormalDist()
    ar = dict(neighbouring="add_remove_one")  # Δ = 1 in the closed forms below
    # ten releases at σ/Δ = 5 alone: μ = √10/5, the exact Gaussian ε (Balle & Wang's δ(ε) solved at δ = 1e-5)
    g = accounting.Accountant(**ar)
    g.gaussian(noise_multiplier=5.0, count=10)
    mu = 10**0.5 / 5
    eps = g.get_epsilon(1e-5)
    delta = nd.cdf(mu / 2 - eps / mu) - 2.718281828459045**eps * nd.cdf(-mu / 2 - eps / mu)
    assert delta == pytest.approx(1e-5, rel=1e-6)
    # the same releases after 1000 DP-SGD steps: one ledger, one bracket, above either part alone
    acc = accounting.Accountant(**ar)
    for _ in range(1000):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    alone, alone_half = acc.get_epsilon(1e-5), acc.get_epsilon(5e-6)
    acc.gaussian(noise_multiplier=5.0, count=10)
    assert acc.history == [(1.0, 0.01, 1000), (5.0, 1.0, 10)]
    both = acc.get_epsilon_bracket(1e-5)
    # above either part alone, and below basic composition (ε₁ + ε₂ at δ/2 each)
    assert both.epsilon_lower > max(alone, eps) and both.epsilon < alone_half + g.get_epsilon(5e-6)
    with pytest.raises(propdp.ConfigError) as e:
        acc.gaussian(noise_multiplier=5.0, count=0)
    assert e.value.field == "count"


def test_accounting_states_the_sampling_scheme_and_its_assumption():
    from propdp import accounting

    ar = dict(neighbouring="add_remove_one")
    run = accounting.dpsgd_event(1.0, 0.01, 1000)
    poisson = accounting.epsilon(run, 1e-5, **ar)
    assert accounting.epsilon(run, 1e-5, sampling="poisson", **ar) == poisson
    # shuffled: ⌈T·q⌉ = 10 Gaussian releases, μ = √10 (add/remove), exact
    shuffled = accounting.epsilon(run, 1e-5, sampling="shuffled", **ar)
    ten = accounting.epsilon(accounting.GaussianEvent(1.0).repeat(10), 1e-5, **ar).epsilon
    assert shuffled.epsilon == pytest.approx(ten, rel=1e-12) and shuffled.epsilon > poisson.epsilon
    # fixed-size batches: replace-one, sensitivity 2C
    fixed = accounting.epsilon(run, 1e-5, sampling="fixed_size", neighbouring="replace_one")
    assert fixed.neighbouring == "replace-one" and fixed.epsilon > poisson.epsilon
    for bad, field in [
        (dict(sampling="fixed_size", neighbouring="add_remove_one"), "neighbouring"),
        (dict(sampling="stratified"), "sampling"),
        (dict(sampling=3), "sampling"),
    ]:
        with pytest.raises(propdp.ConfigError) as e:
            accounting.epsilon(run, 1e-5, **bad)
        assert e.value.field == field


def test_accounting_states_the_sampling_scheme_of_a_schedule():
    from propdp import accounting

    segments = [(1.0, 0.01, 450), (2.0, 0.02, 500)]  # 4.5 and 10 epochs: 5 + 10 batches per example at most
    schedule = accounting.ComposedEvent([accounting.dpsgd_event(*s) for s in segments])
    ar = dict(neighbouring="add_remove_one")
    shuffled = accounting.epsilon(schedule, 1e-5, sampling="shuffled", **ar)
    # 5 releases at z = 1 and 10 at z = 2: μ² = 5 + 10/4
    mu2 = 5 + 10 / 4
    poisson = accounting.epsilon(schedule, 1e-5, **ar)
    assert shuffled.epsilon > poisson.epsilon
    # the same as the Gaussian mechanism's ε at μ = √7.5, via a DP-GD ledger of equal μ²
    acc = accounting.Accountant(**ar)
    acc.gaussian(noise_multiplier=(1 / mu2) ** 0.5)
    assert shuffled.epsilon == pytest.approx(acc.get_epsilon(1e-5), rel=1e-9)
    fixed = accounting.epsilon(schedule, 1e-5, sampling="fixed_size", neighbouring="replace_one")
    halved = accounting.epsilon(accounting.ComposedEvent([accounting.dpsgd_event(z / 2, q, t) for z, q, t in segments]),
                                1e-5, **ar)
    assert fixed.epsilon == halved.epsilon
    with pytest.raises(propdp.ConfigError) as e:
        bad = accounting.ComposedEvent([accounting.dpsgd_event(1.0, 0.01, 450), accounting.dpsgd_event(2.0, 1.5, 500)])
        accounting.epsilon(bad, 1e-5, sampling="shuffled")
    assert e.value.field == "events[1].event.sample_rate"


def test_accountant_composes_an_objective_perturbation_release_with_dp_sgd():
    import math

    from propdp import accounting

    # a logistic model (L = 1, β = 1/4, ‖x‖ ≤ 1) released by objective perturbation, λ = 10, σ = 4
    release = dict(lipschitz=1.0, curvature=0.25, radius=1.0, lambda_=10.0, sigma=4.0)
    c0, a = math.log1p(0.25 / 10.0), 1.0 / 4.0
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731

    def delta_of(eps):  # the bound's curve above c: 2·δ_G(ε − c0; A), independent of propdp
        e = eps - c0
        return 2 * (phi(-e / a + a / 2) - math.exp(e) * phi(-e / a - a / 2))

    lo, hi = c0 + a * a / 2, 20.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > 1e-5 else (lo, mid)
    ar = dict(neighbouring="add_remove_one")  # the closed form above is add/remove's
    alone = accounting.Accountant(**ar)
    alone.objective(**release)
    b = alone.get_epsilon_bracket(1e-5)
    assert b.epsilon_lower <= hi <= b.epsilon and b.bracket_reached and len(alone) == 1
    # beside 1000 DP-SGD steps: above either part, below their basic composition at δ/2 each
    acc = accounting.Accountant(**ar)
    for _ in range(1000):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    sgd = acc.get_epsilon_bracket(1e-5)
    acc.objective(**release)
    both = acc.get_epsilon_bracket(1e-5)
    release_alone = accounting.Accountant(objectives=acc.objectives, **ar)
    basic = accounting.epsilon(accounting.dpsgd_event(1.0, 0.01, 1000), 5e-6, **ar).epsilon + release_alone.get_epsilon(5e-6)
    assert max(sgd.epsilon_lower, hi) <= both.epsilon <= basic and both.epsilon_lower <= both.epsilon
    # the ledger is plain data: saved and reloaded, it gives the same bracket
    again = accounting.Accountant(history=list(acc.history), objectives=list(acc.objectives), **ar)
    assert again.get_epsilon_bracket(1e-5) == both
    for bad in ["sigma", "lambda_", "radius"]:
        with pytest.raises(propdp.ConfigError) as e:
            accounting.Accountant().objective(**{**release, bad: 0.0})
        assert e.value.field == bad


def _accounting_calls(key, value):
    """One call of each accounting function with ``key`` set to ``value``."""
    from propdp import accounting as acc
    run = dict(noise_multiplier=1.0, sample_rate=0.01, steps=100)
    if key in run:
        run[key] = value
    delta = value if key == "delta" else 1e-5
    nb = value if key == "neighbouring" else "add_remove_one"
    if key != "fpr":
        def event():
            return acc.dpsgd_event(run["noise_multiplier"], run["sample_rate"], run["steps"])
        yield lambda: acc.epsilon(event(), delta, neighbouring=nb)
        yield lambda: acc.epsilon(acc.ComposedEvent([event()]), delta, nb)
        yield lambda: acc.epsilon(event(), delta, nb, sampling="shuffled")
    if key != "delta":
        yield lambda: acc.membership_inference(run["noise_multiplier"], run["sample_rate"], run["steps"],
                                               fpr=[value] if key == "fpr" else [0.01], neighbouring=nb)
    if key in ("fpr", "steps"):
        return

    def opacus():
        a = acc.Accountant(neighbouring=nb)
        a.step(noise_multiplier=run["noise_multiplier"], sample_rate=run["sample_rate"])
        return a.get_epsilon(delta)
    yield opacus


@pytest.mark.parametrize("key", ["noise_multiplier", "sample_rate", "steps", "delta", "neighbouring", "fpr"])
def test_accounting_arguments_of_any_type_give_an_answer_or_name_the_argument(key):
    """Hardening round three, item 8: generated argument types (str, bool,
    None, NaN, ±inf, huge ints, 2⁶⁴, complex, numpy scalars, containers)
    through every accounting entry point: an answer, or a ConfigError naming
    the argument — never a bare TypeError/ValueError/OverflowError, and
    ``True`` is never a number."""
    for value in _odd_values() + [1j, "D.csv"]:
        for call in _accounting_calls(key, value):
            try:
                call()
            except propdp.ConfigError as e:
                named = e.field is not None and e.field.split(".")[-1].split("[")[0]
                # a step count out of range: the count of the event dpsgd_event built
                assert named == key or (key, named) == ("steps", "count"), f"{key}={value!r}: {e.field}: {e}"
                continue
            assert not isinstance(value, (bool, np.bool_, str, list, dict, complex)) and value is not None, \
                f"{key}={value!r} was accepted"


def test_accounting_takes_numpy_scalars_and_an_empty_accountant_checks_its_arguments():
    from propdp import accounting as acc
    a = acc.epsilon(acc.dpsgd_event(np.float64(1.0), np.float32(0.01), np.int64(1000)), np.float64(1e-5))
    b = acc.epsilon(acc.dpsgd_event(1.0, float(np.float32(0.01)), 1000), 1e-5)
    assert a == b
    empty = acc.Accountant()
    assert empty.get_epsilon(1e-5) == 0.0
    for delta in (0.0, 1.5, -1e-5, None, "1e-5"):
        with pytest.raises(propdp.ConfigError) as e:
            empty.get_epsilon(delta)
        assert e.value.field == "delta", delta
    with pytest.raises(propdp.ConfigError) as e:
        acc.Accountant(neighbouring="sideways").get_epsilon(1e-5)
    assert e.value.field == "neighbouring"
    with pytest.raises(propdp.ConfigError) as e:
        acc.Accountant(neighbouring=3)
    assert e.value.field == "neighbouring"


def test_spectrum_and_simulate_name_misshapen_arguments():
    """A 1-D X, a string y, data given as a path: ConfigError naming them."""
    with pytest.raises(propdp.ConfigError) as e:
        propdp.spectrum([1.0, 2.0, 3.0])
    assert e.value.field == "X"
    with pytest.raises(propdp.ConfigError) as e:
        propdp.spectrum([[1.0, 2.0], [3.0, 5.0], [2.0, 1.0]], y="abc")
    assert e.value.field == "y"
    with pytest.raises(propdp.ConfigError) as e:
        propdp.spectrum([[1.0, "x"], [3.0, 5.0]])
    assert e.value.field == "X[0][1]"
    with pytest.raises(propdp.ConfigError) as e:
        propdp.simulate("huber", "objective", d=20, reps=2, data="D.csv", delta=0.5, s2=1.0, huber_m=1.0,
                        noise={"law": "gaussian", "sd": 0.5}, lambda_=1.0, sigma=1.0, progress=False)
    assert e.value.field == "simulation.data"
    for bad in (None, 2.5, True, 2**64):
        with pytest.raises(propdp.ConfigError) as e:
            propdp.simulate("huber", "objective", d=bad, reps=2, delta=0.5, s2=1.0, huber_m=1.0,
                            noise={"law": "gaussian", "sd": 0.5}, lambda_=1.0, sigma=1.0, progress=False)
        assert e.value.field == "simulation.d", bad


def test_a_fifo_config_is_refused_at_once(tmp_path):
    """Hardening round three, item 5: a FIFO (or a device) as a config is
    refused, not read (which would block until someone writes to it)."""
    pipe = tmp_path / "pipe.toml"
    os.mkfifo(pipe)
    start = time.time()
    for call in (propdp.check, lambda c: propdp.sweep(c, progress=False)):
        with pytest.raises(propdp.ConfigError) as e:
            call(str(pipe))
        assert "not a regular file" in str(e.value)
    with pytest.raises(propdp.ConfigError):
        propdp.check("/dev/zero")
    assert time.time() - start < 5


def test_a_test_needing_scipy_skips_without_it_as_the_readme_promises():
    """README: tests needing an extra that is not installed are skipped with
    the reason. With scipy hidden (``sys.modules["scipy"] = None``) the
    covariance test that runs scripts/reference/gcm_reference.py skips,
    naming scipy, instead of failing (and before its fixture builds the CLI)."""
    test = f"{Path(__file__)}::test_the_covariance_theory_agrees_with_the_gaussian_covariate_model"
    code = (
        "import sys; sys.modules['scipy'] = None; import pytest; "
        f"sys.exit(pytest.main(['-q', '-rs', '-p', 'no:cacheprovider', {test!r}]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 skipped" in out.stdout and "scipy" in out.stdout, out.stdout


def test_every_executor_example_starts_its_process_pool_under_the_main_guard():
    """A spawn process pool (and Dask's LocalCluster) imports the main script
    again in each worker: every example of ``executor=`` or a client that
    makes one — in docs/, README.md and the package's docstrings — does it
    under ``if __name__ == "__main__":``."""
    import inspect
    import re

    import propdp.distributed

    blocks = []
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks += [(md.name, b) for b in re.findall(r"```python\n(.*?)```", md.read_text(), flags=re.S)]
    for obj in (propdp.sweep, propdp.simulate, propdp.tune, propdp.distributed, propdp.distributed.sweep):
        blocks.append((getattr(obj, "__name__", str(obj)), inspect.getdoc(obj) or ""))
    pools = [(where, b) for where, b in blocks if re.search(r"ProcessPoolExecutor\(|LocalCluster\(", b)]
    assert len(pools) >= 3, [w for w, _ in pools]
    for where, block in pools:
        assert 'if __name__ == "__main__":' in block, f"{where}: a process pool without the main guard:\n{block}"


def test_solve_takes_a_precision_and_records_the_paths_it_chose():
    kw = dict(delta=0.5, s2=1.0, huber_m=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=0.05, sigma=0.3,
              eta=0.1, steps=150, sample_rate=0.1, clip=1.0)
    r = propdp.solve("huber", "dpsgd", precision=0.05, **kw)
    rqmc = r.record["solver"]["rqmc"]
    # at least the pilot's paths (precision::PILOT_POINTS)
    assert rqmc["target"] == 0.05 and rqmc["precision"] <= 0.05 and rqmc["points"] >= 1024
    with pytest.raises(propdp.ConfigError) as e:
        propdp.solve("huber", "dpsgd", precision=0.5, **kw)
    assert "solver.precision" in str(e.value)
