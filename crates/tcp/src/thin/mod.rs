//! Thin-stream mechanisms (docs/spec/mechanisms.md, thin-stream detection and linear timeouts):
//! [`detect`] (is the stream thin?) and
//! [`linear_timeouts`] (no exponential backoff while thin), [`rdb`] (Redundant Data Bundling)
//! and [`rdb_adaptive`] (bundling only while it pays). Thin dupACK and Early Retransmit live with
//! loss recovery ([`crate::recovery::thin_dupack`], [`crate::recovery::early_retransmit`],
//! [`crate::recovery::er_threshold`]).
//!
//! Everything here is a pure decision function; the endpoint orchestrates
//! (`recovery/manager/`).

pub mod detect;
pub mod linear_timeouts;
pub mod rdb;
pub mod rdb_adaptive;
