#!/usr/bin/env python3
"""How the kernel's TCP senders answered each ACK, from a tracefs trace of `tcp:tcp_probe`
(see scripts/kernel-acks.sh, which records it).

    python3 scripts/kernel_acks.py TRACE [--mss BYTES] [--skip SECONDS]

`tcp_probe` fires when a sender takes an ACK, before processing it, with the sender's
snd_nxt, snd_una, cwnd, ssthresh and srtt. For consecutive ACKs k and k+1 of one flow:
ACK k acknowledged snd_una(k+1) - snd_una(k) and let out snd_nxt(k+1) - snd_nxt(k), and the
room it left was cwnd(k+1) - (snd_nxt(k) - snd_una(k+1)) segments (in Open, with nothing
SACKed). Only ACKs in congestion avoidance, after the first --skip seconds (default 1) and
more than 0.3 s from any retransmission are counted. The ACKs of one segment that left
room for one are split twice: by the time since the flow last sent (the ACK before that
moved snd_nxt), and by how far ahead the oldest outstanding segment's ACK was due: its send
time (the ACK whose answer sent it) plus srtt. Linux's `tcp_tso_should_defer` holds such a
segment back only within 1 ms of the last send and when that ACK is due within
min(1 ms, srtt / 2). The times are the trace's, taken as each ACK's processing began, and
srtt is the one before that ACK's own RTT sample, so the edges blur by tens of us.
"""
import argparse
import bisect
import collections
import re

PROBE = re.compile(
    r"\s(\d+\.\d+): tcp_probe: family=AF_INET src=[\d.]+:(\d+) dest=([\d.]+):\d+ .*"
    r"snd_nxt=0x([0-9a-f]+) snd_una=0x([0-9a-f]+) snd_cwnd=(\d+) ssthresh=(\d+) .*srtt=(\d+)"
)
RETRANSMIT = re.compile(r"\s(\d+\.\d+): tcp_retransmit_skb: .*sport=(\d+)")
NEAR_RETRANSMIT_S = 0.3
MOD = 1 << 32


class Ack:
    __slots__ = ("t", "nxt", "una", "cwnd", "ssthresh", "srtt_us")

    def __init__(self, t, nxt, una, cwnd, ssthresh, srtt_us):
        self.t, self.nxt, self.una = t, nxt, una
        self.cwnd, self.ssthresh, self.srtt_us = cwnd, ssthresh, srtt_us


def read(path):
    """Each testbed flow's ACKs (by source port) and retransmission times."""
    flows = collections.defaultdict(list)
    retransmits = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            m = PROBE.search(line)
            if m:
                t, sport, daddr, nxt, una, cwnd, ssthresh, srtt = m.groups()
                if not daddr.startswith(("198.18.", "198.19.")):
                    continue
                flows[sport].append(
                    Ack(float(t), int(nxt, 16), int(una, 16), int(cwnd), int(ssthresh), int(srtt))
                )
                continue
            m = RETRANSMIT.search(line)
            if m:
                retransmits[m.group(2)].append(float(m.group(1)))
    return flows, retransmits


def near(times, t):
    i = bisect.bisect_left(times, t - NEAR_RETRANSMIT_S)
    return i < len(times) and times[i] < t + NEAR_RETRANSMIT_S


def analyse(acks, retransmits, mss, skip):
    start = acks[0].t
    # Where each stretch of sequence space was sent: (snd_nxt before, after, time).
    sends = [(a.nxt, b.nxt, a.t) for a, b in zip(acks, acks[1:]) if b.nxt != a.nxt]
    send_starts = [s[0] for s in sends]
    sizes = collections.Counter()
    answers = collections.Counter()
    due = collections.defaultdict(collections.Counter)
    gap = collections.defaultdict(collections.Counter)
    last_send = None
    for a, b in zip(acks, acks[1:]):
        since_send_ms = None if last_send is None else (a.t - last_send) * 1e3
        if b.nxt != a.nxt:
            last_send = a.t
        acked, sent = (b.una - a.una) % MOD, (b.nxt - a.nxt) % MOD
        if a.t < start + skip or near(retransmits, a.t) or b.cwnd < b.ssthresh:
            continue
        if acked % mss or sent % mss or acked == 0:
            continue
        acked, sent = acked // mss, sent // mss
        sizes[min(acked, 3)] += 1
        if acked != 1:
            continue
        room = b.cwnd - ((a.nxt - b.una) % MOD) // mss
        answers[(min(room, 3), min(sent, 3))] += 1
        if room != 1:
            continue
        if since_send_ms is not None:
            gap["within 1 ms" if since_send_ms <= 1.0 else "more than 1 ms"][min(sent, 1)] += 1
        i = bisect.bisect_right(send_starts, b.una) - 1
        if i < 0 or not sends[i][0] <= b.una < sends[i][1]:
            continue
        ahead_ms = (b.srtt_us - (a.t - sends[i][2]) * 1e6) / 1e3
        # Quarter-millisecond bins, the tails gathered at -1 and +3 ms.
        due[min(max(round(ahead_ms * 4) / 4, -1.0), 3.0)][min(sent, 1)] += 1
    return sizes, answers, due, gap


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--mss", type=int, default=1448)
    p.add_argument("--skip", type=float, default=1.0)
    args = p.parse_args()
    flows, retransmits = read(args.trace)
    if not flows:
        raise SystemExit(f"error: {args.trace}: no tcp_probe events of testbed flows")
    for sport, acks in sorted(flows.items()):
        sizes, answers, due, gap = analyse(acks, retransmits[sport], args.mss, args.skip)
        total = sum(sizes.values())
        print(f"flow from port {sport}: {total} ACKs counted")
        for k in (1, 2, 3):
            label = f"{k} segment{'s' if k > 1 else ''}" + (" or more" if k == 3 else "")
            print(f"  acknowledging {label}: {sizes[k]} ({100 * sizes[k] / max(total, 1):.1f}%)")
        print("  answers to an ACK of one segment (room it left: segments sent, count):")
        for room in sorted({r for r, _ in answers}):
            row = ", ".join(f"{s}: {n}" for (r, s), n in sorted(answers.items()) if r == room)
            print(f"    room {room}{'+' if room == 3 else ''}: {row}")
        print("  room for one: the flow's last send was: held back / sent")
        for label in ("within 1 ms", "more than 1 ms"):
            print(f"    {label}: {gap[label][0]} / {gap[label][1]}")
        print("  room for one: the oldest segment's ACK due in (ms): held back / sent")
        for ahead in sorted(due):
            held, sent = due[ahead][0], due[ahead][1]
            edge = "<=" if ahead == -1.0 else ">=" if ahead == 3.0 else "  "
            print(f"    {edge}{ahead:+5.2f}: {held:4d} / {sent:4d}")


if __name__ == "__main__":
    main()
