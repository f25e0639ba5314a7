"""The broker surface (what answers the first Metadata, ``startup_stages.load_broker_surface``)
loads without modules the first Metadata does not need (issue 33: exec to the first
answered Metadata is import time): the config store and every storage record type
(DescribeConfigs' logger levels need only ``ConfigError``), the log cleaner's plan (the
topic files need it only when the cleaner asks).

A child interpreter, so that its ``sys.modules`` is its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: Loaded only once the coordinator loads (or the cleaner runs), never by the surface.
NOT_ON_THE_SURFACE = ("coordinator.configs.store", "storage.records",
                      "storage.log_cleaner_plan")

_CHILD = r'''
import json, sys
from coordinator.server.options import build_options
from coordinator.server.startup_stages import load_broker_surface

options = build_options({}, host="127.0.0.1", port=0, data_dir=sys.argv[1],
                        topics=(("t", 2),))
routes, store = load_broker_surface(options, 64)
names = sorted(routes.handlers)
store.files.close()
print(json.dumps({"handlers": names, "loaded": sorted(sys.modules)}))
'''


def test_the_broker_surface_loads_without_the_config_store_or_record_types(
        tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "data")],
                         capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(out.stdout)
    assert result["handlers"] == [3, 10, 32]  # Metadata, FindCoordinator, DescribeConfigs
    assert "coordinator.broker.topic_files" in result["loaded"]  # disk topics were opened
    assert [m for m in NOT_ON_THE_SURFACE if m in result["loaded"]] == []
