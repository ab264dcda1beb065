#!/usr/bin/env python3
"""DP-SGD in G cyclic groups (amplified BandMF): `propdp privacy --groups G`'s
certified ε against dp_accounting's PLD accountant (pessimistic, grid 1e-4) on
the event jax_privacy's amplified_bandmf_event builds, Poisson DP-SGD over
⌈T/G⌉ rounds, at δ = 1e-5 (docs/privacy.md). Usage (dp-accounting installed):

    python scripts/reference/groups_dp_accounting.py target/release/propdp
"""
import json
import math
import subprocess
import sys

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant

# (G, p, T, z): groups 2–32, sample rates 0.01–1, T up to 2·10⁴
cases = [(2,0.05,1000,1.0),(4,0.2,1024,2.0894),(8,0.01,20000,0.8),(16,1.0,2048,20.0),(32,0.5,20000,3.0),(3,0.1,5000,1.2),(5,1.0,1000,10.0),(12,0.3,12000,2.5)]
delta=1e-5
for G,p,T,z in cases:
    out=json.loads(subprocess.run([sys.argv[1],'privacy','--algorithm','dpsgd','--noise',str(z),'--clip','1','--sample-rate',str(p),'--steps',str(T),'--groups',str(G),'--delta-priv',str(delta),'--json'],capture_output=True,text=True,check=True).stdout)
    ev=dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(p, dp_accounting.GaussianDpEvent(z)), math.ceil(T/G))
    acc=pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(ev)
    ref=acc.get_epsilon(delta)
    rel=(out['epsilon']-ref)/ref
    print(f"G={G:2d} p={p:<5} T={T:<6} z={z:<6} ours={out['epsilon']:.6f} lower={out['epsilon_lower']:.6f} dp_acc={ref:.6f} rel={rel*100:+.4f}% ok={(-1e-4<=rel<=1e-3) and out['epsilon_lower']<=ref}", flush=True)
