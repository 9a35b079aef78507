#!/usr/bin/env python3
"""Takes this machine's processors away in bursts, as a virtual machine's host does.

    sudo python3 scripts/take-cpus.py ON_MS OFF_MS SECONDS

On every processor a SCHED_FIFO process (priority 50, above the emulator's) spins for
about ON_MS, then sleeps for about OFF_MS (each drawn from 0.5 to 1.5 times the figure,
seeded by the processor's number), for SECONDS. Run a real-time test or `cclab testbed
run` beside it to see what a host that steals the processors does to a run, and whether
the run's kernel.json `emulator` marks it disturbed. `2 40` made about 4% of one CUBIC
flow's packets late (the level of a CI run of 2026-12-03 whose host took 10 to 14% of the
processors); `20 40` about 30%. Root is needed for SCHED_FIFO. Ctrl-C stops every burst.
"""

import os
import random
import sys
import time


def take(cpu: int, on_s: float, off_s: float, seconds: float) -> None:
    """Spins and sleeps on processor `cpu` until `seconds` have passed."""
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    draw = random.Random(cpu)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        burst_end = time.monotonic() + on_s * draw.uniform(0.5, 1.5)
        while time.monotonic() < burst_end:
            pass
        time.sleep(off_s * draw.uniform(0.5, 1.5))


def main() -> int:
    try:
        on_ms, off_ms, seconds = (float(a) for a in sys.argv[1:4])
        in_range = 0 < on_ms <= 1000 and 0 < off_ms <= 10_000 and 0 < seconds <= 3600
        if len(sys.argv) != 4 or not in_range:
            raise ValueError
    except ValueError:
        print(
            "usage: take-cpus.py ON_MS OFF_MS SECONDS (ON_MS in (0, 1000], OFF_MS in (0, 10000],"
            f" SECONDS in (0, 3600]); got {sys.argv[1:]}",
            file=sys.stderr,
        )
        return 2
    children = []
    for cpu in sorted(os.sched_getaffinity(0)):
        pid = os.fork()
        if pid == 0:
            try:
                take(cpu, on_ms / 1e3, off_ms / 1e3, seconds)
            except PermissionError:
                print("take-cpus.py: SCHED_FIFO needs root", file=sys.stderr)
                os._exit(1)
            except KeyboardInterrupt:
                pass
            os._exit(0)
        children.append(pid)
    failed = False
    for pid in children:
        try:
            _, status = os.waitpid(pid, 0)
        except KeyboardInterrupt:
            _, status = os.waitpid(pid, 0)
        failed |= status != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
