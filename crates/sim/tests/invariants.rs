//! Invariants under random operation sequences (STYLE.md habit 7, after s2n-quic's
//! recovery model): for every algorithm in `cclab_cc::ALGORITHMS` (so algorithms added
//! later are covered without touching this file) and every loss-recovery style (SACK with
//! RACK on odd seeds, with RFC 6675 DupThresh on even ones), a seeded
//! random mix of sends, in-order and reordered deliveries, data and ACK losses, time
//! passing, RTOs, delayed-ACK timers and live parameter changes drives the real sender
//! and receiver. After every step: the scoreboard's counters match a recount, in-flight
//! accounting is consistent, cwnd >= 1, ssthresh >= 2, no arithmetic overflow (tests run
//! in debug mode, where overflow panics), and cwnd >= 2 on leaving fast recovery
//! (non-Tahoe). At the end the network turns lossless and every flow must finish.

use cclab_cc::{
    Algorithm, CaState, CongestionControl, LossRecovery, ParamKind, TcpState, ALGORITHMS,
};
use cclab_sim::rng::Rng;
use cclab_sim::tcp::{Ack, Segment, TcpReceiver, TcpSender};
use cclab_sim::{DelayedAck, TcpConfig};
use cclab_units::{Duration, Time};

/// Vegas lowers ssthresh inside `cong_avoid` to the window it measured, which after an
/// RTO can be 1 segment; Linux's tcp_vegas.c does the same (`min(ssthresh, cwnd - 1)`
/// with cwnd 2). Every other algorithm must keep ssthresh >= 2.
fn min_ssthresh(cc: &str) -> u32 {
    if cc == "vegas" {
        1
    } else {
        2
    }
}

fn random_param(rng: &mut Rng, alg: &mut Algorithm) {
    let specs = alg.params();
    if specs.is_empty() {
        return;
    }
    let p = &specs[rng.below(specs.len() as u64) as usize];
    let mut v = p.min + rng.uniform() * (p.max - p.min);
    if p.min_exclusive && v <= p.min {
        v = p.max;
    }
    if matches!(p.kind, ParamKind::Int | ParamKind::Bool) {
        v = v.round().clamp(p.min, p.max);
        if p.min_exclusive && v <= p.min {
            v = p.max;
        }
    }
    alg.set_param(p.name, v).unwrap_or_else(|e| panic!("valid value refused: {e}"));
}

fn run_model(cc: &str, recovery: Option<LossRecovery>, seed: u64, steps: usize) {
    let ctx = format!("{cc} {recovery:?} seed {seed}");
    let mut rng = Rng::from_seed(seed);
    let delack = DelayedAck { enabled: rng.chance(0.5), ..Default::default() };
    let cfg = TcpConfig {
        init_cwnd: 1 + rng.below(20) as u32,
        recovery,
        rack: seed % 2 == 1,
        delayed_ack: delack,
        // Always a receiver window, small or large: it bounds what is outstanding, so the
        // O(window) recount in check_invariants stays cheap whatever cwnd does.
        rwnd: Some(1448 * if rng.chance(0.3) { 2 + rng.below(50) } else { 500 + rng.below(1500) }),
        ..Default::default()
    };
    let mut s = TcpSender::new(0, Algorithm::new(cc).unwrap(), cfg, None);
    let mut r = TcpReceiver::new(0, 1448, None, delack, s.recovery_style());
    let tahoe = s.recovery_style() == LossRecovery::Tahoe;
    let mut now = Time::ZERO;
    s.start(now);
    let mut fwd: std::collections::VecDeque<Segment> = Default::default();
    let mut rev: std::collections::VecDeque<Ack> = Default::default();
    let loss = [0.0, 0.02, 0.1, 0.3][rng.below(4) as usize];

    let check = |s: &TcpSender, prev_state: CaState, prev_undos: u64, step: usize| {
        s.check_invariants().unwrap_or_else(|e| panic!("{ctx} step {step}: {e}"));
        assert!(s.tp().snd_cwnd >= 1, "{ctx} step {step}: cwnd 0");
        assert!(
            s.tp().snd_ssthresh >= min_ssthresh(cc),
            "{ctx} step {step}: ssthresh {}",
            s.tp().snd_ssthresh
        );
        assert!(
            s.tp().snd_cwnd < 10_000_000,
            "{ctx} step {step}: cwnd {} runaway",
            s.tp().snd_cwnd
        );
        assert!(s.in_flight() <= s.packets_out(), "{ctx} step {step}: in_flight > packets_out");
        // A loss response leaves cwnd >= 2; an undo restores the window from before it,
        // which may legitimately have been 1 (right after an RTO).
        if prev_state == CaState::Recovery
            && s.tp().ca_state == CaState::Open
            && !tahoe
            && s.stats().undos == prev_undos
        {
            assert!(s.tp().snd_cwnd >= 2, "{ctx} step {step}: cwnd {} after fast recovery (ssthresh {}, prior_cwnd {}, in_flight {})", s.tp().snd_cwnd, s.tp().snd_ssthresh, s.tp().prior_cwnd, s.in_flight());
        }
    };

    for step in 0..steps {
        let prev_state = s.tp().ca_state;
        let prev_undos = s.stats().undos;
        match rng.below(100) {
            // Deliver a data segment: usually the oldest, sometimes a later one (reordering).
            0..=39 if !fwd.is_empty() => {
                let i = if rng.chance(0.8) { 0 } else { rng.below(fwd.len() as u64) as usize };
                let seg = fwd.remove(i).unwrap();
                if !rng.chance(loss) {
                    if let Some(a) = r.on_data(now, &seg) {
                        rev.push_back(a);
                    }
                }
            }
            // An ACK arrives (the return path keeps order; some ACKs are lost).
            40..=74 if !rev.is_empty() => {
                let a = rev.pop_front().unwrap();
                if !rng.chance(loss / 2.0) {
                    now += Duration::from_micros(rng.below(5000));
                    s.on_ack(now, &a);
                }
            }
            // Time passes; timers fire.
            75..=89 => {
                now += Duration::from_millis(1 + rng.below(400));
                if r.delack_deadline().is_some_and(|d| d <= now) {
                    if let Some(a) = r.on_delack_timer(now) {
                        rev.push_back(a);
                    }
                }
                if s.rto_deadline().is_some_and(|d| d <= now) {
                    s.on_rto(now);
                }
            }
            // A parameter changes on the running flow.
            90..=92 => random_param(&mut rng, s.ca_mut()),
            93 => s.set_rto_min(Duration::from_millis(1 + rng.below(1000))),
            94 => s.set_init_cwnd(1 + rng.below(100) as u32),
            _ => {}
        }
        // The loss-response rule is checked before sending: sending after an idle period
        // may legitimately restart cwnd at min(cwnd, initcwnd), which can be 1.
        check(&s, prev_state, prev_undos, step);
        s.transmit(now, &mut |seg| fwd.push_back(seg));
        check(&s, s.tp().ca_state, s.stats().undos, step);
    }

    // Lossless drain: the application stops, and everything sent must be acknowledged.
    s.close();
    let target = s.snd_nxt();
    for step in 0..200_000 {
        if s.snd_una() >= target {
            return;
        }
        let prev_state = s.tp().ca_state;
        let prev_undos = s.stats().undos;
        if !fwd.is_empty() {
            let seg = fwd.pop_front().unwrap();
            if let Some(a) = r.on_data(now, &seg) {
                rev.push_back(a);
            }
        } else if !rev.is_empty() {
            let a = rev.pop_front().unwrap();
            now += Duration::from_micros(100);
            s.on_ack(now, &a);
        } else {
            now += Duration::from_millis(50);
            if let Some(a) = r.on_delack_timer(now) {
                rev.push_back(a);
            }
            if s.rto_deadline().is_some_and(|d| d <= now) {
                s.on_rto(now);
            }
        }
        check(&s, prev_state, prev_undos, steps + step);
        s.transmit(now, &mut |seg| fwd.push_back(seg));
        check(&s, s.tp().ca_state, s.stats().undos, steps + step);
    }
    panic!(
        "{ctx}: flow did not recover: snd_una {} target {target}, state {:?}, cwnd {}, in_flight {}, sacked {}, lost {}, retrans {}, rto at {:?}, now {now:?}, rcv_nxt {}",
        s.snd_una(),
        s.tp().ca_state,
        s.tp().snd_cwnd,
        s.in_flight(),
        s.sacked_out(),
        s.lost_out(),
        s.retrans_out(),
        s.rto_deadline(),
        r.rcv_nxt()
    );
}

#[test]
fn random_operations_keep_every_algorithm_and_recovery_style_consistent() {
    let styles =
        [None, Some(LossRecovery::Sack), Some(LossRecovery::NewReno), Some(LossRecovery::Tahoe)];
    let seeds = if cfg!(debug_assertions) { 8 } else { 80 };
    for info in ALGORITHMS {
        for style in styles {
            for seed in 0..seeds {
                if std::env::var("CCLAB_TRACE").is_ok() {
                    eprintln!("{} {style:?} {seed}", info.name);
                }
                run_model(info.name, style, seed * 7919 + 1, 1500);
            }
        }
    }
}

/// The hooks alone, on random (but valid) TcpStates, in random order: no panic or
/// overflow, ssthresh >= 2, cwnd stays >= 1, undo never returns 0.
#[test]
fn hooks_on_random_states_never_break_the_basic_bounds() {
    use cclab_cc::{AckFlags, AckSample, CaEvent, RateSample};
    let mut rng = Rng::from_seed(42);
    for info in ALGORITHMS {
        for round in 0..200 {
            let mut alg = Algorithm::new(info.name).unwrap();
            random_param(&mut rng, &mut alg);
            let mut tp = TcpState::new(1448, 1 + rng.below(100) as u32);
            alg.init(&mut tp);
            for _ in 0..300 {
                tp.now_us += rng.below(200_000);
                tp.packets_in_flight = rng.below(tp.snd_cwnd as u64 + 5) as u32;
                if rng.chance(0.5) {
                    let rtt = 1_000 + rng.below(1_000_000) as u32;
                    tp.srtt_us = if tp.srtt_us == 0 {
                        rtt << 3
                    } else {
                        tp.srtt_us - (tp.srtt_us >> 3) + rtt
                    };
                    tp.min_rtt_us = tp.min_rtt_us.min(rtt);
                }
                match rng.below(8) {
                    0..=2 => {
                        let acked = 1 + rng.below(64) as u32;
                        tp.delivered = tp.delivered.wrapping_add(acked);
                        let sample = AckSample {
                            pkts_acked: acked,
                            rtt_us: Some(tp.min_rtt_us.clamp(1, 2_000_000)),
                            in_flight: tp.packets_in_flight,
                        };
                        alg.pkts_acked(&mut tp, &sample);
                        alg.in_ack_event(
                            &mut tp,
                            AckFlags { acked_bytes: acked * 1448, ..Default::default() },
                        );
                        let rs = RateSample {
                            delivered: acked,
                            interval_us: 1 + rng.below(1_000_000),
                            rtt_us: sample.rtt_us,
                            acked_sacked: acked,
                            ..Default::default()
                        };
                        if !alg.cong_control(&mut tp, &rs) {
                            alg.cong_avoid(&mut tp, acked);
                        }
                    }
                    3 => {
                        let ss = alg.ssthresh(&tp);
                        assert!(
                            ss >= 2,
                            "{} round {round}: ssthresh {ss} from cwnd {}",
                            info.name,
                            tp.snd_cwnd
                        );
                        tp.prior_cwnd = tp.snd_cwnd;
                        tp.snd_ssthresh = ss;
                        alg.set_state(&mut tp, CaState::Recovery);
                        tp.ca_state = CaState::Recovery;
                        tp.snd_cwnd = ss;
                    }
                    4 => {
                        alg.set_state(&mut tp, CaState::Open);
                        tp.ca_state = CaState::Open;
                    }
                    5 => {
                        tp.snd_ssthresh = alg.ssthresh(&tp);
                        alg.cwnd_event(&mut tp, CaEvent::Loss);
                        alg.set_state(&mut tp, CaState::Loss);
                        tp.ca_state = CaState::Loss;
                        tp.snd_cwnd = 1;
                    }
                    6 => {
                        let c = alg.undo_cwnd(&mut tp);
                        assert!(c >= 1, "{}: undo_cwnd 0", info.name);
                        tp.snd_cwnd = c;
                    }
                    _ => alg.cwnd_event(&mut tp, CaEvent::TxStart),
                }
                assert!(tp.snd_cwnd >= 1, "{} round {round}: cwnd 0", info.name);
                assert!(
                    tp.snd_ssthresh >= 2,
                    "{} round {round}: ssthresh {}",
                    info.name,
                    tp.snd_ssthresh
                );
            }
        }
    }
}
