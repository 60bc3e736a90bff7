//! The names of every choice a scenario makes about TCP, in one place: mechanisms, congestion
//! controllers, RDB variants, thin-stream tests, delayed-ACK models (profiles and the
//! cwnd-reduction choice name themselves in `config.rs`). The scenario parser, the emulator's
//! support check, the reproductions and the benches look names up here (`from_name`) and
//! print them from here (`name`), so a new mechanism is registered by one entry in
//! [`Mechanism`] and its `Mechanisms` field.

use crate::config::{CcAlgorithm, DelayedAckModel, Mechanisms, RdbVariant, ThinDetection};

/// A thin-stream or modern mechanism of `tcp.mechanisms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mechanism {
    Rdb,
    LinearTimeouts,
    ThinDupack,
    EarlyRetransmit,
    ErThreshold,
    Tlp,
    Rack,
}

/// `name()` / `from_name()` over a fixed list of values.
macro_rules! named {
    ($t:ident, $( $v:ident => $n:literal ),+ $(,)?) => {
        impl $t {
            /// Every value, in the order the documentation lists them.
            pub const ALL: &'static [$t] = &[$($t::$v),+];
            /// The name a scenario uses.
            pub fn name(self) -> &'static str {
                match self { $( $t::$v => $n, )+ }
            }
            /// The value a scenario name stands for.
            pub fn from_name(s: &str) -> Option<$t> {
                Self::ALL.iter().copied().find(|v| v.name() == s)
            }
            /// The accepted names, quoted and comma-separated (for error messages).
            pub fn names() -> String {
                Self::ALL.iter().map(|v| format!("\"{}\"", v.name())).collect::<Vec<_>>().join(", ")
            }
        }
    };
}

named!(Mechanism,
    Rdb => "rdb",
    LinearTimeouts => "linear-timeouts",
    ThinDupack => "thin-dupack",
    EarlyRetransmit => "early-retransmit",
    ErThreshold => "er-threshold",
    Tlp => "tlp",
    Rack => "rack",
);

named!(CcAlgorithm,
    NewReno => "newreno",
    Reno => "reno",
    Cubic => "cubic",
    Pert => "pert",
    PertAdaptive => "pert-adaptive",
    Bic => "bic",
    Westwood => "westwood",
    Vegas => "vegas",
);

named!(RdbVariant,
    Seed => "seed",
    Patch => "patch",
    Adaptive => "adaptive",
);

named!(ThinDetection,
    Pif4 => "pif4",
    Dpifl => "dpifl",
);

named!(DelayedAckModel,
    Linux => "linux",
    FreeBsd6 => "freebsd6",
    Off => "off",
);

impl Mechanisms {
    /// Whether mechanism `m` is on.
    pub fn get(&self, m: Mechanism) -> bool {
        *self.field(m)
    }
    /// Switch mechanism `m` on or off.
    pub fn set(&mut self, m: Mechanism, on: bool) {
        *self.field_mut(m) = on;
    }
    /// The mechanisms that are on, in registry order.
    pub fn enabled(&self) -> Vec<Mechanism> {
        Mechanism::ALL
            .iter()
            .copied()
            .filter(|&m| self.get(m))
            .collect()
    }
    /// The set named by `names` (each a [`Mechanism::name`]); `Err` carries the first unknown
    /// name and its index.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Mechanisms, (usize, String)> {
        let mut m = Mechanisms::default();
        for (i, n) in names.iter().enumerate() {
            let mech = Mechanism::from_name(n.as_ref()).ok_or((i, n.as_ref().to_string()))?;
            m.set(mech, true);
        }
        Ok(m)
    }
    fn field(&self, m: Mechanism) -> &bool {
        match m {
            Mechanism::Rdb => &self.rdb,
            Mechanism::LinearTimeouts => &self.linear_timeouts,
            Mechanism::ThinDupack => &self.thin_dupack,
            Mechanism::EarlyRetransmit => &self.early_retransmit,
            Mechanism::ErThreshold => &self.er_threshold,
            Mechanism::Tlp => &self.tlp,
            Mechanism::Rack => &self.rack,
        }
    }
    fn field_mut(&mut self, m: Mechanism) -> &mut bool {
        match m {
            Mechanism::Rdb => &mut self.rdb,
            Mechanism::LinearTimeouts => &mut self.linear_timeouts,
            Mechanism::ThinDupack => &mut self.thin_dupack,
            Mechanism::EarlyRetransmit => &mut self.early_retransmit,
            Mechanism::ErThreshold => &mut self.er_threshold,
            Mechanism::Tlp => &mut self.tlp,
            Mechanism::Rack => &mut self.rack,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &m in Mechanism::ALL {
            assert_eq!(Mechanism::from_name(m.name()), Some(m));
        }
        for &c in CcAlgorithm::ALL {
            assert_eq!(CcAlgorithm::from_name(c.name()), Some(c));
        }
        assert_eq!(RdbVariant::from_name("patch"), Some(RdbVariant::Patch));
        assert_eq!(Mechanism::from_name("RDB"), None);
        assert!(Mechanism::names().starts_with("\"rdb\", \"linear-timeouts\""));
    }

    #[test]
    fn sets_from_names() {
        let m = Mechanisms::from_names(&["tlp", "rack"]).unwrap();
        assert_eq!(m.enabled(), vec![Mechanism::Tlp, Mechanism::Rack]);
        assert!(m.get(Mechanism::Rack) && !m.get(Mechanism::Rdb));
        assert_eq!(
            Mechanisms::from_names(&["rdb", "x"]),
            Err((1, "x".to_string()))
        );
    }
}
