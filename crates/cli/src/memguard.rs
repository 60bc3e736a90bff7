//! A watchdog for memory the estimate could not foresee (say, a send buffer that grows with
//! the data waiting in it): a thread samples this process's memory every
//! [`INTERVAL`] and ends the process with a clear message (exit code 1) before the kernel's
//! OOM killer or a failed allocation would end it silently.

use crate::resources::{human, memory_limit, usage};
use std::time::Duration;

pub const INTERVAL: Duration = Duration::from_millis(100);
/// The share of the limit at which the guard stops the process.
pub const SHARE: f64 = 0.9;

/// Starts the watchdog (no-op where memory figures are unavailable).
pub fn start() {
    if memory_limit().is_none() {
        return;
    }
    let Some((_, rss0)) = usage() else {
        return;
    };
    // The resident budget: what is available now plus what the process already holds; the
    // address-space budget: the `ulimit -v` limit, if any.
    let rss_budget = crate::resources::mem_available().map(|m| m + rss0);
    let vm_budget = crate::resources::address_space_limit();
    let spawned = std::thread::Builder::new()
        .name("memguard".into())
        .spawn(move || loop {
            std::thread::sleep(INTERVAL);
            let Some((size, rss)) = usage() else { return };
            let over = |used: u64, budget: Option<u64>| {
                budget.is_some_and(|b| used as f64 > SHARE * b as f64)
            };
            let hit = if over(rss, rss_budget) {
                Some((rss, rss_budget))
            } else if over(size, vm_budget) {
                Some((size, vm_budget))
            } else {
                None
            };
            if let Some((used, budget)) = hit {
                eprintln!(
                    "error: thinlab stopped: its memory use reached {} of the {} it may use \
                     (the resource estimate did not foresee this: a flow writing faster than \
                     its path with a large send_buffer?). Nothing was written.",
                    human(used),
                    human(budget.unwrap_or(0))
                );
                std::process::exit(1);
            }
        });
    drop(spawned);
}
