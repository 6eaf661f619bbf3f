"""Fixtures for end-to-end tests: the built app served on loopback, Debian Chromium.

Chromium is Debian's /usr/bin/chromium driven by Playwright (pytest-playwright's
``browser_type``); ``playwright install`` is never run. Each test server uses a fixed, unusual
port: IndexedDB, caches and service workers belong to the origin, and the port is part of it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, BrowserType, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from buildtools.serve import AppServer
from omoide.engine import MemoryEngine
from omoide.engine.memory import Memory
from omoide.kernels.pure_kernel import PureKernel

DIST = Path(os.environ.get("OMOIDE_DIST", Path(__file__).resolve().parents[2] / "dist"))
CHROMIUM = os.environ.get("OMOIDE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BOOT_TIMEOUT_MS = 120_000


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session", autouse=True)
def built_app() -> Path:
    if not (DIST / "build-info.json").exists():
        pytest.fail(f"{DIST} holds no build: run `python3 build.py test`, which builds first")
    return DIST


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    server = AppServer(DIST, port=27613).start()
    yield server.url
    server.stop()


def module_server(port: int) -> Callable[[], Iterator[AppServer]]:
    """A module's own server fixture (``server = module_server(PORT)``): the built app on
    ``port``, so the module has its own origin and storage."""
    @pytest.fixture(scope="module")
    def server() -> Iterator[AppServer]:
        app = AppServer(DIST, port=port).start()
        yield app
        app.stop()

    return server


@pytest.fixture(scope="module")
def module_profile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The browser profile of a module's one page, removed when the module ends. A profile
    holds the model files the app stored (about 300 MB); a suite that kept them all (tmp_path
    is kept only for failed tests, see pyproject) filled CI's disk, and Chromium then refused
    the service worker's precache."""
    profile = tmp_path_factory.mktemp("profile")
    yield profile
    shutil.rmtree(profile, ignore_errors=True)


LaunchFn = Callable[[Path], BrowserContext]


@pytest.fixture
def launch(browser_type: BrowserType) -> Iterator[LaunchFn]:
    """Start Chromium on a persistent profile (a real disk cache, IndexedDB, service worker)."""
    contexts: list[BrowserContext] = []

    def start(profile: Path) -> BrowserContext:
        context = browser_type.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        contexts.append(context)
        return context

    yield start
    for context in contexts:
        try:
            context.close()
        except Exception:  # noqa: BLE001 - already closed by the test
            pass


def wait_ready(page: Page) -> None:
    """Wait until the engine worker reports ready (or fail fast on a boot error)."""
    page.wait_for_selector("#boot[data-boot-state='ready'], #boot[data-boot-state='failed']",
                           timeout=BOOT_TIMEOUT_MS)
    state = page.get_attribute("#boot", "data-boot-state")
    assert state == "ready", page.text_content("#boot-detail")


def engine_call(page: Page, method: str, params: dict | None = None):
    return page.evaluate("([m, p]) => window.omoide.call(m, p)", [method, params or {}])


def open_with_model(launch: LaunchFn, app_url: str, profile: Path, model: str) -> Page:
    """The app in a fresh profile, ready, with ``model`` (fp32) selected."""
    page = launch(profile).new_page()
    page.goto(app_url)
    wait_ready(page)
    engine_call(page, "select_model", {"model": model, "dtype": "fp32"})
    return page


ARTIFACTS = Path(__file__).resolve().parents[2] / "test-results" / "ui"


def shot(page: Page, name: str) -> None:
    """Save a full-page screenshot as a test artifact (test-results/ is git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("() => { document.getElementById('notice').hidden = true; }")
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def go_offline(page: Page, server: AppServer, profile: Path | None = None) -> None:
    """After the first visit (service worker in control), stop the HTTP server for good."""
    try:
        page.wait_for_function("() => navigator.serviceWorker.controller !== null",
                               timeout=60_000)
    except PlaywrightTimeoutError:
        state = service_worker_state(page, profile)
        raise AssertionError(f"no service worker took control: {state}") from None
    server.stop()


def service_worker_state(page: Page, profile: Path | None) -> str:
    """Why a page may have no service worker in control: the registration's workers, the
    origin's storage estimate (a precache over quota fails the install) and the disk."""
    state = page.evaluate("""async () => {
        const reg = await navigator.serviceWorker.getRegistration();
        const worker = (w) => w ? w.state : null;
        const estimate = await navigator.storage.estimate();
        return {installing: worker(reg?.installing), waiting: worker(reg?.waiting),
                active: worker(reg?.active), usage: estimate.usage, quota: estimate.quota};
    }""")
    if profile is None:
        return str(state)
    return f"{state}, {shutil.disk_usage(profile).free // 2**20:,} MB free on the profile's disk"


E5 = "omoide/multilingual-e5-small"


def open_app_offline(browser_type: BrowserType, server: AppServer, profile: Path, *,
                     models: tuple[str, ...] = (E5,), init_script: str | None = None,
                     **context_options) -> tuple[BrowserContext, Page]:
    """A UI module's page: a persistent profile on the module's own server, the engine ready,
    ``models`` downloaded (the last one selected), then the server stopped for good so the
    module's tests run offline."""
    context = browser_type.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
        viewport={"width": 1100, "height": 900}, locale="en-US", **context_options)
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    page.goto(server.url)
    wait_ready(page)
    page.wait_for_selector("#app[data-ready='true']", timeout=60_000)
    # The first embedding downloads and compiles each model: done once, before the tests.
    for model in models:
        page.evaluate("(m) => window.omoide.loadModel({model: m, dtype: 'q8'})", model)
    go_offline(page, server, profile)
    return context, page


def tab(page: Page, name: str) -> None:
    """Open one of the app's tabs."""
    page.click(f"#tab-{name}")
    page.wait_for_selector(f"#panel-{name}", state="visible")


def cpython_engine(exported: dict, model: str = "omoide/all-MiniLM-L6-v2") -> MemoryEngine:
    """The CPython engine holding what the browser exported (fp32 vectors of `model`), to
    compare the browser's recalls with."""
    from omoide.embeddings.onnx_provider import OnnxEmbedder

    embedder = OnnxEmbedder(DIST / "models" / model, dtype="fp32")
    engine = MemoryEngine(embedder, kernel=PureKernel)
    for character in exported["characters"]:
        store = engine.new_store(character["id"], stamp=embedder.stamp,
                                 model_id=embedder.model_id, dimension=embedder.dimension)
        assert character["stamp"] == embedder.stamp
        vectors = character["vectors"]
        store.load([(Memory.from_dict(m), vectors[m["id"]]) for m in character["memories"]], [])
        engine.stores[character["id"]] = store
    return engine


# Page-side: the OPFS directory holding a model file ("<model id>/<file>") and the file's
# name, on the app's own origin (the page uses OPFS's asynchronous API).
MODEL_FILE_DIR = """async (path) => {
  const parts = path.split("/"); const name = parts.pop();
  let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("omoide-models");
  for (const part of parts) dir = await dir.getDirectoryHandle(part);
  return { dir, name };
}"""


def reload_warm(page: Page) -> dict:
    """Reload, wait for ready and the model's warm-up; the embedding worker's status."""
    page.reload()
    wait_ready(page)
    page.wait_for_selector("#model-warm[data-state='ready']", timeout=120_000)
    return page.evaluate("() => window.omoide.embedder.status()")
