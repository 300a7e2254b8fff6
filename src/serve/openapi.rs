//! The OpenAPI 3.1 document served at `/openapi.json`: `schemas/openapi.json`, with the
//! OpeningIQ JSON Schema (`schemas/openingiq.schema.json`, also the export's contract)
//! spliced in as `OpeningIqFile`, so the API and the export cannot document different
//! shapes. [`document_for`] adds what only the loaded build knows: real ids and codes as
//! examples, and the structure names as an enum, so a client (or schemathesis) can reach
//! every operation with data that exists.

use serde_json::{Value, json};

/// Values of the loaded build that the document names as examples.
#[derive(Clone, Debug, Default)]
pub struct Examples {
    /// Node ids, the start position's first.
    pub node_ids: Vec<String>,
    /// Named openings' file stems (`B90-sicilian-defense-najdorf-variation`).
    pub stems: Vec<String>,
    /// ECO codes with a root in the build.
    pub eco_codes: Vec<String>,
    /// Every pawn structure the build describes.
    pub structures: Vec<String>,
    /// Whether the store has the explorer index (else the explorer filters and
    /// `GET /masters/pgn/{id}` are not offered).
    pub explorer: bool,
    /// Ids of referenced games (`GET /masters/pgn/{id}`).
    pub game_ids: Vec<String>,
    /// A listed player of the player collections (`GET /player`).
    pub players: Vec<String>,
    /// The repertoires built beside the store (`GET /repertoire/{name}`).
    pub repertoires: Vec<String>,
    /// Positions with an evaluation (`GET /api/cloud-eval`): each one's line (numbered
    /// SAN, empty for the start position) and FEN.
    pub evaluated: Vec<(String, String)>,
}

/// The explorer endpoints' filter parameters, which need the explorer index.
const EXPLORER_FILTERS: [&str; 5] = ["since", "until", "speeds", "ratings", "history"];

/// The parameter `name` of `GET path`.
fn parameter_of<'a>(doc: &'a mut Value, path: &str, name: &str) -> Option<&'a mut Value> {
    let pointer = format!("/paths/{}/get/parameters", path.replace('~', "~0").replace('/', "~1"));
    doc.pointer_mut(&pointer)?.as_array_mut()?.iter_mut().find(|p| p["name"] == name)
}

/// `GET /api/cloud-eval` with the build's evaluated positions as the `fen` parameter's
/// examples (OpenAPI Example objects, which generic clients and test generators send),
/// so that a client knowing only the document can ask for an evaluation that exists;
/// without any, the operation would only ever answer 404 and is left out.
fn cloud_eval_examples(doc: &mut Value, evaluated: &[(String, String)]) {
    if evaluated.is_empty() {
        if let Some(paths) = doc["paths"].as_object_mut() {
            paths.remove("/api/cloud-eval");
        }
        return;
    }
    let Some(fen) = parameter_of(doc, "/api/cloud-eval", "fen") else { return };
    let named: serde_json::Map<String, Value> = evaluated
        .iter()
        .enumerate()
        .map(|(i, (line, fen))| {
            let summary = if line.is_empty() {
                "The start position".to_string()
            } else {
                format!("After {line}")
            };
            (format!("evaluated{}", i + 1), json!({ "summary": summary, "value": fen }))
        })
        .collect();
    fen["examples"] = Value::Object(named);
}

/// The schema of the first parameter of `GET path`.
fn schema_of<'a>(doc: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    doc.pointer_mut(&format!(
        "/paths/{}/get/parameters/0/schema",
        path.replace('~', "~0").replace('/', "~1")
    ))
}

/// The document with `examples` from the loaded build.
pub fn document_for(examples: &Examples) -> Value {
    let mut doc = document();
    let ids: Vec<&String> = examples.node_ids.iter().chain(&examples.stems).collect();
    if let Some(schema) = schema_of(&mut doc, "/opening/{id}/tree") {
        schema["examples"] = json!(ids);
    }
    if let Some(schema) = schema_of(&mut doc, "/opening/eco/{code}") {
        schema["examples"] = json!(examples.eco_codes);
    }
    if let Some(schema) = schema_of(&mut doc, "/structure/{name}/openings")
        && !examples.structures.is_empty()
    {
        schema["enum"] = json!(examples.structures);
    }
    if !examples.explorer {
        // Without the index no game has an id: the operation would only ever answer 404.
        if let Some(paths) = doc["paths"].as_object_mut() {
            paths.remove("/masters/pgn/{id}");
        }
        for path in ["/masters", "/lichess"] {
            let pointer = format!("/paths/{}/get/parameters", path.replace('/', "~1"));
            if let Some(Value::Array(parameters)) = doc.pointer_mut(&pointer) {
                parameters.retain(|p| {
                    !EXPLORER_FILTERS.contains(&p["name"].as_str().unwrap_or_default())
                });
            }
        }
    }
    if let Some(schema) = schema_of(&mut doc, "/masters/pgn/{id}")
        && !examples.game_ids.is_empty()
    {
        schema["examples"] = json!(examples.game_ids);
    }
    if let Some(schema) = schema_of(&mut doc, "/player")
        && !examples.players.is_empty()
    {
        schema["examples"] = json!(examples.players);
    }
    cloud_eval_examples(&mut doc, &examples.evaluated);
    if examples.repertoires.is_empty() {
        // No repertoire was built beside the store: the operation would only answer 404.
        if let Some(paths) = doc["paths"].as_object_mut() {
            paths.remove("/repertoire/{name}");
        }
    } else if let Some(schema) = schema_of(&mut doc, "/repertoire/{name}") {
        schema["examples"] = json!(examples.repertoires);
    }
    doc
}

/// The document's patterns for the request strings a client writes by hand, compiled
/// once: the server refuses (400) exactly what these refuse, so the document and the
/// server cannot disagree on what is well formed.
pub struct Patterns {
    /// `components/schemas/Fen`.
    pub fen: regex_lite::Regex,
    /// `components/schemas/SanLine`.
    pub san_line: regex_lite::Regex,
    /// `components/schemas/UciLine`.
    pub uci_line: regex_lite::Regex,
}

/// [`Patterns`], from [`document`].
pub static PATTERNS: std::sync::LazyLock<Patterns> = std::sync::LazyLock::new(|| {
    let doc = document();
    let compile = |name: &str| {
        let pattern = doc["components"]["schemas"][name]["pattern"]
            .as_str()
            .unwrap_or_else(|| panic!("schemas/openapi.json: {name} has a pattern"));
        regex_lite::Regex::new(pattern)
            .unwrap_or_else(|e| panic!("schemas/openapi.json: {name}'s pattern: {e}"))
    };
    Patterns { fen: compile("Fen"), san_line: compile("SanLine"), uci_line: compile("UciLine") }
});

/// The OpenAPI document.
pub fn document() -> Value {
    let mut doc: Value = serde_json::from_str(include_str!("../../schemas/openapi.json"))
        .expect("schemas/openapi.json is JSON");
    // The schema's local references point into its own `$defs`; in the OpenAPI document
    // they live beside it under components/schemas.
    let relocated =
        crate::export::openingiq::SCHEMA.replace("\"#/$defs/", "\"#/components/schemas/OpeningIq_");
    let mut schema: Value =
        serde_json::from_str(&relocated).expect("schemas/openingiq.schema.json is JSON");
    let object = schema.as_object_mut().expect("the schema is an object");
    let defs = object.remove("$defs").unwrap_or_default();
    object.remove("$schema");
    object.remove("$id");
    let schemas =
        doc["components"]["schemas"].as_object_mut().expect("components/schemas is an object");
    for (name, def) in defs.as_object().into_iter().flatten() {
        schemas.insert(format!("OpeningIq_{name}"), def.clone());
    }
    schemas.insert("OpeningIqFile".into(), schema);
    doc
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_reference_resolves() {
        let doc = super::document();
        let text = doc.to_string();
        for part in text.split("\"$ref\":\"").skip(1) {
            let target = &part[..part.find('"').unwrap()];
            let pointer = target.strip_prefix('#').expect("local reference");
            assert!(doc.pointer(pointer).is_some(), "dangling $ref {target}");
        }
    }
}
