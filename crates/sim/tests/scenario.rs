//! Scenario parsing: the examples of docs/spec/interface.md parse, and every class of bad input
//! yields an error naming the dotted key, the value and the expectation.

use std::time::Duration;
use thinlab_sim::{App, Direction, LossModel, QueueLimit, Scenario, ScenarioError};

/// The example of docs/spec/interface.md, "Scenario file" (the CLI removes `[sweep]` before
/// from_toml).
const INTERFACE_EXAMPLE: &str = r#"
name = "quickstart"
seed = 1                 # runs use seed, seed+1, … for repetitions
duration = "60s"         # how long sources generate data; the run then drains (bounded)
repetitions = 1

[network]                # one bottleneck per direction shared by all flows
rtt = "100ms"            # base round-trip propagation delay, split evenly
bandwidth = "100Mbit"    # bottleneck rate, each direction
queue_packets = 1000     # drop-tail limit (or queue_bytes)
jitter = "0ms"

[network.loss]           # both directions; [network.forward.loss] / [network.reverse.loss] override
model = "bernoulli"      # "none" | "bernoulli" (rate) | "gilbert-elliott" (p, r, loss_good, loss_bad)
rate = 0.005             # | "positions" (list: 1-based packet indices in that direction)

[[flow]]                 # data from client to server unless direction = "reverse"
name = "game"
rtt = "0ms"              # extra per-flow access delay (optional)
access_bandwidth = "10Mbit"   # optional per-flow access link
start = "0s"
app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }
tcp = { profile = "linux-2.6.22", mechanisms = ["rdb", "linear-timeouts", "thin-dupack"] }
"#;

fn value(s: &str) -> toml::Value {
    toml::from_str(s).unwrap()
}

/// Sets a dotted key like the CLI's `--set` does (tables created as needed, array indices).
fn set(v: &mut toml::Value, key: &str, new: toml::Value) {
    let mut cur = v;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        cur = match cur {
            toml::Value::Array(a) => &mut a[p.parse::<usize>().unwrap()],
            toml::Value::Table(t) => {
                if last {
                    t.insert(p.to_string(), new);
                    return;
                }
                t.entry(p.to_string())
                    .or_insert_with(|| toml::Value::Table(Default::default()))
            }
            _ => panic!("not a container at {p}"),
        };
        if last {
            *cur = new;
            return;
        }
    }
}

fn remove(v: &mut toml::Value, key: &str) {
    let (parent, last) = key.rsplit_once('.').unwrap_or(("", key));
    let mut cur = v;
    if !parent.is_empty() {
        for p in parent.split('.') {
            cur = match cur {
                toml::Value::Array(a) => &mut a[p.parse::<usize>().unwrap()],
                toml::Value::Table(t) => t.get_mut(p).unwrap(),
                _ => panic!(),
            };
        }
    }
    cur.as_table_mut().unwrap().remove(last);
}

fn base() -> toml::Value {
    let mut v = value(INTERFACE_EXAMPLE);
    remove(&mut v, "flow.0.tcp.mechanisms");
    v
}

fn err_with(v: toml::Value) -> ScenarioError {
    match Scenario::from_toml(v) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e,
    }
}

/// The error names `key` and its message contains every one of `words`.
fn assert_err(v: toml::Value, key: &str, words: &[&str]) {
    let e = err_with(v);
    let msg = e.to_string();
    assert_eq!(e.key(), key, "wrong key in: {msg}");
    assert!(msg.contains(key), "message does not name the key: {msg}");
    for w in words {
        assert!(msg.contains(w), "message lacks {w:?}: {msg}");
    }
}

#[test]
fn interface_example_parses_with_its_mechanisms() {
    // rdb, linear-timeouts and thin-dupack are all implemented now
    let s = Scenario::from_toml_str(INTERFACE_EXAMPLE).unwrap();
    let m = s.flows[0].tcp.mechanisms;
    assert!(m.rdb && m.linear_timeouts && m.thin_dupack, "{m:?}");
}

#[test]
fn interface_example_without_mechanisms() {
    let s = Scenario::from_toml(base()).unwrap();
    assert_eq!(s.name, "quickstart");
    assert_eq!(s.seed, 1);
    assert_eq!(s.duration, Duration::from_secs(60));
    assert_eq!(s.repetitions, 1);
    assert_eq!(s.network.rtt, Duration::from_millis(100));
    assert_eq!(s.network.bandwidth, 100_000_000);
    assert_eq!(s.network.queue, QueueLimit::Packets(1000));
    assert_eq!(s.network.forward_loss, LossModel::Bernoulli { rate: 0.005 });
    assert_eq!(s.network.reverse_loss, LossModel::Bernoulli { rate: 0.005 });
    let f = &s.flows[0];
    assert_eq!(f.name, "game");
    assert_eq!(f.access_bandwidth, Some(10_000_000));
    assert_eq!(f.direction, Direction::Forward);
    assert_eq!(
        f.app,
        App::Fixed {
            payload_bytes: 120,
            interval: Duration::from_millis(140),
            jitter: Duration::ZERO,
        }
    );
    assert_eq!(
        f.tcp,
        thinlab_tcp::TcpConfig::from_profile(thinlab_tcp::Profile::Linux2622)
    );
}

#[test]
fn interface_set_examples() {
    let mut v = base();
    set(&mut v, "network.loss.rate", toml::Value::Float(0.02));
    set(&mut v, "duration", toml::Value::String("10s".into()));
    set(
        &mut v,
        "network.forward.loss.model",
        toml::Value::String("positions".into()),
    );
    set(
        &mut v,
        "network.forward.loss.positions",
        value("x = [60]")["x"].clone(),
    );
    set(&mut v, "flow.0.tcp.mechanisms", toml::Value::Array(vec![]));
    let s = Scenario::from_toml(v).unwrap();
    assert_eq!(s.duration, Duration::from_secs(10));
    assert_eq!(s.network.forward_loss, LossModel::Positions(vec![60]));
    assert_eq!(s.network.reverse_loss, LossModel::Bernoulli { rate: 0.02 });
}

#[test]
fn every_app_kind_and_knob() {
    let s = Scenario::from_toml_str(
        r#"
name = "all"
duration = "100s"
[network]
rtt = "40ms"
bandwidth = "25Mbit"
queue_bytes = "64KiB"
jitter = "2ms"
[network.loss]
model = "gilbert-elliott"
p = 0.01
r = 0.3
loss_good = 0.0
loss_bad = 0.5
[network.reverse.loss]
model = "none"
[[flow]]
app = { kind = "exponential", payload_bytes = 120, interval = "140ms" }
[[flow]]
direction = "reverse"
rtt = "10ms"
start = "1.5s"
app = { kind = "cbr", rate = "300kbit", payload_bytes = 1000 }
tcp = { profile = "ns2", cc = "reno", mss = 1000, nodelay = false, sack = false, delayed_ack = "off", rto_min = "200ms", rto_initial = "1s", clock_granularity = "10ms", send_buffer = 65536, recv_buffer = "64KiB", mechanisms = [] }
[[flow]]
app = { kind = "bulk" }
[[flow]]
app = { kind = "bulk", bytes = "1MB" }
[[flow]]
app = { kind = "transfer", writes = 20, write_bytes = 2500 }
tcp = { profile = "freebsd-6" }
[[flow]]
app = { kind = "fixed", payload_bytes = 100, interval = 0.25 }
tcp = { profile = "rfc", delayed_ack = "freebsd6" }
"#,
    )
    .unwrap();
    assert_eq!(s.network.queue, QueueLimit::Bytes(65536));
    assert_eq!(s.network.jitter, Duration::from_millis(2));
    assert_eq!(s.network.reverse_loss, LossModel::None);
    assert!(matches!(s.network.forward_loss, LossModel::GilbertElliott { p, .. } if p == 0.01));
    assert_eq!(s.flows.len(), 6);
    assert_eq!(s.flows[1].direction, Direction::Reverse);
    assert_eq!(s.flows[1].start, Duration::from_millis(1500));
    assert_eq!(s.flows[1].tcp.mss, 1000);
    assert!(!s.flows[1].tcp.sack && !s.flows[1].tcp.nodelay);
    assert_eq!(s.flows[1].tcp.rto_initial, Duration::from_secs(1));
    assert_eq!(s.flows[1].tcp.clock_granularity, Duration::from_millis(10));
    assert_eq!(s.flows[1].tcp.recv_buffer, 65536);
    assert_eq!(s.flows[2].app, App::Bulk { bytes: None });
    assert_eq!(
        s.flows[3].app,
        App::Bulk {
            bytes: Some(1_000_000)
        }
    );
    assert_eq!(
        s.flows[4].app,
        App::Transfer {
            writes: 20,
            write_bytes: 2500
        }
    );
    assert_eq!(s.flows[4].tcp.send_buffer, 32 * 1024);
    assert_eq!(
        s.flows[5].app,
        App::Fixed {
            payload_bytes: 100,
            interval: Duration::from_millis(250),
            jitter: Duration::ZERO,
        }
    );
    assert_eq!(s.flows[5].name, "flow5");
}

#[test]
fn unknown_keys_are_rejected_with_their_path() {
    let mut v = base();
    set(
        &mut v,
        "flow.0.app.intervall",
        toml::Value::String("1s".into()),
    );
    assert_err(v, "flow.0.app.intervall", &["unknown field", "interval"]);
    let mut v = base();
    set(
        &mut v,
        "network.bandwith",
        toml::Value::String("1Mbit".into()),
    );
    assert_err(v, "network.bandwith", &["unknown field", "bandwidth"]);
    let mut v = base();
    set(
        &mut v,
        "flow.0.tcp.rto_minimum",
        toml::Value::String("1s".into()),
    );
    assert_err(v, "flow.0.tcp.rto_minimum", &["unknown field"]);
    let mut v = base();
    set(&mut v, "sweep", value("x = 1"));
    assert_err(v, "sweep", &["unknown field"]);
}

#[test]
fn wrong_types_and_bad_strings() {
    let mut v = base();
    set(
        &mut v,
        "flow.0.app.interval",
        toml::Value::String("10 parsecs".into()),
    );
    assert_err(v, "flow.0.app.interval", &["10 parsecs", "duration"]);
    let mut v = base();
    set(&mut v, "network.rtt", toml::Value::Boolean(true));
    assert_err(v, "network.rtt", &["invalid type", "duration"]);
    let mut v = base();
    set(
        &mut v,
        "network.bandwidth",
        toml::Value::String("fast".into()),
    );
    assert_err(v, "network.bandwidth", &["fast", "rate"]);
    let mut v = base();
    set(
        &mut v,
        "network.bandwidth",
        toml::Value::String("-5Mbit".into()),
    );
    assert_err(v, "network.bandwidth", &["-5Mbit", "rate"]);
    let mut v = base();
    set(&mut v, "seed", toml::Value::String("one".into()));
    assert_err(v, "seed", &["one"]);
    let mut v = base();
    set(&mut v, "flow.0.tcp.mss", toml::Value::Integer(70000));
    assert_err(v, "flow.0.tcp.mss", &["70000"]);
    let mut v = base();
    set(
        &mut v,
        "flow.0.tcp.nodelay",
        toml::Value::String("yes".into()),
    );
    assert_err(v, "flow.0.tcp.nodelay", &["yes", "true or false"]);
    let mut v = base();
    set(&mut v, "duration", toml::Value::String("-3s".into()));
    assert_err(v, "duration", &["-3s", "duration"]);
    let mut v = base();
    set(
        &mut v,
        "network.loss.positions",
        value("x = [1, 2]")["x"].clone(),
    );
    set(
        &mut v,
        "network.loss.model",
        toml::Value::String("positions".into()),
    );
    remove(&mut v, "network.loss.rate");
    set(
        &mut v,
        "network.loss.positions.1",
        toml::Value::String("two".into()),
    );
    assert_err(v, "network.loss.positions.1", &["two"]);
}

#[test]
fn messages_say_what_is_wrong_in_plain_words() {
    // A number where a number is expected: no Rust type names.
    let mut v = base();
    set(
        &mut v,
        "network.loss.rate",
        toml::Value::String("abc".into()),
    );
    let e = err_with(v).to_string();
    assert!(e.contains("expected a number") && !e.contains("f64"), "{e}");
    // Well-formed but too large: says so, with the limit.
    let mut v = base();
    set(&mut v, "duration", toml::Value::String("1000000h".into()));
    assert_err(v, "duration", &["1000000h", "too large", "at most"]);
    // The write-count limit shows the value, not a placeholder.
    let mut v = base();
    set(&mut v, "duration", toml::Value::String("1000s".into()));
    set(
        &mut v,
        "flow.0.app.interval",
        toml::Value::String("1us".into()),
    );
    let e = err_with(v).to_string();
    assert!(
        e.contains("1us between writes") && !e.contains("(this value)"),
        "{e}"
    );
}

#[test]
fn seeds_above_i64_are_written_as_strings() {
    let mut v = base();
    set(
        &mut v,
        "seed",
        toml::Value::String("18446744073709551615".into()),
    );
    assert_eq!(Scenario::from_toml(v).unwrap().seed, u64::MAX);
    let mut v = base();
    set(&mut v, "seed", toml::Value::Integer(-1));
    assert_err(v, "seed", &["-1", "as a string"]);
}

#[test]
fn many_flows_validate_in_linear_time() {
    let mut text = String::from(
        "name = \"many\"\nduration = \"1s\"\n[network]\nrtt = \"10ms\"\nbandwidth = \"1Gbit\"\n",
    );
    for i in 0..100_000 {
        text.push_str(&format!("[[flow]]\nname = \"f{i}\"\napp = {{ kind = \"fixed\", payload_bytes = 1, interval = \"1s\" }}\n"));
    }
    #[allow(clippy::disallowed_methods)]
    let t = std::time::Instant::now();
    let s = Scenario::from_toml_str(&text).unwrap();
    assert_eq!(s.flows.len(), 100_000);
    // Pairwise name checks took minutes; a hash set takes milliseconds.
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    let dup = text.replace("name = \"f99999\"", "name = \"f5\"");
    let e = Scenario::from_toml_str(&dup).unwrap_err().to_string();
    assert!(e.contains("flow.99999.name") && e.contains("f5"), "{e}");
}

#[test]
fn missing_keys() {
    let mut v = base();
    remove(&mut v, "network.bandwidth");
    assert_err(v, "network", &["missing field", "bandwidth"]);
    let mut v = base();
    remove(&mut v, "flow.0.app.interval");
    assert_err(
        v,
        "flow.0.app.interval",
        &["(missing)", "duration", "fixed"],
    );
}

#[test]
fn no_flows() {
    let mut v = base();
    remove(&mut v, "flow");
    assert_err(v, "flow", &["at least one [[flow]]"]);
    let mut v = base();
    set(&mut v, "flow", toml::Value::Array(vec![]));
    assert_err(v, "flow", &["at least one [[flow]]"]);
}

#[test]
fn out_of_range_values() {
    let cases: Vec<(&str, toml::Value, &str, &[&str])> = vec![
        (
            "flow.0.tcp.clock_granularity",
            toml::Value::String("0ms".into()),
            "flow.0.tcp.clock_granularity",
            &["positive duration"],
        ),
        (
            "flow.0.tcp.rto_min",
            toml::Value::String("10min".into()),
            "flow.0.tcp.rto_min",
            &["maximum RTO"],
        ),
        (
            "network.loss.rate",
            toml::Value::Float(1.5),
            "network.loss.rate",
            &["1.5", "probability in [0, 1]"],
        ),
        (
            "network.loss.rate",
            toml::Value::Float(-0.1),
            "network.loss.rate",
            &["-0.1", "probability"],
        ),
        (
            "network.bandwidth",
            toml::Value::String("0Mbit".into()),
            "network.bandwidth",
            &["positive rate"],
        ),
        (
            "flow.0.access_bandwidth",
            toml::Value::String("0bit".into()),
            "flow.0.access_bandwidth",
            &["positive rate"],
        ),
        (
            "flow.0.app.payload_bytes",
            toml::Value::Integer(0),
            "flow.0.app.payload_bytes",
            &["0", "positive"],
        ),
        (
            "flow.0.app.payload_bytes",
            toml::Value::Float(1.5),
            "flow.0.app.payload_bytes",
            &["1.5", "whole"],
        ),
        (
            "flow.0.app.interval",
            toml::Value::String("0ms".into()),
            "flow.0.app.interval",
            &["positive duration"],
        ),
        (
            "flow.0.start",
            toml::Value::String("60s".into()),
            "flow.0.start",
            &["60s", "before duration"],
        ),
        (
            "flow.0.direction",
            toml::Value::String("up".into()),
            "flow.0.direction",
            &["\"up\"", "forward"],
        ),
        (
            "network.queue_packets",
            toml::Value::Integer(0),
            "network.queue_packets",
            &["at least 1"],
        ),
        (
            "network.queue_bytes",
            toml::Value::Integer(3000),
            "network.queue_bytes",
            &["only one of"],
        ),
        (
            "repetitions",
            toml::Value::Integer(0),
            "repetitions",
            &["at least 1"],
        ),
        (
            "duration",
            toml::Value::String("0s".into()),
            "duration",
            &["positive"],
        ),
        (
            "name",
            toml::Value::String("".into()),
            "name",
            &["non-empty"],
        ),
        (
            "network.loss.model",
            toml::Value::String("burst".into()),
            "network.loss.model",
            &["\"burst\"", "gilbert-elliott"],
        ),
        (
            "network.loss.p",
            toml::Value::Float(0.1),
            "network.loss.p",
            &["only rate", "bernoulli"],
        ),
        (
            "flow.0.app.kind",
            toml::Value::String("game".into()),
            "flow.0.app.kind",
            &["\"game\"", "fixed"],
        ),
        (
            "flow.0.app.bytes",
            toml::Value::Integer(5),
            "flow.0.app.bytes",
            &["only payload_bytes, interval", "fixed"],
        ),
        (
            "flow.0.tcp.profile",
            toml::Value::String("windows".into()),
            "flow.0.tcp.profile",
            &["\"windows\"", "linux-2.6.22"],
        ),
        (
            "flow.0.tcp.cc",
            toml::Value::String("bbr".into()),
            "flow.0.tcp.cc",
            &["\"bbr\"", "newreno"],
        ),
        (
            "flow.0.tcp.delayed_ack",
            toml::Value::String("sometimes".into()),
            "flow.0.tcp.delayed_ack",
            &["\"sometimes\"", "freebsd6"],
        ),
        (
            "flow.0.tcp.mss",
            toml::Value::Integer(10),
            "flow.0.tcp.mss",
            &["10", "between"],
        ),
        (
            "flow.0.tcp.send_buffer",
            toml::Value::Integer(0),
            "flow.0.tcp.send_buffer",
            &["buffer size"],
        ),
    ];
    for (k, val, key, words) in cases {
        let mut v = base();
        set(&mut v, k, val);
        assert_err(v, key, words);
    }
    let mut v = base();
    set(
        &mut v,
        "flow.0.tcp.mechanisms",
        value("x = [\"rdb\", \"turbo\"]")["x"].clone(),
    );
    // The first is valid but unimplemented; make only the bad name appear.
    set(
        &mut v,
        "flow.0.tcp.mechanisms",
        value("x = [\"turbo\"]")["x"].clone(),
    );
    assert_err(
        v,
        "flow.0.tcp.mechanisms.0",
        &["\"turbo\"", "linear-timeouts"],
    );
    let mut v = base();
    set(
        &mut v,
        "network.loss.model",
        toml::Value::String("positions".into()),
    );
    remove(&mut v, "network.loss.rate");
    set(
        &mut v,
        "network.loss.positions",
        value("x = [3, 0]")["x"].clone(),
    );
    assert_err(v, "network.loss.positions.1", &["0", "1-based"]);
}

#[test]
fn syntax_errors_and_non_tables() {
    assert!(matches!(
        Scenario::from_toml_str("name = "),
        Err(ScenarioError::Syntax(_))
    ));
    assert!(Scenario::from_toml(toml::Value::Integer(3)).is_err());
}

#[test]
fn garbage_never_panics() {
    // A few hostile values in every position of the base scenario.
    let hostile = [
        toml::Value::Integer(-1),
        toml::Value::Integer(i64::MAX),
        toml::Value::Float(f64::NAN),
        toml::Value::Float(1e300),
        toml::Value::String(String::new()),
        toml::Value::String("1e999s".into()),
        toml::Value::Array(vec![]),
        toml::Value::Table(Default::default()),
    ];
    let keys = [
        "seed",
        "duration",
        "repetitions",
        "network.rtt",
        "network.bandwidth",
        "network.queue_packets",
        "network.jitter",
        "network.loss.rate",
        "flow.0.rtt",
        "flow.0.start",
        "flow.0.access_bandwidth",
        "flow.0.app.payload_bytes",
        "flow.0.app.interval",
        "flow.0.tcp.mss",
        "flow.0.tcp.rto_min",
        "flow.0.tcp.send_buffer",
        "flow.0.name",
    ];
    for k in keys {
        for h in &hostile {
            let mut v = base();
            set(&mut v, k, h.clone());
            let _ = Scenario::from_toml(v);
        }
    }
}

#[test]
fn absurd_write_counts_are_rejected() {
    let mut v = base();
    set(
        &mut v,
        "flow.0.app.interval",
        toml::Value::String("1ns".into()),
    );
    assert_err(v, "flow.0.app.interval", &["at most"]);
    let mut v = base();
    set(
        &mut v,
        "flow.0.app",
        value("x = { kind = \"transfer\", writes = 1000000000, write_bytes = 1 }")["x"].clone(),
    );
    assert_err(v, "flow.0.app.writes", &["1000000000", "at most"]);
}

#[test]
fn fixed_jitter_must_stay_below_the_interval() {
    let mut v = base();
    set(
        &mut v,
        "flow.0.app.jitter",
        toml::Value::String("140ms".into()),
    );
    assert_err(v, "flow.0.app.jitter", &["below the interval"]);
    let mut v = base();
    set(
        &mut v,
        "flow.0.app.jitter",
        toml::Value::String("10ms".into()),
    );
    let s = Scenario::from_toml(v).expect("10 ms jitter on a 140 ms interval");
    assert_eq!(
        s.flows[0].app,
        App::Fixed {
            payload_bytes: 120,
            interval: Duration::from_millis(140),
            jitter: Duration::from_millis(10),
        }
    );
}

#[test]
#[ignore]
fn show_messages() {
    for (k, v) in [
        (
            "flow.0.app.interval",
            toml::Value::String("10 parsecs".into()),
        ),
        ("flow.0.app.intervall", toml::Value::String("1s".into())),
        ("network.loss.rate", toml::Value::Float(1.5)),
        ("network.bandwidth", toml::Value::String("0Mbit".into())),
        ("flow.0.tcp.profile", toml::Value::String("linux-9".into())),
    ] {
        let mut val = base();
        set(&mut val, k, v);
        println!("{}", err_with(val));
    }
    let mut val = base();
    remove(&mut val, "flow");
    println!("{}", err_with(val));
}

#[test]
fn duplicate_flow_names_are_rejected() {
    let v = value(
        r#"
name = "dup"
duration = "10s"
[network]
rtt = "10ms"
bandwidth = "10Mbit"
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
"#,
    );
    assert_err(v, "flow.1.name", &["\"game\"", "no other flow"]);
}

#[test]
fn flow_groups_expand_into_named_members_with_spread_starts() {
    let text = r#"
name = "groups"
duration = "60s"
[network]
rtt = "10ms"
bandwidth = "10Mbit"
[[flow]]
name = "cbr"
count = 4
start = "1s"
start_spread = "8s"
app = { kind = "cbr", rate = "300kbit", payload_bytes = 1000 }
[[flow]]
name = "bulk"
app = { kind = "bulk" }
[[flow]]
name = "same"
count = 2
app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
"#;
    let s = Scenario::from_toml_str(text).unwrap();
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["cbr0", "cbr1", "cbr2", "cbr3", "bulk", "same0", "same1"]
    );
    // member k starts in its stratum [1 + 2k, 1 + 2(k + 1)) s
    for (k, f) in s.flows[..4].iter().enumerate() {
        let lo = Duration::from_secs(1 + 2 * k as u64);
        assert!(
            f.start >= lo && f.start < lo + Duration::from_secs(2),
            "{k}: {:?}",
            f.start
        );
        assert_eq!(f.app, s.flows[0].app);
    }
    assert_eq!(s.flows[4].start, Duration::ZERO);
    assert!(s.flows[5..].iter().all(|f| f.start == Duration::ZERO));
    // the same file gives the same starts
    assert_eq!(s, Scenario::from_toml_str(text).unwrap());
}

#[test]
fn bad_flow_groups_are_refused() {
    let group = |extra: &str| {
        value(&format!(
            r#"
name = "g"
duration = "10s"
[network]
rtt = "10ms"
bandwidth = "10Mbit"
[[flow]]
name = "game"
{extra}
app = {{ kind = "fixed", payload_bytes = 100, interval = "100ms" }}
[[flow]]
name = "game1"
app = {{ kind = "fixed", payload_bytes = 100, interval = "100ms" }}
"#
        ))
    };
    assert_err(group("count = 0"), "flow.0.count", &["0", "from 1"]);
    assert_err(group("count = 1000001"), "flow.0.count", &["100000"]);
    assert_err(
        group("start_spread = \"2s\""),
        "flow.0.start_spread",
        &["count"],
    );
    assert_err(
        group("count = 2\nstart = \"5s\"\nstart_spread = \"6s\""),
        "flow.0.start_spread",
        &["duration"],
    );
    // a member's name that another flow has
    assert_err(
        group("count = 2"),
        "flow.1.name",
        &["\"game1\"", "no other flow"],
    );
}

#[test]
fn tlp_and_rack_without_sack_are_refused() {
    for m in ["tlp", "rack"] {
        let mut v = base();
        set(&mut v, "flow.0.tcp.sack", toml::Value::Boolean(false));
        set(
            &mut v,
            "flow.0.tcp.mechanisms",
            toml::Value::Array(vec!["rdb".into(), m.into()]),
        );
        assert_err(v, "flow.0.tcp.mechanisms.1", &[m, "sack = true"]);
    }
    // The linux profile's default set simply loses them.
    let mut v = base();
    set(&mut v, "flow.0.tcp.sack", toml::Value::Boolean(false));
    set(
        &mut v,
        "flow.0.tcp.profile",
        toml::Value::String("linux".into()),
    );
    let s = Scenario::from_toml(v).unwrap();
    assert!(!s.flows[0].tcp.mechanisms.tlp && !s.flows[0].tcp.mechanisms.rack);
}
