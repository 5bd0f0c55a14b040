# SPDX-License-Identifier: GPL-2.0
"""A timed stage: "==> NAME", then "<== NAME: N s[, exit S]"."""

import time
from contextlib import contextmanager
from typing import Callable, Iterator, List

@contextmanager
def stage_block(name: str) -> Iterator[List[int]]:
    """The block between the lines; S: what it puts in the list or raised."""
    start = int(time.time())
    print(f'==> {name}', flush=True)
    rc = [0]
    try:
        yield rc
    except BaseException as e:
        code = getattr(e, 'status', getattr(e, 'code', 2))
        rc[0] = code if isinstance(code, int) else 1
        raise
    finally:
        took = int(time.time()) - start
        print(f'<== {name}: {took} s' + (f', exit {rc[0]}' if rc[0] else ''), flush=True)

def stage(name: str, func: Callable[..., int], *args) -> int:
    """FUNC ARGS... as a stage_block; its status."""
    with stage_block(name) as rc:
        rc[0] = func(*args)
    return rc[0]
