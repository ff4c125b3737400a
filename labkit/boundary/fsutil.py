"""Small file-system helpers shared by the stores that write to disk."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_private_atomic(
    target: str | os.PathLike, data: bytes | Callable[[BinaryIO], None], *, fsync: bool = True
) -> None:
    """Write ``target`` all at once, readable by its owner only (0600).

    The bytes go to a temp file beside the target and are renamed over it, so
    a reader sees the old file or the new one, never half of one. ``data`` is
    the bytes, or a function that writes them to the open file.
    """
    target = Path(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
