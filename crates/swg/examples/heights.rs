//! The ground height of a SWG terrain at a point, as a server emulator would ask for it.
//!
//! ```text
//! cargo run --release -p trnbake-swg --example heights -- FILE.trn X,Z [--data-root DIR]
//! ```
//! X east and Z north in world metres, the origin at the map centre. Bitmap families
//! (`terrain/*.tga`) resolve under DIR; by default under the folder above the `.trn`'s own
//! `terrain/` folder, the client's data layout.

use std::path::PathBuf;
use std::process::ExitCode;

use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::model::{default_data_root, Terrain};
use trnbake_swg::plan::HeightOptions;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = e.source();
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            ExitCode::from(1)
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    const USAGE: &str = "usage: heights FILE.trn X,Z [--data-root DIR]";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut file, mut point, mut data_root) = (None, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--data-root" => data_root = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            _ if file.is_none() => file = Some(PathBuf::from(a)),
            _ if point.is_none() => point = Some(a.clone()),
            _ => return Err(USAGE.into()),
        }
    }
    let (file, point) = (file.ok_or(USAGE)?, point.ok_or(USAGE)?);
    let (x, z) = point.split_once(',').ok_or("the point is X,Z (world metres, x east, z north)")?;
    let (x, z): (f32, f32) = (x.trim().parse()?, z.trim().parse()?);

    let terrain = Terrain::load(&file)?;
    let opts = HeightOptions { data_root: data_root.or_else(|| default_data_root(&file)), ..Default::default() };
    let heights = HeightEvaluator::new(&terrain, &opts)?;
    println!("{:.4}", heights.height_at(x, z));
    Ok(())
}
