//! TUN devices: one per namespace, raw IPv4 packets (IFF_TUN | IFF_NO_PI), opened
//! non-blocking, configured with classic interface ioctls (address, netmask, up) from a
//! thread inside the namespace. The connected route of the address's prefix sends the other
//! host's traffic into the device, where the emulator reads it.

use crate::netns::{write_sysctl, Netns};
use crate::sys::cvt;
use std::fs::OpenOptions;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

/// An open TUN device in some namespace.
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    pub name: String,
}

fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r
        .ifr_name
        .iter_mut()
        .zip(name.bytes().take(libc::IFNAMSIZ - 1))
    {
        *d = s as libc::c_char;
    }
    r
}

fn sockaddr_in(a: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(a.octets()),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr have the same size; sockaddr is plain old data.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

fn ioctl(fd: &OwnedFd, req: libc::c_ulong, r: &mut libc::ifreq) -> io::Result<()> {
    // SAFETY: `r` is a valid ifreq for these interface requests.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), req as _, r as *mut libc::ifreq) }).map(drop)
}

/// Sets `name` up (and with `addr/prefix` if given), from a thread inside its namespace.
fn configure(name: &str, addr: Option<(Ipv4Addr, u8)>) -> io::Result<()> {
    // SAFETY: plain socket(2) call; the result is checked.
    let s = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `s` is a fresh descriptor we own.
    let s = unsafe { OwnedFd::from_raw_fd(s) };
    if let Some((a, prefix)) = addr {
        let mut r = ifreq(name);
        r.ifr_ifru.ifru_addr = sockaddr_in(a);
        ioctl(&s, libc::SIOCSIFADDR, &mut r)?;
        let mask = if prefix == 0 {
            0
        } else {
            u32::MAX << (32 - prefix.min(32))
        };
        let mut r = ifreq(name);
        r.ifr_ifru.ifru_netmask = sockaddr_in(Ipv4Addr::from(mask));
        ioctl(&s, libc::SIOCSIFNETMASK, &mut r)?;
    }
    let mut r = ifreq(name);
    ioctl(&s, libc::SIOCGIFFLAGS, &mut r)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member.
    unsafe { r.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short };
    ioctl(&s, libc::SIOCSIFFLAGS, &mut r)
}

impl Tun {
    /// Creates TUN device `name` in `ns` with address `addr/prefix`, up, and brings `lo` up.
    /// IPv6 is switched off in the namespace so that only the flows' packets cross the TUN.
    pub fn create(ns: &Netns, name: &str, addr: Ipv4Addr, prefix: u8) -> io::Result<Tun> {
        let name = name.to_string();
        ns.run(move || {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open("/dev/net/tun")?;
            let fd: OwnedFd = f.into();
            let mut r = ifreq(&name);
            r.ifr_ifru.ifru_flags = IFF_TUN | IFF_NO_PI;
            ioctl(&fd, TUNSETIFF, &mut r)?;
            let _ = write_sysctl("net/ipv6/conf/all/disable_ipv6", "1");
            let _ = write_sysctl("net/ipv6/conf/default/disable_ipv6", "1");
            configure("lo", None)?;
            configure(&name, Some((addr, prefix)))?;
            Ok(Tun { fd, name })
        })
    }

    /// Reads one packet; `WouldBlock` when none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` has `buf.len()` writable bytes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Writes one packet (the kernel receives it as arriving on this device).
    pub fn write(&self, pkt: &[u8]) -> io::Result<usize> {
        // SAFETY: `pkt` has `pkt.len()` readable bytes.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }
}
