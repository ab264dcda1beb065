"""Route B: event-time sample side.

A path's ĝ_s, ĥ_s, D̂_s vanish unless it is selected at s (S_s = 1); its r_t enters the kernels only at its own
selection times (and the training loss, which is estimated from the paths selected at t: S_t is independent
of r_t). So per path only its events t_1 < t_2 < … matter:
  w_{t_e} ~ conditional Gaussian given (ν, w_{t_1..t_{e−1}})        (exact: the marginal law at the event times)
  r_{t_e} = w_{t_e} − η Σ_{e'<e} R_θ(t_e, t_e') ĝ_{e'}
  C_g(t, s) = a/N Σ_paths Σ_{events at t and s} ĝ ĝ,   R_g(t, s) by reverse mode over the path's events.
This reproduces the full-memory DMFT's estimators exactly in law (not CRN-identical: w is drawn at the events
only). Work per path O(k³) for k ≈ qT events (batched conditioning), instead of O(T²).

The deterministic (coordinate) side is pluggable: `coord='fine'` = the exact fine-grid recursions of dynamics/full_memory.rs
(O(T³) deterministic, T² memory); `coord='binned'` applies the slow-time compression of the kernels (see
NOTES §5) before they are used.
"""
import numpy as np
import time
from dmft import labels, loss_eval, sigmoid


def solve_event(p, d, seed_ev=99, bin_b=None, bin_diag=False, keep=False, verbose=False):
    T, a, eta = p.T, 1.0 / p.delta, p.eta
    N = d['z'].shape[1]
    nu, y = labels(p, d)
    S = d['S'].copy()
    S[T] = True                          # last step: training loss over all paths (no kernel use)
    cnt = S[:T].sum(0)
    Kcap = int(cnt.max()) + 1
    zev = np.random.default_rng(seed_ev).standard_normal((N, Kcap + 1))
    ev_t = np.zeros((N, Kcap), int); ev_w = np.zeros((N, Kcap)); ev_g = np.zeros((N, Kcap))
    ev_h = np.zeros((N, Kcap)); ev_d = np.zeros((N, Kcap)); nev = np.zeros(N, int)
    rth = np.zeros((T + 2, T + 1)); cth = np.zeros((T + 1, T + 1))
    rg = np.zeros((T + 1, T + 1)); cg = np.zeros((T + 1, T + 1))
    rg_raw = np.zeros((T + 1, T + 1)); cg_raw = np.zeros((T + 1, T + 1))
    amp = np.zeros(T + 2)
    out = {k: np.zeros(T + 1) for k in ('est_err2', 'overlap', 'norm2', 'train_loss')}
    score = (y > 0) - sigmoid(nu) if p.loss == 'logistic' else None
    decay = 1 - eta * p.lam
    s2 = p.s2
    tim = dict(cond=0.0, path=0.0, rev=0.0, det=0.0)
    t0 = time.time()
    for t in range(T + 1):
        P = np.nonzero(S[t])[0]
        k_of = nev[P]
        # ---- w_t for the selected paths, conditional on ν and their earlier events (τ ≥ 1)
        tt = time.time()
        w = np.zeros(len(P))
        if t > 0:
            for k in np.unique(k_of):
                sub = np.nonzero(k_of == k)[0]
                pp = P[sub]
                taus = ev_t[pp, :k]                                   # (n, k)
                wv = ev_w[pp, :k]
                valid = taus >= 1
                # covariance of (ν, w_τ1..τk) with invalid (τ = 0) entries replaced by unit, uncorrelated dummies
                n = len(pp)
                Sig = np.zeros((n, k + 1, k + 1))
                Sig[:, 0, 0] = s2
                if k > 0:
                    mt = s2 * amp[taus] * valid
                    Sig[:, 0, 1:] = mt; Sig[:, 1:, 0] = mt
                    Cm = cth[taus[:, :, None], taus[:, None, :]] * (valid[:, :, None] & valid[:, None, :])
                    Cm = Cm + np.eye(k)[None] * (~valid)[:, :, None]
                    Sig[:, 1:, 1:] = Cm
                cvec = np.zeros((n, k + 1))
                cvec[:, 0] = s2 * amp[t]
                if k > 0:
                    cvec[:, 1:] = cth[t, taus] * valid
                x = np.zeros((n, k + 1)); x[:, 0] = nu[pp]
                if k > 0:
                    x[:, 1:] = wv * valid
                beta = np.linalg.solve(Sig + 1e-13 * np.eye(k + 1)[None], cvec[:, :, None])[:, :, 0]
                var = cth[t, t] - np.einsum('ij,ij->i', beta, cvec)
                w[sub] = np.einsum('ij,ij->i', beta, x) + np.sqrt(np.maximum(var, 0)) * zev[pp, k]
        tim['cond'] += time.time() - tt
        tt = time.time()
        # ---- r_t with the Onsager sum over the path's own events
        Kmax = int(k_of.max()) if len(P) else 0
        if Kmax > 0:
            taus = ev_t[P, :Kmax]; mask = np.arange(Kmax)[None, :] < k_of[:, None]
            Rv = rth[t, taus] * mask
            r = w - eta * np.einsum('ij,ij->i', Rv, ev_g[P, :Kmax])
            mem = np.einsum('ij,ij->i', Rv, ev_d[P, :Kmax])
        else:
            r = w.copy(); mem = np.zeros(len(P))
        l, d1, d2 = loss_eval(p, y[P], r)
        unc = np.abs(d1) < p.clip
        g = np.clip(d1, -p.clip, p.clip)
        h = np.where(unc, d2, 0.0)
        dv = np.where(unc, -d2 - eta * d2 * mem, 0.0) if p.loss == 'huber' else np.zeros(len(P))
        m_t = s2 * amp[t]
        out['est_err2'][t] = cth[t, t] - 2 * m_t + s2
        out['overlap'][t] = m_t; out['norm2'][t] = cth[t, t]
        out['train_loss'][t] = l.mean()
        if t == T:
            tim['path'] += time.time() - tt
            break
        # ---- kernels, row t
        crow = np.zeros(t + 1)
        crow[t] = a * np.sum(g * g) / N
        if Kmax > 0:
            np.add.at(crow, taus[mask], (g[:, None] * ev_g[P, :Kmax])[mask] * a / N)
        tim['path'] += time.time() - tt
        tt = time.time()
        # reverse mode over the path's events: b_t = 1, b_e = −η ĥ_e Σ_{e'>e} R_θ(t_e', t_e) b_e'
        rrow = np.zeros(t + 1)
        rrow[t] = a * np.sum(h) / N
        hp = h > 0
        if Kmax > 0 and hp.any():
            Q = P[hp]; kq = k_of[hp]; Km = int(kq.max())
            if Km > 0:
                tq = ev_t[Q, :Km]; mq = np.arange(Km)[None, :] < kq[:, None]
                hq = ev_h[Q, :Km] * mq
                times = np.concatenate([tq, np.full((len(Q), 1), t)], 1)      # (n, Km+1), last = t
                b = np.zeros((len(Q), Km + 1)); b[:, Km] = 1.0
                # with padding: padded events have ĥ = 0 → b = 0; their position after real events is harmless
                # because R_θ(padded time, ·) multiplies b = 0. Real events are at positions < kq, the current
                # event t sits at position Km; positions kq..Km−1 are padding.
                for e in range(Km - 1, -1, -1):
                    later = times[:, e + 1:]                                  # (n, Km−e)
                    Rl = rth[later, times[:, e:e + 1]]
                    b[:, e] = -eta * hq[:, e] * np.einsum('ij,ij->i', Rl, b[:, e + 1:])
                contrib = (h[hp][:, None] * b[:, :Km])[mq] * a / N
                np.add.at(rrow, tq[mq], contrib)
        tim['rev'] += time.time() - tt
        tt = time.time()
        rg_raw[t, :t + 1] = rrow; cg_raw[t, :t + 1] = crow
        if bin_b is not None:
            rrow = bin_row(rrow, t, bin_b, bin_diag); crow = bin_row(crow, t, bin_b, bin_diag)
        rg[t, :t + 1] = rrow
        cg[t, :t + 1] = crow; cg[:t + 1, t] = crow
        mg = a * np.sum(g * score[P]) / N if p.loss == 'logistic' else a * np.sum(dv) / N
        drift = rg[t, :t + 1] @ amp[:t + 1] + mg
        # append the event
        kk = nev[P]
        ev_t[P, kk] = t; ev_w[P, kk] = w; ev_g[P, kk] = g; ev_h[P, kk] = h; ev_d[P, kk] = dv
        nev[P] += 1
        # ---- coordinate side (fine grid, as dynamics/full_memory.rs)
        rth[t + 1, t] = 1.0
        if t > 0:
            rth[t + 1, :t] = decay * rth[t, :t] - eta * (rg[t, 1:t + 1] @ rth[1:t + 1, :t])
        amp[t + 1] = decay * amp[t] - eta * drift
        R1 = rth[t + 1, :t + 1]
        v = R1 @ cg[:t + 1, :t + 1]
        Rp = rth[:t + 2, :t + 1]
        c2 = s2 * amp[t + 1] * amp[:t + 2] + eta ** 2 * (Rp @ v) + (eta * p.sigma) ** 2 * (Rp @ R1)
        cth[t + 1, :t + 2] = c2; cth[:t + 2, t + 1] = c2
        tim['det'] += time.time() - tt
        if verbose and t % 100 == 0:
            print(t, '%.1f' % (time.time() - t0), flush=True)
    out['time'] = time.time() - t0
    out['tim'] = tim
    if keep:
        out['kern'] = dict(rth=rth[:T + 1], rg=rg, cg=cg, cth=cth, amp=amp[:T + 1], rg_raw=rg_raw, cg_raw=cg_raw)
    return out


def bin_row(row, t, b, bin_diag):
    """Slow-time pooling of a kernel row in its second argument: the off-diagonal entries s < t are replaced
    by their mean over the bin J(s) = [⌊s/b⌋b, ⌊s/b⌋b + b) ∩ [0, t) (the row's quadrature at resolution b);
    the diagonal is kept (it is O(q), the off-diagonal O(q²))."""
    out = row.copy()
    hi = t - bin_diag if bin_diag else t          # bin_diag = width of the exact near-diagonal band
    nb = (hi + b - 1) // b
    for J in range(nb):
        s0, s1 = J * b, min(J * b + b, hi)
        if s1 > s0:
            out[s0:s1] = row[s0:s1].mean()
    return out
