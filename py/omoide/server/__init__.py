"""``python -m omoide.server``: the reference REST server for ``HttpBackend`` (see app.py)."""

from omoide.server.app import ReferenceServer, serve

__all__ = ["ReferenceServer", "serve"]
