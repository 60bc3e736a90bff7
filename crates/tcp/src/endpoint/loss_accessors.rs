//! Read-only views of the loss-recovery component's state (diagnostics and tests).

use super::Endpoint;
use crate::recovery::er_threshold::FrtoEstimator;
use crate::recovery::manager::thin_now;
use crate::recovery::rack::RackState;
use std::time::Duration;

impl Endpoint {
    /// Whether the stream is thin now, by the configured test (`TcpConfig::thin_detection`).
    pub fn is_thin(&self) -> bool {
        thin_now(&self.cfg, &self.snd, &self.cc, &self.rtt)
    }
    /// The F-RTO estimator of `er-threshold`.
    pub fn frto_estimator(&self) -> &FrtoEstimator {
        self.loss.frto_estimator()
    }
    /// RACK's state.
    pub fn rack_state(&self) -> &RackState {
        self.loss.rack_state()
    }
    /// RACK's current reordering window.
    pub fn rack_reo_wnd(&self) -> Duration {
        self.loss.rack_reo_wnd(&self.rtt, &self.snd)
    }
    /// RDB patch variant: ACKs that revealed a loss hidden by redundancy.
    pub fn rdb_hidden_losses(&self) -> u64 {
        self.loss.rdb_hidden_losses()
    }
    /// RDB patch variant: CWR reductions caused by hidden losses.
    pub fn rdb_cwr_events(&self) -> u64 {
        self.loss.rdb_cwr_events()
    }
    /// Adaptive RDB: the current allowance (permitted bundles).
    pub fn rdb_allowance(&self) -> u32 {
        self.loss.rdb_allowance()
    }
    /// Adaptive RDB: loss episodes that raised the allowance.
    pub fn rdb_loss_episodes(&self) -> u64 {
        self.loss.rdb_loss_episodes()
    }
    /// Adaptive RDB: sends that did not bundle although earlier data fitted, because the
    /// allowance was spent and because the write interval exceeded the RTO.
    pub fn rdb_skipped(&self) -> (u64, u64) {
        self.loss.rdb_skipped()
    }

    /// Loss recovery's and the timers' whole state, as text (tests that compare two runs).
    #[doc(hidden)]
    pub fn recovery_state_text(&self) -> String {
        format!("{:?}\n{:?}", self.loss, self.timers)
    }
    /// Turns loss recovery's quiet-ACK shortcut off or on for this endpoint (tests that compare
    /// results with and without it; `THINLAB_QUIET_ACK=off` does it for a whole process).
    #[doc(hidden)]
    pub fn set_quiet_ack_shortcut(&mut self, on: bool) {
        self.loss.set_quiet_shortcut(on);
    }
}
