"""APIs wire decodes and encodes but no route serves yet (issues 29-31: security, admin and
share-group codecs) are not advertised by ApiVersions, and a request of one is treated as
an unserved key: the connection is closed, the server keeps serving everyone else."""

from __future__ import annotations

from typing import Any

import pytest
from raw_client import API_VERSIONS

from coordinator.server.apis import SERVED_API_KEYS
from coordinator.server.apis.api_versions import advertised_api_versions
from wire import ApiKey
from wire.registry import VERSION_TABLE

#: The codecs added for issues 29-31, routed one by one by the server work that follows.
CODEC_ONLY = frozenset({
    ApiKey.OFFSET_FOR_LEADER_EPOCH, ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS,
    ApiKey.DELETE_ACLS, ApiKey.ALTER_CONFIGS, ApiKey.DESCRIBE_LOG_DIRS,
    ApiKey.ELECT_LEADERS, ApiKey.INCREMENTAL_ALTER_CONFIGS,
    ApiKey.ALTER_PARTITION_REASSIGNMENTS, ApiKey.LIST_PARTITION_REASSIGNMENTS,
    ApiKey.DESCRIBE_CLIENT_QUOTAS, ApiKey.ALTER_CLIENT_QUOTAS,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    ApiKey.DESCRIBE_QUORUM, ApiKey.DESCRIBE_CLUSTER, ApiKey.DESCRIBE_PRODUCERS,
    ApiKey.LIST_CONFIG_RESOURCES, ApiKey.DESCRIBE_TOPIC_PARTITIONS,
    ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_DESCRIBE, ApiKey.SHARE_FETCH,
    ApiKey.SHARE_ACKNOWLEDGE, ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
    ApiKey.ALTER_SHARE_GROUP_OFFSETS, ApiKey.DELETE_SHARE_GROUP_OFFSETS,
})


def _ranges(keys: Any) -> dict[int, tuple[int, int]]:
    return {int(k["api_key"]): (int(k["min_version"]), int(k["max_version"])) for k in keys}


def test_the_codecs_are_registered() -> None:
    assert {api.api_key for api in VERSION_TABLE} >= CODEC_ONLY


@pytest.mark.trio
@pytest.mark.parametrize("version", [0, 3, 4])
async def test_api_versions_leaves_out_every_unrouted_codec(
    server: Any, connect: Any, version: int
) -> None:
    client = await connect(server.port)
    body = {"client_software_name": "raw", "client_software_version": "1"}
    response = await client.request(API_VERSIONS, version, body)
    assert response.error_code == 0
    got = _ranges(response.api_keys)
    assert not (CODEC_ONLY - SERVED_API_KEYS) & got.keys()
    # The answer is the one computed without the still unrouted codecs: adding them changed
    # nothing.
    before = [api for api in VERSION_TABLE if api.api_key not in CODEC_ONLY - SERVED_API_KEYS]
    assert got == _ranges(advertised_api_versions(SERVED_API_KEYS, before))
    assert got.keys() == set(SERVED_API_KEYS)


@pytest.mark.trio
@pytest.mark.parametrize("api", sorted(CODEC_ONLY), ids=lambda key: ApiKey(key).name)
async def test_a_request_of_an_unrouted_codec_closes_only_its_connection(
    server: Any, connect: Any, api: ApiKey
) -> None:
    version = next(a.max_version for a in VERSION_TABLE if a.api_key == api)
    client = await connect(server.port)
    await client.send(api, version, {})
    if api in SERVED_API_KEYS:  # routed since: answered like any served API
        assert await client.recv_frame() is not None
        return
    assert await client.closed_by_server()
    other = await connect(server.port)
    body = {"client_software_name": "raw", "client_software_version": "1"}
    assert (await other.request(API_VERSIONS, 3, body)).error_code == 0
