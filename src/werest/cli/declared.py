"""Library defaults and constants read from werest's own source, without importing it.

A settings block that builds a library object declares its defaults once, in the library
(:data:`werest.cli.schema.LIBRARY`), and a config group option may name a library constant
(``${library:werest.features.agreement.PANEL_SIZE}``). Importing those modules to read one
number would import pandas, scipy and scikit-learn, which ``werest <command> --help`` must not
(``tests/unit/test_startup.py``), so the values are read from the modules' syntax tree
instead: a literal, a tuple or list of literals, a module-level name bound to one (in the same
module or imported from another werest module), ``field(default=...)`` or
``field(default_factory=list|dict|tuple)``. Anything else is a TypeError naming the value, so a
default werest cannot read this way is found by the tests
(``tests/unit/test_settings_objects.py`` compares every value with the imported one), not by a
user.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parents[1]  # src/werest
_FACTORIES = {"list": list, "dict": dict, "tuple": tuple, "set": set}


def library_default(target: str, name: str) -> Any:
    """The default of parameter ``name`` of the class ``target`` (``werest.stats.Bootstrap``):
    a dataclass field's or an ``__init__`` parameter's, tuples as lists (as a config holds
    them). TypeError when the class declares none, or one that is no plain value."""
    module, _, class_name = target.rpartition(".")
    tree = _module_tree(module)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        raise TypeError(f"{module} defines no class {class_name}")
    for node in cls.body:  # a dataclass field
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
        ):
            if node.value is None:
                raise TypeError(f"{target} declares no default for {name!r}")
            return _as_config(_field_default(module, node.value, f"{target}.{name}"))
    init = next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
    )
    if init is not None:
        arguments = init.args.args + init.args.kwonlyargs
        defaults = [None] * (len(init.args.args) - len(init.args.defaults)) + list(
            init.args.defaults
        )
        defaults += list(init.args.kw_defaults)
        for argument, default in zip(arguments, defaults, strict=True):
            if argument.arg == name:
                if default is None:
                    raise TypeError(f"{target} declares no default for {name!r}")
                return _as_config(_value(module, default, f"{target}.{name}"))
    raise TypeError(f"{target} declares no default for {name!r}")


def library_constant(dotted: str) -> Any:
    """The value of the module-level constant ``dotted`` (``werest.features.agreement.
    PANEL_SIZE``), tuples as lists; TypeError when there is none, or no plain value."""
    module, _, name = dotted.rpartition(".")
    return _as_config(_name(module, name, dotted))


@functools.cache
def _module_tree(module: str) -> ast.Module:
    if module != "werest" and not module.startswith("werest."):
        raise TypeError(f"{module}: only werest's own modules are read")
    parts = module.split(".")[1:]
    path = _PACKAGE.joinpath(*parts).with_suffix(".py")
    if not path.is_file():
        path = _PACKAGE.joinpath(*parts, "__init__.py")
    if not path.is_file():
        raise TypeError(f"no module {module}")
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _field_default(module: str, node: ast.expr, what: str) -> Any:
    is_field = (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "field"
    )
    if not is_field:
        return _value(module, node, what)
    keywords = {k.arg: k.value for k in node.keywords}
    if "default" in keywords:
        return _value(module, keywords["default"], what)
    factory = keywords.get("default_factory")
    if isinstance(factory, ast.Name) and factory.id in _FACTORIES:
        return _FACTORIES[factory.id]()
    raise TypeError(f"{what}: a default werest cannot read without importing its module")


def _value(module: str, node: ast.expr, what: str) -> Any:
    if isinstance(node, ast.Name):
        return _name(module, node.id, what)
    if isinstance(node, ast.Tuple | ast.List):
        return [_value(module, item, what) for item in node.elts]
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise TypeError(
            f"{what}: a default werest cannot read without importing its module "
            f"({ast.unparse(node)})"
        ) from None


def _name(module: str, name: str, what: str) -> Any:
    """The value a module-level ``name`` is bound to: assigned there, or imported from
    another werest module."""
    for node in _module_tree(module).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return _value(module, node.value, what)
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
            and node.value is not None
        ):
            return _value(module, node.value, what)
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _name(node.module, alias.name, what)
    raise TypeError(f"{what}: {module} binds no {name} werest can read")


def _as_config(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_as_config(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_config(v) for k, v in value.items()}
    return value
