//! Ctrl-C (SIGINT): the first one stops starting new runs — the runs under way finish and
//! the results of every finished run are written, marked incomplete, and thinlab exits with
//! code 130; a second one abandons the runs under way and exits at once (130, nothing more
//! written).

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit code after an interruption (128 + SIGINT).
pub const EXIT_CODE: u8 = 130;

/// Installs the handler (once; a failure to install leaves Ctrl-C at its default).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            eprintln!("\ninterrupted again: abandoning the runs under way");
            std::process::exit(i32::from(EXIT_CODE));
        }
        eprintln!(
            "\ninterrupted: no new runs start; the runs under way finish and what is complete is \
             written (Ctrl-C again to abandon them)"
        );
    });
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Asks that no new run start, as a first Ctrl-C does (the Python API, which has the
/// interpreter's own Ctrl-C handling).
pub fn request() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Forgets an earlier request: the Python API's next call starts clean.
pub fn reset() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}
