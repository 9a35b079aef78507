#!/usr/bin/env bash
# How fast the testbed's hosts are, on one testbed run (root): the values `cclab fidelity
# --hosts testbed` models (`host_delay`, `read_delay`), measured on this machine.
#
#   sudo bash scripts/host-times.sh [SCENARIO.toml] [--out DIR] [cclab testbed run options]
#
# Traces `tcp:tcp_probe` (segments with data reaching the receivers), `net:net_dev_queue`
# (packets under 100 bytes leaving: the ACKs) and `tcp:tcp_rcv_space_adjust` (run by a
# receiving application's read, which names its thread) while `cclab testbed run` runs the
# scenario with a packet log, then prints with scripts/host_times.py, per flow, the ACKs
# sent after the application's read and how long after their segment, the senders' answer
# to an ACK, and the two values for `cclab fidelity`. Default scenario:
# scenarios/fidelity/rtt4-reno-reno.toml, whose two flows take the two paths in different
# shares (docs/fidelity.md, "The ACKs Linux leaves to the application's read").
#
# Writes DIR/run (the testbed's results folder), DIR/packets.csv, DIR/trace.txt and
# DIR/hosts.txt (default DIR: results/host-times-<scenario>). Builds cclab unless CCLAB_BIN
# names a binary. Leaves the tracing state as it found it, also on failure
# (scripts/kernel-trace.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    echo "usage: sudo bash scripts/host-times.sh [SCENARIO.toml] [--out DIR] [cclab testbed run options]" >&2
    exit 2
}

SCENARIO=scenarios/fidelity/rtt4-reno-reno.toml
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then
    SCENARIO=$1
    shift
fi
. scripts/kernel-trace.sh
scenario_options host-times "$@"
need_root_and_python
cclab_binary
mkdir -p "$OUT"
hold_root_lock
trace_start "tcp/tcp_probe=data_len > 0" "net/net_dev_queue=len < 100" tcp/tcp_rcv_space_adjust=
"$CCLAB" testbed run "$SCENARIO" --out "$OUT/run" \
    --packet-log "$OUT/packets.csv" "${PASS[@]}"
trace_stop "$OUT/trace.txt"
python3 scripts/host_times.py "$OUT/trace.txt" "$OUT/packets.csv" | tee "$OUT/hosts.txt"
