"""AlterReplicaLogDirs: versions 1-2.

Request versions (Kafka's schema notes):
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 is the same as version 0.
    Version 2 enables flexible versions.

Response versions:
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Starting in version 1, on quota violation brokers send out responses before throttling.
    Version 2 enables flexible versions.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "AlterReplicaLogDirsRequest",
    api_key=34,
    valid="1-2",
    flexible="2+",
    fields=(
        F("dirs", "[]", "0+", fields=(
            F("path", "string", "0+"),
            F("topics", "[]", "0+", fields=(
                F("name", "string", "0+"),
                F("partitions", "[]int32", "0+"),
            )),
        )),
    ),
)

RESPONSE = Message(
    "AlterReplicaLogDirsResponse",
    api_key=34,
    valid="1-2",
    flexible="2+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("results", "[]", "0+", fields=(
            F("topic_name", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
                F("error_code", "int16", "0+"),
            )),
        )),
    ),
)

API = register(
    ApiSpec(api_key=34, name="AlterReplicaLogDirs", request=REQUEST, response=RESPONSE)
)
