"""``sasl.jaas.config`` as Kafka's JaasConfig parses it (cases after Kafka's JaasContextTest)."""

from __future__ import annotations

import pytest

from coordinator.security.jaas import (
    JaasEntry,
    parse_jaas_config,
    plain_users,
    server_jaas_entry,
)

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


def test_the_issue_example() -> None:
    entry = server_jaas_entry(
        f'{PLAIN_MODULE} required user_alice="alice-secret";'
    )
    assert entry == JaasEntry(PLAIN_MODULE, "REQUIRED", {"user_alice": "alice-secret"})
    assert plain_users(entry) == {"alice": "alice-secret"}


def test_broker_style_entry_with_several_users_and_whitespace() -> None:
    entry = server_jaas_entry(
        f"""{PLAIN_MODULE} required
            username="admin"
            password='admin-secret'
            user_admin="admin-secret"
            user_bob = "p=w;d"  ;"""
    )
    assert entry.options["username"] == "admin" and entry.options["password"] == "admin-secret"
    assert plain_users(entry) == {"admin": "admin-secret", "bob": "p=w;d"}


@pytest.mark.parametrize("flag", ["required", "Requisite", "SUFFICIENT", "optional"])
def test_control_flags(flag: str) -> None:
    assert server_jaas_entry(f"Module {flag};").control_flag == flag.upper()


def test_unquoted_values_and_escapes() -> None:
    entry = server_jaas_entry(r'M required a=1 b=x.y-z c="q\"uo\tte\101" d="";')
    assert entry.options == {"a": "1", "b": "x.y-z", "c": 'q"uo\tteA', "d": ""}


def test_comments_are_skipped() -> None:
    entry = server_jaas_entry("M /* block */ required // line\n a=\"1\"; // tail")
    assert entry.options == {"a": "1"}


def test_two_modules_are_refused_for_a_server() -> None:
    text = "A required; B optional x=y;"
    assert [e.login_module for e in parse_jaas_config(text)] == ["A", "B"]
    with pytest.raises(ValueError, match="contains 2 login modules, should be 1 module"):
        server_jaas_entry(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Login module not specified in JAAS config"),
        ("  /* nothing */ ", "Login module not specified in JAAS config"),
        ("Module", "Login module control flag not specified in JAAS config"),
        ("Module sometimes;", "Invalid login module control flag 'sometimes' in JAAS config"),
        ("Module required a;", "Value not specified for key 'a' in JAAS config"),
        ("Module required a=;", "Value not specified for key 'a' in JAAS config"),
        ("Module required a=b", "JAAS config entry not terminated by semi-colon"),
        ("Module required a=b c=d", "JAAS config entry not terminated by semi-colon"),
    ],
)
def test_errors_have_kafka_messages(text: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_jaas_config(text)
    assert str(error.value) == message


def test_repr_hides_option_values() -> None:
    entry = server_jaas_entry(f'{PLAIN_MODULE} required user_alice="hunter2";')
    assert "hunter2" not in repr(entry) and "user_alice" in repr(entry)
