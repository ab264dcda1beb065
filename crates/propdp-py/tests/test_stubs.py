"""The type stubs of the native module (`_native.pyi`) say what the module has:
every public function, class and constant of `propdp._native` is in the
stubs and every stubbed one exists, with the same parameters (names, order,
kinds and which have defaults)."""

import ast
import inspect
from pathlib import Path

import pytest

from propdp import _native

STUBS = Path(__file__).resolve().parents[1] / "python" / "propdp" / "_native.pyi"


def _stubbed():
    tree = ast.parse(STUBS.read_text())
    functions, others = {}, set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node.args
        elif isinstance(node, ast.ClassDef):
            others.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            others.add(node.target.id)
    return functions, others


def _public(name):
    return not name.startswith("_") or name == "__version__"


def test_every_public_name_of_the_module_is_stubbed_and_every_stub_exists():
    functions, others = _stubbed()
    module = {n for n in dir(_native) if _public(n) and not inspect.ismodule(getattr(_native, n))}
    stubbed = {n for n in set(functions) | others if _public(n)}
    assert module - stubbed == set(), "in propdp._native but not in _native.pyi"
    assert stubbed - module == set(), "in _native.pyi but not in propdp._native"


def _stub_parameters(args):
    """(name, kind, has default) of a stub's parameters, in order."""
    positional = args.posonlyargs + args.args
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    out = [(a.arg, "positional", d) for a, d in zip(positional, defaults)]
    if args.vararg:
        out.append((args.vararg.arg, "var_positional", False))
    out += [(a.arg, "keyword_only", d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        out.append((args.kwarg.arg, "var_keyword", False))
    return out


def _native_parameters(fn):
    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: "positional",
        inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
        inspect.Parameter.VAR_POSITIONAL: "var_positional",
        inspect.Parameter.KEYWORD_ONLY: "keyword_only",
        inspect.Parameter.VAR_KEYWORD: "var_keyword",
    }
    return [
        (p.name, kinds[p.kind], p.default is not inspect.Parameter.empty)
        for p in inspect.signature(fn).parameters.values()
    ]


@pytest.mark.parametrize("name", sorted(_stubbed()[0]))
def test_a_stubbed_function_takes_the_parameters_of_the_native_one(name):
    stub = _stub_parameters(_stubbed()[0][name])
    assert stub == _native_parameters(getattr(_native, name))
