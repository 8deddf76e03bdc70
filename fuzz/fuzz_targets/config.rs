//! Fuzz target: `sresim_fuzz::config` on arbitrary bytes (see src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = sresim_fuzz::config(data);
});
