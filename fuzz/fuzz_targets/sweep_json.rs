//! Fuzz target: `sresim_fuzz::sweep_json` on arbitrary bytes (see src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = sresim_fuzz::sweep_json(data);
});
