//! Application profiles (`app.kind = "profile"`): the TCP rows of Evensen (2008) Table 2.1
//! ("Examples of thin stream packet statistics based on analysis of packet traces"), plus Age of
//! Conan from the same table as reprinted in Petlund & Evensen (2008), as traffic sources.
//!
//! Each profile carries the table's published statistics verbatim and two fitted distributions
//! (docs/app-profiles.md):
//!
//! - **interarrival time**: the maximum-entropy distribution that has the published minimum,
//!   1 % percentile, median, 99 % percentile and maximum as its 0, 0.01, 0.5, 0.99 and 1
//!   quantiles and the published mean. Between consecutive quantile knots its density is
//!   `∝ exp(−λ·x)` with one `λ` for all segments (the Lagrange multiplier of the mean
//!   constraint); a segment whose two knots are equal is a point mass;
//! - **payload size**: the maximum-entropy distribution on `[min, max]` with the published mean,
//!   a truncated exponential `∝ exp(−λ·x)` (the table gives no payload quantiles), rounded to
//!   whole bytes.
//!
//! `λ` is found by bisection when the profile is looked up, so the fit is computed in code,
//! deterministically, from the verbatim table values.

/// One row of Table 2.1, verbatim. Payload sizes in bytes, interarrival times in ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableRow {
    /// Scenario name (`app.name`).
    pub name: &'static str,
    /// The table's application column.
    pub application: &'static str,
    pub payload_avg: f64,
    pub payload_min: f64,
    pub payload_max: f64,
    pub iat_avg_ms: f64,
    pub iat_median_ms: f64,
    pub iat_min_ms: f64,
    pub iat_max_ms: f64,
    pub iat_p1_ms: f64,
    pub iat_p99_ms: f64,
    /// Average packets per second (the table's bandwidth requirement, pps).
    pub pps: f64,
    /// Average bandwidth requirement (bps, the table's; includes headers).
    pub bps: f64,
}

const fn row(
    name: &'static str,
    application: &'static str,
    payload: [f64; 3],
    iat: [f64; 6],
    bw: [f64; 2],
) -> TableRow {
    TableRow {
        name,
        application,
        payload_avg: payload[0],
        payload_min: payload[1],
        payload_max: payload[2],
        iat_avg_ms: iat[0],
        iat_median_ms: iat[1],
        iat_min_ms: iat[2],
        iat_max_ms: iat[3],
        iat_p1_ms: iat[4],
        iat_p99_ms: iat[5],
        pps: bw[0],
        bps: bw[1],
    }
}

/// The TCP rows of Evensen (2008) Table 2.1, in table order, then Age of Conan (Petlund & Evensen's
/// (2008) reprint of the table, TCP). Columns: payload avg/min/max (bytes); interarrival
/// avg/median/min/max/1 %/99 % (ms); bandwidth (pps, bps).
#[rustfmt::skip]
pub const TABLE: &[TableRow] = &[
    // Table 2.1 row 1: Anarchy Online | TCP | 98 8 1333 | 632 449 7 17032 83 4195 | 1.582 2168
    row("anarchy-online", "Anarchy Online", [98.0, 8.0, 1333.0], [632.0, 449.0, 7.0, 17032.0, 83.0, 4195.0], [1.582, 2168.0]),
    // Table 2.1 row 2: BZFlag | TCP | 30 4 1448 | 24 0 0 540 0 151 | 41.667 31370
    row("bzflag", "BZFlag", [30.0, 4.0, 1448.0], [24.0, 0.0, 0.0, 540.0, 0.0, 151.0], [41.667, 31370.0]),
    // Table 2.1 row 7: World of Warcraft | TCP | 26 6 1228 | 314 133 0 14855 0 3785 | 3.185 2046
    row("world-of-warcraft", "World of Warcraft", [26.0, 6.0, 1228.0], [314.0, 133.0, 0.0, 14855.0, 0.0, 3785.0], [3.185, 2046.0]),
    // Table 2.1 row 8: Casa | TCP | 175 93 572 | 7287 307 305 29898 305 29898 | 0.137 269
    row("casa", "Casa", [175.0, 93.0, 572.0], [7287.0, 307.0, 305.0, 29898.0, 305.0, 29898.0], [0.137, 269.0]),
    // Table 2.1 row 9: Windows remote desktop | TCP | 111 8 1417 | 318 159 1 12254 2 3892 | 3.145 4497
    row("windows-remote-desktop", "Windows remote desktop", [111.0, 8.0, 1417.0], [318.0, 159.0, 1.0, 12254.0, 2.0, 3892.0], [3.145, 4497.0]),
    // Table 2.1 row 11: Skype (2 users) | TCP | 236 14 1267 | 34 40 0 1671 4 80 | 29.412 69296
    row("skype-tcp", "Skype (2 users), TCP", [236.0, 14.0, 1267.0], [34.0, 40.0, 0.0, 1671.0, 4.0, 80.0], [29.412, 69296.0]),
    // Table 2.1 row 12: SSH text session | TCP | 48 16 752 | 323 159 0 76610 32 3616 | 3.096 2825
    row("ssh", "SSH text session", [48.0, 16.0, 752.0], [323.0, 159.0, 0.0, 76610.0, 32.0, 3616.0], [3.096, 2825.0]),
    // Table 2.1 row 13: Bulk data transfer | TCP | 1335 29 1460 | 10 0 0 1498 0 391 | 100.000 1247552
    row("bulk-data-transfer", "Bulk data transfer", [1335.0, 29.0, 1460.0], [10.0, 0.0, 0.0, 1498.0, 0.0, 391.0], [100.0, 1247552.0]),
    // Petlund & Evensen (2008), "Examples of thin-stream applications": Age of Conan | 80 5 1460 |
    // 86 57 0 1375 24 386 | 11.628 12375
    row("age-of-conan", "Age of Conan", [80.0, 5.0, 1460.0], [86.0, 57.0, 0.0, 1375.0, 24.0, 386.0], [11.628, 12375.0]),
];

/// The known profile names, in table order.
pub fn names() -> Vec<&'static str> {
    TABLE.iter().map(|r| r.name).collect()
}

/// A fitted profile: the table row and the two fitted distributions.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub row: TableRow,
    /// Interarrival time, ms.
    pub iat: PiecewisePowerLaw,
    /// Payload size, bytes (continuous; samples are rounded to whole bytes).
    pub payload: PiecewisePowerLaw,
}

/// The power-law shift of interarrival times: 1 ms, the table's resolution.
pub const SHIFT_MS: f64 = 1.0;
/// The power-law shift of payload sizes: 1 byte.
pub const SHIFT_BYTES: f64 = 1.0;

/// Looks up and fits a profile by name.
pub fn profile(name: &str) -> Option<Profile> {
    TABLE.iter().find(|r| r.name == name).map(fit)
}

/// Fits both distributions of a table row.
pub fn fit(r: &TableRow) -> Profile {
    let iat = PiecewisePowerLaw::fit(
        &[
            (0.0, r.iat_min_ms),
            (0.01, r.iat_p1_ms),
            (0.5, r.iat_median_ms),
            (0.99, r.iat_p99_ms),
            (1.0, r.iat_max_ms),
        ],
        SHIFT_MS,
        r.iat_avg_ms,
    );
    let payload = PiecewisePowerLaw::fit(
        &[(0.0, r.payload_min), (1.0, r.payload_max)],
        SHIFT_BYTES,
        r.payload_avg,
    );
    Profile {
        row: *r,
        iat,
        payload,
    }
}

impl Profile {
    /// One payload size in whole bytes within `[min, max]`.
    pub fn sample_payload(&self, rng: &mut impl rand::Rng) -> u64 {
        let x = self.payload.sample(rng).round();
        x.clamp(self.row.payload_min, self.row.payload_max).max(1.0) as u64
    }

    /// One interarrival time in ns.
    pub fn sample_gap_ns(&self, rng: &mut impl rand::Rng) -> u64 {
        (self.iat.sample(rng) * 1e6).round().max(0.0) as u64
    }
}

/// A distribution given by quantile knots `(u_i, q_i)` (`u` from 0 to 1, `q` non-decreasing):
/// on each segment `[q_i, q_{i+1}]` it has mass `u_{i+1} − u_i` and a truncated power-law
/// density `∝ (x + shift)^−(λ+1)`, one `λ` for all segments, solved so the mean matches.
/// Equivalently, `y = ln(x + shift)` has a piecewise density `∝ exp(−λ·y)`. A segment whose
/// two knots are equal is a point mass.
#[derive(Clone, Debug, PartialEq)]
pub struct PiecewisePowerLaw {
    pub knots: Vec<(f64, f64)>,
    /// Added to `x` before taking the power (keeps knots at 0 finite).
    pub shift: f64,
    /// The tilt of `ln(x + shift)`; the density exponent is `−(λ + 1)`.
    pub lambda: f64,
}

/// `ln((e^z − 1) / z)`, without overflow.
fn ln_phi(z: f64) -> f64 {
    if z.abs() < 1e-8 {
        z / 2.0
    } else if z > 0.0 {
        z + (-(-z).exp_m1()).ln() - z.ln()
    } else {
        (-z.exp_m1()).ln() - (-z).ln()
    }
}

/// Fraction of a segment's width at conditional probability `t ∈ [0, 1]`, for `z = λ·width`.
fn seg_quantile_frac(z: f64, t: f64) -> f64 {
    if z.abs() < 1e-9 {
        t
    } else if z > 0.0 {
        // Inverse of (1 − e^{−z·y}) / (1 − e^{−z}) = t: y = −ln(1 − t·(1 − e^{−z})) / z,
        // evaluated in the form that keeps its precision at each end.
        let l = if t <= 0.5 {
            (t * (-z).exp_m1()).ln_1p()
        } else {
            ((1.0 - t) + t * (-z).exp()).ln()
        };
        (-l / z).clamp(0.0, 1.0)
    } else {
        1.0 - seg_quantile_frac(-z, 1.0 - t)
    }
}

impl PiecewisePowerLaw {
    fn with_lambda(knots: &[(f64, f64)], shift: f64, lambda: f64) -> PiecewisePowerLaw {
        PiecewisePowerLaw {
            knots: knots.to_vec(),
            shift,
            lambda,
        }
    }

    /// Fits `λ` so the mean is `mean` (bisection on a tan-mapped `λ`; the mean is strictly
    /// decreasing in `λ` unless every segment is a point mass, and a mean outside the
    /// achievable range is clamped to it).
    pub fn fit(knots: &[(f64, f64)], shift: f64, mean: f64) -> PiecewisePowerLaw {
        let lam = |p: f64| (p * std::f64::consts::FRAC_PI_2).tan();
        let (mut lo, mut hi) = (-0.999_99, 0.999_99);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if Self::with_lambda(knots, shift, lam(mid)).mean() > mean {
                lo = mid; // mean too high: more weight on small values
            } else {
                hi = mid;
            }
        }
        Self::with_lambda(knots, shift, lam(0.5 * (lo + hi)))
    }

    /// Segments in log space: (u start, mass, ln(q_i + shift), its width).
    fn segments(&self) -> impl Iterator<Item = (f64, f64, f64, f64)> + '_ {
        self.knots.windows(2).map(|w| {
            let y0 = (w[0].1 + self.shift).ln();
            let y1 = (w[1].1 + self.shift).ln();
            (w[0].0, w[1].0 - w[0].0, y0, y1 - y0)
        })
    }

    /// The exact mean.
    pub fn mean(&self) -> f64 {
        let l = self.lambda;
        self.segments()
            .map(|(_, w, y, d)| w * (y + ln_phi((1.0 - l) * d) - ln_phi(-l * d)).exp())
            .sum::<f64>()
            - self.shift
    }

    /// The quantile function.
    pub fn quantile(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        let (lo, hi) = (self.knots[0].1, self.knots[self.knots.len() - 1].1);
        for (u0, w, y, d) in self.segments() {
            if u <= u0 + w && w > 0.0 {
                let t = ((u - u0) / w).clamp(0.0, 1.0);
                let x = (y + d * seg_quantile_frac(self.lambda * d, t)).exp() - self.shift;
                return x.clamp(lo, hi);
            }
        }
        hi
    }

    /// One draw (inverse-CDF sampling of a uniform in `[0, 1)`).
    pub fn sample(&self, rng: &mut impl rand::Rng) -> f64 {
        self.quantile(rng.gen::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Component};

    const N: usize = 100_000;

    /// Sorted samples of one profile: (gaps in ms, payloads in bytes).
    fn samples(p: &Profile, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = stream(seed, Component::App(0));
        let mut g = Vec::with_capacity(N);
        let mut b = Vec::with_capacity(N);
        for _ in 0..N {
            b.push(p.sample_payload(&mut rng) as f64);
            g.push(p.sample_gap_ns(&mut rng) as f64 / 1e6);
        }
        g.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        (g, b)
    }

    fn mean_sd(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
        (m, v.sqrt())
    }

    /// Empirical quantile (nearest rank).
    fn q(sorted: &[f64], u: f64) -> f64 {
        sorted[((u * sorted.len() as f64) as usize).min(sorted.len() - 1)]
    }

    #[test]
    fn table_is_consistent() {
        let mut names = names();
        assert_eq!(names.len(), 9);
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 9, "duplicate names");
        for r in TABLE {
            let k = [
                r.iat_min_ms,
                r.iat_p1_ms,
                r.iat_median_ms,
                r.iat_p99_ms,
                r.iat_max_ms,
            ];
            assert!(k.windows(2).all(|w| w[0] <= w[1]), "{}", r.name);
            assert!(r.payload_min < r.payload_avg && r.payload_avg < r.payload_max);
            // The pps column is 1000 / mean interarrival time (ms).
            assert!(
                (1000.0 / r.iat_avg_ms - r.pps).abs() / r.pps < 0.005,
                "{}",
                r.name
            );
        }
    }

    #[test]
    fn fitted_means_are_exact_and_knots_are_hit() {
        for r in TABLE {
            let p = fit(r);
            assert!(
                (p.iat.mean() - r.iat_avg_ms).abs() / r.iat_avg_ms < 1e-6,
                "{}: iat mean {}",
                r.name,
                p.iat.mean()
            );
            assert!(
                (p.payload.mean() - r.payload_avg).abs() / r.payload_avg < 1e-6,
                "{}: payload mean {}",
                r.name,
                p.payload.mean()
            );
            for (u, want) in [
                (0.0, r.iat_min_ms),
                (0.01, r.iat_p1_ms),
                (0.5, r.iat_median_ms),
                (0.99, r.iat_p99_ms),
                (1.0, r.iat_max_ms),
            ] {
                let got = p.iat.quantile(u);
                assert!(
                    (got - want).abs() < 1e-6 * want.max(1.0),
                    "{} q({u}) = {got}",
                    r.name
                );
            }
            // Quantile function is non-decreasing.
            let mut prev = f64::NEG_INFINITY;
            for i in 0..=10_000 {
                let x = p.iat.quantile(i as f64 / 10_000.0);
                assert!(x >= prev - 1e-9, "{}", r.name);
                prev = x;
            }
        }
    }

    /// 100k samples of every profile reproduce the table's mean (within 4 standard errors or
    /// 1.5 %), median and 1 %/99 % percentiles (empirical CDF at the published value), min and
    /// max (all samples inside [min, max], extremes within 3 % of the range of them).
    #[test]
    fn samples_match_the_table() {
        for r in TABLE {
            let p = profile(r.name).unwrap();
            let (g, b) = samples(&p, 7);
            let (gm, gsd) = mean_sd(&g);
            let tol = (4.0 * gsd / (N as f64).sqrt()).max(0.015 * r.iat_avg_ms);
            assert!(
                (gm - r.iat_avg_ms).abs() <= tol,
                "{}: iat mean {gm} vs {} ± {tol}",
                r.name,
                r.iat_avg_ms
            );
            // Percentiles: the fraction of samples below the published value is at most u
            // and the fraction at or below it at least u (±0.3 % for p1/p99, ±1 % for the
            // median), so point masses (e.g. BZFlag's median 0) are handled.
            for (u, want, tol) in [
                (0.01, r.iat_p1_ms, 0.003),
                (0.5, r.iat_median_ms, 0.01),
                (0.99, r.iat_p99_ms, 0.003),
            ] {
                let below = g.partition_point(|&x| x < want - 5e-7) as f64 / N as f64;
                let at_or_below = g.partition_point(|&x| x <= want + 5e-7) as f64 / N as f64;
                assert!(
                    below <= u + tol && at_or_below >= u - tol,
                    "{}: iat q{u} = {want}: F(<) {below}, F(<=) {at_or_below}",
                    r.name
                );
            }
            // Extremes: every sample inside [min, max]; the smallest within 1 % of the
            // [min, p1] segment of min, the largest in the top 10 % of the [p99, max] segment.
            let gmax = g[N - 1];
            assert!(
                g[0] >= r.iat_min_ms - 1e-6
                    && g[0] <= r.iat_min_ms + 0.01 * (r.iat_p1_ms - r.iat_min_ms) + 1e-6,
                "{}: min {}",
                r.name,
                g[0]
            );
            assert!(
                gmax <= r.iat_max_ms + 1e-6
                    && gmax >= r.iat_max_ms - 0.1 * (r.iat_max_ms - r.iat_p99_ms) - 1e-6,
                "{}: max {gmax}",
                r.name
            );

            let (bm, bsd) = mean_sd(&b);
            let tol = (4.0 * bsd / (N as f64).sqrt()).max(0.01 * r.payload_avg);
            assert!(
                (bm - r.payload_avg).abs() <= tol,
                "{}: payload mean {bm} vs {}",
                r.name,
                r.payload_avg
            );
            // Payload extremes: the published min is sampled exactly (except for bulk data
            // transfer, whose mass sits near the max: mean 1335 of [29, 1460]), the max within 1 %.
            let brange = r.payload_max - r.payload_min;
            if r.name == "bulk-data-transfer" {
                assert!(b[0] >= r.payload_min && b[0] <= r.payload_min + 0.25 * brange);
            } else {
                assert_eq!(b[0], r.payload_min, "{}: payload min", r.name);
            }
            assert!(
                b[N - 1] <= r.payload_max && b[N - 1] >= r.payload_max - 0.01 * brange,
                "{}: payload max {}",
                r.name,
                b[N - 1]
            );
        }
    }

    #[test]
    fn unknown_name() {
        assert!(profile("skype").is_none());
        assert!(profile("skype-tcp").is_some());
    }

    /// Prints the residual table of docs/app-profiles.md:
    /// `cargo test -p thinlab-sim --lib app_profiles::tests::residual_table -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn residual_table() {
        println!("| profile | λ IAT | IAT mean ms (table / 100k) | median | F(median) | p1 | F(<p1), F(≤p1) | p99 | F(<p99), F(≤p99) | min | max | λ payload | payload mean B | min | max |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for r in TABLE {
            let p = profile(r.name).unwrap();
            let (g, b) = samples(&p, 7);
            let c = |t: f64, a: f64| format!("{t} / {a:.1}");
            let f = |x: f64| {
                let lt = g.partition_point(|&v| v < x - 5e-7) as f64 / N as f64;
                let le = g.partition_point(|&v| v <= x + 5e-7) as f64 / N as f64;
                format!("{lt:.4}, {le:.4}")
            };
            println!(
                "| `{}` | {:.3} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} | {} |",
                r.name,
                p.iat.lambda,
                c(r.iat_avg_ms, mean_sd(&g).0),
                c(r.iat_median_ms, q(&g, 0.5)),
                f(r.iat_median_ms),
                c(r.iat_p1_ms, q(&g, 0.01)),
                f(r.iat_p1_ms),
                c(r.iat_p99_ms, q(&g, 0.99)),
                f(r.iat_p99_ms),
                c(r.iat_min_ms, g[0]),
                c(r.iat_max_ms, g[N - 1]),
                p.payload.lambda,
                c(r.payload_avg, mean_sd(&b).0),
                c(r.payload_min, b[0]),
                c(r.payload_max, b[N - 1]),
            );
        }
    }
}
