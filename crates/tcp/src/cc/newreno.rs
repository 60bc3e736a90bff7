//! NewReno (RFC 6582). The window arithmetic is Reno's ([`super::RenoWindow`]): the
//! difference is in fast recovery, which the endpoint runs (`recovery::newreno`): a partial
//! ACK retransmits the next hole and keeps the episode open until the recovery point is
//! acknowledged (`recovery::FastRecoveryExit`, chosen from the configured algorithm). As in
//! Linux, cwnd is not inflated by duplicate ACKs nor deflated by partial ACKs; the endpoint
//! counts packets in flight against it instead.

use super::reno::{reno_family_cc, RenoWindow};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewReno {
    w: RenoWindow,
}

impl NewReno {
    pub fn new(initial_window: u32) -> Self {
        NewReno {
            w: RenoWindow::new(initial_window),
        }
    }
    /// The window state (for tests and tracing).
    pub fn window(&self) -> &RenoWindow {
        &self.w
    }
}

reno_family_cc!(NewReno);
