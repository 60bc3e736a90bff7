//! Study `evensen-apps`: Evensen (2008) §4.2, claims B.* of its report
//! (docs/reproduction/evensen-apps/report.md). Skype (TCP), SSH and BZFlag traffic over 130 ms RTT
//! with 2 % and 5 % loss each way, plain TCP against RDB and against all the modifications (RDB,
//! linear timeouts, thin dupACK): retransmission share, latency, bandwidth and the
//! application-layer latency CDFs of Tables 4.4–4.6 and Figures 4.7–4.14. Evensen replayed captured
//! traces, which are not public; the traffic here comes from the Table 2.1 profiles (`app.kind =
//! "profile"`, docs/app-profiles.md).

mod wow;

use super::figure;
use super::report::{md_table, num, within};
use super::{claims, p, Ctx, Ran, Report, Study, Verdict};
use crate::reproduce::ScenarioFile;
use anyhow::Result;
use thinlab_trace::plot::View;
use thinlab_trace::FlowMetrics;
use toml::Value;

pub fn study() -> Study {
    Study {
        name: "evensen-apps",
        title: "Evensen (2008) §4.2: Skype, SSH and BZFlag over a lossy 130 ms path, World of Warcraft over two Internet paths, TCP vs RDB",
        run,
    }
}

const SCENARIO: ScenarioFile = ScenarioFile {
    path: "scenarios/reproduce/evensen-apps.toml",
    text: include_str!("../../../../scenarios/reproduce/evensen-apps.toml"),
};

const APP: &str = "flow.0.app.name";
const LOSS: &str = "network.loss.rate";
const MECHANISMS: &str = "flow.0.tcp.mechanisms";
/// One-way propagation delay of the 130 ms RTT path, ms: the "optimal delivery time".
const ONE_WAY_MS: f64 = 65.0;
/// Ethernet + IPv4 + TCP headers with timestamps, bytes: Evensen's packet sizes in Tables 4.4–4.6
/// include them (Tables 4.1–4.3 are payload only).
const HEADER_BYTES: f64 = 66.0;

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Tcp,
    Rdb,
    All,
}

impl Variant {
    const ALL: [Variant; 3] = [Variant::Tcp, Variant::Rdb, Variant::All];
    fn label(self) -> &'static str {
        match self {
            Variant::Tcp => "TCP",
            Variant::Rdb => "RDB",
            Variant::All => "all modifications",
        }
    }
    fn mechanisms(self) -> Value {
        let m: &[&str] = match self {
            Variant::Tcp => &[],
            Variant::Rdb => &["rdb"],
            Variant::All => &["rdb", "linear-timeouts", "thin-dupack"],
        };
        Value::Array(m.iter().map(|s| Value::from(*s)).collect())
    }
}

/// A row of Tables 4.4–4.6: retransmission share %, average packet size with headers (B),
/// average and maximum latency (ms).
struct SeedRow {
    retrans: f64,
    packet: f64,
    avg: f64,
    max: f64,
}

/// Evensen's rows: (app, loss, TCP, RDB).
const SEED: [(&str, f64, SeedRow, SeedRow); 6] = [
    (
        "skype-tcp",
        0.02,
        SeedRow {
            retrans: 1.97,
            packet: 322.0,
            avg: 149.8,
            max: 11018.0,
        },
        SeedRow {
            retrans: 0.03,
            packet: 1154.0,
            avg: 132.0,
            max: 22018.0,
        },
    ),
    (
        "skype-tcp",
        0.05,
        SeedRow {
            retrans: 4.88,
            packet: 381.0,
            avg: 182.8,
            max: 22772.0,
        },
        SeedRow {
            retrans: 0.18,
            packet: 1124.0,
            avg: 136.6,
            max: 11015.0,
        },
    ),
    (
        "ssh",
        0.02,
        SeedRow {
            retrans: 2.25,
            packet: 167.0,
            avg: 148.7,
            max: 22930.0,
        },
        SeedRow {
            retrans: 0.48,
            packet: 223.0,
            avg: 136.6,
            max: 10800.0,
        },
    ),
    (
        "ssh",
        0.05,
        SeedRow {
            retrans: 5.53,
            packet: 171.0,
            avg: 181.9,
            max: 21739.0,
        },
        SeedRow {
            retrans: 1.38,
            packet: 228.0,
            avg: 146.5,
            max: 10954.0,
        },
    ),
    (
        "bzflag",
        0.02,
        SeedRow {
            retrans: 1.98,
            packet: 112.0,
            avg: 150.0,
            max: 21930.0,
        },
        SeedRow {
            retrans: 0.0,
            packet: 267.0,
            avg: 131.5,
            max: 10989.0,
        },
    ),
    (
        "bzflag",
        0.05,
        SeedRow {
            retrans: 4.91,
            packet: 129.0,
            avg: 182.9,
            max: 22050.0,
        },
        SeedRow {
            retrans: 0.02,
            packet: 269.0,
            avg: 133.5,
            max: 22061.0,
        },
    ),
];

/// Evensen's application-layer CDF statements: (app, loss, share of data, TCP's extra latency at
/// that share ms, RDB's ms; `None` = "instantly"/"almost at once").
const SEED_CDF: [(&str, f64, f64, f64, Option<f64>); 6] = [
    ("skype-tcp", 0.02, 0.98, 221.0, Some(0.0)),
    ("skype-tcp", 0.05, 0.98, 388.0, Some(46.0)),
    ("ssh", 0.02, 0.97, 400.0, None),
    ("ssh", 0.05, 0.94, 400.0, None),
    ("bzflag", 0.02, 0.99, 283.0, None),
    ("bzflag", 0.05, 0.98, 393.0, None),
];

/// What we measured for one (app, loss, variant).
struct Measured {
    retrans: f64,
    packet: f64,
    payload: f64,
    /// Mean time to the cumulative ACK from the write's first transmission (what a capture
    /// sees; Evensen's tables), and from the write call.
    avg: f64,
    avg_write: f64,
    max: f64,
    packets: f64,
    /// Mean interval between data packets sent (duration ÷ packets) and between writes, ms.
    packet_interval: f64,
    write_interval: f64,
    bytes: f64,
    unique: f64,
    /// Extra application-layer latency (latency − one-way delay) of every write, ms.
    extra: Vec<f64>,
}

fn measure(ran: &Ran, app: &str, loss: f64, v: Variant) -> Result<Measured> {
    let c = ran.find(&[p(APP, app), p(LOSS, loss), p(MECHANISMS, v.mechanisms())])?;
    let m = |f: fn(&FlowMetrics) -> f64| ran.mean(c, 0, f);
    let payload = m(|m| m.avg_payload_bytes.unwrap_or(f64::NAN));
    let mut extra: Vec<f64> = ran
        .pooled_latency(c, 0)
        .iter()
        .map(|l| l - ONE_WAY_MS)
        .collect();
    extra.sort_unstable_by(f64::total_cmp);
    Ok(Measured {
        retrans: m(|m| 100.0 * m.retransmissions as f64 / (m.data_packets_sent.max(1)) as f64),
        packet: payload + HEADER_BYTES,
        payload,
        avg: m(|m| m.ack_latency_from_send_ms.mean.unwrap_or(f64::NAN)),
        avg_write: m(|m| m.ack_latency_ms.mean.unwrap_or(f64::NAN)),
        max: m(|m| m.ack_latency_from_send_ms.max.unwrap_or(f64::NAN)),
        packets: m(|m| m.data_packets_sent as f64),
        packet_interval: m(|m| 1000.0 * m.duration_s / m.data_packets_sent.max(1) as f64),
        write_interval: m(|m| 1000.0 * m.duration_s / m.writes.max(1) as f64),
        bytes: m(|m| m.payload_bytes_sent as f64),
        unique: m(|m| m.unique_bytes_sent as f64),
        extra,
    })
}

/// The `share` quantile of sorted samples (nearest rank; `share` to 1/10 000).
fn quantile(sorted: &[f64], share: f64) -> f64 {
    let num = (share * 10_000.0).round() as u64;
    thinlab_trace::metrics::nearest_rank(sorted, num, 10_000).unwrap_or(f64::NAN)
}

fn run(ctx: &mut Ctx) -> Result<Report> {
    let (duration, label) = if ctx.quick {
        ("10min", "10 minutes")
    } else {
        ("8h", "8 hours")
    };
    let sets: Vec<(&str, Value)> = vec![
        ("duration", Value::from(duration)),
        (
            "sweep.flow.0.app.name",
            Value::Array(["skype-tcp", "ssh", "bzflag"].map(Value::from).to_vec()),
        ),
        (
            "sweep.network.loss.rate",
            Value::Array(vec![Value::from(0.02), Value::from(0.05)]),
        ),
        (
            "sweep.flow.0.tcp.mechanisms",
            Value::Array(Variant::ALL.iter().map(|v| v.mechanisms()).collect()),
        ),
    ];
    let ran = ctx.run_file("apps", &SCENARIO, &sets)?;
    let mut report = Report {
        intro: format!(
            "Setup ({}): 130 ms RTT, 100 Mbit/s, 2 % or 5 % uniform random loss in each \
             direction, Linux 2.6.22 profile, Nagle off; one run of {label} per point (the \
             seed: one 8-hour replay per point). Evensen replayed captures of Skype over TCP, \
             an SSH session and BZFlag with tracepump; those captures are not public, so the \
             writes come from the Table 2.1 profiles `skype-tcp` (236 B, 34 ms mean), `ssh` \
             (48 B, 323 ms) and `bzflag` (30 B, 24 ms), fitted as docs/app-profiles.md \
             describes. Evensen's replayed dumps differed from Table 2.1 (its Skype dump had a \
             19 ms mean interval, its SSH dump 116 B every 83 ms), so per-packet figures are \
             expected to differ. *Latency* in Tables 4.4–4.6 is the time to the ACK (its \
             minimum is the RTT, 130 ms) as a capture at the sender sees it, from a packet's \
             first transmission: we compare `ack_latency_from_send_ms`. Packet sizes in those \
             tables include ~66 B of headers: we add 66 B to our average payload. SSH ran \
             with the modifications at both ends in Evensen (2008); here only the sender has them.\n",
            SCENARIO.path
        ),
        ..Report::default()
    };
    let mut rows = Vec::new();
    let mut all_ok = true;
    for (app, loss, tcp_seed, rdb_seed) in &SEED {
        let tcp = measure(&ran, app, *loss, Variant::Tcp)?;
        let rdb = measure(&ran, app, *loss, Variant::Rdb)?;
        let all = measure(&ran, app, *loss, Variant::All)?;
        let l = loss * 100.0;
        let close = |o: f64, s: f64| (o - s).abs() <= 0.25 * s + 0.1;
        let rt_ok = close(tcp.retrans, tcp_seed.retrans) && close(rdb.retrans, rdb_seed.retrans);
        let shape = rdb.retrans < 0.5 * tcp.retrans;
        // Where writes come faster than RTO − RTT (Skype, BZFlag), the next write nearly
        // always repairs a loss before the RTO; SSH's long gaps leave it less to do.
        all_ok &= if *app == "ssh" {
            rdb.retrans < 0.75 * tcp.retrans
        } else {
            rdb.retrans < tcp.retrans / 3.0
        };
        report.claim(
            &format!("B.{app}.{l:.0}a"),
            format!("{} % → {} %", tcp_seed.retrans, rdb_seed.retrans),
            format!(
                "{} % → {} % (all modifications {} %)",
                num(tcp.retrans, 2),
                num(rdb.retrans, 2),
                num(all.retrans, 2)
            ),
            Verdict::of(rt_ok, shape),
            retrans_note(app),
        );
        let file = claims::of("evensen-apps");
        let id = format!("B.{app}.{l:.0}b");
        let rel = file.num(&id, "rel");
        let avg_ok = within(tcp.avg, tcp_seed.avg, rel) && within(rdb.avg, rdb_seed.avg, rel);
        report.claim(
            &id,
            format!("{} → {}", tcp_seed.avg, rdb_seed.avg),
            format!(
                "{} → {} (all {}); from the write call {} → {}",
                num(tcp.avg, 1),
                num(rdb.avg, 1),
                num(all.avg, 1),
                num(tcp.avg_write, 1),
                num(rdb.avg_write, 1),
            ),
            Verdict::of(avg_ok, rdb.avg < tcp.avg),
            format!(
                "Time from the first transmission of a write's first byte to its cumulative ACK \
                 (`ack_latency_from_send_ms`), mean over writes: what Evensen's analyser saw in \
                 its captures. Reproduced within {:.0} %. From the write call TCP's mean is higher \
                 at 5 % loss, where writes queue in the send buffer behind the window after RTOs.",
                100.0 * rel
            ),
        );
        let id = format!("B.{app}.{l:.0}c");
        let series = file.num(&id, "min_ms");
        let max_rel = file.num(&id, "rel");
        let backoffs = |x: f64| num((x / 330.0 + 1.0).log2(), 1);
        report.claim(
            &id,
            format!("{} → {}", tcp_seed.max, rdb_seed.max),
            format!("{} → {}", num(tcp.max, 0), num(rdb.max, 0)),
            Verdict::of(
                within(tcp.max, tcp_seed.max, max_rel) && within(rdb.max, rdb_seed.max, max_rel),
                tcp.max >= series && rdb.max >= series,
            ),
            format!(
                "Largest time from a write's first transmission to its ACK. All twelve of \
                 Evensen's maxima sit at ≈ 11 s or ≈ 22 s, for RDB as for TCP: 11.0 s and 22.0 s \
                 are RTO·2⁵ and RTO·2⁶ for RTO ≈ 344 ms, single backoff intervals rather than \
                 the sum of a series (a segment lost five times in a row waits RTO·31). In shape \
                 when both of ours reach a series of that length (≥ {} s); ours are {} / {} \
                 RTOs of backoff (log2(max / 330 ms + 1)). With independent loss a run of five \
                 losses of one segment is rare (0.02⁵ ≈ 3·10⁻⁹ per segment at 2 %), and our \
                 maxima stay shorter; what in Evensen's setup or analyser produced maxima at \
                 exactly these two values is not known.",
                num(series / 1000.0, 0),
                backoffs(tcp.max),
                backoffs(rdb.max)
            ),
        );
        rows.push((app, l, tcp, rdb, all));
    }

    // Application-layer CDF statements.
    for (app, loss, share, tcp_s, rdb_s) in &SEED_CDF {
        let l = loss * 100.0;
        let r = rows
            .iter()
            .find(|r| r.0 == app && (r.1 - l).abs() < 1e-9)
            .expect("row");
        let (t, d) = (quantile(&r.2.extra, *share), quantile(&r.3.extra, *share));
        let instant = 10.0;
        let rdb_seed = rdb_s.map_or("≈ 0 (\"instantly\")".to_string(), |v| format!("{v} ms"));
        let number = within(t, *tcp_s, 0.2)
            && rdb_s.map_or(d <= instant, |v| (d - v).abs() <= 0.2 * v + instant);
        let shape = d < 0.5 * t;
        all_ok &= shape;
        report.claim(
            &format!("B.{app}.{l:.0}d"),
            format!("TCP {tcp_s} ms, RDB {rdb_seed}"),
            format!("TCP {} ms, RDB {} ms", num(t, 0), num(d, 0)),
            Verdict::of(number, shape),
            format!(
                "Extra latency = application-layer latency − the 65 ms one-way delay, per write. \
                 Reproduced when TCP is within 20 % and RDB within 20 % + {instant} ms. RDB \
                 repairs a lost write with the next one, so where the share equals about 1 − \
                 loss, RDB's figure is about one write interval (34 ms Skype; BZFlag's \
                 intervals have a long tail, p99 151 ms), not 0 as Evensen's plots show."
            ),
        );
    }

    // Bandwidth.
    let ratio = |app: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| *r.0 == app)
            .map(|r| (r.1, r.3.packet / r.2.packet))
            .collect()
    };
    for (app, seed_text, lo, hi) in [
        (
            "skype-tcp",
            "≈ 4× larger packets (322 → 1154 B, 381 → 1124 B)",
            2.5,
            5.0,
        ),
        (
            "bzflag",
            "≈ 2.5× larger packets (112 → 267 B, 129 → 269 B)",
            1.8,
            3.2,
        ),
    ] {
        let r = ratio(app);
        let ok = r.iter().all(|x| x.1 >= lo && x.1 <= hi);
        report.claim(
            &format!("B.{app}.bw"),
            seed_text,
            r.iter()
                .map(|x| format!("{} % loss: {:.2}×", x.0, x.1))
                .collect::<Vec<_>>()
                .join(", "),
            Verdict::of(ok, r.iter().all(|x| x.1 > 1.3)),
            format!(
                "Reproduced when within {lo}–{hi}×. A bundle carries what was written during \
                 about one RTT, capped by the MSS: Evensen's Skype dump wrote every 19 ms, \
                 Table 2.1's Skype every 34 ms, so our bundles hold fewer writes."
            ),
        );
    }
    let ssh: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| *r.0 == "ssh")
        .map(|r| (r.1, r.3.packet - r.2.packet))
        .collect();
    report.claim(
        "B.ssh.bw",
        "+56 B (2 %), +57 B (5 %)",
        ssh.iter()
            .map(|x| format!("{} %: {:+.0} B", x.0, x.1))
            .collect::<Vec<_>>()
            .join(", "),
        Verdict::of(
            ssh.iter().all(|x| x.1 >= 40.0 && x.1 <= 75.0),
            ssh.iter().all(|x| x.1 > 0.0),
        ),
        "Reproduced within 40–75 B. Our SSH writes are Table 2.1's 48 B every 323 ms (mean), \
         so a bundle rarely finds unacknowledged data and carries small writes; Evensen's SSH \
         dump sent 116 B every 83 ms, which bundles more and larger writes.",
    );

    overhead_claims(&mut report, &rows);
    interval_claims(&mut report, &rows);

    report.check("RDB retransmits less than a third as often as TCP for Skype and BZFlag (less than 3/4 for SSH's long gaps), and delivers Evensen's CDF share with less than half TCP's extra latency", all_ok);
    report.check(
        "all modifications together keep RDB's mean ACK latency (within 5 %)",
        rows.iter().all(|r| r.4.avg <= 1.05 * r.3.avg),
    );

    // Table and figures.
    let mut table_rows = Vec::new();
    for (app, l, tcp, rdb, all) in &rows {
        let seed = SEED
            .iter()
            .find(|s| s.0 == **app && (s.1 * 100.0 - l).abs() < 1e-9);
        for (v, m) in [
            (Variant::Tcp, tcp),
            (Variant::Rdb, rdb),
            (Variant::All, all),
        ] {
            let s = seed.and_then(|s| match v {
                Variant::Tcp => Some(&s.2),
                Variant::Rdb => Some(&s.3),
                Variant::All => None,
            });
            let seed_cell = s.map_or("–".to_string(), |s| {
                format!(
                    "{} % · {} B · {} / {} ms",
                    s.retrans, s.packet, s.avg, s.max
                )
            });
            table_rows.push(vec![
                app.to_string(),
                format!("{l:.0} %"),
                v.label().into(),
                num(m.retrans, 2),
                num(m.payload, 1),
                num(m.packet, 0),
                num(m.avg, 1),
                num(m.max, 0),
                seed_cell,
                num(quantile(&m.extra, 0.99), 0),
                num(m.packets, 0),
                format!("{:.2}", m.bytes / m.unique.max(1.0)),
            ]);
        }
    }
    let mut sec = String::from("## Tables 4.4–4.6, ours\n\n");
    sec += &md_table(
        &[
            "app",
            "loss",
            "variant",
            "retrans %",
            "payload B",
            "packet B (+66)",
            "ACK latency avg ms",
            "max ms",
            "Evensen: retrans · packet · avg / max",
            "extra app latency p99 ms",
            "packets",
            "bytes sent / unique",
        ],
        &table_rows,
    );
    sec += "\n## Application-layer latency (Figures 4.7, 4.8, 4.10, 4.11, 4.13, 4.14)\n\n";
    sec += "Extra latency = application-layer latency − 65 ms one-way delay, per write (log x axis).\n\n";
    for (app, l, tcp, rdb, all) in &rows {
        let series = vec![
            (
                "TCP".to_string(),
                tcp.extra.iter().map(|x| x.max(0.01)).collect::<Vec<f64>>(),
            ),
            (
                "RDB".to_string(),
                rdb.extra.iter().map(|x| x.max(0.01)).collect(),
            ),
            (
                "all modifications".to_string(),
                all.extra.iter().map(|x| x.max(0.01)).collect(),
            ),
        ];
        sec += &figure::latency(
            ctx,
            &format!("cdf_{app}_{l:.0}.svg"),
            &format!("{app}, {l:.0} % loss, 130 ms RTT"),
            "extra application-layer latency: latency − 65 ms one-way delay (ms)",
            View::Cdf,
            &series,
        )?;
    }
    report.section(sec);
    let wow = wow::claims(ctx, &mut report)?;
    report.section(wow);
    report.section(format!("## How to rerun\n\n```sh\n{}\n```\n", ran.command));
    Ok(report)
}

/// Why the retransmission share compares as it does, per application.
fn retrans_note(app: &str) -> String {
    let common = "Reproduced when both are within 25 % + 0.1 point of Evensen's; in shape when \
                  RDB retransmits less than half as often as TCP.";
    match app {
        "ssh" => format!(
            "{common} Table 2.1's SSH writes are 323 ms apart on average (median 159 ms), \
             beyond RTO − RTT = 200 ms for a third of them, so the next write often comes too \
             late to carry a lost one; Evensen's SSH dump wrote every 83 ms (166 ms under \
             loss) and gave RDB more to bundle. With all modifications, linear timeouts and \
             thin dupACK retransmit sooner and more often (spurious when a bundle was already \
             on its way): more retransmissions, lower latency."
        ),
        _ => common.to_string(),
    }
}

/// B.*.bytes and B.*.packets: what RDB sends against TCP, bytes and packets (Tables 4.4–4.6).
fn overhead_claims(report: &mut Report, rows: &[(&&str, f64, Measured, Measured, Measured)]) {
    let file = claims::of("evensen-apps");
    // A change the thesis puts within ±1 % is judged as "about as many", a larger one by sign.
    let same_way = |o: f64, s: f64| {
        if s.abs() <= 1.0 {
            o.abs() <= 1.0
        } else {
            o * s > 0.0
        }
    };
    for app in ["skype-tcp", "ssh", "bzflag"] {
        let mine: Vec<&(&&str, f64, Measured, Measured, Measured)> =
            rows.iter().filter(|r| *r.0 == app).collect();
        for (what, f, tol_key) in [
            (
                "bytes",
                (|m: &Measured| m.bytes) as fn(&Measured) -> f64,
                "rel",
            ),
            ("packets", |m: &Measured| m.packets, "points"),
        ] {
            let id = format!("B.{app}.{what}");
            let tol = file.num(&id, tol_key);
            let mut ours = Vec::new();
            let mut seeds = Vec::new();
            let (mut number, mut shape) = (true, true);
            for r in &mine {
                let seed = file.num(&id, &format!("seed_{:.0}", r.1));
                let change = 100.0 * (f(&r.3) / f(&r.2) - 1.0);
                number &= if tol_key == "rel" {
                    within(change, seed, tol)
                } else {
                    (change - seed).abs() <= tol
                };
                shape &= same_way(change, seed);
                ours.push(format!("{:.0} %: {change:+.1} %", r.1));
                seeds.push(format!("{:.0} %: {seed:+} %", r.1));
            }
            report.claim(
                &id,
                seeds.join(", "),
                ours.join(", "),
                Verdict::of(!mine.is_empty() && number, !mine.is_empty() && shape),
                format!(
                    "RDB ÷ TCP − 1 of {}. RDB's bytes grow with how many writes a bundle \
                     carries (the write interval against the RTT); its packets against TCP's \
                     depend on how far TCP falls behind its writes after RTOs.",
                    if what == "bytes" {
                        "payload_bytes_sent"
                    } else {
                        "data_packets_sent"
                    }
                ),
            );
        }
    }
}

/// B.*.iat: the mean interval between packets sent (Tables 4.4–4.6), TCP and RDB at both loss
/// rates, judged by value and by the order of the four pairs (claims file).
fn interval_claims(report: &mut Report, rows: &[(&&str, f64, Measured, Measured, Measured)]) {
    let file = claims::of("evensen-apps");
    for app in ["skype-tcp", "ssh", "bzflag"] {
        let id = format!("B.{app}.iat");
        let get = |loss: f64, rdb: bool| {
            rows.iter()
                .find(|r| *r.0 == app && (r.1 - loss).abs() < 1e-9)
                .map(|r| if rdb { &r.3 } else { &r.2 })
        };
        let (Some(t2), Some(t5), Some(r2), Some(r5)) = (
            get(2.0, false),
            get(5.0, false),
            get(2.0, true),
            get(5.0, true),
        ) else {
            continue;
        };
        let ours = [t2, t5, r2, r5].map(|m| m.packet_interval);
        let seed = ["tcp_2", "tcp_5", "rdb_2", "rdb_5"].map(|k| file.num(&id, k));
        let (rel, same) = (file.num(&id, "rel"), file.num(&id, "same"));
        let number = ours.iter().zip(&seed).all(|(o, s)| within(*o, *s, rel));
        // TCP 2 vs 5, RDB 2 vs 5, TCP vs RDB at 2 and at 5.
        let order = [(0, 1), (2, 3), (0, 2), (1, 3)].iter().all(|&(a, b)| {
            let close = |x: f64, y: f64| (x - y).abs() <= same * x.max(y);
            if close(seed[a], seed[b]) {
                close(ours[a], ours[b])
            } else {
                (ours[a] - ours[b]).signum() == (seed[a] - seed[b]).signum()
            }
        });
        let pair = |a: f64, b: f64| format!("{} → {}", num(a, 0), num(b, 0));
        report.claim(
            &id,
            format!(
                "TCP {} ms, RDB {} ms (2 % → 5 %)",
                pair(seed[0], seed[1]),
                pair(seed[2], seed[3])
            ),
            format!(
                "TCP {} ms, RDB {} ms; writes every {} ms",
                pair(ours[0], ours[1]),
                pair(ours[2], ours[3]),
                num(t2.write_interval, 0)
            ),
            Verdict::of(number, order),
            "Run duration ÷ data_packets_sent (retransmissions included), as a capture counts \
             packets. TCP sends fewer packets than writes when writes wait behind a full window \
             and leave together; RDB sends one packet per write however many are outstanding. \
             The interval cannot fall below the write interval of the profile (Table 2.1), which \
             is not the interval of Evensen's replayed dumps.",
        );
    }
}
