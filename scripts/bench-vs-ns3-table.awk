# Prints scripts/bench-vs-ns3.sh's two tables from its records, one case a line:
#   name flows cc mbps rtt_ms queue_pkts secs
#   ns3_wall ns3_cpu cclab_wall cclab_cpu cclab_pgo_wall cclab_pgo_cpu
#   ns3_packets ns3_utilisation cclab_packets cclab_utilisation
# (times are medians in seconds; "cclab_pgo" is the profile-guided build), then says
# plainly for each case whether both simulators moved the same work: bottleneck packets
# within tol percent and utilisation within tol percentage points. Set tol with -v.
function per_s(n, secs) {
    if (secs <= 0) return "-"
    n = n / secs
    if (n >= 1e6) return sprintf("%.2f M", n / 1e6)
    if (n >= 1e3) return sprintf("%.1f k", n / 1e3)
    return sprintf("%.0f", n)
}
function ratio(a, b) { return b > 0 ? sprintf("%.0fx", a / b) : "-" }
function abs(x) { return x < 0 ? -x : x }
{
    n++
    text[n] = sprintf("%d %s, %d Mbit/s, %d ms, 1 BDP (%d pkt), %d s", $2, $3, $4, $5, $6, $7)
    name[n] = $1
    ns3_w[n] = $8; ns3_c[n] = $9; cc_w[n] = $10; cc_c[n] = $11; pgo_w[n] = $12; pgo_c[n] = $13
    ns3_pk[n] = $14; ns3_u[n] = $15; cc_pk[n] = $16; cc_u[n] = $17
}
END {
    print "Speed (median process wall time; CPU = user + system; cclab's plain release build,"
    print "then its profile-guided build, scripts/build-pgo.sh):"
    print ""
    print "| case | ns-3 wall | cclab wall | ratio | cclab PGO wall | ratio" \
        " | ns-3 packets / wall-s | cclab PGO packets / wall-s" \
        " | ns-3 CPU | cclab CPU | CPU ratio | cclab PGO CPU | CPU ratio |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
        printf "| %s | %.3f s | %.3f s | %s | %.3f s | %s | %s | %s | %.3f s | %.3f s | %s" \
            " | %.3f s | %s |\n",
            text[i], ns3_w[i], cc_w[i], ratio(ns3_w[i], cc_w[i]),
            pgo_w[i], ratio(ns3_w[i], pgo_w[i]),
            per_s(ns3_pk[i], ns3_w[i]), per_s(cc_pk[i], pgo_w[i]),
            ns3_c[i], cc_c[i], ratio(ns3_c[i], cc_c[i]), pgo_c[i], ratio(ns3_c[i], pgo_c[i])
    }
    print ""
    print "Work (bottleneck packets sent, and utilisation = busy fraction of the bottleneck):"
    print ""
    print "| case | ns-3 packets | cclab packets | difference | ns-3 utilisation" \
        " | cclab utilisation | difference | same work |"
    print "|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
        pk_diff[i] = 100 * (cc_pk[i] - ns3_pk[i]) / (ns3_pk[i] > 0 ? ns3_pk[i] : 1)
        u_diff[i] = 100 * (cc_u[i] - ns3_u[i])
        same[i] = abs(pk_diff[i]) <= tol && abs(u_diff[i]) <= tol
        printf "| %s | %d | %d | %+.1f%% | %.3f | %.3f | %+.1f points | %s |\n",
            text[i], ns3_pk[i], cc_pk[i], pk_diff[i], ns3_u[i], cc_u[i], u_diff[i],
            same[i] ? "yes" : "NO"
    }
    print ""
    for (i = 1; i <= n; i++) {
        if (same[i])
            printf "%s: the same work (packets and utilisation within %s%%).\n", name[i], tol
        else
            printf "%s: NOT the same work: cclab moved %+.1f%% bottleneck packets and" \
                " %+.1f points of utilisation against ns-3 (allowed %s%% and %s points), so the" \
                " speed figures of this case do not compare like with like.\n",
                name[i], pk_diff[i], u_diff[i], tol, tol
    }
}
