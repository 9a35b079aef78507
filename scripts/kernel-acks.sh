#!/usr/bin/env bash
# How the kernel's TCP senders answer each ACK, on one testbed run (root).
#
#   sudo bash scripts/kernel-acks.sh SCENARIO.toml [--out DIR] [cclab testbed run options]
#
# Traces the `tcp:tcp_probe` event (net/ipv4/tcp_input.c: one per ACK a sender takes,
# with its snd_nxt, snd_una, cwnd, ssthresh and srtt before the ACK is processed),
# `tcp:tcp_retransmit_skb` and `tcp:tcp_sendmsg_locked` (the send queue's buffers) while
# `cclab testbed run` runs the scenario, then prints per flow, with
# scripts/kernel_acks.py: how many ACKs acknowledged one segment, two or more; what the
# sender sent in answer to an ACK of one segment (between one ACK and the next, snd_nxt
# moves by what the first let out); and, where that ACK left room for one segment, whether
# it went or waited, by how far ahead the ACK of the oldest outstanding segment was due
# (its send time, from the same trace, plus srtt). That last table is what Linux's
# `tcp_tso_should_defer` decides on (docs/fidelity.md, "The kernel holds back a packet the
# window cuts short").
#
# Writes DIR/run (the testbed's results folder), DIR/trace.txt and DIR/acks.txt (default
# DIR: results/kernel-acks-<scenario>). Builds cclab unless CCLAB_BIN names a binary. Mounts tracefs at /sys/kernel/tracing if it is
# not mounted, and leaves the tracing state as it found it (events off, filters cleared,
# buffer size restored, tracefs unmounted if this script mounted it), also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    echo "usage: sudo bash scripts/kernel-acks.sh SCENARIO.toml [--out DIR] [cclab testbed run options]" >&2
    exit 2
}

[ $# -ge 1 ] || usage
SCENARIO=$1
shift
. scripts/kernel-trace.sh
scenario_options kernel-acks "$@"
need_root_and_python
cclab_binary
mkdir -p "$OUT"
hold_root_lock
# Only ACKs without data: the senders' side (the receivers' probes carry data).
trace_start "tcp/tcp_probe=data_len == 0" tcp/tcp_retransmit_skb= tcp/tcp_sendmsg_locked=
"$CCLAB" testbed run "$SCENARIO" --out "$OUT/run" "${PASS[@]}"
trace_stop "$OUT/trace.txt"
python3 scripts/kernel_acks.py "$OUT/trace.txt" | tee "$OUT/acks.txt"
