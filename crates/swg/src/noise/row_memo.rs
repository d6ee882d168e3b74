//! A row's fractal values, kept per family while the layer-major walks
//! (`crate::eval::walk_strip`) cross the row's layers.
//!
//! Why: one row's walk reads the same MFRC family many times — FFRA filters, AHFR height
//! affectors and ACRF colour ramps of different layers often name the same family — and a
//! lane's value depends on its x and z alone (swg-trn §6.4; [`Fractal::value_row`] equals
//! [`Fractal::value`] lane by lane, which the noise tests assert). So each lane of a family is
//! computed once a row, and every later read returns the same bits the walk computed before.

use super::Fractal;
use crate::lanes::Lanes;
use std::ops::Range;

/// Fractal values of one row of lanes, per family, over the lanes computed so far.
#[derive(Default)]
pub(crate) struct RowFractals {
    /// Family-major: family f's lane l at `values[f * lanes + l]`.
    values: Vec<f32>,
    /// Per family, the lanes `lo..hi` holding this row's values (empty: none yet).
    done: Vec<(u32, u32)>,
    lanes: usize,
    /// Lane scratch for values derived from a family's (FFRA's scaled values, FSLP's normals).
    pub scratch: Vec<f32>,
}

impl RowFractals {
    /// Forget the previous row: `families` families over `lanes` lanes at a new x or z.
    pub(crate) fn start_row(&mut self, families: usize, lanes: usize) {
        self.lanes = lanes;
        self.values.resize(families * lanes, 0.0);
        self.done.clear();
        self.done.resize(families, (0, 0));
        self.scratch.resize(lanes, 0.0);
    }

    /// Family `family`'s values at the lanes `range` of the row `xs` at `z`, indexed by lane
    /// (the slice covers every lane of the row; only `range`, and lanes computed earlier this
    /// row, hold values). Lanes not computed yet this row are computed now.
    ///
    /// # Safety
    /// The CPU must have `L`'s instructions.
    #[inline(always)]
    pub(crate) unsafe fn values<L: Lanes>(&mut self, fractal: &Fractal, family: usize, xs: &[f32], z: f32, range: Range<usize>) -> &[f32] {
        debug_assert_eq!(xs.len(), self.lanes);
        let n = self.lanes;
        let row = &mut self.values[family * n..(family + 1) * n];
        let (lo, hi) = (self.done[family].0 as usize, self.done[family].1 as usize);
        if lo >= hi {
            fractal.value_row_with::<L>(&xs[range.clone()], z, &mut row[range.clone()]);
            self.done[family] = (range.start as u32, range.end as u32);
        } else if range.start < lo || hi < range.end {
            // Grow the computed lanes to cover `range` and any gap between them.
            let (new_lo, new_hi) = (lo.min(range.start), hi.max(range.end));
            if new_lo < lo {
                fractal.value_row_with::<L>(&xs[new_lo..lo], z, &mut row[new_lo..lo]);
            }
            if hi < new_hi {
                fractal.value_row_with::<L>(&xs[hi..new_hi], z, &mut row[hi..new_hi]);
            }
            self.done[family] = (new_lo as u32, new_hi as u32);
        }
        row
    }

    /// [`RowFractals::values`] times `factor` at the lanes `range`, in [`RowFractals::scratch`]
    /// (`value * factor` per lane, as FFRA's `fr.value(x, z) * f.value`).
    ///
    /// # Safety
    /// The CPU must have `L`'s instructions.
    #[inline(always)]
    pub(crate) unsafe fn scaled<L: Lanes>(&mut self, fractal: &Fractal, family: usize, xs: &[f32], z: f32, range: Range<usize>, factor: f32) -> &mut [f32] {
        self.values::<L>(fractal, family, xs, z, range.clone());
        let n = self.lanes;
        let row = &self.values[family * n + range.start..family * n + range.end];
        let out = &mut self.scratch[range];
        let w = L::WIDTH;
        let groups = out.len() / w;
        let f = L::splat(factor);
        for k in 0..groups {
            L::store(out.as_mut_ptr().add(k * w), L::mul(L::load(row.as_ptr().add(k * w)), f));
        }
        for (o, &v) in out[groups * w..].iter_mut().zip(&row[groups * w..]) {
            *o = v * factor;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::tests::variant;

    /// Reads in any order and over any ranges return, lane by lane, the bits of a fresh
    /// `value_row` over the whole row — including lanes grown into on a later read.
    #[test]
    fn memoised_reads_are_the_row_values() {
        let fractals: Vec<Fractal> =
            [(0, false, false), (3, true, false), (5, false, true)].map(|(rule, bias, gain)| Fractal::new(variant(rule, bias, gain, 3))).into();
        let xs: Vec<f32> = (0..45).map(|i| -700.0 + 2.5 * i as f32).collect();
        let z = 311.0;
        let reads = [(0, 10..20), (0, 12..18), (1, 0..45), (0, 30..40), (0, 2..5), (2, 44..45), (0, 0..45), (2, 0..1)];
        let mut memo = RowFractals::default();
        memo.start_row(fractals.len(), xs.len());
        for (family, range) in reads {
            let mut fresh = vec![0.0; xs.len()];
            fractals[family].value_row(&xs, z, &mut fresh);
            let got = crate::with_lanes!(
                |L; memo: &mut RowFractals, f: &Fractal, family: usize, xs: &[f32], z: f32, range: Range<usize>| -> Vec<f32> {
                    memo.values::<L>(f, family, xs, z, range.clone())[range].to_vec()
                },
                &mut memo, &fractals[family], family, &xs, z, range.clone()
            );
            let want: Vec<u32> = fresh[range.clone()].iter().map(|v| v.to_bits()).collect();
            assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want, "family {family}, lanes {range:?}");
        }
        // A new row forgets the old one's values.
        memo.start_row(fractals.len(), xs.len());
        let mut fresh = vec![0.0; xs.len()];
        fractals[0].value_row(&xs, z + 2.0, &mut fresh);
        let got = crate::with_lanes!(
            |L; memo: &mut RowFractals, f: &Fractal, xs: &[f32], z: f32| -> Vec<f32> { memo.values::<L>(f, 0, xs, z, 5..9)[5..9].to_vec() },
            &mut memo, &fractals[0], &xs, z + 2.0
        );
        assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), fresh[5..9].iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }
}
