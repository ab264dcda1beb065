#!/usr/bin/env python3
"""The validation of propdp's private intervals (docs/inference.md): runs
the example `inference_coverage` (crates/propdp/examples) over a grid of
models, mechanisms, aspect ratios δ, budgets ε and label noises at d = 400
with 60 data sets each, and prints the markdown table of docs/inference.md;
with --figure PATH (needs matplotlib) also draws coverage against δ, propdp's
interval beside the naive private Wald interval.

Usage: python3 scripts/studies/inference_study.py [--jsonl FILE] [--figure PNG] [--reps N]
[--only MODEL:MECHANISM[,MODEL:MECHANISM...]] [--jobs N]
(builds the example with cargo; --jsonl reuses the lines of an earlier run;
--only runs the cases of the listed models and mechanisms, e.g. huber:output
or logistic:objective,logistic:output; --jobs
runs that many cases at once, each on one core).
"""

import json
import subprocess
import sys
from pathlib import Path

ARGS = sys.argv[1:]
OPT = {ARGS[i]: ARGS[i + 1] for i in range(len(ARGS) - 1) if ARGS[i].startswith("--")}
ROOT = Path(__file__).resolve().parents[2]
REPS = OPT.get("--reps", "60")


def cases():
    for delta in ["0.2", "0.5", "1", "2"]:
        for eps in ["2", "8", "32"]:
            for s2 in ["1", "4"]:
                for rel in ["objective", "output"]:
                    yield ["logistic", rel, delta, "1", eps, s2]
            for noise in ["gaussian:0.5", "student:3:0.5", "contaminated:0.5:0.1:5"]:
                yield ["huber", "objective", delta, "1", eps, "1", noise]
                # output perturbation without the noise law (de-blurred nuisances)
                yield ["huber", "output", delta, "1", eps, "1", noise]
    for lam in ["0.1", "10"]:
        for eps in ["4", "32"]:
            yield ["logistic", "objective", "0.5", lam, eps, "1"]
            yield ["huber", "objective", "0.5", lam, eps, "1", "gaussian:0.5"]
    for eps in ["2", "32"]:
        yield ["logistic", "objective", "0.5", "1", eps, "4", "--row-norm", "3"]
        yield ["huber", "objective", "0.5", "1", eps, "1", "gaussian:0.5", "--row-norm", "3"]
    for eps in ["4", "32"]:
        yield ["logistic", "objective", "0.5", "1", eps, "1", "--d", "1000"]
        yield ["huber", "objective", "0.5", "1", eps, "1", "student:3:0.5", "--d", "1000"]


def run() -> list:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "propdp", "--example", "inference_coverage"],
                   cwd=ROOT, check=True)
    binary = ROOT / "target" / "release" / "examples" / "inference_coverage"
    only = OPT.get("--only")
    picked = [c for c in cases() if only is None or ":".join(c[:2]) in only.split(",")]

    def one(c):
        out = subprocess.run([str(binary), *c, "--reps", REPS], capture_output=True, text=True, check=True)
        print(out.stdout.strip(), file=sys.stderr, flush=True)
        return json.loads(out.stdout)

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=int(OPT.get("--jobs", "1"))) as pool:
        return list(pool.map(one, picked))


def table(rows: list) -> str:
    head = ("| model | mechanism | δ | λ | ε | s² | label noise | d | R | 95% coverage (s.e.) | low / high miss "
            "| 90% | large coords | naive 95% | refused |\n|" + "---|" * 15)
    lines = [head]
    for r in rows:
        model = r["model"] if r["model"] == "logistic" else "Huber"
        noise = "—" if r["model"] == "logistic" else r["noise"]
        if r["refused"] == r["reps"]:
            lines.append(
                f"| {model} | {r['release']} | {r['delta']} | {r['lambda']} | {r['epsilon']} | {r['s2']} | {noise} "
                f"| {r['d']} | {r['row_norm']} | ε at or below objective perturbation's floor: argument error "
                "| | | | | |"
            )
            continue
        lines.append(
            f"| {model} | {r['release']} | {r['delta']} | {r['lambda']} | {r['epsilon']} | {r['s2']} | {noise} "
            f"| {r['d']} | {r['row_norm']} | {r['cover95']:.3f} ({r['cover95_se']:.3f}) "
            f"| {r['miss_low95']:.3f} / {r['miss_high95']:.3f} | {r['cover90']:.3f} | {r['cover95_large']:.3f} "
            f"| {r['naive95']:.3f} | {r['refused']}/{r['reps']} |"
        )
    return "\n".join(lines)


def figure(rows: list, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (model, s2, noise) in zip(axes, [("logistic", 4, None), ("huber", 1, "gaussian:0.5")]):
        for eps, color in [(2, "tab:blue"), (8, "tab:orange"), (32, "tab:green")]:
            pick = [r for r in rows if r["model"] == model and r["release"] == "objective" and r["s2"] == s2
                    and r["epsilon"] == eps and r["d"] == 400 and r["row_norm"] == 1 and r["lambda"] == 1
                    and (noise is None or r["noise"] == noise)]
            pick.sort(key=lambda r: r["delta"])
            xs = [r["delta"] for r in pick]
            ax.plot(xs, [r["cover95"] for r in pick], "-o", color=color, label=f"propdp, ε = {eps}")
            ax.plot(xs, [r["naive95"] for r in pick], "--x", color=color, label=f"naive Wald, ε = {eps}")
        ax.axhline(0.95, color="gray", lw=0.8)
        ax.set_xscale("log")
        ax.set_xticks([0.2, 0.5, 1, 2], ["0.2", "0.5", "1", "2"])
        ax.minorticks_off()
        ax.set_xlabel("δ = d/n")
        title = "logistic, s² = 4" if model == "logistic" else "Huber (Gaussian noise), s² = 1"
        ax.set_title(f"{title}; objective pert., d = 400", fontsize=10)
    axes[0].set_ylabel("coverage of 95% intervals")
    axes[1].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    if "--jsonl" in OPT:
        rows = [json.loads(line) for line in Path(OPT["--jsonl"]).read_text().splitlines() if line.strip()]
    else:
        rows = run()
    print(table(rows))
    if "--figure" in OPT:
        figure(rows, OPT["--figure"])


if __name__ == "__main__":
    main()
