//! Software prefetch: a hint that brings memory into the caches ahead of use. The simulator
//! uses it for runs whose flows' state is larger than the caches (thousands of flows): while
//! one event runs, the next events' state is fetched, so their misses overlap with work
//! instead of stalling it one by one. A prefetch changes no result, only timing.

/// Asks the CPU to bring every cache line of `r` into the caches.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_bytes(r as *const T, std::mem::size_of::<T>());
}

/// Prefetches the first element of a deque's storage or, when the deque is empty, the start
/// of its storage, where its next push writes if it was emptied by [`pop_front_rewinding`]
/// (a thin stream's queues are empty between writes, so the next event's first touch of them
/// is that push).
#[inline(always)]
pub fn prefetch_front<T>(q: &std::collections::VecDeque<T>) {
    if q.capacity() > 0 {
        prefetch_bytes(q.as_slices().0.as_ptr(), std::mem::size_of::<T>().max(1));
    }
}

/// `q.pop_front()`, and when that empties `q`, its ring restarts at the first slot of its
/// storage (the one [`prefetch_front`] fetches for an empty deque). Changes no contents.
#[inline]
pub fn pop_front_rewinding<T>(q: &mut std::collections::VecDeque<T>) -> Option<T> {
    let x = q.pop_front();
    if q.is_empty() {
        q.clear();
    }
    x
}

/// Asks the CPU to bring every cache line the `len` bytes from `p` lie on into the caches (a
/// prefetch never faults, whatever the address).
#[inline(always)]
pub fn prefetch_bytes<T>(p: *const T, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let (into_line, lines) = lines_covering(p as usize, len);
        let first = p.cast::<i8>().wrapping_sub(into_line);
        for line in 0..lines {
            // SAFETY: SSE is part of x86_64's baseline, and a prefetch is a hint that never
            // faults nor reads or writes memory as far as the program can tell.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(line * 64)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// For `len` bytes at address `addr`: how far into its cache line `addr` lies, and how many
/// lines the bytes lie on (from the line of the first byte to the line of the last).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn lines_covering(addr: usize, len: usize) -> (usize, usize) {
    let into_line = addr % 64;
    let lines = if len == 0 {
        0
    } else {
        (into_line + len).div_ceil(64)
    };
    (into_line, lines)
}

#[cfg(test)]
mod tests {
    use super::lines_covering;

    #[test]
    fn every_line_the_bytes_lie_on() {
        assert_eq!(lines_covering(128, 0), (0, 0));
        assert_eq!(lines_covering(128, 64), (0, 1));
        assert_eq!(lines_covering(128 + 16, 64), (16, 2));
        assert_eq!(lines_covering(128 + 63, 1), (63, 1));
        assert_eq!(lines_covering(128 + 63, 2), (63, 2));
        // an endpoint of 1 864 bytes 16 bytes into a line lies on 30 lines, not 29
        assert_eq!(lines_covering(64 + 16, 1864), (16, 30));
    }
}
