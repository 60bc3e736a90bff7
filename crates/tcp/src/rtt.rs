//! RTT estimation and the retransmission timeout, one model per `RtoModel`
//! (mechanisms.md §1; RFC 6298; Linux `tcp_rtt_estimator`/`__tcp_set_rto`; FreeBSD 6
//! `tcp_xmit_timer` as in seed 001 App. C.1.1; ns-2 `rtt_update` as in seed 002 §II.A).
//!
//! Pure arithmetic: the endpoint feeds samples (already filtered by Karn's rule) and asks for
//! the base RTO; backoff is applied by [`backed_off`].

use crate::config::TcpConfig;
use std::time::Duration;

/// The per-connection RTT estimator. (Interface fixed; implementation pending.)
#[derive(Clone, Debug)]
pub struct RttEstimator {
    _private: (),
}

impl RttEstimator {
    pub fn new(_cfg: &TcpConfig) -> Self {
        todo!()
    }
    /// Feed one RTT sample (a segment that was not retransmitted, Karn's rule).
    pub fn on_sample(&mut self, _rtt: Duration) {
        todo!()
    }
    /// Base RTO (no backoff): `rto_initial` before the first sample; otherwise per model,
    /// clamped to the model's minimum and `rto_max` and quantised to the clock granularity.
    pub fn rto(&self) -> Duration {
        todo!()
    }
    pub fn srtt(&self) -> Option<Duration> {
        todo!()
    }
    /// The smoothed variation (RTTVAR, or Linux mdev).
    pub fn rttvar(&self) -> Option<Duration> {
        todo!()
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        todo!()
    }
    pub fn latest(&self) -> Option<Duration> {
        todo!()
    }
}

/// `rto · 2^backoff`, capped at `max`.
pub fn backed_off(_rto: Duration, _backoff: u32, _max: Duration) -> Duration {
    todo!()
}
