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
