//! The `yin` study's adaptive-PERT part: the adaptive PERT Yin et al. cite (Kotla and
//! Reddy, "Making a delay-based protocol adaptive to heterogeneous environments") run as a named
//! variant (`cc = "pert-adaptive"`, crates/tcp/src/cc/pert.rs says which adaptations) on the same
//! parts 1 and 2, with and without ER, beside plain PERT. Reported, not judged: the paper did not
//! run it, and nothing here was tuned.

use super::*;

const VARIANTS: [Variant; 2] = [Variant::Adaptive, Variant::AdaptiveEr];

/// Runs the two adaptive variants on part 1 (every N, 160 KB) and part 2 (N = n_fine, every
/// buffer) and writes the section comparing them with PERT and PERT-ER.
pub(super) fn section(
    ctx: &mut Ctx,
    plan: &Plan,
    tmu: &[(Variant, Vec<Stream>)],
    fine: &[(Variant, ByBuffer)],
    commands: &mut Vec<String>,
) -> Result<String> {
    let mut part1: Vec<(Variant, Vec<Stream>)> = Vec::new();
    for v in VARIANTS {
        let mut acc = Vec::new();
        for &n in &plan.n_tmu {
            let text = scenario_text(n, v, plan.duration_s, plan.repetitions, 160);
            let ran = run_part(ctx, &format!("tmu-n{n}-{}", v.slug()), text, &[])?;
            acc.extend(streams(&ran, 0, n));
            commands.push(ran.command.clone());
        }
        part1.push((v, acc));
    }
    let mut part2: Vec<(Variant, ByBuffer)> = Vec::new();
    for v in VARIANTS {
        part2.push((v, buffer_part(ctx, plan, v, commands)?));
    }

    let mut sec = String::from(
        "## Adaptive PERT, a named variant (not in the paper)\n\n\
         The paper's reference for an adaptive PERT (Kotla and Reddy) makes PERT's upper \
         threshold and its window reduction follow the largest queueing delay the flow has \
         seen (max_rtt − min_rtt): the early-response probability reaches 1 at \
         max(2·T_max, 0.65·(max_rtt − min_rtt)) instead of 2·T_max, and the window is cut by \
         β = q / (q + max(10 ms, max_rtt − min_rtt)) instead of 0.35; and while the queue stays \
         above max_q/2 (competing with loss-based flows) its additive increase α climbs by 0.1 \
         every 5 RTTs towards 1 + p_er/p_drop, the ratio of its early responses to its losses \
         (at most 32 segments per RTT), decaying back to 1 elsewhere \
         (crates/tcp/src/cc/pert_alpha.rs). Same runs as parts 1 and 2 (same seeds); not \
         tuned, not judged.\n\n",
    );
    // D.1: successful streams by band at SUD 5 and 10 s.
    let mut header = vec!["transport".to_string()];
    for b in BANDS {
        header.push(format!("{}–{}: SUD 5 s / 10 s", b.0, b.1));
    }
    header.push("RTOs / 1000 s".into());
    header.push("SFT s / 1000 s".into());
    let header: Vec<&str> = header.iter().map(|x| x.as_str()).collect();
    let plain = tmu
        .iter()
        .filter(|(v, _)| matches!(v, Variant::Pert | Variant::PertEr));
    let rows: Vec<Vec<String>> = plain
        .chain(part1.iter())
        .map(|(v, s)| {
            let mut r = vec![v.label().to_string()];
            for b in BANDS {
                let inb = in_band(s, b);
                r.push(if inb.is_empty() {
                    "–".into()
                } else {
                    format!(
                        "{} / {} % ({})",
                        num(success_pct(&inb, 5.0), 0),
                        num(success_pct(&inb, 10.0), 0),
                        inb.len()
                    )
                });
            }
            let (rto, sft) = per_1000s(s.iter());
            r.push(num(rto, 1));
            r.push(num(sft, 1));
            r
        })
        .collect();
    sec += "Part 1 (buffer 160 KB; D.1): successful streams by T/μ band (streams in \
            parentheses), and RTOs and SFT per stream pooled over bands:\n\n";
    sec += &md_table(&header, &rows);
    // D.2: RTOs, SFT and success at SUD 5 s by buffer.
    let plain2 = fine
        .iter()
        .filter(|(v, _)| matches!(v, Variant::Pert | Variant::PertEr));
    let all: Vec<&(Variant, ByBuffer)> = plain2.chain(part2.iter()).collect();
    let mut header = vec!["buffer".to_string()];
    header.extend(all.iter().map(|(v, _)| v.label().to_string()));
    let header: Vec<&str> = header.iter().map(|x| x.as_str()).collect();
    let mut rows = Vec::new();
    for (bi, b) in plan.buffers_kb.iter().enumerate() {
        let mut r = vec![format!("{b} KB")];
        for (_, per) in &all {
            let s = &per[bi].1;
            let (rto, sft) = per_1000s(s.iter());
            let refs: Vec<&Stream> = s.iter().collect();
            r.push(format!(
                "{} / {} / {} %",
                num(rto, 0),
                num(sft, 0),
                num(success_pct(&refs, 5.0), 0)
            ));
        }
        rows.push(r);
    }
    sec += &format!(
        "\nPart 2 (N = {}; D.2): RTOs / SFT (s) per stream and 1000 s / successful streams at \
         SUD 5 s, by buffer:\n\n",
        plan.n_fine
    );
    sec += &md_table(&header, &rows);
    Ok(sec)
}
