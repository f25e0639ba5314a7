"""The security keys, as Kafka's documentation groups them (its "Security" chapter): the
listeners (``LISTENER_ADDRESS_KEYS``: where each listener is bound and published, with its
security protocol), SASL (``SASL_KEYS``, ``SASL_JAAS_KEYS``), TLS (``SSL_KEYS``) and the
authorizer (``AUTHORIZER_CONFIG_KEYS``): rows of ``SERVER_PROPERTIES``. A listener's SASL and
TLS keys may also be set ``listener.name.<listener>.``-prefixed (``listener_base_key``). Only
the static configuration sets the SASL, TLS and authorizer keys. Types and defaults are
Kafka's (``SocketServerConfigs``, ``BrokerSecurityConfigs``, ``SslConfigs``, ``SaslConfigs``,
``ServerConfigs``), the documentation Kafka's text (``KAFKA_DOC_PREFIX``). (One module:
each module on the path to the first Metadata costs startup time,
``tests/server/test_first_metadata_imports.py``.)"""

from __future__ import annotations

import re

from coordinator.configs.config_key import KAFKA_DOC_PREFIX, ConfigKey, Reader
from wire.constants import ConfigType

__all__ = ["AUTHORIZER_CONFIG_KEYS", "AUTHORIZER_KEYS", "LISTENER_ADDRESS_KEYS",
           "PER_BROKER_KEYS", "SASL_JAAS_KEYS", "SASL_KEYS", "SSL_KEYS", "listener_base_key"]

S, L, LI, P = ConfigType.STRING, ConfigType.LONG, ConfigType.LIST, ConfigType.PASSWORD


def _rows(*keys: ConfigKey) -> dict[str, ConfigKey]:
    return {key.name: key for key in keys}


def _kafka(name: str, kind: ConfigType, default: str | None = None, *, dynamic: bool = False,
           reader: Reader = Reader.LISTENERS) -> ConfigKey:
    """A key documented with Kafka's text."""
    return ConfigKey(name, kind, default, KAFKA_DOC_PREFIX + name, dynamic=dynamic,
                     reader=reader)


#: Where each listener is bound and published, and its security protocol. Dynamic in Kafka
#: but for ``advertised.listeners`` (read-only in Kafka 4's KRaft brokers); only AlterConfigs
#: and DescribeConfigs know them as dynamic, the static config does not.
LISTENER_ADDRESS_KEYS = _rows(
    _kafka("listener.security.protocol.map", S,
           "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
           dynamic=True),
    _kafka("listeners", S, "PLAINTEXT://:9092", dynamic=True),
    _kafka("advertised.listeners", S),
)
#: The authorizer's broker key (``coordinator.server.security_setup`` reads it).
AUTHORIZER_CONFIG_KEYS = _rows(_kafka("authorizer.class.name", S, "", reader=Reader.AUTHORIZER))
#: Every key the authorizer reads: its broker key, and the StandardAuthorizer's own
#: ``super.users`` and ``allow.everyone.if.no.acl.found`` (not broker keys in Kafka).
AUTHORIZER_KEYS = frozenset({*AUTHORIZER_CONFIG_KEYS, "super.users",
                             "allow.everyone.if.no.acl.found"})
#: The SASL keys a listener reads (``listener.name.<name>.`` first, then these).
SASL_KEYS = _rows(
    _kafka("sasl.enabled.mechanisms", LI),
    _kafka("connections.max.reauth.ms", L),
)
#: The JAAS login context: set per listener and mechanism
#: (``listener.name.<name>.<mechanism>.sasl.jaas.config``).
SASL_JAAS_KEYS = _rows(_kafka("sasl.jaas.config", P))
#: The TLS keys a listener reads (``ssl.endpoint.identification.algorithm`` is a client's
#: and inter-broker setting: accepted, meaning nothing for kcoord).
SSL_KEYS = _rows(
    _kafka("ssl.keystore.type", S),
    _kafka("ssl.keystore.location", S),
    _kafka("ssl.keystore.password", P),
    _kafka("ssl.keystore.certificate.chain", P),
    _kafka("ssl.keystore.key", P),
    _kafka("ssl.key.password", P),
    _kafka("ssl.truststore.type", S),
    _kafka("ssl.truststore.location", S),
    _kafka("ssl.truststore.password", P),
    _kafka("ssl.truststore.certificates", P),
    _kafka("ssl.client.auth", S),
    _kafka("ssl.enabled.protocols", LI),
    _kafka("ssl.endpoint.identification.algorithm", S),
)

#: ``DynamicBrokerConfig.PerBrokerConfigs`` among the dynamic broker keys: one broker only.
PER_BROKER_KEYS = frozenset({"listeners", "listener.security.protocol.map"})

#: ``listener.name.<listener>.<key>``, and a SASL mechanism's ``<mechanism>.<key>`` within it.
_LISTENER_OVERRIDE = re.compile(
    r"^listener\.name\.[^.]+\.(?:[a-z0-9-]+\.(?=sasl\.jaas\.config$|connections\.max\.reauth\.ms$))?"
    r"(.+)$")


def listener_base_key(name: str) -> str | None:
    """The key a ``listener.name.<listener>.`` override sets (``ssl.keystore.location`` for
    ``listener.name.external.ssl.keystore.location``); None for a key without the prefix."""
    override = _LISTENER_OVERRIDE.match(name)
    return None if override is None else override.group(1)
