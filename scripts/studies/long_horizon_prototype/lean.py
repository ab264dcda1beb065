"""Lean route-A solver: per path O(W + Wc + K + Wg²/2) work per step, O(N·(W + K)) memory
(ring buffers), deterministic kernels in bands. Numbers identical (to rounding) to
dmft.solve_u(gen='dyadic') with the same parameters; this file measures cost scaling.

Per path state: ring buffers of ĝ, ĥ, D̂ (Huber), v = −ηũ + ησξ̃, ũ over the last Wbuf steps;
block sums UB (of ũ) and GB (of ĝ) over the dyadic blocks of [0, t − Wc).
Deterministic state: bands R_θ(t, t−l) (l ≤ Wb), R_g(t, t−l) (l ≤ Wg), C_g(t, t−l) (l ≤ W),
SBB = Cov(U_B, U_B') (K×K), cbw[j] = Cov(ũ_j, U_B) for the window j ∈ [t−Wc, t).
"""
import numpy as np
import time
from dmft import labels, loss_eval, sigmoid


def solve_lean(p, d, W=30, Wc=10, part=None, Wg=None, Wb=None, eps=None, verbose=False):
    T, a, eta = p.T, 1.0 / p.delta, p.eta
    Wg = W if Wg is None else Wg
    Wb = 2 * W if Wb is None else Wb           # R_θ band kept (for the bound); ≥ W
    N = d['z'].shape[1]
    nu, y = labels(p, d)
    S = d['S']; XU = d['xi_u']; XN = d['xi_n']
    Wbuf = max(W, Wg, Wc) + 1
    slot = lambda s: s % Wbuf
    Gr = np.zeros((Wbuf, N)); Hr = np.zeros((Wbuf, N)); Dr = np.zeros((Wbuf, N))
    Vr = np.zeros((Wbuf, N)); Ur = np.zeros((Wbuf, N))
    rb = np.zeros((T + 2, Wb + 1))       # rb[t, l] = R_θ(t, t−l)
    rgb = np.zeros((T + 1, Wg + 1))      # rgb[t, l] = R_g(t, t−l)
    cgb = np.zeros((T + 1, Wbuf))        # cgb[t, l] = C_g(t, t−l), l < Wbuf
    amp = np.zeros(T + 2)
    blocks = []                          # list of (s, e)
    Kmax = 4 * int(np.log2(T + 2) / np.log2(1 + min(part.alpha, part.beta or 1))) + T // max(part.b, 1) // 50 + 64 if part else 1
    UBa = np.zeros((Kmax, N)); GBa = np.zeros((Kmax, N))
    UB = UBa[:0]; GB = GBa[:0]; SBB = np.zeros((0, 0))
    cbw = {}                             # j -> Cov(ũ_j, U_B) over current blocks
    out = {k: np.zeros(T + 1) for k in ('est_err2', 'overlap', 'norm2', 'train_loss', 'bound')}
    out['nfeat'] = np.zeros(T + 1, int)
    score = (y > 0) - sigmoid(nu) if p.loss == 'logistic' else None
    decay = 1 - eta * p.lam
    gmax = min(p.clip, p.M if p.loss == 'huber' else 1.0)
    tim = dict(w=0.0, cg=0.0, gen=0.0, rev=0.0, blk=0.0)

    def ring_coef(lo, t, c):            # Σ_{s=lo}^{t−1} c[s−lo] X[slot(s)] as a slot-coefficient vector
        coef = np.zeros(Wbuf)
        coef[[slot(s) for s in range(lo, t)]] = c
        return coef

    t0 = time.time()
    for t in range(T + 1):
        tt = time.time()
        lo = max(0, t - W)
        Rrow = rb[t, t - np.arange(lo, t)] if t > 0 else np.zeros(0)      # R_θ(t, s), s = lo..t−1
        out['bound'][t] = eta * gmax * np.abs(rb[t, W + 1:min(Wb, t) + 1]).sum() if t > W else 0.0
        if t > 0:
            cR = ring_coef(lo, t, Rrow)
            w = amp[t] * nu + cR @ Vr
            r = w - eta * (cR @ Gr)
            mem = cR @ Dr if p.loss == 'huber' else None
        else:
            w = np.zeros(N); r = w; mem = np.zeros(N)
        l, d1, d2 = loss_eval(p, y, r)
        sel = S[t]
        unc = sel & (np.abs(d1) < p.clip)
        g = np.where(sel, np.clip(d1, -p.clip, p.clip), 0.0)
        h = np.where(unc, d2, 0.0)
        Gr[slot(t)] = g; Hr[slot(t)] = h
        if p.loss == 'huber':
            Dr[slot(t)] = np.where(unc, -d2 - eta * d2 * mem, 0.0)
        # metrics: C_θ(t,t) from the band
        if t > 0:
            idx = np.arange(lo, t)
            lag = np.abs(idx[:, None] - idx[None, :]); hi_ = np.maximum(idx[:, None], idx[None, :])
            Cwin = cgb[hi_, lag]
            ctt = p.s2 * amp[t] ** 2 + eta ** 2 * (Rrow @ Cwin @ Rrow) + (eta * p.sigma) ** 2 * (Rrow @ Rrow)
        else:
            ctt = 0.0
        m_t = p.s2 * amp[t]
        out['est_err2'][t] = ctt - 2 * m_t + p.s2; out['overlap'][t] = m_t
        out['norm2'][t] = ctt; out['train_loss'][t] = l.mean()
        tim['w'] += time.time() - tt
        if t == T:
            break
        # C_g band row and block covariances of ĝ_t
        tt = time.time()
        lcg = min(t, Wbuf - 1)
        cgb[t, :lcg + 1] = a * (np.array([Gr[slot(t - j)] for j in range(lcg + 1)]) @ g) / N
        cbt = a * (GB @ g) / N
        tim['cg'] += time.time() - tt
        # ũ_t conditional on (block sums, window)
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
            u = beta[:K] @ UB + ring_coef(wl, t, beta[K:]) @ Ur + np.sqrt(max(var, 0.0)) * XU[t]
        else:
            u = np.sqrt(cgb[t, 0]) * XU[t]
        Ur[slot(t)] = u
        Vr[slot(t)] = -eta * u + eta * p.sigma * XN[t]
        cbw[t] = cbt
        tim['gen'] += time.time() - tt
        # reverse mode over lags ≤ Wg on the paths with ĥ_t ≠ 0
        tt = time.time()
        lg = max(0, t - Wg)
        ids = np.nonzero(h)[0]
        B = np.zeros((t + 1 - lg, len(ids)))
        B[-1] = 1.0
        Hs = Hr[[slot(k) for k in range(lg, t + 1)]][:, ids]
        for k in range(t - 1, lg - 1, -1):
            # R_θ(j, k) for j = k+1..t: rb[j, j−k]
            js = np.arange(k + 1, t + 1)
            B[k - lg] = -eta * Hs[k - lg] * (rb[js, js - k] @ B[k + 1 - lg:])
        rgb[t, :t + 1 - lg] = a * (B[::-1] @ Hs[-1]) / N
        tim['rev'] += time.time() - tt
        mg = a * np.mean(g * score) if p.loss == 'logistic' else a * Dr[slot(t)].mean()
        ks = np.arange(lg, t + 1)
        drift = rgb[t, t - ks] @ amp[ks] + mg
        # R_θ(t+1, ·) in the band: R_θ(t+1,s) = decay R_θ(t,s) − η Σ_{k=s+1}^{t} R_g(t,k) R_θ(k,s)
        rb[t + 1, 1] = 1.0
        Lmax = min(Wb, t + 1)
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
        # the window element i = t − Wc leaves into the blocks; merge to the partition at t+1
        tt = time.time()
        i = t - Wc
        if i >= 0:
            target = part.blocks(t + 1)
            # constituents: old blocks (index) and the element i (index K)
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
            # in place: target block n is a run of consecutive old blocks (+ maybe i); n ≤ its first old index
            for n_ in range(len(target)):
                grp = np.nonzero(M[n_, :K])[0]
                has_i = M[n_, K] > 0
                if len(grp) == 1 and grp[0] == n_ and not has_i:
                    continue
                for X, Xr in ((UBa, Ur), (GBa, Gr)):
                    row = X[grp].sum(0) if len(grp) else np.zeros(N)
                    if has_i:
                        row += Xr[slot(i)]
                    X[n_] = row
            blocks = target
            UB = UBa[:len(blocks)]; GB = GBa[:len(blocks)]
            del cbw[i]
        tim['blk'] += time.time() - tt
        if verbose and t % 200 == 0:
            print(t, '%.1f' % (time.time() - t0), {k: round(v, 1) for k, v in tim.items()}, flush=True)
    out['time'] = time.time() - t0
    out['tim'] = tim
    return out
