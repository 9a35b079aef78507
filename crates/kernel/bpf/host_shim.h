/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host stand-ins for the kernel environment, so that the algorithm sources in this
 * directory compile as ordinary C for the differential test (crates/kernel/tests/
 * differential.rs drives them through FFI and compares them with crates/cc).
 *
 * struct sock here is one flat struct holding the tcp_sock / inet_connection_sock / sock
 * fields the algorithms use; the Rust side mirrors it (src/host.rs, #[repr(C)]).
 * Time: the harness sets cclab_host_now_us; jiffies are derived from it with
 * cclab_host_hz exactly as crates/cc TcpState::jiffies() does.
 */
#ifndef CCLAB_HOST_SHIM_H
#define CCLAB_HOST_SHIM_H

#include <stdint.h>

typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef int32_t __s32;
typedef int64_t __s64;

#define SEC(name)
#ifndef __always_inline
#define __always_inline inline
#endif
#define BPF_PROG(name, args...) name(args)

#define TCP_CA_Loss 4
#define SK_PACING_NONE 0

enum tcp_ca_event {
	CA_EVENT_TX_START = 0,
	CA_EVENT_CWND_RESTART = 1,
	CA_EVENT_COMPLETE_CWR = 2,
	CA_EVENT_LOSS = 3,
	CA_EVENT_ECN_NO_CE = 4,
	CA_EVENT_ECN_IS_CE = 5,
};

struct sock {
	__u64 tcp_mstamp;       /* us */
	__u64 sk_pacing_rate;   /* bytes/s, 0 = none */
	__u32 snd_cwnd;
	__u32 snd_ssthresh;
	__u32 snd_cwnd_cnt;
	__u32 snd_cwnd_clamp;
	__u32 prior_cwnd;
	__u32 snd_una;
	__u32 snd_nxt;
	__u32 max_packets_out;
	__u32 lsndtime;         /* jiffies */
	__u32 sk_pacing_status;
	__u32 sk_gso_max_size;
	__u32 is_cwnd_limited;  /* 0 or 1 (a bitfield in the kernel) */
	__u64 icsk_ca_priv[13];
};
#define tcp_sock sock

struct ack_sample {
	__u32 pkts_acked;
	__s32 rtt_us;
	__u32 in_flight;
};

extern __u64 cclab_host_now_us;
extern __u32 cclab_host_hz;
#define CCLAB_HZ cclab_host_hz

static inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)((struct sock *)sk)->icsk_ca_priv;
}

static inline __u32 cclab_jiffies32(void)
{
	return (__u32)((unsigned __int128)cclab_host_now_us * cclab_host_hz / 1000000);
}

static inline int cclab_is_cwnd_limited(const struct sock *sk)
{
	if (sk->is_cwnd_limited)
		return 1;
	if (sk->snd_cwnd < sk->snd_ssthresh)
		return sk->snd_cwnd < 2 * sk->max_packets_out;
	return 0;
}

#define CCLAB_PACING_NONE(sk) ((sk)->sk_pacing_status == SK_PACING_NONE)
#define CCLAB_GSO_MAX_SIZE(sk) ((sk)->sk_gso_max_size)

/* Linux's tcp_cong.c helpers (kfuncs in the kernel), in host_shim.c. */
__u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked);
void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked);
__u32 tcp_reno_undo_cwnd(struct sock *sk);

#endif
