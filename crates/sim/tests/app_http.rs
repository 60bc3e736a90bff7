//! `app.kind = "http"`: the ns-2-style web background source in a run (defaults, page sizes
//! and gaps over many pages, determinism, a bottleneck shared with a CBR flow) and its
//! validation errors.

use std::time::Duration;
use thinlab_sim::app_http::Http;
use thinlab_sim::{run, run_keeping_writes, App, Scenario, ScenarioError};

fn scenario(app: &str, duration: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_toml_str(&format!(
        r#"
        name = "h"
        duration = "{duration}"
        [network]
        rtt = "50ms"
        bandwidth = "100Mbit"
        [[flow]]
        name = "web"
        app = {app}
        tcp = {{ profile = "ns2", sack = true }}
        "#
    ))
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

#[test]
fn defaults_are_ns2_webtraf_example_values() {
    let s = scenario(r#"{ kind = "http" }"#, "10s").unwrap();
    assert_eq!(
        s.flows[0].app,
        App::Http(Http {
            mean_page_bytes: 10_000.0,
            shape: 1.2,
            mean_off: Duration::from_secs(1),
        })
    );
    let s = scenario(
        r#"{ kind = "http", payload_bytes = 5000, shape = 2.5, off = "200ms" }"#,
        "10s",
    )
    .unwrap();
    assert_eq!(
        s.flows[0].app,
        App::Http(Http {
            mean_page_bytes: 5000.0,
            shape: 2.5,
            mean_off: Duration::from_millis(200),
        })
    );
}

#[test]
fn pages_in_a_run_have_the_configured_moments() {
    // Shape 3 (finite variance) so the mean page size can be checked; 2000 s / 200 ms ≈ 10⁴ pages.
    let s = scenario(
        r#"{ kind = "http", payload_bytes = 4000, shape = 3.0, off = "200ms" }"#,
        "2000s",
    )
    .unwrap();
    let r = run_keeping_writes(&s, 3);
    let rec = &r.flows[0].records;
    let sizes: Vec<f64> = rec
        .writes
        .iter()
        .map(|w| (w.end - w.start) as f64)
        .collect();
    let gaps: Vec<f64> = rec
        .writes
        .windows(2)
        .map(|w| (w[1].write_time.as_nanos() - w[0].write_time.as_nanos()) as f64 / 1e6)
        .collect();
    assert!(
        (9_500..10_500).contains(&sizes.len()),
        "{} pages",
        sizes.len()
    );
    let m = mean(&sizes);
    assert!((m - 4000.0).abs() < 4000.0 * 0.04, "mean page {m}");
    let g = mean(&gaps);
    assert!((g - 200.0).abs() < 200.0 * 0.03, "mean gap {g} ms");
    // Exponential gaps: P(gap < mean) = 1 − 1/e.
    let below = gaps.iter().filter(|&&x| x < 200.0).count() as f64 / gaps.len() as f64;
    assert!((below - 0.632).abs() < 0.02, "F(mean) = {below}");
    // Lossless and uncongested: every page delivered.
    let total = rec.writes.last().unwrap().end;
    assert_eq!(rec.bytes_delivered, total);
}

#[test]
fn same_seed_same_pages_other_seed_other_pages() {
    let s = scenario(r#"{ kind = "http", off = "100ms" }"#, "30s").unwrap();
    let sizes = |seed| -> Vec<u64> {
        run(&s, seed).flows[0]
            .records
            .writes
            .iter()
            .map(|w| w.end - w.start)
            .collect()
    };
    assert_eq!(sizes(1), sizes(1));
    assert_ne!(sizes(1), sizes(2));
}

#[test]
fn http_background_shares_a_bottleneck_with_cbr() {
    let mut text = String::from(
        r#"
        name = "mix"
        duration = "20s"
        [network]
        rtt = "50ms"
        bandwidth = "25Mbit"
        queue_bytes = "80KB"
        [[flow]]
        name = "cbr"
        access_bandwidth = "10Mbit"
        app = { kind = "cbr", rate = "300kbit", payload_bytes = 1000 }
        tcp = { profile = "ns2", cc = "pert", sack = true, mechanisms = ["er-threshold"] }
        "#,
    );
    for i in 0..50 {
        text += &format!(
            "[[flow]]\nname = \"http{i}\"\naccess_bandwidth = \"10Mbit\"\nstart = \"{}ms\"\n\
             app = {{ kind = \"http\", off = \"500ms\" }}\ntcp = {{ profile = \"ns2\", sack = true }}\n",
            i * 100
        );
    }
    let s = Scenario::from_toml_str(&text).unwrap();
    let r = run_keeping_writes(&s, 1);
    let cbr = &r.flows[0].records;
    assert!(cbr.writes.len() > 700, "{}", cbr.writes.len());
    let pages: usize = r.flows[1..].iter().map(|f| f.records.writes.len()).sum();
    // 50 flows × ~(20 s − start) / 0.5 s ≈ 1500 pages.
    assert!((1_000..2_200).contains(&pages), "{pages} pages");
    let delivered: u64 = r.flows[1..].iter().map(|f| f.records.bytes_delivered).sum();
    assert!(
        delivered > 5_000_000,
        "{delivered} bytes of pages delivered"
    );
}

fn err(app: &str) -> String {
    scenario(app, "10s").unwrap_err().to_string()
}

#[test]
fn bad_http_parameters_name_the_key() {
    let e = err(r#"{ kind = "http", shape = 1.0 }"#);
    assert!(
        e.contains("flow.0.app.shape") && e.contains("(1, 100]"),
        "{e}"
    );
    let e = err(r#"{ kind = "http", payload_bytes = 0.5 }"#);
    assert!(e.contains("flow.0.app.payload_bytes"), "{e}");
    let e = err(r#"{ kind = "http", off = "0s" }"#);
    assert!(
        e.contains("flow.0.app.off") && e.contains("positive"),
        "{e}"
    );
    let e = err(r#"{ kind = "http", interval = "1s" }"#);
    assert!(
        e.contains("flow.0.app.interval") && e.contains("payload_bytes, off, shape"),
        "{e}"
    );
    let e = err(r#"{ kind = "http", on = "1s" }"#);
    assert!(e.contains("on"), "{e}");
    let e = err(r#"{ kind = "cbr", rate = "1Mbit", payload_bytes = 100, shape = 2.0 }"#);
    assert!(e.contains("flow.0.app.shape"), "{e}");
}
