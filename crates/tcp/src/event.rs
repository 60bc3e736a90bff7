//! Typed trace events. Every segment the endpoint emits produces one `Sent`; the receiver side
//! reports arrivals and in-order deliveries; the sender reports cumulative-ACK progress.
//! Drivers turn these into pcap records and per-write delivery records (thinlab-trace).
//! All byte ranges are unwrapped stream offsets `[start, end)` of *this endpoint's* outgoing
//! stream (for `Sent`, `Acked`) or of the *peer's* stream (for `Arrived`, `Delivered`).

use crate::state::State;
use crate::time::Instant;
use std::time::Duration;

/// Why a segment was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendKind {
    /// First transmission of new data (or a pure ACK / FIN with no retransmitted data).
    New,
    /// New data carrying redundant earlier bytes (RDB).
    Rdb,
    /// Retransmission after a retransmission timeout.
    Rto,
    /// Fast retransmit (duplicate ACKs, SACK loss detection, NewReno partial ACK).
    FastRetransmit,
    /// Retransmission of a segment RACK marked lost (RFC 8985 §6; the fast retransmissions
    /// of a connection with RACK active).
    RackRetransmit,
    /// Early Retransmit (RFC 5827).
    Early,
    /// The F-RTO threshold of Yin et al. (`er-threshold`).
    EarlyThreshold,
    /// Tail Loss Probe retransmitting the highest segment (RFC 8985 §7.3).
    Tlp,
    /// Tail Loss Probe carrying new data (not a retransmission).
    TlpNewData,
    /// Zero-window probe.
    WindowProbe,
    /// SYN or SYN-ACK (first transmission or retransmission).
    Handshake,
    /// Pure acknowledgment (no data, no SYN/FIN).
    Ack,
    /// Reset.
    Rst,
}

impl SendKind {
    /// Whether a segment of this kind counts as a retransmission (docs/spec/interface.md
    /// `retransmissions`).
    pub fn is_retransmission(self) -> bool {
        matches!(
            self,
            SendKind::Rto
                | SendKind::FastRetransmit
                | SendKind::RackRetransmit
                | SendKind::Early
                | SendKind::EarlyThreshold
                | SendKind::Tlp
        )
    }

    /// Whether a segment of this kind is a tail loss probe (either kind).
    pub fn is_probe(self) -> bool {
        matches!(self, SendKind::Tlp | SendKind::TlpNewData)
    }
}

/// What loss recovery did, for [`Event::Recovery`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryEvent {
    /// Fast recovery began.
    Entered,
    /// Fast recovery ended at its recovery point.
    Exited,
    /// Segments were newly marked lost (by dupthresh/SACK, RACK, or an RTO).
    LossMarked { segments: u32 },
    /// The congestion window was reduced (a loss, an RTO, or CWR); the values after it.
    Reduction { cwnd: u32, ssthresh: u32 },
    /// A reduction was undone (D-SACK or timestamps showed it spurious); the values after it.
    Undo { cwnd: u32, ssthresh: u32 },
}

/// Why an incoming segment was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Could not be parsed (bad header length, bad option, bad checksum, truncated).
    Malformed,
    /// Wrong ports for this connection.
    WrongConnection,
    /// Sequence number outside the receive window (an ACK is sent in reply, RFC 9293).
    OutOfWindow,
    /// ACK for data never sent, or otherwise unacceptable.
    BadAck,
    /// Not acceptable in the current state (e.g. data before the handshake completes).
    BadState,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A segment left the endpoint. `start..end` is its payload range (empty for pure control);
    /// `syn`/`fin` flag whether it carries those.
    Sent {
        at: Instant,
        start: u64,
        end: u64,
        kind: SendKind,
        syn: bool,
        fin: bool,
    },
    /// The cumulative acknowledgment of our outgoing stream advanced to `una` (stream offset).
    Acked { at: Instant, una: u64 },
    /// An ACK carried a SACK block for our outgoing stream: the peer holds `start..end`
    /// (stream offsets; D-SACK blocks included), as a time-sequence graph draws it.
    Sacked { at: Instant, start: u64, end: u64 },
    /// A data segment of the peer's stream arrived (before trimming): `start..end`.
    Arrived { at: Instant, start: u64, end: u64 },
    /// Bytes of the peer's stream became readable in order: `start..end`.
    Delivered { at: Instant, start: u64, end: u64 },
    /// The retransmission timer expired; `rto` is the value that expired, `backoff` the backoff
    /// exponent after this expiry (the number of consecutive expiries including this one, unless
    /// linear timeouts kept it at 0).
    RtoFired {
        at: Instant,
        rto: Duration,
        backoff: u32,
    },
    /// The connection changed state.
    StateChanged { at: Instant, from: State, to: State },
    /// Loss recovery did something (diagnostics: which mechanism acted when).
    Recovery { at: Instant, what: RecoveryEvent },
    /// An incoming segment was dropped.
    Dropped { at: Instant, reason: DropReason },
}
