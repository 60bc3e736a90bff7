//! Proportional Rate Reduction (RFC 6937; Linux `tcp_init_cwnd_reduction`,
//! `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`), selected by `TcpConfig::cwnd_reduction`
//! (scenario `tcp.cwnd_reduction = "prr"`, the `linux` profile's default).
//!
//! During fast recovery the window is not set to ssthresh at once. On every ACK it is
//! `cwnd = pipe + sndcnt`, where `sndcnt` paces the transmissions so that, by the end of the
//! episode, what was sent (`prr_out`) is ssthresh/prior_cwnd of what was delivered
//! (`prr_delivered`):
//!
//! * pipe > ssthresh (proportional part): `sndcnt = ⌈ssthresh · prr_delivered / prior_cwnd⌉
//!   − prr_out`;
//! * pipe ≤ ssthresh (slow-start reduction bound, Linux's PRR-SSRB):
//!   `sndcnt = min(ssthresh − pipe, max(prr_delivered − prr_out, delivered) + 1)`, the `+ 1`
//!   only when the ACK advanced snd_una and marked nothing newly lost;
//! * at least one segment until the first retransmission of the episode is out.
//!
//! Invariant: between two ACKs the sender may add at most `sndcnt` segments to the pipe.
//! On a thin stream entering recovery on the SACK of the next write, the head is lost and
//! SACKed segments have left, so pipe = 0, delivered = 1 and cwnd = 1: the fast
//! retransmission takes the only slot and every later write waits for its ACK. The episode
//! ends with cwnd = ssthresh (the congestion controller's `on_exit_recovery`).

/// PRR state of one recovery episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prr {
    /// cwnd when the episode began (Linux `prior_cwnd`).
    pub prior_cwnd: u32,
    /// Segments delivered (cumulatively ACKed or SACKed) since the episode began.
    pub delivered: u32,
    /// Segments sent since the episode began.
    pub out: u32,
    /// The window PRR allows now.
    pub cwnd: u32,
}

/// What one ACK tells PRR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrrAck {
    /// Segments this ACK newly delivered (ACKed or SACKed); PRR ignores ACKs delivering none.
    pub delivered: u32,
    /// Segments this ACK (or the loss detection it ran) newly marked lost.
    pub newly_lost: u32,
    /// snd_una advanced.
    pub una_advanced: bool,
    /// Packets in flight after the ACK was processed.
    pub pipe: u32,
    pub ssthresh: u32,
}

impl Prr {
    /// An episode begins with the window it replaces (Linux keeps cwnd until the next ACK).
    pub fn start(prior_cwnd: u32) -> Prr {
        let prior_cwnd = prior_cwnd.max(1);
        Prr {
            prior_cwnd,
            delivered: 0,
            out: 0,
            cwnd: prior_cwnd,
        }
    }

    /// A segment (new or retransmitted) was sent during the episode.
    pub fn on_sent(&mut self) {
        self.out = self.out.saturating_add(1);
    }

    /// Linux `tcp_cwnd_reduction`: the window after one ACK.
    pub fn on_ack(&mut self, a: &PrrAck) -> u32 {
        if a.delivered == 0 {
            return self.cwnd;
        }
        self.delivered = self.delivered.saturating_add(a.delivered);
        let (delivered, out) = (self.delivered as u64, self.out as i64);
        let sndcnt = if a.pipe > a.ssthresh {
            let dividend = a.ssthresh as u64 * delivered + self.prior_cwnd as u64 - 1;
            (dividend / self.prior_cwnd as u64) as i64 - out
        } else {
            let mut s = (delivered as i64 - out).max(a.delivered as i64);
            if a.una_advanced && a.newly_lost == 0 {
                s += 1;
            }
            s.min(a.ssthresh as i64 - a.pipe as i64)
        };
        let sndcnt = sndcnt.max(if self.out == 0 { 1 } else { 0 });
        self.cwnd = (a.pipe as i64 + sndcnt).clamp(1, u32::MAX as i64) as u32;
        self.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(delivered: u32, pipe: u32, ssthresh: u32) -> PrrAck {
        PrrAck {
            delivered,
            newly_lost: 0,
            una_advanced: false,
            pipe,
            ssthresh,
        }
    }

    #[test]
    fn thin_stream_entering_recovery_gets_one_segment() {
        // cwnd 10, ssthresh 7; the SACK of the next write: pipe 0, one delivered
        let mut p = Prr::start(10);
        assert_eq!(p.on_ack(&ack(1, 0, 7)), 1);
        p.on_sent(); // the fast retransmission
                     // nothing more is delivered until its ACK: the window stays at 1
        assert_eq!(p.on_ack(&ack(0, 1, 7)), 1);
    }

    #[test]
    fn proportional_part_sends_ssthresh_over_prior_cwnd_of_what_is_delivered() {
        // RFC 6937 example: cwnd 20, ssthresh 10, one loss; each ACK delivers one segment
        let mut p = Prr::start(20);
        let mut pipe = 19;
        let mut sent = 0;
        for _ in 0..18 {
            let cwnd = p.on_ack(&ack(1, pipe, 10));
            while pipe < cwnd {
                p.on_sent();
                pipe += 1;
                sent += 1;
            }
            pipe -= 1; // the next ACK delivers one
        }
        // half of the 18 delivered, rounded up, went out again
        assert_eq!(sent, 9);
    }

    #[test]
    fn slow_start_reduction_bound_when_pipe_falls_below_ssthresh() {
        let mut p = Prr::start(10);
        p.on_sent();
        // pipe 2 < ssthresh 10: max(delivered 4 − out 1, 4) + 1 for advancing snd_una
        let a = PrrAck {
            delivered: 4,
            newly_lost: 0,
            una_advanced: true,
            pipe: 2,
            ssthresh: 10,
        };
        assert_eq!(p.on_ack(&a), 2 + 5);
        // no + 1 when the ACK marked a loss
        let mut l = Prr::start(10);
        l.on_sent();
        assert_eq!(l.on_ack(&PrrAck { newly_lost: 1, ..a }), 2 + 4);
        // but never more than ssthresh − pipe
        let mut q = Prr::start(10);
        q.on_sent();
        assert_eq!(
            q.on_ack(&PrrAck {
                pipe: 6,
                ssthresh: 7,
                ..a
            }),
            7
        );
    }

    #[test]
    fn an_ack_that_delivers_nothing_keeps_the_window() {
        let mut p = Prr::start(10);
        assert_eq!(p.on_ack(&ack(0, 0, 7)), 10);
    }
}
