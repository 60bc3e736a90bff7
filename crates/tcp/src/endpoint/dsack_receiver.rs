//! D-SACK at the receiver (RFC 2883; nothing here runs unless `TcpConfig::dsack` is on and
//! SACK was negotiated): `dsack_note_arrival` remembers the duplicate part of an arriving
//! segment; the next segment sent carries it as its first SACK block (`output::segment`). The
//! sender's side is in `recovery::manager` (`dsack.rs`).

use super::Endpoint;
use crate::time::Instant;

impl Endpoint {
    fn dsack_active(&self) -> bool {
        self.cfg.dsack && self.neg.sack
    }

    /// Receiver: a segment `[start, end)` arrived when `rcv_nxt` was `rcv_nxt_before`;
    /// `duplicate`: nothing of it was new.
    pub(super) fn dsack_note_arrival(
        &mut self,
        start: u64,
        end: u64,
        rcv_nxt_before: u64,
        duplicate: bool,
    ) {
        if !self.dsack_active() || start >= end {
            return;
        }
        let block = if start < rcv_nxt_before {
            // old data, or the old part of a segment straddling rcv_nxt (Linux tcp_data_queue)
            Some((start, end.min(rcv_nxt_before)))
        } else if duplicate {
            Some((start, end)) // already queued out of order (tcp_data_queue_ofo)
        } else {
            None
        };
        if block.is_some() {
            self.dsack_block = block;
        }
    }

    /// The D-SACK block to put first in the next segment, if any (taken once).
    pub(super) fn take_dsack_block(&mut self, _now: Instant) -> Option<(u64, u64)> {
        self.dsack_block.take()
    }
}
