// SPDX-License-Identifier: GPL-2.0-only
/*
 * cclab_cubic_fit: CUBIC-FIT (J. Wang et al., "CUBIC-FIT: A High Performance and TCP
 * CUBIC Friendly Congestion Control Algorithm", IEEE Comm. Letters 2013; seed 000).
 *
 * One connection behaves like N CUBIC flows (Eq. 5): the cubic runs on N-scaled time,
 * w = C (N t - I)^3 + W_max with C = 0.4 (C' = 0.4 N^3 folded into time), and the
 * decrease factor is b = 4 / (19 N + 1), so beta = 1 - b. Every update_interval_us
 * (500 ms in the paper) N follows Eq. 6:
 *     N <- max(1, N + 1 - (RTT_avg - RTT_min) / (alpha RTT_avg) * N),
 *     alpha = min(1/10, (RTT_max - RTT_min) / (2 RTT_max)),
 * with RTT_avg the mean RTT sample of the period and RTT_min/RTT_max the extremes over
 * the flow. Everything else is Linux CUBIC (cclab_cubic.h: HyStart, fast convergence,
 * Reno-friendliness with N Reno flows' growth).
 *
 * Fixed point, and how this differs from the Rust reference (crates/cc/src/cubic_fit.rs):
 *  - N is kept in 1/1024 units, capped at n_max (default 128; the paper has no cap; the
 *    cap keeps the arithmetic inside 64 bits); beta = 1024 - floor(4 * 2^20 / (19 n + 1024))
 *    in 1/1024 (N = 1: 820/1024).
 *  - Eq. 6's correction term uses exact 1/10 when alpha is capped:
 *        term = q * n * 10 / RTT_avg,
 *    otherwise alpha in 1/65536, alpha16 = (RTT_max - RTT_min) * 65536 / (2 RTT_max), and
 *        term = q * n * 65536 / (alpha16 * RTT_avg)   (alpha16 = 0: term = 0 if q = 0,
 *    else N drops to 1), with q = RTT_avg - RTT_min clamped to 2^27 us; all in u64.
 *  - RTT samples are the kernel's per-ACK rtt_us (ack_sample); samples < 0 are skipped.
 *  - The latest N, alpha and RTT statistics (of whichever socket updated last) are
 *    exported in the array map `fit_stats` for `cclab kernel get cclab_cubic_fit`.
 */
#include "cclab_cubic.h"
#include "cclab_params.h"

#ifndef CCLAB_HOST
char _license[] SEC("license") = "GPL";
#endif

#define FIT_Q_MAX (1U << 27)

/* Per-flow state in inet_csk_ca(sk): 96 of the kernel's 104 bytes (ICSK_CA_PRIV_SIZE). */
struct cclab_fit {
	struct cclab_cubic c;
	__u32 n;               /* N, 1/1024 */
	__u32 rtt_min_us;      /* minimum RTT sample over the flow, 0 = none yet */
	__u32 rtt_max_us;      /* maximum RTT sample over the flow */
	__u32 period_start_us; /* start of the current N period (tcp_mstamp, wraps) */
	__u64 rtt_sum_us;      /* sum of RTT samples in this period */
	__u32 rtt_cnt;         /* RTT samples in this period */
	__u32 alpha;           /* alpha used at the last update, 1/65536 */
};

#ifndef CCLAB_HOST
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cclab_fit_params);
} fit_params SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cclab_fit_stats);
} fit_stats SEC(".maps");

static __always_inline const struct cclab_fit_params *fit_params_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&fit_params, &zero);
}

static __always_inline struct cclab_fit_stats *fit_stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&fit_stats, &zero);
}
#else
extern struct cclab_fit_params cclab_host_fit_params;
extern struct cclab_fit_stats cclab_host_fit_stats;
static const struct cclab_fit_params *fit_params_get(void)
{
	return &cclab_host_fit_params;
}
static struct cclab_fit_stats *fit_stats_get(void)
{
	return &cclab_host_fit_stats;
}
#endif

static const struct cclab_fit_params fit_defaults = {
	.fast_convergence = 1, .tcp_friendliness = 1, .hystart = 1,
	.hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY, .hystart_low_window = 16,
	.hystart_ack_delta_us = 2000, .initial_ssthresh = 0, .bic_scale = 41,
	.update_interval_us = 500000, .n_max = 128 * CCLAB_N_SCALE,
};

static __always_inline const struct cclab_fit_params *params(void)
{
	const struct cclab_fit_params *p = fit_params_get();

	/* Verifier only: a map lookup may return NULL as far as it knows. */
	return p ? p : &fit_defaults;
}

/* beta = 1 - 4 / (19 N + 1), in 1/1024, for N in 1/1024. */
static __always_inline __u32 fit_beta(__u32 n)
{
	return BICTCP_BETA_SCALE - (__u32)((4ULL << 20) / (19ULL * n + CCLAB_N_SCALE));
}

static __always_inline void knobs(struct cubic_knobs *k, const struct cclab_fit *ca)
{
	const struct cclab_fit_params *p = params();
	__u32 n = ca->n ? ca->n : CCLAB_N_SCALE;

	k->alpha = CCLAB_ALPHA_SCALE;
	k->beta = fit_beta(n);
	k->n = n;
	k->fast_convergence = p->fast_convergence;
	k->tcp_friendliness = p->tcp_friendliness;
	k->hystart = p->hystart;
	k->hystart_detect = p->hystart_detect;
	k->hystart_low_window = p->hystart_low_window;
	k->hystart_ack_delta_us = p->hystart_ack_delta_us;
	k->initial_ssthresh = p->initial_ssthresh;
	k->bic_scale = p->bic_scale;
}

/* Eq. 6, once per period. */
static void fit_update_n(struct sock *sk, struct cclab_fit *ca, __u32 n_max)
{
	__u32 avg, q, min = ca->rtt_min_us, max = ca->rtt_max_us, alpha16;
	__u64 term;
	__s64 next;
	struct cclab_fit_stats *st;

	avg = (__u32)(ca->rtt_sum_us / ca->rtt_cnt);
	q = avg > min ? avg - min : 0;
	q = cclab_min(q, FIT_Q_MAX);

	if (10ULL * (max - min) >= 2ULL * max) {
		alpha16 = 6553; /* 1/10 in 1/65536, for export; the term uses exact 1/10 */
		term = avg ? (__u64)q * ca->n * 10 / avg : 0;
	} else {
		alpha16 = (__u32)(((__u64)(max - min) << 16) / (2ULL * max));
		if (q == 0)
			term = 0;
		else if (alpha16 == 0 || avg == 0)
			term = ~0ULL;
		else
			term = ((__u64)q * ca->n << 16) / ((__u64)alpha16 * avg);
	}

	next = (__s64)ca->n + CCLAB_N_SCALE;
	if (term >= (__u64)next)
		next = CCLAB_N_SCALE;
	else
		next -= (__s64)term;
	if (next < CCLAB_N_SCALE)
		next = CCLAB_N_SCALE;
	if (next > n_max)
		next = n_max;
	ca->n = (__u32)next;
	ca->alpha = alpha16;

	st = fit_stats_get();
	/* Verifier only: NULL check on a one-entry array lookup. */
	if (st) {
		st->n = ca->n;
		st->alpha = alpha16;
		st->rtt_min_us = min;
		st->rtt_max_us = max;
		st->rtt_avg_us = avg;
		st->samples = ca->rtt_cnt;
		st->updates++;
		st->cwnd = tcp_sk(sk)->snd_cwnd;
	}
}

SEC("struct_ops")
void BPF_PROG(cclab_fit_init, struct sock *sk)
{
	struct cclab_fit *ca = inet_csk_ca(sk);
	struct cubic_knobs k;

	ca->n = CCLAB_N_SCALE;
	ca->rtt_min_us = 0;
	ca->rtt_max_us = 0;
	ca->rtt_sum_us = 0;
	ca->rtt_cnt = 0;
	ca->alpha = 0;
	ca->period_start_us = cubic_clock_us(sk);
	knobs(&k, ca);
	cubic_init(sk, &ca->c, &k);
}

SEC("struct_ops")
void BPF_PROG(cclab_fit_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct cclab_fit *ca = inet_csk_ca(sk);
	struct cubic_knobs k;

	knobs(&k, ca);
	cubic_cong_avoid(sk, &ca->c, &k, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(cclab_fit_ssthresh, struct sock *sk)
{
	struct cclab_fit *ca = inet_csk_ca(sk);
	struct cubic_knobs k;

	knobs(&k, ca);
	return cubic_recalc_ssthresh(sk, &ca->c, &k);
}

SEC("struct_ops")
void BPF_PROG(cclab_fit_set_state, struct sock *sk, __u8 new_state)
{
	struct cclab_fit *ca = inet_csk_ca(sk);

	cubic_set_state(sk, &ca->c, new_state);
}

SEC("struct_ops")
void BPF_PROG(cclab_fit_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct cclab_fit *ca = inet_csk_ca(sk);

	cubic_cwnd_event(sk, &ca->c, event);
}

SEC("struct_ops")
void BPF_PROG(cclab_fit_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct cclab_fit *ca = inet_csk_ca(sk);
	const struct cclab_fit_params *p = params();
	struct cubic_knobs k;
	__s32 rtt = sample->rtt_us;
	__u32 now = cubic_clock_us(sk);

	knobs(&k, ca);
	cubic_acked(sk, &ca->c, &k, rtt);

	if (rtt >= 0) {
		__u32 d = rtt ? (__u32)rtt : 1;

		if (ca->rtt_min_us == 0 || d < ca->rtt_min_us)
			ca->rtt_min_us = d;
		if (d > ca->rtt_max_us)
			ca->rtt_max_us = d;
		ca->rtt_sum_us += d;
		ca->rtt_cnt++;
	}

	if ((__s32)(now - ca->period_start_us) >= (__s32)p->update_interval_us) {
		if (ca->rtt_cnt)
			fit_update_n(sk, ca, p->n_max);
		ca->rtt_sum_us = 0;
		ca->rtt_cnt = 0;
		ca->period_start_us = now;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(cclab_fit_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

#ifndef CCLAB_HOST
SEC(".struct_ops.link")
struct tcp_congestion_ops cclab_cubic_fit = {
	.init = (void *)cclab_fit_init,
	.ssthresh = (void *)cclab_fit_ssthresh,
	.cong_avoid = (void *)cclab_fit_cong_avoid,
	.set_state = (void *)cclab_fit_set_state,
	.undo_cwnd = (void *)cclab_fit_undo_cwnd,
	.cwnd_event = (void *)cclab_fit_cwnd_event,
	.pkts_acked = (void *)cclab_fit_acked,
	.name = "cclab_cubic_fit",
};
#endif
