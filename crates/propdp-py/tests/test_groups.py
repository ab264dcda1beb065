"""DP-SGD in cyclic groups (amplified BandMF): its certified ε against
dp_accounting's PLD accountant on the event jax_privacy's
`amplified_bandmf_event` builds, Poisson DP-SGD over ⌈T/G⌉ rounds
(Choquette-Choo et al. 2023, Thm. 4), and its checks (the command line's
--bands beyond the groups is refused: scripts/privacy_outputs)."""

import math

import pytest

import propdp


def test_groups_against_dp_accounting_amplified_bandmf():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    for groups, q, steps, z in [(4, 0.2, 1024, 2.0894), (8, 0.01, 20000, 0.8), (5, 1.0, 1000, 10.0)]:
        r = propdp.privacy("dpsgd", noise=z, clip=1.0, sample_rate=q, steps=steps, groups=groups,
                           delta_priv=1e-5)
        assert r.neighbouring == "add/remove-one" and r.rounds == math.ceil(steps / groups)
        event = dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), math.ceil(steps / groups))
        accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        accountant.compose(event)
        theirs = accountant.get_epsilon(1e-5)
        # theirs is pessimistic (an upper bound): our certified lower end is at or below it, our upper end near it
        assert r.epsilon_lower <= theirs, (groups, r.epsilon_lower, theirs)
        assert -1e-4 <= (r.epsilon - theirs) / theirs <= 1e-3, (groups, r.epsilon, theirs)


def test_groups_compose_their_rounds_and_are_checked():
    plain = propdp.privacy("dpsgd", noise=1.0, clip=1.0, sample_rate=0.05, steps=250, delta_priv=1e-5,
                           neighbouring="add_remove_one")
    grouped = propdp.privacy("dpsgd", noise=1.0, clip=1.0, sample_rate=0.05, steps=1000, groups=4, delta_priv=1e-5)
    assert grouped.epsilon == plain.epsilon and grouped.steps == 1000 and grouped.groups == 4
    # the stronger relation on request, and without groups by default
    assert propdp.privacy("dpsgd", noise=1.0, clip=1.0, sample_rate=0.05, steps=1000, groups=4,
                          neighbouring="replace_one", delta_priv=1e-5).epsilon > grouped.epsilon
    assert plain.neighbouring == "add/remove-one"
    assert propdp.privacy("dpsgd", noise=1.0, clip=1.0, sample_rate=0.05, steps=250).neighbouring == "replace-one"
    with pytest.raises(propdp.ConfigError) as e:
        propdp.privacy("dpsgd", noise=1.0, clip=1.0, sample_rate=0.05, steps=1000, groups=0)
    assert e.value.field == "groups"
    with pytest.raises(propdp.ConfigError) as e:
        propdp.privacy("objective", noise=1.0, groups=2)
    assert e.value.field == "groups"


def test_solve_takes_groups_and_every_strategy_form(tmp_path):
    common = dict(delta=0.5, s2=1.0, lambda_=0.01, sigma=0.5, eta=0.1, steps=40, sample_rate=0.3, clip=1.0,
                  huber_m=1.0, noise={"law": "gaussian", "sd": 0.5})
    # a BLT without decay is the banded (1, ω): the same prediction
    blt = propdp.solve("huber", "dpsgd", groups=2,
                       strategy={"blt": {"buf_decay": [0.0], "output_scale": [0.7]}}, **common)
    banded = propdp.solve("huber", "dpsgd", groups=2, strategy={"coefficients": [1.0, 0.7]}, **common)
    plain = propdp.solve("huber", "dpsgd", groups=2, **common)
    for m in ("est_err2", "train_loss"):
        assert blt.metrics[m] == pytest.approx(banded.metrics[m], rel=1e-9)
    assert abs(blt.metrics["est_err2"] - plain.metrics["est_err2"]) > 1e-3
    with pytest.raises(propdp.ConfigError) as e:
        propdp.solve("huber", "dpsgd", strategy={"blt": {"buf_decay": [1.5], "output_scale": [0.7]}}, **common)
    assert "algorithm.strategy.blt.buf_decay[0]" in str(e.value)


def test_a_blt_in_the_fixed_order_is_dp_accountings_gaussian_release():
    dp_accounting = pytest.importorskip("dp_accounting")
    # a config budget calibrates σ; its noise multiplier σ/(clip·s) is dp_accounting's Gaussian at that ε
    r = propdp.solve("logistic", "dpsgd", delta=0.5, s2=1.0, lambda_=0.01, eta=0.5, steps=256, sample_rate=1.0,
                     clip=1.0, groups=16, epsilon=4.0, delta_priv=1e-5, neighbouring="add_remove_one",
                     strategy={"blt": {"buf_decay": [0.9431615726498437], "output_scale": [0.5654134200769894]}})
    sigma = r.record["params"]["sigma"]
    # jax_privacy's minsep sensitivity with c₀ = 1, over the BLT's norm s_BLT
    theta, omega = 0.9431615726498437, 0.5654134200769894
    c = [1.0] + [omega * theta ** (k - 1) for k in range(1, 256)]
    u = [sum(c[t - j] for j in range(0, t + 1, 16)) for t in range(256)]
    sens = math.sqrt(sum(x * x for x in u)) / math.sqrt(1 + omega * omega / (1 - theta * theta))
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.GaussianDpEvent(sigma / sens))
    assert acc.get_epsilon(1e-5) == pytest.approx(4.0, rel=2e-3)
