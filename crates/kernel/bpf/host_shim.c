// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host side of host_shim.h: the clock the harness drives, the parameter blocks the
 * harness fills, and Linux's tcp_cong.c helpers as v6.x has them (the kernel calls them
 * as kfuncs from BPF). Written from the kernel's behaviour; crates/cc/src/tcp.rs is the
 * Rust twin, and the differential test checks the pair.
 */
#include "host_shim.h"
#include "cclab_params.h"

__u64 cclab_host_now_us;
__u32 cclab_host_hz = 1000;
struct cclab_tuner_params cclab_host_tuner_params;
struct cclab_fit_params cclab_host_fit_params;
struct cclab_fit_stats cclab_host_fit_stats;

static __u32 min_u32(__u32 a, __u32 b)
{
	return a < b ? a : b;
}

__u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked)
{
	__u32 cwnd = min_u32(tp->snd_cwnd + acked, tp->snd_ssthresh);

	acked -= cwnd - tp->snd_cwnd;
	tp->snd_cwnd = min_u32(cwnd, tp->snd_cwnd_clamp);
	return acked;
}

void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked)
{
	/* Credits accumulated at a larger w are applied gently now. */
	if (tp->snd_cwnd_cnt >= w) {
		tp->snd_cwnd_cnt = 0;
		tp->snd_cwnd++;
	}
	tp->snd_cwnd_cnt += acked;
	if (tp->snd_cwnd_cnt >= w) {
		__u32 delta = tp->snd_cwnd_cnt / w;

		tp->snd_cwnd_cnt -= delta * w;
		tp->snd_cwnd += delta;
	}
	tp->snd_cwnd = min_u32(tp->snd_cwnd, tp->snd_cwnd_clamp);
}

__u32 tcp_reno_undo_cwnd(struct sock *sk)
{
	return sk->snd_cwnd > sk->prior_cwnd ? sk->snd_cwnd : sk->prior_cwnd;
}
