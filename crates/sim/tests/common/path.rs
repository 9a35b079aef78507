//! A hand-driven path for TCP tests: a sender and a receiver joined by 25 ms each way,
//! where the test decides the fate of each transmission of each segment (delivered,
//! dropped or held back).

use cclab_cc::{Algorithm, LossRecovery};
use cclab_sim::tcp::{Ack, Segment, TcpReceiver, TcpSender};
use cclab_sim::{DelayedAck, TcpConfig};
use cclab_units::{Duration, Time};

/// The instant `x` ms after the path starts.
pub fn at_ms(x: u64) -> Time {
    Time::ZERO + Duration::from_millis(x)
}

pub const ONE_WAY: Duration = Duration::from_millis(25);
/// Each segment takes the sender's link 100 us (116 Mbit/s): ACKs come back spaced, so
/// no two are handled at the same instant (RACK tells apart segments sent at the same
/// microsecond by sequence, as Linux does, which holds within one transmission burst).
const SEND_TIME: Duration = Duration::from_micros(100);

/// What happens to one transmission of a segment.
#[derive(Clone, Copy, PartialEq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Delivered this much later than the path's delay (overtaken by what follows).
    Late(Duration),
}

/// A sender and a receiver on a path with no queue but the sender's link: segments
/// arrive 100 us apart and 25 ms after they leave.
pub struct Path<F: Fn(u32, u32) -> Fate> {
    pub s: TcpSender,
    pub r: TcpReceiver,
    pub now: Time,
    /// Segments and ACKs on the way, with their arrival times, in arrival order.
    to_receiver: Vec<(Time, Segment)>,
    to_sender: Vec<(Time, Ack)>,
    /// When the sender's link is free.
    link_free: Time,
    /// How many times each segment was sent.
    pub sends: Vec<u32>,
    /// The fate of the `n`th transmission (1: the original) of segment `seq`.
    fate: F,
}

impl<F: Fn(u32, u32) -> Fate> Path<F> {
    /// A Reno sender of `bytes` (None: bulk) with `cfg`'s settings, no handshake and no
    /// delayed ACKs.
    pub fn new(cfg: TcpConfig, bytes: Option<u64>, fate: F) -> Path<F> {
        let no_delack = DelayedAck { enabled: false, ..Default::default() };
        let cfg = TcpConfig { handshake: false, delayed_ack: no_delack, ..cfg };
        let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, bytes);
        s.start(Time::ZERO);
        let r = TcpReceiver::new(0, 1448, bytes, no_delack, LossRecovery::Sack);
        let mut p = Path {
            s,
            r,
            now: Time::ZERO,
            to_receiver: vec![],
            to_sender: vec![],
            link_free: Time::ZERO,
            sends: vec![],
            fate,
        };
        p.transmit();
        p
    }

    pub fn transmit(&mut self) {
        let mut out = vec![];
        self.s.transmit(self.now, &mut |seg| out.push(seg));
        for seg in out {
            let i = seg.seq as usize;
            if self.sends.len() <= i {
                self.sends.resize(i + 1, 0);
            }
            self.sends[i] += 1;
            let leaves = self.now.max(self.link_free);
            self.link_free = leaves + SEND_TIME;
            let at = match (self.fate)(seg.seq, self.sends[i]) {
                Fate::Drop => continue,
                Fate::Deliver => leaves + ONE_WAY,
                Fate::Late(d) => leaves + ONE_WAY + d,
            };
            let k = self.to_receiver.partition_point(|&(t, _)| t <= at);
            self.to_receiver.insert(k, (at, seg));
        }
    }

    /// Runs events in time order until `end`: arrivals at either end and the sender's
    /// timer (RTO, RACK's reorder timer or the probe timer).
    pub fn run_until(&mut self, end: Time) {
        loop {
            let seg = self.to_receiver.first().map(|e| e.0);
            let ack = self.to_sender.first().map(|e| e.0);
            let timer = self.s.rto_deadline();
            let Some(next) = [seg, ack, timer].into_iter().flatten().min() else { return };
            if next > end || self.s.is_complete() {
                return;
            }
            self.now = next;
            if seg == Some(next) {
                let (_, seg) = self.to_receiver.remove(0);
                if let Some(a) = self.r.on_data(self.now, &seg) {
                    self.to_sender.push((self.now + ONE_WAY, a));
                }
            } else if ack == Some(next) {
                let (_, a) = self.to_sender.remove(0);
                self.s.on_ack(self.now, &a);
                self.transmit();
            } else {
                self.s.on_rto(self.now);
                self.transmit();
            }
            self.s.check_invariants().unwrap();
        }
    }
}
