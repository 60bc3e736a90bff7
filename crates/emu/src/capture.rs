//! pcap files of every flow at both ends, written by the emulator from what crosses the TUN
//! devices: the sender-side file holds what the data sender's host put on its TUN and what
//! was delivered to it, the receiver-side file the same for the receiver. Records are the
//! packets' real bytes (raw IPv4, LINKTYPE_RAW) with nanosecond run-relative timestamps;
//! file names are the simulator's ([`thinlab_sim::pcap_out::file_names`]), so
//! `thinlab analyze SENDER.pcap --receiver RECEIVER.pcap` reads them like the simulator's.

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Duration;

type Writer = PcapWriter<BufWriter<File>>;

fn err(e: pcap_file::PcapError) -> io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        e => io::Error::other(e.to_string()),
    }
}

/// The two capture files of one flow.
pub struct FlowPcaps {
    /// Indexed by host side: 0 client, 1 server.
    files: [Writer; 2],
    pub paths: [PathBuf; 2],
}

impl FlowPcaps {
    /// Creates `dir/<sender file>` and `dir/<receiver file>`; `sender` is the data sender's
    /// side (0 client, 1 server).
    pub fn create(dir: &Path, flow_name: &str, sender: usize) -> io::Result<FlowPcaps> {
        std::fs::create_dir_all(dir)?;
        let (s, r) = thinlab_sim::pcap_out::file_names(flow_name);
        let (s, r) = (dir.join(s), dir.join(r));
        let paths = if sender == 0 { [s, r] } else { [r, s] };
        let open = |p: &Path| -> io::Result<Writer> {
            let header = PcapHeader {
                snaplen: 65535,
                datalink: DataLink::RAW,
                ts_resolution: TsResolution::NanoSecond,
                endianness: Endianness::Little,
                ..PcapHeader::default()
            };
            PcapWriter::with_header(BufWriter::new(File::create(p)?), header).map_err(err)
        };
        Ok(FlowPcaps {
            files: [open(&paths[0])?, open(&paths[1])?],
            paths,
        })
    }

    /// A packet seen at host `side` at run time `t_ns`.
    pub fn write(&mut self, side: usize, t_ns: u64, pkt: &[u8]) -> io::Result<()> {
        let p = PcapPacket::new(Duration::from_nanos(t_ns), pkt.len() as u32, pkt);
        self.files[side].write_packet(&p).map_err(err).map(drop)
    }

    pub fn finish(self) -> io::Result<()> {
        for f in self.files {
            use std::io::Write;
            f.into_writer().flush()?;
        }
        Ok(())
    }
}
