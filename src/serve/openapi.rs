//! The OpenAPI 3.1 document served at `/openapi.json`: `schemas/openapi.json`, with the
//! OpeningIQ JSON Schema (`schemas/openingiq.schema.json`, also the export's contract)
//! spliced in as `OpeningIqFile`, so the API and the export cannot document different
//! shapes.

use serde_json::Value;

/// The OpenAPI document.
pub fn document() -> Value {
    let mut doc: Value = serde_json::from_str(include_str!("../../schemas/openapi.json")).expect("schemas/openapi.json is JSON");
    // The schema's local references point into its own `$defs`; in the OpenAPI document
    // they live beside it under components/schemas.
    let relocated = crate::export::openingiq::SCHEMA.replace("\"#/$defs/", "\"#/components/schemas/OpeningIq_");
    let mut schema: Value = serde_json::from_str(&relocated).expect("schemas/openingiq.schema.json is JSON");
    let object = schema.as_object_mut().expect("the schema is an object");
    let defs = object.remove("$defs").unwrap_or_default();
    object.remove("$schema");
    object.remove("$id");
    let schemas = doc["components"]["schemas"].as_object_mut().expect("components/schemas is an object");
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
