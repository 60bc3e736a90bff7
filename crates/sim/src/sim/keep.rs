//! What a run keeps beyond its metrics: per-write series and the worst write's window for the
//! report, per-write records handed to a sink or kept whole, and whether the latency histograms
//! are built on a thread of their own (`histogram_thread`).

use super::histogram_thread::HistogramCollector;
use super::window_trace::{WorstWindow, WorstWindowTrace};
use super::Sim;
use thinlab_trace::{FlowRecorder, WriteSink};

/// What a run keeps beyond its metrics ([`super::run_keeping`]).
#[derive(Default)]
pub struct Keep<'a> {
    /// Flows that keep the application latency of every delivered write as a series of at most
    /// `series_points` points (`FlowRecords::series`: constant memory per flow; `report.html`'s
    /// per-write plots).
    pub series_flows: &'a [usize],
    pub series_points: usize,
    /// Also trace what the series flows did around their worst write
    /// ([`crate::FlowResult::worst_window`]; `None` for a flow whose window would have taken too much
    /// memory to find during the run: [`super::run_traced`] gets it).
    pub worst_window: Option<WorstWindow>,
    /// Hand every flow's write records, in write order, to the sink this makes for the flow
    /// (by index): per-write records without keeping them in memory
    /// (`thinlab_trace::FlowRecorder::with_sink`).
    pub write_sinks: Option<&'a mut dyn FnMut(usize) -> WriteSink>,
    /// Keep every write's record in `FlowRecords::writes` ([`super::run_keeping_writes`]; memory grows
    /// with the writes).
    pub all_writes: bool,
    /// Build the retired writes' latency histograms on a thread of their own, beside the
    /// simulation (for a run that has a core to itself and another to spare; the results are
    /// the same).
    pub histograms_on_thread: bool,
}

impl Keep<'_> {
    /// Sets up `sim`'s flows to keep what this asks for.
    pub(super) fn apply(self, sim: &mut Sim<'_>) {
        if self.all_writes {
            for fl in &mut sim.flows {
                fl.recorder = FlowRecorder::new().counting_rdb_repairs();
            }
        }
        for &f in self.series_flows {
            if let Some(fl) = sim.flows.get_mut(f) {
                fl.recorder = std::mem::take(&mut fl.recorder).with_series(self.series_points);
                if let Some(w) = self.worst_window {
                    fl.trace.get_or_insert_default().worst = Some(WorstWindowTrace::new(w));
                }
            }
        }
        if let Some(make) = self.write_sinks {
            for (f, fl) in sim.flows.iter_mut().enumerate() {
                fl.recorder = std::mem::take(&mut fl.recorder).with_sink(make(f));
            }
        }
        // A recorder that keeps every write retires none.
        if histograms_on_thread(self.histograms_on_thread) && !self.all_writes {
            let thread = HistogramCollector::new(sim.flows.len());
            for (f, fl) in sim.flows.iter_mut().enumerate() {
                fl.recorder = std::mem::take(&mut fl.recorder).with_retire_sink(thread.sink(f));
            }
            sim.histograms = Some(thread);
        }
    }
}

/// Whether a run builds its histograms on a thread of their own: as asked
/// ([`Keep::histograms_on_thread`]), unless `THINLAB_HISTOGRAM_THREAD=on` or `off` overrides
/// (for measuring, and for tests that run every scenario through the thread).
fn histograms_on_thread(asked: bool) -> bool {
    match std::env::var("THINLAB_HISTOGRAM_THREAD").as_deref() {
        Ok("on") => true,
        Ok("off") => false,
        _ => asked,
    }
}
