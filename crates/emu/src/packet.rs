//! The few header fields the emulator needs from a raw IPv4/TCP packet read from a TUN
//! device, and which flow it belongs to. Anything that is not a well-formed IPv4 TCP packet
//! (IPv6 router solicitations, ICMP, a truncated header) parses to `None`; it never panics.

/// The server port of flow `i` is `BASE_PORT + i`; it tells the flows apart on the wire.
pub const BASE_PORT: u16 = 5001;

/// Header fields of one TCP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub payload_len: u32,
    /// Bytes of the IPv4 packet (header included), as its total-length field says.
    pub ip_len: u32,
}

impl TcpHeader {
    pub fn syn(&self) -> bool {
        self.flags & 0x02 != 0
    }
    pub fn fin(&self) -> bool {
        self.flags & 0x01 != 0
    }
    pub fn rst(&self) -> bool {
        self.flags & 0x04 != 0
    }
    pub fn has_ack(&self) -> bool {
        self.flags & 0x10 != 0
    }
}

fn be16(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(i..i + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?))
}

/// Parses an IPv4 packet carrying TCP.
pub fn parse(pkt: &[u8]) -> Option<TcpHeader> {
    let v = *pkt.first()?;
    if v >> 4 != 4 || *pkt.get(9)? != 6 {
        return None;
    }
    let ihl = usize::from(v & 0x0f) * 4;
    let total = usize::from(be16(pkt, 2)?);
    if ihl < 20 || total < ihl + 20 || total > pkt.len() {
        return None;
    }
    let tcp = &pkt[ihl..total];
    let doff = usize::from(tcp[12] >> 4) * 4;
    if doff < 20 || doff > tcp.len() {
        return None;
    }
    Some(TcpHeader {
        src_port: be16(tcp, 0)?,
        dst_port: be16(tcp, 2)?,
        seq: be32(tcp, 4)?,
        ack: be32(tcp, 8)?,
        flags: tcp[13],
        window: be16(tcp, 14)?,
        payload_len: (tcp.len() - doff) as u32,
        ip_len: total as u32,
    })
}

/// The flow of a packet sent by the client side (`from_client`) or the server side, if its
/// server port names one of `flows` flows.
pub fn flow_of(h: &TcpHeader, from_client: bool, flows: usize) -> Option<usize> {
    let port = if from_client { h.dst_port } else { h.src_port };
    let i = usize::from(port.checked_sub(BASE_PORT)?);
    (i < flows).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(payload: usize) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = 6;
        let t = &mut p[20..];
        t[0..2].copy_from_slice(&40000u16.to_be_bytes());
        t[2..4].copy_from_slice(&5002u16.to_be_bytes());
        t[4..8].copy_from_slice(&7u32.to_be_bytes());
        t[12] = 8 << 4;
        t[13] = 0x18;
        p
    }

    #[test]
    fn parses_and_classifies() {
        let h = parse(&packet(120)).unwrap();
        assert_eq!((h.seq, h.payload_len, h.ip_len), (7, 120, 172));
        assert!(h.has_ack() && !h.syn());
        assert_eq!(flow_of(&h, true, 2), Some(1));
        assert_eq!(flow_of(&h, true, 1), None);
        assert_eq!(flow_of(&h, false, 2), None);
    }

    #[test]
    fn garbage_is_none() {
        let p = packet(10);
        for n in 0..p.len() {
            assert!(parse(&p[..n]).is_none());
        }
        let mut v6 = p.clone();
        v6[0] = 0x60;
        assert!(parse(&v6).is_none());
        let mut bad = p.clone();
        bad[20 + 12] = 15 << 4;
        assert!(parse(&bad).is_none());
    }
}
