#!/usr/bin/env python3
"""Compare two result trees written by scripts/results_snapshot.sh, field by
field: every results.jsonl, errors.jsonl, tune.jsonl and non_private.json.

Numbers must agree to 1e-12 (relative, or absolute below 1), or exactly with
`--exact` (bit for bit: a refactoring); strings, keys and record counts and
order exactly.

    python3 scripts/compare_results.py [--exact] BEFORE AFTER Provenance (git commit, crate version) is ignored.
Exit status 1 on any difference, with the first differences printed.
"""
import json
import math
import sys
from pathlib import Path

TOL = 1e-12
IGNORED = {"provenance"}


def load(path):
    if path.suffix == ".json":
        return [json.loads(path.read_text())]
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def diff(a, b, where, out):
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
    print(f"{len(files)} files, {compared} records compared to {TOL}")
    for p in problems[:40]:
        print("DIFF", p)
    return 1 if problems else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--exact"]:
        TOL = 0.0
        args = args[1:]
    if len(args) != 2:
        sys.exit(__doc__)
    sys.exit(main(args[0], args[1]))
