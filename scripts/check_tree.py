#!/usr/bin/env python3
"""Read the source tree and check the structural rules of docs/guide.md
("Layout rules"); exit 1 naming every breach.

    python3 scripts/check_tree.py            # all rules
    python3 scripts/check_tree.py --list     # also print each crate's file sizes

Rules:
  cycles     no import cycle between the files of a crate (Rust: `use`,
             `crate::`/`super::`/`self::` paths and child-module paths; a
             parent's `mod` lines and `pub use` re-exports are its surface,
             not imports, unless the file uses the name itself; re-exports
             are followed to the defining file;
             a file using its own ancestor module (`super::`, the crate
             root) is part of that module, not an edge; `#[cfg(test)]`
             modules are left out) nor between the modules of the Python
             package
  size       no Rust source file above 700 lines without its `#[cfg(test)]`
             module; none above 500 in the Python binding (crates/propdp-py:
             src/*.rs and python/propdp/*.py)
  anyhow     no `pub fn` of the `propdp` library returns `anyhow`
  rewrite    no flag rewriting by string replacement (`.replace("--`) in
             the Python package (its Python and its Rust binding)
  accountant at most 3 public free functions named *epsilon* or *calibrate*
             in propdp-accountant
  mechanism  the algorithm -> mechanism mapping written once
             (`Algorithm::… => MechanismKind::…` match arms in one file)
  subjects   the median subject of the last 30 commits at most 72 characters
             (skipped outside a git checkout)
  algorithms the files of the tables in docs/guide.md, "Adding an algorithm",
             are those whose non-test code (src/, examples/, benches/; no
             `#[cfg(test)]` module) has an exhaustive `match` on an algorithm
             kind (an arm naming `Algorithm::`, `AlgorithmKind::` or
             `RawAlgorithm::`, and no `_` or bare binding arm: the compiler
             names these when a kind is added) — and on its shape
             (`Shape::`), the second table
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = ROOT / "crates"
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_rust(text):
    """Source without comments, string literals and `#[cfg(test)]` items."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"'(?:\\.|[^'\\])'", "' '", text)  # char literals such as '"'
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text, flags=re.S)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def code_lines(path):
    """Lines of a Rust file above its `#[cfg(test)] mod` block."""
    lines = path.read_text().splitlines()
    for k, line in enumerate(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", line) and k + 1 < len(lines) and re.match(r"\s*mod\s+\w+", lines[k + 1]):
            return k
    return len(lines)


def rust_modules(src):
    """Module path (tuple) -> file, for a crate's src/."""
    mods = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("").parts
        if rel in (("lib",), ("main",)):
            key = ()
        elif rel[-1] == "mod":
            key = rel[:-1]
        else:
            key = rel
        if f.name == "main.rs" and (src / "lib.rs").exists():
            continue
        if "bin" in rel[:1]:
            continue
        mods[key] = f
    return mods


def use_paths(tree):
    """Expand a `use` tree (`a::{b, c::{d, e}}`) into paths."""
    tree = re.sub(r"\s+", "", tree)

    def split(s):
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += {"{": 1, "}": -1}.get(ch, 0)
            cur += ch
        if cur:
            parts.append(cur)
        return parts

    def expand(s):
        m = re.match(r"^(.*?)::\{(.*)\}$", s)
        if m:
            return [m.group(1) + "::" + p for part in split(m.group(2)) for p in expand(part)]
        if s.startswith("{") and s.endswith("}"):
            return [p for part in split(s[1:-1]) for p in expand(part)]
        return [re.sub(r"\bas\w.*$", "", s.split(" as ")[0])]

    return [p for p in expand(tree) if p]


def crate_graph(src):
    mods = rust_modules(src)
    files = {f: k for k, f in mods.items()}
    texts = {f: strip_rust(f.read_text()) for f in files}
    # re-exports: (module, name) -> absolute path
    reexports = {}
    uses = {f: [] for f in files}
    for f, text in texts.items():
        here = files[f]
        use_stmt = r"(pub(?:\([a-z]+\))?\s+)?use\s+([^;]+);"
        body = re.sub(use_stmt, "", text)
        for m in re.finditer(use_stmt, text):
            for p in use_paths(m.group(2)):
                segs = p.split("::")
                if m.group(1):
                    name = segs[-1] if segs[-1] not in ("*", "self") else None
                    if name:
                        reexports[(here, name)] = (here, segs)
                        if re.search(r"\b%s\b" % name, body):
                            uses[f].append(segs)  # re-exported and used here too
                else:
                    uses[f].append(segs)
        for m in re.finditer(r"(?<![A-Za-z0-9_:])((?:crate|super|self)(?:::%s)+)" % IDENT, body):
            uses[f].append(m.group(1).split("::"))
        for child in [k[-1] for k in mods if len(k) == len(here) + 1 and k[: len(here)] == here]:
            for m in re.finditer(r"(?<![A-Za-z0-9_:])%s((?:::%s)+)" % (child, IDENT), body):
                uses[f].append([child] + m.group(1).split("::")[1:])

    def absolute(here, segs):
        segs = list(segs)
        if segs[0] == "crate":
            base, segs = (), segs[1:]
        elif segs[0] in ("super", "self"):
            base = here
            while segs and segs[0] in ("super", "self"):
                base = base[:-1] if segs[0] == "super" else base
                segs = segs[1:]
        elif tuple(here) + (segs[0],) in mods:
            base = here
        else:
            return None  # an external crate or a prelude name
        return tuple(base) + tuple(segs)

    def resolve(path, seen=0):
        """The file defining the item a path names."""
        if path is None or seen > 8:
            return None
        for k in range(len(path), -1, -1):
            if path[:k] in mods:
                mod = path[:k]
                rest = path[k:]
                if rest and (mod, rest[0]) in reexports:
                    origin, segs = reexports[(mod, rest[0])]
                    target = absolute(origin, segs)
                    if target is None:
                        return None  # a re-exported external crate
                    if target != path:
                        return resolve(target + tuple(rest[1:]), seen + 1)
                return mods[mod]
        return None

    edges = {f: set() for f in files}
    for f, paths in uses.items():
        for segs in paths:
            target = resolve(absolute(files[f], segs))
            if target is None or target == f:
                continue
            if files[f][: len(files[target])] == files[target]:
                continue  # a child module using its own ancestor: one unit
            edges[f].add(target)
    return edges


def python_graph(pkg):
    files = {f.stem: f for f in pkg.glob("*.py")}
    edges = {f: set() for f in files.values()}
    for name, f in files.items():
        text = f.read_text()
        for m in re.finditer(r"^\s*from\s+\.(\w*)\s+import\s+\(?([^)\n]+)", text, flags=re.M):
            mod, names = m.group(1), [n.strip().split(" as ")[0] for n in m.group(2).split(",")]
            if mod:
                target = files.get(mod)
                if target:
                    edges[f].add(target)
            else:
                for n in names:
                    if (pkg / f"{n}.pyi").exists():
                        continue  # the compiled extension
                    edges[f].add(files.get(n) or files["__init__"])
        for m in re.finditer(r"^\s*from\s+propdp\.?(\w*)\s+import", text, flags=re.M):
            edges[f].add(files.get(m.group(1) or "__init__", files["__init__"]))
        edges[f].discard(f)
    return edges


def cycles(edges):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def rel(f):
    return str(Path(f).relative_to(ROOT))


KIND_ARM = re.compile(r"\b(?:Algorithm|AlgorithmKind|RawAlgorithm)::")
SHAPE_ARM = re.compile(r"\bShape::")


def match_arms(text):
    """The arm patterns (guards included) of every `match` in stripped Rust
    text (rustfmt's layout: an arm that is not a block ends with a comma)."""
    pairs = {"(": ")", "[": "]", "{": "}"}

    def close(i):
        """The index after the bracket opened at i."""
        depth = 0
        while i < len(text):
            if text[i] in pairs:
                depth += 1
            elif text[i] in ")]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i

    for m in re.finditer(r"\bmatch\b", text):
        i = m.end()
        while i < len(text) and text[i] not in "{;":  # the scrutinee: no braces outside brackets
            i = close(i) if text[i] in "([" else i + 1
        if i >= len(text) or text[i] != "{":
            continue
        end = close(i) - 1
        arms, j = [], i + 1
        while j < end:
            k = j
            while k < end and not text.startswith("=>", k):  # the pattern
                k = close(k) if text[k] in pairs else k + 1
            if k >= end:
                break
            arms.append(text[j:k].strip())
            k += 2
            while k < end and text[k].isspace():
                k += 1
            if k < end and text[k] == "{":  # a block: its end, then an optional comma
                k = close(k)
                while k < end and text[k].isspace():
                    k += 1
                k += text[k] == ","
            else:  # an expression: to the comma at depth 0
                while k < end and text[k] != ",":
                    k = close(k) if text[k] in pairs else k + 1
                k += 1
            j = k
        yield arms


def catch_all(pattern):
    """An arm matching every value: `_` or a binding (in a tuple alike), no guard."""
    pattern = re.sub(r"#\[[^\]]*\]", "", pattern).strip().lstrip("|").strip()
    return re.fullmatch(r"[\s(),_]*|[\s(),]*(?:ref\s+|mut\s+)?[a-z_][A-Za-z0-9_]*[\s(),_]*", pattern) is not None


def exhaustive_files(arm):
    """The files of non-test Rust code with an exhaustive `match` whose arms name `arm`."""
    found = set()
    for crate in sorted(CRATES.iterdir()):
        for part in ("src", "examples", "benches"):
            for f in sorted((crate / part).rglob("*.rs")):
                for arms in match_arms(strip_rust(f.read_text())):
                    if any(arm.search(a) for a in arms) and not any(catch_all(a) for a in arms):
                        found.add(rel(f))
                        break
    return found


def guide_tables():
    """The `.rs` files of the first column of each table in docs/guide.md's
    "Adding an algorithm" section, table by table."""
    text = (ROOT / "docs" / "guide.md").read_text()
    section = re.search(r"(?ms)^## Adding an algorithm\n(.*?)(?=^## )", text)
    tables, current = [], None
    for line in (section.group(1) if section else "").splitlines():
        if line.startswith("|"):
            if current is None:
                current = set()
                tables.append(current)
            cell = line.split("|")[1].strip().strip("`")
            if cell.endswith(".rs"):
                current.add(cell)
        else:
            current = None
    return tables


def main():
    breaches = []
    listing = "--list" in sys.argv
    for crate in sorted(CRATES.iterdir()):
        src = crate / "src"
        if not src.is_dir():
            continue
        edges = crate_graph(src)
        for comp in cycles(edges):
            names = sorted(rel(f) for f in comp)
            ties = [f"{rel(a)} -> {rel(b)}" for a in comp for b in edges[a] if b in comp]
            breaches.append("cycles: " + ", ".join(names) + "\n      " + "\n      ".join(sorted(ties)))
        for f in sorted(src.rglob("*.rs")):
            n = code_lines(f)
            limit = 500 if crate.name == "propdp-py" else 700
            if listing:
                print(f"{n:6d} {rel(f)}")
            if n > limit:
                breaches.append(f"size: {rel(f)} has {n} lines without its tests (at most {limit})")
    pkg = CRATES / "propdp-py" / "python" / "propdp"
    edges = python_graph(pkg)
    for comp in cycles(edges):
        ties = [f"{rel(a)} -> {rel(b)}" for a in comp for b in edges[a] if b in comp]
        breaches.append("cycles: " + ", ".join(sorted(rel(f) for f in comp)) + "\n      " + "\n      ".join(sorted(ties)))
    for f in sorted(pkg.glob("*.py")):
        n = len(f.read_text().splitlines())
        if listing:
            print(f"{n:6d} {rel(f)}")
        if n > 500:
            breaches.append(f"size: {rel(f)} has {n} lines (at most 500)")

    for f in sorted(pkg.glob("*.py")) + sorted((CRATES / "propdp-py" / "src").rglob("*.rs")):
        for k, line in enumerate(f.read_text().splitlines(), 1):
            if re.search(r"""\.replace\(\s*f?["'][^"']*--""", line):
                breaches.append(f"rewrite: {rel(f)}:{k} rewrites a CLI flag: {line.strip()}")

    for f in sorted((CRATES / "propdp" / "src").rglob("*.rs")):
        text = strip_rust(f.read_text())
        anyhow_result = re.search(r"use\s+anyhow::(?:Result\b|\{[^}]*\bResult\b)", text)
        for m in re.finditer(r"(?m)^\s*pub\s+(?:async\s+)?fn\s+(\w+)[^{;]*?->\s*([^{;]+)", text):
            ret = m.group(2)
            if "anyhow" in ret or (anyhow_result and re.match(r"\s*Result\s*<[^,<>]*(<[^<>]*>)?[^,<>]*>\s*(where|$)", ret)):
                breaches.append(f"anyhow: {rel(f)}: pub fn {m.group(1)} returns anyhow ({ret.strip()})")

    acc = []
    for f in sorted((CRATES / "propdp-accountant" / "src").rglob("*.rs")):
        for m in re.finditer(r"(?m)^pub\s+fn\s+(\w*(?:epsilon|calibrate)\w*)", strip_rust(f.read_text())):
            acc.append(f"{rel(f)}: {m.group(1)}")
    if listing:
        print("accountant:", *acc, sep="\n  ")
    if len(acc) > 3:
        breaches.append(f"accountant: {len(acc)} public free functions named *epsilon*/*calibrate* (at most 3): " + ", ".join(acc))

    arm = re.compile(r"Algorithm(?:Kind)?::\w+\s*(?:\{[^{}]*\})?\s*=>\s*\(?\s*MechanismKind::")
    mapped = sorted(
        rel(f)
        for f in CRATES.rglob("*.rs")
        if "propdp-accountant" not in f.parts and "tests" not in f.parts and arm.search(strip_rust(f.read_text()))
    )
    if len(mapped) != 1:
        breaches.append("mechanism: the algorithm -> mechanism mapping is written in " + (", ".join(mapped) or "no file"))

    try:
        subjects = subprocess.run(
            ["git", "-C", str(ROOT), "log", "--format=%s", "-30"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        subjects = []
    if subjects:
        lengths = sorted(len(s) for s in subjects)
        median = (lengths[(len(lengths) - 1) // 2] + lengths[len(lengths) // 2]) / 2
        if listing:
            print(f"median subject of the last {len(lengths)} commits: {median} characters")
        if median > 72:
            breaches.append(f"subjects: the median subject of the last {len(lengths)} commits has {median} characters")

    tables = guide_tables()
    for name, arm, listed in [
        ("kind", KIND_ARM, tables[0] if tables else set()),
        ("shape", SHAPE_ARM, tables[1] if len(tables) > 1 else set()),
    ]:
        found = exhaustive_files(arm)
        if listing:
            print(f"exhaustive matches on an algorithm {name}:", *sorted(found), sep="\n  ")
        if found != listed:
            breaches.append(
                f"algorithms: docs/guide.md's {name} table differs from the files with exhaustive matches on the "
                f"algorithm {name}: missing " + (", ".join(sorted(found - listed)) or "none") + "; not matching "
                + (", ".join(sorted(listed - found)) or "none")
            )

    for b in breaches:
        print(b)
    print(f"check_tree: {len(breaches)} breach(es)" if breaches else "check_tree: the tree keeps its rules")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
