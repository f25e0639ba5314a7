"""The key and value schemas of the security records (:mod:`storage.security_records`):
the fields of Kafka's AccessControlEntryRecord and UserScramCredentialRecord, under kcoord's
key versions 105 and 106 (a removal is a tombstone of the key)."""

from __future__ import annotations

from wire.schema import Field as F
from wire.schema import Message

__all__ = [
    "ACCESS_CONTROL_ENTRY_KEY",
    "ACCESS_CONTROL_ENTRY_VALUE",
    "USER_SCRAM_CREDENTIAL_KEY",
    "USER_SCRAM_CREDENTIAL_VALUE",
]

_RECORD = -1  # Message.api_key of records: they belong to no API

ACCESS_CONTROL_ENTRY_KEY = Message(
    "AccessControlEntryKey",
    api_key=_RECORD,
    valid="105",
    flexible="none",
    fields=(F("id", "uuid", "105"),),
)
ACCESS_CONTROL_ENTRY_VALUE = Message(
    "AccessControlEntryValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("resource_type", "int8", "0+"),
        F("resource_name", "string", "0+"),
        F("pattern_type", "int8", "0+"),
        F("principal", "string", "0+"),
        F("host", "string", "0+"),
        F("operation", "int8", "0+"),
        F("permission_type", "int8", "0+"),
    ),
)
USER_SCRAM_CREDENTIAL_KEY = Message(
    "UserScramCredentialKey",
    api_key=_RECORD,
    valid="106",
    flexible="none",
    fields=(F("name", "string", "106"), F("mechanism", "int8", "106")),
)
USER_SCRAM_CREDENTIAL_VALUE = Message(
    "UserScramCredentialValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("salt", "bytes", "0+"),
        F("stored_key", "bytes", "0+"),
        F("server_key", "bytes", "0+"),
        F("iterations", "int32", "0+"),
    ),
)
