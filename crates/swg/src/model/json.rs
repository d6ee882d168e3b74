//! The JSON form of a terrain (`decompile` / `compile`) and the built-in demo terrain.
//!
//! Reading JSON is a library concern, not the CLI's: golden checks load their fixtures through
//! it too. Every problem is reported with its JSON path (serde_path_to_error for the shape,
//! [`Terrain::validate`] for the meaning), like gltf's validation pass.

use super::Terrain;

/// The built-in demo terrain, authored as JSON (see `golden/demo.json`).
pub const DEMO_TERRAIN_JSON: &str = include_str!("../../../../golden/demo.json");

/// The built-in demo terrain (a 4 km map that exercises every rule kind).
pub fn demo_terrain() -> Terrain {
    serde_json::from_str(DEMO_TERRAIN_JSON).expect("the built-in demo terrain is valid JSON")
}

/// A JSON terrain that cannot be used; `name` is the file (or what stands for it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JsonTerrainError {
    #[error("{name}: at `{path}`: {message}")]
    Shape { name: String, path: String, message: String },
    #[error("{name}: {} problem(s):\n{}", problems.len(), problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    Invalid { name: String, problems: Vec<String> },
}

/// Parse and validate a JSON terrain, reporting every problem with its JSON path.
pub fn terrain_from_json(text: &str, name: &str) -> Result<Terrain, JsonTerrainError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let t: Terrain = serde_path_to_error::deserialize(de).map_err(|e| JsonTerrainError::Shape {
        name: name.into(),
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })?;
    let problems = t.validate();
    if !problems.is_empty() {
        return Err(JsonTerrainError::Invalid { name: name.into(), problems: problems.iter().map(|p| p.to_string()).collect() });
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_round_trips_and_bad_json_names_the_path() {
        let demo = demo_terrain();
        let text = serde_json::to_string(&demo).unwrap();
        assert_eq!(terrain_from_json(&text, "demo").unwrap(), demo);
        let err = terrain_from_json(r#"{"version": "x"}"#, "bad.json").unwrap_err().to_string();
        assert!(err.starts_with("bad.json: at `version`"), "{err}");
    }
}
