use thinlab_sim::*;
#[test]
fn smoke() {
    let s = Scenario::from_toml_str(r#"
name = "x"
duration = "10s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[[flow]]
app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }
"#).unwrap();
    let r = run(&s, 1);
    let f = &r.flows[0];
    println!("end {} events {} drain {} completed {} writes {} delivered {} dur {:?}", r.end_time, r.events_processed, r.drain_bound_hit, f.completed, f.records.writes.len(), f.records.bytes_delivered, f.duration);
    for w in f.records.writes.iter().take(4) { println!("{:?} app lat {:?}", w, w.app.map(|a| a - w.write_time)); }
    println!("{:?}", f.sender_stats);
    println!("{:?}", r.links);
}
