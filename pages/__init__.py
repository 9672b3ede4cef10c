"""The dashboard's pages: thin Streamlit scripts that only lay out widgets (data and charts come from
``ltr.views`` and ``pipeline.views``). ``app.py`` lists them in ``st.navigation``.

Rule for a page (checked by ``tests/pages/test_pages.py::test_page_files_follow_the_layout_rule``):

1. the file is ``pages/<url-path>.py``: its name without ``.py`` is its URL (``pages/training.py`` is
   ``/training``, ``pages/hard-to-retrieve.py`` is ``/hard-to-retrieve``);
2. its first statement after the imports is ``use_app_navigation()``;
3. it has one ``st.Page("pages/<url-path>.py", title=..., icon=...)`` line in ``app.py`` (the title,
   icon and sidebar section live there, nowhere else).

Why both 1 and 2: Streamlit still knows its legacy multipage mode, in which a ``pages/`` folder beside
the entry script makes the *first* script run of a fresh server run the requested page file directly
(without ``app.py``, so without the app's sidebar and page config). Rule 1 makes every deep link
find its file in that first run, and :func:`use_app_navigation` then turns the legacy mode off and
runs ``app.py`` in its place, within the same script run (so a button click that triggered the run
is not lost), which shows the same page (Streamlit resolves a page by its URL path). Every later
run goes through ``app.py`` anyway.
"""
from __future__ import annotations

from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def use_app_navigation() -> None:
    """Run ``app.py`` instead when Streamlit's legacy pages/ mode ran this page directly (cold server)."""
    import runpy

    import streamlit as st
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False  # what st.navigation itself does, one run too late
        runpy.run_path(str(APP), run_name="__main__")  # its st.navigation runs this page again, properly
        st.stop()


def navigation_section(section: str) -> list[tuple[str, str, str]]:
    """``[(page file, title, icon)]`` of one sidebar section of ``app.py``'s ``st.navigation``, read
    from app.py itself (titles and icons live there, nowhere else), e.g. for the Home page's links."""
    import ast

    for node in ast.walk(ast.parse(APP.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == section and isinstance(value, ast.List):
                    return [(call.args[0].value, *(next(ast.literal_eval(k.value) for k in call.keywords
                                                        if k.arg == name) for name in ("title", "icon")))
                            for call in value.elts if isinstance(call, ast.Call)]
    return []


ANSWER_OUTBOX_JS = Path(__file__).resolve().parent / "answer_outbox.js"
_mounted_components: dict = {}
_PENDING_CSS = (".pending { background: rgba(255, 189, 69, 0.2); color: inherit; padding: 0.5rem 0.75rem; "
                "border-radius: 0.5rem; margin-bottom: 0.5rem; font-family: inherit; }")


def answer_outbox(data: dict, *, key: str):
    """Draw the answer keys' outbox (``pages/answer_outbox.js``: Y / N answer the highlighted reason, each
    answer kept in the browser, shown pending, and sent until the server has stored it) with ``data``
    (``pipeline.views.annotate_reasons.outbox_data``); returns what the browser sent: ``{"answers": [...],
    "attempt": n}``, or None before the first answer."""
    import json

    import streamlit as st

    if "answer_outbox" not in _mounted_components:  # registered once per process (a second one warns)
        _mounted_components["answer_outbox"] = st.components.v2.component(
            "irdash_answer_outbox", js=ANSWER_OUTBOX_JS.read_text(encoding="utf-8"), css=_PENDING_CSS)
    result = _mounted_components["answer_outbox"](key=key, data=json.dumps(data), on_outbox_change=lambda: None)
    return result.get("outbox")


_refusal_printed: set = set()


def refuse_second_dashboard() -> None:
    """Claim this store for this dashboard (``core.dashboard_lock``); when another live one holds it, say
    where it runs (URL, pid) on the page and in this server's terminal, and stop the script run."""
    import sys

    import streamlit as st

    from core import dashboard_lock

    port = st.get_option("server.port")
    other = dashboard_lock.claim(dashboard_lock.dashboard_url(port, st.get_option("server.address"),
                                                              st.get_option("server.baseUrlPath")))
    if other is None:
        return
    message = other.message(port)
    if message not in _refusal_printed:
        _refusal_printed.add(message)
        print(f"irdash: {message}", file=sys.stderr, flush=True)
    st.error(message)
    st.stop()
