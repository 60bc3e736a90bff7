//! One TCP configuration for many flows: flows in a row with equal configurations (a flow
//! group's) share one allocation, which their endpoints keep ([`Endpoint::share_config`]), so
//! that ten thousand flows read one configuration that stays in the cache instead of twenty
//! thousand copies (docs/performance/many-flows.md, "One configuration for many flows").

use crate::scenario::Scenario;
use std::sync::Arc;
#[cfg(doc)]
use thinlab_tcp::Endpoint;
use thinlab_tcp::TcpConfig;

/// Each flow's TCP configuration, flows in a row with equal ones sharing one allocation
/// ([`Endpoint::share_config`]; a flow group's flows are in a row).
pub(super) fn shared_configs(s: &Scenario) -> Vec<Arc<TcpConfig>> {
    let mut configs: Vec<Arc<TcpConfig>> = Vec::with_capacity(s.flows.len());
    for f in &s.flows {
        let c = match configs.last() {
            Some(last) if **last == f.tcp => Arc::clone(last),
            _ => Arc::new(f.tcp.clone()),
        };
        configs.push(c);
    }
    configs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flows in a row with equal TCP configurations share one; a different one starts anew.
    #[test]
    fn flows_in_a_row_share_equal_configurations() {
        let s = Scenario::from_toml_str(
            r#"
            name = "share"
            duration = "1s"
            [network]
            rtt = "10ms"
            bandwidth = "10Mbit"
            [[flow]]
            name = "a"
            app = { kind = "bulk" }
            [[flow]]
            name = "b"
            app = { kind = "bulk" }
            [[flow]]
            name = "c"
            app = { kind = "bulk" }
            tcp = { mss = 536 }
            [[flow]]
            name = "d"
            app = { kind = "bulk" }
            "#,
        )
        .unwrap();
        let c = shared_configs(&s);
        assert!(Arc::ptr_eq(&c[0], &c[1]));
        assert!(!Arc::ptr_eq(&c[1], &c[2]));
        assert_eq!(c[2].mss, 536);
        assert!(!Arc::ptr_eq(&c[2], &c[3]));
        assert_eq!(*c[3], *c[0]);
    }
}
