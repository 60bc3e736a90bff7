//! Which scenario keys the emulated backend honours, and how: the scenario's TCP settings
//! mapped onto the kernel's socket options and per-namespace sysctls.
//!
//! The network (`rtt`, `bandwidth`, queue, `jitter`, every loss model, per-direction loss,
//! per-flow `rtt` / `access_bandwidth`) and every app kind are honoured as the simulator does.
//! Of a flow's `tcp` table, the kernel is told:
//! - `cc` (also from the profile) → `TCP_CONGESTION` per socket ("reno" for newreno/reno,
//!   "cubic"; "pert" is not in Linux), read back and recorded;
//! - `nodelay` → `TCP_NODELAY`; `mss` → `TCP_MAXSEG`;
//! - `mechanisms`: `linear-timeouts` → `TCP_THIN_LINEAR_TIMEOUTS` per socket, `tlp` →
//!   `net.ipv4.tcp_early_retrans` = 3 (else 0), `rack` → `net.ipv4.tcp_recovery` = 1 (else
//!   0); `sack` → `net.ipv4.tcp_sack`. The sysctls are per namespace, so all flows must agree
//!   on them. Since Linux 6.17 RACK is the kernel's only loss detection for SACK
//!   connections and `tcp_recovery` = 0 no longer turns it off (Cardwell's removal of the
//!   RFC 6675 code, 2025): on such a kernel a SACK flow without `rack` is refused, since the
//!   run would silently have it. `rdb`, `thin-dupack`, `early-retransmit`, `er-threshold` do not exist in the
//!   running kernel and are refused;
//! - every other key (timer models, delayed ACKs, buffers, RDB/thin-detection knobs) would
//!   be silently ignored by the kernel, so it is refused (exit code 2 naming the key). The
//!   `profile` only selects the defaults above; the kernel's own timers and algorithms run.
//!   `delayed_ack = "linux"` and `cwnd_reduction = "prr"` are accepted: the kernel does that.

use crate::error::EmuError;
use serde::Serialize;
use thinlab_sim::Scenario;
use thinlab_tcp::config::CcAlgorithm;

/// Keys of a flow's `tcp` table the kernel can be told.
const TCP_KEYS: [&str; 7] = [
    "profile",
    "cc",
    "mechanisms",
    "nodelay",
    "sack",
    "mss",
    "stack",
];

/// Socket options of one flow's two sockets.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SocketSettings {
    pub cc: String,
    pub nodelay: bool,
    pub linear_timeouts: bool,
    pub mss: u16,
}

/// Sysctls of both namespaces.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NsSettings {
    pub sack: bool,
    pub tlp: bool,
    pub rack: bool,
    pub thin_linear_timeouts: bool,
}

impl NsSettings {
    /// (sysctl under /proc/sys, value) pairs.
    pub fn sysctls(&self) -> Vec<(&'static str, String)> {
        let b = |x: bool| u8::from(x).to_string();
        vec![
            ("net/ipv4/tcp_sack", b(self.sack)),
            (
                "net/ipv4/tcp_early_retrans",
                if self.tlp { "3" } else { "0" }.into(),
            ),
            ("net/ipv4/tcp_recovery", b(self.rack)),
            (
                "net/ipv4/tcp_thin_linear_timeouts",
                b(self.thin_linear_timeouts),
            ),
            ("net/ipv4/tcp_no_metrics_save", "1".into()),
        ]
    }
}

/// Refuses keys of the raw scenario document (after sweep expansion) that the kernel cannot
/// be told: anything in a flow's `tcp` table but `TCP_KEYS`, and `delayed_ack` other than
/// "linux".
pub fn check_doc(doc: &toml::Value, thinlab: &[bool]) -> Result<(), EmuError> {
    let Some(flows) = doc.get("flow").and_then(|f| f.as_array()) else {
        return Ok(());
    };
    for (i, f) in flows.iter().enumerate() {
        let Some(tcp) = f.get("tcp").and_then(|t| t.as_table()) else {
            continue;
        };
        if thinlab.get(i) == Some(&true) {
            continue; // thinlab's endpoint honours every key
        }
        for (k, v) in tcp {
            if TCP_KEYS.contains(&k.as_str()) {
                continue;
            }
            // What Linux does anyway.
            let linux = matches!(
                (k.as_str(), v.as_str()),
                ("delayed_ack", Some("linux")) | ("cwnd_reduction", Some("prr"))
            );
            if linux {
                continue;
            }
            return Err(EmuError::unsupported(
                format!("flow.{i}.tcp.{k}"),
                v,
                format!(
                    "the kernel runs its own value; only {} are passed to the kernel",
                    TCP_KEYS[..6].join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The kernel settings of every flow and of the namespaces.
/// Flows in `thinlab` (true at their index) send with thinlab's endpoint (data from the
/// client, `direction = "forward"`); only their receiver is a kernel socket.
pub fn resolve(
    s: &Scenario,
    thinlab: &[bool],
) -> Result<(Vec<SocketSettings>, NsSettings), EmuError> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    resolve_on(s, thinlab, release.trim())
}

/// Whether kernel `release` (as `uname -r` prints it) detects every SACK connection's losses
/// with RACK whatever `tcp_recovery` says: Linux 6.17 and later.
pub fn rack_always_on(release: &str) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let mut next = || parts.next().and_then(|p| p.parse::<u32>().ok());
    match (next(), next()) {
        (Some(major), Some(minor)) => (major, minor) >= (6, 17),
        _ => false,
    }
}

/// [`resolve`] for a kernel whose release is `release`.
pub fn resolve_on(
    s: &Scenario,
    thinlab: &[bool],
    release: &str,
) -> Result<(Vec<SocketSettings>, NsSettings), EmuError> {
    let mut socks = Vec::new();
    let mut ns: Option<(usize, NsSettings)> = None;
    let max = crate::thinlab_app::MAX_THINLAB_FLOWS;
    if thinlab.iter().filter(|&&t| t).count() > max {
        let i = thinlab.iter().rposition(|&t| t).unwrap_or(0);
        return Err(EmuError::unsupported(
            format!("flow.{i}.tcp.stack"),
            "\"thinlab\"",
            format!("{max} flows at most may use thinlab's TCP in an emulated run (one /24 each)"),
        ));
    }
    for (i, f) in s.flows.iter().enumerate() {
        let c = &f.tcp;
        let m = &c.mechanisms;
        let key = format!("flow.{i}.tcp.mechanisms");
        if thinlab.get(i) == Some(&true) {
            if f.direction != thinlab_sim::Direction::Forward {
                return Err(EmuError::unsupported(
                    format!("flow.{i}.direction"),
                    "\"reverse\"",
                    "with tcp.stack = \"thinlab\" the client (thinlab) sends the data",
                ));
            }
            socks.push(SocketSettings {
                cc: "cubic".into(),
                nodelay: c.nodelay,
                linear_timeouts: false,
                mss: c.mss,
            });
            continue;
        }
        for (on, name) in [
            (m.rdb, "rdb"),
            (m.thin_dupack, "thin-dupack"),
            (m.early_retransmit, "early-retransmit"),
            (m.er_threshold, "er-threshold"),
        ] {
            if on {
                return Err(EmuError::unsupported(
                    &key,
                    format!("\"{name}\""),
                    "the running Linux kernel has no such mechanism (linear-timeouts, tlp and rack map onto it; list tcp.mechanisms explicitly if the profile brought it in)",
                ));
            }
        }
        if c.sack && !m.rack && rack_always_on(release) {
            let on: Vec<_> = m
                .enabled()
                .iter()
                .map(|x| format!("\"{}\"", x.name()))
                .collect();
            return Err(EmuError::unsupported(
                &key,
                format!("[{}]", on.join(", ")),
                format!(
                    "without \"rack\", but Linux {release} always detects losses with RACK (tcp_recovery = 0 has no effect since 6.17): add \"rack\" to the list, or set tcp.sack = false"
                ),
            ));
        }
        let cc = match c.cc {
            CcAlgorithm::Reno | CcAlgorithm::NewReno => "reno",
            CcAlgorithm::Cubic => "cubic",
            CcAlgorithm::Pert | CcAlgorithm::PertAdaptive => {
                return Err(EmuError::unsupported(
                    format!("flow.{i}.tcp.cc"),
                    format!("\"{}\"", c.cc.name()),
                    "Linux has no PERT congestion control (use reno or cubic)",
                ))
            }
            CcAlgorithm::Bic | CcAlgorithm::Westwood | CcAlgorithm::Vegas => {
                let name = c.cc.name();
                let available =
                    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
                        .unwrap_or_default();
                if !available.split_whitespace().any(|a| a == name) {
                    return Err(EmuError::unsupported(
                        format!("flow.{i}.tcp.cc"),
                        format!("\"{name}\""),
                        format!(
                            "a congestion control this kernel has loaded ({}; load tcp_{name} with modprobe)",
                            available.trim()
                        ),
                    ));
                }
                name
            }
        };
        socks.push(SocketSettings {
            cc: cc.to_string(),
            nodelay: c.nodelay,
            linear_timeouts: m.linear_timeouts,
            mss: c.mss,
        });
        let mine = NsSettings {
            sack: c.sack,
            tlp: m.tlp,
            rack: m.rack,
            thin_linear_timeouts: m.linear_timeouts,
        };
        match &ns {
            None => ns = Some((i, mine)),
            Some((j, first)) => {
                let same = (first.sack, first.tlp, first.rack) == (mine.sack, mine.tlp, mine.rack);
                if !same {
                    return Err(EmuError::unsupported(
                        key,
                        format!("(tlp {}, rack {}, sack {})", mine.tlp, mine.rack, mine.sack),
                        format!("sack, tlp and rack are per-namespace sysctls: every flow must match flow {j}"),
                    ));
                }
            }
        }
    }
    let mut ns = match ns {
        Some((_, n)) => n,
        // Only a thinlab sender: the kernel receiver gets its flow's sack setting.
        None => NsSettings {
            sack: s.flows.first().is_none_or(|f| f.tcp.sack),
            tlp: false,
            rack: false,
            thin_linear_timeouts: false,
        },
    };
    // The socket option does it per flow; the sysctl only if every flow asks.
    ns.thin_linear_timeouts = socks.iter().all(|s| s.linear_timeouts);
    Ok((socks, ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_doc_(d: &toml::Value) -> Result<(), EmuError> {
        check_doc(d, &[])
    }

    fn doc(tcp: &str) -> toml::Value {
        toml::from_str(&format!("[[flow]]\ntcp = {{ {tcp} }}\n")).unwrap()
    }

    #[test]
    fn keys_the_kernel_cannot_be_told_are_named() {
        assert!(check_doc_(&doc(
            r#"profile = "linux", nodelay = true, mechanisms = ["tlp"]"#
        ))
        .is_ok());
        assert!(check_doc_(&doc(r#"delayed_ack = "linux", cwnd_reduction = "prr""#)).is_ok());
        for (tcp, key) in [
            (r#"rto_min = "10ms""#, "flow.0.tcp.rto_min"),
            (r#"delayed_ack = "off""#, "flow.0.tcp.delayed_ack"),
            (r#"send_buffer = 1000"#, "flow.0.tcp.send_buffer"),
        ] {
            match check_doc_(&doc(tcp)) {
                Err(EmuError::Unsupported { key: k, .. }) => assert_eq!(k, key),
                other => panic!("{tcp}: {other:?}"),
            }
        }
    }

    #[test]
    fn mechanisms_map_onto_kernel_settings() {
        let s = |m: &str| {
            Scenario::from_toml_str(&format!(
                "name = \"x\"\nduration = \"1s\"\n[network]\nrtt = \"10ms\"\nbandwidth = \"1Mbit\"\n[[flow]]\napp = {{ kind = \"fixed\", payload_bytes = 1, interval = \"1s\" }}\ntcp = {{ profile = \"linux\", mechanisms = {m} }}\n"
            ))
            .unwrap()
        };
        let old = "6.1.0-13-amd64";
        let (socks, ns) = resolve_on(&s(r#"["linear-timeouts", "tlp"]"#), &[], old).unwrap();
        assert_eq!(socks[0].cc, "cubic");
        assert!(socks[0].linear_timeouts && ns.tlp && !ns.rack && ns.thin_linear_timeouts);
        match resolve_on(&s(r#"["rdb"]"#), &[], old) {
            Err(EmuError::Unsupported { key, value, .. }) => {
                assert_eq!(
                    (key.as_str(), value.as_str()),
                    ("flow.0.tcp.mechanisms", "\"rdb\"")
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_kernel_that_always_has_rack_refuses_a_flow_without_it() {
        for (release, always) in [
            ("6.18.0-trunk-amd64", true),
            ("6.17", true),
            ("7.0.1", true),
            ("6.16.9-arch1", false),
            ("5.15.0-91-generic", false),
            ("", false),
        ] {
            assert_eq!(rack_always_on(release), always, "{release}");
        }
        let s = |tcp: &str| {
            Scenario::from_toml_str(&format!(
                "name = \"x\"\nduration = \"1s\"\n[network]\nrtt = \"10ms\"\nbandwidth = \"1Mbit\"\n[[flow]]\napp = {{ kind = \"fixed\", payload_bytes = 1, interval = \"1s\" }}\ntcp = {{ {tcp} }}\n"
            ))
            .unwrap()
        };
        let new = "6.18.0";
        match resolve_on(&s(r#"mechanisms = ["linear-timeouts"]"#), &[], new) {
            Err(EmuError::Unsupported { key, value, why }) => {
                assert_eq!(key, "flow.0.tcp.mechanisms");
                assert_eq!(value, r#"["linear-timeouts"]"#);
                assert!(
                    why.contains("6.18.0") && why.contains("add \"rack\""),
                    "{why}"
                );
            }
            other => panic!("{other:?}"),
        }
        // the default profile (Linux 2.6.22) has no RACK: refused too
        assert!(resolve_on(&s(r#"nodelay = true"#), &[], new).is_err());
        let (_, ns) = resolve_on(&s(r#"mechanisms = ["rack"]"#), &[], new).unwrap();
        assert!(ns.rack && !ns.tlp);
        // without SACK the kernel counts duplicate ACKs: nothing to refuse
        assert!(resolve_on(&s(r#"sack = false, mechanisms = []"#), &[], new).is_ok());
        assert!(resolve_on(&s(r#"mechanisms = []"#), &[], "6.12.1").is_ok());
    }
}
