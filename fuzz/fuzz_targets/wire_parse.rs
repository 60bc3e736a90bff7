//! Fuzz the TCP wire codec: `parse` must never panic, and anything it accepts must re-emit
//! to bytes that parse to the same segment (a fixed point of emit ∘ parse). The checksummed
//! parsers must agree with `verify_*`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use thinlab_tcp::wire;

const SRC4: [u8; 4] = [192, 0, 2, 1];
const DST4: [u8; 4] = [198, 51, 100, 2];
const SRC6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const DST6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fuzz_target!(|data: &[u8]| {
    let Ok(seg) = wire::parse(data) else {
        assert!(wire::parse_ipv4(SRC4, DST4, data).is_err());
        assert!(wire::parse_ipv6(SRC6, DST6, data).is_err());
        return;
    };
    assert_eq!(wire::options::emitted_options(&seg.options), seg.options);
    assert_eq!(
        wire::parse_ipv4(SRC4, DST4, data).is_ok(),
        wire::verify_ipv4(SRC4, DST4, data)
    );
    assert_eq!(
        wire::parse_ipv6(SRC6, DST6, data).is_ok(),
        wire::verify_ipv6(SRC6, DST6, data)
    );

    let mut out = Vec::new();
    wire::emit(&seg, &mut out);
    assert_eq!(
        out.len(),
        wire::header_len(&seg.options) + seg.payload.len()
    );
    let again = wire::parse(&out).expect("re-emitted segment parses");
    assert_eq!(again, seg);

    let mut out4 = Vec::new();
    wire::emit_ipv4(&seg, SRC4, DST4, &mut out4);
    assert!(wire::verify_ipv4(SRC4, DST4, &out4));
    assert_eq!(
        wire::parse_ipv4(SRC4, DST4, &out4).expect("checksummed segment parses"),
        seg
    );
});
