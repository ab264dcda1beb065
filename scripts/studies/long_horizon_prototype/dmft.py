"""Compact numpy re-implementation of propdp's full-memory DMFT (docs/theory.md §3, §3.1;
crates/propdp-theory/src/dynamics/full_memory.rs, solve_scramble), with options for the long-horizon
experiments.

Conventions exactly as dynamics/full_memory.rs:
  rth[t, s] = R_θ(t,s) (s < t), rth[t+1, t] = 1
  rg[t, s]  = R_g(t,s) = a E[ĥ_t ∂r_t/∂w_s] (s ≤ t, reverse mode, b_t = 1)
  cg[t, s]  = a E[ĝ_t ĝ_s]
  cth       = s² A Aᵀ + η² R_θ C_g R_θᵀ + η²σ² R_θ R_θᵀ
  drift D_t = Σ_k R_g(t,k) A_k + M_g(t) (pathwise; score for standard logistic)
Random numbers: plain MC (numpy Generator) so that variants can share them (CRN).
"""
import numpy as np
from scipy.linalg import solve_triangular
import time

PIVOT_TOL = 1e-6


def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def softplus(x):
    return np.logaddexp(0.0, x)


class P:
    def __init__(self, loss='huber', delta=1.0, s2=1.0, lam=0.5, sigma=1.0, eta=0.4, T=50, q=1.0,
                 clip=np.inf, noise_sd=0.5, M=1.0):
        self.__dict__.update(dict(loss=loss, delta=delta, s2=s2, lam=lam, sigma=sigma, eta=eta, T=T,
                                  q=q, clip=clip, noise_sd=noise_sd, M=M))

    def __repr__(self):
        return 'P(%s)' % ', '.join('%s=%r' % kv for kv in self.__dict__.items())


def loss_eval(p, y, r):
    if p.loss == 'huber':
        e = y - r
        inside = np.abs(e) <= p.M
        l = np.where(inside, 0.5 * e * e, p.M * np.abs(e) - 0.5 * p.M ** 2)
        d1 = np.where(inside, -e, -p.M * np.sign(e))
        d2 = inside.astype(float)
        return l, d1, d2
    if p.loss == 'logistic':
        t = -y * r
        s = sigmoid(t)
        return softplus(t), -y * s, s * (1 - s)
    raise ValueError(p.loss)


def draws(p, N, seed, T=None):
    """All random numbers of one run (CRN across variants): z[0] = ν/s, z[1..T] for the
    w-Cholesky, the label uniform, the selections, and two more normal arrays (xi_u, xi_n)
    used by the ũ-representation generators."""
    T = p.T if T is None else T
    rng = np.random.default_rng(seed)
    d = {}
    d['z'] = rng.standard_normal((T + 1, N))
    d['ulab'] = rng.random(N)
    d['S'] = (rng.random((T + 1, N)) < p.q) if p.q < 1 else np.ones((T + 1, N), bool)
    d['S'][T] = True
    d['xi_u'] = rng.standard_normal((T + 1, N))
    d['xi_n'] = rng.standard_normal((T + 1, N))
    return d


def labels(p, d):
    nu = np.sqrt(p.s2) * d['z'][0]
    if p.loss == 'huber':
        from scipy.special import ndtri
        e = p.noise_sd * ndtri(d['ulab'])
        return nu, nu + e
    if p.loss == 'logistic':
        return nu, np.where(d['ulab'] < sigmoid(nu), 1.0, -1.0)
    raise ValueError


def solve_full(p, d, keep=False, verbose=False, W=None, eps=None):
    """Exact full-memory DMFT, w by the Cholesky of Cov(ν, w_1..w_T) as in dynamics/full_memory.rs."""
    T, a, eta = p.T, 1.0 / p.delta, p.eta
    N = d['z'].shape[1]
    nu, y = labels(p, d)
    S = d['S']
    Z = d['z']
    rth = np.zeros((T + 2, T + 1)); cth = np.zeros((T + 1, T + 1))
    rg = np.zeros((T + 1, T + 1)); cg = np.zeros((T + 1, T + 1))
    amp = np.zeros(T + 2)
    chol = np.zeros((T + 1, T + 1)); chol[0, 0] = np.sqrt(p.s2)
    G = np.zeros((T + 1, N)); H = np.zeros((T + 1, N)); DV = np.zeros((T + 1, N))
    out = {k: np.zeros(T + 1) for k in ('est_err2', 'overlap', 'norm2', 'train_loss')}
    score = (y > 0) - sigmoid(nu) if p.loss == 'logistic' else None
    decay = 1 - eta * p.lam
    gmax = min(p.clip, p.M if p.loss == 'huber' else 1.0)
    bound = np.zeros(T + 1); Wt = np.zeros(T + 1, int)
    Wcur = 0
    t0 = time.time()
    for t in range(T + 1):
        if t == 0:
            w = np.zeros(N)
        else:
            cov = np.concatenate([[p.s2 * amp[t]], cth[t, 1:t]])
            L = chol[:t, :t]
            if np.all(np.diag(L) > 0):
                row = solve_triangular(L, cov, lower=True)
            else:
                row = np.zeros(t)
                for j in range(t):
                    row[j] = (cov[j] - row[:j] @ L[j, :j]) / L[j, j] if L[j, j] > 0 else 0.0
            chol[t, :t] = row
            piv = cth[t, t] - row @ row
            if piv < -PIVOT_TOL * max(cth[t, t], 1e-300):
                raise RuntimeError('not PD at %d' % t)
            chol[t, t] = np.sqrt(piv) if piv > PIVOT_TOL * cth[t, t] else 0.0
            w = chol[t, :t + 1] @ Z[:t + 1]
        # truncation lag: fixed W, or adaptive from the run-time bound η·gmax·Σ_{s<t−W}|R_θ(t,s)| ≤ eps
        if eps is not None:
            tail = np.cumsum(np.abs(rth[t, :t]))  # tail[j] = Σ_{s≤j}|R_θ(t,s)|
            while Wcur < t and eta * gmax * tail[t - Wcur - 1] > eps:
                Wcur += 1
            Wl = Wcur
        else:
            Wl = t if W is None else min(W, t)
        Wt[t] = Wl
        lo = t - Wl
        bound[t] = eta * gmax * np.abs(rth[t, :lo]).sum()
        r = w - eta * (rth[t, lo:t] @ G[lo:t]) if t > 0 else w
        mem = rth[t, lo:t] @ DV[lo:t] if t > 0 else np.zeros(N)
        l, d1, d2 = loss_eval(p, y, r)
        sel = S[t]
        unc = sel & (np.abs(d1) < p.clip)
        G[t] = np.where(sel, np.clip(d1, -p.clip, p.clip), 0.0)
        H[t] = np.where(unc, d2, 0.0)
        if p.loss == 'huber':
            DV[t] = np.where(unc, -d2 - eta * d2 * mem, 0.0)
        m_t = p.s2 * amp[t]
        out['est_err2'][t] = cth[t, t] - 2 * m_t + p.s2
        out['overlap'][t] = m_t
        out['norm2'][t] = cth[t, t]
        out['train_loss'][t] = l.mean()
        if t == T:
            break
        # reverse mode (restricted to the paths with ĥ_t ≠ 0)
        idx = np.nonzero(H[t])[0]
        B = np.zeros((t + 1 - lo, len(idx)))
        B[-1] = 1.0
        Hs = H[lo:t + 1, idx]
        for k in range(t - 1, lo - 1, -1):
            B[k - lo] = -eta * Hs[k - lo] * (rth[k + 1:t + 1, k] @ B[k + 1 - lo:])
        rg[t, lo:t + 1] = a * (B @ Hs[-1]) / N
        mg = a * np.mean(G[t] * score) if p.loss == 'logistic' else a * DV[t].mean()
        drift = rg[t, :t + 1] @ amp[:t + 1] + mg
        c = a * (G[:t + 1] @ G[t]) / N
        cg[t, :t + 1] = c; cg[:t + 1, t] = c
        rth[t + 1, t] = 1.0
        if t > 0:
            rth[t + 1, :t] = decay * rth[t, :t] - eta * (rg[t, 1:t + 1] @ rth[1:t + 1, :t])
        amp[t + 1] = decay * amp[t] - eta * drift
        R1 = rth[t + 1, :t + 1]
        v = R1 @ cg[:t + 1, :t + 1]
        Rp = rth[:t + 2, :t + 1]
        crow = p.s2 * amp[t + 1] * amp[:t + 2] + eta ** 2 * (Rp @ v) + (eta * p.sigma) ** 2 * (Rp @ R1)
        cth[t + 1, :t + 2] = crow; cth[:t + 2, t + 1] = crow
        if verbose and t % 50 == 0:
            print(t, time.time() - t0, flush=True)
    if keep:
        out['kern'] = dict(rth=rth[:T + 1], rg=rg, cg=cg, cth=cth, amp=amp[:T + 1])
    out['time'] = time.time() - t0
    out['bound'] = bound; out['W'] = Wt
    return out


def load_ref(path):
    import json
    d = json.loads(open(path).readline())
    return {k: np.array(v) for k, v in d['per_step'].items()}, {k: np.array(v) for k, v in d['per_step_stderr'].items()}


def solve_u(p, d, W=30, gen='exact', Wc=10, part=None, Wg=None, keep=False, verbose=False, full_cth=False):
    """DMFT with the sample fields generated through the coordinate-side representation
        w_t = A_t ν + Σ_{s=t−W}^{t−1} R_θ(t,s) v_s,   v_s = −η ũ_s + ησ ξ̃_s,
    ũ a centred Gaussian process with covariance C_g generated causally (ũ_t after ĝ_t):
      gen='exact': conditional on all past ũ (sequential Cholesky of C_g; O(N T²));
      gen='dyadic': conditional on the last Wc values and block sums over `part` (a gen.Dyadic).
    Onsager sum, pathwise-drift memory and reverse mode truncated at lag W (reverse mode at Wg ≤ W
    if given). Metrics use C_θ(t,t) from the band (consistent with the generated w)."""
    from gen import features
    T, a, eta = p.T, 1.0 / p.delta, p.eta
    Wg = W if Wg is None else Wg
    N = d['z'].shape[1]
    nu, y = labels(p, d)
    S = d['S']; XU = d['xi_u']; XN = d['xi_n']
    rth = np.zeros((T + 2, T + 1)); rg = np.zeros((T + 1, T + 1)); cg = np.zeros((T + 1, T + 1))
    amp = np.zeros(T + 2)
    Pc = np.zeros((T + 2, T + 2))                     # 2D prefix sums of C_g
    Lg = np.zeros((T + 1, T + 1)) if gen == 'exact' else None
    G = np.zeros((T + 1, N)); H = np.zeros((T + 1, N)); DV = np.zeros((T + 1, N))
    U = np.zeros((T + 1, N)); Uc = np.zeros((T + 2, N)); V = np.zeros((T + 1, N))
    out = {k: np.zeros(T + 1) for k in ('est_err2', 'overlap', 'norm2', 'train_loss')}
    out['norm2_full'] = np.zeros(T + 1)
    score = (y > 0) - sigmoid(nu) if p.loss == 'logistic' else None
    decay = 1 - eta * p.lam
    gmax = min(p.clip, p.M if p.loss == 'huber' else 1.0)
    bound = np.zeros(T + 1); nfeat = np.zeros(T + 1, int)
    t0 = time.time()
    for t in range(T + 1):
        lo = max(0, t - W)
        w = amp[t] * nu + (rth[t, lo:t] @ V[lo:t] if t > 0 else 0.0)
        bound[t] = eta * gmax * np.abs(rth[t, :lo]).sum()
        r = w - eta * (rth[t, lo:t] @ G[lo:t]) if t > 0 else w
        mem = rth[t, lo:t] @ DV[lo:t] if t > 0 else np.zeros(N)
        l, d1, d2 = loss_eval(p, y, r)
        sel = S[t]
        unc = sel & (np.abs(d1) < p.clip)
        G[t] = np.where(sel, np.clip(d1, -p.clip, p.clip), 0.0)
        H[t] = np.where(unc, d2, 0.0)
        if p.loss == 'huber':
            DV[t] = np.where(unc, -d2 - eta * d2 * mem, 0.0)
        # C_θ(t,t) from the band (what the generated w has)
        Rb = rth[t, lo:t]
        ctt = p.s2 * amp[t] ** 2 + eta ** 2 * (Rb @ cg[lo:t, lo:t] @ Rb) + (eta * p.sigma) ** 2 * (Rb @ Rb)
        m_t = p.s2 * amp[t]
        out['est_err2'][t] = ctt - 2 * m_t + p.s2
        out['overlap'][t] = m_t
        out['norm2'][t] = ctt
        out['train_loss'][t] = l.mean()
        if full_cth:
            Rf = rth[t, :t]
            out['norm2_full'][t] = p.s2 * amp[t] ** 2 + eta ** 2 * (Rf @ cg[:t, :t] @ Rf) + (eta * p.sigma) ** 2 * (Rf @ Rf)
        if t == T:
            break
        # reverse mode over the last Wg lags, on the paths with ĥ_t ≠ 0
        log = max(0, t - Wg)
        idx = np.nonzero(H[t])[0]
        B = np.zeros((t + 1 - log, len(idx)))
        B[-1] = 1.0
        Hs = H[log:t + 1, idx]
        for k in range(t - 1, log - 1, -1):
            B[k - log] = -eta * Hs[k - log] * (rth[k + 1:t + 1, k] @ B[k + 1 - log:])
        rg[t, log:t + 1] = a * (B @ Hs[-1]) / N
        mg = a * np.mean(G[t] * score) if p.loss == 'logistic' else a * DV[t].mean()
        drift = rg[t, log:t + 1] @ amp[log:t + 1] + mg
        c = a * (G[:t + 1] @ G[t]) / N               # full row kept for diagnostics/prefix sums;
        cg[t, :t + 1] = c; cg[:t + 1, t] = c          # the generator uses only its features of it
        Pc[t + 1, 1:t + 2] = Pc[t, 1:t + 2] + np.cumsum(c)      # P[i,j] = Σ_{a<i,b<j} C
        Pc[1:t + 2, t + 1] = Pc[1:t + 2, t] + np.cumsum(c)
        # ũ_t
        if gen == 'exact':
            if t > 0:
                Lg[t, :t] = solve_triangular(Lg[:t, :t], c[:t], lower=True)
            piv = c[t] - Lg[t, :t] @ Lg[t, :t]
            Lg[t, t] = np.sqrt(max(piv, 0.0))
            U[t] = Lg[t, :t + 1] @ XU[:t + 1]
            nfeat[t] = t
        else:
            iv = features(t, Wc, part)
            nfeat[t] = len(iv)
            if iv:
                s_ = np.array([u for u, _ in iv]); e_ = np.array([v for _, v in iv])
                Sff = Pc[e_][:, e_] - Pc[s_][:, e_] - Pc[e_][:, s_] + Pc[s_][:, s_]
                Sft = (Pc[e_, t + 1] - Pc[e_, t]) - (Pc[s_, t + 1] - Pc[s_, t])
                Sff = Sff + 1e-12 * np.trace(Sff) / len(iv) * np.eye(len(iv))
                beta = np.linalg.solve(Sff, Sft)
                var = c[t] - beta @ Sft
                F = Uc[e_] - Uc[s_]
                U[t] = beta @ F + np.sqrt(max(var, 0.0)) * XU[t]
            else:
                U[t] = np.sqrt(c[t]) * XU[t]
        Uc[t + 1] = Uc[t] + U[t]
        V[t] = -eta * U[t] + eta * p.sigma * XN[t]
        rth[t + 1, t] = 1.0
        if t > 0:
            rth[t + 1, :t] = decay * rth[t, :t] - eta * (rg[t, max(1, log):t + 1] @ rth[max(1, log):t + 1, :t])
        amp[t + 1] = decay * amp[t] - eta * drift
        if verbose and t % 100 == 0:
            print(t, '%.1f' % (time.time() - t0), flush=True)
    out['time'] = time.time() - t0
    out['bound'] = bound; out['nfeat'] = nfeat
    if keep:
        out['kern'] = dict(rth=rth[:T + 1], rg=rg, cg=cg, amp=amp[:T + 1])
    return out
