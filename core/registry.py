"""Named implementations (losses, rankers, LLM backends) that declare themselves where they are defined.

A package holds one :class:`Registry`; each of its modules marks what it adds with the registry's
decorator, with literal arguments::

    @register_loss("ranknet", order=1)
    class RankNet(RankingLoss): ...

so adding an implementation is one new module in the package. The package's modules are found with
``pkgutil`` over its ``__path__``, and their declarations are read from their *source* (``ast``,
nothing executed), so the names and their metadata are known without importing the modules: the
dashboard lists the losses and rankers without importing torch, and an LLM spec imports only the
backend it names. :meth:`Registry.load` imports the declaring module on first use; the decorator then
records the object.

What the source reader recognises is every *call* of the decorator in a module, under its own name or
an alias its module imported it as (``from ltr.losses import register_loss as loss``), or as an
attribute (``losses.register_loss``): so ``@register_loss("x")`` and ``register_loss("x")(cls)`` are
both read. Its arguments must be literals (a name and keyword constants), since nothing is executed:
a declaration that is not (``@register_loss(NAME)``) or a module that does not parse is *refused*
with the file and line, and only that declaration is missing: the package's other names still list
and load (:meth:`Registry.problems` says what was refused, and so does the error for an unknown name).
Registering any other way (``LOSSES.register(...)`` or a decorator rebound to another name at run
time) cannot be read without executing the module: :meth:`Registry.verify` imports every module and
names each disagreement between the source-read names and what the imports registered (a test runs it
on every registry of the project).

An object registered at run time in a module outside the package (a test's) is known from then on too.
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path


class RegistryError(ValueError):
    """A malformed or conflicting declaration, or an unknown name (the message lists the known ones)."""


class RegistryWarning(UserWarning):
    """A declaration the source reader refused (only that name is missing; the message says where)."""


@dataclass(frozen=True)
class Declaration:
    """``name`` declared in ``module`` with literal ``info`` (``order``, flags, ...)."""
    name: str
    module: str
    info: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def order(self) -> tuple:
        order = self.info.get("order")
        return (order is None, order if order is not None else 0, self.name)


class Registry:
    """The implementations of one ``kind`` ("loss", "ranker", "LLM backend") in ``package``, each
    declared by a call of ``decorator`` (the name its modules use, e.g. ``"register_loss"``)."""

    def __init__(self, package: str, decorator: str, kind: str):
        self.package, self.decorator, self.kind = package, decorator, kind
        self._scanned: dict[str, Declaration] | None = None
        self._problems: list[str] = []  # declarations refused by the last read of the source
        self._registered_info: dict[str, dict] = {}  # what each decorator call passed, for verify()
        self._added: dict[str, Declaration] = {}  # registered at run time outside the package's source
        self._objects: dict[str, object] = {}
        self._lock = threading.RLock()

    # ---- declaring ------------------------------------------------------------------------------
    def register(self, name: str, **info):
        """Decorator recording ``obj`` under ``name``; ``info`` must be the literals its source says."""
        def record(obj):
            with self._lock:
                known = self._objects.get(name)
                if known is not None and _qualname(known) != _qualname(obj):
                    raise RegistryError(f"{self.kind} {name!r} registered twice: by {_qualname(known)} "
                                        f"and by {_qualname(obj)}")
                declared = self.declarations().get(name)
                if declared is None or declared.module != obj.__module__:
                    self._added[name] = Declaration(name, obj.__module__, dict(info))
                self._objects[name] = obj
                self._registered_info[name] = dict(info)
            return obj
        return record

    def forget(self, name: str) -> None:
        """Drop a run-time registration (a test's), and read the source again on next use."""
        with self._lock:
            self._added.pop(name, None)
            self._objects.pop(name, None)
            self._registered_info.pop(name, None)
            self._scanned = None

    def refresh(self) -> None:
        """Read the package's source again on next use (a module added since, or a ``__path__`` extended)."""
        with self._lock:
            self._scanned = None

    # ---- reading --------------------------------------------------------------------------------
    def declarations(self) -> dict[str, Declaration]:
        """Every declaration, in ``order`` (then name; undeclared orders last), source first."""
        with self._lock:
            if self._scanned is None:
                self._scanned, self._problems = self._scan()
                for problem in self._problems:  # said once per read, where the package is first used
                    warnings.warn(f"{self.kind} declaration refused: {problem}", RegistryWarning, stacklevel=3)
            merged = {**self._scanned, **self._added}
        return dict(sorted(merged.items(), key=lambda item: item[1].order))

    def problems(self) -> list[str]:
        """The declarations the source reader refused (``file:line: why``); empty when all were read."""
        self.declarations()
        with self._lock:
            return list(self._problems)

    def names(self) -> tuple[str, ...]:
        return tuple(self.declarations())

    def info(self, name: str) -> dict:
        return dict(self._declaration(name).info)

    def load(self, name: str):
        """The object registered as ``name`` (its module imported on first use)."""
        declaration = self._declaration(name)
        if name not in self._objects:
            importlib.import_module(declaration.module)
        try:
            return self._objects[name]
        except KeyError:
            raise RegistryError(f"{declaration.module} declares {self.kind} {name!r} but registered nothing "
                                f"under that name when imported") from None

    def load_all(self) -> dict[str, object]:
        return {name: self.load(name) for name in self.names()}

    def verify(self) -> list[str]:
        """Import every module of the package and compare what registered with what the source says:
        one line per disagreement (a refused declaration, a module that fails to import, a name read but
        not registered, registered but not read, or registered with other metadata); empty when they agree."""
        out = self.problems()
        package = importlib.import_module(self.package)
        modules = [f"{self.package}.{m.name}" for m in pkgutil.iter_modules(package.__path__) if not m.ispkg]
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception as exc:  # noqa: BLE001 - reported as a disagreement, the others still checked
                out.append(f"{module}: importing it failed: {type(exc).__name__}: {exc}")
        with self._lock:
            scanned = dict(self._scanned or {})
            objects, registered_info = dict(self._objects), dict(self._registered_info)
        for name, declared in scanned.items():
            obj = objects.get(name)
            if obj is None:
                out.append(f"{declared.module} declares {self.kind} {name!r} but registered nothing under it")
            elif obj.__module__ != declared.module:
                out.append(f"{self.kind} {name!r} is declared in {declared.module} but registered by {_qualname(obj)}")
            elif registered_info.get(name, {}) != declared.info:
                out.append(f"{self.kind} {name!r}: the source of {declared.module} says {declared.info}, its "
                           f"decorator was called with {registered_info.get(name)}")
        for name, obj in objects.items():
            if obj.__module__ in modules and name not in scanned:
                out.append(f"{_qualname(obj)} registered {self.kind} {name!r}, which the source reader does not "
                           f"see: declare it with a call of {self.decorator}(...) and literal arguments")
        return out

    def _declaration(self, name: str) -> Declaration:
        declarations = self.declarations()
        if name not in declarations:
            problems = self.problems()
            refused = f" ({len(problems)} declaration(s) refused: {'; '.join(problems)})" if problems else ""
            raise RegistryError(f"unknown {self.kind} {name!r}; expected one of {', '.join(declarations)}{refused}")
        return declarations[name]

    # ---- the source -----------------------------------------------------------------------------
    def _scan(self) -> tuple[dict[str, Declaration], list[str]]:
        package = importlib.import_module(self.package)
        found: dict[str, Declaration] = {}
        problems: list[str] = []
        for module in pkgutil.iter_modules(package.__path__):
            if module.ispkg:
                continue
            path = Path(module.module_finder.path) / f"{module.name}.py"
            if not path.is_file():
                continue
            declarations, refused = self._declarations_in(path, f"{self.package}.{module.name}")
            problems += refused
            for declaration in declarations:
                if declaration.name in found:  # the first stands; the second is refused, by name
                    problems.append(f"{path}: {self.kind} {declaration.name!r} declared twice: in "
                                    f"{found[declaration.name].module} and in {declaration.module}; the "
                                    f"second is not listed")
                    continue
                found[declaration.name] = declaration
        return found, problems

    def _declarations_in(self, path: Path, module: str) -> tuple[list[Declaration], list[str]]:
        """The declarations in one module's source, and the ones refused (``file:line: why``)."""
        text = path.read_text(encoding="utf-8")
        if self.decorator not in text:  # most modules (helpers) declare nothing: skip parsing them
            return [], []
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as exc:
            return [], [f"{path}:{exc.lineno}: does not parse ({exc.msg}), so its {self.kind}s are unknown"]
        # The names the decorator goes by in this module: its own, and any alias it was imported as.
        called = {self.decorator} | {alias.asname for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                                     for alias in node.names if alias.name == self.decorator and alias.asname}
        out, refused = [], []
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _calls(node.func, called,
                                                                                           self.decorator)]
        for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
            where = f"{path}:{call.lineno}"
            try:
                if len(call.args) != 1 or any(k.arg is None for k in call.keywords):
                    raise ValueError("one positional name and keyword arguments")
                name = ast.literal_eval(call.args[0])
                info = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            except (ValueError, TypeError, SyntaxError) as exc:
                refused.append(f"{where}: {self.decorator}(...) takes literal arguments ({exc}), read without "
                               f"running the module; this {self.kind} is not listed")
                continue
            if not isinstance(name, str) or not name:
                refused.append(f"{where}: {self.decorator}(...) names the {self.kind} with a string; "
                               f"this {self.kind} is not listed")
                continue
            out.append(Declaration(name, module, info))
        return out, refused


def _calls(func: ast.expr, names: set[str], attribute: str) -> bool:
    """Whether ``func`` is the decorator: one of ``names`` (its own or an alias), or ``<x>.<attribute>``."""
    if isinstance(func, ast.Name):
        return func.id in names
    return isinstance(func, ast.Attribute) and func.attr == attribute


def _qualname(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"
