//! FQ-CoDel (RFC 8290): flows hashed into buckets, deficit round robin between them with
//! new flows served first, CoDel on each bucket. Its configuration is CoDel's.

use super::codel::{Codel, CodelConfig};
use super::{Entry, QueuedPacket, MTU};
use cclab_units::Time;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub(super) struct FqState<P> {
    buckets: Vec<Bucket<P>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    perturb: u64,
}

#[derive(Clone, Debug)]
struct Bucket<P> {
    q: VecDeque<Entry<P>>,
    bytes: u64,
    deficit: i64,
    codel: Codel,
    listed: bool,
}

const FQ_BUCKETS: usize = 1024;

impl<P: QueuedPacket> FqState<P> {
    pub(super) fn new(c: &CodelConfig, perturb: u64) -> FqState<P> {
        let buckets = (0..FQ_BUCKETS)
            .map(|_| Bucket {
                q: VecDeque::new(),
                bytes: 0,
                deficit: 0,
                codel: Codel::new(c),
                listed: false,
            })
            .collect();
        FqState { buckets, new_flows: VecDeque::new(), old_flows: VecDeque::new(), perturb }
    }

    pub(super) fn push(&mut self, pkt: P, now: Time) {
        let h = (pkt.flow_key() ^ self.perturb).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54; // 10 bits
        let i = h as usize % FQ_BUCKETS;
        let b = &mut self.buckets[i];
        b.bytes += pkt.size_bytes() as u64;
        b.q.push_back(Entry { pkt, enqueued: now });
        if !b.listed {
            b.listed = true;
            b.deficit = MTU as i64;
            self.new_flows.push_back(i as u32);
        }
    }

    /// Drops the head of the fattest bucket's queue and hands it back.
    pub(super) fn drop_fattest(&mut self) -> Option<P> {
        let (i, _) = self
            .buckets
            .iter()
            .enumerate()
            .max_by_key(|(i, b)| (b.bytes, std::cmp::Reverse(*i)))?;
        let b = &mut self.buckets[i];
        let e = b.q.pop_front()?;
        b.bytes -= e.pkt.size_bytes() as u64;
        Some(e.pkt)
    }

    pub(super) fn dequeue(&mut self, now: Time, dropped: &mut Vec<P>) -> Option<Entry<P>> {
        loop {
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i, true),
                None => (*self.old_flows.front()?, false),
            };
            let b = &mut self.buckets[i as usize];
            if b.deficit <= 0 {
                b.deficit += MTU as i64;
                if from_new {
                    self.new_flows.pop_front()
                } else {
                    self.old_flows.pop_front()
                };
                self.old_flows.push_back(i);
                continue;
            }
            let e = b.codel.dequeue(&mut b.q, &mut b.bytes, now, dropped);
            match e {
                Some(e) => {
                    b.deficit -= e.pkt.size_bytes() as i64;
                    return Some(e);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                        if !self.old_flows.is_empty() {
                            self.old_flows.push_back(i);
                            continue;
                        }
                    } else {
                        self.old_flows.pop_front();
                    }
                    b.listed = false;
                }
            }
        }
    }
}
