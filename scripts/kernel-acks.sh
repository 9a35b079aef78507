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
[ -f "$SCENARIO" ] || { echo "error: SCENARIO: no such file: $SCENARIO" >&2; exit 2; }
OUT="results/kernel-acks-$(basename "$SCENARIO" .toml)"
PASS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out)
            [ $# -ge 2 ] || usage
            OUT=$2
            shift 2
            ;;
        *)
            PASS+=("$1")
            shift
            ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "error: needs root (tracefs and the testbed's namespaces)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "error: needs python3" >&2; exit 2; }

# CCLAB_BIN: a cclab binary to use instead of building one (the test suite sets it).
CCLAB=${CCLAB_BIN:-}
if [ -z "$CCLAB" ]; then
    . scripts/deps.sh
    ensure_cargo
    cargo build --release -q
    CCLAB="$(pwd)/target/release/cclab"
fi

T=/sys/kernel/tracing
MOUNTED=0
if [ ! -e "$T/events" ]; then
    mount -t tracefs nodev "$T"
    MOUNTED=1
fi
for e in tcp_probe tcp_retransmit_skb tcp_sendmsg_locked; do
    [ -d "$T/events/tcp/$e" ] || { echo "error: this kernel has no tcp:$e trace event" >&2; exit 1; }
done
OLD_BUFFER=$(cat "$T/buffer_size_kb")
OLD_ON=$(cat "$T/tracing_on")

restore() {
    for e in tcp_probe tcp_retransmit_skb tcp_sendmsg_locked; do
        echo 0 > "$T/events/tcp/$e/enable" || true
        echo 0 > "$T/events/tcp/$e/filter" || true
    done
    echo "$OLD_BUFFER" > "$T/buffer_size_kb" || true
    echo "$OLD_ON" > "$T/tracing_on" || true
    if [ "$MOUNTED" = 1 ]; then
        umount "$T" || true
    fi
}
trap restore EXIT

mkdir -p "$OUT"
echo 0 > "$T/tracing_on"
echo > "$T/trace"
# About 100 bytes an event; a 30 s run of two flows at 20 Mbit/s makes about 30,000.
echo 65536 > "$T/buffer_size_kb"
# Only ACKs without data: the senders' side (the receivers' probes carry data).
echo 'data_len == 0' > "$T/events/tcp/tcp_probe/filter"
for e in tcp_probe tcp_retransmit_skb tcp_sendmsg_locked; do
    echo 1 > "$T/events/tcp/$e/enable"
done
echo 1 > "$T/tracing_on"
flock /tmp/cclab-root.lock "$CCLAB" testbed run "$SCENARIO" --out "$OUT/run" "${PASS[@]}"
echo 0 > "$T/tracing_on"
cat "$T/trace" > "$OUT/trace.txt"
if grep -q '^overrun: [1-9]' "$T"/per_cpu/cpu*/stats; then
    echo "warning: the trace buffer overran; some events are missing" >&2
fi
python3 scripts/kernel_acks.py "$OUT/trace.txt" | tee "$OUT/acks.txt"
