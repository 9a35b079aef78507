"""The report's four plots with matplotlib, from a run's flows.csv and queue.csv."""

from typing import Any

from . import _cclab


def four_plots(result: Any, max_flows: int = 16) -> Any:
    """Congestion window, goodput, bottleneck queue and smoothed RTT against time, as in
    report.html (goodput over a sliding window of 1% of the run, at least one sample,
    computed by the same code as the report)."""
    import matplotlib.pyplot as plt

    flows, queue = result.flows, result.queue
    names = [n for n, _ in result.scenario.flows]
    duration = result.scenario.duration
    window = max(duration / 100.0, result.scenario.sample_interval)
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    (ax_cwnd, ax_goodput), (ax_queue, ax_rtt) = axes
    for i, (flow, rows) in enumerate(flows.groupby("flow", sort=True)):
        if i >= max_flows:
            break
        label = names[flow] if flow < len(names) else str(flow)
        ax_cwnd.plot(rows["time_s"], rows["cwnd_pkts"], label=label, lw=1)
        rtt = rows[rows["srtt_ms"] > 0]
        ax_rtt.plot(rtt["time_s"], rtt["srtt_ms"], label=label, lw=1)
        samples = list(zip(rows["time_s"].tolist(), rows["delivered_bytes"].tolist()))
        pts = _cclab.goodput_points(samples, window)
        ax_goodput.plot([t for t, _ in pts], [g for _, g in pts], label=label, lw=1)
    ax_queue.plot(queue["time_s"], queue["packets"], label="bottleneck", lw=1)
    for ax, title, ylabel in [
        (ax_cwnd, "Congestion window", "cwnd (packets)"),
        (ax_goodput, "Goodput", "goodput (Mbit/s)"),
        (ax_queue, "Bottleneck queue", "queue (packets)"),
        (ax_rtt, "Smoothed RTT", "srtt (ms)"),
    ]:
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.set_xlim(0, duration)
        ax.grid(alpha=0.3)
    ax_queue.set_xlabel("time (s)")
    ax_rtt.set_xlabel("time (s)")
    ax_cwnd.legend(fontsize="small")
    fig.suptitle(result.scenario.name)
    fig.tight_layout()
    return fig
