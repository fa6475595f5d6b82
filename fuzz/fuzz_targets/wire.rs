//! Fuzz target: an agent's request body as the MCP tools and the HTTP API decode it — any JSON
//! into each input type of the wire contract (the server's own `wire/`, compiled here as it
//! is), after the server's check for keys given twice. Never a panic: a request is an input or
//! a refusal.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, unreachable_pub, unused_imports)]
#[path = "../../crates/server/src/wire/mod.rs"]
mod wire;

fn decode<T: serde::de::DeserializeOwned>(value: &serde_json::Value) {
    let _ = serde_json::from_value::<T>(value.clone());
}

fuzz_target!(|input: &[u8]| {
    let Some((&which, body)) = input.split_first() else { return };
    // As the server reads a body: first the check for a key given twice, on the raw bytes.
    let _ = wire::first_duplicate_key(body);
    // Then as the HTTP API decodes it: JSON, an object, then the input type.
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else { return };
    if !value.is_object() {
        return;
    }
    match which % 8 {
        0 => decode::<wire::RetrieveInput>(&value),
        1 => decode::<wire::SearchInput>(&value),
        2 => decode::<wire::BrowseInput>(&value),
        3 => decode::<wire::ReadInput>(&value),
        4 => decode::<wire::SaveInput>(&value),
        5 => decode::<wire::CorrectInput>(&value),
        6 => decode::<wire::CatalogInput>(&value),
        _ => decode::<wire::SyncInput>(&value),
    }
    if let Some(text) = value.get("text").and_then(|t| t.as_str()) {
        let _ = (wire::is_some_text(text), wire::is_title(text));
    }
});
