//! The capture reader and flow reconstruction on captures written here with pcap-file's
//! writers: every container and link type, IPv4 and IPv6, VLAN tags, sequence wraparound,
//! snap-length cuts, truncation at every byte offset, corrupt and random input.

use bytes::Bytes;
use etherparse::{IpNumber, Ipv4Header, Ipv6Header};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, TsResolution};
use proptest::prelude::*;
use std::borrow::Cow;
use std::net::IpAddr;
use std::time::Duration;
use thinlab_tcp::wire::{emit_ipv4, emit_ipv6, Flags, Segment};
use thinlab_trace::flows::analyze;
use thinlab_trace::pcap::{
    read_capture, read_capture_file, Capture, CaptureReader, MAX_DRAIN, MAX_RECORD,
};

type Pkt = (u64, IpAddr, IpAddr, Segment);

const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000 * 1_000_000_000;

fn seg(sp: u16, dp: u16, seq: u32, ack: u32, flags: Flags, len: usize) -> Segment {
    Segment {
        src_port: sp,
        dst_port: dp,
        seq,
        ack,
        flags,
        window: 65535,
        payload: Bytes::from(vec![0x5a; len]),
        ..Segment::default()
    }
}

/// A thin stream of 10 writes of 100 bytes every 100 ms over a 50 ms RTT; the 4th write's
/// first transmission is lost and retransmitted by timeout 50 ms later. Returns the
/// (sender-side, receiver-side) packets.
fn thin_stream(c: IpAddr, s: IpAddr, isn: u32) -> (Vec<Pkt>, Vec<Pkt>) {
    let (cp, sp) = (40000, 5001);
    let iss = 777u32;
    let a = Flags::ACK;
    let owd = 25 * MS;
    let mut snd = Vec::new();
    let mut rcv = Vec::new();
    let mut both = |t: u64, from_client: bool, sg: Segment, lost: bool| {
        let (src, dst) = if from_client { (c, s) } else { (s, c) };
        let (t_snd, t_rcv) = if from_client {
            (t, t + owd)
        } else {
            (t + owd, t)
        };
        snd.push((T0 + t_snd, src, dst, sg.clone()));
        if !lost {
            rcv.push((T0 + t_rcv, src, dst, sg));
        }
    };
    both(0, true, seg(cp, sp, isn, 0, Flags::SYN, 0), false);
    both(
        owd,
        false,
        seg(sp, cp, iss, isn.wrapping_add(1), Flags::SYN | a, 0),
        false,
    );
    both(
        2 * owd,
        true,
        seg(cp, sp, isn.wrapping_add(1), iss + 1, a, 0),
        false,
    );
    for i in 0..10u32 {
        let t = 100 * MS * u64::from(i + 1);
        let seq = isn.wrapping_add(1 + 100 * i);
        let ackno = isn.wrapping_add(1 + 100 * (i + 1));
        both(
            t,
            true,
            seg(cp, sp, seq, iss + 1, a | Flags::PSH, 100),
            i == 3,
        );
        if i == 3 {
            // No ACK comes back: the retransmission is timer-driven.
            both(
                t + 50 * MS,
                true,
                seg(cp, sp, seq, iss + 1, a | Flags::PSH, 100),
                false,
            );
            both(
                t + 50 * MS + owd,
                false,
                seg(sp, cp, iss + 1, ackno, a, 0),
                false,
            );
        } else {
            both(t + owd, false, seg(sp, cp, iss + 1, ackno, a, 0), false);
        }
    }
    (snd, rcv)
}

fn ip_packet(p: &Pkt) -> Vec<u8> {
    let mut tcp = Vec::new();
    match (p.1, p.2) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            emit_ipv4(&p.3, s.octets(), d.octets(), &mut tcp);
            let mut h =
                Ipv4Header::new(tcp.len() as u16, 64, IpNumber::TCP, s.octets(), d.octets())
                    .unwrap();
            h.header_checksum = h.calc_header_checksum();
            let mut out = h.to_bytes().to_vec();
            out.extend_from_slice(&tcp);
            out
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            emit_ipv6(&p.3, s.octets(), d.octets(), &mut tcp);
            let h = Ipv6Header {
                traffic_class: 0,
                flow_label: Default::default(),
                payload_length: tcp.len() as u16,
                next_header: IpNumber::TCP,
                hop_limit: 64,
                source: s.octets(),
                destination: d.octets(),
            };
            let mut out = h.to_bytes().to_vec();
            out.extend_from_slice(&tcp);
            out
        }
        _ => unreachable!(),
    }
}

#[derive(Clone, Copy, Debug)]
enum Link {
    Ethernet,
    EthernetVlan,
    Sll,
    Sll2,
    Raw,
}

fn frame(link: Link, p: &Pkt) -> Vec<u8> {
    let ip = ip_packet(p);
    let et: u16 = if p.1.is_ipv4() { 0x0800 } else { 0x86dd };
    let mut f = Vec::new();
    match link {
        Link::Ethernet | Link::EthernetVlan => {
            f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
            if matches!(link, Link::EthernetVlan) {
                f.extend_from_slice(&[0x81, 0x00, 0x00, 0x2a]);
            }
            f.extend_from_slice(&et.to_be_bytes());
        }
        Link::Sll => {
            f.extend_from_slice(&[0, 4, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
            f.extend_from_slice(&et.to_be_bytes());
        }
        Link::Sll2 => {
            f.extend_from_slice(&et.to_be_bytes());
            f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 4, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        }
        Link::Raw => {}
    }
    f.extend_from_slice(&ip);
    // Ethernet pads short frames to 60 bytes: the reader must trust the IP length.
    if matches!(link, Link::Ethernet) && f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

fn datalink(link: Link) -> DataLink {
    match link {
        Link::Ethernet | Link::EthernetVlan => DataLink::ETHERNET,
        Link::Sll => DataLink::LINUX_SLL,
        Link::Sll2 => DataLink::LINUX_SLL2,
        Link::Raw => DataLink::RAW,
    }
}

fn pcap(link: Link, pkts: &[Pkt], nanos: bool) -> Vec<u8> {
    let header = PcapHeader {
        datalink: datalink(link),
        ts_resolution: if nanos {
            TsResolution::NanoSecond
        } else {
            TsResolution::MicroSecond
        },
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for p in pkts {
        let f = frame(link, p);
        w.write_packet(&PcapPacket::new(
            Duration::from_nanos(p.0),
            f.len() as u32,
            &f,
        ))
        .unwrap();
    }
    w.into_writer()
}

fn pcapng(link: Link, pkts: &[Pkt]) -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: datalink(link),
        snaplen: 0,
        options: vec![InterfaceDescriptionOption::IfTsResol(9)],
    })
    .unwrap();
    for p in pkts {
        let f = frame(link, p);
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(p.0),
            original_len: f.len() as u32,
            data: Cow::Owned(f),
            options: vec![],
        })
        .unwrap();
    }
    w.into_inner()
}

fn v4() -> (IpAddr, IpAddr) {
    (
        "192.0.2.1".parse().unwrap(),
        "198.51.100.7".parse().unwrap(),
    )
}

fn clean(c: &Capture) {
    assert_eq!(c.stats.stopped_at, None, "{:?}", c.stats);
    assert_eq!(c.stats.dropped_total(), 0, "{:?}", c.stats);
    assert_eq!(c.stats.checksum_errors, 0, "{:?}", c.stats);
}

fn check_thin(snd: &Capture, rcv: &Capture) {
    clean(snd);
    clean(rcv);
    let conns = analyze(&snd.packets, Some(&rcv.packets));
    assert_eq!(conns.len(), 1);
    let m = &conns[0].metrics;
    assert_eq!(m.data_packets_sent, 11);
    assert_eq!(m.payload_bytes_sent, 1100);
    assert_eq!(m.unique_bytes_sent, 1000);
    assert_eq!(m.redundant_bytes_sent, 100);
    assert_eq!(m.retransmissions, 1);
    // Timer-driven, 50 ms after the send with an SRTT of 50 ms: far earlier than any RTO
    // (SRTT + 200 ms), so a tail loss probe (thinlab_trace::attribution).
    assert_eq!(m.retransmissions_by_cause.tlp, 1, "timer-driven");
    assert_eq!(m.rto_events, 0);
    assert_eq!(m.writes, 10);
    assert_eq!(m.bytes_delivered, 1000);
    // Every write but the 4th is ACKed one RTT after it left; the 4th 50 ms + one RTT.
    assert_eq!(m.ack_latency_from_send_ms.p50, Some(50.0));
    assert_eq!(m.ack_latency_from_send_ms.max, Some(100.0));
    assert_eq!(m.transport_latency_from_send_ms.max, Some(75.0));
    assert_eq!(m.app_latency_from_send_ms.p50, Some(25.0));
    assert_eq!(m.app_latency_from_send_ms.max, Some(75.0));
    let e = &conns[0].extras;
    assert_eq!(e.lost_packets, Some(1));
    assert!(e.syn_seen);
    assert_eq!(conns[0].sender.port(), 40000);
}

#[test]
fn every_container_and_link_type_gives_the_same_analysis() {
    let v6: (IpAddr, IpAddr) = (
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
    );
    for (c, s) in [v4(), v6] {
        // The second ISN makes the sequence numbers wrap during the stream.
        for isn in [1000u32, u32::MAX - 250] {
            let (snd, rcv) = thin_stream(c, s, isn);
            for link in [
                Link::Ethernet,
                Link::EthernetVlan,
                Link::Sll,
                Link::Sll2,
                Link::Raw,
            ] {
                for nanos in [true, false] {
                    check_thin(
                        &read_capture(&pcap(link, &snd, nanos)),
                        &read_capture(&pcap(link, &rcv, nanos)),
                    );
                }
                let a = read_capture(&pcapng(link, &snd));
                assert_eq!(a.stats.format, "pcapng");
                check_thin(&a, &read_capture(&pcapng(link, &rcv)));
            }
        }
    }
}

#[test]
fn data_from_the_server_is_analysed_in_that_direction() {
    let (c, s) = v4();
    let (snd, _) = thin_stream(c, s, 5);
    // The data sender answers a SYN instead of sending it.
    let swapped: Vec<Pkt> = snd
        .iter()
        .map(|(t, a, b, sg)| {
            let mut sg = sg.clone();
            if sg.flags.syn() && !sg.flags.ack() {
                sg.flags = sg.flags | Flags::ACK;
            } else if sg.flags.syn() {
                sg.flags = Flags::SYN;
            }
            (*t, *a, *b, sg)
        })
        .collect();
    let cap = read_capture(&pcap(Link::Ethernet, &swapped, true));
    let conns = analyze(&cap.packets, None);
    assert_eq!(conns[0].sender.port(), 40000);
    assert_eq!(conns[0].client.port(), 5001);
    assert_eq!(conns[0].metrics.data_packets_sent, 11);
    assert_eq!(conns[0].metrics.unique_bytes_sent, 1000);
    assert_eq!(
        conns[0].metrics.app_latency_ms.count, 0,
        "no receiver capture"
    );
}

#[test]
fn snaplen_cut_frames_keep_their_payload_length() {
    let (c, s) = v4();
    let (snd, _) = thin_stream(c, s, 9);
    let header = PcapHeader {
        snaplen: 64,
        ..PcapHeader::default()
    };
    // pcap-file's writer refuses orig_len > snaplen, which real captures have: write the
    // (big-endian, microsecond) records by hand after its file header.
    let mut data = PcapWriter::with_header(Vec::new(), header)
        .unwrap()
        .into_writer();
    for p in &snd {
        let f = frame(Link::Ethernet, p);
        let cut = f.len().min(64);
        data.extend_from_slice(&((p.0 / 1_000_000_000) as u32).to_be_bytes());
        data.extend_from_slice(&(((p.0 % 1_000_000_000) / 1000) as u32).to_be_bytes());
        data.extend_from_slice(&(cut as u32).to_be_bytes());
        data.extend_from_slice(&(f.len() as u32).to_be_bytes());
        data.extend_from_slice(&f[..cut]);
    }
    let cap = read_capture(&data);
    assert_eq!(cap.stats.stopped_at, None, "{:?}", cap.stats);
    assert!(cap.stats.snaplen_cut >= 11, "{:?}", cap.stats);
    let m = &analyze(&cap.packets, None)[0].metrics;
    assert_eq!(m.payload_bytes_sent, 1100);
}

#[test]
fn truncation_at_every_byte_offset_stops_cleanly() {
    let (c, s) = v4();
    let (snd, _) = thin_stream(c, s, 3);
    for data in [
        pcap(Link::Ethernet, &snd[..8], true),
        pcapng(Link::Sll2, &snd[..8]),
    ] {
        let full = read_capture(&data);
        clean(&full);
        let n = full.stats.records;
        let mut clean_cuts = 0;
        for cut in 0..data.len() {
            let r = read_capture(&data[..cut]);
            same(&r, &streamed(&data[..cut], 1 + cut % 7, 3), cut);
            assert!(r.stats.records <= n);
            match r.stats.stopped_at {
                Some(at) => {
                    assert!(at <= cut as u64, "cut {cut}: stopped at {at}");
                    assert!(r.stats.stop_reason.is_some());
                }
                None => clean_cuts += 1,
            }
            let _ = analyze(&r.packets, Some(&r.packets));
        }
        // Only cuts exactly between records (and after the file header) read cleanly.
        assert!(clean_cuts <= n as usize + 1, "{clean_cuts}");
    }
}

/// Reads `data` through a [`CaptureReader`] asking for `chunk` bytes at a time from a source
/// that returns at most `dribble` bytes per `read` call.
fn streamed(data: &[u8], chunk: usize, dribble: usize) -> Capture {
    struct Dribble<'a>(&'a [u8], usize);
    impl std::io::Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.1).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut r = CaptureReader::with_chunk(Dribble(data, dribble), chunk);
    let packets = r.by_ref().collect();
    Capture {
        packets,
        stats: r.finish(),
    }
}

fn same(a: &Capture, b: &Capture, what: impl std::fmt::Debug) {
    assert_eq!(a.stats, b.stats, "{what:?}");
    assert_eq!(a.packets, b.packets, "{what:?}");
}

#[test]
fn streaming_in_any_chunk_size_reads_the_same() {
    let (c, s) = v4();
    let (snd, _) = thin_stream(c, s, 0xffff_ff00);
    for data in [pcap(Link::Ethernet, &snd, false), pcapng(Link::Sll, &snd)] {
        let whole = read_capture(&data);
        clean(&whole);
        assert!(whole.packets.len() > 20);
        for chunk in [1, 2, 3, 5, 24, 100, 1 << 20] {
            for dribble in [1, 7, usize::MAX] {
                same(&whole, &streamed(&data, chunk, dribble), (chunk, dribble));
            }
        }
    }
}

#[test]
fn a_record_longer_than_the_limit_stops_reading_there() {
    // A pcap header with a 4 GiB snap length, then a record claiming 0xffff_fff0 bytes, then
    // more bytes than the limit: the reader stops at the record instead of buffering it all.
    let mut head = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    head.extend_from_slice(&u32::MAX.to_le_bytes());
    head.extend_from_slice(&1u32.to_le_bytes());
    head.extend_from_slice(&[0; 8]);
    head.extend_from_slice(&0xffff_fff0u32.to_le_bytes());
    head.extend_from_slice(&0xffff_fff0u32.to_le_bytes());
    let body = std::io::Read::take(std::io::repeat(0), (MAX_RECORD + (8 << 20)) as u64);
    let mut r = CaptureReader::new(std::io::Read::chain(&head[..], body));
    assert_eq!(r.by_ref().count(), 0);
    let st = r.finish();
    assert_eq!(st.stopped_at, Some(24), "{st:?}");
    let why = st.stop_reason.as_deref().unwrap();
    assert!(
        why.contains("declares a length of 4294967280 bytes") && why.contains("corrupt"),
        "{st:?}"
    );
    // The rest of a stream is counted up to MAX_DRAIN bytes, not read forever.
    let total = head.len() as u64 + (MAX_RECORD + (8 << 20)) as u64;
    assert!(st.bytes > MAX_DRAIN && st.bytes <= total, "{st:?}");
}

#[test]
fn a_record_longer_than_the_rest_of_the_file_is_named_as_such() {
    // A plausible length (1000 bytes) in a file that ends 10 bytes after the record header.
    let mut head = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    head.extend_from_slice(&65535u32.to_le_bytes());
    head.extend_from_slice(&1u32.to_le_bytes());
    head.extend_from_slice(&[0; 8]);
    head.extend_from_slice(&1000u32.to_le_bytes());
    head.extend_from_slice(&1000u32.to_le_bytes());
    head.extend_from_slice(&[0; 10]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.pcap");
    std::fs::write(&path, &head).unwrap();
    let st = read_capture_file(&path).unwrap().stats;
    let why = st.stop_reason.as_deref().unwrap();
    assert!(
        why.contains("declares a length of 1000 bytes, but only 10 bytes follow"),
        "{st:?}"
    );
}

#[test]
fn an_endless_device_is_not_read_forever() {
    // /dev/zero: not a capture; finishing must not try to count all of it.
    let Ok(f) = std::fs::File::open("/dev/zero") else {
        return;
    };
    let mut r = CaptureReader::from_file(f);
    assert_eq!(r.by_ref().count(), 0);
    let st = r.finish();
    assert!(
        st.stop_reason.as_deref().unwrap().contains("magic"),
        "{st:?}"
    );
    assert!(st.bytes <= MAX_DRAIN + (2 << 20), "{st:?}");
}

#[test]
fn a_read_error_stops_reading_and_keeps_what_came_before() {
    let (c, s) = v4();
    let (snd, _) = thin_stream(c, s, 5);
    let data = pcap(Link::Raw, &snd, true);
    let whole = read_capture(&data);
    struct Failing<'a>(&'a [u8]);
    impl std::io::Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = buf.len().min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    // Cut inside the 6th record: the first five come out, the stop names the 6th's offset.
    let cut = data.len() / 2;
    let prefix = read_capture(&data[..cut]);
    let mut r = CaptureReader::with_chunk(Failing(&data[..cut]), 10);
    let got: Vec<_> = r.by_ref().collect();
    let st = r.finish();
    assert_eq!(got, prefix.packets);
    assert!(!got.is_empty() && got.len() < whole.packets.len());
    assert_eq!(st.stopped_at, prefix.stats.stopped_at);
    assert!(
        st.stop_reason.as_deref().unwrap().contains("disk on fire"),
        "{st:?}"
    );
}

/// Inputs the fuzzers (`fuzz/`) found, kept as files: each must read the same whole and
/// streamed in any chunk size, and analyse without panicking.
#[test]
fn fuzz_regressions_read_the_same_streamed_and_whole() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let whole = read_capture(&data);
        assert_eq!(whole.stats.bytes, data.len() as u64);
        for chunk in [1, 2, 12, 13, 64, 1 << 20] {
            same(&whole, &streamed(&data, chunk, usize::MAX), (&path, chunk));
        }
        let _ = analyze(&whole.packets, Some(&whole.packets));
        n += 1;
    }
    assert!(n >= 1);
}

#[test]
fn a_bad_block_whose_length_runs_past_the_end_is_unreadable_in_any_chunk_size() {
    // capture_read-27beb9e0 (found by the fuzzer): a block at offset 108 whose length field
    // is not a multiple of 4 and longer than the rest of the file. Read whole, the parser
    // rejects it; streamed, reading must not stop at a chunk boundary as "truncated" instead.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let data = std::fs::read(dir.join("capture_read-27beb9e0.pcapng")).unwrap();
    for chunk in [13, 1 << 20] {
        let r = streamed(&data, chunk, usize::MAX);
        assert_eq!(r.stats.stopped_at, Some(108));
        let why = r.stats.stop_reason.unwrap();
        assert!(why.starts_with("unreadable block"), "chunk {chunk}: {why}");
    }
}

#[test]
fn a_file_stopped_early_reports_its_whole_size_and_the_offset() {
    // Give the 4th pcapng block (the 2nd packet) a length that is no multiple of 4: reading
    // stops there at once, and the file's size still comes out right (from its metadata,
    // without reading the rest).
    let (c, s) = v4();
    let (snd, _) = thin_stream(c, s, 9);
    let mut data = pcapng(Link::Ethernet, &snd);
    let big = data[8..12] == [0x1a, 0x2b, 0x3c, 0x4d];
    let len_at = |d: &[u8], at: usize| {
        let b: [u8; 4] = d[at + 4..at + 8].try_into().unwrap();
        (if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }) as usize
    };
    let mut at = 0;
    for _ in 0..3 {
        at += len_at(&data, at);
    }
    let bad = if big {
        13u32.to_be_bytes()
    } else {
        13u32.to_le_bytes()
    };
    data[at + 4..at + 8].copy_from_slice(&bad);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.pcapng");
    std::fs::write(&path, &data).unwrap();
    let f = read_capture_file(&path).unwrap();
    same(&f, &read_capture(&data), "file vs memory");
    assert_eq!(f.stats.bytes, data.len() as u64);
    assert_eq!(f.stats.stopped_at, Some(at as u64));
    assert_eq!(f.packets.len(), 1);
    let why = f.stats.stop_reason.unwrap();
    assert!(why.starts_with("unreadable block"), "{why}");
}

#[test]
fn not_a_capture_is_reported() {
    for data in [&b""[..], b"hello world, this is not a pcap", &[0xd4, 0xc3]] {
        let r = read_capture(data);
        assert_eq!(r.stats.stopped_at, Some(0));
        assert!(r.packets.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..600), magic in 0usize..5) {
        let prefixes: [&[u8]; 5] = [
            &[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0],
            &[0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 113, 0, 0, 0],
            &[0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0],
            &[0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 101],
            &[],
        ];
        let mut data = prefixes[magic].to_vec();
        data.extend_from_slice(&body);
        let r = read_capture(&data);
        let _ = analyze(&r.packets, Some(&r.packets));
    }

    #[test]
    fn corrupted_captures_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..20), ng in any::<bool>()) {
        let (c, s) = v4();
        let (snd, _) = thin_stream(c, s, 11);
        let mut data = if ng { pcapng(Link::Ethernet, &snd) } else { pcap(Link::Sll, &snd, true) };
        for (i, b) in flips {
            let i = i.index(data.len());
            data[i] = b;
        }
        let r = read_capture(&data);
        if let Some(at) = r.stats.stopped_at {
            prop_assert!(at <= data.len() as u64);
        }
        same(&r, &streamed(&data, 1 + data.len() % 61, 13), "corrupted");
        let _ = analyze(&r.packets, Some(&r.packets));
    }
}
