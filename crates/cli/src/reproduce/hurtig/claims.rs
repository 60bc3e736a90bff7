//! The claims C.1–C.5, the qualitative checks and the remedy section of the `hurtig` study
//! (definitions in the parent module's report intro).

use super::{at, pct, ranges, Cell, Repair, VARIANTS};
use crate::reproduce::figure::{self, line};
use crate::reproduce::report::{md_table, num, within};
use crate::reproduce::{claims, Ctx, Report, Verdict};
use anyhow::Result;
use std::fmt::Write as _;
use thinlab_trace::xy_plot::XySpec;

/// (bw, delay, value) of the cell with the largest `f` among the usable cells.
fn argmax(cells: &[Cell], f: fn(&Cell) -> f64) -> Option<(i64, i64, f64)> {
    cells
        .iter()
        .filter(|c| !c.bad_rto() && f(c).is_finite())
        .map(|c| (c.bw, c.delay, f(c)))
        .max_by(|a, b| a.2.total_cmp(&b.2))
}

pub(super) fn claims(report: &mut Report, c20: &[Cell], c100: &[Cell]) {
    let file = claims::of("hurtig");
    let usable: Vec<&Cell> = c20.iter().filter(|c| !c.bad_rto()).collect();
    let tail_ok = usable
        .iter()
        .filter(|c| c.inhibited() == [17, 18, 19])
        .count();
    let fr_all = usable
        .iter()
        .filter(|c| c.fast() == (2..=16).collect::<Vec<_>>())
        .count();
    let early: Vec<String> = usable
        .iter()
        .filter(|c| !c.early_rto().is_empty())
        .map(|c| format!("{} kbit/s {} ms: {}", c.bw, c.delay, ranges(&c.early_rto())))
        .collect();
    let syn: Vec<f64> = usable.iter().map(|c| c.t[1] - c.t[0]).collect();
    let (smin, smax) = syn
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let last_same = usable
        .iter()
        .all(|c| (c.t[20] - c.t[0]).abs() <= 0.005 * c.t[0]);
    let bad: Vec<String> = c20
        .iter()
        .filter(|c| c.bad_rto())
        .map(|c| format!("{}/{}", c.bw, c.delay))
        .collect();
    report.claim(
        "C.1",
        "17–19 inhibited; 2–16 FR; 20: no change; 1: ~3 s",
        format!(
            "17–19 exactly inhibited in {tail_ok} of {} cells; 2–16 all FR in {fr_all}; a loss at 20 \
             changes T by ≤ 0.5 % in {}; a loss at 1 costs {}–{} ms; left out (lossless run had an \
             RTO): {}",
            usable.len(),
            if last_same { "every cell" } else { "not every cell" },
            num(smin, 0),
            num(smax, 0),
            if bad.is_empty() { "none".into() } else { bad.join(", ") }
        ),
        {
            let syn_tol = file.num("C.1", "syn_rel");
            let syn_ok = within(smin, 3000.0, syn_tol) && within(smax, 3000.0, syn_tol);
            let tail_all = !usable.is_empty() && tail_ok == usable.len();
            Verdict::of(
                tail_all && fr_all == usable.len() && last_same && syn_ok,
                tail_all && last_same && syn_ok,
            )
        },
        format!(
            "Position 20 is the ACK of the client's FIN, sent after the client has its EOF. 19 \
             costs more than 17 and 18: 18 arrives in order as the odd segment of a pair, the \
             client holds its ACK for the 100 ms delayed-ACK timeout, and that ACK of new data \
             restarts the RTO timer, so 19's RTO fires about 100 ms later. The SYN-ACK's \
             retransmission waits for the initial RTO of 3 s. Where 2–16 are not all \
             fast-retransmitted the first data segments' RTO (3·r + 200 ms from the SYN-ACK's \
             RTT sample r) fires before three duplicate ACKs can come back at low bandwidth: \
             Hurtig's §4.1.3 effect, which it saw at 40 kbit/s ≤ 20 ms and excluded ({}). \
             Hurtig also saw 16 inhibited at 160 kbit/s and low delay because its client \
             application let data sit in the receive buffer, so the duplicate ACK carried a \
             window update (§4.1.5); our receiving application reads at once, so the advertised \
             window does not change and 16 is fast-retransmitted.",
            if early.is_empty() { "none here".into() } else { format!("ours: {}", early.join("; ")) }
        ),
    );

    // C.2: penalty at the four cells Hurtig names.
    let seed2 = [
        (10000, 5, 301.0),
        (10000, 300, 31.0),
        (80, 5, 117.0),
        (80, 300, 47.0),
    ];
    let mut ours = Vec::new();
    let mut seedtxt = Vec::new();
    let mut close = 0;
    let mut have = 0;
    for (b, d, s) in seed2 {
        if let Some(c) = at(c20, b, d) {
            have += 1;
            let x = c.penalty();
            if within(x, s, 0.25) {
                close += 1;
            }
            ours.push(format!("{b} kbit/s {d} ms: {}", pct(x)));
            seedtxt.push(format!("{b}/{d}: {s} %"));
        }
    }
    let (lo, hi) = usable
        .iter()
        .map(|c| c.penalty())
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    let top = argmax(c20, Cell::penalty);
    let shape = top.is_some_and(|(b, d, _)| b >= 4000 && d <= 10);
    let hi_bw = at(c20, 10000, 5).zip(at(c20, 10000, 300));
    let falls = hi_bw.is_some_and(|(a, b)| a.penalty() > 3.0 * b.penalty());
    report.claim(
        "C.2",
        format!("{}; overall 16–301 %", seedtxt.join(", ")),
        format!(
            "{}; overall {}–{} (largest at {})",
            ours.join(", "),
            pct(lo),
            pct(hi),
            top.map_or("–".into(), |(b, d, _)| format!("{b} kbit/s, {d} ms"))
        ),
        Verdict::of(have > 0 && close == have, shape && falls),
        format!(
            "Tolerance ±25 % relative; {close} of {have} named cells within it. The shape holds: \
             largest at high bandwidth and low delay, falling fast with delay at 10 Mbit/s and \
             slowly at 80 kbit/s. T_inh − T_fr is about one RTO (≈ 200 ms slop + a few RTTs), so \
             at 10 Mbit/s, 5 ms the ratio is set by T_fr: ours is {} ms (T_inh {} ms). Hurtig's \
             301 % with the same RTO would put its T_fr near 75 ms; its testbed added time we do \
             not model (Dummynet's 1 ms clock tick per pipe pass, host and application \
             processing), which shrinks the ratio at the shortest times and matters little at \
             300 ms. Our T_inh averages 17–19, and 19 costs about one delayed-ACK timeout more than 17 \
             and 18 (see C.1).",
            at(c20, 10000, 5).map_or("–".into(), |c| num(c.t_fast(), 0)),
            at(c20, 10000, 5).map_or("–".into(), |c| num(c.t_inhibited(), 0)),
        ),
    );

    // C.3: average penalty.
    let top20 = argmax(c20, Cell::average);
    let at300: Vec<f64> = usable
        .iter()
        .filter(|c| c.delay == 300)
        .map(|c| c.average())
        .collect();
    let u100: Vec<&Cell> = c100.iter().filter(|c| !c.bad_rto()).collect();
    let top100 = argmax(c100, Cell::average);
    let at300_100: Vec<f64> = u100
        .iter()
        .filter(|c| c.delay == 300)
        .map(|c| c.average())
        .collect();
    let mm = |v: &[f64]| {
        v.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            })
    };
    let (a3lo, a3hi) = mm(&at300);
    let (b3lo, b3hi) = mm(&at300_100);
    let t20 = top20.map_or(f64::NAN, |t| t.2);
    let t100 = top100.map_or(f64::NAN, |t| t.2);
    let reproduced = within(t20, 20.4, file.num("C.3", "peak_rel"))
        && t100 <= file.num("C.3", "max_100")
        && b3hi < file.num("C.3", "max_100_at_300");
    report.claim(
        "C.3",
        "20 pkts: max 20.4 % (1000/5), 5–10 % at 300 ms; 100 pkts: ≤ 4 %, < 1 % at 300 ms",
        format!(
            "20 pkts: max {} ({}), {}–{} at 300 ms; 100 pkts: max {} ({}), {}–{} at 300 ms",
            pct(t20),
            top20.map_or("–".into(), |(b, d, _)| format!("{b}/{d}")),
            num(a3lo, 1),
            pct(a3hi),
            pct(t100),
            top100.map_or("–".into(), |(b, d, _)| format!("{b}/{d}")),
            num(b3lo, 1),
            pct(b3hi),
        ),
        Verdict::of(reproduced, t20 > t100 && t20 < 50.0),
        {
            let col5: Vec<f64> = usable
                .iter()
                .filter(|c| c.delay == 5)
                .map(|c| c.average())
                .collect();
            let (f5lo, f5hi) = mm(&col5);
            let low: Vec<f64> = usable
                .iter()
                .filter(|c| c.bw == 40)
                .map(|c| c.average())
                .collect();
            let (llo, lhi) = mm(&low);
            format!(
                "Definition above (Hurtig gives none): the inhibitions' share of the expected \
                 time with one loss at a uniformly random position 1..n, the SYN-ACK's 3 s and the \
                 early-loss costs included on both sides. Tolerance ±25 % on the peak. Our 5 ms \
                 column spans {}–{} over the bandwidths (seed: \"almost all … about 20 %\"), \
                 1000 kbit/s 5 ms is {} (seed 20.4 %, its peak); 40 kbit/s spans {}–{} (seed \
                 10–20 %). At 300 ms the high-bandwidth cells fall a little below Hurtig's 5 %. \
                 The average agrees better than the penalty of C.2 because the SYN-ACK's 3 s, in \
                 both sums, dominates the mean at short completion times. 100-packet flows: 3–4 \
                 inhibited positions out of 100 and a long T_fr give a few percent.",
                num(f5lo, 1),
                pct(f5hi),
                at(c20, 1000, 5).map_or("–".into(), |c| pct(c.average())),
                num(llo, 1),
                pct(lhi),
            )
        },
    );

    // C.4: 100 packets.
    let c4 = at(c100, 10000, 5).map(|c| c.penalty());
    let late: Vec<f64> = u100
        .iter()
        .filter(|c| c.delay >= 60)
        .map(|c| c.penalty())
        .collect();
    let late_max = late.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    report.claim(
        "C.4",
        "168 % (10000/5); < 40 % at ≥ 60 ms",
        format!(
            "{} at 10000 kbit/s 5 ms; max {} at ≥ 60 ms; inhibited at 10000/5: {}",
            c4.map_or("–".into(), pct),
            pct(late_max),
            at(c100, 10000, 5).map_or("–".into(), |c| ranges(&c.inhibited()))
        ),
        match c4 {
            Some(x) if within(x, 168.0, 0.25) && late_max < 40.0 => Verdict::Reproduced,
            Some(x) if x > 2.0 * late_max && x > 100.0 => Verdict::ShapeReproduced,
            _ => Verdict::NotReproduced,
        },
        "Same definition as C.2 (T_inh over the RTO tail, T_fr over the fast-retransmitted \
         positions). T_fr of a 100-packet flow is several times the 20-packet one while the RTO \
         tail adds the same ≈ one RTO, so the penalty is smaller; our T_fr at 10 Mbit/s, 5 ms \
         is shorter than the testbed's (no per-packet processing or Dummynet tick), so our ratio \
         is higher. Hurtig's flat long-flow times also came from FreeBSD's post-recovery \
         slow-start burst (§4.2.3, Listing 4.1), which our NewReno exit (cwnd = ssthresh) does \
         not do.",
    );

    // C.5: the dip at position 9 (320 kbit/s, 300 ms).
    if let Some(c) = at(c20, 320, 300) {
        let t9 = c.t[9];
        // the run of positions around 9 with 9's time, and the positions just outside it
        let same = |p: usize| (c.t[p] - t9).abs() < 1.0;
        let mut lo = 9;
        while lo > 2 && same(lo - 1) {
            lo -= 1;
        }
        let mut hi = 9;
        while hi < 16 && same(hi + 1) {
            hi += 1;
        }
        let (before, after) = (c.t[lo - 1], c.t[hi + 1]);
        let f_before = 100.0 * (1.0 - t9 / before);
        let f_after = 100.0 * (1.0 - t9 / after);
        let f8 = 100.0 * (1.0 - t9 / c.t[8]);
        let f10 = 100.0 * (1.0 - t9 / c.t[10]);
        report.claim(
            "C.5",
            "9 ~14 % faster than 8 and 10",
            format!(
                "T(7..11) = {} ms: 9 is {} faster than 8 and {} faster than 10; the dip spans \
                 positions {}, {} faster than at {} and {} faster than at {}",
                (7..=11)
                    .map(|p| num(c.t[p], 0))
                    .collect::<Vec<_>>()
                    .join(", "),
                pct(f8),
                pct(f10),
                ranges(&(lo..=hi).collect::<Vec<_>>()),
                pct(f_before),
                lo - 1,
                pct(f_after),
                hi + 1,
            ),
            {
                let rel = file.num("C.5", "rel");
                let faster = file.num("C.5", "shape_min_pct");
                Verdict::of(
                    within(f8, 14.0, rel) && within(f10, 14.0, rel),
                    f8 >= faster && f10 >= faster,
                )
            },
            "The claim is about position 9 against 8 and 10, and there we see no dip; it is \
             not reproduced. The mechanism Hurtig gives does appear: a loss whose \
             retransmission fits into the last of three bursts costs no extra round trip, one \
             whose detection or retransmission spills into a fourth burst costs one more 600 ms \
             RTT (≈ 14–16 %). But our dip is three positions wide (8–10): which losses still fit \
             depends on when each ACK comes back (the client's 100 ms delayed-ACK timer phase, \
             Limited Transmit, how the window grows from 4). Hurtig's packet traces \
             (Figs. 4.11–4.14) are images, not in its text, so we could not compare the ACK \
             sequences packet by packet; the width of the dip is left unexplained.",
        );
    }
}

/// C.6 and C.8–C.10: the bad RTO at 40 kbit/s, the costly early loss at 160 kbit/s, position 16
/// at 160 kbit/s and low delay, and position 50 against 80 in 100-packet flows.
pub(super) fn more_claims(report: &mut Report, c20: &[Cell], c100: &[Cell]) {
    let file = claims::of("hurtig");
    let bad: Vec<(i64, bool)> = [5, 10, 20]
        .iter()
        .filter_map(|&d| at(c20, 40, d).map(|c| (d, c.bad_rto())))
        .collect();
    let higher: Vec<bool> = [60, 100, 300]
        .iter()
        .filter_map(|&d| at(c20, 40, d).map(|c| c.bad_rto()))
        .collect();
    if !bad.is_empty() {
        report.claim(
            "C.6",
            "the lossless run at 40 kbit/s has premature RTOs (first four segments \
             retransmitted) at 5, 10 and 20 ms; not at larger delays",
            format!(
                "premature RTO in the lossless run at 40 kbit/s: {}; at 60/100/300 ms (where \
                 run): {}",
                bad.iter()
                    .map(|(d, b)| format!("{d} ms: {}", if *b { "yes" } else { "no" }))
                    .collect::<Vec<_>>()
                    .join(", "),
                if higher.iter().any(|b| *b) {
                    "some"
                } else {
                    "none"
                }
            ),
            Verdict::of(
                bad.len() == 3 && bad.iter().all(|b| b.1) && !higher.iter().any(|b| *b),
                bad.iter().any(|b| b.0 == 5 && b.1),
            ),
            "FreeBSD 6's RTO after the SYN-ACK's RTT sample (3·r + 200 ms, Hurtig §4.1.3 and \
             docs/mechanisms.md) is shorter than a full segment's serialisation at 40 kbit/s \
             (300 ms) plus the delays.",
        );
    }
    if let Some(c) = at(c20, 160, 300) {
        let tail = (17..=19).map(|p| c.t[p]).fold(f64::NEG_INFINITY, f64::max);
        report.claim(
            "C.8",
            "T(4) > T(17..19) (Fig. 4.5)",
            format!(
                "T(4) = {} ms, T(10) = {} ms, largest of T(17..19) = {} ms",
                num(c.t[4], 0),
                num(c.t[10], 0),
                num(tail, 0)
            ),
            Verdict::of(c.t[4] > tail, c.t[4] > c.t[10]),
            "An early loss ends slow start with a small window, so the rest of the flow goes \
             out in more round trips of 600 ms (Hurtig §4.1.4).",
        );
    }
    if let Some(c) = at(c20, 160, 5) {
        let inh = c.inhibited();
        report.claim(
            "C.9",
            "16, 17, 18, 19 inhibited at 160 kbit/s, low delay (Fig. 4.5)",
            format!("inhibited at 160 kbit/s, 5 ms: {}", ranges(&inh)),
            Verdict::of(inh == [16, 17, 18, 19], inh.contains(&16)),
            "Hurtig traces it to the client's receive buffer: its application let data sit, so \
             the duplicate ACK carried a window update and FreeBSD did not count it (§4.1.5). \
             Our receiving application reads at once, the advertised window does not change, \
             and 16 is fast-retransmitted. That this is the reason is untested: no run with a \
             slow-reading receiver exists yet.",
        );
    }
    if let Some(c) = at(c100, 160, 300) {
        let more = 100.0 * (c.t[50] / c.t[80] - 1.0);
        report.claim(
            "C.10",
            "T(50) ≈ 1.3 × T(80) (Fig. 4.17)",
            format!(
                "T(50) = {} ms, T(80) = {} ms: {}",
                num(c.t[50], 0),
                num(c.t[80], 0),
                pct(more)
            ),
            Verdict::of(
                within(more, 30.0, file.num("C.10", "rel")),
                more >= file.num("C.10", "shape_min_pct"),
            ),
            "Hurtig traces the costlier middle to FreeBSD's exit from fast recovery, which \
             sets cwnd so that it sends a slow-start burst (§4.2.3, Listing 4.1); our NewReno \
             exit sets cwnd = ssthresh and does not burst. No run with FreeBSD's exit exists \
             yet, so that this is the whole reason is untested.",
        );
    }
}

pub(super) fn checks(
    report: &mut Report,
    c20: &[Cell],
    c100: &[Cell],
    r20: &[Vec<Cell>],
    r100: &[Vec<Cell>],
) {
    let usable: Vec<&Cell> = c20.iter().filter(|c| !c.bad_rto()).collect();
    report.check(
        "20 packets: positions 17, 18, 19 (exactly) are the inhibited ones in every cell without a spurious RTO",
        !usable.is_empty() && usable.iter().all(|c| c.inhibited() == [17, 18, 19]),
    );
    report.check(
        "a loss at position 1 (the SYN-ACK) costs 3 s ± 10 % in every cell without a spurious RTO",
        usable.iter().all(|c| within(c.t[1] - c.t[0], 3000.0, 0.1)),
    );
    report.check(
        "a loss at position 20 (the last ACK) changes the time by ≤ 0.5 % in every cell without a spurious RTO",
        usable.iter().all(|c| (c.t[20] - c.t[0]).abs() <= 0.005 * c.t[0]),
    );
    report.check(
        "40 kbit/s, 5 ms: the lossless run already has an RTO (Hurtig's bad RTO estimation)",
        at(c20, 40, 5).is_some_and(|c| c.bad_rto()),
    );
    let top = argmax(c20, Cell::penalty);
    let maxbw = usable.iter().map(|c| c.bw).max().unwrap_or(0);
    let mind = usable.iter().map(|c| c.delay).min().unwrap_or(0);
    report.check(
        "the inhibited penalty is largest at the highest bandwidth and lowest delay (20 packets)",
        top.is_some_and(|(b, d, _)| b == maxbw && d == mind),
    );
    report.check(
        "the inhibited penalty falls with delay at every bandwidth (20 packets, lowest vs highest delay)",
        {
            let bws: Vec<i64> = usable.iter().map(|c| c.bw).collect();
            bws.iter().all(|&b| {
                let cs: Vec<&&Cell> = usable.iter().filter(|c| c.bw == b).collect();
                let lo = cs.iter().min_by_key(|c| c.delay).map(|c| c.penalty());
                let hi = cs.iter().max_by_key(|c| c.delay).map(|c| c.penalty());
                matches!((lo, hi), (Some(l), Some(h)) if l > h)
            })
        },
    );
    report.check(
        "the average penalty is below the inhibited penalty, and smaller for 100 than for 20 packets",
        usable.iter().all(|c| c.average() < c.penalty())
            && c100.iter().filter(|c| !c.bad_rto()).all(|c| {
                at(c20, c.bw, c.delay).is_none_or(|d| c.average() < d.average())
            }),
    );
    report.check(
        "100 packets at 10 Mbit/s, 5 ms: the last data segments (97–99) are inhibited, penalty > 100 %",
        at(c100, 10000, 5).is_some_and(|c| c.inhibited() == [97, 98, 99] && c.penalty() > 100.0),
    );
    // Remedy: indices into VARIANTS.
    let (plain, thin, er, tlp, all, rack) = (&r20[0], &r20[1], &r20[2], &r20[3], &r20[4], &r20[5]);
    let rto_at = |cells: &[Cell], p: usize| cells.iter().all(|c| c.repair[p] == Repair::Rto);
    let fixed = |cells: &[Cell], p: usize| cells.iter().all(|c| c.repair[p] != Repair::Rto);
    report.check(
        "thin dupACK leaves 17–19 inhibited (it is gated off in the initial slow start)",
        (17..=19).all(|p| rto_at(thin, p)) && thin.iter().zip(plain).all(|(a, b)| a.t == b.t),
    );
    report.check(
        "Early Retransmit repairs losses at 17 and 18 without an RTO in every remedy cell; TLP repairs 19",
        fixed(er, 17) && fixed(er, 18) && fixed(tlp, 19),
    );
    report.check(
        "RACK-TLP repairs 17, 18 and 19 without an RTO in every remedy cell",
        (17..=19).all(|p| fixed(rack, p)),
    );
    report.check(
        "with thin-dupack + early-retransmit + tlp the 20-packet tail costs less on average than plain FreeBSD 6",
        all.iter().zip(plain).all(|(a, b)| {
            let s = |c: &Cell| (17..=19).map(|p| c.t[p]).sum::<f64>();
            s(a) < s(b)
        }),
    );
    report.check(
        "100 packets: the remedy part ran (same tail behaviour)",
        r100[0].iter().all(|c| !c.inhibited().is_empty()),
    );
}

pub(super) fn remedy_section(ctx: &Ctx, r20: &[Vec<Cell>], r100: &[Vec<Cell>]) -> Result<String> {
    let mut s = String::from(
        "## The remedy: thin dupACK, Early Retransmit, TLP\n\n\
         Hurtig §5.8 asks for a lower duplicate-ACK threshold at the tail of a flow. The same \
         grid cells with mechanisms added to `freebsd-6` (`tcp.mechanisms`, docs/spec/interface.md): \
         `thin-dupack` (fast retransmit on the first duplicate ACK while fewer than 4 \
         segments are in flight and the flow is not in its initial slow start — Linux \
         `tcp_stream_is_thin`), `early-retransmit` (RFC 5827: dupthresh = outstanding − 1 when \
         fewer than 4 are outstanding and nothing new can be sent, counting duplicate ACKs or \
         SACKed segments), `tlp` (RFC 8985 probe after 2·SRTT + 200 ms for a single \
         outstanding segment), all three, and RACK-TLP. Tail cost = mean over the plain \
         profile's inhibited positions of T(p) / T_fr − 1 with the plain T_fr; average = as \
         above, against the plain profile's all-fast-retransmit reference.\n\n",
    );
    let mut rows = Vec::new();
    for r in [r20, r100] {
        for (ci, base) in r[0].iter().enumerate() {
            for (vi, (label, _)) in VARIANTS.iter().enumerate() {
                rows.push(remedy_row(label, &r[vi][ci], base));
            }
        }
    }
    s += &md_table(
        &[
            "n",
            "cell",
            "mechanisms",
            "positions needing an RTO",
            "T at the plain tail (ms)",
            "tail cost",
            "average",
        ],
        &rows,
    );
    s += "\n";
    for (ci, c0) in r20[0].iter().enumerate() {
        let series: Vec<_> = VARIANTS
            .iter()
            .enumerate()
            .map(|(vi, (label, _))| {
                line(
                    *label,
                    r20[vi][ci]
                        .t
                        .iter()
                        .enumerate()
                        .map(|(p, &t)| (p as f64, t))
                        .collect(),
                )
            })
            .collect();
        let mut spec = XySpec::new(
            format!("Remedy, 20 packets, {} kbit/s, {} ms", c0.bw, c0.delay),
            "position of the lost server → client packet",
            "connect → last byte (ms)",
        );
        spec.log_y = true;
        s += &figure::xy(
            ctx,
            &format!("remedy_20_{}_{}.svg", c0.bw, c0.delay),
            &spec,
            &series,
        )?;
    }
    let _ = writeln!(
        s,
        "\n**What the mechanisms do.** *Thin dupACK* changes nothing here: the flow never leaves \
         its initial slow start (ssthresh is still infinite when the tail is lost), and Linux's \
         thin-stream test excludes that phase; a transfer is not a thin stream. *Early \
         Retransmit* repairs 17 and 18 (threshold 2 and 1 with two or one segment after the \
         loss). Duplicate ACKs alone would not do it: when the receiver is still holding the \
         ACK of the segment before the loss (delayed ACK, every second segment), the first ACK \
         after the loss acknowledges new data, so one duplicate ACK fewer comes back; the SACK \
         of the segments after the loss makes up for it. That needs the last data segment, \
         which carries the FIN, to count as SACKed although a FreeBSD receiver's SACK block \
         ends at its data end (`tcp_reass` SACKs the `tlen` data bytes): our sender counts a \
         data+FIN segment as SACKed when its data is (recovery/sack.rs). *TLP* repairs the last \
         data segment (19) with its probe but makes a loss at 18 costlier: the probe \
         retransmits 19, which brings no new information, and the RTO is re-armed after it. \
         *RACK-TLP* repairs 17 and 18 a reordering window (a quarter of the minimum RTT) after \
         the SACK of a later segment, and 19 with the probe. Early Retransmit with TLP, and \
         RACK-TLP, each leave no inhibited position in the tail: the thesis's remedy, a lower \
         duplicate-ACK threshold at the end of a flow, is what ER approximates, and the probe \
         covers the last segment, which no threshold can."
    );
    Ok(s)
}

fn remedy_row(label: &str, c: &Cell, base: &Cell) -> Vec<String> {
    let tail = base.inhibited();
    let tfr = base.t_fast();
    let needs: Vec<usize> = (2..=c.n())
        .filter(|&p| c.repair[p] == Repair::Rto)
        .collect();
    let cost = 100.0 * (c.mean_at(&tail) / tfr - 1.0);
    let actual: f64 = (1..=c.n()).map(|p| c.t[p]).sum();
    let ideal: f64 = (1..=base.n())
        .map(|p| if tail.contains(&p) { tfr } else { base.t[p] })
        .sum();
    vec![
        c.n().to_string(),
        format!("{} kbit/s, {} ms", c.bw, c.delay),
        label.to_string(),
        ranges(&needs),
        tail.iter()
            .map(|&p| format!("{p}: {}", num(c.t[p], 0)))
            .collect::<Vec<_>>()
            .join(", "),
        pct(cost),
        pct(100.0 * (actual / ideal - 1.0)),
    ]
}
