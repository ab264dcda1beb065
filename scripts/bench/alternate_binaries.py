#!/usr/bin/env python3
"""Time two propdp binaries on the same configs in turn, OLD then NEW, round
after round (`propdp run CONFIG --theory-only --quiet`, wall seconds): this
machine's speed drifts by a quarter within an hour, so a comparison is only
fair between runs minutes apart (docs/performance.md, "Long horizons at a
stated precision"). Prints per config the median of each and their ratio.

    git worktree add /tmp/old <commit> && cargo build --release -p propdp-cli \\
        --manifest-path /tmp/old/Cargo.toml --target-dir /tmp/old-target
    cargo build --release -p propdp-cli
    python3 scripts/bench/alternate_binaries.py /tmp/old-target/release/propdp \\
        target/release/propdp --rounds 3 CONFIG.toml ...
"""
import argparse
import statistics
import subprocess
import tempfile
import time


def seconds(binary, config, out):
    start = time.time()
    subprocess.run([binary, "run", config, "--theory-only", "--out", out, "--overwrite", "--quiet"],
                   check=True, capture_output=True)
    return time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as out:
        for config in a.configs:
            old, new = [], []
            for _ in range(a.rounds):
                old.append(seconds(a.old, config, out))
                new.append(seconds(a.new, config, out))
            mo, mn = statistics.median(old), statistics.median(new)
            runs = " ".join(f"{x:.2f}" for x in old) + " | " + " ".join(f"{x:.2f}" for x in new)
            print(f"{config}: old {mo:.2f} s, new {mn:.2f} s, {mo / mn:.3f}x  ({runs})", flush=True)


if __name__ == "__main__":
    main()
