"""PrivateGLM's inputs: every keyword, and fit's X, y and seed, through the
one argument checker (propdp._args); the rows' memory (X and one copy at the
peak; MemoryError, not an abort, for rows the machine cannot hold); messages
naming the arguments as Python spells them, never echoing a whole array; and
the bare errors left from Part A."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import propdp
from propdp import accounting


def logistic_data(seed=0, n=600, d=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    theta = rng.normal(size=d)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ theta)), 1.0, -1.0)
    return X, y


DPSGD = {"algorithm": "dpsgd", "eta": 1.0}
BAD_KEYWORDS = [
    ("epsilon", "4", {}),
    ("epsilon", None, {}),
    ("epsilon", 4 + 0j, {}),
    ("lambda_", True, {}),
    ("delta_priv", "1e-6", {}),
    ("row_norm", None, {}),
    ("huber_m", [1.0], {}),
    ("holdout", True, {}),
    ("test_clip", "1", {}),
    ("eta", np.bool_(True), DPSGD),
    ("sample_rate", "0.5", DPSGD),
    ("clip", "none", DPSGD),
    ("steps", 2.7, DPSGD),
    ("steps", 3.0, DPSGD),
    ("steps", "3", DPSGD),
    ("steps", True, DPSGD),
    ("model", 3, {}),
    ("algorithm", None, {}),
    ("neighbouring", 1, {}),
    ("neighbouring", "add/remove", {}),
    ("extra_ridge", True, {}),
    ("noise", "student_t", {"model": "huber"}),
    ("covariance", np.eye(300) * (1 + 0j), {}),
    ("covariance", "identity", {}),
]


@pytest.mark.parametrize("name,value,base", BAD_KEYWORDS)
def test_every_keyword_of_private_glm_is_checked_naming_it(name, value, base):
    with pytest.raises(propdp.ConfigError) as e:
        propdp.PrivateGLM(**{**base, name: value})
    assert e.value.field == name, str(e.value)
    # an attribute set after construction is checked again by fit, before any work
    model = propdp.PrivateGLM(**base)
    setattr(model, name, value)
    X, y = logistic_data()
    with pytest.raises(propdp.ConfigError) as e:
        model.fit(X, y, seed=1)
    assert e.value.field == name, str(e.value)


def test_numpy_scalars_and_any_real_dtype_or_layout_give_the_same_fit(monkeypatch):
    X, y = logistic_data()
    ref = propdp.PrivateGLM(epsilon=8.0, lambda_=1.0).fit(X, y, seed=1)
    same = [
        propdp.PrivateGLM(epsilon=np.float64(8.0), lambda_=np.int64(1)).fit(X, y, seed=np.int64(1)),
        propdp.PrivateGLM(epsilon=8.0).fit(np.asfortranarray(X), y.reshape(-1, 1), seed=1),
        propdp.PrivateGLM(epsilon=8.0).fit(X.tolist(), y.astype(np.int8), seed=1),
    ]
    for res in same:
        np.testing.assert_array_equal(res.params, ref.params)
    as32 = X.astype(np.float32)
    np.testing.assert_array_equal(
        propdp.PrivateGLM(epsilon=8.0).fit(as32, y, seed=1).params,
        propdp.PrivateGLM(epsilon=8.0).fit(as32.astype(np.float64), y, seed=1).params,
    )
    # X crosses to the core a few rows at a time: the chunk size changes nothing
    monkeypatch.setattr(propdp.inference, "_CHUNK", 8 * 300 * 7)
    np.testing.assert_array_equal(propdp.PrivateGLM(epsilon=8.0).fit(X, y, seed=1).params, ref.params)
    held = propdp.PrivateGLM(epsilon=8.0, holdout=0.2)
    chunked = held.fit(X, y, seed=1)
    monkeypatch.undo()
    np.testing.assert_array_equal(chunked.params, held.fit(X, y, seed=1).params)


def test_fit_refuses_arrays_that_are_not_real_naming_them():
    X, y = logistic_data()
    n, d = X.shape
    bad = {
        "X": [X + 0j, X.astype(object), X.astype(str), X > 0, X[0], None, "X", [[1.0, 2.0], [1.0]]],
        "y": [y + 0j, y.astype(str), y > 0, y[:-1], np.stack([y, y], 1), None],
        "seed": [1.5, "1", True, -1, 2**64],
    }
    for field, values in bad.items():
        for v in values:
            args = {"X": X, "y": y, "seed": 1, field: v}
            with pytest.raises(propdp.ConfigError) as e:
                propdp.PrivateGLM(epsilon=8.0).fit(**args)
            assert e.value.field == field, (field, type(v), str(e.value))
            assert len(str(e.value)) < 400, str(e.value)


MEASURE = textwrap.dedent(
    """
    import resource, sys
    import numpy as np, propdp
    n, d, holdout = 20000, 400, float(sys.argv[1])
    rng = np.random.default_rng(0)
    X = np.empty((n, d)); rng.standard_normal(out=X); X /= np.sqrt(d)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X[:, :200].sum(1))), 1.0, -1.0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    propdp.PrivateGLM(epsilon=8.0, holdout=holdout).fit(X, y, seed=1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print((peak - before) * 1024 / X.nbytes)
    """
)


@pytest.mark.parametrize("holdout", [0.0, 0.2])
def test_a_fit_holds_x_and_one_copy_at_its_peak(holdout):
    """Peak resident memory of a fit beyond X itself, in a fresh process
    (ru_maxrss), for a 64 MB X: one copy of X (the fit's matrix) and small
    change; before, the bytes, the Rust vector, the split and the matrix
    made 4.1 copies (5.1× X in all)."""
    out = subprocess.run([sys.executable, "-c", MEASURE, str(holdout)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    extra = float(out.stdout.strip())
    assert extra < 1.5, f"a fit needed {extra:.2f}× the size of X beyond X"


LIMITED = textwrap.dedent(
    """
    import resource, sys
    import numpy as np, propdp
    n, d = 20000, 400
    rng = np.random.default_rng(0)
    X = np.empty((n, d)); rng.standard_normal(out=X); X /= np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    size = [int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize")][0]
    room = size + int(float(sys.argv[1]) * X.nbytes)
    resource.setrlimit(resource.RLIMIT_AS, (room, room))
    try:
        propdp.PrivateGLM(epsilon=8.0).fit(X, y, seed=1)
        print("fitted")
    except MemoryError as e:
        print("MemoryError", e)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status and limits RLIMIT_AS")
@pytest.mark.parametrize("room,outcome", [(0.5, "MemoryError"), (1.5, "fitted")])
def test_a_fit_on_a_machine_with_little_memory_to_spare(room, outcome):
    """The issue's abort in miniature: a 64 MB X in a process whose address
    space has room for `room`× X more (RLIMIT_AS; one malloc arena and one
    worker thread, so that the room is the fit's and not the threads'). With
    1.5× X the fit runs (it needed 4.1× beyond X before: an abort); with
    0.5× it raises MemoryError naming the rows, and the process lives on."""
    env = {**os.environ, "MALLOC_ARENA_MAX": "1", "RAYON_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", LIMITED, str(room)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == outcome, out.stdout
    if outcome == "MemoryError":
        assert "the rows X" in out.stdout and "64000000 bytes" in out.stdout, out.stdout

def test_rows_the_machine_cannot_hold_raise_memory_error_not_an_abort():
    """Rows beyond the address space (2^45 values, 256 TiB; 2^59 values,
    4 EiB) are broadcast views that cost nothing to make: the fit raises
    MemoryError naming the size before any copy, and so does a size whose
    count overflows 64 bits — in a child process, so that an abort would
    fail this test, not end the suite."""
    code = textwrap.dedent(
        """
        import numpy as np, propdp
        try:
            propdp._native.Rows(2**62, 2**62)
        except MemoryError as e:
            print("MemoryError")
        for n, d in [(2**24, 2**21), (2**40, 2**19)]:
            X = np.broadcast_to(np.float64(0.05), (n, d))
            y = np.broadcast_to(np.float64(1.0), (n,))
            try:
                propdp.PrivateGLM(epsilon=8.0).fit(X, y, seed=1)
            except MemoryError as e:
                assert "bytes" in str(e) and "X" in str(e), str(e)
                print("MemoryError")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["MemoryError"] * 3, out.stdout


def test_messages_name_x_and_y_as_python_does_and_quote_no_whole_array():
    X, y = logistic_data()
    Xb, yb = X.copy(), y.copy()
    Xb[5, 3], yb[3] = np.inf, np.nan
    for args, field, start in [((Xb, y), "X", "X row 5, column 3: inf is not finite"), ((X, yb), "y", "y row 3: NaN")]:
        with pytest.raises(propdp.ConfigError) as e:
            propdp.PrivateGLM(epsilon=8.0).fit(*args, seed=1)
        assert (e.value.field, str(e.value)[: len(start)]) == (field, start)
    small = X[:, :5]
    with pytest.raises(propdp.ConfigError) as e:
        propdp.spectrum(small, y[:1])
    assert e.value.field == "y" and str(e.value).startswith("y: 1 labels for 600 rows"), str(e.value)
    small = small.copy()
    small[2, 1] = np.inf
    with pytest.raises(propdp.ConfigError) as e:
        propdp.spectrum(small)
    assert e.value.field == "X" and str(e.value).startswith("X: "), str(e.value)
    huge = list(range(10**5))
    calls = {
        "noise": lambda: propdp.PrivateGLM(model="huber", noise={"law": "student_t", "dof": huge}).fit(X, y, seed=1),
        "epsilon": lambda: propdp.PrivateGLM(epsilon=huge),
        "fpr": lambda: accounting.membership_inference(1.0, 0.01, 10, fpr="x" * 10**6),
        "events": lambda: accounting.ComposedEvent([huge]),
        "delta": lambda: accounting.epsilon(accounting.dpsgd_event(1.0, 0.01, 10), delta=huge),
        "steps": lambda: accounting.dpsgd_event(1.0, 0.01, 10**10000),
    }
    for name, call in calls.items():
        with pytest.raises(propdp.ConfigError) as e:
            call()
        assert len(str(e.value)) < 300, (name, len(str(e.value)), str(e.value)[:300])
    for value in (huge, 10**10000):
        with pytest.raises(propdp.ConfigError) as e:
            propdp.privacy("dpsgd", epsilon=value, sample_rate=0.01, steps=10, delta_priv=1e-5)
        assert e.value.field == "epsilon" and len(str(e.value)) < 300, str(e.value)[:300]


def test_part_a_leftovers_are_config_errors_naming_the_argument():
    with pytest.raises(propdp.ConfigError) as e:
        accounting.ComposedEvent(None)
    assert e.value.field == "events"
    # any iterable of events is a composition
    gen = accounting.ComposedEvent(accounting.dpsgd_event(1.0, 0.01, 10) for _ in range(2))
    assert gen == accounting.ComposedEvent([accounting.dpsgd_event(1.0, 0.01, 10)] * 2)
    for objectives, field in [([(1.0, 2.0)], "objectives[0]"), ([(1.0, 0.25, 1.0, 1.0, 1.0), "x"], "objectives[1]"),
                              (5, "objectives"), ("abc", "objectives")]:
        with pytest.raises(propdp.ConfigError) as e:
            accounting.Accountant(objectives=objectives)
        assert e.value.field == field, (objectives, str(e.value))
    X = np.random.default_rng(0).normal(size=(50, 4))
    for v in ("yes", 1, None):
        with pytest.raises(propdp.ConfigError) as e:
            propdp.spectrum(X, standardize=v)
        assert e.value.field == "standardize"
    assert propdp.spectrum(X, standardize=np.bool_(True)).equals(propdp.spectrum(X, standardize=True))


def test_a_nested_table_error_names_the_nested_field(tmp_path):
    rows = tmp_path / "rows.csv"
    rows.write_text("a,b\n1,2\n3,5\n4,4\n")
    for drop in ("a", [1]):
        with pytest.raises(propdp.ConfigError) as e:
            propdp.simulate("huber", "objective", d=2, reps=2, delta=0.5, s2=1.0, lambda_=1.0, sigma=1.0,
                            huber_m=1.0, noise={"law": "gaussian", "sd": 0.5},
                            data={"file": str(rows), "drop": drop}, progress=False)
        assert e.value.field == "simulation.data.drop", (e.value.field, str(e.value))
