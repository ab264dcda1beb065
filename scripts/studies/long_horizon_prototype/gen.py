"""Causal compressed generators of a Gaussian process with a given (non-decaying) covariance C.

A generator produces x_t = Σ_j β_{t,j} F_j + sd_t ξ_t sequentially, where F is a feature vector of
the already generated past: the last Wc values individually and block sums over a hierarchical
(dyadic) partition of [0, t − Wc). β and sd come from the *target* covariance C (exact Gaussian
conditioning of x_t on F under C). The implied covariance L Lᵀ (x = L ξ) is computed exactly here
to measure the generator's error offline.
"""
import numpy as np


class Dyadic:
    """Hierarchical partition of [0, t − Wc) into dyadic intervals of elementary length b.
    Interval I = [k·2^j·b, (k+1)·2^j·b) is usable at time t iff complete, and
      size(I) ≤ alpha · (t − end(I))          (age criterion), and
      size(I) ≤ max(b, beta · start(I))        (transient criterion; beta = None disables).
    Each elementary interval is represented by its coarsest usable ancestor (monotone coarsening
    in t: blocks only ever merge). The partial frontier elementary interval is its own block."""

    def __init__(self, b, alpha, beta=None, Wc=0):
        self.b, self.alpha, self.beta, self.Wc = b, alpha, beta, Wc

    def usable(self, j, k, t):
        b = self.b
        size = b << j
        start, end = k * size, (k + 1) * size
        if end > t - self.Wc:
            return False
        if j == 0:
            return True
        if size > self.alpha * (t - end):
            return False
        if self.beta is not None and size > max(b, self.beta * start):
            return False
        return True

    def blocks(self, t):
        """list of (start, end) covering [0, t − Wc)."""
        hi = t - self.Wc
        if hi <= 0:
            return []
        b = self.b
        out = []
        s = 0
        while s < hi:
            e0 = min(s // b * b + b, hi)
            if e0 < s // b * b + b:  # partial frontier block
                out.append((s, hi))
                break
            # coarsest usable ancestor of the elementary block starting at s (s is aligned at its level)
            j = 0
            while True:
                size = b << (j + 1)
                if s % size != 0:
                    break
                if not self.usable(j + 1, s // size, t):
                    break
                j += 1
            size = b << j
            out.append((s, s + size))
            s += size
        return out


def features(t, Wc, part):
    """intervals [s, e) of the features at time t: blocks, then the window values."""
    blks = part.blocks(t) if part is not None else []
    return blks + [(j, j + 1) for j in range(max(0, t - Wc), t)]


def implied(C, Wc, part, ridge=1e-12, return_L=False):
    """Generate with window Wc and block features from `part` (a Dyadic or None = no blocks);
    return the implied covariance L Lᵀ (x = L ξ) and the number of features per step."""
    T = C.shape[0]
    L = np.zeros((T, T))
    Lc = np.zeros((T + 1, T))          # Lc[i] = Σ_{a<i} L[a]
    P = np.zeros((T + 1, T + 1)); P[1:, 1:] = np.cumsum(np.cumsum(C, 0), 1)
    nfeat = []
    for t in range(T):
        iv = features(t, Wc, part)
        nfeat.append(len(iv))
        if iv:
            s = np.array([a for a, _ in iv]); e = np.array([b for _, b in iv])
            Sff = P[e][:, e] - P[s][:, e] - P[e][:, s] + P[s][:, s]
            Sft = (P[e, t + 1] - P[e, t]) - (P[s, t + 1] - P[s, t])
            Sff = Sff + ridge * np.trace(Sff) / len(iv) * np.eye(len(iv))
            beta = np.linalg.solve(Sff, Sft)
            var = C[t, t] - beta @ Sft
            L[t] = beta @ (Lc[e] - Lc[s])
        else:
            var = C[t, t]
        L[t, t] += np.sqrt(max(var, 0.0))
        Lc[t + 1] = Lc[t] + L[t]
    Ch = L @ L.T
    return (Ch, np.array(nfeat), L) if return_L else (Ch, np.array(nfeat))
