//! Block histories on a dyadic partition of the past: a sequence
//! x_0, x_1, … with one value per lane (a sample path, or a virtual path of
//! the response) kept as its last `window` values individually and, before
//! them, as sums X_B = Σ_{s∈B} x_s over the blocks B of a hierarchical dyadic
//! partition of [0, t − window). An interval I = [k·2ʲ, (k+1)·2ʲ) is usable
//! at time t when it is complete, |I| ≤ α·(t − end(I)) (blocks grow with
//! their age) and |I| ≤ max(1, β·start(I)) (the initial transient stays
//! resolved); every element is represented by its coarsest usable ancestor.
//! Usability only grows with t, so blocks only merge: a step is "the oldest
//! windowed element joins the partition, some adjacent blocks merge", and the
//! sums follow by additions. About log(t)/log(1+α) + log(t)/log(1+β) blocks
//! cover [0, t).
//!
//! The long-horizon state evolution (docs/theory.md §3.3) keeps every memory
//! it needs this way: the far field of R_g's rows multiplies block sums, and
//! the conditional generator of ũ conditions on block sums.
//!
//! # References
//! - Hackbusch (2015), *Hierarchical Matrices: Algorithms and Analysis*
//!   (admissible blocks growing with their distance from the diagonal).

/// A half-open interval [start, end) of steps.
pub(crate) type Block = (usize, usize);

/// The usability rule of the blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Dyadic {
    /// Age criterion |I| ≤ α·(t − end(I)).
    pub alpha: f64,
    /// Transient criterion |I| ≤ max(1, β·start(I)).
    pub beta: f64,
}

impl Dyadic {
    fn usable(&self, level: u32, k: usize, hi: usize, now: usize) -> bool {
        let size = 1usize << level;
        let (start, end) = (k * size, (k + 1) * size);
        end <= hi
            && (level == 0
                || (size as f64 <= self.alpha * (now - end) as f64
                    && size as f64 <= (self.beta * start as f64).max(1.0)))
    }

    /// The blocks covering [0, hi) at time `now` ≥ hi, in order.
    pub(crate) fn blocks(&self, hi: usize, now: usize) -> Vec<Block> {
        let mut out = Vec::new();
        let mut s = 0;
        while s < hi {
            let mut level = 0;
            while s % (1 << (level + 1)) == 0 && self.usable(level + 1, s >> (level + 1), hi, now) {
                level += 1;
            }
            out.push((s, s + (1 << level)));
            s += 1 << level;
        }
        out
    }
}

/// For every new block: the old blocks it unites and whether the leaving element joins it.
pub(crate) type MergePlan = Vec<(Vec<usize>, bool)>;

/// One step of a partition: the index of the pushed value and, once the
/// window is full, the element leaving it and how the old blocks (and that
/// element) make the new ones.
#[derive(Debug, Clone)]
pub(crate) struct Advance {
    /// The index of the value being pushed.
    pub index: usize,
    /// The leaving element's index, and for every new block the old blocks
    /// it unites and whether the leaving element joins it.
    pub merge: Option<(usize, MergePlan)>,
}

/// The partition shared by the tracks of one family (they are pushed together).
#[derive(Debug, Clone)]
pub(crate) struct Partition {
    window: usize,
    rule: Dyadic,
    count: usize,
    blocks: Vec<Block>,
}

impl Partition {
    pub(crate) fn new(window: usize, rule: Dyadic) -> Self {
        assert!(window >= 1, "a block history keeps at least the newest value");
        Partition {
            window,
            rule,
            count: 0,
            blocks: Vec::new(),
        }
    }

    /// The blocks covering [0, count − window).
    pub(crate) fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The ring slot of a value still in the window.
    pub(crate) fn slot(&self, index: usize) -> usize {
        debug_assert!(index < self.count && index + self.window >= self.count);
        index % self.window
    }

    /// Start pushing the next value: returns how the tracks must move.
    pub(crate) fn advance(&mut self) -> Advance {
        let index = self.count;
        self.count += 1;
        let merge = (index >= self.window).then(|| {
            let leaving = index - self.window;
            let new = self.rule.blocks(leaving + 1, self.count);
            let mut old = self.blocks.iter().enumerate().peekable();
            let plan = new
                .iter()
                .map(|&(start, end)| {
                    let mut srcs = Vec::new();
                    while let Some((j, _)) = old.next_if(|(_, b)| b.1 <= end) {
                        srcs.push(j);
                    }
                    (srcs, start <= leaving && leaving < end)
                })
                .collect();
            self.blocks = new;
            (leaving, plan)
        });
        Advance { index, merge }
    }
}

/// How a track stores a value: `f64`, or `f32` where half the bytes serve
/// (the virtual paths of the long-horizon solver, docs/theory.md §3.3,
/// "Virtual paths in single precision"). Values arrive and leave as `f64`.
pub(crate) trait Stored: Copy + Default + std::ops::AddAssign + std::fmt::Debug {
    fn store(x: f64) -> Self;
    fn load(self) -> f64;
}

impl Stored for f64 {
    #[inline(always)]
    fn store(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn load(self) -> f64 {
        self
    }
}

impl Stored for f32 {
    #[inline(always)]
    fn store(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn load(self) -> f64 {
        f64::from(self)
    }
}

/// One quantity's block history over a number of lanes, stored as `T`.
#[derive(Debug, Clone)]
pub(crate) struct Track<T: Stored = f64> {
    lanes: usize,
    ring: Vec<Vec<T>>,
    sums: Vec<Vec<T>>,
}

impl<T: Stored> Track<T> {
    pub(crate) fn new(lanes: usize, window: usize) -> Self {
        Track {
            lanes,
            ring: vec![vec![T::default(); lanes]; window],
            sums: Vec::new(),
        }
    }

    /// Push the values of `step.index` (after the merge of the leaving element).
    pub(crate) fn push(&mut self, part: &Partition, step: &Advance, values: &[f64]) {
        debug_assert_eq!(values.len(), self.lanes);
        if let Some((leaving, plan)) = &step.merge {
            let from = leaving % part.window;
            let mut next: Vec<Vec<T>> = Vec::with_capacity(plan.len());
            let mut old: Vec<Option<Vec<T>>> = std::mem::take(&mut self.sums).into_iter().map(Some).collect();
            for (srcs, joins) in plan {
                let mut sum = match srcs.first() {
                    Some(&j) => old[j].take().expect("every old block joins one new block"),
                    None => vec![T::default(); self.lanes],
                };
                for &j in srcs.iter().skip(1) {
                    let x = old[j].take().expect("every old block joins one new block");
                    sum.iter_mut().zip(&x).for_each(|(s, &x)| *s += x);
                }
                if *joins {
                    sum.iter_mut().zip(&self.ring[from]).for_each(|(s, &x)| *s += x);
                }
                next.push(sum);
            }
            self.sums = next;
        }
        let slot = &mut self.ring[step.index % part.window];
        slot.iter_mut().zip(values).for_each(|(r, &v)| *r = T::store(v));
    }

    /// The values of a step still in the window.
    pub(crate) fn value(&self, part: &Partition, index: usize) -> &[T] {
        &self.ring[part.slot(index)]
    }

    /// The lanes' sums over block `b` of the partition.
    pub(crate) fn sum(&self, b: usize) -> &[T] {
        &self.sums[b]
    }

    /// Regroup the lanes as the partition's blocks merge (lanes that stand
    /// for blocks of the same partition): new lane b is the sum of the old
    /// lanes `plan[b].0`, plus, when the leaving element joins it, lane
    /// `joining.1` of `joining.0` (a track on the same partition; `None`: a
    /// zero lane). Every value and block sum of the history moves alike.
    pub(crate) fn regroup<U: Stored>(&mut self, plan: &MergePlan, joining: (&Track<U>, Option<usize>)) {
        let (other, lane) = joining;
        debug_assert_eq!(
            (other.ring.len(), other.sums.len()),
            (self.ring.len(), self.sums.len()),
            "a track on the same partition"
        );
        // new lanes before the first that differs from the old lane at its
        // position (lane b is old lane b alone, the leaving element not
        // joining) are left where they are; only the rest of each row is
        // rewritten (the merges fall mostly among the newest blocks)
        let keep = plan
            .iter()
            .enumerate()
            .take_while(|(b, (srcs, joins))| srcs.as_slice() == [*b] && !joins)
            .count();
        let tail = &plan[keep..];
        // the tail's plan flattened once for every row: each new lane's first
        // old lane, the further ones, and the lanes the leaving element joins
        let first: Vec<Option<usize>> = tail.iter().map(|(srcs, _)| srcs.first().copied()).collect();
        let further: Vec<(usize, usize)> = tail
            .iter()
            .enumerate()
            .flat_map(|(b, (srcs, _))| srcs.iter().skip(1).map(move |&j| (b, j)))
            .collect();
        let joined: Vec<usize> = match lane {
            Some(_) => (0..tail.len()).filter(|&b| tail[b].1).collect(),
            None => Vec::new(),
        };
        // the joining lane's value in every row of `other`, read first: one
        // element of each long row, the loads independent of each other
        let joining_values: Vec<T> = match lane {
            Some(l) => other
                .ring
                .iter()
                .chain(&other.sums)
                .map(|row| T::store(row[l].load()))
                .collect(),
            None => Vec::new(),
        };
        let mut scratch = vec![T::default(); tail.len()];
        let rows = self.ring.iter_mut().chain(self.sums.iter_mut());
        for (r, row) in rows.enumerate() {
            for (x, src) in scratch.iter_mut().zip(&first) {
                *x = src.map_or(T::default(), |j| row[j]);
            }
            for &(b, j) in &further {
                scratch[b] += row[j];
            }
            if let Some(&x) = joining_values.get(r) {
                for &b in &joined {
                    scratch[b] += x;
                }
            }
            row.truncate(keep);
            row.extend_from_slice(&scratch);
        }
        self.lanes = plan.len();
    }

    /// `lanes` lanes, lane `to` holding old lane `from`'s whole history for
    /// each (from, to) of `moves`, the others zero.
    pub(crate) fn relane(&mut self, lanes: usize, moves: &[(usize, usize)]) {
        for v in self.ring.iter_mut().chain(self.sums.iter_mut()) {
            relane(v, lanes, moves);
        }
        self.lanes = lanes;
    }

    /// Zero one lane's whole history (a virtual path reborn).
    pub(crate) fn reset_lane(&mut self, lane: usize) {
        for v in self.ring.iter_mut().chain(self.sums.iter_mut()) {
            v[lane] = T::default();
        }
    }
}

/// `v` as `lanes` lanes, lane `to` holding old lane `from` for each
/// (from, to) of `moves`, the others zero (a response window widened in
/// place: `long_horizon::window::widen`).
pub(crate) fn relane<T: Stored>(v: &mut Vec<T>, lanes: usize, moves: &[(usize, usize)]) {
    let mut moved = vec![T::default(); lanes];
    for &(from, to) in moves {
        moved[to] = v[from];
    }
    *v = moved;
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: Dyadic = Dyadic { alpha: 0.5, beta: 0.5 };

    #[test]
    fn blocks_cover_the_past_and_only_merge() {
        let mut prev: Vec<Block> = Vec::new();
        for t in 1..3000 {
            let b = RULE.blocks(t, t + 3);
            assert_eq!(b.first().map(|x| x.0), Some(0));
            assert!(b.windows(2).all(|w| w[0].1 == w[1].0));
            assert_eq!(b.last().unwrap().1, t);
            // every old block lies inside one new block
            for &(s, e) in &prev {
                assert!(b.iter().any(|&(s2, e2)| s2 <= s && e <= e2), "t = {t}: ({s},{e}) split");
            }
            prev = b;
        }
        // few blocks: about log(t)/log(1 + α) + log(t)/log(1 + β)
        let bound = 2.0 * 3000f64.ln() / 1.5f64.ln() + 8.0;
        assert!((prev.len() as f64) < bound, "{} blocks at t = 3000", prev.len());
    }

    #[test]
    fn tracks_hold_the_window_and_exact_block_sums() {
        let window = 4;
        let mut part = Partition::new(window, RULE);
        let mut track = Track::<f64>::new(2, window);
        let x = |t: usize| [t as f64 + 1.0, (t * t) as f64];
        for t in 0..500 {
            let step = part.advance();
            track.push(&part, &step, &x(t));
            for s in t.saturating_sub(window - 1)..=t {
                assert_eq!(track.value(&part, s), &x(s));
            }
            let blocks = part.blocks();
            assert_eq!(blocks.last().map_or(0, |b| b.1), (t + 1).saturating_sub(window));
            for (j, &(s, e)) in blocks.iter().enumerate() {
                let want: [f64; 2] = (s..e).fold([0.0, 0.0], |a, k| [a[0] + x(k)[0], a[1] + x(k)[1]]);
                assert_eq!(track.sum(j), &want, "t = {t}, block ({s},{e})");
            }
        }
    }

    /// A single-precision track holds every value rounded once and block
    /// sums within a few roundings per merge of the double-precision ones.
    #[test]
    fn a_single_precision_track_follows_the_double_one_to_its_rounding() {
        let window = 4;
        let mut part = Partition::new(window, RULE);
        let (mut wide, mut narrow) = (Track::<f64>::new(3, window), Track::<f32>::new(3, window));
        for t in 0..2000 {
            let x: Vec<f64> = (0..3)
                .map(|l| ((t * 7 + l * 5) as f64 * 0.731).sin() * 10f64.powi(l as i32 - 1))
                .collect();
            let step = part.advance();
            wide.push(&part, &step, &x);
            narrow.push(&part, &step, &x);
            let got: Vec<f64> = narrow.value(&part, t).iter().map(|&v| f64::from(v)).collect();
            for (g, v) in got.iter().zip(&x) {
                assert!(
                    (g - v).abs() <= v.abs() * f64::from(f32::EPSILON) / 2.0,
                    "t = {t}: {g} vs {v}"
                );
            }
            for (j, &(s, e)) in part.blocks().iter().enumerate() {
                let magnitude: Vec<f64> = (0..3)
                    .map(|l| {
                        (s..e)
                            .map(|k| ((k * 7 + l * 5) as f64 * 0.731).sin().abs() * 10f64.powi(l as i32 - 1))
                            .sum()
                    })
                    .collect();
                let merges = ((e - s) as f64).log2().ceil() + 1.0;
                for (l, &size) in magnitude.iter().enumerate() {
                    let (g, w) = (f64::from(narrow.sum(j)[l]), wide.sum(j)[l]);
                    assert!(
                        (g - w).abs() <= 2.0 * merges * f64::from(f32::EPSILON) * size,
                        "t = {t}, block ({s},{e}), lane {l}: {g} vs {w}"
                    );
                }
            }
        }
    }

    /// Every row of a regrouped track is the plan applied to the old row:
    /// new lane b = Σ old lanes plan[b].0 (+ the joining lane's value in the
    /// same row of the other track), whether the plan's unchanged first
    /// lanes are kept in place or not.
    #[test]
    fn regrouping_sums_the_planned_lanes_of_every_row() {
        let window = 3;
        let mut part = Partition::new(window, RULE);
        let (mut track, mut other) = (Track::<f64>::new(5, window), Track::<f64>::new(5, window));
        for t in 0..40 {
            let step = part.advance();
            let x: Vec<f64> = (0..5).map(|l| (t * 7 + l * 3) as f64 * 0.37 - 2.0).collect();
            let y: Vec<f64> = x.iter().map(|v| v * v - 1.0).collect();
            track.push(&part, &step, &x);
            other.push(&part, &step, &y);
        }
        let plans: [MergePlan; 4] = [
            vec![(vec![0], false), (vec![1], false), (vec![2, 3], true), (vec![4], false)],
            vec![
                (vec![0], false),
                (vec![1], false),
                (vec![2], false),
                (vec![3], false),
                (vec![4], true),
            ],
            vec![
                (vec![0, 1], false),
                (vec![2], false),
                (vec![3], false),
                (vec![4], false),
            ],
            vec![
                (vec![0], false),
                (vec![1], false),
                (vec![2], false),
                (vec![3], false),
                (vec![4], false),
                (vec![], true),
            ],
        ];
        for plan in &plans {
            for lane in [None, Some(2)] {
                let before: Vec<Vec<f64>> = track.ring.iter().chain(&track.sums).cloned().collect();
                let joining: Vec<f64> = other
                    .ring
                    .iter()
                    .chain(&other.sums)
                    .map(|r| lane.map_or(0.0, |l| r[l]))
                    .collect();
                let mut got = track.clone();
                got.regroup(plan, (&other, lane));
                let rows: Vec<&Vec<f64>> = got.ring.iter().chain(&got.sums).collect();
                for (r, row) in rows.iter().enumerate() {
                    let want: Vec<f64> = plan
                        .iter()
                        .map(|(srcs, joins)| {
                            let s: f64 = srcs.iter().map(|&j| before[r][j]).sum();
                            if *joins && lane.is_some() { s + joining[r] } else { s }
                        })
                        .collect();
                    assert_eq!(row.as_slice(), want.as_slice(), "plan {plan:?}, lane {lane:?}, row {r}");
                }
                assert_eq!(got.lanes, plan.len());
            }
        }
    }
}
