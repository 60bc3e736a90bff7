//! The sans-IO TCP endpoint (RFC 9293). (Public interface fixed; implementation pending.)

use crate::config::TcpConfig;
use crate::event::Event;
use crate::stats::Stats;
use crate::time::Instant;
use crate::wire::Segment;
use bytes::Bytes;
use std::time::Duration;

/// RFC 9293 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// Misuse of the API (never produced by network input).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EndpointError {
    #[error("the connection is closed for sending")]
    ClosedForSending,
    #[error("the connection was reset")]
    Reset,
    #[error("the connection timed out")]
    TimedOut,
}

pub struct Endpoint {
    _private: (),
}

impl Endpoint {
    /// Active open: queue a SYN to `remote_port` from `local_port` with initial sequence `isn`.
    pub fn connect(_now: Instant, _config: TcpConfig, _local_port: u16, _remote_port: u16, _isn: u32) -> Endpoint {
        todo!()
    }
    /// Passive open: wait in LISTEN on `local_port`; the first SYN fixes the peer.
    pub fn listen(_config: TcpConfig, _local_port: u16, _isn: u32) -> Endpoint {
        todo!()
    }
    /// Application write: accepts up to the free send-buffer space and returns how much it took.
    /// Data written before the handshake completes is sent once it does.
    pub fn write(&mut self, _now: Instant, _data: &[u8]) -> Result<usize, EndpointError> {
        todo!()
    }
    /// Next chunk of in-order received data, if any. Reading reopens the receive window.
    pub fn read(&mut self) -> Option<Bytes> {
        todo!()
    }
    /// Application close: send FIN after all written data.
    pub fn close(&mut self, _now: Instant) {
        todo!()
    }
    /// Abort: send RST and go to CLOSED.
    pub fn abort(&mut self, _now: Instant) {
        todo!()
    }
    /// Feed one incoming segment. Bad input is dropped and counted, never an error.
    pub fn handle_segment(&mut self, _now: Instant, _seg: Segment) {
        todo!()
    }
    /// Feed one incoming wire-format TCP segment (header + payload) whose pseudo-header
    /// checksum the caller has already verified or does not need. Malformed input is dropped and counted.
    pub fn handle_bytes(&mut self, _now: Instant, _bytes: &[u8]) {
        todo!()
    }
    /// Run expired timers. Call when `now >= poll_timeout()`.
    pub fn handle_timeout(&mut self, _now: Instant) {
        todo!()
    }
    /// Next segment to send, if any.
    pub fn poll_transmit(&mut self, _now: Instant) -> Option<Segment> {
        todo!()
    }
    /// Earliest time at which `handle_timeout` must be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        todo!()
    }
    /// Next trace event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        todo!()
    }
    pub fn state(&self) -> State {
        todo!()
    }
    pub fn stats(&self) -> &Stats {
        todo!()
    }
    /// The peer's FIN has been received and all its data read (EOF).
    pub fn peer_closed(&self) -> bool {
        todo!()
    }
    /// Bytes written and not yet acknowledged, plus unsent.
    pub fn bytes_unacked(&self) -> u64 {
        todo!()
    }
    /// Current RTO including backoff.
    pub fn rto(&self) -> Duration {
        todo!()
    }
    pub fn srtt(&self) -> Option<Duration> {
        todo!()
    }
    pub fn config(&self) -> &TcpConfig {
        todo!()
    }
}
