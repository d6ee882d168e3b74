//! A traced walk of the later surface pass (swg-trn §5.2 step 4, §5.3): the same
//! [`walk_point`] as [`SurfaceEvaluator::at`], with the tracing hooks of
//! [`crate::eval::PassState`] recording which layers were reached, what their boundaries and
//! filters gave, and which affectors acted. Used by `trnbake fidelity --explain` to trace a
//! flora miss to a rule.

use super::{Ground, LaterPass, SurfaceEvaluator, SurfaceResult, SurfaceWalk, TreeWalk};
use crate::eval::{walk_point, PassState};
use crate::plan::{AffectorRecord, BakePlan, FilterRecord};

/// What the walk saw at one layer of the later plan.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerVisit {
    /// Boundary amount after inversion (0: the walk stopped at the boundaries).
    pub boundary: f32,
    /// (filter index into `later_plan.filters`, weight after the feather function), in
    /// evaluation order; the walk stops at the first weight 0.
    pub filters: Vec<(usize, f32)>,
    /// The amount after the filters and their inversion; `None` when the boundaries stopped
    /// the walk first.
    pub amount: Option<f32>,
    /// The affector amount T (amount × the ancestors' amounts).
    pub t: f32,
}

/// The later pass at one post, traced.
#[derive(Clone, Debug, Default)]
pub struct PostTrace {
    pub result: SurfaceResult,
    /// Per layer of `later_plan` (indexed like `later_plan.layers`): `None` where the walk
    /// did not reach it (an ancestor stopped).
    pub visits: Vec<Option<LayerVisit>>,
    /// (affector index into `later_plan.affectors`, T), in application order.
    pub fired: Vec<(usize, f32)>,
}

struct Traced<S> {
    inner: S,
    trace: PostTrace,
    current: usize,
}

impl<S: PassState> PassState for Traced<S> {
    fn filter_value(&self, plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32 {
        self.inner.filter_value(plan, f, extent, x, z)
    }
    fn apply(&mut self, plan: &BakePlan, a: &AffectorRecord, t: f32, x: f32, z: f32) {
        self.inner.apply(plan, a, t, x, z);
    }
    fn trace_layer(&mut self, layer: usize, boundary: f32) {
        self.inner.trace_layer(layer, boundary);
        self.current = layer;
        if let Some(v) = self.trace.visits.get_mut(layer) {
            *v = Some(LayerVisit { boundary, ..Default::default() });
        }
    }
    fn trace_filter(&mut self, filter: usize, weight: f32) {
        if let Some(Some(v)) = self.trace.visits.get_mut(self.current) {
            v.filters.push((filter, weight));
        }
    }
    fn trace_amount(&mut self, layer: usize, amount: f32, t: f32) {
        if let Some(Some(v)) = self.trace.visits.get_mut(layer) {
            v.amount = Some(amount);
            v.t = if amount > 0.0 { t } else { 0.0 };
        }
    }
    fn trace_affector(&mut self, affector: usize, t: f32) {
        self.trace.fired.push((affector, t));
    }
}

impl SurfaceEvaluator {
    /// The plan whose walk [`SurfaceEvaluator::trace_at`] traces: the later pass's, or with a
    /// tree reading ([`SurfaceWalk`]) the walk of every affector.
    pub fn traced_plan(&self) -> &BakePlan {
        if self.opts.walk == SurfaceWalk::Separate {
            &self.later_plan
        } else {
            &self.all_plan
        }
    }

    /// Both surface passes at one post (as [`SurfaceEvaluator::at`]), with the later pass
    /// (or the tree walk) traced over the whole-map program.
    pub fn trace_at(&self, x: f32, z: f32, ground: Ground) -> PostTrace {
        let visits = vec![None; self.traced_plan().layers.len()];
        if self.opts.walk != SurfaceWalk::Separate {
            let final_shader = if self.opts.walk.tree_shader() { 0 } else { self.shader_pass_at_with(&self.everywhere, x, z, ground).family };
            let later = LaterPass { ground, opts: &self.opts, result: SurfaceResult::default() };
            let inner = TreeWalk { h: 0.0, final_shader, later, layer: 0, slope: self.slope_neighbourhood(&self.everywhere, x, z, None) };
            let mut traced = Traced { inner, trace: PostTrace { visits, ..Default::default() }, current: 0 };
            walk_point(&self.all_plan, &self.everywhere.all, x, z, &mut traced);
            traced.trace.result = traced.inner.later.result;
            return traced.trace;
        }
        let shader = self.shader_pass_at_with(&self.everywhere, x, z, ground);
        let inner = LaterPass { ground, opts: &self.opts, result: SurfaceResult { shader, ..Default::default() } };
        let mut traced = Traced { inner, trace: PostTrace { visits, ..Default::default() }, current: 0 };
        walk_point(&self.later_plan, &self.everywhere.later, x, z, &mut traced);
        traced.trace.result = traced.inner.result;
        traced.trace
    }
}

/// The parent of each layer of a plan (pre-order with depths), `None` for top-level layers.
pub fn layer_parents(plan: &BakePlan) -> Vec<Option<usize>> {
    let mut open: Vec<usize> = Vec::new();
    let mut out = Vec::with_capacity(plan.layers.len());
    for (i, l) in plan.layers.iter().enumerate() {
        open.truncate(l.depth as usize);
        out.push(open.last().copied());
        open.push(i);
    }
    out
}

/// The layer holding each affector of a plan.
pub fn affector_layers(plan: &BakePlan) -> Vec<usize> {
    let mut out = vec![0; plan.affectors.len()];
    for (li, l) in plan.layers.iter().enumerate() {
        for a in l.affector_start..l.affector_start + l.affector_count {
            out[a as usize] = li;
        }
    }
    out
}
