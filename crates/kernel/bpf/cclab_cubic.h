/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CUBIC core shared by cclab_tuner and cclab_cubic_fit: Linux's net/ipv4/tcp_cubic.c
 * as of v6.13+ (table-driven cubic root, HyStart ACK-train and delay detection with the
 * hystart_update() ordering of commit "tcp_cubic: fix spurious HyStart ..." (6.13),
 * fast convergence, Reno-friendliness), written from the kernel's behaviour, with two
 * generalisations that leave it bit-identical to Linux at their neutral values:
 *
 *  - alpha (1/512 units, 512 neutral): TCPTuner's scaling of W_max after each loss,
 *    applied after fast convergence, as its tcp_tuner.c does.
 *  - n (1/1024 units, 1024 neutral): CUBIC-FIT's number of virtual flows. Time since the
 *    epoch start is multiplied by N before the cubic is evaluated (seed 000, Eq. 5:
 *    w = C (N t - I)^3 + W_max, i.e. C' = C N^3), and the Reno-friendly estimate grows
 *    N times as fast (N Reno flows).
 *
 * Tunables arrive each hook as a struct cubic_knobs; derived constants (beta_scale,
 * cube_factor, cube_rtt_scale) are computed here from them at the point of use, so a
 * change made by user space applies from the next ACK and is never stale.
 *
 * Where this differs from tcp_cubic.c (all intentional, none observable at defaults):
 *  1. Tunables are read per hook instead of from module globals (see above).
 *  2. The Reno-friendly "while (ack_cnt > delta)" loop is replaced by one division that
 *     gives the same result: n = (ack_cnt - 1) / delta leaves ack_cnt in (0, delta] as the
 *     loop does (a plain ack_cnt / delta, as in the BPF selftest, differs on exact
 *     multiples). BPF needs bounded loops.
 *  3. beta = 1.0 (beta_scale's divisor is 0 in Linux) freezes the Reno estimate: the
 *     step becomes 2^32 - 1 packets, as crates/cc does.
 *  4. A Reno step of 0 packets (tiny cwnd with large N) counts as 1, as in crates/cc.
 *  5. A bic_scale changed below the epoch's plateau ends the epoch (see cubic_update).
 * Like Linux, bic_scale * 10 * |t - K|^3 wraps in 64 bits for |t - K| beyond about
 * 2^18 / cbrt(bic_scale / 41) units (256 s at the default); CUBIC-FIT reaches that N
 * times sooner. crates/cc wraps identically.
 */
#ifndef CCLAB_CUBIC_H
#define CCLAB_CUBIC_H

#include "cclab_env.h"
#include "cclab_params.h"

#define BICTCP_BETA_SCALE 1024 /* beta in 1/1024 */
#define BICTCP_HZ 10           /* time in the cubic in 1/1024 s */
#define CCLAB_ALPHA_SCALE 512  /* TCPTuner's alpha in 1/512 */
#define CCLAB_N_SCALE 1024     /* CUBIC-FIT's N in 1/1024 */

#define HYSTART_MIN_SAMPLES 8
#define HYSTART_DELAY_MIN 4000U  /* us */
#define HYSTART_DELAY_MAX 16000U /* us */
#define CCLAB_GSO_CUSHION_MAX USEC_PER_MSEC

/* The tunables as one hook sees them. */
struct cubic_knobs {
	__u32 alpha;                /* 1/512 */
	__u32 beta;                 /* 1/1024 */
	__u32 n;                    /* 1/1024 */
	__u32 fast_convergence;
	__u32 tcp_friendliness;
	__u32 hystart;
	__u32 hystart_detect;
	__u32 hystart_low_window;
	__u32 hystart_ack_delta_us;
	__u32 initial_ssthresh;
	__u32 bic_scale;
};

/* Per-flow state, Linux's struct bictcp field for field (in inet_csk_ca(sk)). */
struct cclab_cubic {
	__u32 cnt;              /* increase cwnd by 1 after this many ACKed packets */
	__u32 last_max_cwnd;    /* W_max: cwnd before the last reduction, packets */
	__u32 last_cwnd;        /* cwnd at the last update, packets */
	__u32 last_time;        /* jiffies of the last update */
	__u32 bic_origin_point; /* origin of the cubic, packets */
	__u32 bic_K;            /* time from epoch start to the origin, 1/1024 s */
	__u32 delay_min;        /* minimum RTT seen, us */
	__u32 epoch_start;      /* jiffies when this epoch began, 0 = none */
	__u32 ack_cnt;          /* packets ACKed in this epoch (Reno estimate) */
	__u32 tcp_cwnd;         /* the Reno-friendly estimate of cwnd, packets */
	__u16 epoch_bic_scale;  /* bic_scale when this epoch began (not in Linux) */
	__u8 sample_cnt;        /* HyStart delay samples in this round */
	__u8 found;             /* HyStart exit point found */
	__u32 round_start;      /* us, start of the HyStart round */
	__u32 end_seq;          /* snd_nxt when the round began */
	__u32 last_ack;         /* us, last ACK of the current train */
	__u32 curr_rtt;         /* minimum RTT in this round, us */
};

static __always_inline __u32 cubic_beta_scale(__u32 beta)
{
	/* Linux: 8*(BICTCP_BETA_SCALE+beta)/3/(BICTCP_BETA_SCALE-beta). */
	if (beta >= BICTCP_BETA_SCALE)
		return 0;
	return 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta);
}

static __always_inline __u64 cubic_cube_factor(__u32 bic_scale)
{
	/* Linux: 2^40 / (bic_scale * 10): 1/c * 2^(3*BICTCP_HZ) for an RTT of 100 ms. */
	if (bic_scale == 0)
		return 0;
	return (1ULL << (10 + 3 * BICTCP_HZ)) / ((__u64)bic_scale * 10);
}

static __always_inline void cubic_reset(struct cclab_cubic *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->bic_origin_point = 0;
	ca->bic_K = 0;
	ca->delay_min = 0;
	ca->epoch_start = 0;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
	ca->found = 0;
}

static __always_inline __u32 cubic_clock_us(const struct sock *sk)
{
	return (__u32)tcp_sk(sk)->tcp_mstamp;
}

static __always_inline void cubic_hystart_reset(struct sock *sk, struct cclab_cubic *ca)
{
	ca->round_start = ca->last_ack = cubic_clock_us(sk);
	ca->end_seq = tcp_sk(sk)->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

/* Index of the most significant set bit, 1-based; 0 for 0 (Linux fls64). The BPF target
 * has no count-leading-zeros instruction, so this is a fixed 6-step binary search. */
static __always_inline __u32 cubic_fls64(__u64 x)
{
	__u32 n = 0;

	if (x == 0)
		return 0;
	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8) { n += 8; x >>= 8; }
	if (x >> 4) { n += 4; x >>= 4; }
	if (x >> 2) { n += 2; x >>= 2; }
	if (x >> 1) { n += 1; x >>= 1; }
	return n + 1;
}

/* cbrt of the most significant 6 bits, Linux's table: v[x] = cbrt(x << 18) - 1. */
static const __u8 cubic_cbrt_table[64] = {
	0,   54,  54,  54,  118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
	157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
	200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
	231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
};

/* Cube root: table lookup on the top bits, then one Newton-Raphson step (Linux
 * cubic_root, average error about 0.2%). */
static __u32 cubic_root(__u64 a)
{
	__u32 x, b, shift;

	b = cubic_fls64(a);
	if (b < 7)
		return ((__u32)cubic_cbrt_table[(__u32)a & 63] + 35) >> 6;

	b = ((b * 84) >> 8) - 1;
	shift = (__u32)(a >> (b * 3));
	/* Verifier only: shift is below 64 by construction (a >> 3b keeps at most 6
	 * bits), but the verifier cannot prove the table index in range. */
	if (shift >= 64)
		return 0;

	x = ((__u32)(((__u32)cubic_cbrt_table[shift] + 10) << b)) >> 6;
	x = (2 * x + (__u32)(a / ((__u64)x * (__u64)(x - 1))));
	x = ((x * 341) >> 10);
	return x;
}

/* Linux bictcp_update: how many ACKed packets buy one more packet of cwnd (ca->cnt). */
static void cubic_update(struct cclab_cubic *ca, const struct cubic_knobs *k,
			 __u32 cwnd, __u32 acked)
{
	__u32 delta, bic_target, max_cnt, now = cclab_jiffies32();
	__u64 offs, t;

	ca->ack_cnt += acked;

	if (ca->last_cwnd == cwnd && (__s32)(now - ca->last_time) <= (__s32)(CCLAB_HZ / 32))
		return;

	/* Not in Linux, whose C is fixed: a C retuned below the epoch's plateau ends the
	 * epoch, so that the next starts from this cwnd with K computed with the new C; at
	 * or past the plateau the new C applies as it is (crates/cc's CubicCore::update
	 * says why). Never at a fixed C. */
	if (ca->epoch_start && ca->epoch_bic_scale != (__u16)k->bic_scale) {
		if (cwnd < ca->bic_origin_point)
			ca->epoch_start = 0;
		else
			ca->epoch_bic_scale = (__u16)k->bic_scale;
	}

	/* The cubic is evaluated at most once per jiffy; a reduction zeroes epoch_start,
	 * which forces a new evaluation. */
	if (ca->epoch_start && now == ca->last_time)
		goto tcp_friendliness;

	ca->last_cwnd = cwnd;
	ca->last_time = now;

	if (ca->epoch_start == 0) {
		ca->epoch_start = now;
		ca->epoch_bic_scale = (__u16)k->bic_scale;
		ca->ack_cnt = acked;
		ca->tcp_cwnd = cwnd;

		if (ca->last_max_cwnd <= cwnd) {
			ca->bic_K = 0;
			ca->bic_origin_point = cwnd;
		} else {
			/* K = cbrt((W_max - cwnd) / C) in 1/1024 s (of N-scaled time). */
			ca->bic_K = cubic_root(cubic_cube_factor(k->bic_scale) *
					       (ca->last_max_cwnd - cwnd));
			ca->bic_origin_point = ca->last_max_cwnd;
		}
	}

	/* Time since the epoch began plus one minimum RTT (the target is where cwnd
	 * should be one RTT from now), in 1/1024 s. */
	t = (__s32)(now - ca->epoch_start);
	t += cclab_usecs_to_jiffies(ca->delay_min);
	t <<= BICTCP_HZ;
	t /= CCLAB_HZ;
	/* CUBIC-FIT: N virtual flows run the cubic N times as fast (identity at N = 1). */
	if (k->n != CCLAB_N_SCALE)
		t = (t * k->n) / CCLAB_N_SCALE;

	if (t < ca->bic_K)
		offs = ca->bic_K - t;
	else
		offs = t - ca->bic_K;

	/* C * (t - K)^3 in packets; C = bic_scale * 10 / 2^10 per s^3. */
	delta = (__u32)(((__u64)k->bic_scale * 10 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ));
	if (t < ca->bic_K)
		bic_target = ca->bic_origin_point - delta;
	else
		bic_target = ca->bic_origin_point + delta;

	if (bic_target > cwnd)
		ca->cnt = cwnd / (bic_target - cwnd);
	else
		ca->cnt = 100 * cwnd; /* very small increment */

	/* While the path is unexplored (no loss yet) grow at least 5% per RTT. */
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20;

tcp_friendliness:
	if (k->tcp_friendliness) {
		__u32 n;

		/* ACKed packets that grow the Reno estimate by one packet; N Reno flows
		 * grow N times as fast. */
		if (k->beta >= BICTCP_BETA_SCALE)
			delta = 0xffffffffU; /* beta = 1: no decrease, Reno estimate frozen */
		else
			delta = (cwnd * cubic_beta_scale(k->beta)) >> 3;
		if (k->n != CCLAB_N_SCALE && k->n)
			delta = (__u32)(((__u64)delta * CCLAB_N_SCALE) / k->n);
		if (!delta)
			delta = 1; /* Linux would loop forever */
		if (ca->ack_cnt > delta) {
			n = (ca->ack_cnt - 1) / delta;
			ca->ack_cnt -= n * delta;
			ca->tcp_cwnd += n;
		}

		if (ca->tcp_cwnd > cwnd) { /* CUBIC is slower than Reno would be */
			delta = ca->tcp_cwnd - cwnd;
			max_cnt = cwnd / delta;
			if (ca->cnt > max_cnt)
				ca->cnt = max_cnt;
		}
	}

	/* At most one packet per two ACKed: 1.5x per RTT. */
	ca->cnt = cclab_max(ca->cnt, 2U);
}

static __always_inline void cubic_init(struct sock *sk, struct cclab_cubic *ca,
				       const struct cubic_knobs *k)
{
	cubic_reset(ca);
	if (k->hystart)
		cubic_hystart_reset(sk, ca);
	if (!k->hystart && k->initial_ssthresh)
		tcp_sk(sk)->snd_ssthresh = k->initial_ssthresh;
}

static __always_inline void cubic_cong_avoid(struct sock *sk, struct cclab_cubic *ca,
					     const struct cubic_knobs *k, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!cclab_is_cwnd_limited(sk))
		return;

	if (tp->snd_cwnd < tp->snd_ssthresh) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	cubic_update(ca, k, tp->snd_cwnd, acked);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

/* The W_max half of Linux's cubictcp_recalc_ssthresh (ends the epoch). */
static __always_inline void cubic_on_loss(struct cclab_cubic *ca, const struct cubic_knobs *k,
					  __u32 cwnd)
{
	ca->epoch_start = 0; /* end of epoch */

	/* W_max, and fast convergence: release bandwidth early when W_max shrinks. */
	if (cwnd < ca->last_max_cwnd && k->fast_convergence)
		ca->last_max_cwnd = (cwnd * (BICTCP_BETA_SCALE + k->beta)) / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;

	/* TCPTuner: W_max = W_max * alpha (identity at 512/512). */
	if (k->alpha != CCLAB_ALPHA_SCALE)
		ca->last_max_cwnd = (__u32)(((__u64)ca->last_max_cwnd * k->alpha) / CCLAB_ALPHA_SCALE);
}

/* Linux cubictcp_recalc_ssthresh. */
static __always_inline __u32 cubic_recalc_ssthresh(struct sock *sk, struct cclab_cubic *ca,
						   const struct cubic_knobs *k)
{
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;

	cubic_on_loss(ca, k, cwnd);
	return cclab_max((cwnd * k->beta) / BICTCP_BETA_SCALE, 2U);
}

static __always_inline void cubic_set_state(struct sock *sk, struct cclab_cubic *ca, __u8 new_state)
{
	if (new_state == TCP_CA_Loss) {
		cubic_reset(ca);
		cubic_hystart_reset(sk, ca);
	}
}

static __always_inline void cubic_cwnd_event(struct sock *sk, struct cclab_cubic *ca, int event)
{
	if (event == CA_EVENT_TX_START) {
		__u32 now = cclab_jiffies32();
		__s32 delta = now - tcp_sk(sk)->lsndtime;

		/* Idle (application limited) for a while: shift epoch_start so cwnd keeps to
		 * the cubic curve instead of jumping ahead. */
		if (ca->epoch_start && delta > 0) {
			ca->epoch_start += delta;
			if (cclab_after(ca->epoch_start, now))
				ca->epoch_start = now;
		}
	}
}

/* Linux hystart_ack_delay: allowance for TSO/GRO aggregation, at most 1 ms. */
static __always_inline __u32 cubic_hystart_ack_delay(const struct sock *sk)
{
	__u64 rate = sk->sk_pacing_rate;
	__u64 d;

	if (!rate)
		return 0;
	d = ((__u64)CCLAB_GSO_MAX_SIZE(sk) * 4 * USEC_PER_SEC) / rate;
	return (__u32)cclab_min((__u64)CCLAB_GSO_CUSHION_MAX, d);
}

static void cubic_hystart_update(struct sock *sk, struct cclab_cubic *ca,
				 const struct cubic_knobs *k, __u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 threshold;

	if (cclab_after(tp->snd_una, ca->end_seq))
		cubic_hystart_reset(sk, ca);

	if (tp->snd_cwnd < k->hystart_low_window)
		return;

	if (k->hystart_detect & HYSTART_ACK_TRAIN) {
		__u32 now = cubic_clock_us(sk);

		/* ACK train: ACKs arriving closely spaced for longer than half min RTT. */
		if ((__s32)(now - ca->last_ack) <= (__s32)k->hystart_ack_delta_us) {
			ca->last_ack = now;
			threshold = ca->delay_min + cubic_hystart_ack_delay(sk);
			/* Without pacing the train may last only RTT/2. */
			if (CCLAB_PACING_NONE(sk))
				threshold >>= 1;
			/* Linux compares (s32)(now - round_start) with a u32: unsigned. */
			if ((__u32)(now - ca->round_start) > threshold) {
				ca->found = 1;
				tp->snd_ssthresh = tp->snd_cwnd;
			}
		}
	}

	if (k->hystart_detect & HYSTART_DELAY) {
		/* Delay increase: min RTT of this round well above the flow's minimum. */
		if (ca->curr_rtt > delay)
			ca->curr_rtt = delay;
		if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
			ca->sample_cnt++;
		} else {
			__u32 thresh = ca->delay_min >> 3;

			thresh = cclab_max(thresh, HYSTART_DELAY_MIN);
			thresh = cclab_min(thresh, HYSTART_DELAY_MAX);
			if (ca->curr_rtt > ca->delay_min + thresh) {
				ca->found = 1;
				tp->snd_ssthresh = tp->snd_cwnd;
			}
		}
	}
}

/* Linux cubictcp_acked: track the minimum RTT and run HyStart in slow start. Returns the
 * RTT sample in us, or 0 when the sample was not used (for CUBIC-FIT's statistics). */
static __always_inline void cubic_acked(struct sock *sk, struct cclab_cubic *ca,
					const struct cubic_knobs *k, __s32 rtt_us)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 delay;

	if (rtt_us < 0) /* duplicates without a timestamp */
		return;

	/* Discard delay samples right after fast recovery. */
	if (ca->epoch_start && (__s32)(cclab_jiffies32() - ca->epoch_start) < (__s32)CCLAB_HZ)
		return;

	delay = (__u32)rtt_us;
	if (delay == 0)
		delay = 1;

	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;

	if (!ca->found && tp->snd_cwnd < tp->snd_ssthresh && k->hystart)
		cubic_hystart_update(sk, ca, k, delay);
}

#endif
