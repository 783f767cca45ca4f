//! Kleinberg's HITS: hub and authority scores of a link graph, by power iteration.
//!
//! Each round sets authority(p) = Σ hub(q) over edges q→p, then hub(p) = Σ authority(q) over
//! edges p→q (with the new authorities), then scales both vectors to unit Euclidean length.
//! Start: every page's hub is 1. Pages are dense ids `0..n`; edges come from an [`Edges`]
//! source that can be streamed any number of times (a `Vec` in memory for the focused crawl,
//! a binary file on disk for `crawl rank`), so only the four score vectors (4 × 8 bytes per
//! page) live in memory. The graph is taken as 0/1: callers pass each edge once.
//!
//! Convergence rule: stop after a round in which (a) the top `top` pages by authority and by
//! hub are the same pages in the same order as after the previous round, and (b) no score of
//! any page moved by more than `tolerance`; or after `max_rounds` rounds, whichever is first.
//! This module owns the arithmetic only; it reads no files and knows no URLs.

use anyhow::Result;

/// A graph's edges as (from, to) pairs of dense ids, readable again and again.
pub trait Edges {
    /// Calls `f(from, to)` once for every edge.
    fn each(&mut self, f: &mut dyn FnMut(u32, u32)) -> Result<()>;
}

impl Edges for Vec<(u32, u32)> {
    fn each(&mut self, f: &mut dyn FnMut(u32, u32)) -> Result<()> {
        for &(from, to) in self.iter() {
            f(from, to);
        }
        Ok(())
    }
}

/// When to stop iterating (see the module doc).
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    /// How many top pages must keep their order between rounds.
    pub top: usize,
    /// The largest change of any score still counted as stable.
    pub tolerance: f64,
    /// Rounds at most.
    pub max_rounds: u32,
}

impl Default for Stop {
    fn default() -> Stop {
        Stop {
            top: 10,
            tolerance: 1e-6,
            max_rounds: 50,
        }
    }
}

/// The scores, each vector of unit length (or all zero for a graph without edges).
#[derive(Clone, Debug)]
pub struct Scores {
    pub authority: Vec<f64>,
    pub hub: Vec<f64>,
    /// Rounds computed.
    pub rounds: u32,
    /// Whether the stop rule held (false: `max_rounds` was reached first).
    pub converged: bool,
}

/// Runs HITS on `n` pages.
pub fn hits(n: usize, edges: &mut dyn Edges, stop: &Stop) -> Result<Scores> {
    let mut hub = vec![1.0; n];
    let mut authority = vec![0.0; n];
    let (mut top_a, mut top_h) = (Vec::new(), Vec::new());
    let mut rounds = 0;
    while rounds < stop.max_rounds {
        rounds += 1;
        let mut next_a = vec![0.0; n];
        edges.each(&mut |from, to| next_a[to as usize] += hub[from as usize])?;
        normalize(&mut next_a);
        let mut next_h = vec![0.0; n];
        edges.each(&mut |from, to| next_h[from as usize] += next_a[to as usize])?;
        normalize(&mut next_h);
        let moved = largest_change(&authority, &next_a).max(largest_change(&hub, &next_h));
        authority = next_a;
        hub = next_h;
        let (a, h) = (top(&authority, stop.top), top(&hub, stop.top));
        let stable = rounds > 1 && a == top_a && h == top_h && moved <= stop.tolerance;
        (top_a, top_h) = (a, h);
        if stable {
            return Ok(Scores {
                authority,
                hub,
                rounds,
                converged: true,
            });
        }
    }
    Ok(Scores {
        authority,
        hub,
        rounds,
        converged: false,
    })
}

/// The ids of the `n` highest positive scores, best first; equal scores by ascending id.
pub fn top(scores: &[f64], n: usize) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..scores.len() as u32)
        .filter(|&i| scores[i as usize] > 0.0)
        .collect();
    let order = |a: &u32, b: &u32| {
        scores[*b as usize]
            .total_cmp(&scores[*a as usize])
            .then(a.cmp(b))
    };
    if n < ids.len() {
        ids.select_nth_unstable_by(n, order);
        ids.truncate(n);
    }
    ids.sort_unstable_by(order);
    ids
}

/// Scales `v` to unit Euclidean length (a zero vector stays zero).
fn normalize(v: &mut [f64]) {
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

fn largest_change(old: &[f64], new: &[f64]) -> f64 {
    old.iter()
        .zip(new)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook computation on a dense adjacency matrix, for exactly `rounds` rounds.
    fn dense(n: usize, edges: &[(u32, u32)], rounds: u32) -> (Vec<f64>, Vec<f64>) {
        let mut m = vec![vec![0.0; n]; n];
        for &(f, t) in edges {
            m[f as usize][t as usize] = 1.0;
        }
        let mut hub = vec![1.0; n];
        let mut auth = vec![0.0; n];
        for _ in 0..rounds {
            auth = (0..n)
                .map(|p| (0..n).map(|q| m[q][p] * hub[q]).sum())
                .collect();
            normalize(&mut auth);
            hub = (0..n)
                .map(|p| (0..n).map(|q| m[p][q] * auth[q]).sum())
                .collect();
            normalize(&mut hub);
        }
        (auth, hub)
    }

    fn close(a: &[f64], b: &[f64], eps: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= eps)
    }

    #[test]
    fn a_star_has_known_scores() {
        // Page 0 links to 1, 2 and 3: one hub, three equal authorities.
        let mut edges = vec![(0, 1), (0, 2), (0, 3)];
        let s = hits(4, &mut edges, &Stop::default()).unwrap();
        let third = 1.0 / 3f64.sqrt();
        assert!(
            close(&s.authority, &[0.0, third, third, third], 1e-12),
            "{s:?}"
        );
        assert!(close(&s.hub, &[1.0, 0.0, 0.0, 0.0], 1e-12), "{s:?}");
        assert!(s.converged && s.rounds == 2, "{s:?}");
        assert_eq!(top(&s.authority, 2), vec![1, 2]);
        assert_eq!(top(&s.hub, 5), vec![0]);
    }

    #[test]
    fn agrees_with_a_dense_reference_round_by_round() {
        let mut edges: Vec<(u32, u32)> = (0..40u32)
            .map(|i| ((i * 7) % 9, (i * 5 + i / 3) % 9))
            .filter(|(f, t)| f != t)
            .collect();
        edges.sort_unstable();
        edges.dedup();
        for rounds in [1, 2, 5, 17] {
            let stop = Stop {
                max_rounds: rounds,
                tolerance: 0.0,
                ..Stop::default()
            };
            let s = hits(9, &mut edges, &stop).unwrap();
            let (a, h) = dense(9, &edges, rounds);
            assert!(close(&s.authority, &a, 1e-12) && close(&s.hub, &h, 1e-12));
        }
        let s = hits(9, &mut edges, &Stop::default()).unwrap();
        let (a, h) = dense(9, &edges, 1000);
        assert!(s.converged, "{s:?}");
        assert!(close(&s.authority, &a, 1e-4) && close(&s.hub, &h, 1e-4));
    }

    #[test]
    fn no_edges_gives_zero_scores_and_an_empty_top() {
        let s = hits(3, &mut Vec::new(), &Stop::default()).unwrap();
        assert_eq!(s.authority, vec![0.0; 3]);
        assert!(top(&s.hub, 3).is_empty());
    }

    #[test]
    fn the_round_cap_is_reported() {
        let mut edges = vec![(0, 1), (1, 2), (2, 0), (0, 2)];
        let stop = Stop {
            max_rounds: 3,
            tolerance: 0.0,
            ..Stop::default()
        };
        let s = hits(3, &mut edges, &stop).unwrap();
        assert_eq!((s.rounds, s.converged), (3, false));
    }
}
