//! Loss detection and recovery (RFC 6582 NewReno, RFC 6675 SACK, RTO backoff).
