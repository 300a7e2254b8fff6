//! pipeline.toml: any text must load or give a diagnostic, never panic; with a profile too.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let file = std::path::Path::new("fuzz/pipeline.toml");
    let _ = okb::pipeline::parse(text.to_string(), file, None);
    let _ = okb::pipeline::parse(text.to_string(), file, Some("quick"));
});
