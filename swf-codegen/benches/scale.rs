//! Check and gen time against the number of tasks (issue 9: both were quadratic). Each workflow
//! is a chain of operation tasks, every fourth one a switch with a data condition and a
//! default, so that transitions, conditions and the function trait all grow with it. Run with
//! `cargo bench -p swf-codegen --bench scale`; the README reports the numbers.

use swf_codegen::source::SourceFile;

fn main() {
    divan::main();
}

/// A workflow of `count` tasks.
fn workflow(count: usize) -> SourceFile {
    let mut text = String::from(
        "id: scale\nname: scale\nversion: '1.0'\nfunctions:\n  - {name: work, resource: r}\ntasks:\n",
    );
    for i in 0..count {
        let start = if i == 0 {
            "start: {kind: default}, "
        } else {
            ""
        };
        let next = if i + 1 == count {
            "end: {kind: default}".to_owned()
        } else {
            format!("transition: {{nextTask: t{}}}", i + 1)
        };
        if i % 4 == 3 && i + 1 < count {
            text.push_str(&format!(
                "  - {{name: t{i}, type: switch, {start}dataConditions: [{{path: $.n, value: '1', operator: equals, transition: {{nextTask: t{}}}}}], default: {{nextTask: t{}}}}}\n",
                i + 1,
                i + 1
            ));
        } else {
            text.push_str(&format!(
                "  - {{name: t{i}, type: operation, {start}actions: [{{functionRef: {{refName: work, parameters: {{n: $.n}}}}}}], {next}}}\n"
            ));
        }
    }
    SourceFile::new("scale.sw.yaml", text)
}

const COUNTS: [usize; 3] = [100, 1_000, 10_000];

/// `swfc check`: parse and validate.
#[divan::bench(args = COUNTS, sample_count = 5, sample_size = 1)]
fn check(bencher: divan::Bencher, count: usize) {
    let source = workflow(count);
    bencher.bench(|| {
        let (workflow, diags) = swf_codegen::check(divan::black_box(&source));
        assert!(!diags.has_errors());
        workflow
    });
}

/// The macro: check and generate the tokens (it does not format them).
#[divan::bench(args = COUNTS, sample_count = 5, sample_size = 1)]
fn gen_tokens(bencher: divan::Bencher, count: usize) {
    let source = workflow(count);
    bencher.bench(|| {
        let compilation = swf_codegen::compile(divan::black_box(&source));
        compilation.tokens.expect("compiles")
    });
}

/// `swfc gen`: check, generate the tokens and format them as a file.
#[divan::bench(args = COUNTS, sample_count = 5, sample_size = 1)]
fn gen_formatted(bencher: divan::Bencher, count: usize) {
    let source = workflow(count);
    bencher.bench(|| {
        let compilation = swf_codegen::compile(divan::black_box(&source));
        let tokens = compilation.tokens.expect("compiles");
        swf_codegen::format_file("scale.sw.yaml", tokens).expect("formats")
    });
}
