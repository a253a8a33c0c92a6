//! Generated code reaches the runtime through `::swf_runtime::__private`, which rustdoc hides:
//! a public signature that names a type through it shows the type without a link. This pass,
//! run last over the generated tokens, names the runtime's public types by their public path
//! (`::swf_runtime::WorkflowError`), so the user's rustdoc links them; `__private` keeps what is
//! not public API (the helpers generated bodies call).

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

/// The runtime's items that are public at its root under the same name as in `__private`.
const PUBLIC: &[&str] = &[
    "ActionResume",
    "CallbackPhase",
    "CloudEvent",
    "Compensating",
    "CompensationLog",
    "CustomCondition",
    "ErrorObject",
    "EventEntry",
    "EventSpec",
    "FunctionError",
    "Io",
    "Iteration",
    "Iterations",
    "Machine",
    "Progress",
    "RetryPolicy",
    "RetryProgress",
    "ScheduleWindow",
    "ScopeEnd",
    "ScopeState",
    "Slot",
    "StartOnEvents",
    "Timestamp",
    "Value",
    "Wait",
    "WorkflowError",
    "WorkflowInfo",
];

/// `tokens` with every `::swf_runtime::__private::X` of a public `X` written
/// `::swf_runtime::X`, outside function bodies: rustdoc shows signatures, items and fields,
/// never a body, and bodies are most of the tokens (a scope's `advance` has an arm per task).
pub(crate) fn public_paths(tokens: TokenStream) -> TokenStream {
    rewrite(tokens.into_iter().collect(), false)
}

/// [`public_paths`] of code for the body of a public item that an emitter shared with the
/// private methods wrote (the start task's entry in `begin`): every path, at any depth.
pub(crate) fn in_body(tokens: TokenStream) -> TokenStream {
    rewrite(tokens.into_iter().collect(), true)
}

fn rewrite(trees: Vec<TokenTree>, walk_bodies: bool) -> TokenStream {
    let mut out = Vec::with_capacity(trees.len());
    // Since a `fn` at this level, until its body or its `;`.
    let mut in_signature = false;
    let mut trees = trees.into_iter();
    loop {
        if names_private_public_item(trees.as_slice()) {
            // `:: swf_runtime ::` stays (five tokens); `__private ::` goes.
            out.extend(trees.by_ref().take(5));
            out.extend(trees.nth(3));
            continue;
        }
        let Some(tree) = trees.next() else { break };
        out.push(match tree {
            TokenTree::Group(group)
                if in_signature && !walk_bodies && group.delimiter() == Delimiter::Brace =>
            {
                in_signature = false;
                TokenTree::Group(group)
            }
            TokenTree::Group(group) => {
                let (delimiter, span, inner) = super::group_parts(group);
                let mut rebuilt = Group::new(delimiter, rewrite(inner, walk_bodies));
                rebuilt.set_span(span);
                TokenTree::Group(rebuilt)
            }
            TokenTree::Ident(ident) => {
                in_signature |= ident == "fn";
                TokenTree::Ident(ident)
            }
            TokenTree::Punct(punct) => {
                in_signature &= punct.as_char() != ';';
                TokenTree::Punct(punct)
            }
            tree => tree,
        });
    }
    out.into_iter().collect()
}

/// Whether `trees` start with `:: swf_runtime :: __private :: X` of a public `X`.
fn names_private_public_item(trees: &[TokenTree]) -> bool {
    let [a, b, krate, c, d, private, e, f, TokenTree::Ident(item), ..] = trees else {
        return false;
    };
    let colon = |tree: &TokenTree| matches!(tree, TokenTree::Punct(p) if p.as_char() == ':');
    let word = |tree: &TokenTree, text: &str| matches!(tree, TokenTree::Ident(i) if i == text);
    [a, b, c, d, e, f].into_iter().all(colon)
        && word(krate, "swf_runtime")
        && word(private, "__private")
        && PUBLIC.iter().any(|name| item == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn public_types_lose_the_private_segment_and_helpers_keep_it() {
        let tokens = quote! {
            pub enum State {
                Running { data: ::swf_runtime::__private::Value },
            }
            fn run(io: &::swf_runtime::__private::Io) -> ::core::result::Result<
                ::swf_runtime::__private::Value,
                ::swf_runtime::__private::WorkflowError,
            > {
                ::swf_runtime::__private::run_to_end(vec![::swf_runtime::__private::Value::Null])
            }
            fn helper(_: ::swf_runtime::__private::Wait) -> ::swf_runtime::__private::Slot;
            fn template() -> &'static ::swf_runtime::__private::Template;
            const WAIT: ::swf_runtime::__private::Wait = ::swf_runtime::__private::Wait::NONE;
        };
        let text = public_paths(tokens).to_string();
        assert!(text.contains("data : :: swf_runtime :: Value"), "{text}");
        assert!(text.contains(":: swf_runtime :: Io"), "{text}");
        assert!(text.contains(":: swf_runtime :: WorkflowError"), "{text}");
        assert!(text.contains(":: swf_runtime :: Slot ;"), "{text}");
        assert!(
            text.contains("WAIT : :: swf_runtime :: Wait = :: swf_runtime :: Wait :: NONE"),
            "{text}"
        );
        assert!(!text.contains("__private :: Value >"), "{text}");
        // Not public: the helpers keep their private path.
        assert!(
            text.contains("& 'static :: swf_runtime :: __private :: Template ;"),
            "{text}"
        );
    }

    #[test]
    fn code_for_a_body_is_rewritten_at_any_depth() {
        let tokens = quote! {
            fn begin(input: ::swf_runtime::__private::Value) -> State {
                Self::enter(input, ::swf_runtime::__private::CompensationLog::new())
            }
        };
        let text = in_body(tokens.clone()).to_string();
        assert!(
            text.contains(":: swf_runtime :: CompensationLog :: new ()"),
            "{text}"
        );
        // The same code as an item of the public part keeps its body as written.
        let text = public_paths(tokens).to_string();
        assert!(text.contains("input : :: swf_runtime :: Value"), "{text}");
        assert!(
            text.contains("__private :: CompensationLog :: new ()"),
            "{text}"
        );
    }

    #[test]
    fn function_bodies_are_left_as_they_are() {
        // rustdoc never shows a body: the pass does not walk them (an `advance` has an arm
        // per task).
        let tokens = quote! {
            fn run() -> ::swf_runtime::__private::Value {
                ::swf_runtime::__private::run_to_end(::swf_runtime::__private::Value::Null)
            }
        };
        let text = public_paths(tokens).to_string();
        assert!(
            text.starts_with("fn run () -> :: swf_runtime :: Value {"),
            "{text}"
        );
        assert!(
            text.contains(
                ":: swf_runtime :: __private :: run_to_end (:: swf_runtime :: __private :: Value :: Null)"
            ),
            "{text}"
        );
    }

    /// Every workflow file under `dir`, recursively, in name order.
    fn workflow_files(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let name = path.to_string_lossy();
            if path.is_dir() {
                workflow_files(&path, found);
            } else if name.ends_with(".sw.yaml") || name.ends_with(".sw.json") {
                found.push(path);
            }
        }
    }

    #[test]
    fn no_public_item_is_named_through_the_private_module() {
        // The pass leaves bodies alone, so the emitters of public bodies write public paths
        // themselves (`api()`, `in_body`); in the private block every runtime path is `rt::..`.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the workspace");
        let mut files = Vec::new();
        workflow_files(&root.join("tests/workflows"), &mut files);
        workflow_files(&root.join("examples"), &mut files);
        assert!(files.len() > 100, "{} workflow files", files.len());
        let mut compiled = 0;
        for file in &files {
            let text = std::fs::read_to_string(file).expect("readable");
            let source = crate::source::SourceFile::new(file.to_string_lossy(), text);
            let Some(tokens) = crate::compile(&source).tokens else {
                continue;
            };
            compiled += 1;
            let code = tokens.to_string();
            for (at, _) in code.match_indices("__private :: ") {
                let item: String = code[at + "__private :: ".len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                assert!(
                    !PUBLIC.contains(&item.as_str()),
                    "{}: `__private :: {item}` in the generated code",
                    file.display()
                );
            }
        }
        assert!(compiled > 100, "{compiled} workflows compiled");
    }
}
