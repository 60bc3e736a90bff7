//! Endpoint configuration: every knob of the `tcp` table of a scenario (see
//! `docs/spec/interface.md`) and the profiles that preset them (docs/spec/mechanisms.md: RTO
//! models, congestion control, receiver behaviour).

use std::time::Duration;

/// Preset bundles of the knobs below, named as in the scenario's `tcp.profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// Linux 2.6.22 as in Evensen's (2008) testbed: NewReno+SACK, RTO = SRTT + max(200 ms, 4·mdev),
    /// initial RTO 3 s, initial window 3, Linux delayed ACK.
    Linux2622,
    /// FreeBSD 6 as in Hurtig (2006): NewReno+SACK, Limited Transmit, `freebsd6` RTO, delayed ACK
    /// 100 ms, initial window 4 (as observed), 32 KB send buffer.
    FreeBsd6,
    /// ns-2 as in Yin et al.: SACK, Limited Transmit (ns-2's `singledup_` default), RTO rounded up
    /// to a 10 ms tick, min RTO 200 ms, no delayed ACK.
    Ns2,
    /// The RFCs: NewReno+SACK (RFC 6582/6675), RFC 6298 RTO (min 1 s), Limited Transmit,
    /// initial window per RFC 3390, delayed ACK every second segment or 200 ms.
    Rfc,
    /// Modern Linux (5.x/6.x defaults): CUBIC, initial window 10, SACK, timestamps, RACK-TLP
    /// (RFC 8985), PRR (RFC 6937), RTT in microseconds, timers on a HZ = 250 timer wheel, RTO = SRTT + max(200 ms, 4·mdev) with initial RTO 1 s, Linux delayed ACK,
    /// large buffers (tcp_wmem/tcp_rmem maxima 4 MB / 6 MB).
    Linux,
}

impl Profile {
    pub const ALL: [Profile; 5] = [
        Profile::Linux2622,
        Profile::FreeBsd6,
        Profile::Ns2,
        Profile::Rfc,
        Profile::Linux,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Linux2622 => "linux-2.6.22",
            Profile::FreeBsd6 => "freebsd-6",
            Profile::Ns2 => "ns2",
            Profile::Rfc => "rfc",
            Profile::Linux => "linux",
        }
    }

    pub fn from_name(s: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// Retransmission-timer models (docs/spec/mechanisms.md, RTO models).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RtoModel {
    Linux,
    Rfc6298,
    FreeBsd6,
    Ns2,
}

/// Receiver delayed-ACK models (docs/spec/mechanisms.md, receiver behaviour).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DelayedAckModel {
    /// Quick-ACK at connection start, ATO min 40 ms, ACK every second full-sized segment,
    /// immediate ACK for out-of-order data or a filled hole.
    Linux,
    /// Fixed delayed-ACK timer (`TcpConfig::delayed_ack_timeout`, 100 ms on FreeBSD 6), ACK every
    /// second segment, immediate ACK for out-of-order data or a filled hole.
    FreeBsd6,
    /// Every segment is acknowledged at once.
    Off,
}

/// Congestion-control algorithms (docs/spec/mechanisms.md, congestion control; see [`crate::cc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CcAlgorithm {
    Reno,
    NewReno,
    /// CUBIC (RFC 9438), [`crate::cc::Cubic`].
    Cubic,
    /// PERT (Bhandarkar et al. 2007): NewReno plus a delay-based early response,
    /// [`crate::cc::Pert`].
    Pert,
    /// Adaptive PERT (after Kotla & Reddy 2008): PERT whose upper threshold and reduction follow
    /// the flow's largest queueing delay, [`crate::cc::Pert::adaptive`].
    PertAdaptive,
    /// BIC-TCP (Xu et al. 2004), Linux 2.6.16's default, [`crate::cc::Bic`].
    Bic,
    /// Westwood+ (Mascolo et al. 2001), [`crate::cc::Westwood`].
    Westwood,
    /// Vegas (Brakmo & Peterson 1995), [`crate::cc::Vegas`].
    Vegas,
}

/// Thin-stream mechanisms, each switched on per flow by `tcp.mechanisms` (docs/spec/mechanisms.md,
/// thin-stream sections). `tlp` and `rack` are RFC 8985 ([`crate::recovery::tlp`],
/// [`crate::recovery::rack`]; both need SACK).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mechanisms {
    pub rdb: bool,
    pub linear_timeouts: bool,
    pub thin_dupack: bool,
    pub early_retransmit: bool,
    pub er_threshold: bool,
    pub tlp: bool,
    pub rack: bool,
}

/// Thin-stream detection (docs/spec/mechanisms.md, thin-stream detection, `tcp.thin_detection`);
/// see [`crate::thin::detect`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ThinDetection {
    /// PIF < 4 and not in initial slow start (Linux `tcp_stream_is_thin`).
    #[default]
    Pif4,
    /// PIF × 10 ms < SRTT (Linux RDB patch `tcp_stream_is_thin_dpifl`).
    Dpifl,
}

/// Variant of linear timeouts (docs/spec/mechanisms.md, linear timeouts); see
/// [`crate::thin::linear_timeouts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LinearTimeouts {
    /// Linux `tcp_retransmit_timer`: no doubling, RTO recomputed from the estimator, for the
    /// first 6 (`TCP_THIN_LINEAR_RETRIES`) consecutive expiries while thin.
    #[default]
    Linux,
    /// Evensen's (2008) wording: RTO_k = RTO_0 + k·SRTT (same gate as `Linux`).
    SeedSrtt,
}

/// Variant of Redundant Data Bundling (docs/spec/mechanisms.md, RDB); see [`crate::thin::rdb`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RdbVariant {
    /// Evensen (2008): cumulative bundling on send up to the MSS, bundling on retransmission.
    #[default]
    Seed,
    /// The Linux RDB patch (2015–2016): dpifl-thin only, `rdb_max_packets` earlier segments,
    /// CWR on a loss hidden by redundancy.
    Patch,
    /// `Seed`-variant bundling, but only while it pays (Evensen (2008) §5.3; Evensen et al.
    /// (2008), IEEE Communications Letters, §IV): an
    /// allowance of earlier segments that doubles on a loss and drains per clean ACK, and no
    /// bundling when the write interval exceeds the RTO; see [`crate::thin::rdb_adaptive`].
    Adaptive,
}

/// What the multiplicative decrease of a congestion event applies to (`ssthresh = f(base)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReductionBase {
    /// The congestion window at the event: Linux (`tcp_reno_ssthresh`,
    /// `bictcp_recalc_ssthresh`), FreeBSD (`min(snd_wnd, snd_cwnd) / 2`), ns-2 (`window()`).
    #[default]
    Cwnd,
    /// RFC 5681 eq. (4) FlightSize: the packets in flight (`pipe` plus SACKed segments).
    /// Can exceed cwnd after a SACK recovery, so a later episode's ssthresh can exceed the
    /// window it replaces; only the `rfc` profile uses it.
    FlightSize,
}

/// How fast recovery brings cwnd down to ssthresh (`tcp.cwnd_reduction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CwndReduction {
    /// cwnd = ssthresh on entering recovery; the pipe is counted against it (RFC 6675 as
    /// Linux 2.6.22 ran it).
    #[default]
    Immediate,
    /// Proportional Rate Reduction (RFC 6937, Linux ≥ 3.2); see [`crate::recovery::prr`].
    Prr,
}

impl CwndReduction {
    pub const ALL: [CwndReduction; 2] = [CwndReduction::Immediate, CwndReduction::Prr];
    pub fn name(self) -> &'static str {
        match self {
            CwndReduction::Immediate => "immediate",
            CwndReduction::Prr => "prr",
        }
    }
    pub fn from_name(s: &str) -> Option<CwndReduction> {
        CwndReduction::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// Every knob of one endpoint. Build it with [`TcpConfig::from_profile`] and override fields.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Largest payload per segment, in bytes (the MSS we announce and the largest we send).
    pub mss: u16,
    /// Disable Nagle's algorithm (TCP_NODELAY).
    pub nodelay: bool,
    /// Offer/accept SACK (RFC 2018); SACK-based recovery (RFC 6675) when negotiated.
    pub sack: bool,
    /// Offer/accept timestamps (RFC 7323). They take 12 bytes of option space per segment.
    pub timestamps: bool,
    /// Offer/accept window scaling (RFC 7323).
    pub window_scale: bool,
    /// Initial congestion window, in segments.
    pub initial_window: u32,
    /// Limited Transmit (RFC 3042): send new data on the first two duplicate ACKs.
    pub limited_transmit: bool,
    pub cc: CcAlgorithm,
    /// What ssthresh is computed from on a congestion event (config only).
    pub reduction_base: ReductionBase,
    /// How fast recovery reduces cwnd (`tcp.cwnd_reduction`).
    pub cwnd_reduction: CwndReduction,
    /// An ACK may grow cwnd if its window of data was cwnd-limited at any transmission (Linux
    /// ≥ 4.x `tcp_cwnd_validate` / `tcp_is_cwnd_limited`, [`crate::cwnd_validation`]); off:
    /// only if the flight before the ACK reached cwnd (Linux 2.6.22). Config only.
    pub cwnd_limited_window: bool,
    /// The ACK that completes an active open leaves as a segment of its own, before any data
    /// (Linux `tcp_rcv_synsent_state_process` → `tcp_send_ack`: the application's first
    /// write can only follow `connect()` returning). Off: it rides on the first data segment
    /// when the application writes at the same instant (config only).
    pub handshake_ack_alone: bool,
    /// D-SACK (RFC 2883): report duplicates as a receiver; as a sender count them as spurious
    /// retransmissions, undo spurious recoveries and widen RACK's reordering window
    /// ([`crate::recovery::dsack`], [`crate::recovery::undo`]; `tcp.dsack`).
    pub dsack: bool,
    /// A retransmission absorbs the following un-SACKed segments while they fit one MSS
    /// (Linux `tcp_retrans_try_collapse`, sysctl `tcp_retrans_collapse`; `tcp.retrans_collapse`).
    pub retrans_collapse: bool,
    pub rto_model: RtoModel,
    pub rto_min: Duration,
    pub rto_initial: Duration,
    pub rto_max: Duration,
    /// Timer granularity: RTT samples and RTOs are quantised to this (1 jiffy on Linux 2.6.22;
    /// 1 µs on modern Linux, which measures RTT in microseconds).
    pub clock_granularity: Duration,
    /// Kernel timer frequency: `Some(hz)` runs the timers on the Linux timer wheel and rounds
    /// the RTO up to whole jiffies ([`crate::timer_wheel`]); `None`: exact timers.
    pub clock_hz: Option<u32>,
    pub delayed_ack: DelayedAckModel,
    /// The timer of the `FreeBsd6` delayed-ACK model (and the upper bound for `Linux`).
    pub delayed_ack_timeout: Duration,
    /// Send buffer (bytes accepted by `write` and not yet acknowledged).
    pub send_buffer: usize,
    /// Receive buffer (bounds the advertised window).
    pub recv_buffer: usize,
    /// How long TIME-WAIT lasts (2·MSL).
    pub time_wait: Duration,
    /// SYN / SYN-ACK retransmissions before giving up.
    pub syn_retries: u32,
    /// Data retransmissions by RTO before the connection is aborted.
    pub max_retries: u32,
    pub mechanisms: Mechanisms,
    /// Seed of the congestion controller's random draws (PERT's early response); the simulator
    /// sets it per flow from its seeded streams. 0 by default.
    pub cc_seed: u64,
    /// Which thin-stream test gates linear timeouts and thin dupACK (`tcp.thin_detection`).
    pub thin_detection: ThinDetection,
    /// Variant of `linear-timeouts` (config only, not a scenario key).
    pub linear_timeouts_variant: LinearTimeouts,
    /// Early Retransmit in Linux mode 2: delay the early retransmission by max(SRTT/4, 2 ms)
    /// (RFC 5827 §6 mitigation A.3; config only, not a scenario key).
    pub early_retransmit_delay: bool,
    /// Which RDB variant `mechanisms.rdb` runs (`tcp.rdb_variant`).
    pub rdb_variant: RdbVariant,
    /// Cap on the payload (new + redundant bytes) of a bundled packet; 0 = the MSS is the only
    /// limit (`tcp.rdb_max_bytes`).
    pub rdb_max_bytes: u32,
    /// `Patch`: how many earlier segments may be bundled (`tcp.rdb_max_packets`, default 1).
    pub rdb_max_packets: u32,
}

impl TcpConfig {
    pub fn from_profile(profile: Profile) -> TcpConfig {
        let ms = Duration::from_millis;
        let base = TcpConfig {
            mss: 1448,
            nodelay: true,
            sack: true,
            timestamps: true,
            window_scale: true,
            initial_window: 3,
            limited_transmit: true,
            cc: CcAlgorithm::NewReno,
            reduction_base: ReductionBase::Cwnd,
            cwnd_reduction: CwndReduction::Immediate,
            retrans_collapse: false,
            dsack: false,
            handshake_ack_alone: false,
            cwnd_limited_window: false,
            rto_model: RtoModel::Linux,
            rto_min: ms(200),
            rto_initial: ms(3000),
            rto_max: Duration::from_secs(120),
            clock_granularity: ms(1),
            clock_hz: None,
            delayed_ack: DelayedAckModel::Linux,
            delayed_ack_timeout: ms(200),
            send_buffer: 256 * 1024,
            recv_buffer: 256 * 1024,
            time_wait: Duration::from_secs(60),
            syn_retries: 5,
            max_retries: 15,
            mechanisms: Mechanisms::default(),
            cc_seed: 0,
            thin_detection: ThinDetection::Pif4,
            linear_timeouts_variant: LinearTimeouts::Linux,
            early_retransmit_delay: false,
            rdb_variant: RdbVariant::Seed,
            rdb_max_bytes: 0,
            rdb_max_packets: 1,
        };
        match profile {
            Profile::Linux2622 => base,
            Profile::FreeBsd6 => TcpConfig {
                initial_window: 4,
                rto_model: RtoModel::FreeBsd6,
                rto_min: ms(3),
                rto_max: Duration::from_secs(64),
                delayed_ack: DelayedAckModel::FreeBsd6,
                delayed_ack_timeout: ms(100),
                send_buffer: 32 * 1024,
                recv_buffer: 64 * 1024,
                ..base
            },
            Profile::Ns2 => TcpConfig {
                mss: 1000,
                timestamps: false,
                window_scale: false,
                initial_window: 2,
                rto_model: RtoModel::Ns2,
                clock_granularity: ms(10),
                delayed_ack: DelayedAckModel::Off,
                recv_buffer: 64 * 1024,
                ..base
            },
            Profile::Rfc => TcpConfig {
                reduction_base: ReductionBase::FlightSize,
                rto_model: RtoModel::Rfc6298,
                rto_min: ms(1000),
                rto_initial: ms(1000),
                rto_max: Duration::from_secs(60),
                delayed_ack: DelayedAckModel::FreeBsd6,
                delayed_ack_timeout: ms(200),
                ..base
            },
            Profile::Linux => TcpConfig {
                initial_window: 10,
                cc: CcAlgorithm::Cubic,
                cwnd_reduction: CwndReduction::Prr,
                retrans_collapse: true,
                dsack: true,
                handshake_ack_alone: true,
                cwnd_limited_window: true,
                clock_granularity: Duration::from_micros(1),
                clock_hz: Some(250),
                rto_initial: ms(1000),
                send_buffer: 4 * 1024 * 1024,
                recv_buffer: 6 * 1024 * 1024,
                mechanisms: Mechanisms {
                    tlp: true,
                    rack: true,
                    ..Mechanisms::default()
                },
                ..base
            },
        }
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig::from_profile(Profile::Linux2622)
    }
}
