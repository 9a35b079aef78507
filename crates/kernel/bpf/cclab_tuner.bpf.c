// SPDX-License-Identifier: GPL-2.0-only
/*
 * cclab_tuner: Linux CUBIC with TCPTuner's alpha, every parameter tunable while flows run.
 *
 * Algorithm: cclab_cubic.h (Linux tcp_cubic.c, v6.13+, plus TCPTuner's W_max *= alpha).
 * Reference in Rust: crates/cc/src/tuner.rs (over crates/cc/src/cubic.rs).
 * Paper: K. Miller, L. Hsiao, "TCPTuner: Congestion Control Your Way" (seed 004).
 *
 * How this differs from the Rust reference and from Linux:
 *  - Parameters live in the one-entry array map `tuner_params` (struct
 *    cclab_tuner_params, in the fixed-point units Linux and TCPTuner use: beta/1024,
 *    alpha/512) which `cclab kernel set` rewrites; the loader fills it with the defaults
 *    from crates/cc before attaching. Derived constants are recomputed from it on use.
 *  - Time comes from the kernel: jiffies (CONFIG_HZ, 250 here) for the cubic and
 *    tp->tcp_mstamp (us) for HyStart, as Linux; the Rust reference takes both from
 *    TcpState (now_us, hz).
 *  - Reno-friendly update by division instead of a loop (see cclab_cubic.h), with the
 *    loop's exact result.
 */
#include "cclab_cubic.h"
#include "cclab_params.h"

#ifndef CCLAB_HOST
char _license[] SEC("license") = "GPL";
#endif

#ifndef CCLAB_HOST
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cclab_tuner_params);
} tuner_params SEC(".maps");

static __always_inline const struct cclab_tuner_params *tuner_params_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&tuner_params, &zero);
}
#else
extern struct cclab_tuner_params cclab_host_tuner_params;
static const struct cclab_tuner_params *tuner_params_get(void)
{
	return &cclab_host_tuner_params;
}
#endif

/* Linux CUBIC's defaults; used only if the map could not be read, which cannot happen
 * for a one-entry array, but older verifiers require the NULL check (see knobs()). */
static const struct cclab_tuner_params tuner_defaults = {
	.alpha = 512, .fast_convergence = 1, .beta = 717, .initial_ssthresh = 0,
	.bic_scale = 41, .tcp_friendliness = 1, .hystart = 1,
	.hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY, .hystart_low_window = 16,
	.hystart_ack_delta_us = 2000,
};

#ifdef CCLAB_HOST
/* For the parameter test in crates/kernel/src/algo.rs: the defaults above and their size. */
const void *cclab_host_tuner_defaults(__u32 *size)
{
	*size = sizeof(tuner_defaults);
	return &tuner_defaults;
}
#endif

static __always_inline void knobs(struct cubic_knobs *k)
{
	const struct cclab_tuner_params *p = tuner_params_get();

	/* Verifier only: older verifiers treat any map lookup as possibly NULL (6.18
	 * knows a constant in-range array key cannot miss and accepts it without). */
	if (!p)
		p = &tuner_defaults;
	k->alpha = p->alpha;
	k->beta = p->beta;
	k->n = CCLAB_N_SCALE;
	k->fast_convergence = p->fast_convergence;
	k->tcp_friendliness = p->tcp_friendliness;
	k->hystart = p->hystart;
	k->hystart_detect = p->hystart_detect;
	k->hystart_low_window = p->hystart_low_window;
	k->hystart_ack_delta_us = p->hystart_ack_delta_us;
	k->initial_ssthresh = p->initial_ssthresh;
	k->bic_scale = p->bic_scale;
}

SEC("struct_ops")
void BPF_PROG(cclab_tuner_init, struct sock *sk)
{
	struct cubic_knobs k;

	knobs(&k);
	cubic_init(sk, inet_csk_ca(sk), &k);
}

SEC("struct_ops")
void BPF_PROG(cclab_tuner_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct cubic_knobs k;

	knobs(&k);
	cubic_cong_avoid(sk, inet_csk_ca(sk), &k, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(cclab_tuner_ssthresh, struct sock *sk)
{
	struct cubic_knobs k;

	knobs(&k);
	return cubic_recalc_ssthresh(sk, inet_csk_ca(sk), &k);
}

SEC("struct_ops")
void BPF_PROG(cclab_tuner_set_state, struct sock *sk, __u8 new_state)
{
	cubic_set_state(sk, inet_csk_ca(sk), new_state);
}

SEC("struct_ops")
void BPF_PROG(cclab_tuner_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	cubic_cwnd_event(sk, inet_csk_ca(sk), event);
}

SEC("struct_ops")
void BPF_PROG(cclab_tuner_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct cubic_knobs k;

	knobs(&k);
	cubic_acked(sk, inet_csk_ca(sk), &k, sample->rtt_us);
}

SEC("struct_ops")
__u32 BPF_PROG(cclab_tuner_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

#ifndef CCLAB_HOST
/* ".struct_ops.link": registered through a BPF link (BPF_F_LINK), so the loader can pin
 * the link and registration outlives the loading process. */
SEC(".struct_ops.link")
struct tcp_congestion_ops cclab_tuner = {
	.init = (void *)cclab_tuner_init,
	.ssthresh = (void *)cclab_tuner_ssthresh,
	.cong_avoid = (void *)cclab_tuner_cong_avoid,
	.set_state = (void *)cclab_tuner_set_state,
	.undo_cwnd = (void *)cclab_tuner_undo_cwnd,
	.cwnd_event = (void *)cclab_tuner_cwnd_event,
	.pkts_acked = (void *)cclab_tuner_acked,
	.name = "cclab_tuner",
};
#endif
