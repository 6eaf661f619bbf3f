"""``python -m omoide.server``: the reference REST server for ``HttpBackend``.

app.py: the REST app; policy.py: key, origins, Host names, limits; runner.py: uvicorn.
"""

from omoide.server.app import RestApp
from omoide.server.policy import ServerPolicy
from omoide.server.runner import ReferenceServer, serve

__all__ = ["ReferenceServer", "RestApp", "ServerPolicy", "serve"]
