#!/usr/bin/env python3
"""Markdown tables of a DP-SGD tune run (`propdp tune`, `algorithms =
["dpsgd"]`): per (δ, budget) the optimum (q, epochs, T, η, C, λ), its
prediction ± RQMC standard error, the simulation of it (mean ± standard
error, agreement by the docs/theory.md §5 rule), the runners-up within the
error bars, and the best prediction at each searched sample rate.

Usage: python3 scripts/studies/tune_dpsgd_table.py DIR/tune.jsonl
Standard library only.
"""

import json
import sys


def sig(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}g}"


def main(path: str) -> None:
    lines = [json.loads(line) for line in open(path, encoding="utf-8")]
    cells = [r for r in lines if r.get("algorithm") == "dpsgd"]
    if not cells:
        sys.exit(f"{path}: no DP-SGD optimum")
    level = "epsilon" if "epsilon" in cells[0] else "rho"
    rates = sorted({v["sample_rate"] for r in cells for v in r.get("per_sample_rate", [])})
    print(f"| δ | {level} | q | epochs (T) | η | C | λ | predicted | simulated | runners-up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in cells:
        q, steps = r["sample_rate"], r["steps"]
        sim = r.get("simulation")
        simulated = (
            f"{sim['mean']:.4f} ± {sim['stderr']:.4f} ({sim['verdict'] if sim['verdict'] != 'pass' else 'agrees'})"
            if sim
            else "—"
        )
        runners = ", ".join(
            f"q={sig(v['sample_rate'])} T={v['steps']} η={sig(v['eta'])} C={v.get('clip', '—')} {v['value']:.4f}" for v in r.get("runners_up", [])
        )
        star = "*" if r.get("at_boundary") else ""
        print(
            f"| {r['params']['delta']} | {r[level]} | {sig(q)} | {sig(q * steps)} ({steps}) | {sig(r['eta'])} "
            f"| {r.get('clip', '—')} | {sig(r['lambda'])} | {r['value']:.4f} ± {r['stderr']:.4f}{star} "
            f"| {simulated} | {runners or '—'} |"
        )
    print()
    print(f"Best predicted {cells[0]['metric']} at each sample rate (± RQMC standard error; epochs, C):")
    print()
    print(f"| δ | {level} | " + " | ".join(f"q = {sig(q)}" for q in rates) + " |")
    print("|---|---|" + "---|" * len(rates))
    for r in cells:
        best = {v["sample_rate"]: v for v in r.get("per_sample_rate", [])}
        row = []
        for q in rates:
            v = best.get(q)
            row.append(
                f"{v['value']:.4f} ± {v['stderr']:.4f} (E={sig(q * v['steps'])}, C={v.get('clip', '—')})" if v else "—"
            )
        print(f"| {r['params']['delta']} | {r[level]} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
