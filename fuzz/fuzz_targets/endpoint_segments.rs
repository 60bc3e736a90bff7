//! Arbitrary segment streams into an established `linux`-profile endpoint with every
//! mechanism on (`thinlab_tcp::fuzzing::run_script`): never a panic, invariants checked by
//! `Endpoint::check_consistency` after every step.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    thinlab_tcp::fuzzing::run_script(data);
});
