//! One scope's transition graph, built in document order so every answer is deterministic.

use crate::ir::{Scope, Task};
use crate::source::Spanned;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{Dfs, Reversed};
use std::collections::BTreeMap;

/// A transition whose `nextTask` names no task of its scope (by name or by id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    /// Index of the task the transition belongs to.
    pub task: usize,
    /// Position of the transition in [`Task::transitions`].
    pub transition: usize,
    /// The name as written.
    pub target: Spanned<String>,
}

/// The transitions among the tasks of one scope.
///
/// Node `i` is task `i` of the scope (document order); each edge carries the position of its
/// transition in [`Task::transitions`], and edges are added in that order.
#[derive(Debug, Clone)]
pub struct ScopeGraph {
    graph: DiGraph<(), usize>,
    /// Targets of each task, in document order without repeats (the graph itself may hold
    /// parallel edges, one per transition).
    successors: Vec<Vec<usize>>,
    /// First task with each name, then first task with each id: transitions resolve by name
    /// first, then by id, and a duplicate never shadows the first occurrence.
    by_name: BTreeMap<String, usize>,
    by_id: BTreeMap<String, usize>,
    starts: Vec<usize>,
    ends: Vec<bool>,
    unresolved: Vec<Unresolved>,
}

impl ScopeGraph {
    pub fn new(scope: &Scope) -> ScopeGraph {
        let tasks = &scope.tasks;
        let by_name = first_indexes(tasks.iter().map(|t| Some(t.name.as_str())));
        let by_id = first_indexes(tasks.iter().map(|t| t.id.as_ref().map(Spanned::as_str)));
        let mut graph = DiGraph::with_capacity(tasks.len(), tasks.len());
        for _ in tasks {
            graph.add_node(());
        }
        let mut built = ScopeGraph {
            graph,
            successors: vec![Vec::new(); tasks.len()],
            by_name,
            by_id,
            starts: indexes_where(tasks, |t| t.start.is_some()),
            ends: tasks.iter().map(|t| t.end.is_some()).collect(),
            unresolved: Vec::new(),
        };
        for (index, task) in tasks.iter().enumerate() {
            built.add_transitions(index, task);
        }
        built
    }

    fn add_transitions(&mut self, from: usize, task: &Task) {
        for (position, transition) in task.transitions().into_iter().enumerate() {
            let Some(to) = self.resolve(&transition.next.value) else {
                self.unresolved.push(Unresolved {
                    task: from,
                    transition: position,
                    target: transition.next.clone(),
                });
                continue;
            };
            self.graph
                .add_edge(NodeIndex::new(from), NodeIndex::new(to), position);
            if let Some(targets) = self.successors.get_mut(from)
                && !targets.contains(&to)
            {
                targets.push(to);
            }
        }
    }

    /// The petgraph graph, for algorithms this type does not wrap.
    pub fn graph(&self) -> &DiGraph<(), usize> {
        &self.graph
    }

    /// Number of tasks in the scope.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The start task, when exactly one task declares `start`.
    pub fn start(&self) -> Option<usize> {
        match self.starts.as_slice() {
            [only] => Some(*only),
            _ => None,
        }
    }

    /// Every task that declares `start`, in document order.
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }

    /// Whether the task declares `end`.
    pub fn is_end(&self, task: usize) -> bool {
        self.ends.get(task).copied().unwrap_or(false)
    }

    /// The task a `nextTask` value designates: by name, or else by id.
    pub fn resolve(&self, name: &str) -> Option<usize> {
        self.by_name
            .get(name)
            .or_else(|| self.by_id.get(name))
            .copied()
    }

    /// Transitions whose target is not a task of this scope, in document order.
    pub fn unresolved(&self) -> &[Unresolved] {
        &self.unresolved
    }

    /// Tasks the given task can transition to, in document order, each once.
    pub fn successors(&self, task: usize) -> Vec<usize> {
        self.successors.get(task).cloned().unwrap_or_default()
    }

    /// For each task, whether a chain of transitions leads to it from the start task. All false
    /// when the scope has no unique start.
    pub fn reachable(&self) -> Vec<bool> {
        self.reachable_from(self.start().as_slice())
    }

    /// For each task, whether a chain of transitions leads to it from one of `roots` (the roots
    /// included). Indexes that name no task are ignored.
    pub fn reachable_from(&self, roots: &[usize]) -> Vec<bool> {
        let mut seen = vec![false; self.len()];
        let mut dfs = Dfs::empty(&self.graph);
        for &root in roots.iter().filter(|&&root| root < self.len()) {
            dfs.move_to(NodeIndex::new(root));
            while let Some(node) = dfs.next(&self.graph) {
                mark(&mut seen, node);
            }
        }
        seen
    }

    /// For each task, whether a chain of transitions leads from it to a task that declares `end`
    /// (the task itself included).
    pub fn can_reach_end(&self) -> Vec<bool> {
        // Walking backwards from every end visits exactly the tasks that can reach one.
        let backwards = Reversed(&self.graph);
        let mut dfs = Dfs::empty(backwards);
        let mut seen = vec![false; self.len()];
        for end in indexes_where_bool(&self.ends) {
            dfs.move_to(NodeIndex::new(end));
            while let Some(node) = dfs.next(backwards) {
                mark(&mut seen, node);
            }
        }
        seen
    }

    /// Cycles (strongly connected components with at least one edge) from which no end can be
    /// reached, whether or not the start reaches them. Each lists its tasks starting from the
    /// lowest index and following transitions inside the cycle where possible (else ascending);
    /// the cycles are ordered by their first task.
    pub fn cycles_without_exit(&self) -> Vec<Vec<usize>> {
        let exits = self.can_reach_end();
        let mut cycles: Vec<Vec<usize>> = tarjan_scc(&self.graph)
            .into_iter()
            .map(|component| {
                let mut tasks: Vec<usize> = component.iter().map(|n| n.index()).collect();
                tasks.sort_unstable();
                tasks
            })
            .filter(|tasks| self.is_cycle(tasks))
            .filter(|tasks| {
                !tasks
                    .iter()
                    .any(|&t| exits.get(t).copied().unwrap_or(false))
            })
            .map(|tasks| self.cycle_order(&tasks))
            .collect();
        // Components are disjoint, so their first tasks differ and this order is total.
        cycles.sort_unstable();
        cycles
    }

    /// A component is a cycle when it has several tasks or one task that transitions to itself.
    fn is_cycle(&self, sorted_tasks: &[usize]) -> bool {
        match sorted_tasks {
            [] => false,
            [only] => self.successors(*only).contains(only),
            _ => true,
        }
    }

    /// Orders a component's tasks the way a reader follows them: from the lowest index, take the
    /// first transition (document order) to a task of the component not listed yet; when there
    /// is none, continue with the lowest task not listed yet.
    fn cycle_order(&self, sorted_tasks: &[usize]) -> Vec<usize> {
        let mut order: Vec<usize> = Vec::with_capacity(sorted_tasks.len());
        let mut current = sorted_tasks.first().copied();
        while let Some(task) = current {
            order.push(task);
            let unlisted = |t: &usize| sorted_tasks.contains(t) && !order.contains(t);
            current = self
                .successors(task)
                .into_iter()
                .find(|t| unlisted(t))
                .or_else(|| sorted_tasks.iter().copied().find(|t| unlisted(t)));
        }
        order
    }
}

/// Maps each present name to the index of its first occurrence.
fn first_indexes<'a>(names: impl Iterator<Item = Option<&'a str>>) -> BTreeMap<String, usize> {
    let mut map = BTreeMap::new();
    for (index, name) in names.enumerate() {
        if let Some(name) = name {
            map.entry(name.to_owned()).or_insert(index);
        }
    }
    map
}

fn indexes_where(tasks: &[Task], keep: impl Fn(&Task) -> bool) -> Vec<usize> {
    tasks
        .iter()
        .enumerate()
        .filter(|(_, task)| keep(task))
        .map(|(index, _)| index)
        .collect()
}

fn indexes_where_bool(flags: &[bool]) -> Vec<usize> {
    flags
        .iter()
        .enumerate()
        .filter(|(_, flag)| **flag)
        .map(|(index, _)| index)
        .collect()
}

fn mark(seen: &mut [bool], node: NodeIndex) {
    if let Some(slot) = seen.get_mut(node.index()) {
        *slot = true;
    }
}

#[cfg(test)]
mod tests {
    use super::ScopeGraph;
    use crate::ir::SwitchConditions;
    use crate::validate::test_support::*;

    #[test]
    fn nodes_follow_document_order_and_names_resolve_before_ids() {
        let graph = ScopeGraph::new(&scope(vec![
            task(10, "A", inject()).start().next("b"),
            task(20, "B", inject()).id("b").next("b"),
            task(30, "b", inject()).end(),
            task(40, "A", inject()).end(),
        ]));
        assert_eq!(graph.len(), 4);
        assert_eq!(graph.graph().node_count(), 4);
        assert_eq!(
            graph.resolve("A"),
            Some(0),
            "a duplicate never shadows the first"
        );
        assert_eq!(graph.resolve("b"), Some(2), "names win over ids");
        assert_eq!(graph.resolve("B"), Some(1));
        assert_eq!(graph.resolve("nope"), None);
        assert_eq!(graph.successors(0), vec![2]);
    }

    #[test]
    fn successors_are_in_document_order_without_repeats() {
        let conditions = SwitchConditions::Data(vec![
            data_condition(11, "C"),
            data_condition(12, "B"),
            data_condition(13, "C"),
        ]);
        let graph = ScopeGraph::new(&scope(vec![
            task(10, "S", switch(conditions, Some(transition(14, "D"))))
                .start()
                .on_error(15, "B"),
            task(20, "B", inject()).end(),
            task(30, "C", inject()).end(),
            task(40, "D", inject()).end(),
        ]));
        assert_eq!(graph.successors(0), vec![2, 1, 3]);
        assert_eq!(graph.graph().edge_count(), 5, "one edge per transition");
        assert_eq!(graph.successors(1), Vec::<usize>::new());
        assert_eq!(graph.successors(99), Vec::<usize>::new());
    }

    #[test]
    fn unresolved_targets_are_recorded_and_skipped() {
        let graph = ScopeGraph::new(&scope(vec![
            task(10, "A", inject())
                .start()
                .next("Gone")
                .on_error(15, "B"),
            task(20, "B", inject()).end(),
        ]));
        assert_eq!(graph.successors(0), vec![1]);
        let unresolved = graph.unresolved();
        assert_eq!(unresolved.len(), 1);
        assert_eq!((unresolved[0].task, unresolved[0].transition), (0, 0));
        assert_eq!(unresolved[0].target, text("Gone", 13, 21));
    }

    #[test]
    fn start_needs_exactly_one_task() {
        let none = ScopeGraph::new(&scope(vec![task(10, "A", inject()).end()]));
        assert_eq!(none.start(), None);
        assert_eq!(none.reachable(), vec![false]);
        let two = ScopeGraph::new(&scope(vec![
            task(10, "A", inject()).start().end(),
            task(20, "B", inject()).start().end(),
        ]));
        assert_eq!(two.start(), None);
        assert_eq!(two.starts(), &[0, 1]);
        let empty = ScopeGraph::new(&scope(Vec::new()));
        assert!(empty.is_empty());
        assert_eq!(empty.cycles_without_exit(), Vec::<Vec<usize>>::new());
    }

    #[test]
    fn reachability_follows_every_kind_of_transition() {
        let conditions = SwitchConditions::Data(vec![data_condition(22, "D")]);
        let graph = ScopeGraph::new(&scope(vec![
            task(10, "A", inject()).start().next("B").on_error(15, "C"),
            task(20, "B", switch(conditions, Some(transition(23, "E")))),
            task(30, "C", inject()).end(),
            task(40, "D", inject()).end(),
            task(50, "E", inject()).end(),
            task(60, "Island", inject()).next("A"),
        ]));
        assert_eq!(graph.start(), Some(0));
        assert_eq!(graph.reachable(), vec![true, true, true, true, true, false]);
    }

    #[test]
    fn reachable_from_several_roots_ignores_bad_indexes() {
        let graph = ScopeGraph::new(&scope(vec![
            task(10, "A", inject()).start().end(),
            task(20, "Undo", inject()).next("UndoMore"),
            task(30, "UndoMore", inject()).end(),
            task(40, "Lost", inject()).end(),
        ]));
        assert_eq!(graph.reachable(), vec![true, false, false, false]);
        assert_eq!(
            graph.reachable_from(&[0, 1, 99]),
            vec![true, true, true, false]
        );
        assert_eq!(graph.reachable_from(&[]), vec![false; 4]);
    }

    #[test]
    fn can_reach_end_walks_backwards_from_every_end() {
        let graph = ScopeGraph::new(&scope(vec![
            task(10, "A", inject()).start().next("B"),
            task(20, "B", inject()).next("C"),
            task(30, "C", inject()).next("B"),
            task(40, "D", inject()).next("E"),
            task(50, "E", inject()).end(),
            task(60, "Dead", inject()),
        ]));
        assert!(graph.is_end(4) && !graph.is_end(0) && !graph.is_end(99));
        assert_eq!(
            graph.can_reach_end(),
            vec![false, false, false, true, true, false]
        );
    }

    #[test]
    fn cycles_without_exit_are_listed_following_their_edges() {
        let graph = ScopeGraph::new(&scope(vec![
            // A → C → B → A, listed from A along the edges.
            task(10, "A", inject()).start().next("C"),
            task(20, "B", inject()).next("A"),
            task(30, "C", inject()).next("B"),
            // D ⇄ E with an exit through onError: not reported.
            task(40, "D", inject()).next("E"),
            task(50, "E", inject()).next("D").on_error(55, "Done"),
            task(60, "Done", inject()).end(),
            // A self-loop.
            task(70, "Spin", inject()).next("Spin"),
            // Not a cycle, just stuck.
            task(80, "Stuck", inject()),
        ]));
        assert_eq!(graph.cycles_without_exit(), vec![vec![0, 2, 1], vec![6]]);
    }

    #[test]
    fn cycle_order_falls_back_to_ascending_indexes() {
        // From A the only unlisted successor is B; from B nothing new, so C comes next.
        let graph = ScopeGraph::new(&scope(vec![
            task(10, "A", inject()).start().next("B").on_error(15, "C"),
            task(20, "B", inject()).next("A"),
            task(30, "C", inject()).next("A"),
        ]));
        assert_eq!(graph.cycles_without_exit(), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn results_are_deterministic() {
        let build = || {
            ScopeGraph::new(&scope(vec![
                task(10, "A", inject()).start().next("B"),
                task(20, "B", inject()).next("A").on_error(25, "C"),
                task(30, "C", inject()).next("D"),
                task(40, "D", inject()).next("C"),
                task(50, "E", inject()).next("E"),
            ]))
        };
        let first = build();
        let expected = vec![vec![0, 1], vec![2, 3], vec![4]];
        for _ in 0..20 {
            let again = build();
            assert_eq!(again.cycles_without_exit(), expected);
            assert_eq!(again.reachable(), first.reachable());
            assert_eq!(again.successors(1), vec![0, 2]);
        }
    }
}
