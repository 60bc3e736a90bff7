//! An ACK that can change nothing in loss recovery: it acknowledges nothing new, is no
//! duplicate, carries no SACK option, and nothing is outstanding, with recovery Open and no
//! D-SACK undo pending. Such is every data segment a receiver gets in a one-way transfer (its
//! ACK field repeats the receiver's own, empty, send sequence): half the ACKs of both benchmark
//! workloads.
//!
//! Linux does the same: `tcp_ack` sends an ACK with nothing outstanding (`!prior_packets`) to
//! `no_queue`, past the congestion-control and recovery steps (`tcp_fastretrans_alert`,
//! `tcp_cong_control`), and the receive fast path of `tcp_rcv_established` calls `tcp_ack`
//! only when the ACK field moved.
//!
//! For such an ACK the fourteen steps of [`LossRecovery::on_ack`] reduce to what
//! [`LossRecovery::on_quiet_ack`] does: with an empty queue there is nothing to deliver, mark,
//! sample, detect or grow. The few writes they still make, made here in the same order: RACK
//! clears its "advanced" flag (step 1), the dupthresh family clears the next episode's kind
//! (5), the Reno SACK count of an empty queue is zero (7), the reordering window counts the
//! ACK (9), and the retransmission and probe timers are settled as at steps 13 and 14. Two
//! tests compare runs with and without the shortcut: `tests/quiet_ack.rs` the whole
//! loss-recovery state of endpoint pairs over drawn transfers that reorder and duplicate, and
//! `crates/cli/tests/identical_results.rs` the result folders of the committed scenarios
//! (`THINLAB_QUIET_ACK=off`).

use super::{Ctx, LossRecovery, Phase};
use crate::recovery::manager::AckInfo;

impl LossRecovery {
    /// Whether `ack` can change nothing but what [`LossRecovery::on_quiet_ack`] writes.
    #[inline]
    pub(super) fn is_quiet_ack(&self, c: &Ctx, ack: &AckInfo) -> bool {
        !ack.acked_new
            && !ack.dupack
            && !ack.has_sack_option
            && ack.sack_blocks.is_empty()
            && c.snd.is_empty()
            && self.rec.phase == Phase::Open
            && !self.rec.undo.is_some_and(|u| u.all_dsacked())
            && self.quiet_shortcut
    }

    /// Turns the shortcut off or on (tests that compare results with and without it).
    pub(crate) fn set_quiet_shortcut(&mut self, on: bool) {
        self.quiet_shortcut = on;
    }

    /// [`LossRecovery::on_ack`] for a quiet ACK ([`LossRecovery::is_quiet_ack`]).
    pub(super) fn on_quiet_ack(&mut self, c: &mut Ctx) {
        if Self::rack_active(c) {
            self.rack_tlp.rack.advanced = false;
        }
        self.rec.next_episode_early = None;
        self.rec.reno_sacked = 0;
        if Self::dsack_active(c) {
            let delivered = self.rack_tlp.delivered;
            self.rack_tlp.reo.on_ack(delivered, delivered);
        }
        self.rto_on_ack(c, false);
        self.tlp_on_ack(c, false);
    }
}

/// Whether quiet ACKs take the shortcut: unless `THINLAB_QUIET_ACK=off` (read once per
/// process), which the test comparing results with and without it sets, as may a user who
/// doubts it.
pub(super) fn shortcut_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("THINLAB_QUIET_ACK").as_deref() != Ok("off"))
}
