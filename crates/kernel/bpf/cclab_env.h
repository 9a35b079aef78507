/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The two environments the algorithm files compile in:
 *  - the kernel (default): clang -target bpf, CO-RE against vmlinux.h generated at build
 *    time from /sys/kernel/btf/vmlinux, kernel kfuncs;
 *  - the host (CCLAB_HOST defined): plain C for the differential test, through
 *    host_shim.h, which supplies stand-in kernel structs, the clock and the kfuncs.
 * The algorithm code itself only uses the names defined here and in host_shim.h.
 */
#ifndef CCLAB_ENV_H
#define CCLAB_ENV_H

#ifdef CCLAB_HOST
#include "host_shim.h"
#else
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define TCP_CA_Loss 4

/* Kernel functions a struct_ops congestion control may call (kfuncs in tcp_cong.c). */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* CONFIG_HZ of the running kernel, filled in by libbpf from /proc/config.gz. */
extern unsigned long CONFIG_HZ __kconfig;
#define CCLAB_HZ ((__u32)CONFIG_HZ)

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

/* Linux tcp_jiffies32. */
static __always_inline __u32 cclab_jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

/* Linux tcp_is_cwnd_limited (include/net/tcp.h). is_cwnd_limited is a bitfield:
 * BPF_CORE_READ_BITFIELD relocates its byte offset and shifts for this kernel. */
static __always_inline int cclab_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return 1;
	if (tp->snd_cwnd < tp->snd_ssthresh)
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return 0;
}

static __always_inline __u32 cclab_pacing_rate(const struct sock *sk)
{
	return (__u32)sk->sk_pacing_rate;
}
#define CCLAB_PACING_NONE(sk) ((sk)->sk_pacing_status == SK_PACING_NONE)
#define CCLAB_GSO_MAX_SIZE(sk) ((sk)->sk_gso_max_size)
#endif /* CCLAB_HOST */

#define cclab_min(a, b) ((a) < (b) ? (a) : (b))
#define cclab_max(a, b) ((a) > (b) ? (a) : (b))
#define cclab_before(seq1, seq2) ((__s32)((seq1) - (seq2)) < 0)
#define cclab_after(seq2, seq1) cclab_before(seq1, seq2)

#define USEC_PER_MSEC 1000U
#define USEC_PER_SEC 1000000U

/* Linux usecs_to_jiffies for HZ dividing 1000000 (100, 250, 300 rounds too, 1000):
 * rounds up, as the kernel does. */
static __always_inline __u32 cclab_usecs_to_jiffies(__u32 us)
{
	__u64 j = ((__u64)us * CCLAB_HZ + USEC_PER_SEC - 1) / USEC_PER_SEC;
	return (__u32)j;
}

#endif
