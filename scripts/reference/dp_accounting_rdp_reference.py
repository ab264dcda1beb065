#!/usr/bin/env python3
"""Reference RDP values of one step of the Poisson-subsampled Gaussian at
fractional and integer orders, from two independent computations, for
crates/propdp-accountant/tests/dpsgd_accountant.rs:

- `quadrature`: 40-digit mpmath quadrature (cut at the integrand's peaks) of
  A_α = E_{x~N(0,z²)}[(1 − q + q e^{(2x−1)/(2z²)})^α], rdp = log(A_α)/(α − 1);
- `dp_accounting`: Google's dp-accounting 0.6.0 (empty where its series gives
  up after 1000 terms and returns inf: q ≥ 0.1 with α < 2). At fractional
  orders below ~4 it is above the quadrature by up to 2× (conservative).

    pip install dp-accounting==0.6.0 mpmath
    python scripts/reference/dp_accounting_rdp_reference.py > crates/propdp-accountant/tests/data/rdp_reference.csv
"""
import itertools
import logging

import mpmath as mp
from dp_accounting.rdp import rdp_privacy_accountant as rdp

logging.disable(logging.WARNING)
mp.mp.dps = 40


def quadrature(z, q, a):
    z, q, a = mp.mpf(z), mp.mpf(q), mp.mpf(a)
    f = lambda x: mp.npdf(x, 0, z) * (1 - q + q * mp.e ** ((2 * x - 1) / (2 * z * z))) ** a  # noqa: E731
    # the integrand peaks near x = α (where the mixture's α-th power tilts N(0, z²) to N(α, z²))
    cuts = sorted({-20 * z, 0, 0.5, 1, 2, 5, a / 2, a - 10 * z, a, a + 10 * z, 20 * z + 1})
    return mp.log(mp.quad(f, [-mp.inf, *cuts, mp.inf])) / (a - 1)


print("noise_multiplier,sample_rate,order,quadrature,dp_accounting")
for z, q, order in itertools.product([0.5, 0.8, 1.1, 2.0, 5.0], [0.001, 0.01, 0.1, 0.5],
                                     [1.0625, 1.5, 1.75, 2.25, 3.5, 7.75, 12.5, 32.25, 63.75, 2.0, 8.0]):
    theirs = float(rdp._compute_rdp_poisson_subsampled_gaussian(q, z, [order])[0])
    print(f"{z},{q},{order},{float(quadrature(z, q, order))!r},{'' if theirs == float('inf') else repr(theirs)}")
