"""Who a broker says it is (``BrokerIdentity``): its own module, so that what a handler
reads of the server (``context.ServerState``, which names the cluster of brokers) and the
cluster (which names the brokers' identities) do not import each other."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BrokerIdentity"]


@dataclass(frozen=True, slots=True)
class BrokerIdentity:
    """Who this broker says it is in Metadata and FindCoordinator answers."""

    node_id: int
    host: str
    port: int
    cluster_id: str
    #: With the ``listeners`` key: each listener's advertised (name, host, port); ``host``
    #: and ``port`` are the first one's.
    endpoints: tuple[tuple[str, str, int], ...] = ()

    def address(self, listener: str | None) -> tuple[str, int]:
        """The advertised host and port of ``listener`` (None: the unnamed listener)."""
        for name, host, port in self.endpoints:
            if name == listener:
                return host, port
        return self.host, self.port
