"""The contract of compose/: what the Dockerfiles, compose.yaml and the CI examples promise.

No Docker engine is needed: the files are parsed (compose.yaml with the small YAML-subset
loader in yaml_subset.py; the Dockerfiles with compose/image_install_check.py's reader).
.ci/validate_compose.sh runs the real validators and the install itself.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from yaml_subset import YamlSubsetError, load

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose"
PING = ["kcoord", "ping", "--bootstrap", "127.0.0.1:9092", "--timeout", "2"]
SERVE = ["kcoord", "serve", "--host", "0.0.0.0", "--port", "9092", "--data-dir", "/data",
         "--config", "group.initial.rebalance.delay.ms=0"]


def _image_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "image_install_check", COMPOSE / "image_install_check.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("image_install_check", module)
    spec.loader.exec_module(module)
    return module


image_check = _image_check()


def dockerfile(name: str) -> list[tuple[str, str]]:
    steps: list[tuple[str, str]] = image_check.instructions(COMPOSE / name)
    return steps


def last(steps: list[tuple[str, str]], word: str) -> str:
    found = [args for w, args in steps if w == word]
    assert found, f"no {word}"
    return found[-1]


def healthcheck_cmd(steps: list[tuple[str, str]]) -> list[str]:
    text = last(steps, "HEALTHCHECK")
    _options, sep, command = text.partition("CMD")
    assert sep, text
    cmd: list[str] = image_check.exec_form(command.strip(), "HEALTHCHECK CMD")
    return cmd


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = load((COMPOSE / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = compose["services"]
    return result


# ---------------------------------------------------------------- compose/Dockerfile


def test_dockerfile_base_user_port_volume() -> None:
    steps = dockerfile("Dockerfile")
    assert [args for w, args in steps if w == "FROM"] == ["python:3.11-slim"]
    user = last(steps, "USER").split(":")[0]
    assert user not in {"root", "0"}
    assert user.isdigit(), "a numeric uid (hadolint DL3066, runAsNonRoot)"
    assert "9092" in last(steps, "EXPOSE").split()
    assert image_check.exec_form(last(steps, "VOLUME"), "VOLUME") == ["/data"]
    # The user owns /data, created before the VOLUME line.
    run = " ".join(args for w, args in steps if w == "RUN")
    assert f"--uid {user}" in run
    assert re.search(r"chown \S+ /data", run)


def test_dockerfile_healthcheck_is_kcoord_ping() -> None:
    steps = dockerfile("Dockerfile")
    assert healthcheck_cmd(steps) == PING
    options = shlex.split(last(steps, "HEALTHCHECK").partition("CMD")[0])
    timeout = next(o for o in options if o.startswith("--timeout="))
    assert float(timeout.removeprefix("--timeout=").rstrip("s")) > 2  # above ping's own 2 s


def test_dockerfile_cmd_serves_on_all_interfaces_into_the_volume() -> None:
    steps = dockerfile("Dockerfile")
    assert image_check.exec_form(last(steps, "CMD"), "CMD") == SERVE
    assert last(steps, "STOPSIGNAL") == "SIGTERM"


def test_dockerfile_copies_every_package_and_file_pyproject_needs() -> None:
    """The COPY lines cover pyproject's packages and readme: a new package breaks this."""
    steps = dockerfile("Dockerfile")
    copied: set[str] = set()
    for word, args in steps:
        if word == "COPY":
            *sources, _dest = shlex.split(args)
            copied.update(s.rstrip("/") for s in sources)
    for source in copied:
        assert (ROOT / source).exists(), f"COPY {source}: missing from the repository"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    includes = project["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {name.split(".")[0] for name in includes}
    assert packages <= copied, f"not copied: {packages - copied}"
    assert {"pyproject.toml", project["project"]["readme"], "LICENSE"} <= copied
    assert any("pip install --no-cache-dir ." in args for w, args in steps if w == "RUN")


def test_dockerignore_keeps_what_copy_needs() -> None:
    kept = {
        line[1:].rstrip("/")
        for line in (COMPOSE / "Dockerfile.dockerignore").read_text().splitlines()
        if line.startswith("!")
    }
    for word, args in dockerfile("Dockerfile"):
        if word == "COPY":
            *sources, _dest = shlex.split(args)
            assert {s.rstrip("/") for s in sources} <= kept


def test_conformance_dockerfile_runs_the_e2e_suite() -> None:
    steps = dockerfile("conformance.Dockerfile")
    entrypoint = image_check.exec_form(last(steps, "ENTRYPOINT"), "ENTRYPOINT")
    assert entrypoint[:3] == ["python", "-m", "pytest"] and entrypoint[-1] == "tests/e2e"
    assert image_check.exec_form(last(steps, "CMD"), "CMD") == ["--bootstrap", "kafka:9092"]
    assert last(steps, "USER").split(":")[0] not in {"root", "0"}
    assert any('pip install --no-cache-dir ".[test]"' in args for w, args in steps if w == "RUN")
    assert any(args.startswith("tests/") for w, args in steps if w == "COPY")


# ---------------------------------------------------------------- compose/compose.yaml


def test_kcoord_service_builds_compose_dockerfile(services: dict[str, dict[str, Any]]) -> None:
    kcoord = services["kcoord"]
    assert kcoord["build"] == {"context": "..", "dockerfile": "compose/Dockerfile"}
    assert (COMPOSE / kcoord["build"]["context"] / kcoord["build"]["dockerfile"]).is_file()
    assert "profiles" not in kcoord, "kcoord starts with a plain `docker compose up`"


def test_kcoord_service_healthcheck_uses_kcoord_ping(services: dict[str, dict[str, Any]]) -> None:
    health = services["kcoord"]["healthcheck"]
    assert health["test"] == ["CMD", *PING]
    assert health["test"][1:] == healthcheck_cmd(dockerfile("Dockerfile"))
    for key in ("interval", "timeout", "start_period"):
        assert re.fullmatch(r"[0-9]+s", health[key]), key
    assert int(health["timeout"].rstrip("s")) > 2


def test_kcoord_service_volume_and_port(
    compose: dict[str, Any], services: dict[str, dict[str, Any]]
) -> None:
    kcoord = services["kcoord"]
    [volume] = kcoord["volumes"]
    name, target = volume.split(":")
    assert target == "/data"
    assert name in compose["volumes"], "a named volume declared at the top level"
    assert any(str(p).endswith("9092:9092") for p in kcoord["ports"])


def test_kcoord_service_command_is_the_image_cmd_and_advertises_by_env(
    services: dict[str, dict[str, Any]],
) -> None:
    command = services["kcoord"]["command"]
    image_cmd = image_check.exec_form(last(dockerfile("Dockerfile"), "CMD"), "CMD")
    assert command == image_cmd, "no drift from the Dockerfile's CMD"
    assert services["kcoord"]["environment"] == {
        "KCOORD_ADVERTISED_HOST": "${KCOORD_ADVERTISED_HOST:-localhost}"}


def test_the_image_advertises_localhost_and_starts_groups_at_once() -> None:
    """Issue 15 item 20: `docker run -p 9092:9092 IMAGE` advertises a host the host's
    clients reach, and the image, compose.yaml and both CI examples agree on
    group.initial.rebalance.delay.ms=0."""
    steps = dockerfile("Dockerfile")
    env = " ".join(args for word, args in steps if word == "ENV")
    assert "KCOORD_ADVERTISED_HOST=localhost" in env.split()
    assert "group.initial.rebalance.delay.ms=0" in image_check.exec_form(
        last(steps, "CMD"), "CMD")
    for example in ("github-actions.yml", "gitlab-ci.yml"):
        text = (COMPOSE / "examples" / example).read_text(encoding="utf-8")
        assert "command:" not in text, f"{example} must keep the image's CMD"


def test_differential_profile_has_kafka_and_conformance(
    services: dict[str, dict[str, Any]],
) -> None:
    profiled = {name for name, s in services.items() if "differential" in s.get("profiles", [])}
    assert profiled == {"kafka", "conformance"}


def test_kafka_is_the_official_image_in_single_node_kraft(
    services: dict[str, dict[str, Any]],
) -> None:
    kafka = services["kafka"]
    assert re.fullmatch(r"apache/kafka:\$\{KAFKA_VERSION:-4\.\d+\.\d+\}", kafka["image"])
    env = kafka["environment"]
    node = env["KAFKA_NODE_ID"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == f"{node}@kafka:9093"
    listeners = dict(item.split("://") for item in env["KAFKA_LISTENERS"].split(","))
    assert set(listeners) == {"PLAINTEXT", "CONTROLLER", "PLAINTEXT_HOST"}
    assert env["KAFKA_CONTROLLER_LISTENER_NAMES"] in listeners
    advertised = env["KAFKA_ADVERTISED_LISTENERS"].split(",")
    assert "PLAINTEXT://kafka:9092" in advertised
    assert "PLAINTEXT_HOST://localhost:29092" in advertised
    protocols = dict(
        item.split(":") for item in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(",")
    )
    assert set(protocols) == set(listeners)
    assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == 1
    assert env["KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"] == 0
    assert any(str(p).endswith("29092:29092") for p in kafka["ports"])
    assert "kafka-broker-api-versions.sh" in " ".join(kafka["healthcheck"]["test"])


def test_both_brokers_start_with_the_same_initial_rebalance_delay(
    services: dict[str, dict[str, Any]],
) -> None:
    delay = services["kafka"]["environment"]["KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"]
    assert f"group.initial.rebalance.delay.ms={delay}" in services["kcoord"]["command"]


def test_conformance_runs_against_either_broker_once_healthy(
    services: dict[str, dict[str, Any]],
) -> None:
    conformance = services["conformance"]
    assert conformance["build"] == {
        "context": "..",
        "dockerfile": "compose/conformance.Dockerfile",
    }
    assert conformance["command"] == ["--bootstrap", "kafka:9092"]
    depends = conformance["depends_on"]
    assert depends == {
        "kafka": {"condition": "service_healthy"},
        "kcoord": {"condition": "service_healthy"},
    }
    # Shares kcoord's network namespace: kcoord's advertised localhost:9092 is kcoord there.
    assert conformance["network_mode"] == "service:kcoord"
    advertised = services["kcoord"]["environment"]["KCOORD_ADVERTISED_HOST"]
    assert advertised == "${KCOORD_ADVERTISED_HOST:-localhost}"


# ---------------------------------------------------------------- CI examples and README


def test_github_actions_example_waits_on_kcoord_ping() -> None:
    text = (COMPOSE / "examples" / "github-actions.yml").read_text(encoding="utf-8")
    assert "services:" in text and "- 9092:9092" in text
    assert f'--health-cmd "{" ".join(PING)}"' in text
    assert "KCOORD_ADVERTISED_HOST: localhost" in text


def test_gitlab_example_advertises_its_alias() -> None:
    text = (COMPOSE / "examples" / "gitlab-ci.yml").read_text(encoding="utf-8")
    assert "alias: kcoord" in text
    assert "KCOORD_ADVERTISED_HOST: kcoord" in text


def test_readme_shows_both_ci_examples_and_compose_usage() -> None:
    readme = (COMPOSE / "README.md").read_text(encoding="utf-8")
    for example in ("github-actions.yml", "gitlab-ci.yml"):
        body = [
            line
            for line in (COMPOSE / "examples" / example).read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
        missing = [line for line in body if line not in readme]
        assert not missing, f"{example} lines missing from compose/README.md: {missing}"
    assert "--profile differential run --rm conformance" in readme
    assert "kcoord ping --bootstrap" in readme


# ---------------------------------------------------------------- the YAML-subset loader


def test_yaml_subset_loader() -> None:
    text = """
# comment
top:
  plain: a b # trailing comment
  number: 9092
  quoted: "9092"
  single: 'it''s: #1'
  empty:
  flow: ["CMD", "kcoord", "#x"]
  url: PLAINTEXT://:9092,CONTROLLER://:9093
  list:
    - one
    - "two"
  same_indent_list:
  - x
other: ${VAR:-default}
"""
    assert load(text) == {
        "top": {
            "plain": "a b",
            "number": 9092,
            "quoted": "9092",
            "single": "it's: #1",
            "empty": None,
            "flow": ["CMD", "kcoord", "#x"],
            "url": "PLAINTEXT://:9092,CONTROLLER://:9093",
            "list": ["one", "two"],
            "same_indent_list": ["x"],
        },
        "other": "${VAR:-default}",
    }


@pytest.mark.parametrize(
    "text",
    [
        "a: &anchor x",
        "a: |\n  block",
        "a: {b: 1}",
        "a: yes",
        "a: 1.5",
        "a:\n  - b: 1",
        "a: 1\na: 2",
        "a:\n\t- x",
        "a: 1\n   b: 2",
        "a: 'open",
        "---\na: 1",
    ],
)
def test_yaml_subset_loader_refuses_what_it_does_not_support(text: str) -> None:
    with pytest.raises(YamlSubsetError):
        load(text)
