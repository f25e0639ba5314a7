"""kcoord's stand-in for kafka-python's ``test/service.py``, which its sdist does not ship.

``run_kafka_python_admin.sh`` copies this file to ``test/service.py`` beside the sdist's
``test/integration``. The suite's fixtures import two names from it: ``ExternalService``,
the handle of a broker that is already running (``KAFKA_URI`` set: here, kcoord), and
``SpawnedService``, which would start a Kafka from ``KAFKA_ROOT``. Only the first is served;
the glue always sets ``KAFKA_URI``, so a fixture that tries to spawn a broker is an error.
"""

from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger(__name__)


class ExternalService:
    """A broker started outside the suite (kcoord, started by the glue script)."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        log.info("kcoord glue: using the running broker at %s:%d", host, port)

    def open(self) -> None:
        """Nothing to start: the broker is already listening."""

    def close(self) -> None:
        """Nothing to stop: the glue script stops kcoord when the suite ends."""

    def dump_logs(self) -> None:
        """Point at kcoord's output, which the glue script prints when the suite fails."""
        log.info("kcoord glue: kcoord's log is %s", os.environ.get("KCOORD_LOG", "(not given)"))

    def wait_for(self, pattern: str, timeout: float = 30) -> bool:
        """The glue script waited for kcoord's listening line before starting the suite."""
        return True


class SpawnedService:
    """Starting the suite's own Kafka is not possible here: the glue sets KAFKA_URI."""

    def __init__(self, args: Any = None, env: Any = None) -> None:
        raise RuntimeError(
            "kcoord glue: this fixture would start the suite's own Kafka (KAFKA_ROOT); "
            "run the suite with KAFKA_URI pointing at kcoord instead"
        )
