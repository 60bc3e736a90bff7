//! Properties: links never reorder and respect their queue limit; for any script of dropped
//! packets a run terminates and delivers every written byte.

use proptest::prelude::*;
use thinlab_sim::link::{serialisation_ns, Link};
use thinlab_sim::{run, QueueLimit, Scenario};

proptest! {
    #[test]
    fn link_fifo_never_reorders_and_respects_limit(
        pkts in prop::collection::vec((0u64..2_000_000, 40u32..1600, 0u64..20_000_000), 1..200),
        limit in 1u64..20,
    ) {
        let rate = 10_000_000;
        let mut l = Link::new(Some(rate), 5_000_000, Some(QueueLimit::Packets(limit)));
        let mut now = 0;
        let mut last = 0;
        for (gap, bytes, jitter) in pkts {
            now += gap;
            if let Some(at) = l.offer(now, bytes, jitter) {
                prop_assert!(at >= last);
                prop_assert!(at >= now + 5_000_000 + serialisation_ns(bytes, Some(rate)));
                last = at;
            }
            prop_assert!(l.queue_len(now) as u64 <= limit);
        }
    }

    #[test]
    fn any_drop_script_terminates_and_delivers_everything(
        fwd in prop::collection::btree_set(1i64..60, 0..6),
        rev in prop::collection::btree_set(1i64..60, 0..6),
        seed in 0u64..1000,
    ) {
        let list = |s: &std::collections::BTreeSet<i64>| s.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
        let s = Scenario::from_toml_str(&format!(r#"
name = "script"
duration = "3s"
[network]
rtt = "40ms"
bandwidth = "10Mbit"
jitter = "1ms"
[network.forward.loss]
model = "positions"
positions = [{}]
[network.reverse.loss]
model = "positions"
positions = [{}]
[[flow]]
app = {{ kind = "fixed", payload_bytes = 300, interval = "30ms" }}
[[flow]]
app = {{ kind = "transfer", writes = 8, write_bytes = 2500 }}
"#, list(&fwd), list(&rev))).unwrap();
        let r = run(&s, seed);
        prop_assert!(!r.drain_bound_hit);
        for f in &r.flows {
            prop_assert!(f.completed, "{} not completed: {:?}", f.name, f.sender_stats);
            prop_assert_eq!(f.records.bytes_delivered, f.records.bytes_written());
        }
    }
}
