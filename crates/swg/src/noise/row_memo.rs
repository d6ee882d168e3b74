//! A row's fractal values, kept per family while the layer-major walks
//! (`crate::eval::walk_strip`) cross the row's layers.
//!
//! Why: one row's walk reads the same MFRC family many times — FFRA filters, AHFR height
//! affectors and ACRF colour ramps of different layers often name the same family — and a
//! lane's value depends on its x and z alone (swg-trn §6.4; [`Fractal::value_row`] equals
//! [`Fractal::value`] lane by lane, which the noise tests assert). So each lane of a family is
//! computed once a row, and every later read returns the same bits the walk computed before.
//! The surface walk of a row also reads what the row's slope-trace walk computed
//! ([`RowFractals::continue_row`]): both walk the same plan's layers at the same posts.

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
    /// The reader's lane 0 among the row's lanes, and its lane count
    /// ([`RowFractals::continue_row`]; 0 and `lanes` after [`RowFractals::start_row`]).
    offset: usize,
    visible: usize,
    /// A [`RowFractals::continue_row`] the next [`RowFractals::begin_row`] keeps.
    continuing: bool,
    /// Lane scratch for values derived from a family's (FFRA's scaled values, FSLP's normals).
    pub scratch: Vec<f32>,
}

impl RowFractals {
    /// Forget the previous row: `families` families over `lanes` lanes at a new x or z.
    pub(crate) fn start_row(&mut self, families: usize, lanes: usize) {
        self.lanes = lanes;
        (self.offset, self.visible, self.continuing) = (0, lanes, false);
        self.values.resize(families * lanes, 0.0);
        self.done.clear();
        self.done.resize(families, (0, 0));
        self.scratch.resize(lanes, 0.0);
    }

    /// Go on reading the row of the last [`RowFractals::start_row`] through lanes
    /// `offset..offset + lanes` of it, keeping the values computed so far: the reader's lane
    /// l is the row's lane `offset + l`, and its `xs` must be the row's `xs[offset..]` (the
    /// surface walk over a block's columns after the trace walk over the block and its ring).
    pub(crate) fn continue_row(&mut self, offset: usize, lanes: usize) {
        assert!(offset + lanes <= self.lanes, "lanes {offset}..{} of a row of {}", offset + lanes, self.lanes);
        (self.offset, self.visible) = (offset, lanes);
        self.continuing = true;
    }

    /// A walk's start over a row of `lanes` lanes: [`RowFractals::start_row`], unless the
    /// row was continued ([`RowFractals::continue_row`]) for this walk.
    pub(crate) fn begin_row(&mut self, families: usize, lanes: usize) {
        if std::mem::take(&mut self.continuing) {
            assert_eq!((self.visible, self.done.len()), (lanes, families), "a continued row read with other lanes or families");
        } else {
            self.start_row(families, lanes);
        }
    }

    /// Family `family`'s values at the lanes `range` of the row `xs` at `z`, indexed by lane
    /// (the slice covers every lane of the row; only `range`, and lanes computed earlier this
    /// row, hold values). Lanes not computed yet this row are computed now.
    ///
    /// # Safety
    /// The CPU must have `L`'s instructions.
    #[inline(always)]
    pub(crate) unsafe fn values<L: Lanes>(&mut self, fractal: &Fractal, family: usize, xs: &[f32], z: f32, range: Range<usize>) -> &[f32] {
        debug_assert_eq!(xs.len(), self.visible);
        let n = self.lanes;
        let row = &mut self.values[family * n + self.offset..family * n + self.offset + self.visible];
        // The computed lanes, as the reader's (lanes computed before the reader's first are
        // left as they are: the reader's range never starts before its lane 0).
        let done = self.done[family];
        let (lo, hi) = if done.0 >= done.1 {
            (0, 0)
        } else {
            ((done.0 as usize).max(self.offset) - self.offset, (done.1 as usize).saturating_sub(self.offset).min(self.visible))
        };
        if lo >= hi {
            fractal.value_row_with::<L>(&xs[range.clone()], z, &mut row[range.clone()]);
            self.done[family] = ((self.offset + range.start) as u32, (self.offset + range.end) as u32);
        } else if range.start < lo || hi < range.end {
            // Grow the computed lanes to cover `range` and any gap between them.
            let (new_lo, new_hi) = (lo.min(range.start), hi.max(range.end));
            if new_lo < lo {
                fractal.value_row_with::<L>(&xs[new_lo..lo], z, &mut row[new_lo..lo]);
            }
            if hi < new_hi {
                fractal.value_row_with::<L>(&xs[hi..new_hi], z, &mut row[hi..new_hi]);
            }
            self.done[family] = ((self.offset + new_lo) as u32, (self.offset + new_hi) as u32);
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
        let at = family * self.lanes + self.offset;
        let row = &self.values[at + range.start..at + range.end];
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
        // A walk over the row's lanes 1..44 continuing it: its lane l is the row's l + 1,
        // values computed before are kept and new ones land at the row's lanes.
        memo.start_row(fractals.len(), xs.len());
        for (family, range) in [(0, 0..45), (1, 10..20)] {
            crate::with_lanes!(
                |L; memo: &mut RowFractals, f: &Fractal, family: usize, xs: &[f32], z: f32, range: Range<usize>| -> () {
                    memo.values::<L>(f, family, xs, z, range);
                },
                &mut memo, &fractals[family], family, &xs, z, range
            );
        }
        memo.continue_row(1, xs.len() - 2);
        memo.begin_row(fractals.len(), xs.len() - 2);
        for (family, range) in [(0, 0..43), (1, 0..43), (2, 5..9), (2, 0..10), (2, 40..43)] {
            let mut fresh = vec![0.0; xs.len()];
            fractals[family].value_row(&xs, z, &mut fresh);
            let inner = &xs[1..xs.len() - 1];
            let got = crate::with_lanes!(
                |L; memo: &mut RowFractals, f: &Fractal, family: usize, xs: &[f32], z: f32, range: Range<usize>| -> Vec<f32> {
                    memo.values::<L>(f, family, xs, z, range.clone())[range].to_vec()
                },
                &mut memo, &fractals[family], family, inner, z, range.clone()
            );
            let want: Vec<u32> = fresh[range.start + 1..range.end + 1].iter().map(|v| v.to_bits()).collect();
            assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want, "continued: family {family}, lanes {range:?}");
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
