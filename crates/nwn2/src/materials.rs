//! `terrainmaterials.2da` (`nwn2 export --materials FILE`): the footstep material and the colour
//! of each terrain texture (nwn2 §A.4 texture colours, §A.6.2 triangle material bits).
//!
//! A 2DA V2.0 file is text: the `2DA V2.0` signature, an optional `DEFAULT:` line, a row of
//! column names, then one row per entry that starts with its index. Cells are separated by
//! blanks, may be quoted when they hold blanks, and `****` is an empty cell. The columns used
//! are found by name: the texture name (`Terrain`, `TerrainName`, `Texture`, `Name` or
//! `Label`), `Material`, and `R`, `G`, `B`; the spec names no other layout, so a file without
//! a name or `Material` column is an error listing the columns it has.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The triangle flag bit of a footstep material name (nwn2 §A.6.2).
pub fn material_bit(name: &str) -> Option<u16> {
    Some(match name.to_ascii_lowercase().as_str() {
        "dirt" => 0x08,
        "grass" => 0x10,
        "stone" | "rock" => 0x20,
        "wood" => 0x40,
        "carpet" => 0x80,
        "metal" => 0x100,
        "swamp" => 0x200,
        "mud" => 0x400,
        "leaves" => 0x800,
        "water" => 0x1000,
        "puddles" => 0x2000,
        _ => return None,
    })
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MaterialsError {
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: line {line}: {problem}", path.display())]
    Format { path: PathBuf, line: usize, problem: String },
}

/// What `terrainmaterials.2da` says about one texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureMaterial {
    /// Triangle flag bit of its footstep material.
    pub material: u16,
    /// R, G, B (0–255), when the file has them.
    pub rgb: Option<[u8; 3]>,
}

/// The table, by texture name (case-insensitive, as the game's resource names are).
#[derive(Clone, Debug, Default)]
pub struct TerrainMaterials {
    by_name: HashMap<String, TextureMaterial>,
}

impl TerrainMaterials {
    pub fn load(path: &Path) -> Result<Self, MaterialsError> {
        let text = std::fs::read(path).map_err(|source| MaterialsError::Io { path: path.into(), source })?;
        Self::parse(&String::from_utf8_lossy(&text), path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self, MaterialsError> {
        let err = |line: usize, problem: String| MaterialsError::Format { path: path.into(), line, problem };
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
        match lines.next() {
            Some((_, l)) if l.trim_start().starts_with("2DA") => {}
            Some((n, l)) => return Err(err(n, format!("expected the `2DA V2.0` signature, found `{}`", l.trim()))),
            None => return Err(err(1, "empty file".into())),
        }
        let mut header = None;
        for (n, l) in lines.by_ref() {
            if l.trim_start().to_ascii_uppercase().starts_with("DEFAULT:") {
                continue;
            }
            header = Some((n, cells(l)));
            break;
        }
        let Some((header_line, columns)) = header else { return Err(err(1, "no column names".into())) };
        let find = |names: &[&str]| columns.iter().position(|c| names.iter().any(|n| c.eq_ignore_ascii_case(n)));
        let name_col = find(&["Terrain", "TerrainName", "Texture", "Name", "Label"]);
        let material_col = find(&["Material"]);
        let (Some(name_col), Some(material_col)) = (name_col, material_col) else {
            return Err(err(
                header_line,
                format!("needs a texture name column (Terrain, TerrainName, Texture, Name or Label) and a Material column; it has {}", columns.join(", ")),
            ));
        };
        let rgb_cols = [find(&["R", "Red"]), find(&["G", "Green"]), find(&["B", "Blue"])];
        let mut by_name = HashMap::new();
        for (n, l) in lines {
            // Row cells are the index, then one per column.
            let row = cells(l);
            let cell = |c: usize| row.get(c + 1).map(String::as_str).filter(|v| *v != "****");
            let Some(name) = cell(name_col) else { continue };
            let Some(material) = cell(material_col) else { continue };
            let material = material_bit(material).ok_or_else(|| err(n, format!("texture `{name}`: unknown material `{material}` (expected Dirt, Grass, Stone, Wood, Carpet, Metal, Swamp, Mud, Leaves, Water or Puddles)")))?;
            let rgb = match rgb_cols {
                [Some(r), Some(g), Some(b)] => {
                    let channel = |c: usize| -> Result<Option<u8>, MaterialsError> {
                        match cell(c) {
                            None => Ok(None),
                            Some(v) => v.parse::<u8>().map(Some).map_err(|_| err(n, format!("texture `{name}`: colour `{v}` is not 0–255"))),
                        }
                    };
                    match (channel(r)?, channel(g)?, channel(b)?) {
                        (Some(r), Some(g), Some(b)) => Some([r, g, b]),
                        _ => None,
                    }
                }
                _ => None,
            };
            by_name.insert(name.to_ascii_lowercase(), TextureMaterial { material, rgb });
        }
        Ok(TerrainMaterials { by_name })
    }

    pub fn get(&self, texture: &str) -> Option<TextureMaterial> {
        self.by_name.get(&texture.to_ascii_lowercase()).copied()
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// The cells of a 2DA line: blank-separated, `"…"` quoting a cell with blanks.
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else { break };
        let mut cell = String::new();
        if first == '"' {
            chars.next();
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                cell.push(c);
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                cell.push(c);
                chars.next();
            }
        }
        out.push(cell);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "2DA V2.0\n\n     Terrain          Material  R    G    B    Comment\n0    TT_GG_Grass_19   Grass     64   202  54   ****\n1    TT_GD_Dirt_01    Dirt      124  109  27   \"dry dirt\"\n2    TT_XX_Metal      Metal     ****  1   2    ****\n3    ****             Grass     0    0    0    ****\n";

    #[test]
    fn reads_materials_and_colours_by_name() {
        let t = TerrainMaterials::parse(SAMPLE, Path::new("terrainmaterials.2da")).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t.get("tt_gg_grass_19"), Some(TextureMaterial { material: 0x10, rgb: Some([64, 202, 54]) }));
        assert_eq!(t.get("TT_GD_Dirt_01").unwrap().material, 0x08);
        // An empty colour cell: material only.
        assert_eq!(t.get("TT_XX_Metal"), Some(TextureMaterial { material: 0x100, rgb: None }));
        assert_eq!(t.get("TT_Unknown"), None);
    }

    #[test]
    fn errors_name_the_file_line_and_problem() {
        let p = Path::new("m.2da");
        let e = TerrainMaterials::parse("2DA V2.0\n\n Terrain Material\n0 TT_A Lava\n", p).unwrap_err().to_string();
        assert!(e.contains("m.2da: line 4") && e.contains("unknown material `Lava`"), "{e}");
        let e = TerrainMaterials::parse("2DA V2.0\n\n Label Colour\n0 a b\n", p).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("it has Label, Colour"), "{e}");
        let e = TerrainMaterials::parse("GFF V3.2\n", p).unwrap_err().to_string();
        assert!(e.contains("2DA V2.0"), "{e}");
        let e = TerrainMaterials::parse("2DA V2.0\n Terrain Material R G B\n0 T Dirt 300 0 0\n", p).unwrap_err().to_string();
        assert!(e.contains("colour `300`"), "{e}");
    }
}
