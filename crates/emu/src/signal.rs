//! Ctrl-C and SIGTERM during an emulated run: the handler only sets a flag, which the run
//! polls (applications every 20 ms); the run then stops, the namespaces go away with their
//! file descriptors, and the caller keeps the results of the runs that finished.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT/SIGTERM handler (once) and returns the flag it sets.
pub fn interrupt_flag() -> &'static AtomicBool {
    INSTALL.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
            unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
        }
    });
    &INTERRUPTED
}
