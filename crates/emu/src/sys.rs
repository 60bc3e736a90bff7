//! Thin wrappers over the few system calls the emulator needs (libc): errno to
//! `io::Error`, the one monotonic clock (CLOCK_MONOTONIC, ns) that timestamps every write,
//! read and packet, absolute sleeps on it, socket options, and SCHED_FIFO.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// `r` as an `io::Result`, taking errno when `r` is −1.
pub fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// CLOCK_MONOTONIC in ns: the only clock of the emulated backend.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline_ns` (absolute; returns at once if past).
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is valid; the remaining-time pointer may be null with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}

/// Run-relative time: ns since the run's origin on CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: u64,
}

impl Clock {
    pub fn start() -> Clock {
        Clock { origin: mono_ns() }
    }

    /// ns since the origin.
    pub fn now(&self) -> u64 {
        mono_ns().saturating_sub(self.origin)
    }

    /// Absolute CLOCK_MONOTONIC ns of run time `t`.
    pub fn abs(&self, t: u64) -> u64 {
        self.origin + t
    }

    pub fn sleep_until(&self, t: u64) {
        sleep_until(self.abs(t))
    }
}

pub fn setsockopt<T>(fd: &impl AsRawFd, level: i32, opt: i32, val: &T) -> io::Result<()> {
    // SAFETY: `val` points to `size_of::<T>()` readable bytes.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            val as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Reads a socket option into `buf`; returns the length the kernel wrote.
pub fn getsockopt_bytes(fd: RawFd, level: i32, opt: i32, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` has `len` writable bytes and `len` is a valid in/out pointer.
    cvt(unsafe { libc::getsockopt(fd, level, opt, buf.as_mut_ptr().cast(), &mut len) })?;
    Ok(len as usize)
}

pub fn getsockopt_int(fd: RawFd, level: i32, opt: i32) -> io::Result<i32> {
    let mut b = [0u8; 4];
    getsockopt_bytes(fd, level, opt, &mut b)?;
    Ok(i32::from_ne_bytes(b))
}

/// Puts the calling thread under SCHED_FIFO at `priority`; the error says why not.
pub fn sched_fifo(priority: i32) -> io::Result<()> {
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 is the calling thread; `p` is valid.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) }).map(drop)
}

/// Whether the effective user is root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
