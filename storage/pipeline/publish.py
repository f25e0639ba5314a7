"""A run's output published whole: written under a staging directory, then swapped into
place entry by entry, so that a reader of the output never sees a dataset (or the report)
half written. ``kcoord pipeline --follow`` re-runs into the same output while readers
read it; a write in place (Spark's ``overwrite``) deletes the dataset's directory first and
fills it over the job, so a reader there finds it missing, empty or partly written.

Layout inside the output directory::

    .kcoord-staging/    the run being written (removed and made anew by each run)
    .kcoord-previous/   the versions the last publish replaced, kept until the next one,
                        so a reader that opened one (a directory descriptor, say) can
                        finish reading it

Each entry (a dataset's directory, ``plots/``, ``report.md``, ...) is swapped with one
``renameat2(RENAME_EXCHANGE)`` on Linux: the path names the old complete version, then
the new one, never nothing. Where that call is missing or the filesystem refuses it, the
old version is renamed away and the new one in: the path is then missing for the moment
between the two renames, but still never holds a partly written version.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
from collections.abc import Callable

__all__ = ["PREVIOUS_DIR", "STAGING_DIR", "exchange", "publish", "staging_dir"]

STAGING_DIR = ".kcoord-staging"
PREVIOUS_DIR = ".kcoord-previous"

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _renameat2() -> Callable[..., int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        func = ctypes.CDLL(name, use_errno=True).renameat2
    except (AttributeError, OSError):  # not Linux, or a C library older than glibc 2.28
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                     ctypes.c_uint]
    func.restype = ctypes.c_int
    return func


_RENAMEAT2 = _renameat2()


def exchange(a: str, b: str) -> bool:
    """Swap the paths ``a`` and ``b`` (both must exist) in one step; False where the
    system or the filesystem cannot (the caller falls back to two renames)."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), a, None, b)


def staging_dir(output: str) -> str:
    """A fresh, empty staging directory inside ``output`` (a crashed run's is removed)."""
    path = os.path.join(output, STAGING_DIR)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def publish(staged: str, output: str) -> list[str]:
    """Swap every entry of ``staged`` into ``output`` (:func:`exchange`, else two
    renames); the versions replaced become ``output/.kcoord-previous``. Returns the names
    published, in order."""
    names = sorted(os.listdir(staged))
    replaced = os.path.join(staged, ".replaced")
    for name in names:
        new, target = os.path.join(staged, name), os.path.join(output, name)
        if not os.path.lexists(target):
            os.rename(new, target)
        elif not exchange(new, target):
            os.makedirs(replaced, exist_ok=True)
            os.rename(target, os.path.join(replaced, name))
            os.rename(new, target)
        # After an exchange the old version sits at `new`, inside the staging directory.
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(replaced):
            os.rename(os.path.join(replaced, name), os.path.join(staged, name))
        os.rmdir(replaced)
    previous = os.path.join(output, PREVIOUS_DIR)
    shutil.rmtree(previous, ignore_errors=True)
    os.rename(staged, previous)
    return names
