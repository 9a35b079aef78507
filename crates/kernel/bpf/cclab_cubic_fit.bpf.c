// SPDX-License-Identifier: GPL-2.0-only
/*
 * cclab_cubic_fit: CUBIC-FIT (J. Wang et al., "CUBIC-FIT: A High Performance and TCP
 * CUBIC Friendly Congestion Control Algorithm", IEEE Comm. Letters 2013; seed 000).
 *
 * One connection behaves like N CUBIC flows (Eq. 5): the cubic runs on N-scaled time,
 * w = C (N t - I)^3 + W_max with C = 0.4 (C' = 0.4 N^3 folded into time), and the
 * decrease factor is b = 4 / (19 N + 1). Every 500 ms N follows Eq. 6:
 *     N <- max(1, N + 1 - (RTT_avg - RTT_min) / (alpha RTT_avg) * N),
 *     alpha = min(1/10, (RTT_max - RTT_min) / (2 RTT_max)),
 * RTT_avg the mean RTT sample of the period, RTT_min/RTT_max the extremes of the flow.
 * Everything else is Linux CUBIC (cclab_cubic.h: HyStart, fast convergence,
 * Reno-friendliness with N Reno flows' growth).
 *
 * This is the Rust reference crates/cc/src/cubic_fit.rs operation for operation:
 *  - N in 1/1024 (1024 = one flow), capped at 1000 flows (n_max in the params map).
 *  - ssthresh = max(2, cwnd (19N - 3) / (19N + 1)) exactly, in 64 bits; fast convergence
 *    and the Reno estimate use beta = 1 - b rounded to 1/1024. The Rust side rounds with
 *    f64, (19n - 3)/(19n + 1) * 1024; here it is the exact rational rounded half up,
 *    (2048 (19N - 3072) + 19N + 1024) / (2 (19N + 1024)) with N in 1/1024. They agree for
 *    every N: an exact tie is a dyadic rational, which f64 division returns exactly, and
 *    any other value is at least 1/(2 (19N + 1024)) from a tie, far above f64 error.
 *  - Eq. 6 (next_n): RTTs capped at 2^26 us, q = avg - min, N carried with 20 fractional
 *    bits: dec = (N q / avg * 10) >> 10 when 5 (max - min) >= max (alpha = 1/10), else
 *    dec = ((N q / (max - min)) * 2 max / avg) >> 10; dec = 0 if q = 0 or max <= min.
 *  - The period check runs when an RTT sample arrives, after adding it (as the Rust
 *    `sample()`), with the clock from tp->tcp_mstamp (32 bits, wraps; intervals are far
 *    below 2^31 us).
 *  - Differences: none intended. The kernel's ack_sample->rtt_us is the RTT sample
 *    (rtt_us < 0: none); in the replay it is the event's sample.
 *  - The latest N, alpha and RTT statistics (of whichever socket updated last) are
 *    exported in the array map `fit_stats` for `cclab kernel get cclab_cubic_fit`.
 */
#include "cclab_cubic.h"
#include "cclab_params.h"

#ifndef CCLAB_HOST
char _license[] SEC("license") = "GPL";
#endif

#define FIT_RTT_CAP_US (1ULL << 26)

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
	.fast_convergence = 1, .initial_ssthresh = 0, .bic_scale = 41, .tcp_friendliness = 1,
	.hystart = 1, .hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY,
	.hystart_low_window = 16, .hystart_ack_delta_us = 2000,
	.update_interval_us = 500000, .n_max = 1000 * CCLAB_N_SCALE,
};

#ifdef CCLAB_HOST
/* For the parameter test in crates/kernel/src/algo.rs: the defaults above and their size. */
const void *cclab_host_fit_defaults(__u32 *size)
{
	*size = sizeof(fit_defaults);
	return &fit_defaults;
}
#endif

static __always_inline const struct cclab_fit_params *params(void)
{
	const struct cclab_fit_params *p = fit_params_get();

	/* Verifier only: older verifiers treat any map lookup as possibly NULL (6.18
	 * knows a constant in-range array key cannot miss and accepts it without). */
	return p ? p : &fit_defaults;
}

/* beta = 1 - 4 / (19 N + 1) = (19 N - 3) / (19 N + 1), in 1/1024 rounded half up, for N
 * in 1/1024. */
static __always_inline __u32 fit_beta(__u32 n)
{
	__u64 num = 19ULL * n - 3ULL * CCLAB_N_SCALE; /* n >= 1024, so positive */
	__u64 den = 19ULL * n + CCLAB_N_SCALE;
	__u32 b = (__u32)((2048 * num + den) / (2 * den));

	return cclab_max(cclab_min(b, (__u32)BICTCP_BETA_SCALE), 1U);
}

#ifdef CCLAB_HOST
/* For the differential test: fit_beta for every N. */
__u32 cclab_host_fit_beta(__u32 n)
{
	return fit_beta(n);
}
#endif

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

/* Eq. 6 in integers (crates/cc cubic_fit::next_n). */
static __u32 fit_next_n(__u32 n, __u64 avg, __u64 min, __u64 max, __u32 n_max)
{
	__u64 q, n20 = (__u64)n << 10, dec;
	__s64 next;

	avg = cclab_min(avg, FIT_RTT_CAP_US);
	min = cclab_min(min, FIT_RTT_CAP_US);
	max = cclab_min(max, FIT_RTT_CAP_US);
	q = avg > min ? avg - min : 0;
	if (q == 0 || avg == 0 || max <= min)
		dec = 0;
	else if (5 * (max - min) >= max) /* alpha = 1/10 */
		dec = (n20 * q / avg * 10) >> 10;
	else /* alpha = (max - min) / (2 max) */
		dec = ((n20 * q / (max - min)) * 2 * max / avg) >> 10;
	next = (__s64)n + CCLAB_N_SCALE - (__s64)dec;
	if (next < CCLAB_N_SCALE)
		next = CCLAB_N_SCALE;
	if (next > (__s64)n_max)
		next = n_max;
	return (__u32)next;
}

/* One RTT sample: statistics, and at the end of a period the N update. */
static void fit_sample(struct sock *sk, struct cclab_fit *ca, const struct cclab_fit_params *p,
		       __u32 rtt)
{
	__u32 now = cubic_clock_us(sk), min, max, avg, alpha16, samples;
	struct cclab_fit_stats *st;

	ca->rtt_min_us = ca->rtt_min_us == 0 ? rtt : cclab_min(ca->rtt_min_us, rtt);
	ca->rtt_max_us = cclab_max(ca->rtt_max_us, rtt);
	ca->rtt_sum_us += rtt;
	ca->rtt_cnt++;
	if ((__u32)(now - ca->period_start_us) < p->update_interval_us)
		return;

	min = ca->rtt_min_us;
	max = ca->rtt_max_us;
	samples = ca->rtt_cnt;
	avg = (__u32)(ca->rtt_sum_us / samples);
	ca->n = fit_next_n(ca->n, avg, min, max, p->n_max);
	/* alpha for display only, in 1/65536. */
	alpha16 = max ? (__u32)(((__u64)(max - min) << 16) / (2ULL * max)) : 0;
	alpha16 = cclab_min(alpha16, 6554U);
	ca->alpha = alpha16;
	ca->period_start_us = now;
	ca->rtt_sum_us = 0;
	ca->rtt_cnt = 0;

	st = fit_stats_get();
	/* Verifier only (older kernels): NULL check on a one-entry array lookup. */
	if (st) {
		st->n = ca->n;
		st->alpha = alpha16;
		st->rtt_min_us = min;
		st->rtt_max_us = max;
		st->rtt_avg_us = avg;
		st->samples = samples;
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
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;
	__u64 n19, s;

	knobs(&k, ca);
	cubic_on_loss(&ca->c, &k, cwnd);
	/* cwnd (1 - b) exactly: cwnd (19 N - 3) / (19 N + 1). */
	n19 = 19ULL * k.n;
	s = (__u64)cwnd * (n19 - 3 * CCLAB_N_SCALE) / (n19 + CCLAB_N_SCALE);
	return cclab_max((__u32)s, 2U);
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
	struct cubic_knobs k;
	__s32 rtt = sample->rtt_us;

	if (rtt >= 0)
		fit_sample(sk, ca, params(), rtt ? (__u32)rtt : 1);
	knobs(&k, ca);
	cubic_acked(sk, &ca->c, &k, rtt);
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
