//! Claim C.11 of the `hurtig` study: Hurtig (2006) §4.2.2 and §4.2.4 (Figs. 4.18, 4.23–4.24)
//! observe that with 100 packets at 500 kbit/s the middle of the completion-time curve T(loss
//! position) grows more irregular as the delay grows, because how many bursts the transfer
//! takes depends on where the loss falls. The thesis gives no measure, so the claims file
//! defines one: the coefficient of variation of T over the fast-retransmitted positions of the
//! middle section.

use super::Cell;
use crate::reproduce::report::num;
use crate::reproduce::{claims, Report, Verdict};

/// Standard deviation ÷ mean of T(p) over the fast-retransmitted positions in `lo..=hi`.
fn irregularity(c: &Cell, lo: usize, hi: usize) -> Option<f64> {
    let t: Vec<f64> = c
        .fast()
        .into_iter()
        .filter(|&p| (lo..=hi).contains(&p))
        .map(|p| c.t[p])
        .collect();
    if t.len() < 2 {
        return None;
    }
    let mean = t.iter().sum::<f64>() / t.len() as f64;
    let var = t.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / t.len() as f64;
    Some(var.sqrt() / mean)
}

pub(super) fn irregularity_claim(report: &mut Report, c100: &[Cell]) {
    let file = claims::of("hurtig");
    let id = "C.11";
    let bw = file.num(id, "bw_kbit") as i64;
    let (lo, hi) = (
        file.num(id, "from_position") as usize,
        file.num(id, "to_position") as usize,
    );
    let mut rows: Vec<(i64, f64)> = c100
        .iter()
        .filter(|c| c.bw == bw && !c.bad_rto())
        .filter_map(|c| irregularity(c, lo, hi).map(|x| (c.delay, x)))
        .collect();
    rows.sort_by_key(|r| r.0);
    let judged = rows.len() >= 2;
    let (first, last) = (
        rows.first().map_or(f64::NAN, |r| r.1),
        rows.last().map_or(f64::NAN, |r| r.1),
    );
    let slack = file.num(id, "slack");
    let monotone = rows.windows(2).all(|w| w[1].1 >= w[0].1 - slack);
    let factor = file.num(id, "factor");
    report.claim(
        id,
        "more irregular as the delay grows (Figs. 4.18, 4.23–4.24)",
        if judged {
            rows.iter()
                .map(|r| format!("{} ms: {}", r.0, num(r.1, 4)))
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            format!("fewer than two delays at {bw} kbit/s in this run")
        },
        Verdict::of(
            judged && monotone && last >= factor * first,
            judged && last > first,
        ),
        format!(
            "Irregularity = standard deviation ÷ mean of T over the fast-retransmitted loss \
             positions {lo}–{hi} (100 packets, {bw} kbit/s), per delay. Reproduced when it \
             never falls by more than {slack} from one delay to the next and the largest \
             delay's is at least {factor}× the smallest's; in shape when the largest delay's \
             is above the smallest's."
        ),
    );
}
