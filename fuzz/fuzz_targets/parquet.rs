//! Fuzz target: `sresim_fuzz::parquet` on arbitrary bytes (see src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = sresim_fuzz::parquet(data);
});
