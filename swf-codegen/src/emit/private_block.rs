//! The machine's private methods (`enter_*` and `run_*` per task, each scope's `advance`, the
//! compensation methods) go into one anonymous `const _: () = { ... };` block that imports the
//! runtime's private module as `rt` (and its switch module's `Test`, `Operand`, and
//! `ConditionOp` as `Op`) and the prelude's `Result`/`Option` variants. Inside it, the
//! fully qualified paths every emitter writes (`::swf_runtime::__private::merge_result`,
//! `::core::result::Result::Ok`) are shortened to `rt::merge_result` and `Ok`, and each
//! `{ static PATH: ... = ...; &PATH }` expression becomes a reference to one static declared at
//! the top of the block, shared by every use of the same path.
//!
//! Why: most of a task's generated lines were these long paths wrapped by the formatter, and
//! rustc, syn and prettyplease pay for every token (issue 10: ~20 lines per simple task). The
//! emitters keep writing full paths, so each of them stays correct on its own; the block is the
//! one place that knows the short names are in scope. Items declared in a block shadow the
//! user's module, so a user type named `Ok` or `rt` cannot capture a generated path.

use std::collections::BTreeMap;

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use quote::quote;

/// `methods` (the bodies of an `impl` of the machine `machine` with `bounds`) inside the block.
/// `items` (trait impls for the machine) go in the block too.
pub(super) fn emit(
    machine: &Ident,
    bounds: &TokenStream,
    methods: TokenStream,
    items: TokenStream,
) -> TokenStream {
    let mut statics = Statics::default();
    // A group, interpolated below by sharing it: interpolating the stream would copy it.
    let methods = Group::new(Delimiter::Brace, shorten(methods, &mut statics));
    let items = shorten(items, &mut statics);
    let statics = statics.declarations();
    let switch_imports = SWITCH_IMPORTS.iter().map(|(item, short)| {
        let item = Ident::new(item, Span::call_site());
        let short = Ident::new(short, Span::call_site());
        if item == short {
            quote!(#item)
        } else {
            quote!(#item as #short)
        }
    });
    quote! {
        const _: () = {
            #[allow(unused_imports)]
            use ::swf_runtime::__private::{
                self as rt, Attempt, ErrorObject, Io, Progress, Step, Value, WorkflowError,
            };
            #[allow(unused_imports)]
            use ::swf_runtime::__private::switch::{#(#switch_imports),*};
            #[allow(unused_imports)]
            use ::core::option::Option::{self, None, Some};
            #[allow(unused_imports)]
            use ::core::result::Result::{self, Err, Ok};
            #[allow(unused_imports)]
            use ::core::convert::Infallible;
            #[allow(unused_imports)]
            use ::std::string::String;

            #(#statics)*

            // The generated API is a library surface: a binary that uses part of it must not
            // warn.
            // Steps are functions returning `async move` blocks, not `async fn`s (see the
            // code generator's `step_fn`).
            #[allow(dead_code, clippy::manual_async_fn)]
            impl<F: #bounds> #machine<F> #methods

            #items
        };
    }
}

/// The statics hoisted so far, in the order of their first use.
#[derive(Default)]
struct Statics {
    /// Name, and the declaration's type and initializer.
    declared: Vec<(Ident, TokenStream)>,
    /// The text of a type and initializer → the position of its static in `declared`.
    by_text: BTreeMap<String, usize>,
}

impl Statics {
    /// The name of the static of `kind` (`PATH`) with `declaration` (`: T = init`), declared on
    /// its first use.
    fn name(&mut self, kind: &str, declaration: TokenStream) -> Ident {
        let text = declaration.to_string();
        if let Some(&index) = self.by_text.get(&text) {
            return self.declared[index].0.clone();
        }
        let base = match readable_suffix(&declaration) {
            Some(words) => format!("{kind}_{words}"),
            None => kind.to_owned(),
        };
        let mut name = base.clone();
        let mut count = 1;
        while self.declared.iter().any(|(taken, _)| *taken == name) {
            count += 1;
            name = format!("{base}_{count}");
        }
        let ident = Ident::new(&name, Span::call_site());
        self.by_text.insert(text, self.declared.len());
        self.declared.push((ident.clone(), declaration));
        ident
    }

    fn declarations(&self) -> Vec<TokenStream> {
        self.declared
            .iter()
            .map(|(name, declaration)| quote!(static #name #declaration;))
            .collect()
    }
}

/// Upper-case words of the first string literal of `tokens` (a path's text `$.order.total` →
/// `ORDER_TOTAL`), at most 40 characters, or `None` when it has none.
fn readable_suffix(tokens: &TokenStream) -> Option<String> {
    let literal = first_string(tokens)?;
    let mut words = String::new();
    for character in literal.chars() {
        if character.is_ascii_alphanumeric() {
            words.push(character.to_ascii_uppercase());
        } else if !words.is_empty() && !words.ends_with('_') {
            words.push('_');
        }
        if words.len() >= 40 {
            break;
        }
    }
    let words = words.trim_end_matches('_');
    (!words.is_empty()).then(|| words.to_owned())
}

fn first_string(tokens: &TokenStream) -> Option<String> {
    tokens.clone().into_iter().find_map(|tree| match tree {
        TokenTree::Literal(literal) => {
            let text = literal.to_string();
            (text.starts_with('"') && text.ends_with('"') && text.len() >= 2)
                .then(|| text[1..text.len() - 1].to_owned())
        }
        TokenTree::Group(group) => first_string(&group.stream()),
        _ => None,
    })
}

/// `tokens` with the long paths shortened and the statics hoisted into `statics`.
fn shorten(tokens: TokenStream, statics: &mut Statics) -> TokenStream {
    shorten_trees(tokens.into_iter().collect(), statics)
}

/// [`shorten`] of trees already collected (a group's are collected once, for both the check
/// for a hoisted static and the shortening). They are moved out one by one, the ones still to
/// come read as a slice for the paths' lookahead.
fn shorten_trees(trees: Vec<TokenTree>, statics: &mut Statics) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::with_capacity(trees.len());
    let mut trees = trees.into_iter();
    while let rest @ [first, ..] = trees.as_slice() {
        // Every path to shorten starts with `::`: most trees are passed on at once.
        let starts_path = colon(first) && rest.get(1).is_some_and(colon);
        if starts_path && path_is(rest, &["swf_runtime", "__private"]) {
            // `::swf_runtime::__private::Value` → `Value`, `::swf_runtime::__private::f` →
            // `rt::f`, `::swf_runtime::__private::switch::ConditionOp` → `Op`.
            let skip = if let Some(short) = switch_import(rest) {
                out.push(TokenTree::Ident(Ident::new(short, Span::call_site())));
                12
            } else {
                match rest.get(8) {
                    Some(TokenTree::Ident(item))
                        if colon(&rest[6])
                            && colon(&rest[7])
                            && RUNTIME_IMPORTS.iter().any(|name| item == name) =>
                    {
                        out.push(rest[8].clone());
                        9
                    }
                    _ => {
                        out.push(TokenTree::Ident(Ident::new("rt", Span::call_site())));
                        6
                    }
                }
            };
            trees.nth(skip - 1);
            continue;
        }
        if starts_path && let Some(skip) = prelude_path(rest) {
            // `::core::result::Result::Ok` → `Ok`, `::core::result::Result<..>` → `Result<..>`.
            trees.nth(skip - 1);
            continue;
        }
        let Some(tree) = trees.next() else { break };
        match tree {
            TokenTree::Group(group) => {
                let (delimiter, span, inner) = super::group_parts(group);
                match hoisted(delimiter, inner, statics) {
                    Ok(name) => {
                        // `{ ..; &PATH }.select(..)` calls the method on the reference: so does
                        // `PATH_N.select(..)`, by auto-reference; `&PATH_N.select(..)` would not.
                        let method_call = matches!(trees.as_slice().first(), Some(TokenTree::Punct(p)) if p.as_char() == '.');
                        if !method_call {
                            out.push(TokenTree::Punct(proc_macro2::Punct::new(
                                '&',
                                proc_macro2::Spacing::Alone,
                            )));
                        }
                        out.push(TokenTree::Ident(name));
                    }
                    Err(inner) => {
                        let mut rebuilt = Group::new(delimiter, shorten_trees(inner, statics));
                        rebuilt.set_span(span);
                        out.push(TokenTree::Group(rebuilt));
                    }
                }
            }
            tree => out.push(tree),
        }
    }
    out.into_iter().collect()
}

/// Whether `trees` start with `::a::b` for `segments` `[a, b]`.
fn path_is(trees: &[TokenTree], segments: &[&str]) -> bool {
    trees.len() >= segments.len() * 3
        && segments.iter().enumerate().all(|(i, segment)| {
            colon(&trees[i * 3]) && colon(&trees[i * 3 + 1]) && word(&trees[i * 3 + 2], segment)
        })
}

/// The runtime's items the block imports by name: those nearly every method names.
const RUNTIME_IMPORTS: &[&str] = &[
    "Attempt",
    "ErrorObject",
    "Io",
    "Progress",
    "Step",
    "Value",
    "WorkflowError",
];

/// The items of the runtime's `switch` module the block imports (its `use` is written from
/// this list), with the names it gives them: a described switch's conditions then fit a line
/// each.
const SWITCH_IMPORTS: &[(&str, &str)] = &[
    ("ConditionOp", "Op"),
    ("Operand", "Operand"),
    ("Test", "Test"),
];

/// The block's name for the item `trees` name after `::swf_runtime::__private` when it is
/// one of [`SWITCH_IMPORTS`] (`::switch::Test`).
fn switch_import(trees: &[TokenTree]) -> Option<&'static str> {
    let nested = trees.len() > 11
        && colon(&trees[6])
        && colon(&trees[7])
        && word(&trees[8], "switch")
        && colon(&trees[9])
        && colon(&trees[10]);
    if !nested {
        return None;
    }
    SWITCH_IMPORTS
        .iter()
        .find(|(item, _)| word(&trees[11], item))
        .map(|(_, short)| *short)
}

/// The items the block imports, as their full path's segments: where one is written in full,
/// the block writes its last segment. `Result` and `Option` also drop before their variants.
const IMPORTED: &[(&[&str], &[&str])] = &[
    (&["core", "result", "Result"], &["Ok", "Err"]),
    (&["core", "option", "Option"], &["Some", "None"]),
    (&["core", "convert", "Infallible"], &[]),
    (&["std", "string", "String"], &[]),
];

/// How many tokens to drop at the start of `trees` when they name an imported item in full:
/// `::core::result::Result::` before `Ok`, `::core::result::` before `Result`.
fn prelude_path(trees: &[TokenTree]) -> Option<usize> {
    let (path, variants) = IMPORTED.iter().find(|(path, _)| path_is(trees, path))?;
    let full = path.len() * 3;
    let variant = trees.len() > full + 2
        && colon(&trees[full])
        && colon(&trees[full + 1])
        && variants.iter().any(|v| word(&trees[full + 2], v));
    Some(if variant { full + 2 } else { full - 1 })
}

fn colon(tree: &TokenTree) -> bool {
    matches!(tree, TokenTree::Punct(p) if p.as_char() == ':')
}

fn word(tree: &TokenTree, text: &str) -> bool {
    matches!(tree, TokenTree::Ident(i) if i == text)
}

/// The name of the static for a group `{ static KIND: T = init; &KIND }`, hoisted (and
/// shortened); the group's trees, given back, when it is not one.
fn hoisted(
    delimiter: Delimiter,
    mut trees: Vec<TokenTree>,
    statics: &mut Statics,
) -> Result<Ident, Vec<TokenTree>> {
    let is_punct =
        |tree: &TokenTree, c: char| matches!(tree, TokenTree::Punct(p) if p.as_char() == c);
    let kind = match trees.as_slice() {
        [
            first,
            TokenTree::Ident(kind),
            declaration @ ..,
            semicolon,
            ampersand,
            TokenTree::Ident(used),
        ] if delimiter == Delimiter::Brace
            && word(first, "static")
            && kind == used
            && is_punct(semicolon, ';')
            && is_punct(ampersand, '&')
            && !declaration.iter().any(|tree| is_punct(tree, ';')) =>
        {
            kind.to_string()
        }
        _ => return Err(trees),
    };
    // The declaration, moved out: `: T = init` between the kind and the `; &KIND`.
    trees.truncate(trees.len() - 3);
    let declaration = trees.split_off(2);
    let declaration = shorten_trees(declaration, statics);
    Ok(statics.name(&kind, declaration))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shortened(tokens: TokenStream) -> (String, Vec<String>) {
        let mut statics = Statics::default();
        let text = shorten(tokens, &mut statics).to_string();
        let declared = statics
            .declarations()
            .iter()
            .map(ToString::to_string)
            .collect();
        (text, declared)
    }

    #[test]
    fn long_paths_become_the_block_s_short_names() {
        let (text, _) = shortened(quote! {
            let next: ::core::result::Result<State, ::swf_runtime::__private::WorkflowError> =
                ::core::result::Result::Ok(::core::option::Option::None);
            ::core::option::Option::Some(::swf_runtime::__private::tokio::join!(a))
        });
        assert_eq!(
            text,
            "let next : Result < State , WorkflowError > = Ok (None) ; \
             Some (rt :: tokio :: join ! (a))"
        );
    }

    #[test]
    fn the_same_static_is_declared_once_and_named_after_its_text() {
        let path = |text: &str| {
            quote!({
                static PATH: ::swf_runtime::__private::JsonPath =
                    ::swf_runtime::__private::JsonPath::query(#text);
                &PATH
            })
        };
        let (a, b, c) = (
            path("$.order.total"),
            path("$.order.total"),
            path("$['order total']"),
        );
        let (text, declared) = shortened(quote!(f(#a, #b.select(), #c)));
        assert_eq!(
            text,
            "f (& PATH_ORDER_TOTAL , PATH_ORDER_TOTAL . select () , & PATH_ORDER_TOTAL_2)"
        );
        assert_eq!(
            declared,
            [
                "static PATH_ORDER_TOTAL : rt :: JsonPath = rt :: JsonPath :: query (\"$.order.total\") ;",
                "static PATH_ORDER_TOTAL_2 : rt :: JsonPath = rt :: JsonPath :: query (\"$['order total']\") ;",
            ]
        );
    }

    #[test]
    fn other_blocks_and_paths_are_left_alone() {
        let (text, declared) = shortened(quote! {
            { static PATH: u8 = 1; &OTHER }
            ::core::cell::Cell
            ::std::result::Result::Ok(1)
        });
        assert!(declared.is_empty());
        assert_eq!(
            text,
            "{ static PATH : u8 = 1 ; & OTHER } :: core :: cell :: Cell \
             :: std :: result :: Result :: Ok (1)"
        );
    }
}
