//! Claims A.6b, A.7b and A.9 of `evensen-lab`: how many packets RDB sends against TCP over the
//! RTT and write-interval sweeps (the "packets sent" columns of Evensen (2008), Tables 4.2–4.3),
//! and §4.4's summary that below RTO − RTT RDB's cost is bytes, not packets.

use super::super::report::num;
use super::super::{claims, Report, Verdict};

/// Table 4.2: RDB − TCP packets sent, % of TCP's, by RTT (ms); IAT (150 ± 10) ms, loss 1 %.
const TABLE_4_2_PACKETS: [(f64, f64); 10] = [
    (180.0, -0.45),
    (190.0, -0.56),
    (200.0, -0.29),
    (220.0, -0.30),
    (240.0, 0.22),
    (260.0, 0.29),
    (280.0, 0.55),
    (300.0, 0.22),
    (400.0, 0.40),
    (500.0, 1.23),
];
/// Table 4.3: RDB − TCP packets sent, % of TCP's, by write interval (ms); RTT 100 ms, loss 1 %.
const TABLE_4_3_PACKETS: [(f64, f64); 10] = [
    (25.0, 1.00),
    (35.0, 0.44),
    (50.0, 0.51),
    (60.0, 0.06),
    (75.0, -0.47),
    (90.0, -0.50),
    (100.0, -0.48),
    (200.0, -0.26),
    (250.0, -0.08),
    (275.0, 0.00),
];

/// (x, ours %, the thesis's %) at every swept x the table has.
fn differences(pk: &[(f64, f64, f64)], table: &[(f64, f64)]) -> Vec<(f64, f64, f64)> {
    pk.iter()
        .filter_map(|&(x, tcp, rdb)| {
            let seed = table.iter().find(|t| (t.0 - x).abs() < 1e-9)?.1;
            Some((x, 100.0 * (rdb / tcp - 1.0), seed))
        })
        .collect()
}

fn listing(rows: &[(f64, f64, f64)], pick: fn(&(f64, f64, f64)) -> f64) -> String {
    rows.iter()
        .map(|r| format!("{}: {:+.2} %", r.0, pick(r)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    super::super::ctx::mean(&v)
}

/// A.6b: packets sent by RTT (Table 4.2).
pub fn rtt_packets(report: &mut Report, pk: &[(f64, f64, f64)]) {
    let file = claims::of("evensen-lab");
    let (points, bound) = (file.num("A.6b", "points"), file.num("A.6b", "bound"));
    let rows = differences(pk, &TABLE_4_2_PACKETS);
    let number = !rows.is_empty() && rows.iter().all(|r| (r.1 - r.2).abs() <= points);
    let shape = rows.len() >= 2
        && rows[rows.len() - 1].1 > rows[0].1
        && rows.iter().all(|r| r.1.abs() <= bound);
    report.claim(
        "A.6b",
        listing(&rows, |r| r.2),
        listing(&rows, |r| r.1),
        Verdict::of(number, shape),
        format!(
            "data_packets_sent, RDB ÷ TCP − 1, mean over the repetitions. Reproduced within \
             ±{points} point of the thesis's at every RTT of Table 4.2 we ran; in shape when \
             the difference at the largest of those RTTs is above the one at the smallest \
             (\"the difference … increased along with the RTT\") and all are within ±{bound} %. \
             TCP's extra packets are its retransmissions (about 1 % of packets at 1 % loss); \
             RDB repairs losses with its next write and does not send them."
        ),
    );
}

/// A.7b: packets sent by write interval (Table 4.3).
pub fn iat_packets(report: &mut Report, pk: &[(f64, f64, f64)]) {
    let file = claims::of("evensen-lab");
    let (points, bound) = (file.num("A.7b", "points"), file.num("A.7b", "bound"));
    let rows = differences(pk, &TABLE_4_3_PACKETS);
    let number = !rows.is_empty() && rows.iter().all(|r| (r.1 - r.2).abs() <= points);
    let short = mean(rows.iter().filter(|r| r.0 <= 50.0).map(|r| r.1));
    let long = mean(rows.iter().filter(|r| r.0 >= 75.0).map(|r| r.1));
    let shape = short > long && rows.iter().all(|r| r.1.abs() <= bound);
    report.claim(
        "A.7b",
        listing(&rows, |r| r.2),
        format!(
            "{}; mean ≤ 50 ms {:+.2} %, ≥ 75 ms {:+.2} %",
            listing(&rows, |r| r.1),
            short,
            long
        ),
        Verdict::of(number, shape),
        format!(
            "data_packets_sent, RDB ÷ TCP − 1. Reproduced within ±{points} point of the \
             thesis's at every interval of Table 4.3 we ran; in shape when the mean difference \
             at intervals ≤ 50 ms is above the mean at ≥ 75 ms (\"when the IAT was short, RDB \
             sent more packets than TCP\") and all are within ±{bound} %."
        ),
    );
}

/// A.9: below RTO − RTT, RDB sends about as many packets as TCP and pays in bytes.
/// `pk` and `bytes` are (IAT ms, TCP, RDB) of packets and payload bytes sent.
pub fn efficiency(report: &mut Report, pk: &[(f64, f64, f64)], bytes: &[(f64, f64, f64)]) {
    let file = claims::of("evensen-lab");
    let id = "A.9";
    let (below, rtt, above) = (
        file.num(id, "below_ms"),
        file.num(id, "rtt_ms"),
        file.num(id, "above_ms"),
    );
    let ratio = |r: &(f64, f64, f64)| r.2 / r.1;
    // (IAT, packets RDB ÷ TCP, bytes RDB ÷ TCP)
    let rows: Vec<(f64, f64, f64)> = pk
        .iter()
        .zip(bytes)
        .map(|(p, b)| (p.0, ratio(p), ratio(b)))
        .collect();
    let holds = |packets: f64, bytes_min: f64| {
        rows.iter().any(|r| r.0 < rtt)
            && rows
                .iter()
                .filter(|r| r.0 < below)
                .all(|r| (r.1 - 1.0).abs() <= packets)
            && rows.iter().filter(|r| r.0 < rtt).all(|r| r.2 >= bytes_min)
    };
    let high_same = rows
        .iter()
        .filter(|r| r.0 >= above)
        .all(|r| (r.2 - 1.0).abs() <= file.num(id, "bytes_same"));
    let number = holds(file.num(id, "packets"), file.num(id, "bytes_min")) && high_same;
    let shape = holds(
        file.num(id, "shape_packets"),
        file.num(id, "shape_bytes_min"),
    );
    let text: Vec<String> = rows
        .iter()
        .map(|r| format!("{}: ×{} / ×{}", r.0, num(r.1, 3), num(r.2, 2)))
        .collect();
    report.claim(
        id,
        format!(
            "below RTO − RTT ({below} ms) about as many packets (Table 4.3: within ±1 %); \
             below the RTT ({rtt} ms), where a write finds the previous one unacknowledged, \
             2–4× the bytes; at ≥ {above} ms bytes ×1.01"
        ),
        format!("IAT: packets / bytes RDB ÷ TCP: {}", text.join(", ")),
        Verdict::of(number, shape),
        "RDB ÷ TCP of data_packets_sent and payload_bytes_sent over the write-interval sweep \
         (RTT 100 ms, loss 1 %). Each write still leaves in its own packet; the bundle only \
         makes that packet larger, while it finds unacknowledged data to carry.",
    );
}
