#!/usr/bin/env python3
"""Reads a packet log, the emulator's (`cclab testbed run --packet-log FILE`) or the
simulator's in the same form (`cclab run --packet-log FILE`), and prints, per flow (its
receiver address):

- how many packets arrived, were dropped, departed and were released in each direction;
- the receiver's ACK latency: for each ACK read from namespace B, the time since the
  emulator wrote that flow's latest data packet into B (the receiving host's stack, its
  scheduling and the emulator's own loop);
- the sender's answer: for each burst of data read from namespace A (packets less than
  100 us apart), the time since the emulator wrote that flow's latest ACK into A;
- the delay lines' lateness (release time against due time) per direction;
- the overflows of the bottleneck (runs of drops less than --gap apart, after --skip
  seconds): whose packet was dropped first, and the order of each overflow's drops.

Cross traffic is logged under host B's address, 198.18.0.2, both ways (the forward
sources' sink, the reverse sources' own); it has counts and drops but no ACKs, so no
latencies.

    python3 scripts/packet_log.py FILE [--skip SECONDS] [--gap SECONDS]
"""

import argparse
import bisect
import csv
import signal
import sys
from collections import defaultdict

BURST_NS = 100_000
# Host B's address, under which the testbed (and the simulator's log) names cross traffic.
CROSS = "198.18.0.2"


def percentiles(values, qs=(0.05, 0.25, 0.5, 0.75, 0.95)):
    """'p5 1.0 p25 ...' in microseconds, or 'none'."""
    if not values:
        return "none"
    v = sorted(values)
    return " ".join(f"p{round(q * 100)} {v[int(q * (len(v) - 1))] / 1e3:.1f}" for q in qs)


def integer(path, line, row, column):
    """Row `row`'s `column` as an integer, or an error naming the file, line and value."""
    try:
        return int(row[column])
    except (TypeError, ValueError):
        sys.exit(f"error: {path} line {line}: {column} {row[column]!r} is not an integer")


def read(path):
    """Times (ns) per (event, direction, address), and (time, due) pairs of releases."""
    times = defaultdict(list)
    late = defaultdict(list)
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        want = ["event", "direction", "time_ns", "address", "queue_packets", "due_ns"]
        # The TCP header's columns that follow (seq, ack, flags, window, payload_bytes,
        # tsval, tsecr) are not read here; logs written before they were added lack them.
        if (rows.fieldnames or [])[: len(want)] != want:
            sys.exit(f"error: {path}: columns {rows.fieldnames}, expected {want} first")
        for n, r in enumerate(rows, start=2):
            t = integer(path, n, r, "time_ns")
            key = (r["event"], r["direction"], r["address"])
            times[key].append(t)
            if r["event"] == "release":
                late[r["direction"]].append(t - integer(path, n, r, "due_ns"))
    return times, late


def since_latest(later, earlier):
    """For each time in `later`, the time since the latest one in `earlier` (sorted)."""
    out = []
    for t in later:
        i = bisect.bisect_right(earlier, t) - 1
        if i >= 0:
            out.append(t - earlier[i])
    return out


def burst_starts(times):
    """The first time of each run of times less than BURST_NS apart."""
    return [t for i, t in enumerate(times) if i == 0 or t - times[i - 1] >= BURST_NS]


def overflows(times, skip_ns, gap_ns):
    """Drops of the uplink after skip_ns, grouped into overflows: lists of (time, address)."""
    drops = sorted(
        (t, addr)
        for (event, direction, addr), ts in times.items()
        if event == "drop" and direction == "up"
        for t in ts
        if t >= skip_ns
    )
    groups = []
    for t, addr in drops:
        if not groups or t - groups[-1][-1][0] > gap_ns:
            groups.append([])
        groups[-1].append((t, addr))
    return groups


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file")
    p.add_argument("--skip", type=float, default=2.0, help="seconds left out of the overflows")
    p.add_argument("--gap", type=float, default=0.5, help="seconds between two overflows")
    a = p.parse_args()
    if a.skip < 0 or a.gap <= 0:
        sys.exit(f"error: --skip {a.skip} must be >= 0 and --gap {a.gap} > 0")
    times, late = read(a.file)
    addresses = sorted({addr for (_, _, addr) in times}, key=lambda s: tuple(map(int, s.split("."))))
    for addr in addresses:
        counts = ", ".join(
            f"{d} {'/'.join(str(len(times[(e, d, addr)])) for e in ('arrive', 'drop', 'depart', 'release'))}"
            for d in ("up", "down")
        )
        if addr == CROSS:
            print(f"{addr} (cross traffic): arrived/dropped/departed/released {counts}")
            continue
        print(f"{addr}: arrived/dropped/departed/released {counts}")
        acks = since_latest(times[("arrive", "down", addr)], times[("release", "up", addr)])
        print(f"  receiver's ACK latency, us: {percentiles(acks)}")
        data = burst_starts(times[("arrive", "up", addr)])
        answers = since_latest(data, times[("release", "down", addr)])
        print(f"  sender's answer to an ACK, us: {percentiles(answers)}")
    for d in ("up", "down"):
        print(f"delay line lateness {d}, us: {percentiles(late[d], (0.5, 0.99, 1.0))}")
    groups = overflows(times, a.skip * 1e9, a.gap * 1e9)
    first = defaultdict(int)
    for g in groups:
        first[g[0][1]] += 1
    print(f"overflows after {a.skip:g} s: {len(groups)}; first drop by " +
          (", ".join(f"{addr} {n}" for addr, n in sorted(first.items())) or "nobody"))
    for g in groups:
        t0 = g[0][0]
        order = " ".join(f"{addr}@{(t - t0) / 1e6:.1f}ms" for t, addr in g)
        print(f"  {t0 / 1e9:.3f} s: {order}")


if __name__ == "__main__":
    # Piped into `head`, stop quietly when the reader goes.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
