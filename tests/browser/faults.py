"""Write-failure injection for browser tests, injected into the engine worker by the test.

Headless Chromium cannot be driven to a real quota error (its quota override does not reach
IndexedDB, a full disk hangs it), so a test makes the next N IndexedDB write requests of the
engine worker fail with the very DOMException a full quota raises. Nothing of this ships in
dist/: the test evaluates ``INSTALL`` in the worker's global scope through Playwright
(``Worker.evaluate``), patching ``IDBObjectStore`` there, below Dexie, so the app's own write
path runs unchanged. ``tests/test_dist_no_test_hooks.py`` checks that the production build
holds none of ``HOOK_NAMES``.
"""

from __future__ import annotations

from playwright.sync_api import Page, Worker

ENGINE_WORKER = "engine-worker.js"
# Every name a test hook ever had or has; none may appear in the production dist/.
HOOK_NAMES = ("debug_fail_writes", "failWrites", "omoide-faults", "faultInjection",
              "__omoideFailWrites")

# A write request (put, add, delete, clear) throws while the counter is positive; Dexie turns
# the throw into the rejection of the bulk request and aborts the transaction, exactly as a
# QuotaExceededError raised by IndexedDB does. The argument is the count, or
# ``{writes, store}``: only writes to that object store count and fail.
INSTALL = """(arg) => {
  const { writes, store = null } = typeof arg === "number" ? { writes: arg } : arg;
  if (!self.__omoideFailWrites) {
    self.__omoideFailWrites = { left: 0, store: null };
    for (const name of ["put", "add", "delete", "clear"]) {
      const original = IDBObjectStore.prototype[name];
      IDBObjectStore.prototype[name] = function (...args) {
        const faults = self.__omoideFailWrites;
        if (faults.left > 0 && (faults.store === null || faults.store === this.name)) {
          self.__omoideFailWrites.left -= 1;
          throw new DOMException("the storage quota is full (injected)",
            "QuotaExceededError");
        }
        return original.apply(this, args);
      };
    }
  }
  Object.assign(self.__omoideFailWrites, { left: writes, store });
  return writes;
}"""


def engine_worker(page: Page) -> Worker:
    for worker in page.workers:
        if worker.url.split("?")[0].endswith(ENGINE_WORKER):
            return worker
    raise AssertionError(f"no {ENGINE_WORKER} in {[w.url for w in page.workers]}")


def fail_writes(page: Page, writes: int = 1, store: str | None = None) -> None:
    """The next ``writes`` IndexedDB write requests of the page's engine worker (to the
    object store ``store`` only, when given) fail with QuotaExceededError."""
    arg = writes if store is None else {"writes": writes, "store": store}
    assert engine_worker(page).evaluate(INSTALL, arg) == writes
