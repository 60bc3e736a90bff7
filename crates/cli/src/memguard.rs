//! A watchdog for memory the estimate could not foresee (say, a send buffer that grows with
//! the data waiting in it): it ends the process with a clear message (exit code 1) before the
//! kernel's OOM killer or a failed allocation would end it silently. Two parts:
//! - a thread samples this process's memory every [`INTERVAL`] (gradual growth);
//! - the global allocator ([`Guarded`]) checks every allocation of [`BIG`] bytes or more
//!   before making it (a buffer doubling, which can jump past the limit between samples).
//!   Smaller allocations go straight to the system allocator.

use crate::resources::{human, memory_limit, usage};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Allocations at least this large are checked against the limits first.
pub const BIG: usize = 8 << 20;

/// The limits the allocator checks (0: unknown), set by [`start`].
static VM_LIMIT: AtomicU64 = AtomicU64::new(0);
static MEM_TOTAL: AtomicU64 = AtomicU64::new(0);
static ARMED: AtomicBool = AtomicBool::new(false);

/// The system allocator, with large allocations checked against the memory limits.
pub struct Guarded;

/// Stops the process if `more` bytes would take it past a limit.
fn check(more: usize) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
    let Some((size, rss)) = usage() else { return };
    let more = more as u64;
    let vm = VM_LIMIT.load(Ordering::Relaxed);
    if vm > 0 && (size + more) as f64 > SHARE * vm as f64 {
        stop(size + more, vm);
    }
    let total = MEM_TOTAL.load(Ordering::Relaxed);
    if let Some(avail) = crate::resources::mem_available() {
        let reachable = avail + rss;
        if total > 0 && rss + more > total / 4 && (rss + more) as f64 > SHARE * reachable as f64 {
            stop(rss + more, reachable);
        }
    }
}

fn stop(used: u64, budget: u64) -> ! {
    ARMED.store(false, Ordering::Relaxed);
    eprintln!(
        "error: thinlab stopped: its memory use would reach {} of the {} it may use \
         (the resource estimate did not foresee this: a flow writing faster than its path \
         with a large send_buffer?). Results not yet written are lost.",
        human(used),
        human(budget)
    );
    std::process::exit(1);
}

// SAFETY: every call is forwarded to `System` unchanged; `check` only reads /proc (its own
// allocations are small, so they do not recurse into it) and may end the process.
unsafe impl GlobalAlloc for Guarded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= BIG {
            check(layout.size());
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= BIG {
            check(layout.size());
        }
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= BIG && new_size > layout.size() {
            check(new_size);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

pub const INTERVAL: Duration = Duration::from_millis(100);
/// The share of the limit at which the guard stops the process.
pub const SHARE: f64 = 0.8;

/// Starts the watchdog (no-op where memory figures are unavailable). It stops the process
/// when its resident memory passes [`SHARE`] of what it could reach now (its own resident
/// memory plus what the machine has available) while being at least a quarter of the
/// machine's memory (so other programs filling the machine do not stop a small run), or
/// when its address space passes [`SHARE`] of `ulimit -v`.
///
/// The limits are read by the watchdog's own thread, which then arms the allocator's check,
/// while the command goes on: this step of a run's start went from 0.17–0.20 to 0.05–0.09 ms
/// on the main thread (the thin-stream benchmark, docs/performance/thin-stream.md). Allocations
/// made before the check is armed (the thread's first fraction of a millisecond, while the command
/// line and the scenario are read) are not checked.
pub fn start() {
    let spawned = std::thread::Builder::new()
        .name("memguard".into())
        .spawn(watch);
    drop(spawned);
}

/// The watchdog's thread: reads the limits, arms the allocator's check, then samples.
fn watch() {
    if memory_limit().is_none() || usage().is_none() {
        return;
    }
    let vm_budget = crate::resources::address_space_limit();
    let total = crate::resources::mem_total();
    VM_LIMIT.store(vm_budget.unwrap_or(0), Ordering::Relaxed);
    MEM_TOTAL.store(total.unwrap_or(0), Ordering::Relaxed);
    ARMED.store(true, Ordering::Relaxed);
    loop {
        std::thread::sleep(INTERVAL);
        let Some((size, rss)) = usage() else { return };
        let reachable = crate::resources::mem_available().map(|a| a + rss);
        let big = total.is_some_and(|t| rss > t / 4);
        let over =
            |used: u64, budget: Option<u64>| budget.is_some_and(|b| used as f64 > SHARE * b as f64);
        let hit = if big && over(rss, reachable) {
            Some((rss, reachable))
        } else if over(size, vm_budget) {
            Some((size, vm_budget))
        } else {
            None
        };
        if let Some((used, budget)) = hit {
            stop(used, budget.unwrap_or(0));
        }
    }
}
