"""propdp.mechanism: the same choice as the command line's JSON, from a
config or keywords, with jax_privacy's names for the best run."""

import json
import math
import subprocess

import pytest

import propdp

SMALL = """
[problem]
model = "least_squares"
delta = 0.5
s2 = 1.0
noise = { law = "gaussian", sd = 0.5 }

[algorithm]
kind = "dpsgd"
lambda = 0.05
sigma = 1.0
eta = 0.2
steps = 160
sample_rate = 0.1
clip = 1.0

[solver]
dmft_points = 1024
dmft_scrambles = 2
"""


def test_the_choice_is_the_command_lines(cli, tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    out = subprocess.run([str(cli), "mechanism", str(path), "--epsilon", "4", "--delta-priv", "1e-5", "--json"],
                         capture_output=True, text=True, check=True)
    theirs = json.loads(out.stdout)
    m = propdp.mechanism(str(path), epsilon=4.0, delta_priv=1e-5, progress=False)
    assert [c.predicted for c in m.candidates] == [c["predicted"] for c in theirs["candidates"]]
    assert m.best.predicted == min(c.predicted for c in m.candidates)
    jax = m.to_jax_privacy()
    assert jax == theirs["jax_privacy"] and jax["num_bands"] == m.best.groups
    assert math.isclose(sum(c * c for c in jax["coefficients"]), 1.0, rel_tol=1e-12)
    # the BLT in the fixed order: ⌈1/q⌉ groups at rate 1, its T coefficients and its (θ, ω)
    blt = [c for c in m.candidates if c.origin == "blt"]
    assert len(blt) == 1 and (blt[0].groups, blt[0].sample_rate, len(blt[0].coefficients)) == (10, 1.0, 160)
    assert len(blt[0].blt["buf_decay"]) == len(blt[0].blt["output_scale"]) == 2
    assert all(c.blt is None for c in m.candidates if c.origin != "blt")


def test_keywords_give_the_configs_choice():
    by_config = propdp.mechanism(SMALL, epsilon=4.0, delta_priv=1e-5, progress=False)
    by_keywords = propdp.mechanism(
        model="least_squares", delta=0.5, s2=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=0.05, sigma=1.0,
        eta=0.2, steps=160, sample_rate=0.1, clip=1.0, solver={"dmft_points": 1024, "dmft_scrambles": 2},
        epsilon=4.0, delta_priv=1e-5, progress=False)
    assert by_keywords == by_config
    with pytest.raises(propdp.ConfigError) as e:
        propdp.mechanism(SMALL, epsilon=4.0, metric="test_class_err", progress=False)
    assert e.value.field == "metric"
