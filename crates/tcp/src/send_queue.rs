//! Send buffer and retransmission queue (RFC 9293 §3.3.1 send sequence space), keyed by
//! unwrapped u64 stream offsets (offset 0 = first data byte = ISS+1).
//!
//! Unsent bytes live in one `BytesMut`; sending new data splits a frozen `Bytes` off its front,
//! so every queued segment's payload is a zero-copy slice of the send buffer and a
//! retransmission is a reference-count increment. Each queued segment carries the Linux-style
//! scoreboard flags (SACKed, LOST, SACKED_RETRANS) and the queue keeps their counters, so
//! "packets in flight" (`packets_out - sacked_out - lost_out + retrans_out`) is O(1).
//!
//! Invariant: `una <= nxt <= written`; `rtx` covers `[una, nxt)` (plus the FIN) contiguously,
//! in order, one entry per transmitted segment.

use crate::islost_index::IsLostIndex;
use crate::runs::Runs;
use crate::time::Instant;
use arrayvec::ArrayVec;
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;

/// One transmitted, not yet cumulatively acknowledged segment.
#[derive(Clone, Debug)]
pub struct SentSeg {
    pub start: u64,
    pub end: u64,
    pub fin: bool,
    pub payload: Bytes,
    pub first_sent: Instant,
    pub last_sent: Instant,
    /// Ever retransmitted (Karn's rule: no RTT sample from it).
    pub ever_retransmitted: bool,
    pub sacked: bool,
    /// Marked lost (by dupACKs/SACK or RTO) and not yet repaired.
    pub lost: bool,
    /// A retransmission of this lost segment is in flight (Linux SACKED_RETRANS).
    pub retrans: bool,
}

impl SentSeg {
    /// End in sequence space (the FIN occupies one unit after the data).
    pub fn seq_end(&self) -> u64 {
        self.end + self.fin as u64
    }

    /// Where a SACK block must reach to cover this segment: the data end of a segment with
    /// data (a FreeBSD receiver SACKs an out-of-order data+FIN segment without its FIN, see
    /// `recovery::sack`), the FIN of a bare FIN.
    pub fn sack_end(&self) -> u64 {
        if self.start < self.end {
            self.end
        } else {
            self.seq_end()
        }
    }
}

/// What a cumulative ACK removed from the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckedSummary {
    /// Segments fully removed.
    pub segments: u32,
    /// First-transmission time of the oldest acked segment, if no acked segment was ever
    /// retransmitted (Karn's rule): Linux's `first_ackt` / `seq_rtt_us`, the sample that feeds
    /// the RTO estimator. It includes the receiver's ACK delay when one ACK covers several
    /// segments, which the RTO must cover.
    pub karn_sent_at: Option<Instant>,
    /// First-transmission time of the newest fully acked segment that was not SACKed before,
    /// under the same Karn condition: Linux's `last_ackt` / `ca_rtt_us`, the sample for
    /// congestion control and the minimum RTT. An ACK that covers an old segment repaired by
    /// a later RDB bundle yields the bundle's RTT here, not one write interval more.
    pub ca_sent_at: Option<Instant>,
    /// Some acked segment had been retransmitted.
    pub retransmitted_acked: bool,
    /// Latest retransmission time among the acked retransmitted segments (Eifel detection).
    pub last_retransmit_at: Option<Instant>,
}

#[derive(Debug)]
// In declaration order (repr(C)): what every ACK and send touches first, the loss index's
// and SACK cache's arrays last (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct SendQueue {
    rtx: VecDeque<SentSeg>,
    /// Written, not yet sent: one chunk per write, so a write never copies the backlog and a
    /// sent segment is a zero-copy slice of its chunk (unless it spans two writes).
    unsent: VecDeque<Bytes>,
    /// First unacknowledged data offset.
    pub una: u64,
    /// Next new data offset (end of data sent so far).
    pub nxt: u64,
    /// End of data written by the application.
    pub written: u64,
    /// Segments marked lost so far, lost retransmissions included (Linux `tp->lost`).
    losses: u64,
    pub capacity: usize,
    /// The SACKed segments as merged runs (`recovery::rack::detect_loss` jumps over them).
    sacked_runs: Runs,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    pub fin_queued: bool,
    pub fin_sent: bool,
    pub fin_acked: bool,
    /// The highest SACKed segments and the lost frontier (`recovery::sack::mark_lost`).
    islost: IsLostIndex,
    /// The SACK blocks the last ACK applied (`recovery::sack::apply_blocks`): every segment
    /// fully inside one of them is SACKed. Forgotten when SACK marks are cleared (RTO) or a
    /// segment shrinks (a partial ACK trims the head).
    sack_cache: ArrayVec<(u64, u64), 4>,
}

impl SendQueue {
    pub fn new(capacity: usize) -> Self {
        SendQueue {
            rtx: VecDeque::new(),
            unsent: VecDeque::new(),
            una: 0,
            nxt: 0,
            written: 0,
            capacity,
            fin_queued: false,
            fin_sent: false,
            fin_acked: false,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            losses: 0,
            islost: IsLostIndex::default(),
            sack_cache: ArrayVec::new(),
            sacked_runs: Runs::default(),
        }
    }

    /// Copy as much of `data` as fits into the buffer; returns the count.
    pub fn write(&mut self, data: &[u8]) -> usize {
        let n = self.room().min(data.len());
        if n > 0 {
            self.unsent.push_back(Bytes::copy_from_slice(&data[..n]));
        }
        self.written += n as u64;
        n
    }

    /// Queue as much of `data` as fits without copying it (the buffer keeps a slice of the
    /// caller's `Bytes`); returns the count.
    pub fn write_bytes(&mut self, data: Bytes) -> usize {
        let n = self.room().min(data.len());
        if n > 0 {
            self.unsent.push_back(data.slice(..n));
        }
        self.written += n as u64;
        n
    }

    /// Free space in the send buffer.
    fn room(&self) -> usize {
        let used = (self.written - self.una) as usize;
        self.capacity.saturating_sub(used)
    }

    pub fn unsent_len(&self) -> u64 {
        self.written - self.nxt
    }
    /// Written and not yet acknowledged (incl. unsent).
    pub fn unacked_len(&self) -> u64 {
        self.written - self.una
    }
    /// `snd_una` in sequence space (counts an acknowledged FIN).
    pub fn una_seq(&self) -> u64 {
        self.una + self.fin_acked as u64
    }
    /// `snd_nxt` in sequence space (counts a sent FIN).
    pub fn nxt_seq(&self) -> u64 {
        self.nxt + self.fin_sent as u64
    }
    /// A FIN may go out now (queued, not sent, all data sent).
    pub fn fin_ready(&self) -> bool {
        self.fin_queued && !self.fin_sent && self.unsent_len() == 0
    }

    /// Whether unsent data or a FIN waits for its first transmission.
    #[inline]
    pub fn has_new_to_send(&self) -> bool {
        self.unsent_len() > 0 || self.fin_ready()
    }

    pub fn packets_out(&self) -> u32 {
        self.rtx.len() as u32
    }
    pub fn sacked_out(&self) -> u32 {
        self.sacked_out
    }
    pub fn lost_out(&self) -> u32 {
        self.lost_out
    }
    pub fn retrans_out(&self) -> u32 {
        self.retrans_out
    }
    /// Segments marked lost since the connection began, each lost retransmission counted
    /// again (Linux `tp->lost`): the difference across an ACK is what it newly marked lost.
    pub fn losses(&self) -> u64 {
        self.losses
    }
    pub fn is_empty(&self) -> bool {
        self.rtx.is_empty()
    }
    pub fn len(&self) -> usize {
        self.rtx.len()
    }
    pub fn get(&self, i: usize) -> Option<&SentSeg> {
        self.rtx.get(i)
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &SentSeg> + ExactSizeIterator {
        self.rtx.iter()
    }
    /// Prefetches the queues' fronts ([`crate::prefetch`]).
    #[inline]
    pub fn prefetch_buffers(&self) {
        crate::prefetch::prefetch_front(&self.rtx);
        crate::prefetch::prefetch_front(&self.unsent);
    }
    /// Index of the first segment starting at or after `off` (the queue is sorted).
    pub fn index_from(&self, off: u64) -> usize {
        self.rtx.partition_point(|s| s.start < off)
    }
    pub fn front(&self) -> Option<&SentSeg> {
        self.rtx.front()
    }

    /// Take `len` new bytes (plus a FIN if `fin`) as a new segment; returns its index.
    pub fn push_new(&mut self, now: Instant, len: usize, fin: bool) -> usize {
        debug_assert!(len as u64 <= self.unsent_len());
        let payload = self.take_unsent(len);
        let start = self.nxt;
        self.nxt += len as u64;
        if fin {
            self.fin_sent = true;
        }
        self.rtx.push_back(SentSeg {
            start,
            end: self.nxt,
            fin,
            payload,
            first_sent: now,
            last_sent: now,
            ever_retransmitted: false,
            sacked: false,
            lost: false,
            retrans: false,
        });
        self.rtx.len() - 1
    }

    /// The first `len` unsent bytes: a slice of the front chunk when it holds them all, else
    /// one copy of at most a segment's worth.
    fn take_unsent(&mut self, len: usize) -> Bytes {
        if len == 0 {
            return Bytes::new();
        }
        let front = self.unsent.front_mut().expect("len <= unsent_len");
        if front.len() >= len {
            let out = front.split_to(len);
            if front.is_empty() {
                crate::prefetch::pop_front_rewinding(&mut self.unsent);
            }
            return out;
        }
        let mut out = BytesMut::with_capacity(len);
        while out.len() < len {
            let front = self.unsent.front_mut().expect("len <= unsent_len");
            let k = (len - out.len()).min(front.len());
            out.extend_from_slice(&front.split_to(k));
            if front.is_empty() {
                crate::prefetch::pop_front_rewinding(&mut self.unsent);
            }
        }
        out.freeze()
    }

    /// Record a retransmission of entry `i` at `now`; returns a clone of the entry.
    pub fn on_retransmit(&mut self, i: usize, now: Instant) -> SentSeg {
        let s = &mut self.rtx[i];
        s.ever_retransmitted = true;
        s.last_sent = now;
        if s.lost && !s.retrans {
            s.retrans = true;
            self.retrans_out += 1;
        }
        s.clone()
    }

    pub fn set_sacked(&mut self, i: usize) {
        let s = &mut self.rtx[i];
        if s.sacked {
            return;
        }
        s.sacked = true;
        self.sacked_out += 1;
        self.islost.on_sacked(s.seq_end());
        self.sacked_runs.add(s.start, s.seq_end());
        if s.lost {
            s.lost = false;
            self.lost_out -= 1;
        }
        if s.retrans {
            s.retrans = false;
            self.retrans_out -= 1;
        }
    }

    /// Mark entry `i` lost (no-op if SACKed or already lost).
    pub fn set_lost(&mut self, i: usize) {
        let s = &mut self.rtx[i];
        if s.sacked || s.lost {
            return;
        }
        s.lost = true;
        self.lost_out += 1;
        self.losses += 1;
    }

    /// The SACK blocks the last ACK applied, taken (`recovery::sack::apply_blocks`).
    pub fn take_sack_cache(&mut self) -> ArrayVec<(u64, u64), 4> {
        std::mem::take(&mut self.sack_cache)
    }

    /// The end of the run of SACKed segments containing offset `x`, if one does.
    pub fn sacked_run_end(&self, x: u64) -> Option<u64> {
        self.sacked_runs.containing(x).map(|r| r.1)
    }

    /// The SACK blocks the last ACK applied.
    pub fn sack_cache(&self) -> &[(u64, u64)] {
        &self.sack_cache
    }

    /// Remembers the (at most 4) SACK blocks this ACK applied.
    pub fn set_sack_cache(&mut self, blocks: &[(u64, u64)]) {
        self.sack_cache = blocks.iter().copied().take(4).collect();
    }

    /// RTO: every un-SACKed segment is lost and no retransmission is in flight any more.
    /// The head is lost even if SACKed (RFC 2018 §8: the receiver may have reneged).
    pub fn mark_all_lost(&mut self) {
        self.sack_cache.clear();
        if let Some(h) = self.rtx.front_mut() {
            if h.sacked {
                h.sacked = false;
                self.sacked_out -= 1;
                self.islost.on_unsacked(h.seq_end());
                self.sacked_runs.remove(h.start, h.seq_end());
            }
        }
        for i in 0..self.rtx.len() {
            let s = &mut self.rtx[i];
            if s.retrans {
                s.retrans = false;
                self.retrans_out -= 1;
            }
            if !s.sacked && !s.lost {
                s.lost = true;
                self.lost_out += 1;
                self.losses += 1;
            }
        }
    }

    /// The retransmission of lost entry `i` is itself deemed lost (RACK, RFC 8985 §6.2): the
    /// entry may be retransmitted again. No-op unless it is lost with a retransmission in flight.
    pub fn set_retrans_lost(&mut self, i: usize) {
        let s = &mut self.rtx[i];
        if s.lost && s.retrans {
            s.retrans = false;
            self.retrans_out -= 1;
            self.losses += 1;
        }
    }

    /// The sequence-space end of the `k`-th highest SACKed segment, when `k` ≤ 3 and there
    /// are at least `k` SACKed segments.
    pub fn kth_highest_sacked_end(&self, k: u32) -> Option<u64> {
        self.islost.kth_highest_end(k)
    }

    /// Mark lost every un-SACKed segment ending below `limit` (sequence space), visiting only
    /// the segments above the lost frontier; returns how many were newly marked.
    pub fn mark_lost_below(&mut self, limit: u64) -> u32 {
        let frontier = self.islost.frontier;
        let mut i = self.rtx.partition_point(|s| s.seq_end() <= frontier);
        let mut newly = 0;
        while let Some(s) = self.rtx.get(i) {
            if s.seq_end() >= limit {
                break;
            }
            if !s.sacked && !s.lost {
                self.set_lost(i);
                newly += 1;
            }
            i += 1;
        }
        self.islost.frontier = frontier.max(limit - 1);
        newly
    }

    /// Index of the first segment marked lost whose retransmission is not in flight.
    /// Whether a lost segment may still lack a retransmission in flight; without one,
    /// [`Self::first_to_retransmit`] answers `None`.
    #[inline]
    pub fn may_need_retransmission(&self) -> bool {
        self.lost_out > self.retrans_out
    }

    pub fn first_to_retransmit(&self) -> Option<usize> {
        // `retrans` implies `lost` (set only on a lost segment; `lost` is cleared only with it),
        // so retrans_out ≤ lost_out, and equality means every lost segment already has a
        // retransmission in flight: no walk of the queue on every transmit opportunity
        debug_assert!(self.retrans_out <= self.lost_out);
        if !self.may_need_retransmission() {
            return None;
        }
        self.rtx
            .iter()
            .position(|s| s.lost && !s.retrans && !s.sacked)
    }

    /// The queue's invariants (module docs): entries contiguous and in order over
    /// `[una, nxt)`, flags consistent (a retransmission in flight only on a lost segment, never
    /// both SACKed and lost), counters equal to the flags. `Err` names the first violation.
    pub fn check(&self) -> Result<(), String> {
        if !(self.una <= self.nxt && self.nxt <= self.written) {
            return Err(format!(
                "una {} nxt {} written {}",
                self.una, self.nxt, self.written
            ));
        }
        let mut at = self.una;
        let (mut sacked, mut lost, mut retrans) = (0u32, 0u32, 0u32);
        for (i, s) in self.rtx.iter().enumerate() {
            if s.start != at && !(s.start == s.end && s.fin) {
                return Err(format!("entry {i} starts at {} not {at}", s.start));
            }
            if s.end < s.start || s.payload.len() as u64 != s.end - s.start {
                return Err(format!(
                    "entry {i}: [{}, {}) with {} bytes",
                    s.start,
                    s.end,
                    s.payload.len()
                ));
            }
            if (s.retrans && !s.lost) || (s.sacked && s.lost) {
                return Err(format!(
                    "entry {i}: flags sacked {} lost {} retrans {}",
                    s.sacked, s.lost, s.retrans
                ));
            }
            sacked += s.sacked as u32;
            lost += s.lost as u32;
            retrans += s.retrans as u32;
            at = s.end;
        }
        if !self.rtx.is_empty() && at != self.nxt {
            return Err(format!("entries end at {at}, nxt {}", self.nxt));
        }
        let mut tops: Vec<u64> = self
            .rtx
            .iter()
            .filter(|s| s.sacked)
            .map(|s| s.seq_end())
            .collect();
        tops.reverse();
        tops.truncate(IsLostIndex::TOP);
        if tops != self.islost.top() {
            return Err(format!(
                "highest SACKed {tops:?}, index {:?}",
                self.islost.top()
            ));
        }
        let f = self.islost.frontier;
        if let Some(s) = self
            .rtx
            .iter()
            .find(|s| s.seq_end() <= f && !s.sacked && !s.lost)
        {
            return Err(format!(
                "[{}, {}) below the lost frontier {f} is not lost",
                s.start, s.end
            ));
        }
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for s in self.rtx.iter().filter(|s| s.sacked) {
            match runs.last_mut() {
                Some(r) if r.1 == s.start => r.1 = s.seq_end(),
                _ => runs.push((s.start, s.seq_end())),
            }
        }
        if !runs.iter().copied().eq(self.sacked_runs.iter()) {
            return Err(format!(
                "SACKed runs {runs:?}, index {:?}",
                self.sacked_runs.iter().collect::<Vec<_>>()
            ));
        }
        if (sacked, lost, retrans) != (self.sacked_out, self.lost_out, self.retrans_out) {
            return Err(format!(
                "counters {:?} but flags {:?}",
                (self.sacked_out, self.lost_out, self.retrans_out),
                (sacked, lost, retrans)
            ));
        }
        Ok(())
    }

    /// Linux `tcp_retrans_try_collapse`: before entry `i` is retransmitted, merge the entries
    /// after it into it while each is not SACKed, the merged payload stays within `max_len`
    /// bytes and the merged end within `wnd_end` (the peer's window); a FIN ends the run.
    /// Flags of merged entries leave the counters (they are part of `i` now). Returns how
    /// many entries were merged.
    pub fn collapse(&mut self, i: usize, max_len: u64, wnd_end: u64) -> u32 {
        let mut merged = 0;
        while let (Some(to), Some(next)) = (self.rtx.get(i), self.rtx.get(i + 1)) {
            let len = (to.end - to.start) + (next.end - next.start);
            if to.fin || next.sacked || len > max_len || next.end > wnd_end {
                break;
            }
            let next = self.rtx.remove(i + 1).expect("checked above");
            if next.lost {
                self.lost_out -= 1;
            }
            if next.retrans {
                self.retrans_out -= 1;
            }
            let to = &mut self.rtx[i];
            let mut payload = BytesMut::with_capacity(len as usize);
            payload.extend_from_slice(&to.payload);
            payload.extend_from_slice(&next.payload);
            to.payload = payload.freeze();
            to.end = next.end;
            to.fin = next.fin;
            to.ever_retransmitted |= next.ever_retransmitted;
            merged += 1;
        }
        merged
    }

    /// Cumulative ACK up to `ack` (sequence-space offset, `una_seq < ack <= nxt_seq`).
    pub fn ack(&mut self, ack: u64) -> AckedSummary {
        let mut sum = AckedSummary::default();
        let mut karn_ok = true;
        let mut oldest: Option<Instant> = None;
        let mut newest: Option<Instant> = None;
        while let Some(front) = self.rtx.front() {
            if front.seq_end() <= ack {
                let s = crate::prefetch::pop_front_rewinding(&mut self.rtx).expect("front exists");
                if s.sacked {
                    self.sacked_out -= 1;
                }
                if s.lost {
                    self.lost_out -= 1;
                }
                if s.retrans {
                    self.retrans_out -= 1;
                }
                if s.ever_retransmitted {
                    karn_ok = false;
                    sum.retransmitted_acked = true;
                    sum.last_retransmit_at = sum.last_retransmit_at.max(Some(s.last_sent));
                }
                oldest.get_or_insert(s.first_sent);
                if !s.sacked {
                    newest = Some(s.first_sent);
                }
                sum.segments += 1;
            } else {
                if front.start < ack && ack < front.seq_end() {
                    // partial ACK of a segment: trim the acked bytes off its front (for a
                    // data+FIN segment acked up to its data end, all of its data: the FIN stays)
                    let f = self.rtx.front_mut().expect("front exists");
                    let ack = ack.min(f.end);
                    let cut = (ack - f.start) as usize;
                    f.payload = f.payload.slice(cut..);
                    f.start = ack;
                    // a shorter segment may now lie inside a block that did not cover it
                    self.sack_cache.clear();
                    if f.ever_retransmitted {
                        karn_ok = false;
                        sum.retransmitted_acked = true;
                        sum.last_retransmit_at = sum.last_retransmit_at.max(Some(f.last_sent));
                    }
                    oldest.get_or_insert(f.first_sent);
                }
                break;
            }
        }
        if karn_ok {
            sum.karn_sent_at = oldest;
            sum.ca_sent_at = newest;
        }
        self.islost.on_acked(ack);
        self.sacked_runs
            .trim_below(self.rtx.front().map_or(ack, |f| f.start));
        self.una = ack.min(self.nxt);
        if self.fin_sent && ack > self.nxt {
            self.fin_acked = true;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `write_bytes` keeps the caller's buffer: segments are slices of it, not copies.
    #[test]
    fn write_bytes_does_not_copy() {
        static DATA: [u8; 3000] = [7; 3000];
        let mut q = SendQueue::new(2000);
        assert_eq!(
            q.write_bytes(Bytes::from_static(&DATA)),
            2000,
            "buffer-limited"
        );
        let i = q.push_new(Instant::ZERO, 1448, false);
        let seg = q.get(i).unwrap();
        assert_eq!(seg.payload.as_ptr(), DATA.as_ptr());
        assert_eq!(seg.payload.len(), 1448);
        let j = q.push_new(Instant::ZERO, 552, false);
        assert_eq!(q.get(j).unwrap().payload.as_ptr(), DATA[1448..].as_ptr());
        assert_eq!(q.unsent_len(), 0);
    }

    #[test]
    fn segments_are_slices_and_acks_trim() {
        let mut q = SendQueue::new(100);
        assert_eq!(q.write(&[1u8; 60]), 60);
        assert_eq!(q.write(&[2u8; 60]), 40);
        q.push_new(Instant::ZERO, 50, false);
        q.push_new(Instant::from_millis(1), 50, false);
        assert_eq!(q.packets_out(), 2);
        let s = q.ack(70);
        assert_eq!(s.segments, 1);
        assert_eq!(
            s.karn_sent_at,
            Some(Instant::ZERO),
            "oldest acked segment, partial ACK included"
        );
        assert_eq!(q.front().unwrap().start, 70);
        assert_eq!(q.front().unwrap().payload.len(), 30);
        assert_eq!(q.una, 70);
        assert_eq!(q.write(&[3u8; 100]), 70);
    }

    #[test]
    fn rto_sample_from_the_oldest_ca_sample_from_the_newest_segment() {
        let mut q = SendQueue::new(1000);
        q.write(&[0u8; 400]);
        for t in [0, 140, 280, 420] {
            q.push_new(Instant::from_millis(t), 100, false);
        }
        // an ACK covering three segments (a delayed ACK, or an RDB bundle that repaired the
        // first two): the RTO sample includes the wait, the CC sample measures the newest
        let s = q.ack(300);
        assert_eq!(s.segments, 3);
        assert_eq!(s.karn_sent_at, Some(Instant::ZERO));
        assert_eq!(s.ca_sent_at, Some(Instant::from_millis(280)));
        // a SACKed segment gives no CC sample of its own (Linux last_ackt)
        q.set_sacked(0);
        let s = q.ack(400);
        assert_eq!(
            (s.karn_sent_at, s.ca_sent_at),
            (Some(Instant::from_millis(420)), None)
        );

        // Karn: any retransmitted segment among the acked ones spoils both samples
        let mut q = SendQueue::new(1000);
        q.write(&[0u8; 200]);
        q.push_new(Instant::ZERO, 100, false);
        q.push_new(Instant::from_millis(10), 100, false);
        q.on_retransmit(0, Instant::from_millis(300));
        let s = q.ack(200);
        assert!(s.retransmitted_acked);
        assert_eq!((s.karn_sent_at, s.ca_sent_at), (None, None));
    }

    #[test]
    fn data_and_fin_acked_up_to_the_data_end_keeps_only_the_fin() {
        let mut q = SendQueue::new(1000);
        q.write(&[5u8; 100]);
        q.fin_queued = true;
        q.push_new(Instant::ZERO, 100, true);
        let s = q.ack(100);
        assert_eq!(s.segments, 0);
        let f = q.front().expect("the FIN is still outstanding");
        assert_eq!(
            (f.start, f.end, f.payload.len(), f.fin),
            (100, 100, 0, true)
        );
        assert_eq!((q.una, q.fin_acked), (100, false));
        q.ack(101);
        assert!(q.is_empty() && q.fin_acked);
    }

    #[test]
    fn scoreboard_counters() {
        let mut q = SendQueue::new(1000);
        q.write(&[0u8; 300]);
        for _ in 0..3 {
            q.push_new(Instant::ZERO, 100, false);
        }
        q.set_sacked(2);
        q.set_lost(0);
        assert_eq!(q.first_to_retransmit(), Some(0));
        q.on_retransmit(0, Instant::from_millis(5));
        assert_eq!((q.sacked_out(), q.lost_out(), q.retrans_out()), (1, 1, 1));
        assert_eq!(q.first_to_retransmit(), None);
        let s = q.ack(100);
        assert!(s.retransmitted_acked);
        assert_eq!(s.karn_sent_at, None);
        assert_eq!((q.sacked_out(), q.lost_out(), q.retrans_out()), (1, 0, 0));
        q.mark_all_lost();
        assert_eq!(q.lost_out(), 1);
        q.set_sacked(0);
        q.mark_all_lost();
        assert_eq!(
            (q.sacked_out(), q.lost_out()),
            (1, 1),
            "head un-SACKed on RTO"
        );
        assert!(!q.front().unwrap().sacked);
    }
}
