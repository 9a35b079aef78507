//! The CUBIC family in the simulator, checked against theory and against the seeds'
//! experiments (issue 3, "Behaviour in the simulator"). Each test prints the figures it
//! measured (`cargo test --release -p cclab-sim --test cubic_behaviour -- --nocapture`).
//!
//! Runs are sized to finish in a few seconds in release mode; in debug mode the longest
//! are slower but still bounded.

use cclab_sim::*;
use cclab_units::{Duration, Rate, Time};

/// Records every flow sample.
#[derive(Default)]
struct Record {
    samples: Vec<FlowSample>,
}

impl Observer for Record {
    fn flow_sample(&mut self, s: &FlowSample) {
        self.samples.push(s.clone());
    }
}

impl Record {
    fn of(&self, flow: usize) -> impl Iterator<Item = &FlowSample> {
        self.samples.iter().filter(move |s| s.flow == flow)
    }
}

/// The first sample of each congestion epoch that followed a loss (a new nonzero
/// `epoch_start` with W_max set): its ssthresh and W_max are that loss's.
fn reductions(rec: &Record, flow: usize) -> Vec<&FlowSample> {
    let mut out = vec![];
    let mut last_epoch = 0.0;
    for s in rec.of(flow) {
        let e = cc(s, "epoch_start");
        if e != 0.0 && e != last_epoch {
            if cc(s, "w_max") > 0.0 && s.ssthresh_pkts < 0x7fff_ffff {
                out.push(s);
            }
            last_epoch = e;
        }
    }
    out
}

fn cc(s: &FlowSample, name: &str) -> f64 {
    s.cc.iter()
        .find(|(k, _)| *k == name)
        .map(|x| x.1)
        .unwrap_or_else(|| panic!("no cc column {name}"))
}

fn flow(cc: &str, params: &[(&str, f64)], rtt_ms: u64, start_s: f64) -> FlowConfig {
    FlowConfig {
        name: cc.to_string(),
        cc: cc.to_string(),
        params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        rtt: Duration::from_millis(rtt_ms),
        start: Time::from_secs_f64(start_s),
        stop: None,
        bytes: None,
        tcp: TcpConfig::default(),
        direction: Direction::Forward,
    }
}

fn config(
    mbps: u64,
    buffer: Buffer,
    loss: LossModel,
    flows: Vec<FlowConfig>,
    secs: u64,
    seed: u64,
) -> SimConfig {
    SimConfig {
        duration: Duration::from_secs(secs),
        seed,
        bottleneck: LinkConfig {
            rate: LinkRate::Constant(Rate::from_mbps(mbps)),
            delay: Duration::from_millis(1),
            buffer,
            qdisc: Qdisc::DropTail,
            loss,
            reverse_rate: None,
        },
        flows,
        cross: vec![],
        sample_interval: Duration::from_millis(10),
        changes: vec![],
    }
}

/// Bandwidth-delay product in 1500-byte packets.
fn bdp_pkts(mbps: u64, rtt_ms: u64) -> u64 {
    mbps * 1_000_000 / 8 * rtt_ms / 1000 / 1500
}

fn run(cfg: SimConfig) -> (Report, Record) {
    let mut sim = Simulation::new(cfg).expect("valid scenario");
    let mut rec = Record::default();
    let report = sim.run(&mut rec);
    (report, rec)
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// Goodput of `flow` between `from` and the end, from the delivered-bytes samples.
fn goodput_after(rec: &Record, flow: usize, from_s: f64) -> f64 {
    let s: Vec<_> = rec.of(flow).filter(|s| s.time.as_secs_f64() >= from_s).collect();
    let (a, b) = (s.first().unwrap(), s.last().unwrap());
    (b.delivered_bytes - a.delivered_bytes) as f64 * 8.0
        / (b.time.as_secs_f64() - a.time.as_secs_f64())
}

/// One CUBIC flow alone on a DropTail path: between two losses its cwnd follows
/// W(t) = C (t - K)^3 + W_max, with C = 410/1024 (the kernel's 0.4) and t from the epoch
/// start, within a few packets (cwnd trails the target W(t + min RTT) by up to one RTT).
#[test]
fn cwnd_between_losses_follows_w_of_t() {
    let (mbps, rtt) = (20, 100);
    let buf = bdp_pkts(mbps, rtt);
    let (_, rec) = run(config(
        mbps,
        Buffer::Packets(buf),
        LossModel::None,
        vec![flow("cubic", &[("hystart", 0.0)], rtt, 0.0)],
        60,
        1,
    ));
    let samples: Vec<_> = rec.of(0).collect();
    // Epochs: runs of samples with the same epoch_start (> 0) in congestion avoidance.
    let mut checked = 0;
    let mut worst: f64 = 0.0;
    let mut i = 0;
    while i < samples.len() {
        let e = cc(samples[i], "epoch_start");
        let mut j = i;
        while j < samples.len() && cc(samples[j], "epoch_start") == e {
            j += 1;
        }
        // Skip the first epoch (out of slow start) and epochs cut short.
        if e > 0.0 && samples[i].time.as_secs_f64() > 10.0 && j - i > 100 && j < samples.len() {
            let (origin, k) = (cc(samples[i], "origin"), cc(samples[i], "k"));
            // Skip the first RTT after the epoch began (cwnd still settling).
            for s in &samples[i + 10..j] {
                let t = s.time.as_secs_f64() - e;
                let w = 410.0 / 1024.0 * (t - k).powi(3) + origin;
                let err = s.cwnd_pkts as f64 - w;
                worst = worst.max(err.abs());
                checked += 1;
            }
        }
        i = j;
    }
    println!(
        "W(t) check: {checked} samples, worst |cwnd - W(t)| = {worst:.1} packets (BDP+buffer = {})",
        2 * buf
    );
    assert!(checked > 500, "too few epochs checked ({checked})");
    assert!(worst <= 6.0, "cwnd strays {worst:.1} packets from W(t)");
}

/// ssthresh after a loss is 717/1024 of cwnd at the loss (fast convergence off, so
/// W_max reports cwnd at the loss exactly).
#[test]
fn ssthresh_after_loss_is_0_7_cwnd() {
    let (mbps, rtt) = (20, 60);
    let (_, rec) = run(config(
        mbps,
        Buffer::Packets(bdp_pkts(mbps, rtt)),
        LossModel::None,
        vec![flow("cubic", &[("fast_convergence", 0.0)], rtt, 0.0)],
        40,
        2,
    ));
    let mut n = 0;
    for s in reductions(&rec, 0) {
        let w_max = cc(s, "w_max") as u32;
        assert_eq!(s.ssthresh_pkts, (w_max * 717 / 1024).max(2), "at {:?}", s.time);
        n += 1;
    }
    println!("ssthresh = 717/1024 W_max held at {n} reductions");
    assert!(n >= 3, "only {n} reductions seen");
}

/// CUBIC and Reno at 1% random loss, 10 Mbit/s, 100 ms: both live in CUBIC's
/// Reno-friendly region, so they get about the same goodput.
#[test]
fn cubic_and_reno_share_at_one_percent_loss() {
    let (mbps, rtt) = (10, 100);
    let cfg = config(
        mbps,
        Buffer::Packets(bdp_pkts(mbps, rtt)),
        LossModel::Bernoulli { p: 0.01 },
        vec![flow("cubic", &[], rtt, 0.0), flow("reno", &[], rtt, 0.0)],
        300,
        3,
    );
    let (report, _) = run(cfg);
    let (c, r) = (report.flows[0].goodput_bps, report.flows[1].goodput_bps);
    println!(
        "1% loss: cubic {:.2} Mbit/s, reno {:.2} Mbit/s, ratio {:.2}",
        c / 1e6,
        r / 1e6,
        c / r
    );
    assert!((0.75..=1.33).contains(&(c / r)), "cubic/reno = {:.2}", c / r);
}

/// CUBIC's mean window under random loss p against its response function
/// E[W] = (C (3 + beta) / (4 (1 - beta)))^(1/4) (RTT / p)^(3/4) (RFC 9438 Sec. 5.1 with
/// beta = 0.7, C = 0.4; the 2008 paper's Eq. 5 with its beta = 0.3), on a path fast
/// enough that the loss is all random.
#[test]
fn mean_window_matches_the_response_function() {
    let (mbps, rtt, p) = (200, 100u64, 1e-4);
    let cfg = config(
        mbps,
        Buffer::Packets(4 * bdp_pkts(mbps, rtt)),
        LossModel::Bernoulli { p },
        vec![flow("cubic", &[], rtt, 0.0)],
        300,
        4,
    );
    let (report, rec) = run(cfg);
    let ws: Vec<f64> =
        rec.of(0).filter(|s| s.time.as_secs_f64() > 30.0).map(|s| s.cwnd_pkts as f64).collect();
    let mean = ws.iter().sum::<f64>() / ws.len() as f64;
    let rtt_s = report.flows[0].rtt.mean_ms / 1000.0;
    let theory = (0.4 * 3.7 / (4.0 * 0.3f64)).powf(0.25) * (rtt_s / p).powf(0.75);
    println!("response function: mean cwnd {mean:.1} vs E[W] {theory:.1} (p = {p}, RTT {:.1} ms), ratio {:.2}", rtt_s * 1000.0, mean / theory);
    assert!((0.75..=1.25).contains(&(mean / theory)), "mean cwnd {mean:.1} vs {theory:.1}");
}

/// CUBIC-FIT keeps N near 1 on a clean path and shares fairly with CUBIC (seed 000
/// Table I: Jain 0.999). 10 Mbit/s, 100 ms, buffer half the BDP (the seed's setting).
#[test]
fn cubic_fit_is_fair_to_cubic_on_a_clean_path() {
    let (mbps, rtt) = (10, 100);
    let cfg = config(
        mbps,
        Buffer::Packets(bdp_pkts(mbps, rtt) / 2),
        LossModel::None,
        vec![flow("cubic-fit", &[], rtt, 0.0), flow("cubic", &[], rtt, 0.0)],
        300,
        5,
    );
    let (_, rec) = run(cfg);
    let (f, c) = (goodput_after(&rec, 0, 30.0), goodput_after(&rec, 1, 30.0));
    let ns: Vec<f64> =
        rec.of(0).filter(|s| s.time.as_secs_f64() > 30.0).map(|s| cc(s, "n")).collect();
    let mean_n = ns.iter().sum::<f64>() / ns.len() as f64;
    let j = jain(&[f, c]);
    println!(
        "clean path: cubic-fit {:.2} Mbit/s, cubic {:.2} Mbit/s, Jain {j:.3}, mean N {mean_n:.2}",
        f / 1e6,
        c / 1e6
    );
    assert!(j > 0.9, "Jain {j:.3}");
    assert!(mean_n < 3.0, "mean N {mean_n:.2}");
}

/// At 1% random loss CUBIC-FIT grows N and takes at least twice CUBIC's goodput, while
/// stealing at most 15% of what the CUBIC flow had against another CUBIC flow (seed 000
/// "Bandwidth Stolen Rate" Phi = (T0 - T') / T0).
#[test]
fn cubic_fit_uses_lossy_paths_without_stealing() {
    let (mbps, rtt, secs) = (10, 100, 300);
    let buf = Buffer::Packets(bdp_pkts(mbps, rtt) / 2);
    let loss = LossModel::Bernoulli { p: 0.01 };
    let mut t0 = 0.0;
    let mut t1 = 0.0;
    let mut fit = 0.0;
    let mut n_mean = 0.0;
    let seeds = [11u64, 12, 13];
    for seed in seeds {
        let (r0, _) = run(config(
            mbps,
            buf,
            loss.clone(),
            vec![flow("cubic", &[], rtt, 0.0), flow("cubic", &[], rtt, 0.0)],
            secs,
            seed,
        ));
        let (r1, rec) = run(config(
            mbps,
            buf,
            loss.clone(),
            vec![flow("cubic", &[], rtt, 0.0), flow("cubic-fit", &[], rtt, 0.0)],
            secs,
            seed,
        ));
        t0 += r0.flows[0].goodput_bps;
        t1 += r1.flows[0].goodput_bps;
        fit += r1.flows[1].goodput_bps;
        let ns: Vec<f64> =
            rec.of(1).filter(|s| s.time.as_secs_f64() > 30.0).map(|s| cc(s, "n")).collect();
        n_mean += ns.iter().sum::<f64>() / ns.len() as f64;
    }
    let k = seeds.len() as f64;
    let (t0, t1, fit, n_mean) = (t0 / k, t1 / k, fit / k, n_mean / k);
    let phi = (t0 - t1) / t0;
    println!("1% loss: cubic vs cubic {:.2} Mbit/s; vs cubic-fit: cubic {:.2}, cubic-fit {:.2} Mbit/s (x{:.2}), stolen {:.1}%, mean N {n_mean:.1}", t0 / 1e6, t1 / 1e6, fit / 1e6, fit / t1, phi * 100.0);
    assert!(fit >= 2.0 * t1, "cubic-fit {fit:.0} < 2 x cubic {t1:.0}");
    assert!(phi <= 0.15, "stolen {:.1}%", phi * 100.0);
    assert!(n_mean > 1.5, "N stayed at {n_mean:.2}");
}

/// TCPTuner Sec. 4.1: 12 Mbit/s, 80 ms RTT, 120000-byte DropTail queue.
fn tuner_vs_cubic(alpha: f64, beta: f64, seed: u64) -> (f64, f64) {
    let cfg = config(
        12,
        Buffer::Bytes(120_000),
        LossModel::None,
        vec![
            flow("cubic", &[], 80, 0.0),
            flow("tuner", &[("alpha", alpha), ("beta", beta)], 80, 5.0),
        ],
        120,
        seed,
    );
    let (_, rec) = run(cfg);
    (goodput_after(&rec, 0, 20.0), goodput_after(&rec, 1, 20.0))
}

/// Fig. 3: a tuner flow with alpha = beta = 1 (no decrease) starves CUBIC.
#[test]
fn tuner_without_decrease_starves_cubic() {
    let (c, t) = tuner_vs_cubic(1.0, 1.0, 21);
    println!("tuner alpha = beta = 1: cubic {:.2} Mbit/s, tuner {:.2} Mbit/s", c / 1e6, t / 1e6);
    assert!(c < 0.2 * t, "cubic kept {:.0}% of the tuner's rate", 100.0 * c / t);
}

/// Fig. 5: with beta = 0.25 the tuner flow gets less than its CUBIC competitor.
#[test]
fn tuner_with_beta_quarter_gets_less_than_cubic() {
    let (c, t) = tuner_vs_cubic(1.0, 0.25, 22);
    println!("tuner beta = 0.25: cubic {:.2} Mbit/s, tuner {:.2} Mbit/s", c / 1e6, t / 1e6);
    assert!(t < c, "tuner {t:.0} >= cubic {c:.0}");
}

/// HyStart leaves slow start before the first loss on a deep-buffer path; without it
/// slow start runs into the buffer.
#[test]
fn hystart_leaves_slow_start_before_the_first_loss() {
    let (mbps, rtt) = (20, 100);
    let deep = Buffer::Packets(4 * bdp_pkts(mbps, rtt));
    let first_exit = |hystart: f64| {
        let (_, rec) = run(config(
            mbps,
            deep,
            LossModel::None,
            vec![flow("cubic", &[("hystart", hystart)], rtt, 0.0)],
            20,
            6,
        ));
        let exit = rec
            .of(0)
            .find(|s| s.ssthresh_pkts < 0x7fff_ffff)
            .map(|s| (s.time.as_secs_f64(), s.ssthresh_pkts, s.retransmits));
        exit
    };
    let (t, ssthresh, retx) = first_exit(1.0).expect("never left slow start");
    println!("HyStart: left slow start at {t:.2} s with ssthresh {ssthresh}, retransmits so far {retx} (BDP {} pkts)", bdp_pkts(mbps, rtt));
    assert_eq!(retx, 0, "a loss came first");
    let (_, _, retx_off) = first_exit(0.0).expect("never left slow start without HyStart");
    assert!(retx_off > 0, "without HyStart the first exit is a loss");
}

/// Live retuning (TCPTuner's sliders): beta changed on a running tuner flow takes effect
/// at the next loss (ssthresh = beta * W_max, fast convergence off), and alpha scales the
/// W_max recorded from then on.
#[test]
fn tuner_retunes_beta_and_alpha_on_a_running_flow() {
    let (mbps, rtt) = (20, 60);
    let mut cfg = config(
        mbps,
        Buffer::Packets(bdp_pkts(mbps, rtt)),
        LossModel::None,
        vec![flow("tuner", &[("fast_convergence", 0.0)], rtt, 0.0)],
        60,
        7,
    );
    cfg.changes = vec![ParamChange {
        at: Time::from_secs_f64(20.0),
        flow: 0,
        set: vec![("beta".to_string(), 0.5)],
    }];
    let (_, rec) = run(cfg);
    let mut before = 0;
    let mut after = 0;
    for s in reductions(&rec, 0) {
        let w_max = cc(s, "w_max") as u32;
        if s.time.as_secs_f64() < 20.0 {
            assert_eq!(s.ssthresh_pkts, (w_max * 717 / 1024).max(2), "at {:?}", s.time);
            before += 1;
        } else if s.time.as_secs_f64() > 20.5 {
            assert_eq!(s.ssthresh_pkts, (w_max * 512 / 1024).max(2), "at {:?}", s.time);
            after += 1;
        }
    }
    println!("retune: {before} reductions at beta 0.7, {after} at beta 0.5");
    assert!(before >= 1 && after >= 2);
    // alpha = 2 doubles the W_max recorded at each loss.
    let mut cfg = config(
        mbps,
        Buffer::Packets(bdp_pkts(mbps, rtt)),
        LossModel::None,
        vec![flow("tuner", &[("fast_convergence", 0.0)], rtt, 0.0)],
        40,
        8,
    );
    cfg.changes = vec![ParamChange {
        at: Time::from_secs_f64(10.0),
        flow: 0,
        set: vec![("alpha".to_string(), 2.0)],
    }];
    let (_, rec) = run(cfg);
    let mut checked = 0;
    for s in reductions(&rec, 0).into_iter().filter(|s| s.time.as_secs_f64() > 10.5) {
        // ssthresh = 0.7 cwnd_at_loss, W_max = 2 cwnd_at_loss (within rounding).
        let ratio = cc(s, "w_max") / s.ssthresh_pkts as f64;
        assert!(
            (ratio - 2.0 * 1024.0 / 717.0).abs() < 0.05,
            "W_max / ssthresh = {ratio:.3} at {:?}",
            s.time
        );
        checked += 1;
    }
    println!("alpha = 2: {checked} reductions with W_max = 2 x cwnd at loss");
    assert!(checked >= 1);
}

/// A larger C set in the middle of an epoch makes the window grow faster, below the
/// plateau and past it. Below it, the epoch restarts with K computed with the new C:
/// kept, the old K put the new curve's target below the window (no growth:
/// `cubic-rfc9438`, and `cubic` here) or, for `cubic` with a larger C or later in the
/// epoch, wrapped its `u32` target (growth as in slow start). Past it, the epoch goes on
/// (a restart there flattened the curve at the current window).
#[test]
fn a_larger_c_set_mid_epoch_grows_faster() {
    let (mbps, rtt) = (20, 60);
    for (cc_name, params, knob, value) in [
        ("cubic", &[("hystart", 0.0)][..], "bic_scale", 410.0),
        ("cubic-rfc9438", &[][..], "c", 4.0),
        ("cubic-2008", &[][..], "c", 4.0),
    ] {
        let make = || {
            config(
                mbps,
                Buffer::Packets(bdp_pkts(mbps, rtt)),
                LossModel::None,
                vec![flow(cc_name, params, rtt, 0.0)],
                40,
                3,
            )
        };
        let (_, plain) = run(make());
        let samples: Vec<_> = plain.of(0).collect();
        // A loss after 2 s (a sample where ssthresh fell), its W_max, and the first sample
        // after it past the plateau: the first such loss whose window gets past its
        // W_max (a loss at the path's whole capacity leaves a W_max no later window
        // passes), else the first loss.
        let losses: Vec<usize> = (1..samples.len())
            .filter(|&k| {
                samples[k].time.as_secs_f64() > 2.0
                    && samples[k].ssthresh_pkts < samples[k - 1].ssthresh_pkts
            })
            .collect();
        // Within its own epoch: up to the next loss, whose W_max is another.
        let plateau = |k: usize| {
            let (at, next) = (losses[k], losses.get(k + 1).copied().unwrap_or(samples.len()));
            let w_max = cc(samples[at], "w_max");
            let epoch = &samples[at..next];
            let reduced = epoch.iter().position(|s| (s.cwnd_pkts as f64) < w_max).unwrap();
            let past = epoch[reduced..].iter().find(|s| s.cwnd_pkts as f64 > w_max + 2.0);
            (samples[at].time.as_secs_f64(), w_max, past)
        };
        let (t_loss, w_max, past) = (0..losses.len())
            .map(plateau)
            .find(|(_, _, past)| past.is_some())
            .unwrap_or_else(|| plateau(0));
        // cubic-2008's fast convergence keeps its W_max above the next loss's window here:
        // it never gets past the plateau.
        assert!(past.is_some() || cc_name == "cubic-2008", "{cc_name} never passed W_max");
        // The largest cwnd in the half second after `t` (a faster growth may reach the
        // next loss within it).
        let peak_after = |rec: &Record, t: f64| {
            let within = |s: &&FlowSample| (t..t + 0.5).contains(&s.time.as_secs_f64());
            rec.of(0).filter(within).map(|s| s.cwnd_pkts).max().unwrap()
        };
        let mut cases = vec![("below", t_loss + 0.3)];
        cases.extend(past.map(|s| ("past", s.time.as_secs_f64())));
        for (where_, t_change) in cases {
            let mut cfg = make();
            cfg.changes = vec![ParamChange {
                at: Time::from_secs_f64(t_change),
                flow: 0,
                set: vec![(knob.to_string(), value)],
            }];
            let (_, tuned) = run(cfg);
            let (plain_later, tuned_later) =
                (peak_after(&plain, t_change), peak_after(&tuned, t_change));
            println!(
                "{cc_name}: loss at {t_loss:.2} s, W_max {w_max:.0}; {knob} = {value} {where_} \
                 the plateau at {t_change:.2} s: the next 0.5 s peak at cwnd {plain_later} \
                 without the change, {tuned_later} with it"
            );
            assert!(tuned_later > plain_later, "{cc_name}, {where_}: a larger C grows faster");
            if where_ == "below" {
                assert!((tuned_later as f64) < w_max, "{cc_name}: along the curve, not at once");
            }
        }
    }
}

/// Every member of the family runs on a DropTail path with Gilbert-Elliott burst loss,
/// keeps cwnd >= 1 and ssthresh >= 2 at every sample, uses the link, and gives the same
/// report for the same seed.
#[test]
fn the_family_is_sane_and_deterministic_under_burst_loss() {
    for cc_name in ["cubic", "tuner", "cubic-rfc9438", "cubic-2008", "cubic-fit"] {
        let mk = || {
            let loss = LossModel::GilbertElliott {
                p_good_to_bad: 0.002,
                p_bad_to_good: 0.3,
                loss_good: 0.0005,
                loss_bad: 0.3,
            };
            config(
                20,
                Buffer::Packets(100),
                loss,
                vec![flow(cc_name, &[], 40, 0.0), flow(cc_name, &[], 80, 1.0)],
                30,
                9,
            )
        };
        let (r1, rec) = run(mk());
        let (r2, _) = run(mk());
        assert_eq!(r1, r2, "{cc_name}: same seed, different report");
        for s in &rec.samples {
            assert!(
                s.cwnd_pkts >= 1 && s.ssthresh_pkts >= 2,
                "{cc_name}: ({}, {}) at {:?}",
                s.cwnd_pkts,
                s.ssthresh_pkts,
                s.time
            );
        }
        println!(
            "{cc_name}: utilisation {:.2}, goodputs {:.2} / {:.2} Mbit/s",
            r1.link.utilization,
            r1.flows[0].goodput_bps / 1e6,
            r1.flows[1].goodput_bps / 1e6
        );
        assert!(r1.link.utilization > 0.3, "{cc_name}: utilisation {:.2}", r1.link.utilization);
    }
}
