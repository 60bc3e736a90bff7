//! Network namespaces, one per host side of the emulated path.
//!
//! A namespace is created anonymously: a short-lived thread calls `unshare(CLONE_NEWNET)`,
//! opens `/proc/thread-self/ns/net` and exits, and the open file is the only thing keeping
//! the namespace alive. It has no name in `/run/netns` and no process lives in it, so it (with
//! its TUN device, addresses, routes and sockets) is removed by the kernel when the last file
//! descriptor to it is closed: when [`Netns`] and the sockets made in it are dropped, on
//! error, and when the process exits or is killed. Nothing can be left behind by a crash.
//!
//! Work inside a namespace runs on a thread that has `setns`'d into it ([`Netns::enter`] for
//! a thread of its own, [`Netns::run`] for a scoped one): the caller's namespace never
//! changes. Sockets keep the namespace they were created in whatever thread uses them, and
//! `/proc/sys/net` and `/proc/thread-self/net` show the namespace of the calling thread.

use crate::sys::cvt;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Names of files under /run/netns made by thinlab start with this (none are made; a
/// leftover from another tool using the prefix is reported by [`leftovers`]).
pub const PREFIX: &str = "tl-";

/// An anonymous network namespace.
#[derive(Debug)]
pub struct Netns {
    fd: OwnedFd,
    /// The namespace's inode number (as `ls -l /proc/PID/ns/net` shows it).
    pub inode: u64,
}

impl Netns {
    /// Creates a new, empty network namespace (only `lo`, down).
    pub fn create() -> io::Result<Netns> {
        std::thread::spawn(|| -> io::Result<Netns> {
            // SAFETY: affects only this short-lived thread (CLONE_NEWNET is per-thread).
            cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
            let f = File::open("/proc/thread-self/ns/net")?;
            let inode = f.metadata()?.ino();
            Ok(Netns {
                fd: f.into(),
                inode,
            })
        })
        .join()
        .map_err(|_| io::Error::other("namespace thread panicked"))?
    }

    /// Moves the calling thread into this namespace (for threads that live there).
    pub fn enter(&self) -> io::Result<()> {
        // SAFETY: `fd` is an open namespace file; CLONE_NEWNET checks its type.
        cvt(unsafe { libc::setns(self.fd.as_raw_fd(), libc::CLONE_NEWNET) }).map(drop)
    }

    /// Runs `f` on a scoped thread inside this namespace.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
        std::thread::scope(|s| {
            s.spawn(|| {
                self.enter()?;
                f()
            })
            .join()
            .map_err(|_| io::Error::other("namespace thread panicked"))?
        })
    }
}

/// Writes a sysctl of the calling thread's namespace, e.g. `("net/ipv4/tcp_sack", "1")`.
pub fn write_sysctl(key: &str, value: &str) -> io::Result<()> {
    std::fs::write(Path::new("/proc/sys").join(key), value)
        .map_err(|e| io::Error::new(e.kind(), format!("sysctl {key} = {value}: {e}")))
}

/// Reads a sysctl of the calling thread's namespace (trimmed).
pub fn read_sysctl(key: &str) -> io::Result<String> {
    Ok(std::fs::read_to_string(Path::new("/proc/sys").join(key))?
        .trim()
        .to_string())
}

/// Whether a namespace with this inode still exists in any process or thread (used by the
/// teardown tests; a namespace held only by a file descriptor is found through `fd/`).
pub fn namespace_alive(inode: u64) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    for p in procs.flatten() {
        let name = p.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let base = p.path();
        let mut candidates = vec![base.join("ns/net")];
        if let Ok(tasks) = std::fs::read_dir(base.join("task")) {
            candidates.extend(tasks.flatten().map(|t| t.path().join("ns/net")));
        }
        if let Ok(fds) = std::fs::read_dir(base.join("fd")) {
            candidates.extend(fds.flatten().map(|f| f.path()));
        }
        for c in candidates {
            if let Ok(m) = std::fs::metadata(&c) {
                // nsfs inodes live on their own device; the inode number identifies them.
                if m.ino() == inode && m.dev() != 0 && is_nsfs(&c) {
                    return true;
                }
            }
        }
    }
    false
}

fn is_nsfs(p: &Path) -> bool {
    std::fs::read_link(p).map_or(true, |l| l.to_string_lossy().starts_with("net:"))
}

/// Names in /run/netns starting with [`PREFIX`]: leftovers of some earlier tool or run.
pub fn leftovers() -> Vec<String> {
    let Ok(d) = std::fs::read_dir("/run/netns") else {
        return Vec::new();
    };
    d.flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(PREFIX))
        .collect()
}
