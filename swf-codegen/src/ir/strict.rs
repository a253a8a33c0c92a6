//! The strict paths option: the definite paths that read a value to use it (action
//! parameters, the paths compared by switch data conditions and transition conditions) become
//! strict, so that one selecting nothing fails the task instead of giving `null` or a false
//! comparison. Filters, results paths and existence tests (`Exists`, a lone path in a
//! condition) keep the drafts' meaning: selecting nothing is part of what they say.

use super::{
    Expr, Operand, Operator, Param, PathKind, Scope, SwitchConditions, TaskKind, Workflow,
};

impl Workflow {
    /// Makes the paths of parameters and comparisons strict (see the module).
    pub fn make_paths_strict(&mut self) {
        strict_scope(&mut self.scope);
    }
}

fn strict_scope(scope: &mut Scope) {
    for task in &mut scope.tasks {
        if let Some(condition) = task.transition.as_mut().and_then(|t| t.condition.as_mut()) {
            strict_expr(&mut condition.ast);
        }
        match &mut task.kind {
            TaskKind::Operation { actions, .. } => {
                for action in actions {
                    if let Some(parameters) =
                        action.function.as_mut().and_then(|f| f.parameters.as_mut())
                    {
                        strict_param(parameters);
                    }
                }
            }
            TaskKind::Event { events_actions, .. } => {
                for action in events_actions.iter_mut().flat_map(|e| e.actions.iter_mut()) {
                    if let Some(parameters) =
                        action.function.as_mut().and_then(|f| f.parameters.as_mut())
                    {
                        strict_param(parameters);
                    }
                }
            }
            TaskKind::Switch(switch) => {
                if let SwitchConditions::Data(conditions) = &mut switch.conditions {
                    for condition in conditions {
                        strict_test(&mut condition.test);
                    }
                }
                for transition in switch_transitions(switch) {
                    if let Some(condition) = transition.condition.as_mut() {
                        strict_expr(&mut condition.ast);
                    }
                }
            }
            _ => {}
        }
        for nested in task.nested_scopes_mut() {
            strict_scope(nested);
        }
    }
}

fn switch_transitions(switch: &mut super::Switch) -> Vec<&mut super::Transition> {
    let mut out: Vec<&mut super::Transition> = Vec::new();
    match &mut switch.conditions {
        SwitchConditions::Data(conditions) => {
            out.extend(conditions.iter_mut().filter_map(|c| c.transition.as_mut()));
        }
        SwitchConditions::Event(conditions) => {
            out.extend(conditions.iter_mut().filter_map(|c| c.transition.as_mut()));
        }
    }
    out.extend(switch.default.as_mut());
    out
}

fn strict_param(param: &mut Param) {
    match param {
        Param::Path(path) => path.strict = matches!(path.kind, PathKind::Definite(_)),
        Param::Object(members) => members.iter_mut().for_each(|(_, p)| strict_param(p)),
        Param::Array(items) => items.iter_mut().for_each(strict_param),
        Param::Literal(_) => {}
    }
}

fn strict_test(test: &mut super::DataTest) {
    match test {
        super::DataTest::Compare(comparison) => {
            let tests_presence = matches!(
                comparison.operator.value,
                Operator::Exists
                    | Operator::NotExists
                    | Operator::Null
                    | Operator::NotNull
                    | Operator::Custom
            );
            if let Some(path) = comparison.path.as_mut().filter(|_| !tests_presence) {
                path.strict = matches!(path.kind, PathKind::Definite(_));
            }
        }
        super::DataTest::All(items) | super::DataTest::Any(items) => {
            items.iter_mut().for_each(strict_test);
        }
        super::DataTest::Not(inner) => strict_test(inner),
    }
}

fn strict_expr(expr: &mut Expr) {
    let strict_operand = |operand: &mut Operand| {
        if let Operand::Path(path) = operand {
            path.strict = matches!(path.kind, PathKind::Definite(_));
        }
    };
    match expr {
        Expr::Or(a, b) | Expr::And(a, b) => {
            strict_expr(a);
            strict_expr(b);
        }
        Expr::Not(inner) => strict_expr(inner),
        Expr::Compare { lhs, rhs, .. } => {
            strict_operand(lhs);
            strict_operand(rhs);
        }
        Expr::Matches { operand, .. } => strict_operand(operand),
        // A lone path tests whether the value is there.
        Expr::Truthy(_) | Expr::Invalid => {}
    }
}
