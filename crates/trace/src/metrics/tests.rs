//! Metrics on hand-computed records (every metric asserted) and percentile/CDF properties.

use super::*;
use crate::records::FlowRecorder;
use proptest::prelude::*;
use thinlab_tcp::event::{Event, SendKind};

fn ms(v: u64) -> Instant {
    Instant::from_millis(v)
}

fn sent(rec: &mut FlowRecorder, at: u64, start: u64, end: u64, kind: SendKind) {
    rec.on_sender_event(&Event::Sent {
        at: ms(at),
        start,
        end,
        kind,
        syn: false,
        fin: false,
    });
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

fn assert_stats(s: &LatencyStats, samples: &[f64]) {
    // samples: sorted, 3 of them: p50 = 2nd, p90..max = 3rd.
    assert_eq!(s.count, samples.len() as u64);
    assert!(
        close(s.mean, samples.iter().sum::<f64>() / samples.len() as f64),
        "{s:?}"
    );
    assert!(close(s.p50, samples[1]), "{s:?}");
    for v in [s.p90, s.p99, s.p999, s.max] {
        assert!(close(v, samples[2]), "{s:?}");
    }
}

/// Five writes: delivered at once, lost then RTO-recovered (twice, one via RDB), sent but
/// never arriving, never sent. Every number below is computed by hand.
fn lossy_records() -> FlowRecords {
    let mut r = FlowRecorder::new();
    r.on_connect(ms(0));
    r.on_write(ms(10), 0, 100);
    sent(&mut r, 10, 0, 100, SendKind::New);
    r.on_receiver_event(&Event::Arrived {
        at: ms(60),
        start: 0,
        end: 100,
    });
    r.on_receiver_event(&Event::Delivered {
        at: ms(60),
        start: 0,
        end: 100,
    });
    r.on_sender_event(&Event::Acked {
        at: ms(110),
        una: 100,
    });
    r.on_write(ms(150), 100, 200);
    sent(&mut r, 151, 100, 200, SendKind::New); // lost
    r.on_write(ms(300), 200, 300);
    sent(&mut r, 300, 100, 300, SendKind::Rdb); // lost; 100 redundant bytes
    r.on_sender_event(&Event::RtoFired {
        at: ms(700),
        rto: Duration::from_millis(400),
        backoff: 1,
    });
    sent(&mut r, 700, 100, 300, SendKind::Rto);
    r.on_receiver_event(&Event::Arrived {
        at: ms(750),
        start: 100,
        end: 300,
    });
    r.on_receiver_event(&Event::Delivered {
        at: ms(750),
        start: 100,
        end: 300,
    });
    sent(&mut r, 760, 100, 200, SendKind::FastRetransmit);
    sent(&mut r, 770, 200, 300, SendKind::Early);
    sent(&mut r, 780, 200, 300, SendKind::Tlp);
    r.on_sender_event(&Event::Acked {
        at: ms(800),
        una: 300,
    });
    r.on_write(ms(900), 300, 350);
    sent(&mut r, 900, 300, 350, SendKind::New); // never arrives
    r.on_write(ms(1000), 350, 400); // never sent
    r.on_close();
    r.set_spurious_retransmissions(2);
    r.finish()
}

#[test]
fn every_metric_of_a_lossy_flow() {
    let m = flow_metrics(&lossy_records(), Duration::from_secs(2));
    // Per write (write → transport/app/ack): w1 50/50/100, w2 600/600/650, w3 450/450/500;
    // from first send: w2 was first sent at 151 ms, so 599/599/649.
    assert_stats(&m.app_latency_ms, &[50.0, 450.0, 600.0]);
    assert_stats(&m.transport_latency_ms, &[50.0, 450.0, 600.0]);
    assert_stats(&m.ack_latency_ms, &[100.0, 500.0, 650.0]);
    assert_stats(&m.app_latency_from_send_ms, &[50.0, 450.0, 599.0]);
    assert_stats(&m.transport_latency_from_send_ms, &[50.0, 450.0, 599.0]);
    assert_stats(&m.ack_latency_from_send_ms, &[100.0, 500.0, 649.0]);
    assert_eq!(m.writes, 5);
    assert_eq!(m.bytes_written, 400);
    assert_eq!(m.bytes_delivered, 300);
    assert_eq!(m.data_packets_sent, 8);
    assert_eq!(m.payload_bytes_sent, 950);
    assert_eq!(m.unique_bytes_sent, 350);
    assert_eq!(m.redundant_bytes_sent, 600);
    assert!(close(m.avg_payload_bytes, 118.75));
    assert_eq!(m.rdb_bundles, 1);
    assert_eq!(m.retransmissions, 4);
    assert_eq!(
        m.retransmissions_by_cause,
        RetransmissionsByCause {
            rto: 1,
            fast: 1,
            rack: 0,
            early: 1,
            er_threshold: 0,
            tlp: 1
        }
    );
    assert_eq!(m.tlp_probes, 1);
    assert_eq!(m.rto_events, 1);
    assert_eq!(m.spurious_retransmissions, 2);
    assert!(close(Some(m.frozen_time_ms), 400.0));
    assert!(close(Some(m.duration_s), 2.0));
    assert!(close(m.goodput_bps, 1200.0));
    assert_eq!(
        m.completion_time_ms, None,
        "finite but not all bytes delivered"
    );
}

#[test]
fn completed_transfer_has_completion_time() {
    let mut r = FlowRecorder::new();
    r.on_connect(ms(5));
    r.on_write(ms(10), 0, 1000);
    sent(&mut r, 10, 0, 500, SendKind::New);
    sent(&mut r, 11, 500, 1000, SendKind::New);
    r.on_receiver_event(&Event::Arrived {
        at: ms(100),
        start: 0,
        end: 500,
    });
    r.on_receiver_event(&Event::Delivered {
        at: ms(100),
        start: 0,
        end: 500,
    });
    r.on_receiver_event(&Event::Arrived {
        at: ms(120),
        start: 500,
        end: 1000,
    });
    r.on_receiver_event(&Event::Delivered {
        at: ms(120),
        start: 500,
        end: 1000,
    });
    r.on_close();
    let rec = r.finish();
    let m = flow_metrics(&rec, Duration::from_millis(500));
    assert!(close(m.completion_time_ms, 115.0));
    assert_eq!(m.app_latency_ms.count, 1);
    assert!(close(m.app_latency_ms.max, 110.0));
    assert!(close(m.app_latency_from_send_ms.max, 110.0));
    assert!(close(m.goodput_bps, 16_000.0));
    // Unbounded flow: no completion time even though everything arrived.
    let open = FlowRecords {
        finite: false,
        ..rec
    };
    assert_eq!(
        flow_metrics(&open, Duration::from_millis(500)).completion_time_ms,
        None
    );
}

#[test]
fn empty_flow_is_all_null_but_counts() {
    let m = flow_metrics(&FlowRecords::default(), Duration::ZERO);
    for s in [m.app_latency_ms, m.ack_latency_from_send_ms] {
        assert_eq!(
            s,
            LatencyStats {
                count: 0,
                ..Default::default()
            }
        );
    }
    assert_eq!(
        (m.avg_payload_bytes, m.goodput_bps, m.completion_time_ms),
        (None, None, None)
    );
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["app_latency_ms"]["p99"], serde_json::Value::Null);
    assert_eq!(json["app_latency_ms"]["count"], serde_json::json!(0));
    assert_eq!(json["goodput_bps"], serde_json::Value::Null);
}

#[test]
fn json_has_every_interface_name() {
    let json =
        serde_json::to_value(flow_metrics(&lossy_records(), Duration::from_secs(1))).unwrap();
    let obj = json.as_object().unwrap();
    let names = [
        "app_latency_ms",
        "transport_latency_ms",
        "ack_latency_ms",
        "app_latency_from_send_ms",
        "transport_latency_from_send_ms",
        "ack_latency_from_send_ms",
        "status",
        "status_reason",
        "writes",
        "writes_delivered",
        "writes_undelivered",
        "bytes_written",
        "bytes_delivered",
        "data_packets_sent",
        "payload_bytes_sent",
        "unique_bytes_sent",
        "redundant_bytes_sent",
        "avg_payload_bytes",
        "rdb_bundles",
        "rdb_repaired_losses",
        "retransmissions",
        "retransmissions_by_cause",
        "tlp_probes",
        "rto_events",
        "spurious_retransmissions",
        "frozen_time_ms",
        "duration_s",
        "goodput_bps",
        "completion_time_ms",
    ];
    for n in names {
        assert!(obj.contains_key(n), "missing {n}");
    }
    assert_eq!(obj.len(), names.len());
    for n in FlowMetrics::LATENCY_NAMES {
        let keys: Vec<&String> = obj[n].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["censored", "count", "max", "mean", "p50", "p90", "p99", "p999"]
        );
        // sorted map
    }
    let by_cause: Vec<&String> = obj["retransmissions_by_cause"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        by_cause,
        ["early", "er_threshold", "fast", "rack", "rto", "tlp"]
    );
}

/// Flattens JSON objects to dotted keys.
fn flatten_json(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten_json(&key, v, out);
            }
        }
        other => out.push((prefix.to_string(), other.clone())),
    }
}

#[test]
fn scalars_match_the_json() {
    let m = flow_metrics(&lossy_records(), Duration::from_secs(2));
    let mut json = Vec::new();
    flatten_json("", &serde_json::to_value(&m).unwrap(), &mut json);
    // The two text fields are not scalars.
    json.retain(|(k, _)| k != "status" && k != "status_reason");
    let mut scalars = m.scalars();
    assert_eq!(scalars.len(), json.len());
    scalars.sort_by(|a, b| a.0.cmp(&b.0));
    json.sort_by(|a, b| a.0.cmp(&b.0));
    for ((k, v), (jk, jv)) in scalars.iter().zip(&json) {
        assert_eq!(k, jk);
        assert_eq!(v.is_none(), jv.is_null(), "{k}");
        if let Some(v) = v {
            assert!((v - jv.as_f64().unwrap()).abs() < 1e-9, "{k}");
        }
    }
    assert_eq!(m.scalars()[0].0, "app_latency_ms.mean");
    assert!(m
        .scalars()
        .iter()
        .any(|(k, v)| k == "retransmissions_by_cause.rto" && *v == Some(1.0)));
}

#[test]
fn nearest_rank_table() {
    let v: Vec<f64> = (1..=100).map(f64::from).collect();
    assert_eq!(nearest_rank(&v, 50, 100), Some(50.0));
    assert_eq!(nearest_rank(&v, 99, 100), Some(99.0));
    assert_eq!(nearest_rank(&v, 999, 1000), Some(100.0));
    assert_eq!(nearest_rank(&v, 0, 100), Some(1.0));
    assert_eq!(nearest_rank(&[7.0], 999, 1000), Some(7.0));
    assert_eq!(nearest_rank(&[], 50, 100), None);
    let s = LatencyStats::from_samples(&[3.0, 1.0, 2.0, 4.0]);
    assert_eq!(
        (s.p50, s.p90, s.max, s.mean, s.count),
        (Some(2.0), Some(4.0), Some(4.0), Some(2.5), 4)
    );
}

#[test]
fn cdf_small_and_downsampled() {
    assert!(latency_cdf(&[], 10).is_empty());
    assert_eq!(
        latency_cdf(&[2.0, 1.0, 2.0, 4.0], 10),
        vec![(1.0, 0.25), (2.0, 0.75), (4.0, 1.0)]
    );
    let v: Vec<f64> = (1..=10_000).map(f64::from).collect();
    let c = latency_cdf(&v, 200);
    assert_eq!(c.first(), Some(&(1.0, 1e-4)));
    // Tail exact: every value from p99 (9900) up is there.
    let tail: Vec<f64> = c.iter().map(|p| p.0).filter(|&x| x >= 9900.0).collect();
    assert_eq!(tail, (9900..=10_000).map(f64::from).collect::<Vec<_>>());
    assert!(c.len() <= 200 + 101, "{}", c.len());
}

#[test]
fn cdf_body_survives_a_long_exact_tail() {
    // 99 000 distinct body values in [0, 99) and a 1 000-value tail: the tail alone is longer
    // than the budget, yet the body must still be drawn, evenly in fraction.
    let mut v: Vec<f64> = (0..99_000).map(|i| f64::from(i) * 0.001).collect();
    v.extend((0..1_000).map(|i| 1000.0 + f64::from(i)));
    let c = latency_cdf(&v, 400);
    let body: Vec<&(f64, f64)> = c.iter().filter(|p| p.0 < 1000.0).collect();
    assert!(body.len() >= 200, "body has {} points", body.len());
    for w in body.windows(2) {
        assert!(
            w[1].1 - w[0].1 <= 0.99 / 199.0 + 2e-5,
            "gap {:?} -> {:?}",
            w[0],
            w[1]
        );
    }
    assert_eq!(c.iter().filter(|p| p.0 >= 1000.0).count(), 1_000);
}

fn samples() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![0.0f64..5_000.0, (0u32..50).prop_map(f64::from)],
        1..400,
    )
}

proptest! {
    #[test]
    fn nearest_rank_is_the_smallest_sample_covering_q(v in samples(), num in 0u64..=1000) {
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        let p = nearest_rank(&sorted, num, 1000).unwrap();
        let k = (v.len() as u64 * num).div_ceil(1000).max(1) as usize;
        let le = v.iter().filter(|&&x| x <= p).count();
        let lt = v.iter().filter(|&&x| x < p).count();
        prop_assert!(v.contains(&p));
        prop_assert!(le >= k, "at least k samples <= p");
        prop_assert!(lt < k, "fewer than k samples < p");
    }

    #[test]
    fn stats_are_ordered(v in samples()) {
        let s = LatencyStats::from_samples(&v);
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let (p50, p90, p99, p999, max, mean) =
            (s.p50.unwrap(), s.p90.unwrap(), s.p99.unwrap(), s.p999.unwrap(), s.max.unwrap(), s.mean.unwrap());
        prop_assert!(min <= p50 && p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= max);
        prop_assert!(mean >= min - 1e-9 && mean <= max + 1e-9);
        prop_assert_eq!(s.count, v.len() as u64);
    }

    #[test]
    fn cdf_is_monotone_and_keeps_the_tail(v in samples(), max_points in 0usize..50) {
        let c = latency_cdf(&v, max_points);
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        prop_assert_eq!(c.first().unwrap().0, sorted[0]);
        prop_assert_eq!(*c.last().unwrap(), (sorted[sorted.len() - 1], 1.0));
        for w in c.windows(2) {
            prop_assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1);
        }
        let p99 = nearest_rank(&sorted, 99, 100).unwrap();
        let mut tail: Vec<f64> = sorted.iter().copied().filter(|&x| x >= p99).collect();
        tail.dedup();
        let got: Vec<f64> = c.iter().map(|p| p.0).filter(|&x| x >= p99).collect();
        prop_assert_eq!(&got, &tail);
        for &(x, f) in &c {
            let le = sorted.iter().filter(|&&y| y <= x).count() as f64 / sorted.len() as f64;
            prop_assert!((le - f).abs() < 1e-12);
        }
        prop_assert!(c.len() <= max_points.max(2) + tail.len() + 1);
    }
}

#[test]
fn undelivered_writes_are_censored_not_dropped() {
    let t = |ms: u64| Instant::from_nanos(ms * 1_000_000);
    let w = |at: u64, start: u64, app: Option<u64>| WriteRecord {
        write_time: t(at),
        start,
        end: start + 10,
        first_send: Some(t(at)),
        transport: app.map(t),
        app: app.map(t),
        acked: app.map(t),
    };
    let mut rec = FlowRecords {
        writes: vec![w(0, 0, Some(20)), w(100, 10, Some(130)), w(200, 20, None)],
        ..FlowRecords::default()
    };
    // Without an end of observation the undelivered write is left out.
    let m = flow_metrics(&rec, Duration::from_secs(1));
    assert_eq!((m.app_latency_ms.count, m.app_latency_ms.censored), (2, 0));
    assert_eq!(m.app_latency_ms.max, Some(30.0));
    assert_eq!((m.writes_delivered, m.writes_undelivered), (2, 1));
    assert_eq!(m.status, crate::FlowStatus::CaptureEnded);
    // Observed until 1 s: the third write waited at least 800 ms and is the tail.
    rec.observed_until = Some(t(1000));
    let m = flow_metrics(&rec, Duration::from_secs(1));
    assert_eq!((m.app_latency_ms.count, m.app_latency_ms.censored), (2, 1));
    assert_eq!(m.app_latency_ms.max, Some(800.0));
    assert_eq!(m.app_latency_ms.p99, Some(800.0));
    assert_eq!(m.app_latency_ms.p50, Some(30.0));
    assert_eq!(m.ack_latency_from_send_ms.censored, 1);
    // What the metrics were computed from is what the functions of its parts give.
    let (with_app, hist, censored) = flow_metrics_and_app_latency(&rec, Duration::from_secs(1));
    assert_eq!(with_app, m);
    assert_eq!(hist, latency_histogram(&rec, Milestone::App, Origin::Write));
    assert_eq!(hist.len(), 2);
    assert_eq!(censored, vec![800.0]);
    // Everything delivered: completed, nothing censored.
    rec.writes[2].app = Some(t(260));
    let m = flow_metrics(&rec, Duration::from_secs(1));
    assert_eq!(m.status, crate::FlowStatus::Completed);
    assert_eq!(m.app_latency_ms.censored, 0);
    assert_eq!(m.writes_undelivered, 0);
}

#[test]
fn causes_sum_to_retransmissions_and_probes_count_both_kinds() {
    let mut r = FlowRecorder::new();
    r.on_write(ms(0), 0, 500);
    for (i, k) in [
        SendKind::New,
        SendKind::RackRetransmit,
        SendKind::EarlyThreshold,
        SendKind::TlpNewData,
        SendKind::Tlp,
        SendKind::FastRetransmit,
    ]
    .into_iter()
    .enumerate()
    {
        let at = 10 * i as u64;
        r.on_sender_event(&Event::Sent {
            at: ms(at),
            start: 0,
            end: 100,
            kind: k,
            syn: false,
            fin: false,
        });
    }
    let recs = r.finish();
    let m = flow_metrics(&recs, Duration::from_secs(1));
    let c = &m.retransmissions_by_cause;
    assert_eq!((c.rack, c.er_threshold, c.tlp, c.fast), (1, 1, 1, 1));
    assert_eq!(
        c.rto + c.fast + c.rack + c.early + c.er_threshold + c.tlp,
        m.retransmissions
    );
    assert_eq!(m.retransmissions, 4);
    assert_eq!(
        m.tlp_probes, 2,
        "a probe of new data and a retransmitting probe"
    );
}

#[test]
fn counts_are_the_integers_of_the_json_and_metrics_round_trip() {
    let mut m = FlowMetrics {
        rdb_repaired_losses: Some(2),
        avg_payload_bytes: Some(100.5),
        goodput_bps: Some(1.0),
        completion_time_ms: Some(3.0),
        ..FlowMetrics::default()
    };
    m.app_latency_ms.p99 = Some(1.25);
    m.app_latency_ms.mean = Some(0.1 + 0.2);
    let json = serde_json::to_value(&m).unwrap();
    for (name, _) in m.scalars() {
        let mut v = &json;
        for part in name.split('.') {
            v = &v[part];
        }
        if !v.is_null() {
            assert_eq!(v.is_u64(), FlowMetrics::is_count(&name), "{name} = {v}");
        }
    }
    let text = serde_json::to_string(&m).unwrap();
    let back: FlowMetrics = serde_json::from_str(&text).unwrap();
    assert_eq!(back, m);
}
