//! Bitmap families (FBIT) and colour ramps of a plan, loaded from the data root.

use std::path::Path;

use super::PlanError;
use crate::model::bitmap::Bitmap;

/// Load the TGA of a bitmap family from the data root (`terrain/x.tga` → `ROOT/terrain/x.tga`).
pub(super) fn load_family_bitmap(root: Option<&Path>, rel: &str, layer: &str, family: i32) -> Result<Bitmap, PlanError> {
    let rel_path = rel.replace('\\', "/");
    let Some(root) = root else {
        return Err(PlanError::MissingBitmap { layer: layer.into(), family, path: rel_path, reason: "no data root was given".into() });
    };
    let path = root.join(&rel_path);
    if !path.exists() {
        return Err(PlanError::MissingBitmap { layer: layer.into(), family, path: rel_path, reason: format!("{} does not exist", path.display()) });
    }
    Bitmap::load_tga(&path).map_err(|error| PlanError::Bitmap { layer: layer.into(), path, error })
}
