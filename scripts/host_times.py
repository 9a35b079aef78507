#!/usr/bin/env python3
"""The testbed's hosts' timing, which `cclab fidelity --hosts testbed` models, from one
testbed run's kernel trace and the emulator's packet log (scripts/host-times.sh records
both).

    python3 scripts/host_times.py TRACE PACKET_LOG

Per flow (its receiver's address):
- the ACKs its receiving application's thread sent after reading, of all the ACKs the
  emulator got from the flow, and the time from the arrival of the flow's latest segment
  (`tcp:tcp_probe` with data, on the receiver) to each of those ACKs leaving
  (`net:net_dev_queue`). The thread is known by `tcp:tcp_rcv_space_adjust`, which only the
  read runs. The other ACKs leave while the emulator's write of the segment into the
  receivers' TUN device runs the receiving TCP (net/ipv4/tcp_input.c,
  `__tcp_ack_snd_check`; docs/fidelity.md, "The ACKs Linux leaves to the application's
  read");
- the sender's answer to an ACK: from the emulator writing an ACK into the senders'
  namespace to reading the first data packet of what it released (packet log; the
  emulator's loop is in it, as in scripts/packet_log.py).

Then the values for `cclab fidelity`: --read-delay, the median of the read-path ACKs'
times, and --host-delay, twice the median of the senders' answers (the simulator draws a
flow's host delay uniformly from zero, so its mean is half of it).
"""

import argparse
import re
import statistics
import sys
from collections import defaultdict

from packet_log import burst_starts, percentiles, read as read_packet_log, since_latest

EVENT = re.compile(r"^\s*(.+?)-(\d+)\s+\[\d+\]\s+\S+\s+(\d+)\.(\d+): (\w+): (.*)$")
READER = re.compile(r"saddr=([\d.]+)")
SEGMENT = re.compile(r"src=([\d.]+):\d+")
QS = (0.1, 0.25, 0.5, 0.75, 0.9)


def read_trace(path):
    """(the readers' addresses by thread id, data arrivals per address, small packets sent
    as (time, thread id)); times in ns."""
    readers, segments, sent = {}, defaultdict(list), []
    with open(path) as f:
        for line in f:
            m = EVENT.match(line)
            if not m:
                continue
            _, tid, secs, frac, event, rest = m.groups()
            t = int(secs) * 1_000_000_000 + int(frac.ljust(9, "0"))
            if event == "tcp_rcv_space_adjust":
                r = READER.search(rest)
                if r:
                    readers[int(tid)] = r.group(1)
            elif event == "tcp_probe":
                s = SEGMENT.search(rest)
                if s:
                    segments[s.group(1)].append(t)
            elif event == "net_dev_queue":
                sent.append((t, int(tid)))
    return readers, segments, sent


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace")
    p.add_argument("packet_log")
    a = p.parse_args()
    readers, segments, sent = read_trace(a.trace)
    if not readers or not segments:
        sys.exit(f"error: {a.trace}: no tcp_rcv_space_adjust or tcp_probe events of the testbed's receivers")
    read_path = defaultdict(list)
    for t, tid in sent:
        addr = readers.get(tid)
        if addr is not None:
            read_path[addr].extend(since_latest([t], segments[addr]))
    times, _ = read_packet_log(a.packet_log)
    all_reads, answer_medians = [], []
    # A thread that read on a socket without segments traced (a sender's) is not a receiver.
    receivers = {addr for addr in readers.values() if segments[addr]}
    for addr in sorted(receivers, key=lambda s: tuple(map(int, s.split(".")))):
        acks = len(times[("arrive", "down", addr)])
        reads = read_path[addr]
        share = 100 * len(reads) / acks if acks else 0.0
        print(f"{addr}: {acks} ACKs reached the emulator, {len(reads)} ({share:.1f}%) sent after the application's read")
        print(f"  segment arrival to that ACK, us: {percentiles(reads, QS)}")
        data = burst_starts(times[("arrive", "up", addr)])
        answers = since_latest(data, times[("release", "down", addr)])
        print(f"  sender's answer to an ACK, us: {percentiles(answers, QS)}")
        all_reads += reads
        if answers:
            answer_medians.append(statistics.median(answers))
    if not all_reads or not answer_medians:
        sys.exit("error: no read-path ACKs or no senders' answers to measure")
    read_us = statistics.median(all_reads) / 1e3
    host_us = 2 * statistics.median(answer_medians) / 1e3
    print(f"for cclab fidelity: --host-delay {host_us:.0f}us --read-delay {read_us:.0f}us")


if __name__ == "__main__":
    main()
