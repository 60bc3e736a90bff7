//! `thinlab run --format parquet` spills per-write rows to a temporary file as the run goes
//! (`Job::spill_writes`). The rows it gives back must be exactly those a run keeping every
//! write in memory gives (`Job::keep_writes`): same table, row for row, with a sweep (typed
//! parameter columns), repetitions, several flows, loss and a flow that never finishes.

use arrow_array::RecordBatch;
use std::time::Duration;
use thinlab_cli::output::Results;
use thinlab_cli::progress::Progress;
use thinlab_cli::run::prepare;
use thinlab_cli::runner::{jobs, run_all, RunOutput};
use thinlab_cli::tables::{for_each_writes_batch, write_writes_ipc_file};

const SCENARIO: &str = r#"
name = "spill"
duration = "20s"
repetitions = 2
[network]
rtt = "80ms"
bandwidth = "4Mbit"
queue_packets = 30
[network.loss]
model = "bernoulli"
rate = 0.02
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 50, interval = "2ms" }
tcp = { profile = "linux", nodelay = true }
[[flow]]
name = "bulk"
app = { kind = "bulk" }
[[flow]]
name = "late"
start = "19.9s"
app = { kind = "fixed", payload_bytes = 300, interval = "10ms" }
[sweep]
"network.loss.rate" = [0.0, 0.03]
"#;

/// Every row of `results`' writes table, as one batch.
fn writes_batch(results: &Results) -> anyhow::Result<RecordBatch> {
    let mut batches = Vec::new();
    for_each_writes_batch(results, |b| {
        batches.push(b);
        Ok(())
    })?;
    Ok(arrow_select::concat::concat_batches(
        &batches[0].schema(),
        &batches,
    )?)
}

/// The runs keeping their writes in memory or spilling them, capturing pcap files into
/// `capture` if given.
fn run(
    spill: bool,
    capture: Option<&std::path::Path>,
) -> (thinlab_cli::run::Prepared, Vec<RunOutput>) {
    let doc: toml::Value = toml::from_str(SCENARIO).unwrap();
    let prepared = prepare(doc, &[], "test").unwrap();
    let mut js = jobs(&prepared.scenarios);
    for (i, j) in js.iter_mut().enumerate() {
        j.keep_writes = !spill;
        j.spill_writes = spill;
        j.capture = capture.map(|dir| thinlab_sim::CaptureOptions {
            dir: dir.join(format!("job{i}")),
            all_flows: true,
        });
    }
    let progress = Progress::new(Duration::from_secs(20), js.len(), true);
    let runs = run_all(&prepared.scenarios, &js, 2, &progress).unwrap();
    (prepared, runs)
}

#[test]
fn spilled_rows_are_the_rows_kept_in_memory() {
    let (p_mem, mem) = run(false, None);
    let (p_spill, spilled) = run(true, None);
    check(&p_mem, &mem, &p_spill, &spilled);
}

#[test]
fn capturing_runs_keep_every_row_too() {
    // `--capture --format parquet` once kept only the writes still in progress at the end.
    let dir = tempfile::tempdir().unwrap();
    let (p_mem, mem) = run(false, Some(&dir.path().join("mem")));
    let (p_spill, spilled) = run(true, Some(&dir.path().join("spill")));
    check(&p_mem, &mem, &p_spill, &spilled);
    let (p_plain, plain) = run(true, None);
    check(&p_plain, &plain, &p_spill, &spilled);
}

#[test]
fn spilled_rows_read_back_for_another_process_and_into_an_ipc_file() {
    // The Python API spills too: a run handed to another process (Ray, a campaign's store)
    // carries its rows in memory, and `Results.writes` maps an Arrow IPC file of them.
    let (p_mem, mem) = run(false, None);
    let (p_spill, spilled) = run(true, None);
    let in_memory: Vec<RunOutput> = spilled
        .iter()
        .map(|r| r.with_writes_in_memory().unwrap())
        .collect();
    assert!(in_memory.iter().all(|r| r.write_spill.is_none()));
    for (a, b) in in_memory.iter().zip(&mem) {
        let writes = |r: &RunOutput| r.flows.iter().map(|f| f.writes.clone()).collect::<Vec<_>>();
        assert!(writes(a).iter().all(Option::is_some));
        assert_eq!(writes(a), writes(b));
    }
    check(&p_mem, &mem, &p_spill, &spilled);

    let results = Results {
        scenario: &p_spill.name,
        overrides: &[],
        configs: &p_spill.configs,
        runs: &spilled,
        complete: true,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("writes.arrow");
    // small batches, so that several are gathered and several written
    let rows = write_writes_ipc_file(&results, &path, 5_000).unwrap();
    let reader =
        arrow_ipc::reader::FileReader::try_new(std::fs::File::open(&path).unwrap(), None).unwrap();
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    assert!(batches.len() > 2, "too few batches: {}", batches.len());
    assert!(batches[..batches.len() - 1]
        .iter()
        .all(|b| b.num_rows() >= 5_000));
    let read = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap();
    let want = writes_batch(&results).unwrap();
    assert_eq!(rows, want.num_rows() as u64);
    assert_eq!(read, want);
}

fn check(
    p_mem: &thinlab_cli::run::Prepared,
    mem: &[RunOutput],
    p_spill: &thinlab_cli::run::Prepared,
    spilled: &[RunOutput],
) {
    assert!(spilled.iter().all(|r| r.write_spill.is_some()));
    assert!(spilled
        .iter()
        .all(|r| r.flows.iter().all(|f| f.writes.is_none())));
    let table = |p: &thinlab_cli::run::Prepared, runs: &[RunOutput]| {
        writes_batch(&Results {
            scenario: &p.name,
            overrides: &[],
            configs: &p.configs,
            runs,
            complete: true,
        })
        .unwrap()
    };
    let (a, b) = (table(p_mem, mem), table(p_spill, spilled));
    assert!(
        a.num_rows() > 10_000,
        "too few writes to test: {}",
        a.num_rows()
    );
    assert_eq!(a.schema(), b.schema());
    assert_eq!(a, b);
    // Every other output is the same too.
    for (m, s) in mem.iter().zip(spilled) {
        for (fm, fs) in m.flows.iter().zip(&s.flows) {
            assert_eq!(fm.metrics, fs.metrics);
            assert_eq!(fm.app_latency, fs.app_latency);
        }
    }
}
