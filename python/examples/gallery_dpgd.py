# %% [markdown]
# # DP gradient descent: DMFT against simulation, from Python
#
# Reproduces the README's DP-GD gallery figure (`docs/figures/dpgd.png`) from
# `configs/figures/dpgd.toml`: logistic regression at δ = d/n = 2, λ = 0.1,
# η = 1, 25 steps, noise σ ∈ {0, 1, 3}; the dynamical mean-field theory
# against DP-GD simulated at d = 400 (20 repetitions).
#
# Run as a script (`python python/examples/gallery_dpgd.py [OUT_DIR]`) or
# cell by cell in Jupyter/VS Code (percent format).

# %%
import sys
from pathlib import Path

import propdp

root = Path(__file__).resolve().parents[2] if "__file__" in globals() else Path.cwd()
config = root / "configs" / "figures" / "dpgd.toml"
out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("results") / "python_dpgd"
print(propdp.check(config))

# %% The sweep: theory and simulation, per-step metrics in long format
steps = propdp.sweep(config, out=out, overwrite=True, per_step=True)
steps.head()

# %% Error by step, theory against simulation (mean ± s.e.)
final = steps[steps["step"] == steps["step"].max()]
print(final[["source", "sigma", "est_err2", "est_err2_stderr", "test_class_err"]].to_string(index=False))

# %% The gallery figure, drawn by the Rust plot crate (PNG + SVG), as `propdp run` draws it
files = propdp.figures(out)
print("figures:", *map(str, files), sep="\n  ")

# %% The same panel with matplotlib, if it is installed
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    ax = propdp.plot(steps, "est_err2", x="step", series="sigma")
    ax.set_title("DP-GD, logistic, δ = 2: DMFT (lines) vs simulation (points ± 2 s.e.)")
    plt.savefig(out / "dpgd_matplotlib.png", dpi=120)
    print("matplotlib figure:", out / "dpgd_matplotlib.png")
