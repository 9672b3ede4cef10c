"""The source reader of core.registry against what importing the modules registers (issue 33, "Also found"):
an aliased decorator, the call form ``register_x("n")(cls)``, a non-literal name, and a test that fails
whenever the source-read names and the imported classes of the project's registries disagree."""
from __future__ import annotations

import importlib
import sys
import textwrap
import uuid

import pytest

from core.registry import Registry, RegistryWarning

INIT = '''
from core.registry import Registry
THINGS = Registry(__name__, "register_thing", "thing")
register_thing = THINGS.register
'''


@pytest.fixture
def toy_package(tmp_path, monkeypatch):
    """``write(module=source, ...)`` makes a fresh package of those modules (with a registry of things,
    decorator ``register_thing``) importable, and returns its registry."""
    made = []

    def write(**modules: str) -> Registry:
        name = f"toy_{uuid.uuid4().hex[:8]}"
        folder = tmp_path / name
        folder.mkdir()
        (folder / "__init__.py").write_text(INIT)
        for module, source in modules.items():
            (folder / f"{module}.py").write_text(textwrap.dedent(source).replace("PKG", name))
        made.append(name)
        return importlib.import_module(name).THINGS

    monkeypatch.syspath_prepend(str(tmp_path))
    yield write
    for name in made:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def test_an_aliased_decorator_and_the_call_form_are_read_from_the_source(toy_package):
    things = toy_package(
        plain='''
            from PKG import register_thing
            @register_thing("plain", order=1)
            class Plain: pass
        ''',
        aliased='''
            from PKG import register_thing as thing
            @thing("aliased", order=2)
            class Aliased: pass
        ''',
        called='''
            from PKG import register_thing
            class Called: pass
            register_thing("called", order=3)(Called)
        ''',
        attribute='''
            import PKG
            @PKG.register_thing("attribute", order=4)
            def attribute(): pass
        ''')
    assert things.names() == ("plain", "aliased", "called", "attribute")
    assert not [m for m in sys.modules if m.startswith(things.package + ".")]  # listed without importing
    assert things.load("called").__name__ == "Called" and things.load("aliased").__name__ == "Aliased"
    assert things.verify() == [] and things.problems() == []


def test_a_non_literal_name_is_refused_by_file_and_line_and_the_other_names_still_load(toy_package):
    with pytest.warns(RegistryWarning, match=r"bad\.py:4: register_thing\(\.\.\.\) takes literal arguments"):
        things = toy_package(
            good='''
                from PKG import register_thing
                @register_thing("good")
                class Good: pass
            ''',
            bad='''
                from PKG import register_thing
                NAME = "bad"
                @register_thing(NAME)
                class Bad: pass
            ''')
        assert things.names() == ("good",)
    assert things.load("good").__name__ == "Good"
    with pytest.raises(ValueError, match=r"unknown thing 'bad'; expected one of good \(1 declaration\(s\) refused: "
                                         r".*bad\.py:4: register_thing"):
        things.load("bad")
    assert len(things.verify()) == 2  # refused in the source, and registered at import without being read
    assert "registered thing 'bad', which the source reader does not see" in things.verify()[-1]


def test_verify_names_every_disagreement_between_the_source_and_the_imports(toy_package):
    things = toy_package(
        rebound='''
            from PKG import THINGS
            @THINGS.register("rebound")
            class Rebound: pass
        ''',
        silent='''
            from PKG import register_thing
            def register_nothing(*args, **kw):
                return lambda obj: obj
            register_thing = register_nothing
            @register_thing("silent")
            class Silent: pass
        ''',
        broken='''
            from PKG import register_thing
            import not_a_module_anywhere
            @register_thing("broken")
            class Broken: pass
        ''')
    assert things.names() == ("broken", "silent")
    problems = things.verify()
    assert any("broken: importing it failed: ModuleNotFoundError" in p for p in problems)
    assert any("declares thing 'silent' but registered nothing under it" in p for p in problems)
    assert any("Rebound registered thing 'rebound', which the source reader does not see" in p for p in problems)
    assert len(problems) == 4  # and 'broken' registered nothing


def test_the_projects_registries_agree_with_their_imported_modules():
    """Every loss, ranker and LLM backend the source reader lists is what importing its module registers,
    with the same metadata, and nothing registers unseen."""
    from ltr.losses import LOSSES
    from ltr.rankers import RANKERS
    from pipeline.llm.backends import BACKENDS

    for registry in (LOSSES, RANKERS, BACKENDS):
        assert registry.verify() == [], registry.kind
        assert registry.names()
