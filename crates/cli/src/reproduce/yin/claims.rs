//! The claims D.1–D.2 and the qualitative checks of the `yin` study, and why PERT's streams
//! fail here (the parent module runs the parts and holds the data they judge).

use super::*;

/// Why our PERT streams fare as they do, with part 1's retransmission counts.
pub(super) fn why_pert(tmu: &[(Variant, Vec<Stream>)]) -> String {
    let per = |vi: usize, f: fn(&Stream) -> f64| -> String {
        let s = &tmu[vi].1;
        let active: f64 = s.iter().map(|x| x.active_s).sum();
        num(s.iter().map(f).sum::<f64>() * 1000.0 / active.max(1e-9), 0)
    };
    format!(
        "Why: the background is loss-based SACK filling a drop-tail buffer, so PERT's \
         queueing-delay estimate (srtt_0.99 − min_rtt) sits near the buffer's drain time \
         (25–100 ms), far above 2·T_max = 20 ms where the early-response probability is 1; \
         PERT then cuts cwnd by 35 % once per RTT and keeps it at a couple of segments, below \
         the ~4 segments per RTT that 300 kbit/s needs at this RTT. The stream falls behind \
         its source (the backlog waits in the send buffer: late packets by the thousand), and \
         with one or two segments in flight a loss produces no duplicate ACK: per stream and \
         1000 s in part 1, fast retransmissions SACK {} / PERT {} / PERT-ER {}, RTO \
         retransmission events SACK {} / PERT {} / PERT-ER {}, early retransmissions by ER {}. \
         ER needs a duplicate ACK to fire, so it has almost nothing to act on. The paper's \
         PERT kept a larger window against the same kind of background (Qian and Reddy, \
         \"Measurement and performance study of PERT for on-demand video streaming\", measured \
         PERT for streaming; Kotla and Reddy, \"Making a delay-based protocol adaptive to \
         heterogeneous environments\", is an adaptive PERT for mixed traffic); we implement \
         PERT/RED as Bhandarkar et al., \"Emulating AQM from End Hosts\", describe it (see \
         docs/references.md and the congestion-control section of docs/spec/mechanisms.md) \
         and did not change it.",
        per(0, |x| x.fast),
        per(1, |x| x.fast),
        per(2, |x| x.fast),
        per(0, |x| x.rto),
        per(1, |x| x.rto),
        per(2, |x| x.rto),
        per(2, |x| x.early),
    )
}

pub(super) fn tmu_claims(
    report: &mut Report,
    success: &[Vec<Vec<f64>>],
    counts: &[Vec<usize>],
    tmu: &[(Variant, Vec<Stream>)],
    why: &str,
) {
    let at = |vi: usize, bi: usize, sud: f64| success[vi][bi][sud_index(sud)];
    let have = |bi: usize| counts.iter().all(|c| c[bi] > 0);
    // D.1a: rises with SUD and with T/μ.
    let rise = crate::reproduce::claims::of("yin").num("D.1a", "min_rise_pct");
    let last = SUD_S.len() - 1;
    let rises_sud = (0..tmu.len()).all(|vi| {
        (0..3).any(|b| counts[vi][b] > 0 && success[vi][b][last] - success[vi][b][0] >= rise)
    });
    let mut rises_tmu = true;
    let mut list = Vec::new();
    for (vi, (v, _)) in tmu.iter().enumerate() {
        let vals: Vec<(usize, f64)> = (0..3)
            .filter(|&b| counts[vi][b] > 0)
            .map(|b| (b, at(vi, b, 10.0)))
            .collect();
        rises_tmu &= vals.windows(2).all(|w| w[1].1 >= w[0].1 - 5.0);
        list.push(format!(
            "{}: {}",
            v.label(),
            vals.iter()
                .map(|(b, x)| format!("{} → {} %", band_label(*b), num(*x, 0)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    report.claim(
        "D.1a",
        "monotone in SUD; higher T/μ band higher (Fig. 3)",
        format!("at SUD 10 s — {}", list.join("; ")),
        Verdict::of(false, rises_tmu && rises_sud),
        format!(
            "Never falling in SUD holds by construction (a later deadline can only make fewer \
             packets late), so the rule asks for a rise: for every transport, some band gains \
             ≥ {rise:.0} points from SUD 0 to SUD {} s ({}). The T/μ comparison allows 5 points \
             of noise between bands; bands with no stream are left out (the paper's T/μ bands \
             come from N, which we sampled at a few values).",
            SUD_S[SUD_S.len() - 1],
            if rises_sud {
                "holds"
            } else {
                "does not hold: a transport whose streams all fail at every SUD has a flat curve"
            },
        ),
    );
    // D.1b: SACK needs T/μ > 2 and SUD ≈ 20 s.
    let sack = 0;
    let top = 2;
    let sack_top20 = if have(top) {
        at(sack, top, 20.0)
    } else {
        f64::NAN
    };
    let sack_low20: Vec<String> = (0..2)
        .filter(|&b| counts[sack][b] > 0)
        .map(|b| format!("{}: {} %", band_label(b), num(at(sack, b, 20.0), 0)))
        .collect();
    let ok = sack_top20 >= 90.0;
    let shape = sack_top20 >= 50.0
        || (0..2).all(|b| counts[sack][b] == 0 || at(sack, b, 20.0) <= sack_top20);
    report.claim(
        "D.1b",
        "~100 % at SUD 20 s for T/μ 2.0–2.4; less below",
        format!(
            "SACK at SUD 20 s: T/μ 2.0–2.4: {} %; {}; at SUD 10 s (2.0–2.4): {} %",
            num(sack_top20, 0),
            sack_low20.join(", "),
            if have(top) {
                num(at(sack, top, 10.0), 0)
            } else {
                "–".into()
            }
        ),
        Verdict::of(ok, shape && sack_top20.is_finite()),
        "Reproduced when ≥ 90 % of SACK streams in the top band succeed at SUD 20 s. An empty \
         top band means no SACK run reached T/μ > 2 (the smallest N gives less); then compare \
         the lower bands: where they already reach ~100 % by SUD 10–20 s, our SACK streams do \
         better than the paper's, which needed T/μ > 2. Our SACK CBR streams recover most \
         losses by fast retransmit (see D.1c's counts).",
    );
    // D.1c: PERT ~100 % at SUD 10 s for T/μ > 1.6.
    let pert = 1;
    let p: Vec<(usize, f64)> = (1..3)
        .filter(|&b| counts[pert][b] > 0)
        .map(|b| (b, at(pert, b, 10.0)))
        .collect();
    let ok = !p.is_empty() && p.iter().all(|x| x.1 >= 90.0);
    let better = (1..3)
        .filter(|&b| have(b))
        .all(|b| at(pert, b, 10.0) >= at(sack, b, 10.0));
    report.claim(
        "D.1c",
        "~100 % at SUD 10 s for T/μ > 1.6",
        format!(
            "PERT at SUD 10 s: {}; SACK: {}",
            p.iter()
                .map(|(b, x)| format!("{}: {} %", band_label(*b), num(*x, 0)))
                .collect::<Vec<_>>()
                .join(", "),
            (1..3)
                .filter(|&b| counts[sack][b] > 0)
                .map(|b| format!("{}: {} %", band_label(b), num(at(sack, b, 10.0), 0)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Verdict::of(ok, better && !p.is_empty()),
        format!(
            "Reproduced when ≥ 90 % of PERT streams with T/μ > 1.6 succeed at SUD 10 s; shape \
             when PERT is at least as good as SACK there. {why} Our PERT was checked against \
             the paper's description and an ns-3 port of PERT, with captures of the queueing \
             delay and send rate: docs/reproduction/yin/NOTES.md."
        ),
    );
    // D.1d: PERT-ER improves on PERT, most at low T/μ (+16, +4, +0.5 at SUD 5 s).
    let er = 2;
    let gains: Vec<(usize, f64)> = (0..3)
        .filter(|&b| counts[pert][b] > 0 && counts[er][b] > 0)
        .map(|b| (b, at(er, b, 5.0) - at(pert, b, 5.0)))
        .collect();
    let improves = gains.iter().all(|g| g.1 >= -2.0) && gains.iter().any(|g| g.1 > 0.0);
    let most_low = gains.windows(2).all(|w| w[0].1 >= w[1].1 - 2.0);
    report.claim(
        "D.1d",
        "+16 %, +4 %, +0.5 % at SUD 5 s for the three bands",
        format!(
            "PERT-ER − PERT at SUD 5 s: {}",
            gains
                .iter()
                .map(|(b, g)| format!("{}: {:+.0} points", band_label(*b), g))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Verdict::of(false, improves && most_low),
        "Shape when ER never loses more than 2 points, gains somewhere, and its gain does \
             not grow with T/μ (2 points of noise); gains are points of the successful-stream \
             percentage, as the paper's. Where PERT's streams fail at every SUD (table below), \
             there is nothing for ER to lift: see D.1c for why.",
    );
    // Fig. 4: SFT SACK > PERT > PERT-ER.
    let sft: Vec<f64> = tmu.iter().map(|(_, s)| per_1000s(s.iter()).1).collect();
    let ordered = sft[0] >= sft[1] && sft[1] >= sft[2];
    report.claim(
        "D.1e",
        "SACK > PERT > PERT-ER",
        format!(
            "SFT per stream per 1000 s: SACK {} s, PERT {} s, PERT-ER {} s",
            num(sft[0], 1),
            num(sft[1], 1),
            num(sft[2], 1)
        ),
        Verdict::of(false, ordered),
        "Fig. 4 gives bars without a table; all bands pooled. Our PERT freezes longer than \
         SACK because its tiny window turns losses into timeouts (see D.1c); ER removes few of \
         them.",
    );
}

pub(super) fn fine_claims(report: &mut Report, table: &[FineRow], plan: &Plan, why: &str) {
    let ratios: Vec<String> = table
        .iter()
        .map(|r| {
            format!(
                "{} KB: RTOs ×{}, SFT ×{}",
                r.buffer,
                num(r.rto[0] / r.rto[2], 1),
                num(r.sft[0] / r.sft[2], 1)
            )
        })
        .collect();
    let seed_ratios: Vec<String> = TABLE_II
        .iter()
        .filter(|t| plan.buffers_kb.contains(&t.0))
        .map(|t| {
            format!(
                "{} KB: ×{:.1}, ×{:.1}",
                t.0,
                t.1[0] / t.1[2],
                t.2[0] / t.2[2]
            )
        })
        .collect();
    let cuts = table
        .iter()
        .all(|r| r.rto[2] < r.rto[0] && r.sft[2] < r.sft[0]);
    let in_range = table.iter().all(|r| {
        (1.5..=4.5).contains(&(r.rto[0] / r.rto[2])) && (1.5..=4.5).contains(&(r.sft[0] / r.sft[2]))
    });
    report.claim(
        "D.2a",
        seed_ratios.join("; "),
        ratios.join("; "),
        Verdict::of(cuts && in_range, cuts),
        format!(
            "PERT ÷ PERT-ER per stream. Reproduced when every ratio is within 1.5–4.5; shape \
             when ER lowers both everywhere. Our ER removes only a few percent of the timeouts. \
             {why}"
        ),
    );
    let more: Vec<String> = table
        .iter()
        .map(|r| {
            format!(
                "{} KB: PERT {:+.0}, PERT-ER {:+.0}",
                r.buffer,
                r.rto[1] - r.rto[0],
                r.rto[3] - r.rto[2]
            )
        })
        .collect();
    let raises = table
        .iter()
        .all(|r| r.rto[1] > r.rto[0] && r.rto[3] > r.rto[2]);
    report.claim(
        "D.2b",
        "+82/+53 (80 KB), +65/+40, +37/+14, +20/+11 (320 KB) RTOs for PERT / PERT-ER",
        format!("RTOs per 1000 s, fine − default: {}", more.join("; ")),
        Verdict::of(false, raises),
        "Shape when fine-RTO adds timeouts for both at every buffer. With a 1 ms floor the RTO \
         falls to SRTT + 4·RTTVAR, which a queueing-delay spike exceeds (premature timeouts, \
         retransmissions dropped again). At large buffers the queueing delay (up to ~100 ms at \
         320 KB) keeps SRTT + 4·RTTVAR above the 200 ms floor most of the time, so the floor \
         rarely binds and fine-RTO changes the count little either way.",
    );
    let small = &table[0];
    let large = &table[table.len() - 1];
    let lowers_small = small.sft[1] < small.sft[0] && small.sft[3] < small.sft[2];
    let gain_small = small.sft[0] - small.sft[1];
    let gain_large = large.sft[0] - large.sft[1];
    report.claim(
        "D.2c",
        "80 KB: −21 s (PERT), −15 s (PERT-ER); 320 KB: +2 s, +2 s",
        format!(
            "SFT per 1000 s, fine − default: {} KB: {:+.1} s (PERT), {:+.1} s (PERT-ER); {} KB: {:+.1} s, {:+.1} s",
            small.buffer,
            small.sft[1] - small.sft[0],
            small.sft[3] - small.sft[2],
            large.buffer,
            large.sft[1] - large.sft[0],
            large.sft[3] - large.sft[2]
        ),
        Verdict::of(false, lowers_small && gain_large < gain_small),
        "Shape when fine-RTO lowers SFT for both at the smallest buffer and PERT's saving is \
         smaller at the largest buffer.",
    );
    let falls = table
        .windows(2)
        .all(|w| w[1].rto[0] <= w[0].rto[0] * 1.1 && w[1].sft[0] <= w[0].sft[0] * 1.1);
    let seed_vs: Vec<String> = table
        .iter()
        .filter_map(|r| {
            TABLE_II.iter().find(|t| t.0 == r.buffer).map(|t| {
                format!(
                    "{} KB: PERT {}/{} ({}/{})",
                    r.buffer,
                    num(r.rto[0], 0),
                    num(r.sft[0], 0),
                    t.1[0],
                    t.2[0]
                )
            })
        })
        .collect();
    let close = table.iter().all(|r| {
        TABLE_II.iter().find(|t| t.0 == r.buffer).is_some_and(|t| {
            (0..4).all(|vi| {
                crate::reproduce::report::within(r.rto[vi], t.1[vi], 0.5)
                    && crate::reproduce::report::within(r.sft[vi], t.2[vi], 0.5)
            })
        })
    });
    report.claim(
        "D.2d",
        "PERT RTOs/SFT: 253/61 (80 KB) … 52/9 (320 KB); full table below",
        format!("ours (paper): {}", seed_vs.join("; ")),
        Verdict::of(close, falls),
        "Per CBR stream, scaled to 1000 s. Reproduced when all 16 cells of each measure are \
         within 50 %; shape when PERT's RTOs and SFT fall with the buffer (10 % noise).",
    );
}

pub(super) fn checks(
    report: &mut Report,
    success: &[Vec<Vec<f64>>],
    tmu: &[(Variant, Vec<Stream>)],
    table: &[FineRow],
) {
    let monotone = success.iter().all(|v| {
        v.iter().all(|b| {
            b.windows(2)
                .all(|w| !(w[0].is_finite() && w[1].is_finite()) || w[1] >= w[0])
        })
    });
    report.check(
        "the successful-stream fraction never falls as the startup delay grows",
        monotone,
    );
    report.check(ER_IDLE, er_idle(tmu));
    let (pert_rto, pert_sft) = per_1000s(tmu[1].1.iter());
    let (er_rto, er_sft) = per_1000s(tmu[2].1.iter());
    report.check(
        "PERT-ER has fewer RTOs and less frozen time than PERT (part 1, pooled)",
        er_rto < pert_rto && er_sft < pert_sft,
    );
    report.check(
        "PERT-ER has fewer RTOs and less frozen time than PERT at every buffer (part 2)",
        table
            .iter()
            .all(|r| r.rto[2] < r.rto[0] && r.sft[2] < r.sft[0]),
    );
    report.check(
        format!(
            "PERT-ER has fewer RTOs and less frozen time than PERT at {} KB",
            table[0].buffer
        ),
        table[0].rto[2] < table[0].rto[0] && table[0].sft[2] < table[0].sft[0],
    );
    let small = &table[0];
    report.check(
        format!(
            "a fine-grained RTO lowers the frozen time of PERT and PERT-ER at {} KB",
            small.buffer
        ),
        small.sft[1] < small.sft[0] && small.sft[3] < small.sft[2],
    );
}

/// D.3a–D.3d: successful streams at SUD 5 s against buffer size, ER and the fine-grained RTO
/// (Yin et al. Figs. 5–6 and the text of their section on the fine-grained RTO).
pub(super) fn buffer_claims(report: &mut Report, table: &[FineRow]) {
    let file = crate::reproduce::claims::of("yin");
    let (Some(small), Some(large)) = (table.first(), table.last()) else {
        return;
    };
    let s5 = |r: &FineRow| {
        FINE_VARIANTS
            .iter()
            .zip(r.success5)
            .map(|(v, x)| format!("{} {}", v.label(), num(x, 0)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let drop = file.num("D.3a", "min_drop_pct");
    let falls = (0..4).all(|vi| large.success5[vi] <= small.success5[vi] - drop);
    report.claim(
        "D.3a",
        "every protocol's success falls as the buffer grows (Figs. 5–6)",
        format!(
            "% successful at SUD 5 s — {} KB: {}; {} KB: {}",
            small.buffer,
            s5(small),
            large.buffer,
            s5(large)
        ),
        Verdict::of(false, falls),
        format!(
            "Shape when every variant's success at SUD 5 s is at least {drop:.0} points lower at \
             the largest buffer than at the smallest."
        ),
    );
    // Gains in points at SUD 5 s: fine-RTO for PERT (1 − 0) and PERT-ER (3 − 2), ER for PERT (2 − 0).
    let fine: Vec<(u64, f64, f64)> = table
        .iter()
        .map(|r| {
            (
                r.buffer,
                r.success5[1] - r.success5[0],
                r.success5[3] - r.success5[2],
            )
        })
        .collect();
    let pts = file.num("D.3b", "points");
    let seed_b = [(80, 24.0, 8.0), (160, 18.0, 6.0)];
    let judged: Vec<&(u64, f64, f64)> = fine
        .iter()
        .filter(|f| seed_b.iter().any(|s| s.0 == f.0))
        .collect();
    let close_b = !judged.is_empty()
        && judged.iter().all(|f| {
            let s = seed_b.iter().find(|s| s.0 == f.0).expect("filtered");
            (f.1 - s.1).abs() <= pts && (f.2 - s.2).abs() <= pts
        });
    let raises_b = !judged.is_empty() && judged.iter().all(|f| f.1 > 0.0 && f.2 > 0.0);
    report.claim(
        "D.3b",
        "fine-RTO gain at SUD 5 s: PERT +24, PERT-ER +8 points at 80 KB; +18, +6 at 160 KB",
        fine.iter()
            .map(|f| format!("{} KB: PERT {:+.0}, PERT-ER {:+.0}", f.0, f.1, f.2))
            .collect::<Vec<_>>()
            .join("; "),
        Verdict::of(close_b, raises_b),
        format!(
            "Points of successful streams, fine-RTO minus default RTO. Reproduced when each gain \
             at 80 and 160 KB is within {pts:.0} points; shape when all four are positive."
        ),
    );
    let seed_c = [
        (80, 33.0, 24.0),
        (160, 28.0, 18.0),
        (240, 22.0, 8.0),
        (320, 15.0, 1.0),
    ];
    let er: Vec<(u64, f64, f64)> = table
        .iter()
        .map(|r| {
            (
                r.buffer,
                r.success5[2] - r.success5[0],
                r.success5[1] - r.success5[0],
            )
        })
        .collect();
    let pts_c = file.num("D.3c", "points");
    let close_c = er.iter().all(|e| {
        seed_c
            .iter()
            .find(|s| s.0 == e.0)
            .is_some_and(|s| (e.1 - s.1).abs() <= pts_c)
    });
    let er_beats = er.iter().all(|e| e.1 > e.2);
    report.claim(
        "D.3c",
        "ER gain for PERT at SUD 5 s: +33, +28, +22, +15 points (80–320 KB); fine-RTO only +24, +18, +8, +1",
        er.iter()
            .map(|e| format!("{} KB: ER {:+.0}, fine-RTO {:+.0}", e.0, e.1, e.2))
            .collect::<Vec<_>>()
            .join("; "),
        Verdict::of(close_c, er_beats),
        format!(
            "Points of successful PERT streams. Reproduced when ER's gain at every buffer run is \
             within {pts_c:.0} points of the paper's; shape when ER gains more than fine-RTO at \
             every buffer."
        ),
    );
    let best = table
        .iter()
        .all(|r| (0..3).all(|vi| r.success5[3] >= r.success5[vi]) && r.success5[3] > r.success5[0]);
    report.claim(
        "D.3d",
        "PERT-ER with fine-RTO highest at every buffer (Figs. 5–6)",
        table
            .iter()
            .map(|r| format!("{} KB: {}", r.buffer, s5(r)))
            .collect::<Vec<_>>()
            .join("; "),
        Verdict::of(false, best),
        "Shape when PERT-ER with fine-RTO has at least every other variant's success at SUD 5 s \
         at every buffer, and more than PERT's. The paper gives no numbers for the combination.",
    );
}

/// The check that explains why ER changes little here (named by D.1d, D.2a and D.3c in the
/// claims file).
const ER_IDLE: &str =
    "ER has almost nothing to act on: PERT-ER's streams make under 1/20 of SACK's \
     fast retransmissions and ER fires under once per stream per 1000 s (part 1)";

/// Fast and early retransmissions per stream and 1000 s in part 1: SACK (0) against PERT-ER (2).
fn er_idle(tmu: &[(Variant, Vec<Stream>)]) -> bool {
    let per = |vi: usize, f: fn(&Stream) -> f64| {
        let s = &tmu[vi].1;
        let active: f64 = s.iter().map(|x| x.active_s).sum();
        s.iter().map(f).sum::<f64>() * 1000.0 / active.max(1e-9)
    };
    let (sack_fast, er_fast, er_early) =
        (per(0, |x| x.fast), per(2, |x| x.fast), per(2, |x| x.early));
    sack_fast > 0.0 && er_fast < sack_fast / 20.0 && er_early < 1.0
}
