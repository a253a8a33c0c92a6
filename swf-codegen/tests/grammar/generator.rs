//! Random valid workflows of every dialect, from a small grammar: a scope is a list of states
//! that transition forward only (so every state is reachable and every path ends), each an
//! inject, an operation calling `work`, a data switch, a delay, a parallel state of nested
//! scopes, or (in the tasks draft, when events are allowed) an event state. The same seed gives
//! the same text.

pub use crate::rng::Rng;

/// The dialects a file may be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The tasks draft, camelCase, `tasks:` and `nextTask`.
    Tasks,
    /// The tasks draft's `states:` / `nextState` spelling.
    States,
    /// v0.1: upper-case state types, `startsAt`.
    V01,
    /// The first kebab-case draft: `start: true`, END states.
    First,
    /// The second kebab-case draft: `starts-at`, `end: true`.
    Second,
}

pub const DIALECTS: [Dialect; 5] = [
    Dialect::Tasks,
    Dialect::States,
    Dialect::V01,
    Dialect::First,
    Dialect::Second,
];

impl Dialect {
    pub fn word(self) -> &'static str {
        match self {
            Dialect::Tasks => "tasks",
            Dialect::States => "states",
            Dialect::V01 => "v01",
            Dialect::First => "first",
            Dialect::Second => "second",
        }
    }

    fn camel(self) -> bool {
        matches!(self, Dialect::Tasks | Dialect::States)
    }
}

enum Kind {
    Inject(usize),
    Call,
    /// Conditions `$.n == value` leading to later states, and the default.
    Switch(Vec<(usize, usize)>, usize),
    Delay,
    Parallel(Vec<Scope>),
    /// Waits for the event definition of that number.
    Event(usize),
}

struct State {
    name: String,
    kind: Kind,
    /// The index of the next state; `None`: the scope ends.
    next: Option<usize>,
}

struct Scope {
    states: Vec<State>,
}

struct Generator<'a> {
    rng: &'a mut Rng,
    dialect: Dialect,
    events: bool,
    /// How many event definitions the states refer to.
    defined_events: usize,
}

impl Generator<'_> {
    fn scope(&mut self, prefix: &str, depth: usize, first_calls: bool) -> Scope {
        let count = 1 + self.rng.below(if depth == 0 { 6 } else { 3 });
        let mut states = Vec::with_capacity(count);
        for index in 0..count {
            let name = format!("{prefix}S{index}");
            let later = count - index - 1;
            let kind = if index == 0 && first_calls {
                Kind::Call
            } else {
                self.kind(&name, depth, index, later)
            };
            let next = (later > 0).then_some(index + 1);
            states.push(State { name, kind, next });
        }
        Scope { states }
    }

    fn kind(&mut self, name: &str, depth: usize, index: usize, later: usize) -> Kind {
        loop {
            match self.rng.below(6) {
                0 => return Kind::Inject(self.rng.below(100)),
                1 => return Kind::Call,
                // A switch needs a state after it: its default, the next state, keeps every
                // state reachable; its conditions may skip ahead.
                2 if later > 0 => {
                    let conditions = (0..1 + self.rng.below(3))
                        .map(|_| (index + 1 + self.rng.below(later), self.rng.below(4)))
                        .collect();
                    return Kind::Switch(conditions, index + 1);
                }
                3 => return Kind::Delay,
                4 if depth < 2 => {
                    let branches = (0..1 + self.rng.below(3))
                        .map(|b| self.scope(&format!("{name}B{b}"), depth + 1, false))
                        .collect();
                    return Kind::Parallel(branches);
                }
                5 if self.events && self.dialect.camel() && depth == 0 => {
                    let event = self.rng.below(self.defined_events + 1);
                    self.defined_events = self.defined_events.max(event + 1);
                    return Kind::Event(event);
                }
                _ => {}
            }
        }
    }
}

/// A random valid workflow of `dialect` with id `id`. Every workflow calls the function `work`
/// (its first state does); with `events`, tasks-draft workflows may also wait for events.
pub fn workflow(rng: &mut Rng, dialect: Dialect, id: &str, events: bool) -> String {
    let mut generator = Generator {
        rng,
        dialect,
        events,
        defined_events: 0,
    };
    let scope = generator.scope("", 0, true);
    let mut out = String::new();
    match dialect {
        Dialect::First => out.push_str(&format!("name: {id}\n")),
        _ => out.push_str(&format!("id: {id}\nname: {id}\n")),
    }
    match dialect {
        Dialect::Tasks | Dialect::States | Dialect::V01 => {
            out.push_str("version: '1.0'\nfunctions:\n  - {name: work, resource: work-service}\n");
        }
        Dialect::First | Dialect::Second => {}
    }
    if generator.defined_events > 0 {
        out.push_str("events:\n");
        for event in 0..generator.defined_events {
            out.push_str(&format!(
                "  - {{name: E{event}, source: generated, type: e{event}}}\n"
            ));
        }
    }
    match dialect {
        Dialect::V01 => out.push_str("startsAt: S0\n"),
        Dialect::Second => out.push_str("starts-at: S0\n"),
        _ => {}
    }
    out.push_str(match dialect {
        Dialect::Tasks => "tasks:\n",
        _ => "states:\n",
    });
    write_scope(&mut out, &scope, dialect, 1);
    out
}

fn write_scope(out: &mut String, scope: &Scope, dialect: Dialect, level: usize) {
    let pad = "  ".repeat(level);
    let end_state = format!("{}End", scope.states[0].name.trim_end_matches("S0"));
    for (index, state) in scope.states.iter().enumerate() {
        let target = |to: usize| scope.states[to].name.clone();
        out.push_str(&format!("{pad}- name: {}\n", state.name));
        let field = |out: &mut String, text: &str| out.push_str(&format!("{pad}  {text}\n"));
        field(out, &format!("type: {}", type_word(&state.kind, dialect)));
        if index == 0 {
            match dialect {
                Dialect::Tasks | Dialect::States => field(out, "start: {kind: default}"),
                Dialect::First => field(out, "start: true"),
                Dialect::V01 | Dialect::Second => {}
            }
        }
        write_kind(out, &state.kind, dialect, level, &target);
        match (state.next, dialect) {
            (Some(_), _) if matches!(state.kind, Kind::Switch(..)) => {}
            (Some(next), Dialect::Tasks) => {
                field(out, &format!("transition: {{nextTask: {}}}", target(next)));
            }
            (Some(next), Dialect::States | Dialect::V01) => {
                field(out, &format!("transition: {{nextState: {}}}", target(next)));
            }
            (Some(next), Dialect::First | Dialect::Second) => {
                field(out, &format!("next-state: {}", target(next)));
            }
            (None, Dialect::Tasks | Dialect::States) => field(out, "end: {kind: default}"),
            (None, Dialect::V01 | Dialect::Second) => field(out, "end: true"),
            (None, Dialect::First) => field(out, &format!("next-state: {end_state}")),
        }
    }
    if dialect == Dialect::First {
        out.push_str(&format!(
            "{pad}- {{name: {end_state}, type: END, status: SUCCESS}}\n"
        ));
    }
}

fn type_word(kind: &Kind, dialect: Dialect) -> &'static str {
    let camel = dialect.camel();
    match (kind, camel) {
        (Kind::Inject(_), true) => "inject",
        (Kind::Inject(_), false) if dialect == Dialect::V01 => "RELAY",
        // The kebab-case drafts have no inject: a delay of no time stands in.
        (Kind::Inject(_) | Kind::Delay, false) => "DELAY",
        (Kind::Call, true) => "operation",
        (Kind::Call, false) => "OPERATION",
        (Kind::Switch(..), true) => "switch",
        (Kind::Switch(..), false) => "SWITCH",
        (Kind::Delay, true) => "delay",
        (Kind::Parallel(_), true) => "parallel",
        (Kind::Parallel(_), false) => "PARALLEL",
        (Kind::Event(_), true) => "event",
        (Kind::Event(_), false) => "EVENT",
    }
}

fn write_kind(
    out: &mut String,
    kind: &Kind,
    dialect: Dialect,
    level: usize,
    target: &dyn Fn(usize) -> String,
) {
    let pad = "  ".repeat(level + 1);
    let field = |out: &mut String, text: &str| out.push_str(&format!("{pad}{text}\n"));
    match kind {
        Kind::Inject(value) => match dialect {
            Dialect::Tasks | Dialect::States => field(out, &format!("data: {{injected: {value}}}")),
            Dialect::V01 => field(out, &format!("inject: {{injected: {value}}}")),
            Dialect::First => field(out, "time-delay: 0"),
            Dialect::Second => field(out, "time-delay: PT0S"),
        },
        Kind::Delay => match dialect {
            Dialect::Tasks | Dialect::States | Dialect::V01 => field(out, "timeDelay: PT1S"),
            Dialect::First => field(out, "time-delay: 1"),
            Dialect::Second => field(out, "time-delay: PT1S"),
        },
        Kind::Call => match dialect {
            Dialect::Tasks | Dialect::States => field(
                out,
                "actions: [{functionRef: {refName: work, parameters: {n: $.n}}, actionDataFilter: {dataResultsPath: $.worked}}]",
            ),
            Dialect::V01 => field(
                out,
                "actions: [{functionref: {refname: work, parameters: {n: $.n}}, filter: {resultPath: $.worked}}]",
            ),
            Dialect::First | Dialect::Second => {
                field(out, "action-mode: SEQUENTIAL");
                field(
                    out,
                    "actions: [{function: {name: work, type: rest, parameters: {n: $.n}}}]",
                );
            }
        },
        Kind::Switch(conditions, default) => {
            field(
                out,
                match dialect {
                    Dialect::Tasks | Dialect::States => "dataConditions:",
                    _ => "choices:",
                },
            );
            for (to, value) in conditions {
                let to = target(*to);
                let line = match dialect {
                    Dialect::Tasks => format!(
                        "- {{path: $.n, value: '{value}', operator: equals, transition: {{nextTask: {to}}}}}"
                    ),
                    Dialect::States => format!(
                        "- {{path: $.n, value: '{value}', operator: equals, transition: {{nextState: {to}}}}}"
                    ),
                    Dialect::V01 => format!(
                        "- {{path: $.n, value: '{value}', operator: Equals, transition: {{nextState: {to}}}}}"
                    ),
                    Dialect::First => format!(
                        "- {{condition: {{path: $.n, value: '{value}', operator: Equals}}, next-state: {to}}}"
                    ),
                    Dialect::Second => format!(
                        "- {{single: [{{path: $.n, value: '{value}', operator: EQ}}], next-state: {to}}}"
                    ),
                };
                field(out, &format!("  {line}"));
            }
            let to = target(*default);
            field(
                out,
                &match dialect {
                    Dialect::Tasks => format!("default: {{nextTask: {to}}}"),
                    Dialect::States | Dialect::V01 => format!("default: {{nextState: {to}}}"),
                    Dialect::First | Dialect::Second => format!("default: {to}"),
                },
            );
        }
        Kind::Parallel(branches) => {
            if dialect.camel() {
                field(out, "completionType: and");
            } else if dialect != Dialect::V01 {
                // The state's output is the array of its branches' outputs: keeping the first
                // keeps an object, into which an action after the state can merge its result.
                field(out, "filter: {output-path: '$[0]'}");
            }
            field(out, "branches:");
            for (index, branch) in branches.iter().enumerate() {
                field(out, &format!("  - name: b{index}"));
                let start = &branch.states[0].name;
                match dialect {
                    Dialect::V01 => {
                        field(out, &format!("    startsAt: {start}"));
                        field(out, "    waitForCompletion: true");
                    }
                    Dialect::First => field(out, "    wait-for-completion: true"),
                    Dialect::Second => {
                        field(out, &format!("    starts-at: {start}"));
                        field(out, "    wait-for-completion: true");
                    }
                    Dialect::Tasks | Dialect::States => {}
                }
                field(
                    out,
                    match dialect {
                        Dialect::Tasks => "    tasks:",
                        _ => "    states:",
                    },
                );
                write_scope(out, branch, dialect, level + 3);
            }
        }
        Kind::Event(event) => {
            field(
                out,
                &format!("eventsActions: [{{eventRefs: [E{event}], actions: []}}]"),
            );
        }
    }
}
