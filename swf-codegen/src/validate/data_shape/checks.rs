//! The rules of [`super`], applied to one task given the shape of the data it receives.

use super::flow::{declared, task_data, work_done};
use super::shape::{Kinds, Lookup, Never, Shape};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{
    ActionMode, CompareOp, Comparison, Expr, JsonPath, Operand, Operator, Param, PathKind,
    PathSegment, SwitchConditions, Task, TaskKind,
};

/// Checks `task`'s paths against the data it receives (`incoming`); returns the shape of its
/// data once it begins.
pub(super) fn check_task(task: &Task, incoming: &Shape, diags: &mut Diagnostics) -> Shape {
    if let Some(path) = &task.data_filter.input {
        read(path, incoming, diags);
    }
    let data = task_data(task, incoming);
    match &task.kind {
        TaskKind::Operation {
            actions,
            action_mode,
        } => {
            let mut shape = data.clone();
            for action in actions {
                let base = match *action_mode {
                    ActionMode::Sequential => &shape,
                    ActionMode::Parallel => &data,
                };
                let input = match &action.input_path {
                    Some(path) => read(path, base, diags),
                    None => base.clone(),
                };
                if let Some(function) = &action.function
                    && let Some(parameters) = &function.parameters
                {
                    check_parameters(parameters, &input, diags);
                    check_literal_paths(parameters, &input, function.span, diags);
                }
                if *action_mode == ActionMode::Sequential {
                    shape = match action.results_path.as_ref().map(|p| &p.kind) {
                        Some(PathKind::Definite(segments)) => {
                            shape.with_written(segments, Shape::Any)
                        }
                        _ => Shape::Any,
                    };
                }
            }
        }
        TaskKind::Switch(switch) => {
            if let SwitchConditions::Data(conditions) = &switch.conditions {
                for comparison in conditions.iter().flat_map(|c| c.test.comparisons()) {
                    check_comparison(comparison, &data, diags);
                }
            }
        }
        TaskKind::ForEach {
            input_collection: Some(collection),
            ..
        } => {
            let found = read(collection, &data, diags);
            if let Some(known) = found.known()
                && !known.kinds.is_any()
                && !known.kinds.allows(Kinds::ARRAY)
            {
                diags
                    .error(
                        Code::NOT_A_COLLECTION,
                        collection.span,
                        format!(
                            "inputCollection `{}` selects {} by the data schema, never an array to iterate over",
                            collection.text,
                            known.kinds.describe()
                        ),
                    )
                    .help("select the array to iterate over");
            }
        }
        _ => {}
    }
    // Transitions see the task's output.
    let done = declared(task.schemas.output.as_ref()).unwrap_or_else(|| work_done(task, &data));
    let output = match &task.data_filter.output {
        None => done,
        Some(path) => read(path, &done, diags),
    };
    for transition in task.transition.iter() {
        if let Some(condition) = &transition.condition {
            check_expression(&condition.ast, &output, diags);
        }
    }
    data
}

/// Checks a path that reads data of `shape`; returns the shape of what it selects.
fn read(path: &JsonPath, shape: &Shape, diags: &mut Diagnostics) -> Shape {
    let PathKind::Definite(segments) = &path.kind else {
        return Shape::Any;
    };
    match shape.lookup(segments) {
        Lookup::Found(found) => found.clone(),
        Lookup::Unknown => Shape::Any,
        Lookup::Never { depth, reason } => {
            let at = prefix(&segments[..depth]);
            let (message, help) = match reason {
                Never::WrongKind(kinds) => (
                    format!(
                        "`{}` can never select anything: the data schema says `{at}` is {}",
                        path.text,
                        kinds.describe()
                    ),
                    "fix the path, or the schema".to_owned(),
                ),
                Never::NoSuchMember(declared) => (
                    format!(
                        "`{}` can never select anything: the data schema allows no member `{}` in `{at}` (`additionalProperties: false`)",
                        path.text,
                        key(&segments[depth])
                    ),
                    suggestion(segments, depth, &declared),
                ),
            };
            diags
                .error(Code::PATH_NEVER_SELECTS, path.span, message)
                .help(help);
            Shape::Any
        }
        Lookup::Undeclared { depth, declared } => {
            let at = prefix(&segments[..depth]);
            diags
                .warning(
                    Code::PATH_UNDECLARED,
                    path.span,
                    format!(
                        "`{}` may select nothing: the data schema declares no member `{}` in `{at}`",
                        path.text,
                        key(&segments[depth])
                    ),
                )
                .help(suggestion(segments, depth, &declared));
            Shape::Any
        }
    }
}

/// "did you mean" the closest declared member, else the list of them.
fn suggestion(segments: &[PathSegment], depth: usize, declared: &[String]) -> String {
    let names: Vec<&str> = declared.iter().map(String::as_str).collect();
    match crate::parse::closest(&key(&segments[depth]), &names) {
        Some(closest) => {
            let mut fixed = segments.to_vec();
            fixed[depth] = PathSegment::Key(closest.to_owned());
            format!("did you mean `{}`?", prefix(&fixed))
        }
        None if names.is_empty() => "the schema declares no members there".to_owned(),
        None => format!(
            "the schema declares {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn key(segment: &PathSegment) -> String {
    match segment {
        PathSegment::Key(key) => key.clone(),
        PathSegment::Index(index) => index.to_string(),
        PathSegment::FromEnd(from_end) => format!("-{from_end}"),
    }
}

/// `$.a.b[0]` for segments.
fn prefix(segments: &[PathSegment]) -> String {
    let mut text = String::from("$");
    for segment in segments {
        match segment {
            PathSegment::Key(key) if is_plain(key) => {
                text.push('.');
                text.push_str(key);
            }
            PathSegment::Key(key) => {
                let escaped = key.replace('\\', "\\\\").replace('\'', "\\'");
                text.push_str(&format!("['{escaped}']"));
            }
            PathSegment::Index(index) => text.push_str(&format!("[{index}]")),
            PathSegment::FromEnd(from_end) => text.push_str(&format!("[-{from_end}]")),
        }
    }
    text
}

fn is_plain(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn check_parameters(parameters: &Param, input: &Shape, diags: &mut Diagnostics) {
    match parameters {
        Param::Path(path) => {
            read(path, input, diags);
        }
        Param::Object(members) => {
            for (_, member) in members {
                check_parameters(member, input, diags);
            }
        }
        Param::Array(items) => {
            for item in items {
                check_parameters(item, input, diags);
            }
        }
        Param::Literal(_) => {}
    }
}

/// Checks the literal strings of `parameters` that name a member path of the data: they are
/// passed as text, which is rarely what was meant. `span` is where the parameters are.
fn check_literal_paths(
    parameters: &Param,
    input: &Shape,
    span: crate::source::Span,
    diags: &mut Diagnostics,
) {
    match parameters {
        Param::Literal(serde_json::Value::String(text)) => {
            let Some(segments) = member_path(text) else {
                return;
            };
            if let Lookup::Found(_) = input.lookup(&segments) {
                diags
                    .warning(
                        Code::PARAMETER_NAMES_PATH,
                        span,
                        format!(
                            "the parameter `{text}` is passed as that text, but it names a member of the data"
                        ),
                    )
                    .help(format!("to pass the member's value, write `$.{text}`"));
            }
        }
        Param::Object(members) => {
            for (_, member) in members {
                check_literal_paths(member, input, span, diags);
            }
        }
        Param::Array(items) => {
            for item in items {
                check_literal_paths(item, input, span, diags);
            }
        }
        Param::Literal(_) | Param::Path(_) => {}
    }
}

/// `order.total` → its segments: at least two plain names joined by dots.
fn member_path(text: &str) -> Option<Vec<PathSegment>> {
    let parts: Vec<&str> = text.split('.').collect();
    (parts.len() >= 2 && parts.iter().all(|part| is_plain(part))).then(|| {
        parts
            .iter()
            .map(|p| PathSegment::Key((*p).to_owned()))
            .collect()
    })
}

fn check_comparison(comparison: &Comparison, data: &Shape, diags: &mut Diagnostics) {
    let Some(path) = &comparison.path else {
        return;
    };
    if matches!(
        comparison.operator.value,
        Operator::Exists | Operator::NotExists | Operator::Null | Operator::NotNull
    ) {
        // Testing whether it is there is what these are for.
        return;
    }
    let selected = read(path, data, diags);
    let numeric_value = comparison
        .value
        .as_ref()
        .is_some_and(|v| reads_as_number(&v.value));
    let operator = comparison.operator.value;
    // Only an order compares a string with a number-like value wrongly (`"999"` before
    // `"1000"`); `equals` and `notequals` compare a string as a string, as meant (SEMANTICS.md:
    // numerically only when both sides are numbers), as the SpEL check below leaves `==` alone.
    let ordered = matches!(
        operator,
        Operator::LessThan
            | Operator::LessThanOrEquals
            | Operator::GreaterThan
            | Operator::GreaterThanOrEquals
    );
    if ordered && numeric_value {
        ruled_out(path, &selected, Compared::AsNumbers, diags);
    } else if operator.compares_strings() {
        ruled_out(path, &selected, Compared::AsStrings, diags);
    }
}

/// Whether a condition's `value` is a number to the runtime (`swf_runtime::switch` reads it
/// with `parse_number`, the emitter with `emit::task::operand`): an `i64`, a `u64` or a finite
/// `f64`, as written. `" 10"`, `"inf"`, `"NaN"` and `"1e400"` are text there, so here too.
fn reads_as_number(value: &str) -> bool {
    value.parse::<i64>().is_ok()
        || value.parse::<u64>().is_ok()
        || value.parse::<f64>().is_ok_and(f64::is_finite)
}

/// How a comparison compares.
#[derive(Clone, Copy)]
enum Compared {
    AsNumbers,
    AsStrings,
}

/// E0154 when the schema says `selected` is only of the other kind than `compared` needs.
fn ruled_out(path: &JsonPath, selected: &Shape, compared: Compared, diags: &mut Diagnostics) {
    let (is, wanted, comparison) = match compared {
        Compared::AsNumbers => (Kinds::STRING, Kinds::NUMBER, "a numeric"),
        Compared::AsStrings => (Kinds::NUMBER, Kinds::STRING, "a string"),
    };
    let Some(known) = selected.known() else {
        return;
    };
    if known.kinds.is_any() || known.kinds.allows(wanted) || !known.kinds.allows(is) {
        return;
    }
    diags
        .error(
            Code::COMPARISON_KIND,
            path.span,
            format!(
                "{comparison} comparison on `{}`, which the data schema says is {}",
                path.text,
                known.kinds.describe()
            ),
        )
        .help("compare it as what it is (the `Str*` operators compare strings), or fix the schema");
}

fn check_expression(expr: &Expr, data: &Shape, diags: &mut Diagnostics) {
    match expr {
        Expr::Or(a, b) | Expr::And(a, b) => {
            check_expression(a, data, diags);
            check_expression(b, data, diags);
        }
        Expr::Not(inner) => check_expression(inner, data, diags),
        Expr::Compare { op, lhs, rhs } => {
            for (side, other) in [(lhs, rhs), (rhs, lhs)] {
                let Operand::Path(path) = side else { continue };
                let selected = read(path, data, diags);
                let numeric_other = matches!(other, Operand::Literal(serde_json::Value::Number(_)));
                if numeric_other
                    && matches!(
                        op,
                        CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge
                    )
                {
                    ruled_out(path, &selected, Compared::AsNumbers, diags);
                }
            }
        }
        Expr::Matches { operand, .. } => {
            if let Operand::Path(path) = operand {
                read(path, data, diags);
            }
        }
        // A lone operand tests whether the value is there.
        Expr::Truthy(_) | Expr::Invalid => {}
    }
}
