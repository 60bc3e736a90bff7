//! The two parts of each write's latency that happen in the hosts, not on the emulated path:
//! from the application's write call to the write's first byte first leaving the sender's host
//! (at its TUN device), and from the write's last byte first arriving at the receiver's host
//! (written into its TUN device) to the application reading it.
//!
//! On a lossless path with an open window they are the two kernels' own paths and the
//! wake-ups of the emulator and of the reading application: the part of a kernel run's latency
//! the simulator, which models the path and TCP but not the hosts, has no counterpart for
//! (0.14 and 0.10 ms at the median on a 2-vCPU VM: docs/emulation.md, "Tests"). Under loss
//! or a full window they also hold TCP's own waits: the send queue behind the congestion
//! window, and head-of-line blocking behind a hole. Both are kept as exact histograms of
//! every write (at the records' 1 µs), in memory bounded by their range.

use crate::stats::Lateness;
use serde::Serialize;
use std::sync::{Arc, Mutex, MutexGuard};
use thinlab_trace::histogram::LatencyHistogram;
use thinlab_trace::records::WriteSink;
use thinlab_trace::WriteRecord;

/// The statistics of both parts over a flow's writes (µs), in `emu.json`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct HostParts {
    /// Write call → the write's first byte first sent out of the sender's host: every write
    /// that was sent.
    pub write_to_wire: Lateness,
    /// The write's last byte first arrived at the receiver's host → read by the application:
    /// every write that was read.
    pub arrival_to_read: Lateness,
}

#[derive(Default)]
struct Histograms {
    write_to_wire: LatencyHistogram,
    arrival_to_read: LatencyHistogram,
}

/// Collects both parts from a recorder's final write records ([`HostPartsCollector::sink`]).
#[derive(Default)]
pub struct HostPartsCollector(Arc<Mutex<Histograms>>);

impl HostPartsCollector {
    /// A sink for `FlowRecorder::with_sink`: each write's record, once.
    pub fn sink(&self) -> WriteSink {
        let h = Arc::clone(&self.0);
        Box::new(move |w: &WriteRecord| add(&mut lock(&h), w))
    }

    /// The statistics of every write the sink took.
    pub fn finish(self) -> HostParts {
        let h = lock(&self.0);
        HostParts {
            write_to_wire: Lateness::from_histogram(&h.write_to_wire),
            arrival_to_read: Lateness::from_histogram(&h.arrival_to_read),
        }
    }
}

fn add(h: &mut Histograms, w: &WriteRecord) {
    if let Some(sent) = w.first_send.filter(|&s| s >= w.write_time) {
        h.write_to_wire.add((sent - w.write_time).as_nanos() as u64);
    }
    if let (Some(arrived), Some(read)) = (w.transport, w.app) {
        if read >= arrived {
            h.arrival_to_read.add((read - arrived).as_nanos() as u64);
        }
    }
}

/// The histograms, whether or not a sink panicked while holding them (each `add` leaves them
/// whole).
fn lock(h: &Mutex<Histograms>) -> MutexGuard<'_, Histograms> {
    h.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use thinlab_tcp::Instant;

    fn write(
        at_us: u64,
        sent: Option<u64>,
        arrived: Option<u64>,
        read: Option<u64>,
    ) -> WriteRecord {
        let us = |x: u64| Instant::from_nanos(x * 1_000);
        WriteRecord {
            write_time: us(at_us),
            start: 0,
            end: 1,
            first_send: sent.map(us),
            transport: arrived.map(us),
            app: read.map(us),
            acked: None,
        }
    }

    #[test]
    fn each_part_is_counted_for_the_writes_that_reached_it() {
        let c = HostPartsCollector::default();
        let mut sink = c.sink();
        sink(&write(0, Some(140), Some(20_140), Some(20_240)));
        sink(&write(1_000, Some(1_100), Some(21_100), Some(21_400)));
        sink(&write(2_000, Some(2_500), None, None)); // sent, never arrived
        sink(&write(3_000, None, None, None)); // never sent
        drop(sink);
        let p = c.finish();
        assert_eq!(p.write_to_wire.count, 3);
        assert_eq!(p.write_to_wire.max_us, Some(500.0));
        assert_eq!(p.write_to_wire.p50_us, Some(140.0));
        assert_eq!(p.arrival_to_read.count, 2);
        assert_eq!(p.arrival_to_read.p50_us, Some(100.0));
        assert_eq!(p.arrival_to_read.max_us, Some(300.0));
        assert_eq!(p.arrival_to_read.over_1ms, 0);
    }
}
