#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ndx_codec::fuzz::name_tlv(data));
