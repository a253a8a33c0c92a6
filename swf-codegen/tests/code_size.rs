//! What one more task adds to the formatted code (issue 10, point 4: ~20 lines per simple
//! task) and to the tokens the macro expands to. Each figure is the difference between chains
//! of `2n` and `n` tasks divided by `n`, so what every workflow has once does not count. The
//! budgets are today's figures: a change that makes every task longer fails here and must say
//! why (the README's "Generated code per task" keeps the history).

use swf_codegen::source::SourceFile;

/// A chain of `count` tasks, `shape(i)` giving the `i`th (without its transition).
fn chain(count: usize, shape: impl Fn(usize) -> String) -> SourceFile {
    let mut text = String::from(
        "id: size\nname: size\nversion: '1.0'\nfunctions:\n  - {name: work, resource: r}\ntasks:\n",
    );
    for i in 0..count {
        let start = if i == 0 {
            "start: {kind: default}, "
        } else {
            ""
        };
        text.push_str(&format!("  - {{name: t{i}, {start}{}}}\n", shape(i)));
    }
    SourceFile::new("size.sw.yaml", text)
}

/// The generated tokens of `source`.
fn generated(source: &SourceFile) -> proc_macro2::TokenStream {
    let compilation = swf_codegen::compile(source);
    assert!(!compilation.has_errors(), "{:?}", compilation.diagnostics);
    compilation.tokens.expect("code")
}

fn formatted_lines(source: &SourceFile) -> usize {
    swf_codegen::format_file(&source.name, generated(source))
        .expect("formats")
        .lines()
        .count()
}

/// Token trees in `tokens`, a group counting once and for what it holds: what the macro
/// expands to, and what syn, prettyplease and rustc then read (lines alone miss a long line).
fn token_count(tokens: proc_macro2::TokenStream) -> usize {
    tokens
        .into_iter()
        .map(|tree| match tree {
            proc_macro2::TokenTree::Group(group) => 1 + token_count(group.stream()),
            _ => 1,
        })
        .sum()
}

/// What `measure` gives per task, from chains of 100 and 200 tasks (names of three digits, as
/// most are).
fn per_task(shape: impl Fn(usize, usize) -> String, measure: fn(&SourceFile) -> usize) -> f64 {
    let at = |count: usize| measure(&chain(count, |i| shape(i, count)));
    #[allow(clippy::cast_precision_loss, reason = "tens of thousands at most")]
    let per_task = (at(200) - at(100)) as f64 / 100.0;
    per_task
}

fn lines_per_task(shape: impl Fn(usize, usize) -> String) -> f64 {
    per_task(shape, formatted_lines)
}

fn tokens_per_task(shape: impl Fn(usize, usize) -> String) -> f64 {
    per_task(shape, |source| token_count(generated(source)))
}

fn exit(i: usize, count: usize) -> String {
    if i + 1 == count {
        "end: {kind: default}".to_owned()
    } else {
        format!("transition: {{nextTask: t{}}}", i + 1)
    }
}

fn operation(i: usize, count: usize) -> String {
    format!(
        "type: operation, actions: [{{functionRef: {{refName: work, parameters: {{n: $.n}}}}}}], {}",
        exit(i, count)
    )
}

/// A switch with one data condition and a default (the last task an operation).
fn data_switch(i: usize, count: usize) -> String {
    if i + 1 < count {
        format!(
            "type: switch, dataConditions: [{{path: $.n, value: '1', operator: equals, transition: {{nextTask: t{}}}}}], default: {{nextTask: t{}}}",
            i + 1,
            i + 1
        )
    } else {
        operation(i, count)
    }
}

#[test]
fn an_operation_task_adds_at_most_17_lines() {
    let per_task = lines_per_task(operation);
    assert!(per_task <= 17.0, "{per_task} lines per operation task");
}

#[test]
fn a_data_switch_adds_at_most_23_lines() {
    let per_task = lines_per_task(data_switch);
    assert!(per_task <= 23.0, "{per_task} lines per switch task");
}

/// Was 172 before the tasks' names and types became tables and the saved form's variants of
/// data alone shared one arm.
#[test]
fn an_operation_task_adds_at_most_147_tokens() {
    let per_task = tokens_per_task(operation);
    assert!(per_task <= 147.0, "{per_task} tokens per operation task");
}

/// Was 217, as for the operation task.
#[test]
fn a_data_switch_adds_at_most_192_tokens() {
    let per_task = tokens_per_task(data_switch);
    assert!(per_task <= 192.0, "{per_task} tokens per switch task");
}
