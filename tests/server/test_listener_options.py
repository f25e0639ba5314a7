"""The ``listeners`` key and the SASL settings (issue 29, first step): parsed into
ServeOptions, mistakes refused in one line, ``coordinator.security`` imported only for a
SASL listener."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coordinator.config import ConfigError
from coordinator.server.listeners import parse_listeners
from coordinator.server.options import build_options

SASL = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}
JAAS_KEY = "listener.name.sasl_plaintext.plain.sasl.jaas.config"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'user_alice="alice-secret" user_bob="bob-secret";')


def test_a_plaintext_listener_names_host_and_port() -> None:
    options = build_options({"listeners": "PLAINTEXT://0.0.0.0:19092"}, host=None, port=None)
    [served] = options.listeners
    assert (options.host, options.port, served.name, served.sasl, served.tls) == (
        "0.0.0.0", 19092, "PLAINTEXT", None, None)


def test_without_listeners_the_flags_or_defaults_bind() -> None:
    assert (build_options({}, host=None, port=None).host,
            build_options({}, host=None, port=None).port) == ("127.0.0.1", 9092)
    options = build_options({}, host="0.0.0.0", port=0)
    assert (options.host, options.port, options.listeners) == ("0.0.0.0", 0, ())


@pytest.mark.parametrize("text,host", [("PLAINTEXT://:9092", ""), ("plaintext://[::1]:1", "::1"),
                                       ("SASL_PLAINTEXT://kafka-1:29092", "kafka-1")])
def test_listener_hosts(text: str, host: str) -> None:
    assert parse_listeners({"listeners": text})[0].host == host


@pytest.mark.parametrize("properties,kwargs,message", [
    (SASL, {"port": 0}, "--host/--port cannot be given with listeners"),
    (SASL, {"host": "127.0.0.1"}, "--host/--port cannot be given with listeners"),
    ({"listeners": "PLAINTEXT://:1,SASL_PLAINTEXT://:1"}, {}, "a different port"),
    ({"listeners": "PLAINTEXT://:1,plaintext://:2"}, {}, "PLAINTEXT appears twice"),
    ({"listeners": "INTERNAL://:1"}, {}, "no security protocol defined for listener INTERNAL"),
    ({"listeners": "INTERNAL://:1", "listener.security.protocol.map": "INTERNAL:TLS"}, {},
     "expected NAME:PROTOCOL entries"),
    ({"listeners": "A://:1", "advertised.listeners": "B://h:1",
      "listener.security.protocol.map": "A:PLAINTEXT"}, {}, "B is not one of the listeners"),
    ({"listeners": "PLAINTEXT://:99999"}, {}, "outside 0..65535"),
    ({"listeners": "PLAINTEXT:9092"}, {}, "expected NAME://HOST:PORT"),
    ({**SASL, "sasl.enabled.mechanisms": "PLAIN,GSSAPI"}, {}, "Unsupported SASL mechanism GSSAPI"),
    ({**SASL, "sasl.enabled.mechanisms": " , "}, {}, "no mechanism enabled"),
    ({**SASL, JAAS_KEY: "PlainLoginModule required user_a=\"b\""}, {}, "not terminated"),
    ({**SASL, JAAS_KEY: "com.example.Other required;"}, {}, "expected org.apache.kafka"),
    ({"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN"}, {},
     "no listener named SASL_PLAINTEXT"),
])
def test_mistakes_are_config_errors(properties: dict[str, str], kwargs: dict[str, object],
                                    message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("+", r"\+")):
        build_options(properties, **kwargs)


def test_sasl_user_needs_a_sasl_listener() -> None:
    with pytest.raises(ConfigError, match="--sasl-user needs a SASL listener"):
        build_options({}, sasl_users=(("alice", "x"),))


def test_a_sasl_listener_offers_the_enabled_mechanisms_over_its_users() -> None:
    options = build_options({**SASL, JAAS_KEY: JAAS,
                             "listener.name.sasl_plaintext.sasl.enabled.mechanisms":
                             "SCRAM-SHA-512,PLAIN", "sasl.enabled.mechanisms": "PLAIN"},
                            sasl_users=(("carol", "carol-secret"),))
    mechanisms = options.listeners[0].sasl
    assert list(mechanisms.enabled) == ["SCRAM-SHA-512", "PLAIN"]  # the listener's key wins
    for user, password in [("alice", "alice-secret"), ("bob", "bob-secret"),
                           ("carol", "carol-secret")]:
        assert mechanisms.plain_users.verify(user, password)
    assert not mechanisms.plain_users.verify("alice", "wrong")
    # --sasl-user has both SCRAM credentials; JAAS users are PLAIN only (as in Kafka).
    from wire.constants import ScramMechanism

    store = mechanisms.scram_credentials
    assert store.lookup("carol", ScramMechanism.SCRAM_SHA_256) is not None
    assert store.lookup("carol", ScramMechanism.SCRAM_SHA_512) is not None
    assert store.lookup("alice", ScramMechanism.SCRAM_SHA_256) is None
    assert "secret" not in repr(options)  # passwords never reach a repr


def test_the_default_mechanisms_are_all_four() -> None:
    assert list(build_options(SASL).listeners[0].sasl.enabled) == [
        "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]


@pytest.mark.parametrize("properties,imported", [("{}", False), (repr(SASL), True)])
def test_coordinator_security_is_imported_only_for_a_sasl_listener(
    properties: str, imported: bool
) -> None:
    code = ("import sys\nfrom coordinator.server.options import build_options\n"
            f"build_options({properties})\n"
            "print(any(m.startswith('coordinator.security') for m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=True)
    assert result.stdout.strip() == str(imported)


def test_several_listeners_keep_their_order_protocols_and_advertised_addresses() -> None:
    options = build_options({
        "listeners": "PLAINTEXT://127.0.0.1:0,internal://:19093,SASL_PLAINTEXT://[::1]:19094",
        "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT",
        "advertised.listeners": "INTERNAL://kafka-1:29093,PLAINTEXT://localhost:0",
        "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
    }, sasl_users=(("alice", "alice-secret"),))
    listeners = [served.listener for served in options.listeners]
    assert [(each.name, each.protocol, each.host, each.port) for each in listeners] == [
        ("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 0), ("INTERNAL", "SASL_PLAINTEXT", "", 19093),
        ("SASL_PLAINTEXT", "SASL_PLAINTEXT", "::1", 19094)]
    assert [(each.advertised_host, each.advertised_port) for each in listeners] == [
        ("localhost", None), ("kafka-1", 29093), (None, None)]
    sasl = [served.sasl for served in options.listeners]
    assert sasl[0] is None
    assert list(sasl[1].enabled) == ["PLAIN"]  # its listener.name. key
    assert len(sasl[2].enabled) == 4
    assert (options.host, options.port) == ("127.0.0.1", 0)  # the first listener's


def test_ssl_keys_are_read_per_listener_first(tmp_path: Path) -> None:
    import ssl

    options = build_options({
        "listeners": "SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
        "listener.security.protocol.map": "MTLS:SSL",
        "ssl.client.auth": "none",
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.enabled.protocols": "TLSv1.3",
    }, data_dir=str(tmp_path))
    plain, mutual = (served.tls for served in options.listeners)
    assert (plain.verify_mode, mutual.verify_mode) == (ssl.CERT_NONE, ssl.CERT_REQUIRED)
    assert plain.minimum_version == ssl.TLSVersion.TLSv1_2
    assert mutual.minimum_version == ssl.TLSVersion.TLSv1_3
    # Both serve the generated certificate, whose CA clients trust.
    assert {served.generated_ca for served in options.listeners} == {
        f"{tmp_path}/tls/ca.pem"}


@pytest.mark.parametrize("properties,message", [
    ({"listener.name.ssl.ssl.client.auth": "required"}, "no listener named SSL"),
    ({"listeners": "SSL://:0", "ssl.keystore.password": "x"},
     "SSL key store password cannot be specified with PEM format"),
    ({"listeners": "SSL://:0", "ssl.enabled.protocols": "TLSv1.1"}, "kcoord serves TLSv1.2"),
    ({"listeners": "SSL://:0", "ssl.keystore.key": "x"}, "are given together"),
])
def test_tls_mistakes_are_config_errors(tmp_path: Path, properties: dict[str, str],
                                        message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_options(properties, data_dir=str(tmp_path))
    assert not (tmp_path / "tls").exists()  # nothing generated
