"""Exact (deterministic, no Monte Carlo) high-dimensional limit of unclipped
least-squares DP-GD / Poisson-subsampled DP-SGD: an independent numpy
implementation of docs/theory.md §3.2 (the reference values of
propdp-theory/src/dynamics/least_squares.rs tests came from it).

    predict(delta, s2, sd, lam, sigma, eta, q, T, K=None) -> dict of arrays (T+1,)

Conventions: X in R^{n x d}, X_ij ~ N(0, 1/d), delta = d/n, theta* ~ N(0, s2 I),
y = X theta* + e, e ~ N(0, sd^2 I),
theta_{t+1} = (1 - eta lam) theta_t - eta sum_{i in B_t} x_i (x_i^T theta_t - y_i) + eta sigma xi_t,
B_t Poisson(q).  Metrics: est_err2 = |theta - theta*|^2/d, overlap = theta^T theta*/d,
norm2 = |theta|^2/d, train_loss = (1/n) sum_i (y_i - x_i^T theta)^2/2.
"""
import numpy as np


def mp_rule(delta, K):
    """Quadrature rule  int f dmu_A ~= sum_j w_j f(x_j)  for the limiting spectral
    law mu_A of A = X^T X (Marchenko-Pastur, ratio delta, scaled by 1/delta, with
    its atom 1 - 1/delta at 0 when delta > 1).  K+1 nodes: x_0 = 0 plus the K
    Gauss-Chebyshev (2nd kind) nodes of [lam_-, lam_+].  Exact for every
    polynomial f of degree <= 2K (for every delta, including delta = 1)."""
    lm = (1 - np.sqrt(delta)) ** 2 / delta
    lp = (1 + np.sqrt(delta)) ** 2 / delta
    c, r = (lp + lm) / 2, (lp - lm) / 2
    j = np.arange(1, K + 1)
    th = j * np.pi / (K + 1)
    x = c + r * np.cos(th)                    # interior nodes, all > 0
    W = r * r * np.sin(th) ** 2 / (2 * (K + 1))   # rule for sqrt((lp-l)(l-lm))/(2 pi) dl
    w = W / x
    w0 = 1.0 - w.sum()                         # weight of the node at 0
    return np.concatenate([[0.0], x]), np.concatenate([[w0], w])


def predict(delta, s2, sd, lam, sigma, eta, q, T, K=None, return_state=False):
    """Expected metrics at t = 0..T in the proportional limit (d, n -> inf, d/n = delta).
    K = number of Chebyshev nodes; default min(T+1, 1024).  With K >= T+1 the
    quadrature is exact (all integrands are polynomials of degree <= 2t+1)."""
    if K is None:
        K = min(T + 1, 1024)
    x, w = mp_rule(delta, K)
    Lq = q * (1 + np.sqrt(delta)) ** 2 / delta + lam
    if not eta * Lq < 2:
        raise ValueError(f"eta = {eta} >= 2/L_q = {2 / Lq}")
    rho = 1.0 - eta * lam - eta * q * x        # mean contraction per eigenvalue
    g = np.zeros_like(x)                       # m_t component = g_t(l) (l th*_k + (X^T e)_k)
    p = np.zeros_like(x)                       # p_t = l g_t
    v = np.zeros_like(x)                       # noise variance per eigen-direction
    out = {k: np.empty(T + 1) for k in ("est_err2", "overlap", "norm2", "train_loss")}
    for t in range(T + 1):
        pm1sq = (p - 1.0) ** 2
        gl = sd * sd * x * g * g
        out["overlap"][t] = s2 * (w @ p)
        out["norm2"][t] = w @ (s2 * p * p + gl + v)
        out["est_err2"][t] = w @ (s2 * pm1sq + gl + v)
        # (delta/2)[mean-path residual + noise residual] + sd^2 (1 - delta)/2; the last term
        # = sd^2/2 [(1-delta)_+ - delta (1-1/delta)_+]: the n-d extra residual directions when
        # delta < 1, minus the spurious sd^2 of the atom at 0 (no U-direction there) when delta > 1.
        tl = 0.5 * delta * (w @ (pm1sq * (s2 * x + sd * sd)) + w @ (x * v)) + 0.5 * sd * sd * (1.0 - delta)
        out["train_loss"][t] = tl
        if t == T:
            break
        wbar = 2.0 * tl                                    # E|r_t|^2 / n
        v = rho * rho * v + eta * eta * sigma * sigma + eta * eta * q * (1 - q) * wbar * x
        g = rho * g + eta * q
        p = x * g
    if return_state:
        out["_nodes"], out["_weights"], out["_v"] = x, w, v
    return out


def predict_empirical(lams, n, s2, sd, lam, sigma, eta, q, T):
    """Same homogenised recursion, but on an empirical spectrum (the d eigenvalues
    of a given X^T X, zeros included) with n samples: used to separate the
    closure error from the spectrum's finite-size error."""
    x = np.asarray(lams, float)
    d = x.size
    w = np.full(d, 1.0 / d)
    delta = d / n
    pos = x > 1e-9 * x.max()
    rho = 1.0 - eta * lam - eta * q * x
    g = np.zeros(d); p = np.zeros(d); v = np.zeros(d)
    out = {k: np.empty(T + 1) for k in ("est_err2", "overlap", "norm2", "train_loss")}
    for t in range(T + 1):
        pm1sq = (p - 1) ** 2
        gl = sd * sd * x * g * g
        out["overlap"][t] = s2 * (w @ p)
        out["norm2"][t] = w @ (s2 * p * p + gl + v)
        out["est_err2"][t] = w @ (s2 * pm1sq + gl + v)
        res = w @ (pm1sq * (s2 * x + sd * sd * pos)) + w @ (x * v)
        tl = 0.5 * delta * res + 0.5 * sd * sd * max(0, n - pos.sum()) / n
        out["train_loss"][t] = tl
        if t == T:
            break
        v = rho * rho * v + eta ** 2 * sigma ** 2 + eta ** 2 * q * (1 - q) * 2 * tl * x
        g = rho * g + eta * q
        p = x * g
    return out


if __name__ == "__main__":
    import time
    t0 = time.time()
    o = predict(0.5, 1.0, 0.5, 0.1, 0.5, 0.3, 0.2, 20)
    print({k: v[[0, 1, 5, 20]] for k, v in o.items()}, time.time() - t0)


def stability_gain(delta, lam, eta, q, K=4000):
    """Loop gain G = eta^2 q(1-q) delta * int l^2 / (1 - rho(l)^2) dmu(l) of the
    renewal equation for wbar_t = E|r_t|^2/n.  The second moments stay bounded
    iff |rho| < 1 on the support (eta L_q < 2) AND G < 1; for G > 1 they grow
    geometrically even though the mean converges."""
    x, w = mp_rule(delta, K)
    rho = 1 - eta * lam - eta * q * x
    if np.any(np.abs(rho[1:]) >= 1) or (delta > 1 and abs(rho[0]) >= 1 and lam > 0):
        return np.inf
    f = np.where(x > 0, x * x / np.where(x > 0, 1 - rho * rho, 1.0), 0.0)
    return eta * eta * q * (1 - q) * delta * (w @ f)


def eta_max_second_moment(delta, lam, q):
    """Largest eta with G < 1 and eta L_q < 2 (bisection)."""
    Lq = q * (1 + np.sqrt(delta)) ** 2 / delta + lam
    lo, hi = 0.0, 2.0 / Lq * (1 - 1e-12)
    if stability_gain(delta, lam, hi, q) < 1:
        return hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if stability_gain(delta, lam, mid, q) < 1:
            lo = mid
        else:
            hi = mid
    return lo


def mp_stieltjes(delta, z):
    """m(z) = int dmu_A(l)/(l - z) for real z outside the support (atom included)."""
    g = delta
    zw = delta * z                                  # A = W/delta, m_A(z) = delta m_W(delta z)
    u = zw - 1 - g
    mw = (1 - g - zw + u * np.sqrt(1 - 4 * g / (u * u))) / (2 * g * zw)
    return delta * mw


def stability_gain_closed(delta, lam, eta, q):
    """Closed form of stability_gain by partial fractions:
    G = (1-q) delta/q * [ -1 + (a^2 m(-a) - b^2 m(b)) / (a + b) ],  a = lam/q, b = (2 - eta lam)/(eta q)."""
    a = lam / q
    b = (2 - eta * lam) / (eta * q)
    ma = mp_stieltjes(delta, -a) if a > 0 else 0.0   # a^2 m(-a) -> 0 as a -> 0 (also with the atom)
    return (1 - q) * delta / q * (-1 + (a * a * ma - b * b * mp_stieltjes(delta, b)) / (a + b))
