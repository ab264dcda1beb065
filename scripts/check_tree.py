#!/usr/bin/env python3
"""Read the source tree and check the structural rules of docs/guide.md
("Layout rules"); exit 1 naming every breach.

    python3 scripts/check_tree.py            # all rules
    python3 scripts/check_tree.py --list     # also print each crate's file sizes

    python3 scripts/check_tree.py --self-test   # only the rules' own tests

Every run first checks each rule against a small tree made to break it
(`self_test`): a rule that stops seeing its breach fails the run.

Rules:
  cycles     no import cycle between the files of a crate (Rust: `use`,
             `crate::`/`super::`/`self::` paths and child-module paths; a
             parent's `mod` lines and `pub use` re-exports are its surface,
             not imports, unless the file uses the name itself; re-exports
             are followed to the defining file; a file's use of its parent
             or any ancestor module (`super::X`, the crate root) is an
             import like any other; `#[cfg(test)]` modules are left out)
             nor between the modules of the Python package
  size       no Rust source file above 700 lines without its `#[cfg(test)]`
             modules, wherever they sit; none above 500 in the Python
             binding (crates/propdp-py: src/*.rs and python/propdp/*.py)
  anyhow     no library crate (every crate but the CLI) depends on anyhow,
             and no `pub fn` of one returns it, type aliases and renamed
             imports followed
  rewrite    no flag rewriting by string replacement (`.replace("--`) in
             the Python package (its Python and its Rust binding)
  accountant at most 3 public free functions named *epsilon* or *calibrate*
             in propdp-accountant
  mechanism  the algorithm -> mechanism mapping written once: outside the
             accountant, one file builds a `MechanismKind` where it branches
             on an algorithm (a match or an if/else on `Algorithm`,
             `AlgorithmKind`, `RawAlgorithm`, `Shape` or a release kind)
  subjects   the median subject of the last 30 commits at most 72 characters
             (skipped outside a git checkout)
  catchall   no `match` in non-test code whose arms name an algorithm kind
             (`Algorithm::`, `AlgorithmKind::`, `RawAlgorithm::`) or shape
             (`Shape::`) ends in a catch-all arm (`_ =>` or a bare binding):
             a new kind must be a compile error there
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
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def blank_literals(text):
    """The text with comments, strings and char literals blanked (newlines
    kept, so offsets and line numbers are the original's)."""
    keep = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"//[^\n]*", keep, text)
    text = re.sub(r"/\*.*?\*/", keep, text, flags=re.S)
    text = re.sub(r"'(?:\\.|[^'\\\n])'", keep, text)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', keep, text)
    return re.sub(r'"(?:\\.|[^"\\])*"', keep, text, flags=re.S)


def code_lines(path):
    """Lines of a Rust file without its `#[cfg(test)]` modules, wherever
    they sit (a test module in the middle hides none of the code after it)."""
    raw = path.read_text()
    text = blank_literals(raw)
    test_lines = 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([a-z]+\))?\s+)?mod\s+\w+\s*\{", text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        test_lines += raw.count("\n", m.start(), j) + 1
    return len(raw.splitlines()) - test_lines


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


def anyhow_names(text):
    """The names that mean anyhow's Result or Error in a file: `anyhow`
    itself, `use anyhow::{Result, Error as E}` imports, and type aliases
    whose right side names one of them (followed to a fixed point)."""
    names = {"anyhow"}
    for m in re.finditer(r"use\s+anyhow::([^;]+);", text):
        for p in use_paths(m.group(1)):
            if p in ("Result", "Error"):
                names.add(p)
        for m2 in re.finditer(r"\b(?:Result|Error)\s+as\s+(%s)" % IDENT, m.group(1)):
            names.add(m2.group(1))
    aliases = re.findall(r"\btype\s+(%s)\s*(?:<[^=]*>)?\s*=\s*([^;]+);" % IDENT, text)
    grew = True
    while grew:
        grew = False
        for name, rhs in aliases:
            if name not in names and any(re.search(r"\b%s\b" % re.escape(n), rhs) for n in names):
                names.add(name)
                grew = True
    return names


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
    if re.search(r"\b(?:true|false)\b", pattern):
        return False  # a literal in a tuple: one case, not all
    return re.fullmatch(r"[\s(),_]*|[\s(),]*(?:ref\s+|mut\s+)?[a-z_][A-Za-z0-9_]*[\s(),_]*", pattern) is not None


def algorithm_matches(root, arm):
    """(exhaustive, with a catch-all): the files of non-test Rust code with a
    `match` whose arms name `arm` and list every case, and those with one
    whose arms end in a catch-all (`_ =>` or a bare binding)."""
    exhaustive, catch = set(), set()
    for crate in sorted((root / "crates").iterdir()):
        for part in ("src", "examples", "benches"):
            for f in sorted((crate / part).rglob("*.rs")):
                for arms in match_arms(strip_rust(f.read_text())):
                    if any(arm.search(a) for a in arms):
                        name = str(f.relative_to(root))
                        (catch if any(catch_all(a) for a in arms) else exhaustive).add(name)
    return exhaustive, catch


def guide_tables(root):
    """The `.rs` files of the first column of each table in docs/guide.md's
    "Adding an algorithm" section, table by table (None without the guide)."""
    guide = root / "docs" / "guide.md"
    if not guide.is_file():
        return None
    text = guide.read_text()
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


def names_anyhow(ret, name):
    """Whether the return type `ret` names anyhow through `name`: the name
    itself, not a path's last segment (`crate::Result` is the crate's own),
    and with one type parameter where `name` stands for anyhow's
    `Result<T, E = anyhow::Error>` (two name their error)."""
    if name == "anyhow":
        return re.search(r"\banyhow::", ret) is not None
    for m in re.finditer(r"(?<![\w:])%s\b\s*(<)?" % re.escape(name), ret):
        if not m.group(1):
            return True
        depth, j, commas = 1, m.end(), 0
        while j < len(ret) and depth:
            c = ret[j]
            depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(c, 0)
            commas += c == "," and depth == 1
            j += 1
        if commas == 0:
            return True
    return False


def library_crates(crates):
    """Every crate but the command line's."""
    return [c for c in sorted(crates.iterdir()) if (c / "src").is_dir() and c.name != "propdp-cli"]


# a branch on an algorithm: a match arm or an if/else test on one of its types
ALGORITHM_BRANCH = re.compile(
    r"\b(?:Algorithm|AlgorithmKind|RawAlgorithm|Shape|Release)::\w+\s*(?:\{[^{}]*\}|\([^()]*\))?\s*(?:\|[^=]*)?=>"
    r"|\bif\s+(?:let\s+)?[^{]*\b(?:Algorithm|AlgorithmKind|RawAlgorithm|Shape|Release)::"
    r"|\bmatches!\s*\([^)]*\b(?:Algorithm|AlgorithmKind|RawAlgorithm|Shape|Release)::"
    r"|\bif\s+(?:let\s+[^=]*=\s*)?[^{]*\.(?:is_objective|is_output|is_iterative|gradient_steps|shape|kind|release|descent)\b"
)
# a MechanismKind built (not matched): after `=>`, `=`, `(`, `,`, `return` or an opening brace
MECHANISM_BUILT = re.compile(r"(?:=>|[=(,{]|\breturn)\s*(?:propdp_core::accountant::|accountant::)?MechanismKind::\w+")


def breaches(root):
    """Every breach of the rules in the tree at `root`."""
    crates = root / "crates"
    rel = lambda f: str(Path(f).relative_to(root))
    out = []
    for crate in sorted(crates.iterdir()):
        src = crate / "src"
        if not src.is_dir():
            continue
        edges = crate_graph(src)
        for comp in cycles(edges):
            names = sorted(rel(f) for f in comp)
            ties = [f"{rel(a)} -> {rel(b)}" for a in comp for b in edges[a] if b in comp]
            out.append("cycles: " + ", ".join(names) + "\n      " + "\n      ".join(sorted(ties)))
        for f in sorted(src.rglob("*.rs")):
            n = code_lines(f)
            limit = 500 if crate.name == "propdp-py" else 700
            if n > limit:
                out.append(f"size: {rel(f)} has {n} lines without its tests (at most {limit})")
    pkg = crates / "propdp-py" / "python" / "propdp"
    if pkg.is_dir():
        edges = python_graph(pkg)
        for comp in cycles(edges):
            ties = [f"{rel(a)} -> {rel(b)}" for a in comp for b in edges[a] if b in comp]
            out.append("cycles: " + ", ".join(sorted(rel(f) for f in comp)) + "\n      " + "\n      ".join(sorted(ties)))
        for f in sorted(pkg.glob("*.py")):
            n = len(f.read_text().splitlines())
            if n > 500:
                out.append(f"size: {rel(f)} has {n} lines (at most 500)")
        for f in sorted(pkg.glob("*.py")) + sorted((crates / "propdp-py" / "src").rglob("*.rs")):
            for k, line in enumerate(f.read_text().splitlines(), 1):
                if re.search(r"""\.replace\(\s*f?["'][^"']*--""", line):
                    out.append(f"rewrite: {rel(f)}:{k} rewrites a CLI flag: {line.strip()}")

    for crate in library_crates(crates):
        manifest = crate / "Cargo.toml"
        if manifest.is_file() and re.search(r"(?m)^\s*anyhow\b", manifest.read_text()):
            out.append(f"anyhow: {rel(manifest)}: a library crate depends on anyhow (errors are typed where they arise)")
        for f in sorted((crate / "src").rglob("*.rs")):
            text = strip_rust(f.read_text())
            names = anyhow_names(text)
            if names == {"anyhow"} and "anyhow" not in text:
                continue
            for m in re.finditer(r"(?m)^\s*pub\s+(?:async\s+)?fn\s+(\w+)[^{;]*?->\s*([^{;]+)", text):
                ret = re.sub(r"\bwhere\b.*", "", m.group(2), flags=re.S)
                if any(names_anyhow(ret, n) for n in names):
                    out.append(f"anyhow: {rel(f)}: pub fn {m.group(1)} returns anyhow ({ret.strip()})")

    acc = []
    acc_src = crates / "propdp-accountant" / "src"
    for f in sorted(acc_src.rglob("*.rs")) if acc_src.is_dir() else []:
        for m in re.finditer(r"(?m)^pub\s+fn\s+(\w*(?:epsilon|calibrate)\w*)", strip_rust(f.read_text())):
            acc.append(f"{rel(f)}: {m.group(1)}")
    if len(acc) > 3:
        out.append(f"accountant: {len(acc)} public free functions named *epsilon*/*calibrate* (at most 3): " + ", ".join(acc))

    mapped = []
    for f in sorted(crates.rglob("*.rs")):
        if "propdp-accountant" in f.parts or "tests" in f.parts or "examples" in f.parts or "benches" in f.parts:
            continue
        text = strip_rust(f.read_text())
        if MECHANISM_BUILT.search(text) and ALGORITHM_BRANCH.search(text):
            mapped.append(rel(f))
    if len(mapped) != 1:
        out.append("mechanism: the algorithm -> mechanism mapping is written in " + (", ".join(mapped) or "no file"))

    tables = guide_tables(root)
    for name, arm, k in [("kind", KIND_ARM, 0), ("shape", SHAPE_ARM, 1)]:
        exhaustive, catch = algorithm_matches(root, arm)
        for f in sorted(catch):
            out.append(f"catchall: {f} matches on an algorithm {name} with a catch-all arm (`_ =>`): list every case")
        if tables is None:
            continue
        listed = tables[k] if len(tables) > k else set()
        if exhaustive != listed:
            out.append(
                f"algorithms: docs/guide.md's {name} table differs from the files with exhaustive matches on the "
                f"algorithm {name}: missing " + (", ".join(sorted(exhaustive - listed)) or "none") + "; not matching "
                + (", ".join(sorted(listed - exhaustive)) or "none")
            )

    try:
        subjects = subprocess.run(
            ["git", "-C", str(root), "log", "--format=%s", "-30"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        subjects = []
    if subjects:
        lengths = sorted(len(s) for s in subjects)
        median = (lengths[(len(lengths) - 1) // 2] + lengths[len(lengths) // 2]) / 2
        if median > 72:
            out.append(f"subjects: the median subject of the last {len(lengths)} commits has {median} characters")
    return out


def listing(root):
    """Each file's size, the accountant's entry points."""
    for f in sorted((root / "crates").rglob("src/**/*.rs")):
        print(f"{code_lines(f):6d} {f.relative_to(root)}")


# one small tree per rule, made to break it: (rule, files)
BROKEN_TREES = {
    "cycles": {
        # a child using its parent's own item while the parent uses the child
        "crates/a/src/lib.rs": "pub mod m;\n",
        "crates/a/src/m/mod.rs": "mod child;\npub struct Shared;\npub fn f() { child::g(); }\n",
        "crates/a/src/m/child.rs": "use super::Shared;\npub fn g() -> Option<Shared> { None }\n",
    },
    "size": {
        # 690 lines of code, a test module, 20 more lines of code after it
        "crates/a/src/lib.rs": "fn a() {}\n" * 690
        + "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n"
        + "fn b() {}\n" * 20,
    },
    "anyhow": {
        # an alias of anyhow's Result in a library crate other than propdp
        "crates/a/src/lib.rs": "pub type Outcome<T> = anyhow::Result<T>;\npub type Again = Outcome<()>;\n"
        "pub fn f() -> Again { Ok(()) }\n",
    },
    "accountant": {
        "crates/propdp-accountant/src/lib.rs": "".join(f"pub fn epsilon_{k}() {{}}\n" for k in range(4)),
    },
    "mechanism": {
        # the table, and a second mapping written as if/else (on the type, and on a predicate)
        "crates/a/src/lib.rs": "pub fn m(k: AlgorithmKind) -> MechanismKind {\n    match k {\n"
        "        AlgorithmKind::Objective => MechanismKind::Objective { lambda: 1.0 },\n"
        "        AlgorithmKind::Dpgd => MechanismKind::Dpgd { steps: 1 },\n    }\n}\n",
        "crates/b/src/lib.rs": "pub fn n(a: Algorithm) -> MechanismKind {\n"
        "    if let Algorithm::Objective { lambda, .. } = a {\n        MechanismKind::Objective { lambda }\n"
        "    } else {\n        let m = MechanismKind::Dpgd { steps: 1 };\n        m\n    }\n}\n",
        "crates/c/src/lib.rs": "pub fn p(s: &Spec) -> MechanismKind {\n    if s.is_objective() {\n"
        "        MechanismKind::Objective { lambda: s.lambda }\n    } else {\n"
        "        MechanismKind::Output { lambda: s.lambda }\n    }\n}\n",
    },
    "catchall": {
        "crates/a/src/lib.rs": "pub fn f(a: Algorithm) -> f64 {\n    match a {\n"
        "        Algorithm::Dpgd { eta, .. } => eta,\n        _ => 0.0,\n    }\n}\n",
    },
    "algorithms": {
        # an exhaustive match in a file the guide's table does not list
        "docs/guide.md": "## Adding an algorithm\n\n| file | what |\n|---|---|\n| `crates/a/src/other.rs` | x |\n\n"
        "| file | what |\n|---|---|\n\n## Next\n",
        "crates/a/src/lib.rs": "pub fn f(k: AlgorithmKind) -> u8 {\n    match k {\n"
        "        AlgorithmKind::Dpgd => 1,\n        AlgorithmKind::Dpsgd => 2,\n    }\n}\n",
    },
    "rewrite": {
        "crates/propdp-py/src/lib.rs": 'fn f(s: &str) -> String { s.replace("--epsilon", "epsilon") }\n',
        "crates/propdp-py/python/propdp/__init__.py": "x = 1\n",
    },
}


def self_test():
    """Each rule finds the breach of its broken tree, and a tree keeping
    every rule has none; the failures, named."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for rule, files in BROKEN_TREES.items():
            root = Path(tmp) / rule
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            found = [b.split(":")[0] for b in breaches(root)]
            if rule not in found:
                failures.append(f"self-test: the {rule} rule missed its broken tree (found: {found or 'nothing'})")
        clean = Path(tmp) / "clean"
        for name, text in {
            "crates/a/src/lib.rs": "pub mod m;\npub fn top() { m::f(); }\n",
            "crates/a/src/m/mod.rs": "mod child;\nmod shared;\npub use shared::Shared;\npub fn f() { child::g(); }\n",
            "crates/a/src/m/shared.rs": "pub struct Shared;\n",
            "crates/a/src/m/child.rs": "use super::Shared;\npub fn g() -> Option<Shared> { None }\n",
            "crates/b/src/lib.rs": "pub fn m(k: AlgorithmKind) -> MechanismKind {\n    match k {\n"
            "        AlgorithmKind::Dpgd => MechanismKind::Dpgd { steps: 1 },\n    }\n}\n",
            "crates/propdp-cli/src/main.rs": "fn main() -> anyhow::Result<()> { Ok(()) }\n",
        }.items():
            (clean / name).parent.mkdir(parents=True, exist_ok=True)
            (clean / name).write_text(text)
        found = breaches(clean)
        if found:
            failures.append("self-test: a tree keeping every rule was found in breach: " + "; ".join(found))
    return failures


def main():
    failures = self_test()
    if "--self-test" in sys.argv:
        found = failures
    else:
        if "--list" in sys.argv:
            listing(ROOT)
        found = failures + breaches(ROOT)
    for b in found:
        print(b)
    print(f"check_tree: {len(found)} breach(es)" if found else "check_tree: the tree keeps its rules")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
