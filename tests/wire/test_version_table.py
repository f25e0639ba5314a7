"""``wire.registry.VERSION_TABLE``: the ApiVersions table the registry answers from without
importing the API modules, and the modules' schemas, agree."""

from __future__ import annotations

import pkgutil
from dataclasses import replace

import pytest

import wire
import wire.apis
from wire.registry import VERSION_TABLE, register


def test_every_api_module_is_in_the_table_with_its_schemas_versions() -> None:
    modules = {m.name for m in pkgutil.iter_modules(wire.apis.__path__)}
    assert {api.module for api in VERSION_TABLE} == modules
    specs = {s.api_key: s for s in wire.all_apis()}
    assert [api.api_key for api in VERSION_TABLE] == sorted(specs)
    for api in VERSION_TABLE:
        spec = specs[api.api_key]
        assert (spec.min_version, spec.max_version) == (api.min_version, api.max_version)


def test_register_refuses_versions_the_table_does_not_have() -> None:
    heartbeat = wire.lookup(wire.ApiKey.HEARTBEAT)
    assert heartbeat is not None
    unknown = replace(heartbeat, api_key=wire.ApiKey.WRITE_TXN_MARKERS, name="WriteTxnMarkers")
    with pytest.raises(ValueError, match="VERSION_TABLE"):
        register(unknown)
    with pytest.raises(ValueError, match="already registered"):
        register(heartbeat)
