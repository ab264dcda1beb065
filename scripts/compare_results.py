#!/usr/bin/env python3
"""Compare two result trees written by scripts/results_snapshot.sh, field by
field: every results.jsonl, errors.jsonl, tune.jsonl and non_private.json.

Numbers must agree to 1e-12 (relative, or absolute below 1), or exactly with
`--exact` (bit for bit: a refactoring); strings, keys and record counts and
order exactly. With `--stderr K` (a Monte Carlo solver changed: the
long-horizon state evolution), a record carrying `per_step_stderr` has its
`metrics` and `per_step` values agree within K combined standard errors
√(se₁² + se₂²) instead (values with no standard error, to 1e-12), its `solver` block only in its method (the paths,
window and precision reached may move); the largest |z| is printed.

    python3 scripts/compare_results.py [--exact | --stderr K] BEFORE AFTER

Provenance (git commit, crate version) is ignored.
Exit status 1 on any difference, with the first differences printed.
"""
import json
import math
import sys
from pathlib import Path

TOL = 1e-12
IGNORED = {"provenance"}
STDERR_K = None
WORST_Z = [0.0]


def load(path):
    if path.suffix == ".json":
        return [json.loads(path.read_text())]
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def within_stderr(a, b, where, out):
    """A Monte Carlo record against another: values within STDERR_K standard errors."""
    se_a, se_b = a["per_step_stderr"], b["per_step_stderr"]

    def close(x, y, s1, s2, at):
        se = math.hypot(s1, s2)
        # an exact value (no standard error) agrees as any number does, to TOL
        z = abs(x - y) / se if se > 0 else (0.0 if abs(x - y) <= TOL * max(1.0, abs(x)) else math.inf)
        WORST_Z[0] = max(WORST_Z[0], z)
        if z > STDERR_K:
            out.append(f"{at}: {x!r} vs {y!r} ({z:.1f} standard errors)")

    for m in sorted(set(a["metrics"]) | set(b["metrics"])):
        if m not in se_a or m not in se_b or m not in a["metrics"] or m not in b["metrics"]:
            diff(a["metrics"].get(m), b["metrics"].get(m), f"{where}.metrics.{m}", out)
            continue
        close(a["metrics"][m], b["metrics"][m], se_a[m][-1], se_b[m][-1], f"{where}.metrics.{m}")
        for t, (x, y) in enumerate(zip(a["per_step"][m], b["per_step"][m])):
            close(x, y, se_a[m][t], se_b[m][t], f"{where}.per_step.{m}[{t}]")
    if a["solver"].get("method") != b["solver"].get("method"):
        out.append(f"{where}.solver.method: {a['solver'].get('method')!r} vs {b['solver'].get('method')!r}")
    skip = {"metrics", "per_step", "per_step_stderr", "solver"}
    diff({k: v for k, v in a.items() if k not in skip}, {k: v for k, v in b.items() if k not in skip}, where, out)


def diff(a, b, where, out):
    if STDERR_K is not None and isinstance(a, dict) and isinstance(b, dict) and "per_step_stderr" in a \
            and "per_step_stderr" in b:
        within_stderr(a, b, where, out)
        return
    if isinstance(a, dict) and isinstance(b, dict):
        keys = (set(a) | set(b)) - IGNORED
        for k in sorted(keys):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: present in only one side")
            else:
                diff(a[k], b[k], f"{where}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: length {len(a)} vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}[{i}]", out)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if not (math.isclose(a, b, rel_tol=TOL, abs_tol=TOL) or (math.isnan(a) and math.isnan(b))):
            out.append(f"{where}: {a!r} vs {b!r}")
    elif a != b:
        out.append(f"{where}: {a!r} vs {b!r}")


def main(before, after):
    before, after = Path(before), Path(after)
    names = ("results.jsonl", "errors.jsonl", "tune.jsonl", "non_private.json")
    files = sorted(p.relative_to(before) for n in names for p in before.glob(f"*/{n}"))
    others = sorted(p.relative_to(after) for n in names for p in after.glob(f"*/{n}"))
    problems = [f"{p}: only in {after}" for p in others if p not in files]
    compared = 0
    for rel in files:
        if not (after / rel).exists():
            problems.append(f"{rel}: only in {before}")
            continue
        a, b = load(before / rel), load(after / rel)
        out = []
        diff(a, b, str(rel), out)
        problems.extend(out)
        compared += len(a)
        print(f"{rel}: {len(a)} records, {'same' if not out else f'{len(out)} differences'}")
    bound = f"{STDERR_K} standard errors where they carry them (largest |z| {WORST_Z[0]:.2f}), else {TOL}" \
        if STDERR_K is not None else TOL
    print(f"{len(files)} files, {compared} records compared to {bound}")
    for p in problems[:40]:
        print("DIFF", p)
    return 1 if problems else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--exact"]:
        TOL = 0.0
        args = args[1:]
    elif args[:1] == ["--stderr"] and len(args) > 1:
        STDERR_K = float(args[1])
        args = args[2:]
    if len(args) != 2:
        sys.exit(__doc__)
    sys.exit(main(args[0], args[1]))
