#!/usr/bin/env python3
"""Reference values of the truncated moments of a scale-mixture noise plus a
Gaussian, z = ε + √v·G: P(|z| ≤ c) and E[z² 1{|z| ≤ c}], by mpmath at 40
digits, independently of propdp's quadrature rule: for the mixing law of ε
(S² = 2b²W, W ~ Exp(1) for Laplace(b); S² = scale²(ν/2)/U, U ~ Gamma(ν/2)
for Student-t) the expectation over x = ln W (or ln U) of the Gaussian
moments at variance S² + v, split at many breakpoints.

    pip install mpmath
    python scripts/reference/mixture_reference.py > crates/propdp-theory/tests/data/mixture_moments.csv
"""
import mpmath as mp

mp.mp.dps = 40
LAWS = [("laplace", 0.7, 0.0), ("student_t", 1.0, 1.0), ("student_t", 0.5, 2.5), ("student_t", 0.5, 3.0),
        ("student_t", 0.5, 10.0)]
V = ["1e-4", "0.05", "0.5", "5"]
C = ["0.05", "0.3", "1", "3", "20", "200"]
BREAKS = [-400, -200, -120, -80, -60, -40, -30, -20, -15, -12, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 5]


def moments(w, c):
    x = c / mp.sqrt(2 * w)
    p = mp.erf(x)
    return p, w * (p - 2 * x / mp.sqrt(mp.pi) * mp.exp(-x * x))


print("law,scale,dof,v,c,p,t2")
for law, scale, dof in LAWS:
    scale_ = mp.mpf(scale)
    if law == "laplace":
        k, variance = mp.mpf(1), lambda x: 2 * scale_ ** 2 * mp.exp(x)
    else:
        k, variance = mp.mpf(dof) / 2, lambda x: scale_ ** 2 * mp.mpf(dof) / 2 * mp.exp(-x)
    for v in V:
        for c in C:
            vv, cc = mp.mpf(v), mp.mpf(c)
            dens = lambda x: mp.exp(k * x - mp.exp(x) - mp.loggamma(k))
            p = mp.quad(lambda x: dens(x) * moments(variance(x) + vv, cc)[0], BREAKS)
            t = mp.quad(lambda x: dens(x) * moments(variance(x) + vv, cc)[1], BREAKS)
            print(f"{law},{scale},{dof},{v},{c},{mp.nstr(p, 20)},{mp.nstr(t, 20)}", flush=True)
