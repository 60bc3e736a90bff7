//! How a flow ends: when it has nothing left to do (complete, or its connection died), and
//! the status its result reports ([`FlowStatus`]: completed, never established, aborted or
//! stopped by the drain bound, with why).

use super::FlowSim;
use thinlab_tcp::{Endpoint, EndpointError, State};
use thinlab_trace::FlowStatus;

/// How flow `fl` ended ([`FlowStatus`]): `completed` exactly when every write the application
/// made was delivered; otherwise never established, aborted (and why) or stopped by the drain
/// bound.
pub(super) fn flow_status(
    fl: &FlowSim,
    stop: u64,
    drain_bound_hit: bool,
) -> (FlowStatus, Option<String>) {
    let rec = fl.recorder.records();
    let undelivered = rec.write_count() - rec.writes_delivered();
    let error = [fl.sender, 0, 1 - fl.sender].iter().find_map(|&side| {
        fl.eps[side]
            .as_ref()
            .and_then(|e| e.error().map(|err| (e, err)))
    });
    let why_dead = |ep: &Endpoint, err: EndpointError| match err {
        EndpointError::TimedOut if !fl.source_started => format!(
            "no answer to the SYN after {} retransmissions",
            ep.config().syn_retries
        ),
        EndpointError::TimedOut => {
            format!("{} retransmission timeouts", ep.config().max_retries)
        }
        EndpointError::Reset => "reset".to_string(),
        EndpointError::ClosedForSending => "closed".to_string(),
    };
    let late = fl.established_at.is_some_and(|t| t >= stop);
    if undelivered == 0 && fl.pending == 0 && fl.source_started && !(late && rec.write_count() == 0)
    {
        // Every write delivered; a connection that died afterwards (say, its FIN never
        // acknowledged) lost nothing the application wrote.
        return (FlowStatus::Completed, None);
    }
    if late && rec.write_count() == 0 {
        let at = fl.established_at.unwrap_or(stop) as f64 / 1e9;
        return (
            FlowStatus::NeverEstablished,
            Some(format!(
                "the handshake completed only at {at:.3} s, after `duration`: no write was made"
            )),
        );
    }
    if !fl.source_started {
        let reason = match error {
            Some((ep, err)) => why_dead(ep, err),
            None if drain_bound_hit => "the handshake had not completed at the drain bound".into(),
            None => "the handshake never completed".into(),
        };
        return (FlowStatus::NeverEstablished, Some(reason));
    }
    match error {
        Some((ep, err)) => (FlowStatus::Aborted, Some(why_dead(ep, err))),
        None if drain_bound_hit => (
            FlowStatus::DrainBoundHit,
            Some("the drain bound ended the run with data in flight".into()),
        ),
        None => (
            FlowStatus::Aborted,
            Some("the simulation stalled with data undelivered".into()),
        ),
    }
}

/// The connection died: the sender or the client (which opens it) is CLOSED.
fn dead(fl: &FlowSim) -> bool {
    let closed = |side: usize| {
        fl.eps[side]
            .as_ref()
            .is_some_and(|e| e.state() == State::Closed)
    };
    closed(fl.sender) || closed(0)
}

/// Everything was written, acknowledged, and (finite sources) the FIN acknowledged.
pub(super) fn complete(fl: &FlowSim) -> bool {
    let Some(sender) = fl.eps[fl.sender].as_ref() else {
        return false;
    };
    if !fl.source_started || !fl.source.finished() || fl.pending > 0 || sender.bytes_unacked() > 0 {
        return false;
    }
    !fl.source.closes()
        || (fl.closed
            && matches!(
                sender.state(),
                State::FinWait2 | State::TimeWait | State::Closed
            ))
}

/// Whether servicing endpoint `side` of flow `fl` can change [`flow_done`]'s answer. It depends
/// on the sender endpoint and the source, which change only when the sender is serviced (or
/// just before), and on the client's state ([`dead`]); another endpoint's service leaves the
/// answer as the last check found it.
pub(super) fn service_may_end(fl: &FlowSim, side: usize) -> bool {
    side == fl.sender || side == 0
}

/// Whether flow `fl` has nothing left to do.
pub(super) fn flow_done(fl: &FlowSim) -> bool {
    fl.eps[fl.sender].is_some() && (complete(fl) || dead(fl))
}
