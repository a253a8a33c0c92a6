//! Conditions in generated code: an [`Expression`]'s AST as straight-line Rust over the runtime's
//! `__private::expr` helpers, with `&&`/`||` short-circuiting as written.

use super::path::path_ref;
use super::value::json;
use crate::ir::{CompareOp, Expr, Expression, JsonPath, Operand};
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use syn::Ident;

/// An expression of type `Result<bool, ::swf_runtime::__private::ErrorObject>` evaluating
/// `expression`: JSONPaths select from the `&Value` named `data`, bare names read fields of the
/// `&Value` named `scope`.
///
/// The body is a nested `fn` rather than a closure so that `?` works without
/// `clippy::redundant_closure_call` firing in the user's crate.
pub fn condition(expression: &Expression, data: &Ident, scope: &Ident) -> TokenStream {
    let body = result(&expression.ast);
    let (uses_data, uses_scope) = uses(&expression.ast);
    // Unused parameters are `_` so that generated code stays free of warnings.
    let data_param = if uses_data { quote!(data) } else { quote!(_) };
    let scope_param = if uses_scope { quote!(scope) } else { quote!(_) };
    // One line, so that the doc comment never trips a markdown lint.
    let doc = Literal::string(&format!(
        " `{}`",
        expression
            .body
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    ));
    // `not (a and b)` and `not not a` are kept as written, which clippy would flag in the
    // user's crate.
    let allow = has_compound_negation(&expression.ast)
        .then(|| quote! { #[allow(clippy::nonminimal_bool)] });
    quote! {
        {
            #[doc = #doc]
            #allow
            fn condition(
                #data_param: &::swf_runtime::__private::Value,
                #scope_param: &::swf_runtime::__private::Value,
            ) -> ::core::result::Result<bool, ::swf_runtime::__private::ErrorObject> {
                #body
            }
            condition(#data, #scope)
        }
    }
}

/// Binding strength, to parenthesize only where Rust would otherwise regroup.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    Or,
    And,
    Not,
    Atom,
}

fn strength(expr: &Expr) -> Strength {
    match expr {
        Expr::Or(..) => Strength::Or,
        Expr::And(..) => Strength::And,
        Expr::Not(_) => Strength::Not,
        _ => Strength::Atom,
    }
}

/// `expr` as a `Result<bool, ErrorObject>` expression. A lone fallible call is returned as is,
/// since `Ok(call?)` is what `clippy::needless_question_mark` flags.
fn result(expr: &Expr) -> TokenStream {
    match expr {
        Expr::Matches { operand, pattern } => matches_call(operand, pattern),
        Expr::Truthy(Operand::Path(path)) => path_test_call(path),
        _ => {
            let body = boolean(expr);
            quote! { ::core::result::Result::Ok(#body) }
        }
    }
}

/// Whether a `not` applies to another `not`, an `and` or an `or`.
fn has_compound_negation(expr: &Expr) -> bool {
    match expr {
        Expr::Not(inner) => strength(inner) != Strength::Atom || has_compound_negation(inner),
        Expr::Or(lhs, rhs) | Expr::And(lhs, rhs) => {
            has_compound_negation(lhs) || has_compound_negation(rhs)
        }
        _ => false,
    }
}

/// `expr` as a `bool` expression; `?` propagates the runtime's errors.
fn boolean(expr: &Expr) -> TokenStream {
    match expr {
        Expr::Or(lhs, rhs) => {
            let (lhs, rhs) = (
                operand_of(lhs, Strength::Or),
                operand_of(rhs, Strength::And),
            );
            quote! { #lhs || #rhs }
        }
        Expr::And(lhs, rhs) => {
            let (lhs, rhs) = (
                operand_of(lhs, Strength::And),
                operand_of(rhs, Strength::Not),
            );
            quote! { #lhs && #rhs }
        }
        Expr::Not(inner) => {
            let inner = operand_of(inner, Strength::Not);
            quote! { !#inner }
        }
        Expr::Compare { op, lhs, rhs } => {
            let op = compare_op(*op);
            let (lhs, rhs) = (value(lhs), value(rhs));
            quote! { ::swf_runtime::__private::expr::compare(#op, &#lhs, &#rhs) }
        }
        Expr::Matches { operand, pattern } => {
            let call = matches_call(operand, pattern);
            quote! { #call? }
        }
        Expr::Truthy(Operand::Path(path)) => {
            let call = path_test_call(path);
            quote! { #call? }
        }
        Expr::Truthy(operand) => {
            let operand = value(operand);
            quote! { ::swf_runtime::__private::expr::truthy(&#operand) }
        }
        Expr::Invalid => {
            // Invalid files never reach emission; if one did, fail the build, not the run.
            quote! { ::core::compile_error!("swf: the expression did not parse; fix the diagnostics first") }
        }
    }
}

/// `matches(regex, operand)`, the regex a `static` so it is compiled once per process.
fn matches_call(operand: &Operand, pattern: &str) -> TokenStream {
    let pattern = Literal::string(pattern);
    let operand = value(operand);
    quote! {
        ::swf_runtime::__private::expr::matches(
            {
                static REGEX: ::swf_runtime::__private::expr::LazyRegex =
                    ::swf_runtime::__private::expr::LazyRegex::new(#pattern);
                &REGEX
            },
            &#operand,
        )
    }
}

/// `path_test(path, data)`: true when the path selects a value other than `false`/`null`.
fn path_test_call(path: &JsonPath) -> TokenStream {
    let path = path_ref(path);
    quote! { ::swf_runtime::__private::expr::path_test(#path, data) }
}

/// `expr` as the operand of an operator binding at least as strongly as `needed`.
fn operand_of(expr: &Expr, needed: Strength) -> TokenStream {
    let tokens = boolean(expr);
    if strength(expr) >= needed {
        tokens
    } else {
        quote! { (#tokens) }
    }
}

fn compare_op(op: CompareOp) -> TokenStream {
    let variant = match op {
        CompareOp::Eq => quote!(Eq),
        CompareOp::Ne => quote!(Ne),
        CompareOp::Lt => quote!(Lt),
        CompareOp::Le => quote!(Le),
        CompareOp::Gt => quote!(Gt),
        CompareOp::Ge => quote!(Ge),
    };
    quote! { ::swf_runtime::__private::expr::CompareOp::#variant }
}

/// An operand as a `Value` expression.
fn value(operand: &Operand) -> TokenStream {
    match operand {
        Operand::Literal(literal) => json(literal),
        Operand::Path(path) => {
            let path = path_ref(path);
            quote! { ::swf_runtime::__private::expr::operand_path(#path, data)? }
        }
        Operand::Name(name) => {
            let name = Literal::string(name);
            quote! { ::swf_runtime::__private::expr::operand_name(scope, #name) }
        }
    }
}

/// Whether the expression reads `data` (paths) and `scope` (bare names).
fn uses(expr: &Expr) -> (bool, bool) {
    let operand = |operand: &Operand| match operand {
        Operand::Path(_) => (true, false),
        Operand::Name(_) => (false, true),
        Operand::Literal(_) => (false, false),
    };
    let either = |(a, b): (bool, bool), (c, d): (bool, bool)| (a || c, b || d);
    match expr {
        Expr::Or(lhs, rhs) | Expr::And(lhs, rhs) => either(uses(lhs), uses(rhs)),
        Expr::Not(inner) => uses(inner),
        Expr::Compare { lhs, rhs, .. } => either(operand(lhs), operand(rhs)),
        Expr::Matches { operand: o, .. } | Expr::Truthy(o) => operand(o),
        Expr::Invalid => (false, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Diagnostics;
    use crate::emit_parts::pretty;
    use crate::ir::ExprLanguage;
    use crate::source::Span;
    use proc_macro2::Span as TokenSpan;

    fn expression(body: &str) -> Expression {
        let mut diags = Diagnostics::new("wf.yaml");
        let expression =
            crate::syntax::expr::parse(ExprLanguage::Spel, body, Span::new(1, 1), &mut diags);
        assert!(diags.items().is_empty(), "{body}: {:?}", diags.items());
        expression
    }

    fn emitted(body: &str) -> String {
        let data = Ident::new("task_data", TokenSpan::call_site());
        let scope = Ident::new("error_object", TokenSpan::call_site());
        pretty::expression(condition(&expression(body), &data, &scope))
    }

    #[test]
    fn compares_a_path_with_a_literal() {
        assert_eq!(
            emitted("$.error.name eq 'FunctionExecutionError'"),
            r#"fn emitted() {
    {
        /// `$.error.name eq 'FunctionExecutionError'`
        fn condition(
            data: &::swf_runtime::__private::Value,
            _: &::swf_runtime::__private::Value,
        ) -> ::core::result::Result<bool, ::swf_runtime::__private::ErrorObject> {
            ::core::result::Result::Ok(
                ::swf_runtime::__private::expr::compare(
                    ::swf_runtime::__private::expr::CompareOp::Eq,
                    &::swf_runtime::__private::expr::operand_path(
                        {
                            static PATH: ::swf_runtime::__private::JsonPath = ::swf_runtime::__private::JsonPath::definite(
                                "$.error.name",
                                &[
                                    ::swf_runtime::__private::Segment::Key("error"),
                                    ::swf_runtime::__private::Segment::Key("name"),
                                ],
                            );
                            &PATH
                        },
                        data,
                    )?,
                    &::swf_runtime::__private::Value::from("FunctionExecutionError"),
                ),
            )
        }
        condition(task_data, error_object)
    }
}
"#
        );
    }

    #[test]
    fn names_read_the_scope_and_booleans_short_circuit() {
        let text = emitted("(event1 or event2) and not event3");
        assert_eq!(
            text,
            r#"fn emitted() {
    {
        /// `(event1 or event2) and not event3`
        fn condition(
            _: &::swf_runtime::__private::Value,
            scope: &::swf_runtime::__private::Value,
        ) -> ::core::result::Result<bool, ::swf_runtime::__private::ErrorObject> {
            ::core::result::Result::Ok(
                (::swf_runtime::__private::expr::truthy(
                    &::swf_runtime::__private::expr::operand_name(scope, "event1"),
                )
                    || ::swf_runtime::__private::expr::truthy(
                        &::swf_runtime::__private::expr::operand_name(scope, "event2"),
                    ))
                    && !::swf_runtime::__private::expr::truthy(
                        &::swf_runtime::__private::expr::operand_name(scope, "event3"),
                    ),
            )
        }
        condition(task_data, error_object)
    }
}
"#
        );
    }

    #[test]
    fn matches_compiles_its_pattern_once() {
        let text = emitted("name matches '^Func.*'");
        assert!(
            text.contains("static REGEX: ::swf_runtime::__private::expr::LazyRegex"),
            "{text}"
        );
        assert!(
            text.contains("LazyRegex::new(\n") && text.contains("\"^Func.*\","),
            "{text}"
        );
        // Alone, the call is the result; combined, `?` propagates its error.
        assert!(
            !text.contains('?') && !text.contains("Result::Ok("),
            "{text}"
        );
        let text = emitted("name matches '^Func.*' and b");
        assert!(
            text.contains("Result::Ok(") && text.contains(")?"),
            "{text}"
        );
    }

    #[test]
    fn allows_nonminimal_bool_only_for_negated_groups() {
        let allow = "#[allow(clippy::nonminimal_bool)]";
        assert!(emitted("not (a and b)").contains(allow));
        assert!(emitted("a or not not b").contains(allow));
        assert!(!emitted("not a and not b").contains(allow));
    }

    #[test]
    fn lone_paths_are_path_tests() {
        let text = emitted("$.orders[?(@.completed)]");
        assert!(
            text.contains("::swf_runtime::__private::expr::path_test("),
            "{text}"
        );
        assert!(text.contains("JsonPath::query("), "{text}");
        assert!(!text.contains("Result::Ok("), "{text}");
        assert!(text.contains("data: &"), "{text}");
        assert!(text.contains("_: &"), "{text}");
    }

    #[test]
    fn parenthesizes_only_where_needed() {
        let tokens = |body: &str| boolean(&expression(body).ast).to_string();
        let a = "& :: swf_runtime :: __private :: expr :: operand_name (scope , \"a\")";
        let truthy = |x: &str| {
            format!(
                ":: swf_runtime :: __private :: expr :: truthy ({})",
                a.replace("\"a\"", &format!("\"{x}\""))
            )
        };
        let (ta, tb, tc) = (truthy("a"), truthy("b"), truthy("c"));
        assert_eq!(tokens("a or b and c"), format!("{ta} || {tb} && {tc}"));
        assert_eq!(tokens("(a or b) and c"), format!("({ta} || {tb}) && {tc}"));
        assert_eq!(tokens("a and (b and c)"), format!("{ta} && ({tb} && {tc})"));
        assert_eq!(tokens("a or (b or c)"), format!("{ta} || ({tb} || {tc})"));
        assert_eq!(tokens("not (a and b)"), format!("! ({ta} && {tb})"));
        assert_eq!(tokens("not not a"), format!("! ! {ta}"));
    }

    #[test]
    fn every_operator_maps_to_the_runtime() {
        for (symbol, variant) in [
            ("==", "Eq"),
            ("!=", "Ne"),
            ("<", "Lt"),
            ("<=", "Le"),
            (">", "Gt"),
            (">=", "Ge"),
        ] {
            let text = emitted(&format!("$.age {symbol} -18.5"));
            assert!(text.contains(&format!("CompareOp::{variant},")), "{text}");
            assert!(text.contains("Value::from(-18.5f64)"), "{text}");
        }
    }

    #[test]
    fn invalid_expressions_fail_the_build() {
        let invalid = Expression {
            language: ExprLanguage::Spel,
            body: "a ==".to_string(),
            ast: Expr::Invalid,
            span: Span::new(1, 1),
        };
        let data = Ident::new("data", TokenSpan::call_site());
        let text = condition(&invalid, &data, &data).to_string();
        assert!(text.contains(":: core :: compile_error !"), "{text}");
    }

    #[test]
    fn emission_is_deterministic() {
        let data = Ident::new("data", TokenSpan::call_site());
        let scope = Ident::new("scope", TokenSpan::call_site());
        for body in [
            "$.age >= 18 && !($.banned == true)",
            "#jsonPath(taskOutputData,'$..user.title') eq 'MANAGER'",
            "name matches '^Func.*'",
        ] {
            let first = condition(&expression(body), &data, &scope).to_string();
            let second = condition(&expression(body), &data, &scope).to_string();
            assert_eq!(first, second);
        }
    }
}
