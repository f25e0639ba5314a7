"""The entry point of a storage child process (``child_process.run_child``):

    python -m storage.child_main MODULE PARENT_PID

Before importing anything else it asks the kernel to kill it if its parent dies
(``PR_SET_PDEATHSIG``, Linux) and exits if the parent is already gone: a compaction child
that outlived a SIGKILLed server could commit a swap file into a data directory a new
server has opened since. It lowers its priority (nice 10: on a busy machine the server's
event loop and its clients get the cores first), sends warnings to its stderr (which the
parent relays to its log), then runs ``MODULE`` as ``__main__``.
"""

from __future__ import annotations

import logging
import os
import runpy
import sys

PR_SET_PDEATHSIG = 1
#: The exit code of a child whose parent was gone before it started its work.
ORPHANED = 3


def _die_with_parent(parent: int) -> None:
    if sys.platform == "linux":
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        sys.exit(ORPHANED)


if __name__ == "__main__":
    module, parent = sys.argv[1], int(sys.argv[2])
    _die_with_parent(parent)
    os.nice(10)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    sys.argv = [module]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
