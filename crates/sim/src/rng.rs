//! Per-component random streams. Each stream is a ChaCha8 generator seeded from a hash of the
//! run seed and a component id, so components never share draws: adding a flow, or turning on
//! jitter, does not change another component's sequence. Same seed ⇒ same streams.

use rand_chacha::rand_core::SeedableRng;
pub use rand_chacha::ChaCha8Rng as Rng;

/// What a random stream belongs to. Flow indices are positions in the scenario's `[[flow]]` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// The flow's traffic source (sizes, gaps).
    App(u32),
    /// The flow's initial sequence numbers.
    Isn(u32),
    /// Loss draws for the flow's packets entering the bottleneck; `forward` = client → server.
    Loss { flow: u32, forward: bool },
    /// Jitter draws for the flow's packets on the bottleneck.
    Jitter { flow: u32, forward: bool },
}

impl Component {
    fn id(self) -> (u64, u64) {
        match self {
            Component::App(f) => (1, f as u64),
            Component::Isn(f) => (2, f as u64),
            Component::Loss { flow, forward } => (3 + forward as u64, flow as u64),
            Component::Jitter { flow, forward } => (5 + forward as u64, flow as u64),
        }
    }
}

/// SplitMix64 step: a bijective, well-mixing 64-bit function.
pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The 32-byte ChaCha seed of `(run_seed, component)`.
pub fn seed_bytes(run_seed: u64, c: Component) -> [u8; 32] {
    let (kind, index) = c.id();
    let mut h = splitmix(run_seed ^ 0x7468_696E_6C61_6221); // "thinlab!"
    h = splitmix(h ^ kind.wrapping_mul(0xA24B_AED4_963E_E407));
    h = splitmix(h ^ index.wrapping_mul(0x9FB2_1C65_1E98_DF25));
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
        h = splitmix(h ^ i as u64);
        chunk.copy_from_slice(&h.to_le_bytes());
    }
    out
}

/// The random stream of `component` in the run seeded with `run_seed`.
pub fn stream(run_seed: u64, component: Component) -> Rng {
    Rng::from_seed(seed_bytes(run_seed, component))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn streams_are_distinct_and_reproducible() {
        let a: u64 = stream(1, Component::App(0)).gen();
        let a2: u64 = stream(1, Component::App(0)).gen();
        let b: u64 = stream(1, Component::App(1)).gen();
        let c: u64 = stream(2, Component::App(0)).gen();
        let d: u64 = stream(1, Component::Isn(0)).gen();
        let e: u64 = stream(
            1,
            Component::Loss {
                flow: 0,
                forward: true,
            },
        )
        .gen();
        let f: u64 = stream(
            1,
            Component::Loss {
                flow: 0,
                forward: false,
            },
        )
        .gen();
        assert_eq!(a, a2);
        let all = [a, b, c, d, e, f];
        for i in 0..all.len() {
            for j in i + 1..all.len() {
                assert_ne!(all[i], all[j], "{i} vs {j}");
            }
        }
    }
}
