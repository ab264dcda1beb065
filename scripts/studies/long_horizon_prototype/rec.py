"""Recursion solver (NOTES §4, §6): every path carries a copy of the coordinate process as its field,
and the Onsager / drift memories obey the same recursion, so per path-step work is O(Wg + Wc + K)
independent of the memory of R_θ. R_g(t, ·) is kept for lags ≤ Wg (reverse mode over those lags);
optionally its far field on dyadic blocks (`far=True`, small q).

  w_t = A_t ν + θ̃_t,   θ̃_{t+1} = (1−ηλ)θ̃_t − η[ũ_t + Σ_k R_g(t,k) θ̃_k] + ησ ξ̃_t
  O_{t+1} = (1−ηλ)O_t − η Σ_k R_g(t,k) O_k + ĝ_t,        r_t = w_t − η O_t
  P_{t+1} = (1−ηλ)P_t − η Σ_k R_g(t,k) P_k + D̂_t,        D̂_t = S_t(∂_νℓ' − η ℓ'' P_t)  (Huber)
ũ by the compressed conditional generator of lean.py (window Wc + dyadic block sums).
Metrics: overlap = s²A_t; norm2 either from the R_θ band formula (needs Wm-band of R_θ and C_g;
`metric='band'`) or by Monte Carlo over the field copies, E[w_t²] (`metric='mc'`); both are returned.
"""
import numpy as np
import time
from dmft import labels, loss_eval, sigmoid


def solve_rec(p, d, Wg=20, Wc=10, part=None, Wm=40, gen='dyadic', verbose=False, rb_sel=False, gpart=None, rev_every=1, rev_full_until=0, metric_cov=False):
    """gpart: a gen.Dyadic with Wc = L_near; if given, the R_g(t, k) used in the recursions (R1)/(A1') are replaced,
    for k < t − L_near, by their mean over the dyadic block of k (= block sums of the per-path histories)."""
    T, a, eta = p.T, 1.0 / p.delta, p.eta
    N = d['z'].shape[1]
    nu, y = labels(p, d)
    S = d['S']; XU = d['xi_u']; XN = d['xi_n']
    Wbuf = max(Wg, Wc, Wm) + 1
    slot = lambda s: s % Wbuf
    Gr = np.zeros((Wbuf, N)); Hr = np.zeros((Wbuf, N))
    Th = np.zeros((Wbuf, N)); Or = np.zeros((Wbuf, N)); Pr = np.zeros((Wbuf, N)); Ur = np.zeros((Wbuf, N))
    Wr = max(Wg, Wm)
    rb = np.zeros((T + 2, Wr + 1))       # rb[t, l] = R_θ(t, t−l), l ≤ Wr (band: exact given R_g's band)
    rgb = np.zeros((T + 1, Wg + 1))      # rgb[t, l] = R_g(t, t−l)
    cgb = np.zeros((T + 1, Wbuf))        # cgb[t, l] = C_g(t, t−l)
    amp = np.zeros(T + 2)
    Kmax = 256
    UBa = np.zeros((Kmax, N)); GBa = np.zeros((Kmax, N))
    blocks = []; UB = UBa[:0]; GB = GBa[:0]; SBB = np.zeros((0, 0)); cbw = {}
    out = {k: np.zeros(T + 1) for k in ('est_err2', 'overlap', 'norm2', 'train_loss', 'norm2_mc', 'est_err2_mc', 'overlap_mc')}
    out['nfeat'] = np.zeros(T + 1, int)
    score = (y > 0) - sigmoid(nu) if p.loss == 'logistic' else None
    decay = 1 - eta * p.lam
    tim = dict(path=0.0, cg=0.0, gen=0.0, rev=0.0, blk=0.0, rec=0.0)

    def ring(lo, t, c):
        coef = np.zeros(Wbuf)
        coef[[slot(s) for s in range(lo, t)]] = c
        return coef

    out['norm2_cov'] = np.zeros(T + 1); out['est_err2_cov'] = np.zeros(T + 1)
    if metric_cov:
        # virtual paths: the coefficient vectors of θ̃ and ũ over the innovations (ξ_u,0..T−1, ξ̃_0..T−1);
        # advanced by the same linear updates, so Var(θ̃_t) = |θ̃_t coefficients|² is the generated law's
        NV = 2 * T
        thV = np.zeros(NV); ThV = np.zeros((Wbuf, NV)); UrV = np.zeros((Wbuf, NV)); UBaV = np.zeros((Kmax, NV))
    t0 = time.time()
    th = np.zeros(N); O = np.zeros(N); Pm = np.zeros(N)
    for t in range(T + 1):
        tt = time.time()
        w = amp[t] * nu + th
        r = w - eta * O
        l, d1, d2 = loss_eval(p, y, r)
        sel = S[t]
        unc = sel & (np.abs(d1) < p.clip)
        g = np.where(sel, np.clip(d1, -p.clip, p.clip), 0.0)
        h = np.where(unc, d2, 0.0)
        dv = np.where(unc, -d2 - eta * d2 * Pm, 0.0) if p.loss == 'huber' else None
        Gr[slot(t)] = g; Hr[slot(t)] = h; Th[slot(t)] = th; Or[slot(t)] = O; Pr[slot(t)] = Pm
        if metric_cov:
            ThV[slot(t)] = thV
            out['norm2_cov'][t] = p.s2 * amp[t] ** 2 + thV @ thV
            out['est_err2_cov'][t] = out['norm2_cov'][t] - 2 * p.s2 * amp[t] + p.s2
        # metrics
        m_t = p.s2 * amp[t]
        lo = max(0, t - Wm)
        if t > 0:
            Rrow = rb[t, t - np.arange(lo, t)]
            idx = np.arange(lo, t)
            lag = np.abs(idx[:, None] - idx[None, :]); hi_ = np.maximum(idx[:, None], idx[None, :])
            ctt = p.s2 * amp[t] ** 2 + eta ** 2 * (Rrow @ cgb[hi_, lag] @ Rrow) + (eta * p.sigma) ** 2 * (Rrow @ Rrow)
        else:
            ctt = 0.0
        out['overlap'][t] = m_t; out['norm2'][t] = ctt; out['est_err2'][t] = ctt - 2 * m_t + p.s2
        out['norm2_mc'][t] = np.mean(w * w); out['overlap_mc'][t] = np.mean(w * nu)
        out['est_err2_mc'][t] = np.mean((w - nu) ** 2)
        out['train_loss'][t] = l.mean()
        tim['path'] += time.time() - tt
        if t == T:
            break
        tt = time.time()
        lcg = min(t, Wbuf - 1)
        cgb[t, :lcg + 1] = a * (np.array([Gr[slot(t - j)] for j in range(lcg + 1)]) @ g) / N
        cbt = a * (GB @ g) / N if gen != 'exact' else None
        tim['cg'] += time.time() - tt
        tt = time.time()
        wl = max(0, t - Wc)
        K = len(blocks); nw = t - wl
        out['nfeat'][t] = K + nw
        if K + nw > 0:
            widx = np.arange(wl, t)
            lagw = np.abs(widx[:, None] - widx[None, :]); hiw = np.maximum(widx[:, None], widx[None, :])
            CBW = np.array([cbw[j] for j in widx]).reshape(nw, K)
            Sff = np.block([[SBB, CBW.T], [CBW, cgb[hiw, lagw]]])
            Sft = np.concatenate([cbt, cgb[t, t - widx]])
            Sff = Sff + 1e-12 * np.trace(Sff) / (K + nw) * np.eye(K + nw)
            beta = np.linalg.solve(Sff, Sft)
            var = cgb[t, 0] - beta @ Sft
            u = beta[:K] @ UB + ring(wl, t, beta[K:]) @ Ur + np.sqrt(max(var, 0.0)) * XU[t]
            if metric_cov:
                uV = beta[:K] @ UBaV[:K] + ring(wl, t, beta[K:]) @ UrV
                uV[t] += np.sqrt(max(var, 0.0))
        else:
            u = np.sqrt(cgb[t, 0]) * XU[t]
            if metric_cov:
                uV = np.zeros(NV); uV[t] = np.sqrt(cgb[t, 0])
        Ur[slot(t)] = u
        if metric_cov:
            UrV[slot(t)] = uV
        cbw[t] = cbt
        tim['gen'] += time.time() - tt
        # reverse mode, lags ≤ Wg, paths with ĥ_t ≠ 0 (R_θ(j,k) from the band, j − k ≤ Wg)
        tt = time.time()
        lg = max(0, t - Wg)
        if rev_every > 1 and t >= rev_full_until and t % rev_every != 0:
            # reuse the last computed R_g row (in lag), stationary regime
            rgb[t] = rgb[t - 1]
            if t + 1 - lg < Wg + 1:
                rgb[t, t + 1 - lg:] = 0.0
            ids = None
        else:
            ids = np.nonzero(h)[0]
    
        if ids is not None:
            B = np.zeros((t + 1 - lg, len(ids)))
            B[-1] = 1.0
            Hs = Hr[[slot(k) for k in range(lg, t + 1)]][:, ids]
            for k in range(t - 1, lg - 1, -1):
                js = np.arange(k + 1, t + 1)
                B[k - lg] = -eta * Hs[k - lg] * (rb[js, js - k] @ B[k + 1 - lg:])
            rgb[t, :t + 1 - lg] = a * (B[::-1] @ Hs[-1]) / N
        tim['rev'] += time.time() - tt
        tt = time.time()
        mg = a * np.mean(g * score) if p.loss == 'logistic' else a * dv.mean()
        ks = np.arange(lg, t + 1)
        drift = rgb[t, t - ks] @ amp[ks] + mg
        # per-path recursions (R1): memory over lags ≤ Wg
        coef = rgb[t, t - ks].copy()
        if gpart is not None:
            for (s0, e0) in gpart.blocks(t):
                s0, e0 = max(s0, lg), max(e0, lg)
                if e0 > s0:
                    coef[s0 - lg:e0 - lg] = coef[s0 - lg:e0 - lg].mean()
        cR = ring(lg, t + 1, coef)
        th = decay * th - eta * (u + cR @ Th) + eta * p.sigma * XN[t]
        if metric_cov:
            thV = decay * thV - eta * (uV + cR @ ThV); thV[T + t] += eta * p.sigma
        O = decay * O - eta * (cR @ Or) + g
        if p.loss == 'huber':
            Pm = decay * Pm - eta * (cR @ Pr) + dv
        # R_θ band
        Lmax = min(Wr, t + 1)
        new = np.zeros(Lmax + 1); new[1] = 1.0
        if Lmax >= 2:
            ls = np.arange(2, Lmax + 1); ss = t + 1 - ls
            new[2:] = decay * rb[t, ls - 1]
            for k in ks:
                if k == 0:
                    continue
                m = ss < k
                new[2:][m] -= eta * rgb[t, t - k] * rb[k, k - ss[m]]
        rb[t + 1, :Lmax + 1] = new
        amp[t + 1] = decay * amp[t] - eta * drift
        tim['rec'] += time.time() - tt
        tt = time.time()
        i = t - Wc
        if i >= 0:
            target = part.blocks(t + 1)
            M = np.zeros((len(target), K + 1))
            bi = 0
            for n_, (s_, e_) in enumerate(target):
                while bi < K and blocks[bi][1] <= e_:
                    M[n_, bi] = 1.0; bi += 1
                if s_ <= i < e_:
                    M[n_, K] = 1.0
            Sext = np.zeros((K + 1, K + 1)); Sext[:K, :K] = SBB
            Sext[:K, K] = cbw[i]; Sext[K, :K] = cbw[i]; Sext[K, K] = cgb[i, 0]
            SBB = M @ Sext @ M.T
            for j in range(i + 1, t + 1):
                cbw[j] = M @ np.concatenate([cbw[j], [cgb[j, j - i]]])
            for n_ in range(len(target)):
                grp = np.nonzero(M[n_, :K])[0]
                has_i = M[n_, K] > 0
                if len(grp) == 1 and grp[0] == n_ and not has_i:
                    continue
                for X, Xr in (((UBa, Ur), (GBa, Gr), (UBaV, UrV)) if metric_cov else ((UBa, Ur), (GBa, Gr))):
                    row = X[grp].sum(0) if len(grp) else np.zeros(X.shape[1])
                    if has_i:
                        row += Xr[slot(i)]
                    X[n_] = row
            blocks = target
            UB = UBa[:len(blocks)]; GB = GBa[:len(blocks)]
            del cbw[i]
        tim['blk'] += time.time() - tt
        if verbose and t % 200 == 0:
            print(t, '%.1f' % (time.time() - t0), flush=True)
    out['time'] = time.time() - t0
    out['tim'] = tim
    return out
