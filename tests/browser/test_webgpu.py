"""The WebGPU path, on Chromium's software adapter (SwiftShader behind --enable-unsafe-webgpu,
on a loopback page, which is a secure context).

The embedding worker picks WebGPU when an adapter exists; its vectors equal the WebAssembly
path's within a stated tolerance for both models; and a GPU device lost in the middle of work
moves the worker to WebAssembly with a notice, with no memory lost.
"""

from __future__ import annotations

import math

import pytest
from playwright.sync_api import BrowserType, Page, Worker, expect

from .conftest import CHROMIUM, CHROMIUM_ARGS, engine_call, wait_ready

MINILM = "omoide/all-MiniLM-L6-v2"
E5 = "omoide/multilingual-e5-small"
WEBGPU_ARGS = [a for a in CHROMIUM_ARGS if a != "--disable-gpu"] + ["--enable-unsafe-webgpu"]
TEXTS = [
    "I prefer TypeScript over JavaScript for large projects.",
    "He runs five kilometres every morning before work.",
    "Mount Fuji is the highest mountain in Japan.",
    "私はTypeScriptが好きです。",
    "毎晩トマトに水をやるのを忘れないでください。",
    "昨日電車に傘を忘れてしまった。",
]
# The same q8 graph on two execution providers: WebGPU dequantizes and sums float32 in
# another order (MiniLM agrees to ~0.9999, e5 to ~0.998). Unit vectors; cosine >= this, far
# above two different texts (< 0.9) and close to the CPython-vs-browser q8 floor (0.98).
TOLERANCE = 0.995

# Keep every GPUDevice the worker creates, so the test can destroy it (a real lost device).
CAPTURE_DEVICES = """() => {
  self.__devices = [];
  const request = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = async function (...args) {
    const device = await request.apply(this, args);
    self.__devices.push(device);
    return device;
  };
}"""


def open_webgpu_page(browser_type: BrowserType, app_url: str, tmp_path) -> Page:
    context = browser_type.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=WEBGPU_ARGS)
    page = context.new_page()
    page.goto(app_url)
    wait_ready(page)
    return page


def embed_worker(page: Page) -> Worker:
    return next(w for w in page.workers if w.url.endswith("/embed-worker.js"))


def embed(page: Page, model: str, device: str) -> tuple[str, list[list[float]]]:
    return page.evaluate(
        """async ([model, device, texts]) => {
             const loaded = await window.omoide.loadModel({ model, dtype: "q8", device });
             const { dims, data } = await window.omoide.embed(texts, { kind: "passage" });
             const rows = [];
             for (let i = 0; i < dims[0]; i++) {
               rows.push(Array.from(data.subarray(i * dims[1], (i + 1) * dims[1])));
             }
             return [loaded.device, rows];
           }""",
        [model, device, TEXTS],
    )


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.mark.parametrize("model", [MINILM, E5])
def test_webgpu_vectors_match_webassembly(browser_type, app_url, tmp_path, model):
    page = open_webgpu_page(browser_type, app_url, tmp_path)
    device, gpu = embed(page, model, "auto")
    assert device == "webgpu", "the software adapter was not picked"
    device, cpu = embed(page, model, "wasm")
    assert device == "wasm"
    sims = [cosine(a, b) for a, b in zip(gpu, cpu, strict=True)]
    assert min(sims) >= TOLERANCE, sims
    page.context.close()


def test_lost_device_falls_back_to_webassembly_losing_no_work(browser_type, app_url, tmp_path):
    page = open_webgpu_page(browser_type, app_url, tmp_path)
    embed_worker(page).evaluate(CAPTURE_DEVICES)
    engine_call(page, "select_model", {"model": MINILM, "dtype": "q8"})
    engine_call(page, "create_character", {"name": "Gin"})
    engine_call(page, "remember", {"character": "gin", "text": "Gin waters the tomatoes."})
    assert page.evaluate("() => window.omoide.embedder.status()")["device"] == "webgpu"

    lost = embed_worker(page).evaluate(
        "() => { self.__devices.forEach((d) => d.destroy()); return self.__devices.length; }")
    assert lost >= 1
    engine_call(page, "remember", {"character": "gin", "text": "Gin plays the violin."})
    texts = {m["text"] for m in engine_call(page, "memories", {"character": "gin"})}
    assert texts == {"Gin waters the tomatoes.", "Gin plays the violin."}
    assert page.evaluate("() => window.omoide.embedder.status()")["device"] == "wasm"
    notices = page.evaluate("() => window.omoide.events.filter((e) => e.type === 'notice')")
    assert any(n.get("key") == "model.fellBack" for n in notices), notices
    expect(page.locator("#notice")).to_contain_text("WebAssembly")
    hits = engine_call(page, "recall", {"character": "gin", "query": "violin",
                                        "mode": "vector"})
    assert hits[0]["memory"]["text"] == "Gin plays the violin."
    page.context.close()
