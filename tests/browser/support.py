"""What the real-browser tests share: Debian's chromium driven by Playwright (Playwright never downloads a
browser here) against a real ``streamlit run app.py`` on a free localhost port. The ``dashboard`` fixture
that starts one is in ``tests/browser/conftest.py``."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.support.paths import ARTIFACTS, ROOT  # noqa: F401  (ARTIFACTS: the browser tests' screenshots)
from tests.support.waiting import wait_until

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# The browser tests poll a store or a server four times a second: faster polling only competes with the
# streamlit server for the machine's few cores.
POLL_S = 0.25
# The app's state as Streamlit marks it on its root element: whether a script run is drawing the page, and
# whether the page is connected to a server.
IDLE_JS = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'"
CONNECTED_JS = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-connection-state')"
IDLE_TIMEOUT_MS = 60_000  # a script run of a page on a busy machine
# A Venn region's points (the trace named after the region, pipeline.views.failure_overlap.venn_plotly): whether
# the figure has drawn it, and the page coordinates of its middle point, where a researcher's click lands
REGION_READY_JS = """(region) => {
  const gd = document.querySelector('.js-plotly-plot');
  return !!(gd && gd._fullData && gd._fullData.some(t => t.name === region));
}"""
REGION_POINT_JS = """(region) => {
  const gd = document.querySelector('.js-plotly-plot');
  const trace = gd._fullData.find(t => t.name === region);
  const i = Math.floor(trace.x.length / 2);
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.d2p(trace.x[i]), box.top + ya._offset + ya.d2p(trace.y[i])];
}"""


def wait(predicate, timeout: float, what: str):
    """:func:`tests.support.waiting.wait_until` at the browser tests' polling rate."""
    return wait_until(predicate, timeout, what, poll=POLL_S)


def launch_browser(pw):
    """Headless Debian chromium through Playwright's ``pw`` (a ``sync_playwright()`` context)."""
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_streamlit(port: int, log_path: Path) -> subprocess.Popen:
    """``streamlit run app.py`` on 127.0.0.1:``port`` with this process's environment, its output
    appended to ``log_path``; returns once the server answers its health check."""
    with open(log_path, "ab") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless",
             "true", "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def healthy():
        if server.poll() is not None:
            raise AssertionError(f"streamlit exited: {log_path.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    try:
        wait(healthy, 60, "the streamlit server")
    except BaseException:
        stop_streamlit(server)
        raise
    return server


def stop_streamlit(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=20)


class DashboardURL(str):
    """The dashboard's URL; :meth:`restart` kills its server (as a crash or ``kill PID`` would) and
    starts a new one on the same port, while open pages stay open and reconnect."""

    def __new__(cls, port: int, log_path: Path):
        url = super().__new__(cls, f"http://127.0.0.1:{port}")
        url.port, url.log_path, url.server = port, log_path, start_streamlit(port, log_path)
        return url

    def restart(self) -> None:
        os.killpg(self.server.pid, signal.SIGKILL)
        self.server.wait(timeout=20)
        self.server = start_streamlit(self.port, self.log_path)


# ------------------------------------------------------------------------- acting on a page once it is idle
# A click, a key or a typed value that lands while a script run redraws the page can hit an element that is
# then replaced (the action is lost, or a selectbox's list never opens: CI, stop 31) or a button that has
# moved. Every action of the browser tests waits for the finished run first.
def when_idle(page, timeout_ms: int = IDLE_TIMEOUT_MS) -> None:
    """Return once no script run is drawing ``page``."""
    page.wait_for_function(IDLE_JS, timeout=timeout_ms)


def click(page, target) -> None:
    """Click the locator ``target`` of ``page`` once the page is idle."""
    when_idle(page)
    target.click()


def enter_value(page, field, value: str) -> None:
    """Type ``value`` into the input ``field``, press Enter, and wait for the run that takes the value."""
    when_idle(page)
    field.fill(value)
    field.press("Enter")
    page.wait_for_timeout(1000)  # the run the new value starts begins within this
    when_idle(page)


def choose_option(page, selectbox, name: str, tries: int = 3) -> None:
    """Open the selectbox locator ``selectbox`` and pick ``name``, once the page is idle; open again if the
    list did not open (the click landed on a selectbox a late redraw replaced)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(tries):
        click(page, selectbox)
        option = page.get_by_role("option", name=name, exact=True)
        try:
            option.wait_for(timeout=10_000)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            continue
        option.click()
        return
    raise AssertionError(f"the selectbox's option {name!r} never appeared after {tries} tries")
