//! Claim D.4 of the `yin` study: Yin et al. (Fig. 4) say ER's reduction of the Session Frozen
//! Time follows the pattern of the successful streams, largest at low T/μ. Part 1's streams,
//! split by the T/μ band of their run, PERT against PERT-ER.

use super::*;

/// (band index, streams of each, PERT's SFT, PERT-ER's SFT, relative reduction %) per band
/// with at least `min_streams` streams of both, SFT in s per stream and 1000 s.
fn by_band(
    tmu: &[(Variant, Vec<Stream>)],
    min_streams: usize,
) -> Vec<(usize, usize, f64, f64, f64)> {
    let of = |v: Variant| tmu.iter().find(|(x, _)| *x == v).map(|(_, s)| s.as_slice());
    let (Some(pert), Some(er)) = (of(Variant::Pert), of(Variant::PertEr)) else {
        return Vec::new();
    };
    BANDS
        .iter()
        .enumerate()
        .filter_map(|(bi, &b)| {
            let (p, e) = (in_band(pert, b), in_band(er, b));
            let n = p.len().min(e.len());
            if n < min_streams {
                return None;
            }
            let (ps, es) = (per_1000s(p.into_iter()).1, per_1000s(e.into_iter()).1);
            let rel = if ps > 0.0 {
                100.0 * (ps - es) / ps
            } else {
                0.0
            };
            Some((bi, n, ps, es, rel))
        })
        .collect()
}

pub(super) fn sft_band_claim(report: &mut Report, tmu: &[(Variant, Vec<Stream>)]) {
    let file = crate::reproduce::claims::of("yin");
    let rows = by_band(tmu, file.num("D.4", "min_streams") as usize);
    let judged = rows.len() >= 2;
    let largest_low = rows
        .iter()
        .all(|r| r.4 <= rows.first().map_or(f64::NAN, |f| f.4));
    let number = judged && rows.iter().all(|r| r.4 > 0.0) && largest_low;
    let shape = judged && rows[0].4 > 0.0 && rows[0].4 >= rows[rows.len() - 1].4;
    let ours = if rows.is_empty() {
        "no band has streams of both PERT and PERT-ER".to_string()
    } else {
        rows.iter()
            .map(|r| {
                format!(
                    "{}: {} → {} s ({:+.0} %, {} streams)",
                    band_label(r.0),
                    num(r.2, 1),
                    num(r.3, 1),
                    -r.4,
                    r.1
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    report.claim(
        "D.4",
        "ER's SFT reduction largest at low T/μ (Fig. 4)",
        ours,
        Verdict::of(number, shape),
        "SFT per stream and 1000 s of streaming, PERT → PERT-ER, by the T/μ band of the run \
         (part 1, buffer 160 KB), in bands with enough streams of both. Reproduced when ER \
         lowers SFT in every band and most (relative to PERT's) in the lowest; in shape when \
         the lowest band's reduction is positive and at least the highest band's.",
    );
}
