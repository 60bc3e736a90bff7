//! Study `fairness`: do the thin-stream mechanisms stay fair? Petlund et al. (2008), "TCP
//! Enhancements for Interactive Thin-Stream Applications" §2 ("fairness is indeed preserved"),
//! and Petlund & Evensen (2008), "Latency Reducing TCP modifications for thin-stream interactive
//! applications" (the modifications help thin streams "without affecting other streams"). Part
//! `bulk`: eight Skype-like thin streams with none / RDB / all modifications against four bulk
//! flows — the bulk flows' throughput, Jain's fairness index among them, their retransmission
//! share. Part `thin`: the same eight against four thin streams without the modifications — the
//! latency and retransmissions of those four. Jain's index: R. Jain, D. Chiu, W. Hawe, "A
//! Quantitative Measure of Fairness and Discrimination for Resource Allocation in Shared
//! Computer Systems" (DEC-TR-301, 1984).

use super::report::{md_table, num};
use super::{claims, p, Ctx, Ran, Report, Study, Verdict};
use crate::reproduce::ScenarioFile;
use anyhow::Result;
use thinlab_trace::FlowMetrics;
use toml::Value;

pub fn study() -> Study {
    Study {
        name: "fairness",
        title: "Thin streams with RDB against bulk flows and against other thin streams (Petlund et al. 2008)",
        run,
    }
}

const SCENARIO: ScenarioFile = ScenarioFile {
    path: "scenarios/reproduce/fairness.toml",
    text: include_str!("../../../../scenarios/reproduce/fairness.toml"),
};

const MECHANISMS: &str = "flow.0.tcp.mechanisms";
/// Flows 0..THIN are the thin group, THIN..THIN + OTHERS the second group.
const THIN: usize = 8;
const OTHERS: usize = 4;

/// The thin group's mechanisms: plain TCP, RDB, all modifications.
const VARIANTS: [(&str, &[&str]); 3] = [
    ("TCP", &[]),
    ("RDB", &["rdb"]),
    (
        "all modifications",
        &["rdb", "linear-timeouts", "thin-dupack"],
    ),
];

fn mechanisms(m: &[&str]) -> Value {
    Value::Array(m.iter().map(|s| Value::from(*s)).collect())
}

/// Jain's fairness index of `x`: (Σx)² / (n·Σx²); 1 when all are equal, 1/n when one takes all.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || q <= 0.0 {
        f64::NAN
    } else {
        s * s / (x.len() as f64 * q)
    }
}

/// Per configuration, means over repetitions.
struct Measured {
    /// Goodput of each flow of the second group (bit/s).
    others: Vec<f64>,
    /// Summed goodput of the thin group and of the second group.
    thin_sum: f64,
    others_sum: f64,
    /// Retransmissions ÷ data packets of the second group, pooled (%).
    others_retrans: f64,
    /// Mean send-based ACK latency of the second group (ms).
    others_ack_ms: f64,
    /// Mean send-based ACK latency of the thin group (ms).
    thin_ack_ms: f64,
    /// Mean over the thin group of each stream's 99th percentile application latency (ms).
    thin_p99_ms: f64,
    /// Summed payload the thin group put on the link, bit/s (retransmitted and bundled bytes
    /// included).
    thin_sent: f64,
}

fn measure(ran: &Ran, m: &[&str]) -> Result<Measured> {
    let c = ran.find(&[p(MECHANISMS, mechanisms(m))])?;
    let f = |i: usize, g: fn(&FlowMetrics) -> f64| ran.mean(c, i, g);
    let goodput = |x: &FlowMetrics| x.goodput_bps.unwrap_or(f64::NAN);
    let ack = |x: &FlowMetrics| x.ack_latency_from_send_ms.mean.unwrap_or(f64::NAN);
    let others: Vec<f64> = (THIN..THIN + OTHERS).map(|i| f(i, goodput)).collect();
    let sum =
        |r: std::ops::Range<usize>, g: fn(&FlowMetrics) -> f64| r.map(|i| f(i, g)).sum::<f64>();
    let retrans = sum(THIN..THIN + OTHERS, |x| x.retransmissions as f64);
    let packets = sum(THIN..THIN + OTHERS, |x| x.data_packets_sent as f64);
    Ok(Measured {
        thin_sum: sum(0..THIN, goodput),
        others_sum: others.iter().sum(),
        others,
        others_retrans: 100.0 * retrans / packets.max(1.0),
        others_ack_ms: sum(THIN..THIN + OTHERS, ack) / OTHERS as f64,
        thin_ack_ms: sum(0..THIN, ack) / THIN as f64,
        thin_p99_ms: sum(0..THIN, |x| x.app_latency_ms.p99.unwrap_or(f64::NAN)) / THIN as f64,
        thin_sent: sum(0..THIN, |x| {
            x.payload_bytes_sent as f64 * 8.0 / x.duration_s
        }),
    })
}

fn run(ctx: &mut Ctx) -> Result<Report> {
    let (duration, reps) = if ctx.quick { ("40s", 1) } else { ("120s", 3) };
    let sweep = Value::Array(VARIANTS.iter().map(|v| mechanisms(v.1)).collect());
    let base = [
        ("duration", Value::from(duration)),
        ("repetitions", Value::from(reps)),
        ("sweep.flow.0.tcp.mechanisms", sweep),
    ];
    let bulk = ctx.run_file("bulk", &SCENARIO, &base)?;
    let mut sets = base.to_vec();
    sets.push((
        "flow.1.app",
        toml::from_str::<toml::Table>("kind = \"profile\"\nname = \"skype-tcp\"")
            .map(Value::Table)?,
    ));
    sets.push(("flow.1.tcp.nodelay", Value::from(true)));
    sets.push((
        "network.loss",
        toml::from_str::<toml::Table>("model = \"bernoulli\"\nrate = 0.02").map(Value::Table)?,
    ));
    let thin = ctx.run_file("thin", &SCENARIO, &sets)?;
    let b: Vec<Measured> = VARIANTS
        .iter()
        .map(|v| measure(&bulk, v.1))
        .collect::<Result<_>>()?;
    let t: Vec<Measured> = VARIANTS
        .iter()
        .map(|v| measure(&thin, v.1))
        .collect::<Result<_>>()?;
    let mut report = Report {
        intro: format!(
            "Setup ({}): a 4 Mbit/s, 100 ms RTT bottleneck with a 50-packet drop-tail queue; \
             eight thin streams with the Skype-over-TCP profile of Evensen (2008) Table 2.1 \
             (236 B every 34 ms on average, `skype-tcp`, Nagle off), Linux 2.6.22 profile with \
             SACK; starts spread over 2 s. Part `bulk`: four bulk flows (Linux 2.6.22, NewReno \
             + SACK) compete. Part `thin`: the four are thin `skype-tcp` streams without the \
             modifications, and 2 % random loss each way gives the modifications losses to \
             repair (twelve thin streams alone do not fill the link). The thin group runs plain \
             TCP, RDB, or all modifications (RDB, linear timeouts, thin dupACK). {} of {duration} per configuration. Goodput = \
             bytes delivered · 8 / duration; latency = `ack_latency_from_send_ms` (first \
             transmission to cumulative ACK). Neither paper gives a number, so every rule is \
             ours and was written before the first run.\n",
            SCENARIO.path,
            if reps == 1 { "One run".to_string() } else { format!("{reps} runs") },
        ),
        ..Report::default()
    };
    claim_bulk(&mut report, &b);
    claim_thin(&mut report, &t);
    report.check(
        "against bulk flows the four bulk flows together deliver more than the eight thin streams in every configuration (the link is contended)",
        b.iter().all(|m| m.others_sum > m.thin_sum),
    );
    report.check(EXTRA_BYTES, {
        let extra = b[1].thin_sent - b[0].thin_sent;
        let lost = b[0].others_sum - b[1].others_sum;
        extra > 0.0 && (lost - extra).abs() <= 0.25 * extra
    });
    report.check(
        "RDB lowers the thin streams' 99th-percentile application latency against bulk flows and against thin streams",
        b[1].thin_p99_ms < b[0].thin_p99_ms && t[1].thin_p99_ms < t[0].thin_p99_ms,
    );
    report.section(table(&b, &t));
    report.section(format!(
        "## How to rerun\n\n```sh\n{}\n{}\n```\n",
        bulk.command, thin.command
    ));
    Ok(report)
}

/// The check that explains E.4 (named by its `explained_by`).
const EXTRA_BYTES: &str = "against bulk flows, what the bulk flows lose with RDB thin streams is \
     within 25 % of the extra payload RDB puts on the link (bit/s)";

fn claim_bulk(report: &mut Report, b: &[Measured]) {
    let file = claims::of("fairness");
    let share = |m: &Measured| m.others_sum / b[0].others_sum;
    let (tp, tr) = (
        file.num("E.4", "throughput_min"),
        file.num("E.4", "retrans_rel"),
    );
    let ok = |m: &Measured, min: f64| {
        share(m) >= min && m.others_retrans <= b[0].others_retrans * (1.0 + tr) + 0.1
    };
    let jmin = file.num("E.4", "jain_min");
    let fair = b.iter().all(|m| jain(&m.others) >= jmin);
    report.claim(
        "E.4",
        "\"fairness is indeed preserved\" (no number)",
        b.iter()
            .zip(VARIANTS)
            .map(|(m, v)| {
                format!(
                    "thin {}: bulk {} Mbit/s ({:.1} % of against TCP), Jain {:.3}, bulk retrans. {} %, thin {} Mbit/s",
                    v.0,
                    num(m.others_sum / 1e6, 2),
                    100.0 * share(m),
                    jain(&m.others),
                    num(m.others_retrans, 2),
                    num(m.thin_sum / 1e6, 2)
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        Verdict::of(
            b[1..].iter().all(|m| ok(m, tp)) && fair,
            b[1..].iter().all(|m| ok(m, file.num("E.4", "shape_throughput_min"))),
        ),
        "RDB resends unacknowledged data in every packet, so its streams put more bytes on the \
         bottleneck than plain TCP's (about as many packets); the bulk flows' share is what is \
         left of the link and their retransmissions count the losses that the extra bytes \
         cause in the shared queue.",
    );
}

fn claim_thin(report: &mut Report, t: &[Measured]) {
    let file = claims::of("fairness");
    let rel = file.num("E.8", "rel");
    let lat = |m: &Measured| m.others_ack_ms / t[0].others_ack_ms - 1.0;
    report.claim(
        "E.8",
        "the modifications improve thin streams \"without affecting other streams\" (no number)",
        t.iter()
            .zip(VARIANTS)
            .map(|(m, v)| {
                format!(
                    "group {}: its p99 app latency {} ms, the four plain streams' mean ACK latency {} ms ({:+.1} %), their retrans. {} %",
                    v.0,
                    num(m.thin_p99_ms, 0),
                    num(m.others_ack_ms, 1),
                    100.0 * lat(m),
                    num(m.others_retrans, 2)
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        Verdict::of(
            t[1..].iter().all(|m| lat(m) <= rel && m.thin_p99_ms < t[0].thin_p99_ms),
            t[1..].iter().all(|m| lat(m) <= file.num("E.8", "shape_rel")),
        ),
        "The four plain thin streams' latency includes the queueing delay the other eight \
         streams cause; RDB's larger packets take longer to serialise and fill the queue more.",
    );
}

fn table(b: &[Measured], t: &[Measured]) -> String {
    let mut rows = Vec::new();
    for (part, ms) in [("against bulk", b), ("against thin", t)] {
        for (m, v) in ms.iter().zip(VARIANTS) {
            rows.push(vec![
                part.to_string(),
                v.0.to_string(),
                num(m.thin_sum / 1e6, 3),
                num(m.thin_ack_ms, 1),
                num(m.thin_p99_ms, 0),
                num(m.thin_sent / 1e6, 3),
                num(m.others_sum / 1e6, 3),
                format!("{:.3}", jain(&m.others)),
                num(m.others_retrans, 2),
                num(m.others_ack_ms, 1),
            ]);
        }
    }
    let mut s = String::from("## Per configuration (means over runs)\n\n");
    s += &md_table(
        &[
            "part",
            "thin group",
            "thin goodput (Mbit/s, 8 streams)",
            "thin mean ACK latency (ms)",
            "thin p99 app latency (ms)",
            "thin payload sent (Mbit/s)",
            "other group goodput (Mbit/s, 4 flows)",
            "Jain's index (other group)",
            "other group retrans. (%)",
            "other group mean ACK latency (ms)",
        ],
        &rows,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::report::within;

    #[test]
    fn jains_index() {
        assert!(within(jain(&[1.0, 1.0, 1.0, 1.0]), 1.0, 1e-12));
        assert!(within(jain(&[1.0, 0.0, 0.0, 0.0]), 0.25, 1e-12));
        assert!(within(jain(&[2.0, 1.0]), 0.9, 1e-12));
        assert!(jain(&[]).is_nan());
    }
}
