//! What a diagram shows, whatever the format: built once from the IR and each scope's
//! [`ScopeGraph`] (the petgraph the validator walks), in document order, so every format draws
//! the same nodes and edges in the same order.

use crate::graph::ScopeGraph;
use crate::ir::{
    Completion, DataTest, EndKind, EndStatus, EventExpr, Operator, Scope, SwitchConditions, Task,
    TaskKind, Transition, Workflow,
};

/// Labels longer than this many characters are cut (with `…`): a diagram is not the place to
/// read a whole expression.
const MAX_LABEL: usize = 80;

/// A whole workflow: its scopes as nested clusters, the events it produces or consumes, and
/// every edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagram {
    /// The workflow's name, else its id.
    pub title: String,
    /// The workflow's own scope; parallel branches and foreach bodies are nested in it.
    pub root: Cluster,
    /// One node per event the workflow produces or consumes: declared events in declaration
    /// order, then undeclared names in order of first mention.
    pub events: Vec<Node>,
    /// Every edge, in document order of the task it leaves from.
    pub edges: Vec<Edge>,
}

/// One scope: the workflow, a parallel branch or a foreach body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// An identifier made of ASCII letters, digits and `_`, unique in the diagram.
    pub id: String,
    /// `branch NAME` or `for each PATH` (the workflow's own scope carries the diagram title).
    pub label: String,
    /// Its nodes: the start node, its tasks in document order (a task with nested scopes is
    /// followed by its join node), targets that do not exist, then the end node.
    pub nodes: Vec<Node>,
    /// The scopes nested in its tasks, in document order.
    pub clusters: Vec<Cluster>,
}

/// A node: a task, a scope's start or end, a join after nested scopes, an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// An identifier made of ASCII letters, digits and `_`, unique in the diagram.
    pub id: String,
    /// The text, one entry a line, as written by the user (each format escapes it).
    pub lines: Vec<String>,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Start,
    End,
    /// A task of the given type (`TaskKind::type_name`); `compensation` when it only runs to
    /// compensate another task.
    Task {
        type_name: &'static str,
        compensation: bool,
    },
    /// Where a parallel task's branches or a foreach task's iterations come together.
    Join,
    /// A CloudEvent the workflow consumes or produces.
    Event,
    /// A transition target that names no task of its scope (the file has an error).
    Missing,
}

/// A directed edge between two nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// As the user wrote it (conditions, names); each format escapes it.
    pub label: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// A plain transition, a start, an end.
    Next,
    /// A switch condition or a conditional transition.
    Condition,
    /// A switch's default transition.
    Default,
    /// An onError handler's transition.
    Error,
    /// A retry: a loop back to the same task.
    Retry,
    /// From a task to the task that compensates it.
    Compensation,
    /// Into a nested scope (a branch, a foreach body) and from its end to the join.
    Nested,
    /// From a task to an event it produces (on a transition or at its end).
    Produces,
    /// From an event to a task that waits for it.
    Consumes,
}

impl EdgeKind {
    /// Every kind, in the order the formats list their styles.
    pub const ALL: [EdgeKind; 9] = [
        EdgeKind::Next,
        EdgeKind::Condition,
        EdgeKind::Default,
        EdgeKind::Error,
        EdgeKind::Retry,
        EdgeKind::Compensation,
        EdgeKind::Nested,
        EdgeKind::Produces,
        EdgeKind::Consumes,
    ];
}

impl Diagram {
    /// The diagram of a workflow: every scope, from the same [`ScopeGraph`] validation uses.
    pub fn new(workflow: &Workflow) -> Diagram {
        let title = if workflow.name.value.trim().is_empty() {
            workflow.id.value.clone()
        } else {
            workflow.name.value.clone()
        };
        let mut builder = Builder {
            events: Vec::new(),
            edges: Vec::new(),
        };
        let root = builder.scope(&workflow.scope, "w", clean(&title));
        // Declared events first, in declaration order; then names nobody declared.
        let mut events: Vec<Node> = Vec::new();
        let mut mentioned = builder.events;
        for (index, def) in workflow.events.iter().enumerate() {
            if let Some(position) = mentioned.iter().position(|m| m.name == def.name.value) {
                let mention = mentioned.remove(position);
                let mut lines = vec![clean(&def.name.value)];
                if let Some(kind) = &def.event_type {
                    lines.push(clean(&kind.value));
                }
                events.push(Node {
                    id: format!("ev{index}"),
                    lines,
                    kind: NodeKind::Event,
                });
                rename(&mut builder.edges, &mention.id, &format!("ev{index}"));
            }
        }
        for mention in mentioned {
            events.push(Node {
                lines: vec![clean(&mention.name), "(not declared)".to_owned()],
                id: mention.id,
                kind: NodeKind::Event,
            });
        }
        Diagram {
            title: clean(&title),
            root,
            events,
            edges: builder.edges,
        }
    }
}

/// Points edges at an event's final id.
fn rename(edges: &mut [Edge], from: &str, to: &str) {
    for edge in edges {
        if edge.from == from {
            edge.from = to.to_owned();
        }
        if edge.to == from {
            edge.to = to.to_owned();
        }
    }
}

/// An event name as first mentioned, with a provisional id.
struct Mention {
    name: String,
    id: String,
}

struct Builder {
    events: Vec<Mention>,
    edges: Vec<Edge>,
}

impl Builder {
    fn scope(&mut self, scope: &Scope, prefix: &str, label: String) -> Cluster {
        let graph = ScopeGraph::new(scope);
        let start = format!("{prefix}_start");
        let end_id = format!("{prefix}_end");
        let task_id = |index: usize| format!("{prefix}_t{index}");
        let mut nodes = vec![Node {
            id: start.clone(),
            lines: vec!["start".to_owned()],
            kind: NodeKind::Start,
        }];
        let mut clusters = Vec::new();
        for &first in graph.starts() {
            let label = match scope.tasks.get(first).and_then(|t| t.start.as_ref()) {
                Some(crate::ir::Start {
                    kind:
                        crate::ir::StartKind::Scheduled {
                            interval: Some(interval),
                        },
                    ..
                }) => Some(format!("every {}", interval.value)),
                _ => None,
            };
            self.edge(&start, &task_id(first), EdgeKind::Next, label);
        }
        // Each task's transitions leave from its join node when it has nested scopes.
        let exits: Vec<String> = scope
            .tasks
            .iter()
            .enumerate()
            .map(|(index, task)| {
                if task.nested_scopes().is_empty() {
                    task_id(index)
                } else {
                    format!("{}_join", task_id(index))
                }
            })
            .collect();
        let roles: Vec<Vec<(EdgeKind, Option<String>)>> =
            scope.tasks.iter().map(transition_roles).collect();
        let mut edges_by_task: Vec<Vec<Edge>> = vec![Vec::new(); scope.tasks.len()];
        // The petgraph's edges, in the order they were added: task by task, transition by
        // transition, as written.
        for edge in graph.graph().raw_edges() {
            let (from, to) = (edge.source().index(), edge.target().index());
            let (kind, label) = roles
                .get(from)
                .and_then(|r| r.get(edge.weight))
                .cloned()
                .unwrap_or((EdgeKind::Next, None));
            if let Some(list) = edges_by_task.get_mut(from) {
                list.push(Edge {
                    from: exits[from].clone(),
                    to: task_id(to),
                    kind,
                    label,
                });
            }
        }
        let mut missing = Vec::new();
        for (count, unresolved) in graph.unresolved().iter().enumerate() {
            let id = format!("{prefix}_missing{count}");
            missing.push(Node {
                id: id.clone(),
                lines: vec![clean(&unresolved.target.value), "(no such task)".to_owned()],
                kind: NodeKind::Missing,
            });
            let (kind, label) = roles
                .get(unresolved.task)
                .and_then(|r| r.get(unresolved.transition))
                .cloned()
                .unwrap_or((EdgeKind::Next, None));
            if let Some(list) = edges_by_task.get_mut(unresolved.task) {
                list.push(Edge {
                    from: exits[unresolved.task].clone(),
                    to: id,
                    kind,
                    label,
                });
            }
        }
        for (index, (task, transitions)) in scope.tasks.iter().zip(edges_by_task).enumerate() {
            let id = task_id(index);
            nodes.push(Node {
                id: id.clone(),
                lines: task_lines(task),
                kind: NodeKind::Task {
                    type_name: task.type_name(),
                    compensation: task.used_for_compensation,
                },
            });
            self.consumed(task, &id);
            if !task.nested_scopes().is_empty() {
                let join = format!("{id}_join");
                clusters.extend(self.nested(task, &id, &join));
                nodes.push(Node {
                    id: join,
                    lines: vec![join_label(task)],
                    kind: NodeKind::Join,
                });
            }
            self.retries(task, &id);
            for edge in transitions {
                self.edges.push(edge);
            }
            self.produced(task, &exits[index]);
            if let Some(end) = &task.end {
                let mut parts = Vec::new();
                match &end.kind {
                    EndKind::Default => {}
                    EndKind::Terminate => parts.push("terminate".to_owned()),
                    EndKind::Event { produce } => {
                        if let Some(produce) = produce {
                            parts.push(format!("produce {}", produce.event_ref.value));
                        }
                    }
                }
                if end.status.as_ref().map(|s| s.value) == Some(EndStatus::Failure) {
                    parts.push("failure".to_owned());
                }
                if end.compensate {
                    parts.push("compensate".to_owned());
                }
                let label = (!parts.is_empty()).then(|| parts.join(", "));
                self.edge(&exits[index], &end_id, EdgeKind::Next, label);
            }
            if let Some(by) = &task.compensated_by {
                let target = match graph.resolve(&by.value) {
                    Some(target) => task_id(target),
                    None => {
                        let id = format!("{prefix}_missing{}", missing.len());
                        missing.push(Node {
                            id: id.clone(),
                            lines: vec![clean(&by.value), "(no such task)".to_owned()],
                            kind: NodeKind::Missing,
                        });
                        id
                    }
                };
                self.edge(
                    &id,
                    &target,
                    EdgeKind::Compensation,
                    Some("compensated by".to_owned()),
                );
            }
        }
        nodes.extend(missing);
        nodes.push(Node {
            id: end_id,
            lines: vec!["end".to_owned()],
            kind: NodeKind::End,
        });
        Cluster {
            id: prefix.to_owned(),
            label,
            nodes,
            clusters,
        }
    }

    /// The scopes nested in a parallel or foreach task, with the edges into and out of them.
    fn nested(&mut self, task: &Task, id: &str, join: &str) -> Vec<Cluster> {
        let mut clusters = Vec::new();
        match &task.kind {
            TaskKind::Parallel { branches, .. } => {
                for (index, branch) in branches.iter().enumerate() {
                    let prefix = format!("{id}_b{index}");
                    let mut label = format!("branch {}", branch.name.value);
                    if !branch.wait_for_completion {
                        label.push_str(" (not waited for)");
                    }
                    let cluster = self.scope(&branch.scope, &prefix, clean(&label));
                    self.edge(
                        id,
                        &format!("{prefix}_start"),
                        EdgeKind::Nested,
                        Some(branch.name.value.clone()),
                    );
                    if branch.wait_for_completion {
                        self.edge(&format!("{prefix}_end"), join, EdgeKind::Nested, None);
                    }
                    clusters.push(cluster);
                }
            }
            TaskKind::ForEach {
                input_collection,
                scope,
                ..
            } => {
                let prefix = format!("{id}_body");
                let each = input_collection
                    .as_ref()
                    .map_or_else(|| "for each".to_owned(), |c| format!("for each {}", c.text));
                let cluster = self.scope(scope, &prefix, clean(&each));
                self.edge(
                    id,
                    &format!("{prefix}_start"),
                    EdgeKind::Nested,
                    Some("each".to_owned()),
                );
                self.edge(&format!("{prefix}_end"), join, EdgeKind::Nested, None);
                clusters.push(cluster);
            }
            _ => {}
        }
        clusters
    }

    fn retries(&mut self, task: &Task, id: &str) {
        for retry in &task.retry {
            let mut label = format!("retry x{}", retry.effective_attempts());
            if let Some(interval) = &retry.interval {
                label.push_str(&format!(" every {}", interval.text));
            }
            if let Some(condition) = &retry.condition {
                label.push_str(&format!(" if {}", condition.body));
            }
            self.edge(id, id, EdgeKind::Retry, Some(label));
        }
        for action in task.actions() {
            for retry in &action.retry {
                let what = action
                    .function
                    .as_ref()
                    .map(|f| f.ref_name.value.clone())
                    .or_else(|| action.name.as_ref().map(|n| n.value.clone()))
                    .unwrap_or_else(|| "action".to_owned());
                let mut label = format!("retry {what} x{}", retry.effective_attempts());
                if let Some(condition) = &retry.condition {
                    label.push_str(&format!(" if {}", condition.body));
                }
                self.edge(id, id, EdgeKind::Retry, Some(label));
            }
        }
    }

    /// Events the task waits for, each once, in document order.
    fn consumed(&mut self, task: &Task, id: &str) {
        let mut names: Vec<&str> = Vec::new();
        match &task.kind {
            TaskKind::Event { events_actions, .. } => {
                for entry in events_actions {
                    names.extend(entry.event_refs.iter().map(|e| e.as_str()));
                    if let Some(condition) = &entry.condition {
                        names.extend(condition.events().into_iter().map(|e| e.as_str()));
                    }
                }
            }
            TaskKind::Switch(switch) => {
                if let SwitchConditions::Event(conditions) = &switch.conditions {
                    names.extend(
                        conditions
                            .iter()
                            .filter_map(|c| c.event_ref.as_ref().map(|e| e.as_str())),
                    );
                }
            }
            TaskKind::Callback {
                event_ref: Some(event),
                ..
            } => names.push(event.as_str()),
            _ => {}
        }
        let mut seen: Vec<&str> = Vec::new();
        for name in names {
            if !seen.contains(&name) {
                seen.push(name);
                let event = self.event(name);
                self.edge(&event, id, EdgeKind::Consumes, None);
            }
        }
    }

    /// Events produced on the task's transitions or at its end, each once.
    fn produced(&mut self, task: &Task, from: &str) {
        let mut names: Vec<&str> = task
            .transitions()
            .into_iter()
            .filter_map(|t| t.produce_event.as_ref().map(|p| p.event_ref.as_str()))
            .collect();
        if let Some(end) = &task.end
            && let EndKind::Event {
                produce: Some(produce),
            } = &end.kind
        {
            names.push(produce.event_ref.as_str());
        }
        let mut seen: Vec<&str> = Vec::new();
        for name in names {
            if !seen.contains(&name) {
                seen.push(name);
                let event = self.event(name);
                self.edge(from, &event, EdgeKind::Produces, None);
            }
        }
    }

    /// The provisional id of an event node (renamed after its declaration at the end).
    fn event(&mut self, name: &str) -> String {
        if let Some(mention) = self.events.iter().find(|m| m.name == name) {
            return mention.id.clone();
        }
        let id = format!("evx{}", self.events.len());
        self.events.push(Mention {
            name: name.to_owned(),
            id: id.clone(),
        });
        // Declared events are renamed `ev{declaration index}` at the end, undeclared ones keep
        // `evx{n}`: the two never collide.
        id
    }

    fn edge(&mut self, from: &str, to: &str, kind: EdgeKind, label: Option<String>) {
        self.edges.push(Edge {
            from: from.to_owned(),
            to: to.to_owned(),
            kind,
            label: label.map(|l| clean(&l)),
        });
    }
}

/// What each of `task.transitions()` is, in the same order: its kind and label.
fn transition_roles(task: &Task) -> Vec<(EdgeKind, Option<String>)> {
    let mut roles = Vec::new();
    let plain = |transition: &Transition, kind: EdgeKind, label: Option<String>| {
        let mut parts: Vec<String> = label.into_iter().collect();
        let mut kind = kind;
        if let Some(condition) = &transition.condition {
            parts.push(format!("if {}", condition.body));
            if kind == EdgeKind::Next {
                kind = EdgeKind::Condition;
            }
        }
        if transition.compensate {
            parts.push("compensate".to_owned());
        }
        if let Some(produce) = &transition.produce_event {
            parts.push(format!("produce {}", produce.event_ref.value));
        }
        (kind, (!parts.is_empty()).then(|| clean(&parts.join(", "))))
    };
    if let Some(transition) = &task.transition {
        roles.push(plain(transition, EdgeKind::Next, None));
    }
    if let TaskKind::Event { events_actions, .. } = &task.kind {
        for entry in events_actions {
            if let Some(transition) = &entry.transition {
                let on = match &entry.condition {
                    Some(condition) => event_expr(condition, true),
                    None => entry
                        .event_refs
                        .iter()
                        .map(|e| e.value.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                };
                roles.push(plain(
                    transition,
                    EdgeKind::Condition,
                    Some(format!("on {on}")),
                ));
            }
        }
    }
    if let TaskKind::Switch(switch) = &task.kind {
        match &switch.conditions {
            SwitchConditions::Data(conditions) => {
                for condition in conditions {
                    if let Some(transition) = &condition.transition {
                        roles.push(plain(
                            transition,
                            EdgeKind::Condition,
                            Some(data_test(&condition.test, true)),
                        ));
                    }
                }
            }
            SwitchConditions::Event(conditions) => {
                for condition in conditions {
                    if let Some(transition) = &condition.transition {
                        let on = condition
                            .event_ref
                            .as_ref()
                            .map_or_else(|| "event".to_owned(), |e| format!("on {}", e.value));
                        roles.push(plain(transition, EdgeKind::Condition, Some(on)));
                    }
                }
            }
        }
        if let Some(default) = &switch.default {
            let label = match &switch.event_timeout {
                Some(timeout) => format!("default (after {})", timeout.text),
                None => "default".to_owned(),
            };
            roles.push(plain(default, EdgeKind::Default, Some(label)));
        }
    }
    for handler in &task.on_error {
        if let Some(transition) = &handler.transition {
            let mut label = match &handler.condition {
                Some(condition) => format!("error: {}", condition.body),
                None => "error".to_owned(),
            };
            if let Some(action) = handler.action {
                label.push_str(&format!(" (action {})", action + 1));
            }
            roles.push(plain(transition, EdgeKind::Error, Some(label)));
        }
    }
    roles
}

/// The task's name, then its type with what matters most about it.
fn task_lines(task: &Task) -> Vec<String> {
    let functions = |task: &Task| {
        let names: Vec<&str> = task
            .actions()
            .into_iter()
            .filter_map(|a| a.function.as_ref().map(|f| f.ref_name.as_str()))
            .collect();
        let mut unique: Vec<&str> = Vec::new();
        for name in names {
            if !unique.contains(&name) {
                unique.push(name);
            }
        }
        unique.join(", ")
    };
    let detail = match &task.kind {
        TaskKind::Operation { .. } | TaskKind::Event { .. } | TaskKind::Callback { .. } => {
            let called = functions(task);
            if called.is_empty() {
                task.type_name().to_owned()
            } else {
                format!("{}: {called}", task.type_name())
            }
        }
        TaskKind::Delay {
            time_delay: Some(delay),
        } => format!("delay {}", delay.text),
        TaskKind::Parallel {
            completion, n: _, ..
        } => format!("parallel ({})", completion_word(*completion)),
        TaskKind::SubFlow {
            workflow_id,
            wait_for_completion,
        } => {
            let mut text = match workflow_id {
                Some(id) => format!("subflow {}", id.value),
                None => "subflow".to_owned(),
            };
            if !wait_for_completion {
                text.push_str(" (not waited for)");
            }
            text
        }
        TaskKind::ForEach {
            input_collection, ..
        } => match input_collection {
            Some(collection) => format!("foreach {}", collection.text),
            None => "foreach".to_owned(),
        },
        _ => task.type_name().to_owned(),
    };
    let mut lines = vec![clean(&task.name.value), clean(&detail)];
    if task.used_for_compensation {
        lines.push("compensation".to_owned());
    }
    lines
}

fn completion_word(completion: Completion) -> &'static str {
    match completion {
        Completion::And | Completion::AllOf => "all",
        Completion::Xor => "first",
        Completion::NOfM => "n of m",
        Completion::AtLeast => "at least n",
    }
}

/// What the join node after nested scopes says.
fn join_label(task: &Task) -> String {
    match &task.kind {
        TaskKind::Parallel { completion, n, .. } => match (completion, n) {
            (Completion::NOfM | Completion::AtLeast, Some(n)) => {
                format!("join ({} of the branches)", n.value)
            }
            _ => format!("join ({})", completion_word(*completion)),
        },
        TaskKind::ForEach {
            output_collection: Some(output),
            ..
        } => clean(&format!("collect into {}", output.text)),
        _ => "join".to_owned(),
    }
}

/// A switch data condition as text: `$.age < 18`, `$.a exists and not ($.b == x)`.
fn data_test(test: &DataTest, top: bool) -> String {
    let joined = |items: &[DataTest], word: &str| {
        let text = items
            .iter()
            .map(|item| data_test(item, false))
            .collect::<Vec<_>>()
            .join(word);
        if top { text } else { format!("({text})") }
    };
    match test {
        DataTest::Compare(comparison) => {
            let path = comparison.path.as_ref().map_or("?", |p| p.text.as_str());
            let value = comparison.value.as_ref().map_or("", |v| v.as_str());
            let op = match comparison.operator.value {
                Operator::Exists => return format!("{path} exists"),
                Operator::NotExists => return format!("{path} does not exist"),
                Operator::Null => return format!("{path} is null"),
                Operator::NotNull => return format!("{path} is not null"),
                Operator::Custom => return format!("custom {value} on {path}"),
                Operator::Equals | Operator::StrEquals => "==",
                Operator::NotEquals => "!=",
                Operator::LessThan | Operator::StrLessThan => "<",
                Operator::LessThanOrEquals | Operator::StrLessThanOrEquals => "<=",
                Operator::GreaterThan | Operator::StrGreaterThan => ">",
                Operator::GreaterThanOrEquals | Operator::StrGreaterThanOrEquals => ">=",
                Operator::Matches => "matches",
                Operator::NotMatches => "does not match",
            };
            format!("{path} {op} {value}")
        }
        DataTest::All(items) => joined(items, " and "),
        DataTest::Any(items) => joined(items, " or "),
        DataTest::Not(inner) => format!("not {}", data_test(inner, false)),
    }
}

/// An event condition as text: `a and (b or c)`.
fn event_expr(expr: &EventExpr, top: bool) -> String {
    let joined = |items: &[EventExpr], word: &str| {
        let text = items
            .iter()
            .map(|item| event_expr(item, false))
            .collect::<Vec<_>>()
            .join(word);
        if top { text } else { format!("({text})") }
    };
    match expr {
        EventExpr::Event(name) => name.value.clone(),
        EventExpr::All(items) => joined(items, " and "),
        EventExpr::Any(items) => joined(items, " or "),
    }
}

/// User text made safe to carry: control characters (line breaks included) become spaces, and
/// a label longer than [`MAX_LABEL`] characters is cut. Each format escapes the rest.
pub(crate) fn clean(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_LABEL)
        .collect();
    if text.chars().count() > MAX_LABEL {
        out.pop();
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_removes_control_characters_and_cuts_long_text() {
        assert_eq!(clean("a\nb\tc\u{7}"), "a b c ");
        let long = "x".repeat(200);
        let cut = clean(&long);
        assert_eq!(cut.chars().count(), MAX_LABEL);
        assert!(cut.ends_with('…'));
        assert_eq!(clean("é#\"[]"), "é#\"[]");
    }
}
