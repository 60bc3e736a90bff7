//! Work spread over a few scoped threads, results in order: what comes after a single run (its
//! flows' metrics, its result files), when no pool of worker threads is up
//! (`runner::run_all` starts one only for several runs).
//!
//! Not rayon's pool, which the runs use: a pool built for each of these steps, with rayon's
//! `par_iter` and `join` in it, left the dumbbell's output work 5.5–5.8 ms slower (21.7–23.9
//! against 15.9–18.4 ms of wall time outside the simulation, plain builds alternated over 10
//! and 12 rounds, 2026-11-28; why was not found).

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item of `items`, in the items' order, computed on up to `threads` threads (the
/// calling one among them), each taking the next item when it finishes one. A panic in `f` is
/// raised again on the calling thread.
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    // (index, result) pairs, gathered from every thread and put back in order
    let indexed = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            done.push((i, f(item)));
        }
        done
    };
    let mut all = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(indexed)).collect();
        let mut all = indexed();
        for h in helpers {
            match h.join() {
                Ok(done) => all.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    all.sort_unstable_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

/// Runs `a` and `b` at once when `parallel` (`b` on a scoped thread), else one after the other;
/// returns both results. A panic in `b` is raised again on the calling thread.
pub fn join<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        let ra = a();
        return (ra, b());
    }
    std::thread::scope(|s| {
        let hb = s.spawn(b);
        let ra = a();
        match hb.join() {
            Ok(rb) => (ra, rb),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the number of threads, the results are those of a sequential map, in order.
    #[test]
    fn map_keeps_the_order_of_a_sequential_map() {
        let items: Vec<u64> = (0..1000).collect();
        // uneven work, so that the threads finish items out of order
        let f = |&x: &u64| (0..(x % 17) * 100).fold(x, |a, b| a.wrapping_mul(31).wrapping_add(b));
        let want: Vec<u64> = items.iter().map(f).collect();
        for threads in [0, 1, 2, 3, 8, 2000] {
            assert_eq!(map_in_order(&items, threads, f), want, "{threads} threads");
        }
        assert!(map_in_order(&[] as &[u64], 4, f).is_empty());
    }

    #[test]
    fn a_panic_on_a_helper_thread_reaches_the_caller() {
        let items: Vec<usize> = (0..64).collect();
        let caught = std::panic::catch_unwind(|| {
            map_in_order(&items, 4, |&i| {
                assert!(i != 40, "item 40");
                i
            })
        });
        assert!(caught.is_err());
    }

    #[test]
    fn join_returns_both_results_either_way() {
        for parallel in [false, true] {
            assert_eq!(
                join(parallel, || 1 + 1, || "b".repeat(3)),
                (2, "bbb".to_string())
            );
        }
    }
}
