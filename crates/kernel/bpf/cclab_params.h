/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tunables shared by the BPF programs, the host build used by the differential test,
 * and the Rust loader. The loader writes these structs as arrays of words in the order
 * it derives from crates/cc's description of the tunables (crates/cc/src/cubic_config.rs,
 * TUNABLES: alpha, then tcp_cubic.c's module parameters in its order); the test
 * c_structs_and_defaults_match_crates_cc in crates/kernel/src/algo.rs checks the fields
 * below and the programs' defaults against it. Every field is a __u32 so the layout has
 * no padding.
 *
 * Each algorithm keeps its tunables in a one-entry BPF_MAP_TYPE_ARRAY that `cclab kernel
 * set` rewrites while flows run. Only *inputs* are stored: the programs recompute the
 * derived constants (beta_scale, cube_factor, cube_rtt_scale) from them where they are
 * used, so a change takes effect on the next ACK and nothing can go stale (Linux and
 * TCPTuner compute them once at module load and leave them stale). `set` writes the
 * whole struct in one map update; a hook running at that very moment may read some old
 * and some new fields for that one ACK.
 */
#ifndef CCLAB_PARAMS_H
#define CCLAB_PARAMS_H

/* Two methods of hybrid slow start (hystart_detect bits), as Linux. */
#define HYSTART_ACK_TRAIN 0x1
#define HYSTART_DELAY 0x2

/* cclab_tuner: Linux CUBIC's module parameters plus TCPTuner's alpha. */
struct cclab_tuner_params {
	__u32 alpha;                /* W_max scale after a loss, in 1/512 (512 = 1.0), (0, 1024] */
	__u32 fast_convergence;     /* 0 or 1 */
	__u32 beta;                 /* multiplicative decrease, in 1/1024 (717 = 0.7), (0, 1024] */
	__u32 initial_ssthresh;     /* packets, 0 = none */
	__u32 bic_scale;            /* C in 1/1024 (41 = 0.04 -> C = 0.4 per second^3 after *10) */
	__u32 tcp_friendliness;     /* 0 or 1 */
	__u32 hystart;              /* 0 or 1 */
	__u32 hystart_detect;       /* bit set of HYSTART_ACK_TRAIN, HYSTART_DELAY */
	__u32 hystart_low_window;   /* packets */
	__u32 hystart_ack_delta_us; /* microseconds */
};

/* cclab_cubic_fit: CUBIC-FIT (seed 000). beta and the time scale come from N; no alpha. */
struct cclab_fit_params {
	__u32 fast_convergence;     /* 0 or 1 */
	__u32 initial_ssthresh;
	__u32 bic_scale;
	__u32 tcp_friendliness;     /* 0 or 1 */
	__u32 hystart;              /* 0 or 1 */
	__u32 hystart_detect;
	__u32 hystart_low_window;
	__u32 hystart_ack_delta_us;
	__u32 update_interval_us;   /* period of the N update (Eq. 6), 500 ms in the paper */
	__u32 n_max;                /* upper bound on N, in 1/1024 */
};

/* What cclab_cubic_fit exports after each N update (the most recent socket to update). */
struct cclab_fit_stats {
	__u32 n;                    /* N in 1/1024 */
	__u32 alpha;                /* alpha in 1/65536 */
	__u32 rtt_min_us;
	__u32 rtt_max_us;
	__u32 rtt_avg_us;           /* mean RTT over the last period */
	__u32 samples;              /* RTT samples in the last period */
	__u32 updates;              /* N updates so far, all sockets */
	__u32 cwnd;                 /* cwnd when N was last updated */
};

#endif
