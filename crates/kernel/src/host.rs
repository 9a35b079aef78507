//! The BPF algorithms' C code compiled for the host (build.rs, `-DCCLAB_HOST` through
//! `bpf/host_shim.h`), wrapped as a [`CongestionControl`] so that the differential test can
//! replay one event sequence through it and through the Rust reference in crates/cc.
//!
//! The wrapper is the stand-in kernel: before each hook it copies the [`TcpState`] into the
//! shim's `struct sock` and sets the shim's clock and parameter block; after it, it copies
//! cwnd, ssthresh and the cwnd counter back. Where crates/cc models a kernel field it does
//! not have, the wrapper feeds the C code the same model, so only algorithm code is
//! compared:
//! - `snd_una` and `snd_nxt` are crates/cc's, in segments (Linux counts bytes; HyStart only
//!   compares them);
//! - `lsndtime` = the jiffies of the last ACK that emptied the pipe (crates/cc's stand-in);
//! - `sk_pacing_rate` = what `tcp_update_pacing_rate()` would set, computed as crates/cc's
//!   cubic does; no pacing qdisc; 64 KiB GSO.
//!
//! The shim's globals are process-wide, so every call holds one lock.

use crate::algo::Algo;
use cclab_cc::{AckSample, CaEvent, CaState, CongestionControl, ParamSpec, TcpState};
use std::sync::Mutex;

/// The shim's `struct sock` (bpf/host_shim.h), field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct HostSock {
    pub tcp_mstamp: u64,
    pub sk_pacing_rate: u64,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd_cnt: u32,
    pub snd_cwnd_clamp: u32,
    pub prior_cwnd: u32,
    pub snd_una: u32,
    pub snd_nxt: u32,
    pub max_packets_out: u32,
    pub lsndtime: u32,
    pub sk_pacing_status: u32,
    pub sk_gso_max_size: u32,
    pub is_cwnd_limited: u32,
    pub icsk_ca_priv: [u64; 13],
}

#[repr(C)]
struct AckSampleC {
    pkts_acked: u32,
    rtt_us: i32,
    in_flight: u32,
}

extern "C" {
    static mut cclab_host_now_us: u64;
    static mut cclab_host_hz: u32;
    static mut cclab_host_tuner_params: [u32; 10];
    static mut cclab_host_fit_params: [u32; 10];

    fn cclab_tuner_init(sk: *mut HostSock);
    fn cclab_tuner_cong_avoid(sk: *mut HostSock, ack: u32, acked: u32);
    fn cclab_tuner_ssthresh(sk: *mut HostSock) -> u32;
    fn cclab_tuner_set_state(sk: *mut HostSock, new_state: u8);
    fn cclab_tuner_cwnd_event(sk: *mut HostSock, event: i32);
    fn cclab_tuner_acked(sk: *mut HostSock, sample: *const AckSampleC);
    fn cclab_tuner_undo_cwnd(sk: *mut HostSock) -> u32;

    fn cclab_fit_init(sk: *mut HostSock);
    fn cclab_fit_cong_avoid(sk: *mut HostSock, ack: u32, acked: u32);
    fn cclab_fit_ssthresh(sk: *mut HostSock) -> u32;
    fn cclab_fit_set_state(sk: *mut HostSock, new_state: u8);
    fn cclab_fit_cwnd_event(sk: *mut HostSock, event: i32);
    fn cclab_fit_acked(sk: *mut HostSock, sample: *const AckSampleC);
    fn cclab_fit_undo_cwnd(sk: *mut HostSock) -> u32;
    fn cclab_host_fit_beta(n: u32) -> u32;
    fn cclab_host_tuner_defaults(size: *mut u32) -> *const u32;
    fn cclab_host_fit_defaults(size: *mut u32) -> *const u32;
}

/// The parameter words the C code falls back to (`tuner_defaults`, `fit_defaults`), as
/// many as its struct holds.
pub fn c_defaults(algo: Algo) -> Vec<u32> {
    let mut size = 0u32;
    // SAFETY: the functions return a pointer to a static const struct of `size` bytes,
    // all __u32 fields, and write only `size`.
    unsafe {
        let words = match algo {
            Algo::Tuner => cclab_host_tuner_defaults(&mut size),
            Algo::CubicFit => cclab_host_fit_defaults(&mut size),
        };
        std::slice::from_raw_parts(words, size as usize / 4).to_vec()
    }
}

/// CUBIC-FIT's beta (1/1024) for N (1/1024), as the C code computes it.
pub fn fit_beta(n: u32) -> u32 {
    // SAFETY: a pure function of its argument.
    unsafe { cclab_host_fit_beta(n) }
}

static LOCK: Mutex<()> = Mutex::new(());

/// One flow of a BPF algorithm running on the host.
#[derive(Clone, Debug)]
pub struct HostAlgo {
    pub algo: Algo,
    pub sk: HostSock,
    words: Vec<u32>,
    last_drain: Option<u32>,
}

impl HostAlgo {
    pub fn new(algo: Algo) -> HostAlgo {
        HostAlgo { algo, sk: HostSock::default(), words: algo.default_words(), last_drain: None }
    }

    /// CUBIC-FIT's N (1/1024 units) from the per-flow state (`struct cclab_fit`, after
    /// the 64-byte CUBIC core).
    pub fn fit_n(&self) -> u32 {
        self.sk.icsk_ca_priv[8] as u32
    }

    fn sync_in(&mut self, tp: &TcpState) {
        let s = &mut self.sk;
        s.tcp_mstamp = tp.now_us;
        s.snd_cwnd = tp.snd_cwnd;
        s.snd_ssthresh = tp.snd_ssthresh;
        s.snd_cwnd_cnt = tp.snd_cwnd_cnt;
        s.snd_cwnd_clamp = tp.snd_cwnd_clamp;
        s.prior_cwnd = tp.prior_cwnd;
        s.snd_una = tp.snd_una;
        s.snd_nxt = tp.snd_nxt;
        s.max_packets_out = tp.max_packets_out;
        s.is_cwnd_limited = tp.is_cwnd_limited as u32;
        s.lsndtime = self.last_drain.unwrap_or_else(|| tp.jiffies());
        s.sk_pacing_status = 0;
        s.sk_gso_max_size = 65536;
        s.sk_pacing_rate = pacing_rate(tp);
        // SAFETY: the globals are only touched under LOCK, held by the caller.
        unsafe {
            cclab_host_now_us = tp.now_us;
            cclab_host_hz = tp.hz;
            let dst = match self.algo {
                Algo::Tuner => &raw mut cclab_host_tuner_params,
                Algo::CubicFit => &raw mut cclab_host_fit_params,
            };
            (*dst).copy_from_slice(&self.words);
        }
    }

    fn sync_out(&self, tp: &mut TcpState) {
        tp.snd_cwnd = self.sk.snd_cwnd;
        tp.snd_ssthresh = self.sk.snd_ssthresh;
        tp.snd_cwnd_cnt = self.sk.snd_cwnd_cnt;
    }
}

/// `tcp_update_pacing_rate()` as crates/cc's cubic models it (bytes per second).
fn pacing_rate(tp: &TcpState) -> u64 {
    if tp.srtt_us == 0 {
        return 0;
    }
    let ratio: u64 = if tp.snd_cwnd < tp.snd_ssthresh / 2 { 200 } else { 120 };
    tp.mss_cache as u64
        * ((1_000_000 / 100) << 3)
        * ratio
        * tp.snd_cwnd.max(tp.packets_in_flight) as u64
        / tp.srtt_us as u64
}

fn state_code(s: CaState) -> u8 {
    match s {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

fn event_code(e: CaEvent) -> i32 {
    match e {
        CaEvent::TxStart => 0,
        CaEvent::CwndRestart => 1,
        CaEvent::CompleteCwr => 2,
        CaEvent::Loss => 3,
        CaEvent::EcnNoCe => 4,
        CaEvent::EcnIsCe => 5,
    }
}

macro_rules! call {
    ($self:ident, $tp:ident, $tuner:ident, $fit:ident $(, $arg:expr)*) => {{
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        $self.sync_in($tp);
        let sk: *mut HostSock = &mut $self.sk;
        // SAFETY: sk points to a live HostSock laid out as the shim's struct sock; the
        // C functions touch only it and the globals set above under the lock.
        unsafe {
            match $self.algo {
                Algo::Tuner => $tuner(sk $(, $arg)*),
                Algo::CubicFit => $fit(sk $(, $arg)*),
            }
        }
    }};
}

impl CongestionControl for HostAlgo {
    fn init(&mut self, tp: &mut TcpState) {
        call!(self, tp, cclab_tuner_init, cclab_fit_init);
        self.sync_out(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        call!(self, tp, cclab_tuner_ssthresh, cclab_fit_ssthresh)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        call!(self, tp, cclab_tuner_cong_avoid, cclab_fit_cong_avoid, 0, acked);
        self.sync_out(tp);
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        call!(self, tp, cclab_tuner_set_state, cclab_fit_set_state, state_code(new_state));
        self.sync_out(tp);
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        call!(self, tp, cclab_tuner_cwnd_event, cclab_fit_cwnd_event, event_code(event));
        self.sync_out(tp);
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if sample.in_flight <= sample.pkts_acked {
            self.last_drain = Some(tp.jiffies());
        }
        let c = AckSampleC {
            pkts_acked: sample.pkts_acked,
            rtt_us: sample.rtt_us.map(|r| r.min(i32::MAX as u32) as i32).unwrap_or(-1),
            in_flight: sample.in_flight,
        };
        call!(self, tp, cclab_tuner_acked, cclab_fit_acked, &c);
        self.sync_out(tp);
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        call!(self, tp, cclab_tuner_undo_cwnd, cclab_fit_undo_cwnd)
    }

    fn params(&self) -> &'static [ParamSpec] {
        self.algo.params()
    }

    fn param(&self, name: &str) -> Option<f64> {
        self.algo.values(&self.words).into_iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        self.algo.put(&mut self.words, name, value);
    }
}
