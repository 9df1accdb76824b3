"""How the storage probe's IOPS scale with readers, on a real clock.

    python benchmarks/storage_probe_scaling.py

A simulated device takes 2 ms per read and serves 4 at once, so IOPS should be about
min(concurrency, 4) / 2 ms: 500, 1,000, 2,000, then flat at 2,000 for 8 readers (more readers
only queue). On a busy machine the threads start late and the figures fall short; that is why this
is a benchmark to read, not a test (tests/test_measure.py checks the probe's arithmetic on a
simulated clock).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from calc import measure


def main() -> None:
    slots = threading.Semaphore(4)

    def device(path: str, offset: int, size: int) -> int:
        with slots:
            time.sleep(0.002)
        return size

    here = Path(__file__).parent
    print("readers  IOPS   expected")
    for c in (1, 2, 4, 8):
        iops = measure.storage(here, concurrency=c, seconds=1.0, reader=device).iops
        print(f"{c:>7}  {iops:5.0f}  {min(c, 4) / 0.002:8.0f}")


if __name__ == "__main__":
    main()
