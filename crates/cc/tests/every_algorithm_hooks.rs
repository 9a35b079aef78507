//! Every registered algorithm under long pseudo-random sequences of ACKs, losses, timeouts,
//! undos, idle restarts and live parameter changes, driven the way Linux's `tcp_input.c`
//! calls the hooks. Checks that nothing panics (debug builds trap arithmetic overflow)
//! and that the window stays sane: cwnd >= 1, ssthresh from the hook >= 2, cwnd within
//! its clamp, inspected values finite. Deterministic: a fixed-seed generator.

use cclab_cc::{
    AckFlags, AckSample, Algorithm, CaEvent, CaState, CongestionControl, ParamKind, TcpState,
    ALGORITHMS,
};

/// SplitMix64: small, seeded, reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn ack(alg: &mut Algorithm, tp: &mut TcpState, rng: &mut Rng) {
    tp.now_us += 100 + rng.below(5_000);
    let pkts = 1 + rng.below(3) as u32;
    tp.delivered = tp.delivered.wrapping_add(pkts);
    tp.packets_in_flight = rng.below(tp.snd_cwnd as u64 + 1) as u32;
    tp.is_cwnd_limited = rng.below(10) != 0;
    tp.max_packets_out = tp.max_packets_out.max(tp.packets_in_flight);
    let rtt_us = if rng.below(20) == 0 { None } else { Some(5_000 + rng.below(400_000) as u32) };
    if let Some(r) = rtt_us {
        tp.min_rtt_us = tp.min_rtt_us.min(r);
        tp.srtt_us = if tp.srtt_us == 0 { r << 3 } else { tp.srtt_us - (tp.srtt_us >> 3) + r };
    }
    alg.pkts_acked(tp, &AckSample { pkts_acked: pkts, rtt_us, in_flight: tp.packets_in_flight });
    let slow = rng.below(4) == 0;
    alg.in_ack_event(
        tp,
        AckFlags {
            slow_path: slow,
            acked_bytes: if slow && rng.below(2) == 0 { 0 } else { pkts * tp.mss_cache },
            ..AckFlags::default()
        },
    );
    if matches!(tp.ca_state, CaState::Open | CaState::Disorder)
        && !alg.cong_control(tp, &Default::default())
    {
        alg.cong_avoid(tp, pkts);
    }
}

fn check(name: &str, step: usize, alg: &Algorithm, tp: &TcpState) {
    assert!(tp.snd_cwnd >= 1, "{name} step {step}: cwnd {}", tp.snd_cwnd);
    assert!(
        tp.snd_cwnd <= tp.snd_cwnd_clamp,
        "{name} step {step}: cwnd {} above clamp {}",
        tp.snd_cwnd,
        tp.snd_cwnd_clamp
    );
    alg.inspect(&mut |k, v| assert!(v.is_finite(), "{name} step {step}: {k} = {v}"));
}

#[test]
fn random_event_sequences_keep_every_algorithm_sane() {
    for info in ALGORITHMS {
        for seed in 0..4u64 {
            let mut rng = Rng(seed * 7919 + info.name.len() as u64);
            let mut alg = Algorithm::new(info.name).unwrap();
            let mut tp = TcpState::new(1448, 10);
            tp.now_us = 1_000_000;
            alg.init(&mut tp);
            tp.snd_cwnd = tp.snd_cwnd.max(1);
            // Even seeds: an event every ~30 ACKs (small windows, many recoveries); odd
            // seeds: every ~3000 ACKs, so windows reach thousands of packets.
            let span = if seed % 2 == 0 { 1000 } else { 100_000 };
            for step in 0..20_000 {
                let r = rng.below(span);
                let event = if r < span - 30 { 0 } else { r - (span - 30) + 1 };
                match event {
                    0 => ack(&mut alg, &mut tp, &mut rng),
                    1..=15 => {
                        // Fast recovery: ssthresh, a few ACKs without growth, then cwnd = ssthresh.
                        tp.prior_cwnd = tp.snd_cwnd;
                        let ss = alg.ssthresh(&tp);
                        assert!(ss >= 2, "{} step {step}: ssthresh {ss}", info.name);
                        tp.snd_ssthresh = ss;
                        alg.set_state(&mut tp, CaState::Recovery);
                        tp.ca_state = CaState::Recovery;
                        for _ in 0..rng.below(5) {
                            ack(&mut alg, &mut tp, &mut rng);
                        }
                        tp.snd_cwnd = tp.snd_ssthresh.min(tp.snd_cwnd_clamp);
                        alg.set_state(&mut tp, CaState::Open);
                        tp.ca_state = CaState::Open;
                        alg.cwnd_event(&mut tp, CaEvent::CompleteCwr);
                    }
                    16..=20 => {
                        // RTO.
                        tp.prior_cwnd = tp.snd_cwnd;
                        let ss = alg.ssthresh(&tp);
                        assert!(ss >= 2, "{} step {step}: ssthresh {ss}", info.name);
                        tp.snd_ssthresh = ss;
                        alg.set_state(&mut tp, CaState::Loss);
                        tp.ca_state = CaState::Loss;
                        alg.cwnd_event(&mut tp, CaEvent::Loss);
                        tp.snd_cwnd = 1;
                        for _ in 0..rng.below(5) {
                            ack(&mut alg, &mut tp, &mut rng);
                        }
                        alg.set_state(&mut tp, CaState::Open);
                        tp.ca_state = CaState::Open;
                    }
                    21..=24 => {
                        let c = alg.undo_cwnd(&mut tp);
                        tp.snd_cwnd = c.clamp(1, tp.snd_cwnd_clamp);
                    }
                    25..=26 => {
                        tp.now_us += rng.below(5_000_000);
                        alg.cwnd_event(&mut tp, CaEvent::TxStart);
                    }
                    _ => {
                        // A live parameter change to a valid value.
                        if !info.params.is_empty() {
                            let p = &info.params[rng.below(info.params.len() as u64) as usize];
                            let hi = p.max.min(p.default * 4.0 + 10.0);
                            let mut v = p.min + (hi - p.min) * (rng.below(1001) as f64 / 1000.0);
                            if p.kind != ParamKind::Float {
                                v = v.round();
                            }
                            if p.check(info.name, v).is_ok() {
                                alg.set_param(p.name, v).unwrap();
                            }
                        }
                    }
                }
                check(info.name, step, &alg, &tp);
            }
        }
    }
}
