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
records the object. A declaration must be a decorator call with literal arguments (a name and keyword
constants): anything else is an error naming the file and line, never a silently missing name.

An object registered at run time in a module outside the package (a test's) is known from then on too.
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import threading
from dataclasses import dataclass, field
from pathlib import Path


class RegistryError(ValueError):
    """A malformed or conflicting declaration, or an unknown name (the message lists the known ones)."""


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
            return obj
        return record

    def forget(self, name: str) -> None:
        """Drop a run-time registration (a test's), and read the source again on next use."""
        with self._lock:
            self._added.pop(name, None)
            self._objects.pop(name, None)
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
                self._scanned = self._scan()
            merged = {**self._scanned, **self._added}
        return dict(sorted(merged.items(), key=lambda item: item[1].order))

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

    def _declaration(self, name: str) -> Declaration:
        declarations = self.declarations()
        if name not in declarations:
            raise RegistryError(f"unknown {self.kind} {name!r}; expected one of {', '.join(declarations)}")
        return declarations[name]

    # ---- the source -----------------------------------------------------------------------------
    def _scan(self) -> dict[str, Declaration]:
        package = importlib.import_module(self.package)
        found: dict[str, Declaration] = {}
        for module in pkgutil.iter_modules(package.__path__):
            if module.ispkg:
                continue
            path = Path(module.module_finder.path) / f"{module.name}.py"
            if not path.is_file():
                continue
            for declaration in self._declarations_in(path, f"{self.package}.{module.name}"):
                if declaration.name in found:
                    raise RegistryError(f"{self.kind} {declaration.name!r} declared twice: in "
                                        f"{found[declaration.name].module} and in {declaration.module}")
                found[declaration.name] = declaration
        return found

    def _declarations_in(self, path: Path, module: str) -> list[Declaration]:
        text = path.read_text(encoding="utf-8")
        if self.decorator not in text:  # most modules (helpers) declare nothing: skip parsing them
            return []
        out = []
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if not isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                continue
            for call in node.decorator_list:
                if not (isinstance(call, ast.Call) and _called_name(call.func) == self.decorator):
                    continue
                where = f"{path}:{call.lineno}"
                try:
                    if len(call.args) != 1 or any(k.arg is None for k in call.keywords):
                        raise ValueError("one positional name and keyword arguments")
                    name = ast.literal_eval(call.args[0])
                    info = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
                except ValueError as exc:
                    raise RegistryError(f"{where}: @{self.decorator}(...) takes literal arguments "
                                        f"({exc})") from None
                if not isinstance(name, str) or not name:
                    raise RegistryError(f"{where}: @{self.decorator}(...) names the {self.kind} with a string")
                out.append(Declaration(name, module, info))
        return out


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _qualname(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"
